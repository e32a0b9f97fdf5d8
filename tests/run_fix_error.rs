//! `rein run --fix-error FILE:LINE[:MESSAGE]` end to end: the real binary,
//! the scripted model, the real checker (mypy, pinned) in the sandbox. The
//! diagnostic is found in the checker's own report; "fixed" only when the
//! checker no longer reports it; a suppression is not a fix; a place with
//! nothing reported, or outside the project, starts nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Stdio};

mod support;

use rein_testkit::rein_binary;
use serde_json::{Value, json};
use support::checkers;

const BROKEN: &str = "    print(greet(3))";

/// A copy of the core's mypy fixture (`app.py` line 7 passes an int where
/// a str is expected), the user's settings letting the sandbox read the
/// installed checkers.
struct Project {
    dir: tempfile::TempDir,
}

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        checkers::copy_fixture("python", &dir.path().join("project"));
        let config = dir.path().join("config/rein");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join("config.toml"), checkers::user_settings()).unwrap();
        Self { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn app(&self) -> String {
        std::fs::read_to_string(self.root().join("app.py")).unwrap()
    }

    fn run(&self, replies: Value, args: &[&str]) -> Output {
        let scenario = self.dir.path().join("scenario.json");
        std::fs::write(&scenario, json!({ "replies": replies }).to_string()).unwrap();
        let mut command = Command::new(rein_binary().unwrap());
        command
            .arg("run")
            .arg("--workspace")
            .arg(self.root())
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .env("PATH", checkers::path_var())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("NO_COLOR", "1")
            .env("REIN_PROVIDER", "scripted")
            .env("REIN_SCENARIO", &scenario);
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "REIN_MODEL",
            "REIN_LOG",
        ] {
            command.env_remove(name);
        }
        let out = command.output().unwrap();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

fn edit_line_7(new: &str) -> Value {
    json!({
        "text": "The call passes an int where greet takes a str.",
        "tool_calls": [{"name": "edit_file", "input": {
            "path": "app.py", "old_text": BROKEN, "new_text": new
        }}]
    })
}

fn claim() -> Value {
    json!({"text": "Fixed: greet is called with a str now."})
}

#[test]
fn fix_error_finds_the_diagnostic_in_the_checkers_report_and_is_verified_by_it() {
    let project = Project::new();
    let out = project.run(
        json!([edit_line_7("    print(greet(str(3)))"), claim()]),
        &["--yes", "--fix-error", "app.py:7"],
    );
    assert_eq!(out.code, 0, "{out}");
    assert!(project.app().contains("greet(str(3))"), "{}", project.app());
    // The goal quotes mypy's own words, found by the place alone.
    assert!(
        out.stderr
            .contains("Argument 1 to \"greet\" has incompatible type \"int\""),
        "{out}"
    );
    assert!(out.stdout.starts_with("state:  succeeded\n"), "{out}");
    // The evidence is the checker's run, not the model's word.
    assert!(out.stdout.contains("mypy"), "{out}");
}

#[test]
fn fix_error_that_silences_the_checker_ends_unverified() {
    let project = Project::new();
    let replies = json!([
        edit_line_7("    print(greet(3))  # type: ignore"),
        claim(),
        claim(),
        claim(),
    ]);
    let out = project.run(replies, &["--yes", "--fix-error", "app.py:7:Argument 1"]);
    assert_eq!(out.code, 3, "unverified: {out}");
    assert!(out.stdout.starts_with("state:  unverified"), "{out}");
    assert!(out.stdout.contains("type: ignore"), "{out}");
}

#[test]
fn fix_error_at_a_place_with_nothing_reported_starts_nothing_and_says_what_is_there() {
    let project = Project::new();
    let before = project.app();
    let out = project.run(json!([claim()]), &["--yes", "--fix-error", "app.py:2"]);
    assert_eq!(out.code, 2, "{out}");
    assert!(
        out.stderr.contains(
            "the checker reports no error or warning at app.py:2; in this file it reports:"
        ),
        "{out}"
    );
    assert!(out.stderr.contains("app.py:7: error [arg-type]"), "{out}");
    assert_eq!(project.app(), before);
}

/// An attacker's argument (or a suite's) cannot point the checker or the
/// task outside the project.
#[test]
fn fix_error_outside_the_workspace_is_refused() {
    let project = Project::new();
    for target in [
        "../config/rein/config.toml:1",
        "/etc/passwd:1",
        "app.py:0",
        "app.py",
    ] {
        let out = project.run(json!([claim()]), &["--yes", "--fix-error", target]);
        assert_eq!(out.code, 2, "{target}: {out}");
        assert!(
            out.stderr.contains("not a path inside the workspace")
                || out.stderr.contains("FILE:LINE"),
            "{target}: {out}"
        );
    }
}
