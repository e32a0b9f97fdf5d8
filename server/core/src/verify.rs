//! The built-in verifier: a claim of completion is checked against the
//! task's acceptance checks on the current content, and the evidence (the
//! command, its exit code and duration, the hashes of the touched files
//! and the log) is kept. The model's word is never enough.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use globset::{Glob, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::budget::{CommandLimit, LimitedBy, TimeBudget};
use crate::exec::CommandResult;
use crate::exec::{CommandKind, CommandSpec, Exec, Layer, ReportSpec};
use crate::ports::{AlreadyMet, CandidateCheck, Evidence, Verdict, Verifier, VerifyContext};
use crate::task::{Acceptance, TaskSpec};
use crate::testfind;
use crate::testing::command::TestCommand;
use crate::testing::examples;
use crate::testing::isolated;
use crate::testing::machinery::{FindingKey, Role};
use crate::testing::reporter::{self, NotPassed, Reading};
use crate::testtarget::TestTarget;
use crate::workspace::Workspace;

pub mod diagnostic;
mod documented;
mod layered;
mod tricks;

pub use diagnostic::DiagnosticVerifier;

pub struct TestVerifier {
    test_command: Option<TestCommand>,
    timeout: Duration,
    baseline: Baseline,
    runs: AtomicU32,
    /// The baseline run showed every target test passing (see
    /// [`shows_targets_passing`]). Not part of the saved [`Baseline`]: a
    /// resumed task is past the point where it could end with nothing to
    /// do.
    met_at_baseline: bool,
    /// The last lines of the baseline run's output, for the model's first
    /// message. Not saved either: only a new task starts with it.
    baseline_tail: Vec<String>,
}

/// What the checks compare against, recorded before the task changes
/// anything (and kept with the task's state, so a resumed task compares
/// against the same).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    /// The target tests' assertions when the task began, by (path, name).
    pub assertions: Vec<((String, String), Vec<String>)>,
    /// The target tests' whole text when the task began (`test_lines`);
    /// absent from baselines recorded before it was kept, which compare
    /// the assertions only.
    #[serde(default)]
    pub tests: Vec<((String, String), Vec<String>)>,
    /// The scoped test run before the task: what passed then must pass at
    /// the end.
    pub suite: Option<SuiteRun>,
    /// What in the workspace touched the test machinery before the task
    /// (see [`crate::testing::machinery`]): only what is new at the end
    /// is held against a claim. Absent from baselines recorded before it
    /// was kept: then only the findings in files the task touched count.
    #[serde(default)]
    pub machinery: Option<Vec<FindingKey>>,
    /// A fix-diagnostic task's checker baseline ([`DiagnosticVerifier`]).
    #[serde(default)]
    pub diagnostics: Option<diagnostic::DiagnosticBaseline>,
    /// The examples documented in the files the baseline run loaded that
    /// held before the task ([`examples`]): a change to one of those files
    /// must leave them holding. Absent: none were found (or recorded).
    #[serde(default)]
    pub examples: Option<Vec<examples::Example>>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteRun {
    /// The target given to the test command (a file, or the whole suite).
    pub scope: Option<String>,
    pub exit_code: Option<i32>,
    pub failures: Vec<String>,
    #[serde(default)]
    pub command: String,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub log_path: String,
}

impl TestVerifier {
    /// Records the baseline: the target tests' assertions as they are now
    /// and, for `NoRegressions`, a run of the target test's file (the scope
    /// "tests that passed before" is checked in). Call before the task
    /// starts.
    pub async fn prepare(
        task: &TaskSpec,
        workspace: &dyn Workspace,
        exec: &dyn Exec,
        test_command: Option<TestCommand>,
        timeout: Duration,
        artifacts_dir: &Path,
        cancel: &CancellationToken,
    ) -> Self {
        let mut baseline = Baseline::default();
        for check in &task.acceptance {
            if let Acceptance::AssertionsUnchanged { path, name } = check {
                let key = (path.clone(), name.clone());
                if let Some(assertions) = assertions_now(workspace, path, name).await {
                    baseline.assertions.push((key.clone(), assertions));
                }
                if let Some(lines) = test_now(workspace, path, name).await {
                    baseline.tests.push((key, lines));
                }
            }
        }
        let mut verifier = Self {
            test_command,
            timeout,
            baseline,
            runs: AtomicU32::new(0),
            met_at_baseline: false,
            baseline_tail: Vec::new(),
        };
        let scope = regression_scope(task);
        let at = Where {
            workspace,
            exec,
            artifacts_dir,
            cancel,
            // Before the task: its time budget has not started.
            time: TimeBudget::unlimited(),
            layer: None,
        };
        // The files the baseline run loaded (Rein's runner names them).
        let mut loaded = Vec::new();
        if task.acceptance.contains(&Acceptance::NoRegressions)
            && let Some((run, result)) = verifier.run_suite(&at, scope.as_deref(), "baseline").await
        {
            verifier.met_at_baseline = shows_targets_passing(task, &result);
            verifier.baseline.suite = Some(run);
            if let Some(report) = runner_report(&result) {
                loaded = tricks::loaded(&report);
            }
            verifier.baseline_tail = result.tail;
        }
        if has_target(task) {
            let findings = tricks::scan(workspace, &loaded).await;
            verifier.baseline.machinery = Some(tricks::keys(&findings));
        }
        verifier.baseline.examples = verifier.examples_before(&at, &loaded).await;
        verifier
    }

