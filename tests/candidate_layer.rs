//! A candidate fix checked in the sandbox's private layer (the search with
//! the verifier): the command sees the candidate's files in the workspace,
//! and nothing it does — a hostile test writing, deleting, replacing —
//! reaches the real workspace. Run the way Rein runs a candidate's check:
//! `ProcessExec` through the real `rein sandbox-exec`, with the policy
//! `SandboxLauncher` builds.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rein_app::confinement::SandboxLauncher;
use rein_core::exec::{CommandKind, CommandResult, CommandSpec, Exec, Launcher, Layer};
use rein_core::os::process::ProcessExec;
use rein_core::sandbox_config::SandboxConfig;
use rein_testkit::rein_binary;
use tokio_util::sync::CancellationToken;

struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let p = Self { dir };
        for d in ["work/src", "home"] {
            std::fs::create_dir_all(p.path(d)).unwrap();
        }
        std::fs::write(p.path("work/cart.py"), "broken\n").unwrap();
        std::fs::write(p.path("work/other.py"), "keep me\n").unwrap();
        let git = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(p.path("work"))
            .status()
            .unwrap();
        assert!(git.success());
        p
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().canonicalize().unwrap().join(rel)
    }

    fn launcher(&self) -> SandboxLauncher {
        let home = self.path("home");
        let env = move |name: &str| -> Option<OsString> {
            match name {
                "HOME" => Some(home.clone().into_os_string()),
                "PATH" => std::env::var_os("PATH"),
                _ => None,
            }
        };
        SandboxLauncher::with_env(
            &rein_binary().unwrap(),
            &self.path("work"),
            &SandboxConfig::default(),
            &env,
        )
        .unwrap()
    }

    /// The executor Rein checks candidates with, through the real
    /// sandbox; `None` (said, not skipped silently) where this machine's
    /// sandbox cannot lay files: the search is then off, and there is
    /// nothing to check.
    fn layered_exec(&self) -> Option<ProcessExec> {
        let launcher = self.launcher();
        if !launcher.private_layers() {
            eprintln!(
                "no private layers on this machine: {:?}",
                launcher.confinement()
            );
            return None;
        }
        Some(
            ProcessExec::new()
                .with_launcher(Arc::new(launcher))
                .with_env(vec![(
                    OsString::from("PATH"),
                    std::env::var_os("PATH").unwrap_or_default(),
                )]),
        )
    }

    fn run(&self, exec: &ProcessExec, command: &str, layer: Layer) -> CommandResult {
        let spec = CommandSpec {
            command: command.to_owned(),
            cwd: self.path("work"),
            timeout: Duration::from_secs(60),
            log_path: self.path("log/run.log"),
            kind: CommandKind::Test,
            network: false,
            sandbox_mode: None,
            report: None,
            layer: Some(layer),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime
            .block_on(exec.run(spec, CancellationToken::new()))
            .unwrap()
    }

    /// Every file of the workspace (but `.git`) with its text.
    fn files(&self) -> Vec<(String, String)> {
        let root = self.path("work");
        let mut out = Vec::new();
        walk(&root, &root, &mut out);
        out.sort();
        out
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        if rel == ".git" {
            continue;
        }
        if path.is_dir() {
            out.push((format!("{rel}/"), String::new()));
            walk(root, &path, out);
        } else {
            out.push((rel, std::fs::read_to_string(&path).unwrap_or_default()));
        }
    }
}

/// The candidate's test sees the candidate, then tries everything a
/// hostile test could to the workspace; the workspace is as it was.
#[test]
fn a_hostile_candidate_cannot_write_outside_its_layer() {
    let project = Project::new();
    let Some(exec) = project.layered_exec() else {
        return;
    };
    let before = project.files();
    let result = project.run(
        &exec,
        "cat cart.py src/new.py; echo hostile > cart.py; echo planted > planted.py; \
         mkdir -p evil && echo x > evil/y; rm -f other.py; mv src gone; \
         cat cart.py; ls",
        Layer::Files(vec![
            ("cart.py".into(), "fixed\n".into()),
            ("src/new.py".into(), "new\n".into()),
        ]),
    );
    let output = result.tail.join("\n");
    assert_eq!(result.exit_code, Some(0), "{output}");
    // It saw the candidate, and its own writes, inside.
    assert!(output.starts_with("fixed\nnew\nhostile\n"), "{output}");
    assert!(output.contains("planted.py"), "{output}");
    assert!(!output.contains("other.py"), "{output}");
    // Nothing of it is in the real workspace.
    assert_eq!(project.files(), before);
    assert_eq!(
        std::fs::read_to_string(project.path("work/cart.py")).unwrap(),
        "broken\n"
    );
}

