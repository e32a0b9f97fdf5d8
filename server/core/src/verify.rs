//! The built-in verifier: a claim of completion is checked against the
//! task's acceptance checks on the current content, and the evidence (the
//! command, its exit code and duration, the hashes of the touched files
//! and the log) is kept. The model's word is never enough.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use globset::{Glob, GlobSetBuilder};

use crate::exec::{CommandKind, CommandSpec};
use crate::host::testcmd::TestCommand;
use crate::ports::{Evidence, Verdict, Verifier, VerifyContext};
use crate::task::{Acceptance, TaskSpec};
use crate::testfind;
use crate::workspace::Workspace;

pub struct TestVerifier {
    test_command: Option<TestCommand>,
    timeout: Duration,
    /// The target tests' assertions when the task began.
    baseline: HashMap<(String, String), Vec<String>>,
    runs: AtomicU32,
}

impl TestVerifier {
    /// Records what the acceptance checks compare against (the assertions
    /// as they are now); call before the task starts.
    pub async fn prepare(
        task: &TaskSpec,
        workspace: &dyn Workspace,
        test_command: Option<TestCommand>,
        timeout: Duration,
    ) -> Self {
        let mut baseline = HashMap::new();
        for check in &task.acceptance {
            if let Acceptance::AssertionsUnchanged { path, name } = check
                && let Some(assertions) = assertions_now(workspace, path, name).await
            {
                baseline.insert((path.clone(), name.clone()), assertions);
            }
        }
        Self {
            test_command,
            timeout,
            baseline,
            runs: AtomicU32::new(0),
        }
    }
}

async fn assertions_now(workspace: &dyn Workspace, path: &str, name: &str) -> Option<Vec<String>> {
    let lang = testfind::lang_for_path(path)?;
    let file = workspace.read_file(path).await.ok()?;
    let test = testfind::find(&file.text, lang, name)?;
    Some(testfind::assertions(&file.text, lang, &test))
}

#[async_trait]
impl Verifier for TestVerifier {
    async fn verify(&self, cx: VerifyContext<'_>) -> Verdict {
        if cx.task.acceptance.is_empty() {
            return Verdict::Verified {
                summary: "done (this task has no acceptance checks; the summary is the model's)"
                    .into(),
                evidence: Vec::new(),
            };
        }
        let mut evidence = Vec::new();
        let mut gaps = Vec::new();
        let mut passed = Vec::new();
        for check in &cx.task.acceptance {
            match check {
                Acceptance::TestPasses { path, name } => match self.run_test(&cx, path, name).await
                {
                    Ok((e, detail)) => {
                        if e.exit_code == Some(0) {
                            passed.push(format!("`{name}` passes"));
                        } else {
                            gaps.push(format!(
                                "`{name}` still fails (exit {}):\n{detail}\nfull log: {}",
                                e.exit_code.unwrap_or(-1),
                                e.log_path
                            ));
                        }
                        evidence.push(e);
                    }
                    Err(gap) => gaps.push(gap),
                },
                Acceptance::AssertionsUnchanged { path, name } => {
                    let before = self.baseline.get(&(path.clone(), name.clone()));
                    let now = assertions_now(cx.workspace, path, name).await;
                    match (before, now) {
                        (Some(before), Some(now)) if *before == now => {}
                        (Some(_), _) => gaps.push(format!(
                            "the assertions of `{name}` in {path} were changed; restore them and fix the code under test instead"
                        )),
                        // The test could not be read at the start: nothing to compare.
                        (None, _) => {}
                    }
                }
                Acceptance::EditsWithin { globs } => {
                    let mut set = GlobSetBuilder::new();
                    for g in globs {
                        if let Ok(glob) = Glob::new(g) {
                            set.add(glob);
                        }
                    }
                    if let Ok(set) = set.build() {
                        let outside: Vec<&String> =
                            cx.touched.iter().filter(|p| !set.is_match(p)).collect();
                        if !outside.is_empty() {
                            gaps.push(format!(
                                "edits were made outside the allowed paths ({}): {}",
                                globs.join(", "),
                                outside
                                    .iter()
                                    .map(|s| s.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ));
                        }
                    }
                }
                // Comparing against the tests that passed before needs the
                // baseline run recorded with the task's state.
                Acceptance::NoRegressions => {}
            }
        }
        if gaps.is_empty() {
            Verdict::Verified {
                summary: format!("fixed: {}", passed.join(", ")),
                evidence,
            }
        } else {
            Verdict::Gap {
                gap: gaps.join("; "),
                evidence,
            }
        }
    }
}

impl TestVerifier {
    /// Runs the target test; returns the evidence and, for a failure, the
    /// telling lines of its output.
    async fn run_test(
        &self,
        cx: &VerifyContext<'_>,
        path: &str,
        name: &str,
    ) -> Result<(Evidence, String), String> {
        let Some(command) = &self.test_command else {
            return Err(
                "Rein cannot run the tests to check this (no test command detected or configured)"
                    .into(),
            );
        };
        if let Err(e) = cx.workspace.flush_to_disk().await {
            return Err(format!(
                "the edited files could not be saved to disk to run the test: {e}"
            ));
        }
        let command = command.for_target(Some(&test_target(path, name)));
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        let log_path: PathBuf = cx.artifacts_dir.join(format!("verify-{n}.log"));
        let spec = CommandSpec {
            command: command.clone(),
            cwd: cx.workspace.root().to_path_buf(),
            timeout: self.timeout,
            log_path: log_path.clone(),
            kind: CommandKind::Test,
        };
        let result = cx
            .exec
            .run(spec, cx.cancel.clone())
            .await
            .map_err(|e| format!("the test could not be run: {e}"))?;
        let mut files = Vec::new();
        for touched in cx.touched {
            if let Ok(file) = cx.workspace.read_file(touched).await {
                files.push((touched.clone(), file.version.hash));
            }
        }
        let exit_code = if result.succeeded() {
            Some(0)
        } else {
            result.exit_code.filter(|c| *c != 0).or(Some(-1))
        };
        let evidence = Evidence {
            check: format!("test_passes {path}::{name}"),
            command,
            exit_code,
            duration_ms: result.duration.as_millis() as u64,
            files,
            log_path: log_path.display().to_string(),
            failures: result.failures.clone(),
        };
        Ok((evidence, telling_lines(&result.tail)))
    }
}

/// The runner target of a test: `path::name`, with Python's dotted
/// qualified names (`TestCart.test_total`) written the pytest way
/// (`TestCart::test_total`), which the unittest conversion also reads.
pub fn test_target(path: &str, name: &str) -> String {
    match testfind::lang_for_path(path) {
        Some(testfind::Lang::Python) => format!("{path}::{}", name.replace('.', "::")),
        _ => format!("{path}::{name}"),
    }
}

/// The lines of a failing run that say why: errors, assertions.
fn telling_lines(tail: &[String]) -> String {
    let telling: Vec<&String> = tail
        .iter()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error")
                || l.contains("assert")
                || l.contains("expected")
                || l.contains("panicked")
        })
        .collect();
    let shown: Vec<&str> = telling
        .iter()
        .rev()
        .take(4)
        .rev()
        .map(|l| l.trim())
        .collect();
    if shown.is_empty() {
        tail.iter()
            .rev()
            .take(5)
            .rev()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        shown.join("\n")
    }
}