    /// A verifier for a resumed task, comparing against its recorded baseline.
    pub fn with_baseline(
        test_command: Option<TestCommand>,
        timeout: Duration,
        baseline: Baseline,
    ) -> Self {
        Self {
            test_command,
            timeout,
            baseline,
            runs: AtomicU32::new(0),
            met_at_baseline: false,
            baseline_tail: Vec::new(),
        }
    }

    pub fn baseline(&self) -> &Baseline {
        &self.baseline
    }

    /// How `target` is run: the command that runs, the command the
    /// evidence shows (the project's usual one, with the same arguments)
    /// and where the run reports besides its output. unittest and pytest
    /// run through Rein's own runner ([`isolated`]); other runners as they
    /// are, with the JUnit reports the user configured.
    fn planned(&self, target: Option<&TestTarget>) -> Option<Planned> {
        let command = self.test_command.as_ref()?;
        Some(match isolated::isolated(command, target) {
            Some(run) => Planned {
                run: run.command,
                shown: run.shown,
                report: Some(run.report),
            },
            None => {
                let line = command.for_target(target);
                Planned {
                    run: line.clone(),
                    shown: line,
                    report: command.report.clone().map(ReportSpec::Junit),
                }
            }
        })
    }

    /// Runs the test command on `scope`: the run as kept, and the whole
    /// result (which tests the runner named as passed); `None` when there
    /// is no test command, the scope is not a runnable target or the
    /// command cannot run.
    async fn run_suite(
        &self,
        at: &Where<'_>,
        scope: Option<&str>,
        label: &str,
    ) -> Option<(SuiteRun, CommandResult)> {
        let workspace = at.workspace;
        // The scope is the target test's file: if it no longer resolves,
        // the target test's own check says so.
        let target = match scope {
            Some(scope) => TestTarget::check(scope, workspace).await.ok()?,
            None => None,
        };
        let planned = self.planned(target.as_ref())?;
        let limit = CommandLimit::new(None, self.timeout, at.time.left());
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        let label = if at.layer.is_some() {
            "candidate-suite"
        } else {
            label
        };
        let log_path = at.artifacts_dir.join(format!("{label}-{n}.log"));
        let spec = test_spec(
            workspace.root(),
            planned.run,
            log_path.clone(),
            limit.timeout,
            planned.report,
            at.layer,
        );
        let result = at.exec.run(spec, at.cancel.clone()).await.ok()?;
        let run = SuiteRun {
            scope: scope.map(str::to_owned),
            exit_code: result.exit_code,
            failures: result.failures.clone(),
            command: planned.shown,
            duration_ms: result.duration.as_millis() as u64,
            log_path: shown_path(workspace.root(), &log_path),
        };
        Some((run, result))
    }
}

/// A run of the checks: in the workspace's root, no network, the
/// sandbox's usual mode, with a candidate's files laid over it if any.
fn test_spec(
    root: &Path,
    command: String,
    log_path: PathBuf,
    timeout: Duration,
    report: Option<ReportSpec>,
    layer: Option<&[(String, String)]>,
) -> CommandSpec {
    CommandSpec {
        command,
        cwd: root.to_path_buf(),
        timeout,
        log_path,
        kind: CommandKind::Test,
        network: false,
        sandbox_mode: None,
        report,
        layer: layer.map(|files| Layer::Files(files.to_vec())),
    }
}

/// How a test run is made ([`TestVerifier::planned`]).
struct Planned {
    run: String,
    shown: String,
    report: Option<ReportSpec>,
}

/// Whether the task has a target test: the checks that rely on a test run
/// (and what could make it lie) apply.
fn has_target(task: &TaskSpec) -> bool {
    task.acceptance
        .iter()
        .any(|a| matches!(a, Acceptance::TestPasses { .. }))
}

/// The report of Rein's own runner, if the run had one and it parses.
fn runner_report(result: &CommandResult) -> Option<reporter::RunnerReport> {
    match result.private_report.as_deref()? {
        crate::exec::PrivateReport::Text(text) => reporter::parse(text).ok(),
        _ => None,
    }
}

/// Where and within what a suite runs.
struct Where<'a> {
    workspace: &'a dyn Workspace,
    exec: &'a dyn Exec,
    artifacts_dir: &'a Path,
    cancel: &'a CancellationToken,
    time: TimeBudget,
    /// A candidate's files, laid over the workspace for the run.
    layer: Option<&'a [(String, String)]>,
}