/// An executor that cannot lay the files refuses the command: it never
/// runs a candidate's check on the real workspace.
#[test]
fn without_a_private_layer_a_candidate_is_refused_not_run_on_the_workspace() {
    let project = Project::new();
    let exec = ProcessExec::new();
    assert!(!exec.lays_files());
    let spec = CommandSpec {
        command: "echo ran > ran.txt".into(),
        cwd: project.path("work"),
        timeout: Duration::from_secs(60),
        log_path: project.path("log/run.log"),
        kind: CommandKind::Test,
        network: false,
        sandbox_mode: None,
        report: None,
        layer: Some(Layer::Files(vec![("cart.py".into(), "fixed\n".into())])),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let refused = runtime
        .block_on(exec.run(spec, CancellationToken::new()))
        .unwrap_err();
    assert!(
        refused.to_string().contains("no private layer here"),
        "{refused}"
    );
    assert!(!project.path("work/ran.txt").exists());
}

/// The search's check of a candidate, through the verifier: a candidate
/// that passes the visible cases by breaking an example the code documents
/// (is_valid_parenthesization's guard deleted, seen on the held-out split
/// in BENCHMARKS figure 9) does not pass, and the model is told which
/// example; the true fix passes; the workspace never changes.
#[test]
fn a_candidate_that_breaks_a_documented_example_does_not_pass_its_check() {
    use rein_core::budget::TimeBudget;
    use rein_core::os::disk::DiskWorkspace;
    use rein_core::ports::{Verifier, VerifyContext};
    use rein_core::task::{TaskId, TaskSpec};
    use rein_core::testing::command::{Runner, TestCommand};
    use rein_core::verify::TestVerifier;

    const PARENS: &str = "def is_valid(parens):\n    depth = 0\n    for paren in parens:\n        if paren == '(':\n            depth += 1\n        else:\n            depth -= 1\n            if depth < 0:\n                return False\n    return True\n\n\n\"\"\"\n>>> is_valid('((()()))()')\nTrue\n>>> is_valid(')()(')\nFalse\n\"\"\"\n";
    const TEST: &str = "import unittest\n\nfrom parens import is_valid\n\n\nclass TestParens(unittest.TestCase):\n    def test_is_valid(self):\n        self.assertTrue(is_valid('((()()))()'))\n        self.assertFalse(is_valid('(('))\n";
    let project = Project::new();
    let Some(exec) = project.layered_exec() else {
        return;
    };
    std::fs::write(project.path("work/parens.py"), PARENS).unwrap();
    std::fs::create_dir_all(project.path("work/tests")).unwrap();
    std::fs::write(project.path("work/tests/__init__.py"), "").unwrap();
    std::fs::write(project.path("work/tests/test_parens.py"), TEST).unwrap();
    let before = project.files();
    let ws = DiskWorkspace::new(project.path("work")).unwrap();
    let artifacts = project.path("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let task = TaskSpec::fix_test(
        TaskId("t-candidate-examples".into()),
        "tests/test_parens.py",
        "TestParens.test_is_valid",
    );
    let touched = ["parens.py".to_owned()];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let verifier = TestVerifier::prepare(
            &task,
            &ws,
            &exec,
            Some(TestCommand::new(Runner::Unittest)),
            Duration::from_secs(60),
            &artifacts,
            &CancellationToken::new(),
        )
        .await;
        let check = |text: String| {
            let files = vec![("parens.py".to_owned(), text)];
            let cx = VerifyContext {
                task: &task,
                touched: &touched,
                workspace: &ws,
                exec: &exec,
                artifacts_dir: artifacts.clone(),
                cancel: CancellationToken::new(),
                time: TimeBudget::unlimited(),
            };
            let verifier = &verifier;
            async move { verifier.check_candidate(cx, &files).await.unwrap() }
        };
        let guard_deleted = PARENS
            .replace(
                "            if depth < 0:\n                return False\n",
                "",
            )
            .replace("    return True\n", "    return depth == 0\n");
        let wrong = check(guard_deleted).await;
        assert!(!wrong.passed);
        assert!(
            wrong
                .gap
                .contains("`is_valid(')()(')` should give `False`, gives `True`"),
            "{}",
            wrong.gap
        );
        let fixed = check(PARENS.replace("    return True\n", "    return depth == 0\n")).await;
        assert!(fixed.passed, "{}", fixed.gap);
    });
    assert_eq!(project.files(), before, "the workspace is untouched");
}
