//! Real checkers for the fix-diagnostic tests: pyright, tsc and mypy
//! installed once by `checkers/install.sh` (pinned, under the suite's
//! install lock), cargo from the toolchain; the fixture projects copied
//! into a fresh folder; the verifier set up and asked as the loop asks it.

#![allow(dead_code)] // Each test file uses a part of this module.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use rein_core::budget::TimeBudget;
use rein_core::diagnostics::{
    CannotCheck, CheckSetup, Checker, Diagnostic, DiagnosticVerifier, Position, Range, Severity,
    checker_for,
};
use rein_core::os::checkers;
use rein_core::os::disk::DiskWorkspace;
use rein_core::os::process::ProcessExec;
use rein_core::ports::{Verdict, Verifier, VerifyContext};
use rein_core::task::{TaskId, TaskSpec};
use rein_core::testing::command::TestCommand;
use tokio_util::sync::CancellationToken;

/// The folder `install.sh` printed (installed on first use).
pub fn installed() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/checkers/install.sh");
        let out = Command::new("bash")
            .arg(script)
            .output()
            .expect("bash runs the checkers' install script");
        assert!(
            out.status.success(),
            "installing the checkers failed (node, npm, python3 with pip and the registries are needed):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        PathBuf::from(stdout.lines().last().unwrap_or_default().trim())
    })
}

/// `PATH` with the installed checkers first (node, python3 and cargo come
/// from this process's).
pub fn path_var() -> OsString {
    let dir = installed();
    let mut dirs = vec![dir.join("node_modules/.bin"), dir.join("mypy/bin")];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// A fresh copy of the fixture project `name` (`fixtures/fix_error/…`).
pub fn project(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fix_error")
        .join(name);
    rein_testkit::copy_project(&from, dir.path()).unwrap();
    dir
}

/// Commands as the host runs them, without this test process's cargo
/// target folder (a fixture crate builds in its own).
pub fn exec() -> ProcessExec {
    ProcessExec::new().with_env(
        std::env::vars_os()
            .filter(|(k, _)| k != "CARGO_TARGET_DIR" && k != "CARGO_BUILD_TARGET_DIR"),
    )
}

/// An editor's diagnostic at 1-based `line`.
pub fn diagnostic(path: &str, line: u32, source: &str, code: &str, message: &str) -> Diagnostic {
    Diagnostic {
        path: path.into(),
        range: Range {
            start: Position {
                line: line - 1,
                character: 0,
            },
            end: Position {
                line: line - 1,
                character: 80,
            },
        },
        severity: Severity::Error,
        source: Some(source.into()),
        code: (!code.is_empty()).then(|| code.into()),
        message: message.into(),
    }
    .cleaned()
    .unwrap()
}

/// A project, its task, and the verifier set up as a front end would.
pub struct Fix {
    pub dir: tempfile::TempDir,
    pub task: TaskSpec,
    pub workspace: DiskWorkspace,
    pub exec: ProcessExec,
    pub checker: Checker,
    pub test_command: Option<TestCommand>,
    pub allow_suppressions: bool,
}

impl Fix {
    /// The checker as a front end finds it (trusted workspace).
    pub fn new(fixture: &str, diagnostic: Diagnostic) -> Self {
        let dir = project(fixture);
        let path = path_var();
        let project = checkers::scan(dir.path(), &diagnostic.path, Some(&path), true);
        let checker = checker_for(&diagnostic, &project, None).unwrap();
        let workspace = DiskWorkspace::new(dir.path()).unwrap();
        Self {
            task: TaskSpec::fix_diagnostic(TaskId("t-fix".into()), diagnostic),
            workspace,
            exec: exec(),
            checker,
            dir,
            test_command: None,
            allow_suppressions: false,
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn setup(&self) -> CheckSetup {
        CheckSetup {
            checker: self.checker.clone(),
            timeout: Duration::from_secs(300),
            test_command: self.test_command.clone(),
            test_timeout: Duration::from_secs(120),
            allow_suppressions: self.allow_suppressions,
        }
    }

    pub fn artifacts(&self) -> PathBuf {
        self.root().join(".rein/artifacts/t-fix")
    }

    /// The baseline, before any change.
    pub async fn prepare(&self) -> Result<DiagnosticVerifier, CannotCheck> {
        DiagnosticVerifier::prepare(
            &self.task,
            &self.workspace,
            &self.exec,
            self.setup(),
            &self.artifacts(),
            &CancellationToken::new(),
        )
        .await
    }

    /// Writes `text` to `path` (as an edit of the task's would).
    pub fn write(&self, path: &str, text: &str) {
        let file = self.root().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root().join(path)).unwrap()
    }

    /// The verdict on a claim, the task having touched `touched`.
    pub async fn verify(&self, verifier: &dyn Verifier, touched: &[&str]) -> Verdict {
        let touched: Vec<String> = touched.iter().map(|t| (*t).to_owned()).collect();
        verifier
            .verify(VerifyContext {
                task: &self.task,
                touched: &touched,
                workspace: &self.workspace,
                exec: &self.exec,
                artifacts_dir: self.artifacts(),
                cancel: CancellationToken::new(),
                time: TimeBudget::unlimited(),
            })
            .await
    }
}

/// The verdict's kind and words, for an assertion that shows them.
pub fn said(verdict: &Verdict) -> (&'static str, String) {
    match verdict {
        Verdict::Verified { summary, .. } => ("verified", summary.clone()),
        Verdict::Gap { gap, .. } => ("gap", gap.clone()),
        Verdict::Unconfirmed { summary, .. } => ("unconfirmed", summary.clone()),
    }
}
