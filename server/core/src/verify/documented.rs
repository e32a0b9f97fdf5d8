//! The examples a changed Python file documents, before the task and
//! after the change ([`crate::testing::examples`]): the verifier's part.

use std::sync::atomic::Ordering;

use super::{TestVerifier, Where, shown_path, test_spec};
use crate::budget::CommandLimit;
use crate::ports::{Evidence, VerifyContext};
use crate::testing::command::Runner;
use crate::testing::examples;
use crate::testing::machinery::Role;

impl TestVerifier {
    /// The examples documented in the Python files the baseline run
    /// loaded that hold now, before the task; `None` when there are none
    /// (or the project's tests are not Python's).
    pub(super) async fn examples_before(
        &self,
        at: &Where<'_>,
        loaded: &[(String, Role)],
    ) -> Option<Vec<examples::Example>> {
        let python = self
            .test_command
            .as_ref()
            .is_some_and(|c| matches!(c.runner, Runner::Unittest | Runner::Pytest));
        if !python {
            return None;
        }
        let mut files = Vec::new();
        for (path, role) in loaded {
            if *role != Role::Project || files.len() == examples::MAX_FILES {
                continue;
            }
            if let Ok(file) = at.workspace.read_file(path).await
                && examples::may_document(path, &file.text)
            {
                files.push(path.clone());
            }
        }
        if files.is_empty() {
            return None;
        }
        let (_, now) = self.run_examples(at, &files, "examples-baseline").await;
        let held: Vec<examples::Example> = now.ok()?.into_iter().filter(|e| e.held).collect();
        (!held.is_empty()).then_some(held)
    }

    /// Runs the examples `files` document: the run as evidence, and what
    /// each example did (or why the run showed nothing).
    async fn run_examples(
        &self,
        at: &Where<'_>,
        files: &[String],
        label: &str,
    ) -> (Option<Evidence>, Result<Vec<examples::Example>, String>) {
        let run = examples::run(files);
        let limit = CommandLimit::new(None, self.timeout, at.time.left());
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        let log_path = at.artifacts_dir.join(format!("{label}-{n}.log"));
        let spec = test_spec(
            at.workspace.root(),
            run.command,
            log_path.clone(),
            limit.timeout,
            Some(run.report),
            at.layer,
        );
        let result = match at.exec.run(spec, at.cancel.clone()).await {
            Ok(result) => result,
            Err(e) => return (None, Err(format!("it could not be run: {e}"))),
        };
        let read = if result.timed_out {
            Err(format!(
                "it was stopped after {} s",
                limit.timeout.as_secs()
            ))
        } else {
            examples::read(result.private_report.as_deref())
        };
        let evidence = Evidence {
            check: format!("examples_hold {}", files.join(" ")),
            command: run.shown,
            exit_code: result.exit_code,
            duration_ms: result.duration.as_millis() as u64,
            files: Vec::new(),
            log_path: shown_path(at.workspace.root(), &log_path),
            failures: match &read {
                Ok(found) => found
                    .iter()
                    .filter(|e| !e.held)
                    .map(|e| e.name.clone())
                    .collect(),
                Err(_) => Vec::new(),
            },
            sandbox: at.exec.confinement().describe(),
        };
        (Some(evidence), read)
    }

    /// Whether the change left the examples that held before holding, in
    /// the files it touched: `None` when it touched none of them.
    pub(super) async fn examples_after(
        &self,
        cx: &VerifyContext<'_>,
        layer: Option<&[(String, String)]>,
    ) -> Option<(Option<Evidence>, Option<String>)> {
        let before = self.baseline.examples.as_deref()?;
        let mut files: Vec<String> = cx
            .touched
            .iter()
            .filter(|t| before.iter().any(|e| e.file == **t))
            .cloned()
            .collect();
        files.sort();
        files.dedup();
        if files.is_empty() {
            return None;
        }
        let at = Where {
            workspace: cx.workspace,
            exec: cx.exec,
            artifacts_dir: &cx.artifacts_dir,
            cancel: &cx.cancel,
            time: cx.time,
            layer,
        };
        let (evidence, now) = self.run_examples(&at, &files, "verify-examples").await;
        let mut evidence = evidence;
        if let Some(e) = evidence.as_mut() {
            e.files = self.touched_hashes(cx).await;
        }
        let gap = match now {
            Ok(now) => {
                let broken = examples::broken(before, &now, &files);
                (!broken.is_empty()).then(|| examples::gap(&broken))
            }
            Err(why) => Some(format!(
                "Rein could not check that the examples {} documents still hold, as they did before the change: {why}",
                files.join(", ")
            )),
        };
        Some((evidence, gap))
    }
}