/// What "tests that passed before" means for a task: the target test's
/// file (a whole suite can take long and fail for reasons of its own).
fn regression_scope(task: &TaskSpec) -> Option<String> {
    task.acceptance.iter().find_map(|a| match a {
        Acceptance::TestPasses { path, .. } => Some(path.clone()),
        _ => None,
    })
}

/// Whether a baseline run shows the task already done: it names every
/// target test as passed, by the same rules as a check of the target
/// ([`shows_passing`]: the name among the passes and a closing summary
/// with passes in it), and names none of them among its failures. A run
/// cut short, or one whose output Rein cannot read, shows nothing. A task
/// with no target test (an instruction) is never done before it starts.
fn shows_targets_passing(task: &TaskSpec, result: &CommandResult) -> bool {
    if result.timed_out || result.cancelled {
        return false;
    }
    let targets: Vec<(&str, &str)> = task
        .acceptance
        .iter()
        .filter_map(|a| match a {
            Acceptance::TestPasses { path, name } => Some((path.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    let names = target_names(task);
    // The run may fail for other tests of the file; none of its failures
    // may be the target's (a parameterized case of it, say).
    let target_failed = result
        .failures
        .iter()
        .any(|f| names.iter().any(|n| f.contains(n.as_str())));
    !targets.is_empty()
        && !target_failed
        && targets
            .iter()
            .all(|(path, name)| shows_passing(result, path, name))
}

async fn test_now(workspace: &dyn Workspace, path: &str, name: &str) -> Option<Vec<String>> {
    let lang = testfind::lang_for_path(path)?;
    let file = workspace.read_file(path).await.ok()?;
    testfind::test_lines(&file.text, lang, name)
}

async fn assertions_now(workspace: &dyn Workspace, path: &str, name: &str) -> Option<Vec<String>> {
    let lang = testfind::lang_for_path(path)?;
    let file = workspace.read_file(path).await.ok()?;
    let test = testfind::find(&file.text, lang, name)?;
    Some(testfind::assertions(&file.text, lang, &test))
}

#[async_trait]
impl Verifier for TestVerifier {
    fn saved_state(&self) -> serde_json::Value {
        serde_json::to_value(&self.baseline).unwrap_or_default()
    }

    fn met_at_baseline(&self) -> bool {
        self.met_at_baseline
    }

    fn baseline_output(&self) -> Option<crate::ports::BaselineOutput> {
        let run = self.baseline.suite.as_ref()?;
        // Only a new task's own run (a resumed one has no tail).
        if self.baseline_tail.is_empty() && run.failures.is_empty() {
            return None;
        }
        Some(crate::ports::BaselineOutput {
            command: run.command.clone(),
            exit_code: run.exit_code,
            failures: run.failures.clone(),
            tail: self.baseline_tail.clone(),
            log_path: run.log_path.clone(),
        })
    }

    async fn already_met(&self, cx: VerifyContext<'_>) -> Option<AlreadyMet> {
        if !self.met_at_baseline {
            return None;
        }
        // The target tests' own runs, on the text as it is now. The other
        // checks hold by definition before any change: nothing can have
        // regressed, been weakened or been edited outside the paths.
        let targets: Vec<Acceptance> = cx
            .task
            .acceptance
            .iter()
            .filter(|a| matches!(a, Acceptance::TestPasses { .. }))
            .cloned()
            .collect();
        let passing: Vec<String> = targets
            .iter()
            .filter_map(|a| match a {
                Acceptance::TestPasses { name, .. } => Some(format!("`{name}` passes")),
                _ => None,
            })
            .collect();
        // No target: a verdict on no checks is the model's word, not a test's.
        if passing.is_empty() {
            return None;
        }
        let task = TaskSpec {
            acceptance: targets,
            ..cx.task.clone()
        };
        match self.verify(VerifyContext { task: &task, ..cx }).await {
            Verdict::Verified { evidence, .. } => Some(AlreadyMet {
                summary: format!("already passing: {}; nothing to change", passing.join(", ")),
                evidence,
            }),
            Verdict::Gap { .. } | Verdict::Unconfirmed { .. } => None,
        }
    }

    async fn check_candidate(
        &self,
        cx: VerifyContext<'_>,
        files: &[(String, String)],
    ) -> Option<CandidateCheck> {
        self.candidate(cx, files).await
    }

    async fn verify(&self, cx: VerifyContext<'_>) -> Verdict {
        if cx.task.acceptance.is_empty() {
            return Verdict::Verified {
                summary: "done (this task has no acceptance checks; the summary is the model's)"
                    .into(),
                evidence: Vec::new(),
            };
        }
        // A verdict is about the text as it is: if the touched files change
        // while the checks run (the user types), they ran on text that is
        // gone, so they are made again on the new text.
        let mut unsteady = (Vec::new(), String::new());
        for _ in 0..STEADY_ATTEMPTS {
            let before = self.touched_hashes(&cx).await;
            let verdict = self.check(&cx, None).await;
            let after = self.touched_hashes(&cx).await;
            let evidence = verdict.evidence();
            if after == before && evidence.iter().all(|e| e.files == before) {
                return verdict;
            }
            let moved = moved_files(&before, &after, evidence);
            tracing::info!(%moved, "files changed while the checks ran; checking again");
            unsteady = (evidence.to_vec(), moved);
        }
        let (evidence, moved) = unsteady;
        Verdict::Gap {
            gap: format!(
                "{moved} changed while Rein ran the checks, {STEADY_ATTEMPTS} times in a row (someone is editing), so no result is about the text as it is now; claim completion again once the files are settled"
            ),
            evidence,
        }
    }
}

impl TestVerifier {
    /// [`Verifier::check_candidate`]: every check, once, with the
    /// candidate's files over the workspace — its reads through
    /// [`layered::Layered`], its runs in the sandbox's private layer. A
    /// run that would lie (a trick) fails the candidate, which never
    /// reaches the workspace. Not for a task without a target test, nor
    /// for a runner whose JUnit files (written in the workspace, so in the
    /// layer, and gone with it) would be the only word on what passed.
    async fn candidate(
        &self,
        cx: VerifyContext<'_>,
        files: &[(String, String)],
    ) -> Option<CandidateCheck> {
        if !has_target(cx.task) || files.is_empty() {
            return None;
        }
        if let Some(ReportSpec::Junit(_)) = self.planned(None)?.report {
            return None;
        }
        let layered = layered::Layered::new(cx.workspace, files);
        let mut touched: Vec<String> = cx.touched.to_vec();
        touched.extend(files.iter().map(|(p, _)| p.clone()));
        touched.sort();
        touched.dedup();
        let cx = VerifyContext {
            workspace: &layered,
            touched: &touched,
            ..cx
        };
        Some(match self.check(&cx, Some(files)).await {
            Verdict::Verified { evidence, .. } => CandidateCheck {
                passed: true,
                gap: String::new(),
                evidence,
            },
            Verdict::Gap { gap, evidence } => CandidateCheck {
                passed: false,
                gap,
                evidence,
            },
            Verdict::Unconfirmed { summary, evidence } => CandidateCheck {
                passed: false,
                gap: summary,
                evidence,
            },
        })
    }
}

/// How many times the checks are made while the files keep changing under
/// them before the claim is turned down.
const STEADY_ATTEMPTS: usize = 3;

type Hashes = [(String, rein_text::ContentHash)];

/// The checked files whose text was not the same before, during (in some
/// evidence) and after the checks, for the model and the user to read.
fn moved_files(before: &Hashes, after: &Hashes, evidence: &[Evidence]) -> String {
    let hash = |files: &Hashes, path: &str| files.iter().find(|(f, _)| f == path).map(|(_, h)| *h);
    let checked: std::collections::BTreeSet<&str> = before
        .iter()
        .chain(after)
        .map(|(p, _)| p.as_str())
        .collect();
    let moved: Vec<&str> = checked
        .into_iter()
        .filter(|p| {
            hash(before, p) != hash(after, p)
                || evidence
                    .iter()
                    .any(|e| hash(&e.files, p) != hash(before, p))
        })
        .collect();
    if moved.is_empty() {
        "the checked files".to_owned()
    } else {
        moved.join(", ")
    }
}

impl TestVerifier {
    /// Every acceptance check, once, on the current content (with a
    /// candidate's `layer` over it, for its runs).
    async fn check(&self, cx: &VerifyContext<'_>, layer: Option<&[(String, String)]>) -> Verdict {
        let mut evidence = Vec::new();
        let mut gaps = Vec::new();
        let mut unconfirmed = Vec::new();
        let mut passed = Vec::new();
        let mut target_failed = false;
        // What would make the runs lie; the files they loaded.
        let mut distrust = Vec::new();
        let mut loaded: Vec<(String, Role)> = Vec::new();
        for check in &cx.task.acceptance {
            match check {
                Acceptance::TestPasses { path, name } => {
                    distrust.extend(
                        tricks::shadows(cx.workspace, self.test_command.as_ref(), path).await,
                    );
                    match self.run_test(cx, path, name, &mut loaded, layer).await {
                        Ok((e, TestRun::Passed)) => {
                            passed.push(format!("`{name}` passes"));
                            evidence.push(e);
                        }
                        Ok((e, TestRun::Gap(gap))) => {
                            target_failed = true;
                            gaps.push(gap);
                            evidence.push(e);
                        }
                        Ok((e, TestRun::Unconfirmed(why))) => {
                            unconfirmed.push(why);
                            evidence.push(e);
                        }
                        Ok((e, TestRun::Distrusted(why))) => {
                            target_failed = true;
                            distrust.extend(why);
                            evidence.push(e);
                        }
                        Err(gap) => {
                            target_failed = true;
                            gaps.push(gap);
                        }
                    }
                }
                Acceptance::AssertionsUnchanged { path, name } => {
                    if let Some(gap) = self.test_changed(cx, path, name).await {
                        gaps.push(gap);
                    }
                }
                Acceptance::EditsWithin { globs } => {
                    let mut set = GlobSetBuilder::new();
                    let mut bad = Vec::new();
                    for g in globs {
                        match Glob::new(g) {
                            Ok(glob) => {
                                set.add(glob);
                            }
                            Err(_) => bad.push(g.as_str()),
                        }
                    }
                    // A check that cannot be made is not passed.
                    if !bad.is_empty() {
                        gaps.push(format!(
                            "the allowed paths cannot be checked: {} is not a valid glob",
                            bad.join(", ")
                        ));
                    } else if let Ok(set) = set.build() {
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
                // The target still fails: the claim is turned down already,
                // and a run of the whole scope would only double the wait
                // (and, for a small model that claims often, the cost).
                Acceptance::NoRegressions if target_failed => {}
                // A diagnostic's checks are the DiagnosticVerifier's: never
                // passed by a verifier that cannot make them.
                Acceptance::DiagnosticGone { .. }
                | Acceptance::NoNewProblems
                | Acceptance::NotSilenced => {
                    let why = "this task's checks need the checker that reported its diagnostic (the diagnostic verifier), not the test verifier";
                    if !unconfirmed.iter().any(|u| u == why) {
                        unconfirmed.push(why.to_owned());
                    }
                }
                Acceptance::NoRegressions => {
                    match self.regressions(cx, layer).await {
                        Ok((e, None)) => {
                            passed.push("no regressions".to_owned());
                            evidence.push(e);
                        }
                        Ok((e, Some(gap))) => {
                            gaps.push(gap);
                            evidence.push(e);
                        }
                        // No baseline (no test command at the start): nothing
                        // to compare with; the target test's check stands.
                        Err(()) => {}
                    }
                    if let Some((e, gap)) = self.examples_after(cx, layer).await {
                        match gap {
                            None => passed.push("the documented examples still hold".to_owned()),
                            Some(gap) => gaps.push(gap),
                        }
                        evidence.extend(e);
                    }
                }
            }
        }
        if has_target(cx.task) {
            let first: Vec<(String, Role)> = cx
                .touched
                .iter()
                .map(|p| (p.clone(), Role::Project))
                .chain(loaded)
                .collect();
            let now = tricks::scan(cx.workspace, &first).await;
            let new = tricks::new_findings(now, self.baseline.machinery.as_deref(), cx.touched);
            if !new.is_empty() {
                distrust.push(format!(
                    "since the task began, the test machinery was changed: {}",
                    tricks::describe(&new).join("; ")
                ));
            }
        }
        distrust.dedup();
        // A run that may lie ends the task unverified, naming why, before
        // anything else: not even a gap goes back to the model, which may
        // have made the trick. Then what the model can still fix; then what
        // only the user can settle (how the tests report).
        if !distrust.is_empty() {
            Verdict::Unconfirmed {
                summary: format!(
                    "Rein does not trust this test run: {}; look at these before relying on the change",
                    distrust.join("; ")
                ),
                evidence,
            }
        } else if !gaps.is_empty() {
            Verdict::Gap {
                gap: gaps.join("; "),
                evidence,
            }
        } else if !unconfirmed.is_empty() {
            Verdict::Unconfirmed {
                summary: unconfirmed.join("; "),
                evidence,
            }
        } else {
            Verdict::Verified {
                summary: format!("fixed: {}", passed.join(", ")),
                evidence,
            }
        }
    }
}

/// A log's path as evidence shows it: workspace-relative when it is
/// inside the workspace (the model reads it so, and a shared trace should
/// not carry the user's home directory), else as it is.
fn shown_path(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

impl TestVerifier {
    /// Runs the baseline's scope again: a test failing now that did not
    /// fail before (other than the target) is a regression.
    async fn regressions(
        &self,
        cx: &VerifyContext<'_>,
        layer: Option<&[(String, String)]>,
    ) -> Result<(Evidence, Option<String>), ()> {
        let before = self.baseline.suite.as_ref().ok_or(())?;
        if cx.workspace.flush_to_disk().await.is_err() {
            return Err(());
        }
        let at = Where {
            workspace: cx.workspace,
            exec: cx.exec,
            artifacts_dir: &cx.artifacts_dir,
            cancel: &cx.cancel,
            time: cx.time,
            layer,
        };
        let (now, _) = self
            .run_suite(&at, before.scope.as_deref(), "verify-suite")
            .await
            .ok_or(())?;
        let target = target_names(cx.task);
        let is_target = |f: &String| target.iter().any(|t| f.contains(t.as_str()));
        let new_failures: Vec<&String> = now
            .failures
            .iter()
            .filter(|f| !before.failures.contains(f) && !is_target(f))
            .collect();
        let broke_silently = before.exit_code == Some(0)
            && now.exit_code != Some(0)
            && now.failures.iter().all(is_target);
        let scope = before
            .scope
            .clone()
            .unwrap_or_else(|| "the test suite".into());
        let files = self.touched_hashes(cx).await;
        let evidence = Evidence {
            check: format!("no_regressions {scope}"),
            command: now.command.clone(),
            exit_code: now.exit_code,
            duration_ms: now.duration_ms,
            files,
            log_path: now.log_path.clone(),
            failures: now.failures.clone(),
            sandbox: cx.exec.confinement().describe(),
        };
        let gap = if !new_failures.is_empty() {
            Some(format!(
                "tests that passed before now fail: {}",
                new_failures
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        } else if broke_silently {
            Some(format!("{scope} passed before the task and fails now"))
        } else {
            None
        };
        Ok((evidence, gap))
    }

    /// Whether the target test is no longer what it was at the start: its
    /// whole text (inputs and skips weaken a test as much as assertions),
    /// or, for a baseline from before that was recorded, its assertions.
    async fn test_changed(&self, cx: &VerifyContext<'_>, path: &str, name: &str) -> Option<String> {
        let key = (path.to_owned(), name.to_owned());
        let recorded = |list: &[((String, String), Vec<String>)]| {
            list.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone())
        };
        let (before, now) = match recorded(&self.baseline.tests) {
            Some(lines) => (lines, test_now(cx.workspace, path, name).await),
            None => (
                // The test could not be read at the start: nothing to compare.
                recorded(&self.baseline.assertions)?,
                assertions_now(cx.workspace, path, name).await,
            ),
        };
        (now.as_ref() != Some(&before)).then(|| format!(
            "`{name}` in {path} was changed (its assertions, inputs or decorators); restore it and fix the code under test instead"
        ))
    }

    /// The text the checks are about: each file the task changed, and the
    /// target tests' own files (a test the user edits meanwhile changes the
    /// verdict as much as the code does).
    async fn touched_hashes(
        &self,
        cx: &VerifyContext<'_>,
    ) -> Vec<(String, rein_text::ContentHash)> {
        let tests = cx.task.acceptance.iter().filter_map(|a| match a {
            Acceptance::TestPasses { path, .. } => Some(path),
            _ => None,
        });
        let mut paths: Vec<&String> = cx.touched.iter().chain(tests).collect();
        paths.sort();
        paths.dedup();
        let mut files = Vec::new();
        for path in paths {
            if let Ok(file) = cx.workspace.read_file(path).await {
                files.push((path.clone(), file.version.hash));
            }
        }
        files
    }

    /// Runs the target test; returns the evidence and whether the run
    /// shows the test passing (for a failure, with the telling lines of
    /// its output).
    async fn run_test(
        &self,
        cx: &VerifyContext<'_>,
        path: &str,
        name: &str,
        loaded: &mut Vec<(String, Role)>,
        layer: Option<&[(String, String)]>,
    ) -> Result<(Evidence, TestRun), String> {
        if self.test_command.is_none() {
            return Err(NO_COMMAND.into());
        }
        if let Err(e) = cx.workspace.flush_to_disk().await {
            return Err(format!(
                "the edited files could not be saved to disk to run the test: {e}"
            ));
        }
        let target = TestTarget::check(&test_target(path, name), cx.workspace)
            .await
            .map_err(|e| format!("the target test cannot be run: {e}"))?;
        let Some(planned) = self.planned(target.as_ref()) else {
            return Err(NO_COMMAND.into());
        };
        let limit = CommandLimit::new(None, self.timeout, cx.time.left());
        if limit.by == LimitedBy::TimeBudget && limit.timeout.is_zero() {
            return Err(format!(
                "the time budget ({}) ran out before Rein could run `{name}`",
                cx.time.label()
            ));
        }
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        let label = if layer.is_some() {
            "candidate"
        } else {
            "verify"
        };
        let log_path: PathBuf = cx.artifacts_dir.join(format!("{label}-{n}.log"));
        let command = planned.shown;
        let spec = test_spec(
            cx.workspace.root(),
            planned.run,
            log_path.clone(),
            limit.timeout,
            planned.report,
            layer,
        );
        let result = cx
            .exec
            .run(spec, cx.cancel.clone())
            .await
            .map_err(|e| format!("the test could not be run: {e}"))?;
        let files = self.touched_hashes(cx).await;
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
            log_path: shown_path(cx.workspace.root(), &log_path),
            failures: result.failures.clone(),
            sandbox: cx.exec.confinement().describe(),
        };
        let still_fails = || {
            TestRun::Gap(format!(
                "`{name}` still fails (exit {}):\n{}\nfull log: {}",
                exit_code.unwrap_or(-1),
                telling_lines(&result.tail, cx.workspace.root()),
                evidence.log_path
            ))
        };
        let run = if result.timed_out && limit.by == LimitedBy::TimeBudget {
            TestRun::Gap(format!(
                "`{}` was killed when the task's time ran out, so `{name}` is not shown to pass\nfull log: {}",
                evidence.command, evidence.log_path
            ))
        } else if let Some(private) = &result.private_report {
            let target = reporter::Target {
                path,
                name,
                defined_here: test_now(cx.workspace, path, name).await.is_some(),
            };
            let (reading, report) = reporter::read(private, result.exit_code, target);
            if let Some(report) = &report {
                loaded.extend(tricks::loaded(report));
            }
            by_report(reading, &result, path, name, &evidence, still_fails)
        } else if exit_code != Some(0) {
            still_fails()
        } else {
            passed_by_name(&result, path, name, &evidence)
        };
        Ok((evidence, run))
    }
}

const NO_COMMAND: &str =
    "Rein cannot run the tests to check this (no test command detected or configured)";

/// What a run of the target test shows.
enum TestRun {
    /// The runner named the target among the tests that passed.
    Passed,
    /// Not passing: what the model must still fix.
    Gap(String),
    /// The command exited 0 but its output does not show the target
    /// passing: only the user can settle it (how the tests report).
    Unconfirmed(String),
    /// The run cannot be taken at its word (each reason names the trick):
    /// the claim ends unverified whatever else the checks say.
    Distrusted(Vec<String>),
}

/// What a run through Rein's own runner shows: its report decides, and a
/// run the report distrusts, or whose output claims a pass the report
/// never saw, is not taken at its word.
fn by_report(
    reading: Reading,
    result: &CommandResult,
    path: &str,
    name: &str,
    evidence: &Evidence,
    still_fails: impl Fn() -> TestRun,
) -> TestRun {
    let log = &evidence.log_path;
    match reading {
        Reading::Distrusted(why) => TestRun::Distrusted(why),
        _ if evidence.exit_code != Some(0) => still_fails(),
        Reading::Passed => TestRun::Passed,
        Reading::NotPassed(NotPassed::Skipped) => {
            let tally = &result.tally;
            let counts = if tally.known() {
                format!(" ({} skipped, {} passed)", tally.skipped, tally.passed)
            } else {
                String::new()
            };
            TestRun::Gap(format!(
                "`{name}` did not pass, it was skipped{counts}: a skipped, ignored or expected-to-fail test proves nothing; remove the skip and fix the code under test\nfull log: {log}"
            ))
        }
        Reading::NotPassed(NotPassed::NotRun) if output_shows_passing(result, path, name) => {
            TestRun::Distrusted(vec![format!(
                "the run's output says `{name}` passed, but Rein's reporter never saw it run: that output was not the test runner's"
            )])
        }
        Reading::NotPassed(NotPassed::NotRun) => TestRun::Gap(format!(
            "`{name}` did not run: `{}` exited 0 but Rein's reporter saw no test by that name, so the name no longer matches a test\nfull log: {log}",
            evidence.command
        )),
        Reading::NotPassed(NotPassed::Failed) => still_fails(),
    }
}

/// The runners' flags that name each test, for the user to add.
const NAMING_FLAGS: &str = "pytest -v or -rA, python -m unittest -v, cargo test, go test -v, jest --verbose, vitest --reporter=verbose";

/// Exit code 0 is not "the test passes": a filter that found nothing, a
/// skipped test, a filter that ran other tests, or a wrapper whose output
/// Rein cannot read all exit 0. Only the target's own name among the
/// passes shows it passing.
fn passed_by_name(result: &CommandResult, path: &str, name: &str, evidence: &Evidence) -> TestRun {
    let (tally, command, log) = (&result.tally, &evidence.command, &evidence.log_path);
    if shows_passing(result, path, name) {
        return TestRun::Passed;
    }
    let named = result.passes.includes(path, name);
    if named && !tally.known() {
        return TestRun::Unconfirmed(format!(
            "`{command}` exited 0 and named `{name}` as passed, but printed no closing summary of the run (it may have been cut short), so Rein could not confirm that `{name}` passed\nfull log: {log}"
        ));
    }
    if tally.known() && tally.passed == 0 {
        return TestRun::Gap(if tally.skipped > 0 {
            format!(
                "`{name}` did not pass, it was skipped ({} skipped, 0 passed): a skipped, ignored or expected-to-fail test proves nothing; remove the skip and fix the code under test\nfull log: {log}",
                tally.skipped
            )
        } else {
            format!(
                "`{name}` did not run: `{command}` exited 0 but ran no test (0 passed), so the name no longer matches a test\nfull log: {log}"
            )
        });
    }
    let names: Vec<&str> = result.passes.names().collect();
    TestRun::Unconfirmed(if !names.is_empty() {
        let shown: Vec<String> = names.iter().take(5).map(|n| format!("`{n}`")).collect();
        let more = if names.len() > shown.len() {
            ", …"
        } else {
            ""
        };
        format!(
            "`{command}` exited 0, but `{name}` is not among the {} test(s) it reports as passed ({}{more}), so Rein could not confirm that `{name}` passed; check that the test command runs the test it is given (its `{{target}}`)\nfull log: {log}",
            names.len(),
            shown.join(", ")
        )
    } else if tally.known() {
        format!(
            "`{command}` exited 0 and reported {} passed, but not which, so Rein could not confirm that `{name}` passed; make the test command name each test ({NAMING_FLAGS})\nfull log: {log}",
            tally.passed
        )
    } else {
        format!(
            "`{command}` exited 0, but Rein cannot read which tests its output reports as passed, so it could not confirm that `{name}` passed; make the test command name each test ({NAMING_FLAGS})\nfull log: {log}"
        )
    })
}

/// Whether a run shows the test `name` of `path` passing: the runner named
/// it among the passes, and its closing summary counts passes. The summary
/// too: a run cut short after a pass line (or code under test printing
/// one, then exiting 0) has none, and a summary of 0 passed outweighs the
/// line.
fn shows_passing(result: &CommandResult, path: &str, name: &str) -> bool {
    // Rein's own runner: its report, not the output, says.
    if let Some(private) = &result.private_report {
        // Where the test is defined is not asked here: a run before the
        // task may pass on the word of the report alone.
        let target = reporter::Target {
            path,
            name,
            defined_here: false,
        };
        // Another test of the run may fail (the run exits 1): the target's
        // own line in the report decides, the report's consistency with
        // the exit code is `reporter::read`'s to check.
        return reporter::read(private, result.exit_code, target).0 == Reading::Passed;
    }
    output_shows_passing(result, path, name)
}

/// [`shows_passing`] by the output alone.
fn output_shows_passing(result: &CommandResult, path: &str, name: &str) -> bool {
    result.passes.includes(path, name) && result.tally.known() && result.tally.passed > 0
}

/// The names a runner may print for the task's target test.
fn target_names(task: &TaskSpec) -> Vec<String> {
    task.acceptance
        .iter()
        .filter_map(|a| match a {
            Acceptance::TestPasses { name, .. } => {
                name.rsplit(['.', ':']).next().map(str::to_owned)
            }
            _ => None,
        })
        .collect()
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

/// The lines of a failing run that say why: where it failed (the
/// innermost traceback frames in the project's own files, with the lines
/// they quote: a `SyntaxError` names its file and line only there), then
/// the errors and assertions. Paths are shown relative to the project, as
/// the tools take them.
fn telling_lines(tail: &[String], root: &Path) -> String {
    let prefix = format!("{}/", root.display());
    let tail: Vec<String> = tail.iter().map(|l| l.replace(&prefix, "")).collect();
    let frames = project_frames(&tail, 2);
    let says_why = |l: &str| {
        let l = l.to_ascii_lowercase();
        l.contains("error")
            || l.contains("assert")
            || l.contains("expected")
            || l.contains("panicked")
    };
    let telling: Vec<&str> = tail
        .iter()
        .map(|l| l.trim())
        .filter(|l| says_why(l) && !frames.iter().any(|f| f.trim() == *l))
        .collect();
    let mut shown: Vec<&str> = frames.iter().map(String::as_str).collect();
    shown.extend(telling.iter().skip(telling.len().saturating_sub(4)));
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

/// The last `n` distinct Python traceback frames in the project's files (a
/// relative path: the standard library's are absolute or `<frozen …>`),
/// each with the lines it quotes, innermost last.
fn project_frames(tail: &[String], n: usize) -> Vec<String> {
    let mut frames: Vec<Vec<String>> = Vec::new();
    let mut i = 0;
    while i < tail.len() {
        let line = tail[i].trim_end();
        let text = line.trim_start();
        let indent = line.len() - text.len();
        let in_project = text
            .strip_prefix("File \"")
            .and_then(|rest| rest.split_once('"'))
            .is_some_and(|(path, _)| !path.starts_with('/') && !path.starts_with('<'));
        i += 1;
        if !in_project {
            continue;
        }
        let mut frame = vec![line.to_owned()];
        // The quoted source and its markers, indented under the frame.
        while i < tail.len() && frame.len() < 4 {
            let next = tail[i].trim_end();
            let next_indent = next.len() - next.trim_start().len();
            if next.trim().is_empty() || next_indent <= indent {
                break;
            }
            frame.push(next.to_owned());
            i += 1;
        }
        frames.push(frame);
    }
    let mut last: Vec<Vec<String>> = Vec::new();
    for frame in frames.into_iter().rev() {
        if last.len() == n {
            break;
        }
        if !last.contains(&frame) {
            last.push(frame);
        }
    }
    last.into_iter().rev().flatten().collect()
}
