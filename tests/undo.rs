//! `rein undo` end to end: the real binary, a task run by `rein run` with
//! the scripted model on a copy of the demo project, the user's typing
//! done on disk in between, then `rein undo`. No real model, no network.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod support;

use rein_testkit::rein_binary;
use support::{FIXED, UNFIXED, demo_scenario, demo_scratch};

const TYPED: &str = "\n# a line the user typed after the task\n";

struct Project {
    dir: tempfile::TempDir,
}

#[derive(Debug)]
struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Output {
    fn assert_code(&self, code: i32) {
        assert_eq!(
            self.code, code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
    }

    fn assert_stdout(&self, needle: &str) {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}:\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
    }
}

impl Project {
    fn new() -> Self {
        Self {
            dir: demo_scratch(),
        }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn cart(&self) -> String {
        std::fs::read_to_string(self.root().join("cart.py")).unwrap()
    }

    fn set_cart(&self, text: &str) {
        std::fs::write(self.root().join("cart.py"), text).unwrap();
    }

    /// The binary with `args`, nothing of the machine's settings inherited.
    fn rein(&self, args: &[&str], scenario: Option<&Path>) -> Output {
        self.rein_with(args, scenario, &[])
    }

    fn rein_with(&self, args: &[&str], scenario: Option<&Path>, env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(rein_binary().unwrap());
        command
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OPENAI_BASE_URL",
            "REIN_MODEL",
            "REIN_MAX_TURNS",
            "REIN_LOG",
        ] {
            command.env_remove(name);
        }
        command
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("NO_COLOR", "1")
            .env("REIN_PROVIDER", "scripted");
        if let Some(scenario) = scenario {
            command.env("REIN_SCENARIO", scenario);
        }
        for (name, value) in env {
            command.env(name, value);
        }
        let output = command.output().unwrap();
        Output {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// `rein run --yes` fixing the demo's test; the task's id.
    fn fix(&self) -> String {
        let root = self.root();
        let out = self.rein(
            &[
                "run",
                "--workspace",
                root.to_str().unwrap(),
                "--yes",
                "--fix-test",
                "tests/test_cart.py::test_total",
            ],
            Some(&demo_scenario()),
        );
        out.assert_code(0);
        assert!(self.cart().contains(FIXED), "{}", self.cart());
        let id = out
            .stderr
            .split("rein run · task ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_else(|| panic!("no task id in:\n{}", out.stderr))
            .to_owned();
        assert!(
            out.stderr.contains(&format!("rein undo {id}")),
            "the way back is named:\n{}",
            out.stderr
        );
        id
    }

    fn undo(&self, task: Option<&str>) -> Output {
        self.undo_with(task, &[])
    }

    fn undo_with(&self, task: Option<&str>, env: &[(&str, &str)]) -> Output {
        let root = self.root();
        let mut args = vec!["undo", "--workspace", root.to_str().unwrap()];
        args.extend(task);
        self.rein_with(&args, None, env)
    }
}

#[test]
fn undo_keeps_a_line_typed_after_the_task() {
    let project = Project::new();
    let task = project.fix();
    project.set_cart(&format!("{}{TYPED}", project.cart()));

    let out = project.undo(Some(&task));
    out.assert_code(0);
    out.assert_stdout(&format!("rein undo · task {task}\n"));
    out.assert_stdout("  cart.py: restored as before the task (your later changes kept)\n");
    out.assert_stdout("Undid Rein's changes to 1 file.\n");
    let cart = project.cart();
    assert!(cart.contains(UNFIXED), "the fix is taken back:\n{cart}");
    assert!(cart.ends_with(TYPED), "the typed line is kept:\n{cart}");

    // Again: nothing more to do, and said so; the latest task by default.
    let again = project.undo(None);
    again.assert_code(0);
    again.assert_stdout("  cart.py: already undone\n");
    again.assert_stdout("Already undone");
    assert_eq!(project.cart(), cart);
}

#[test]
fn undo_shows_a_conflict_and_leaves_the_file_as_the_user_left_it() {
    let project = Project::new();
    let task = project.fix();
    // The user rewrote the very line the task fixed.
    let mine = project.cart().replace(
        FIXED,
        &FIXED.replace("item.price * item.qty", "item.qty * item.price"),
    );
    project.set_cart(&mine);

    let out = project.undo(Some(&task));
    out.assert_code(1);
    out.assert_stdout("  cart.py: not undone: you changed what Rein changed (line ");
    out.assert_stdout("      |     return sum(item.qty * item.price for item in items)\n");
    out.assert_stdout("    before the task:\n      |     return sum(item.qty for item in items)\n");
    assert_eq!(project.cart(), mine, "never overwritten");
}

#[test]
fn undo_of_an_unknown_task_is_a_usage_error() {
    let project = Project::new();
    let out = project.undo(Some("t-nope"));
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("there is no task t-nope in this workspace"),
        "{}",
        out.stderr
    );
}

/// A crash during an undo (the process killed, `REIN_CRASH_AT`) loses
/// nothing and does nothing twice: killed after the file was written, the
/// next undo finds it done; killed before, the next undo does it.
#[test]
fn an_undo_killed_midway_is_finished_by_the_next_one() {
    for (point, written) in [("undo_applied", true), ("op_started:rein_undo", false)] {
        let project = Project::new();
        let task = project.fix();
        let fixed = project.cart();
        project.set_cart(&format!("{fixed}{TYPED}"));

        let killed = project.undo_with(Some(&task), &[("REIN_CRASH_AT", point)]);
        assert_eq!(killed.code, -1, "{point}: killed by a signal: {killed:?}");
        let cart = project.cart();
        assert_eq!(cart.contains(UNFIXED), written, "{point}:\n{cart}");
        assert!(
            cart.ends_with(TYPED),
            "{point}: the typed line is there:\n{cart}"
        );

        let next = project.undo(Some(&task));
        next.assert_code(0);
        if written {
            next.assert_stdout("  cart.py: already undone\n");
        } else {
            next.assert_stdout(
                "  cart.py: restored as before the task (your later changes kept)\n",
            );
        }
        let cart = project.cart();
        assert!(
            cart.contains(UNFIXED) && cart.ends_with(TYPED),
            "{point}:\n{cart}"
        );
        assert_eq!(
            cart.matches(TYPED).count(),
            1,
            "{point}: nothing done twice:\n{cart}"
        );
    }
}
