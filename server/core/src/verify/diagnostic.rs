//! The verifier of a fix-diagnostic task (`crate::diagnostics`): the
//! checker that reports the diagnostic is run before the first edit (it
//! must report it: otherwise its silence later proves nothing) and again
//! on the exact text at each claim. "Fixed" only when it no longer
//! reports the diagnostic (its line followed through the edits), reports
//! no new problem in the files the task changed, nothing was silenced
//! (suppression comments, the checker's configuration), and the tests
//! that passed before still pass (when a test command is known: the
//! [`TestVerifier`]'s own suite baseline and check).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::{Baseline, STEADY_ATTEMPTS, TestVerifier, moved_files, shown_path};
use crate::budget::TimeBudget;
use crate::diagnostics::checker::{Checker, Guarded, Part};
use crate::diagnostics::diagnostic::{Diagnostic, Reported, Severity};
use crate::diagnostics::matching::{self, LineMap};
use crate::diagnostics::run::{self, Ran, RunAt};
use crate::diagnostics::silencing;
use crate::exec::Exec;
use crate::ports::{BaselineOutput, Evidence, Verdict, Verifier, VerifyContext};
use crate::task::{Acceptance, TaskKind, TaskSpec};
use crate::testing::command::TestCommand;
use crate::workspace::Workspace;

/// How a fix-diagnostic task is checked (built by the front end's set-up).
#[derive(Clone, Debug)]
pub struct CheckSetup {
    /// From `diagnostics::checker_for`.
    pub checker: Checker,
    /// A checker run's own limit (within the task's time).
    pub timeout: Duration,
    /// The project's test command (configured or detected), for "the
    /// tests that passed before still pass".
    pub test_command: Option<TestCommand>,
    pub test_timeout: Duration,
    /// The user lets the task silence the checker (`allow_suppressions`).
    pub allow_suppressions: bool,
}

/// Why a fix-diagnostic task cannot be checked: the front end's set-up
/// fails with it, so the task ends before the model starts, saying why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct CannotCheck {
    pub reason: String,
}

fn cannot(reason: String) -> CannotCheck {
    CannotCheck { reason }
}

/// What the checks compare against, recorded before the first edit (kept
/// with the task's state in [`Baseline::diagnostics`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticBaseline {
    /// The checker the baseline ran.
    pub checker: Option<Checker>,
    /// The checker's report of the diagnostic.
    pub target: Option<Reported>,
    /// How many diagnostics alike (file, code, message) it reported.
    pub target_count: usize,
    /// The diagnostic's file as the checker saw it (to follow lines);
    /// `None` when too large to keep.
    pub file_text: Option<String>,
    /// Every diagnostic it reported, counted by `matching::key`.
    pub problems: BTreeMap<String, usize>,
    /// Suppressions by file and marker (files with none left out).
    pub suppressions: BTreeMap<String, BTreeMap<String, usize>>,
    /// The suppression scan stopped at its bounds.
    pub suppressions_partial: bool,
    /// The digests of the guarded files (`None`: absent).
    pub guarded: Vec<(String, Option<String>)>,
    /// The baseline run, as evidence.
    pub before: Option<Evidence>,
}

/// A file larger than this is not kept to follow lines: the counts do.
const MAX_KEPT_TEXT: usize = 1024 * 1024;
/// The suppression scan's bounds (as the test machinery's scan).
const MAX_LISTED: usize = 20_000;
const MAX_SCANNED: usize = 3_000;
const MAX_SCANNED_BYTES: usize = 512 * 1024;
/// How many diagnostics a message or evidence lists.
const SHOWN: usize = 8;

pub struct DiagnosticVerifier {
    setup: CheckSetup,
    baseline: DiagnosticBaseline,
    tests: TestVerifier,
    runs: AtomicU32,
    /// The baseline run for the model's first message (a new task only).
    first: Option<BaselineOutput>,
}

impl DiagnosticVerifier {
    /// Records the baseline before the task changes anything: the
    /// checker's run (it must report the diagnostic), the guarded files,
    /// the suppressions, and the test suite's run (with a test command).
    pub async fn prepare(
        task: &TaskSpec,
        workspace: &dyn Workspace,
        exec: &dyn Exec,
        setup: CheckSetup,
        artifacts_dir: &Path,
        cancel: &CancellationToken,
    ) -> Result<Self, CannotCheck> {
        let diagnostic = diagnostic_of(task)
            .ok_or_else(|| cannot("this task names no diagnostic to check".to_owned()))?;
        let checker = &setup.checker;
        workspace.flush_to_disk().await.map_err(|e| {
            cannot(format!(
                "the open files could not be saved to disk to run `{}`: {e}",
                checker.shown
            ))
        })?;
        let guarded = digests(workspace, &checker.guarded).await;
        let (suppressions, suppressions_partial) = scan(workspace, &diagnostic.path).await;
        let file_text = workspace
            .read_file(&diagnostic.path)
            .await
            .map_err(|e| cannot(format!("the diagnostic's file cannot be read: {e}")))?
            .text;
        let log_path = artifacts_dir.join("check-baseline.log");
        let ran = run::run(
            checker,
            RunAt {
                root: workspace.root(),
                exec,
                log_path: log_path.clone(),
                cancel,
                timeout: setup.timeout,
                time: TimeBudget::unlimited(),
            },
        )
        .await
        .map_err(cannot)?;
        let reported = ran.reported.clone().map_err(|why| {
            cannot(format!(
                "Rein cannot check this diagnostic: {why} (full log: {})",
                shown_path(workspace.root(), &log_path)
            ))
        })?;
        let in_file: Vec<&Reported> = reported
            .iter()
            .filter(|r| r.path == diagnostic.path)
            .collect();
        let Some(target) = matching::find(diagnostic, &reported).cloned() else {
            let listed = if in_file.is_empty() {
                "nothing in that file".to_owned()
            } else {
                listing(in_file.iter().copied())
            };
            return Err(cannot(format!(
                "`{}` does not report this {} on the current text (it reports {listed}): it may be fixed already, or {} sees the project otherwise than {}; Rein fixes only what it can see fixed",
                checker.shown,
                diagnostic.severity.word(),
                checker.tool.name(),
                diagnostic
                    .source
                    .as_deref()
                    .map_or("the editor".to_owned(), |s| format!("the editor's {s}"))
            )));
        };
        let target_count = reported
            .iter()
            .filter(|r| matching::key(r) == matching::key(&target))
            .count();
        let files = vec![(
            diagnostic.path.clone(),
            rein_text::ContentHash::of_str(&file_text),
        )];
        let before = evidence(
            format!(
                "diagnostic_reported {} ({})",
                place_of(&target),
                counts(&reported)
            ),
            checker,
            &ran,
            files,
            vec![target.to_string()],
            shown_path(workspace.root(), &log_path),
            exec.confinement().describe(),
        );
        let first = BaselineOutput {
            command: checker.shown.clone(),
            exit_code: ran.result.exit_code,
            failures: vec![target.to_string()],
            tail: in_file.iter().take(10).map(ToString::to_string).collect(),
            log_path: before.log_path.clone(),
        };
        let tests_task = tests_only(task);
        let tests = TestVerifier::prepare(
            &tests_task,
            workspace,
            exec,
            setup.test_command.clone(),
            setup.test_timeout,
            artifacts_dir,
            cancel,
        )
        .await;
        Ok(Self {
            baseline: DiagnosticBaseline {
                checker: Some(checker.clone()),
                target: Some(target),
                target_count,
                file_text: (file_text.len() <= MAX_KEPT_TEXT).then_some(file_text),
                problems: matching::tally(&reported, Severity::Hint),
                suppressions,
                suppressions_partial,
                guarded,
                before: Some(before),
            },
            setup,
            tests,
            runs: AtomicU32::new(0),
            first: Some(first),
        })
    }

    /// A verifier for a resumed task, comparing against its recorded
    /// baseline. `Err` when the task's state holds none.
    pub fn with_baseline(setup: CheckSetup, baseline: Baseline) -> Result<Self, CannotCheck> {
        let Some(diagnostics) = baseline.diagnostics.clone() else {
            return Err(cannot(
                "the task's state holds no checker baseline: Rein cannot tell whether the diagnostic is fixed".to_owned(),
            ));
        };
        let tests = TestVerifier::with_baseline(
            setup.test_command.clone(),
            setup.test_timeout,
            Baseline {
                suite: baseline.suite,
                ..Baseline::default()
            },
        );
        Ok(Self {
            setup,
            baseline: diagnostics,
            tests,
            runs: AtomicU32::new(0),
            first: None,
        })
    }

    pub fn baseline(&self) -> &DiagnosticBaseline {
        &self.baseline
    }
}

/// The task with only the test suite's check, for the [`TestVerifier`].
fn tests_only(task: &TaskSpec) -> TaskSpec {
    TaskSpec {
        acceptance: task
            .acceptance
            .iter()
            .filter(|a| matches!(a, Acceptance::NoRegressions))
            .cloned()
            .collect(),
        ..task.clone()
    }
}

fn diagnostic_of(task: &TaskSpec) -> Option<&Diagnostic> {
    match &task.kind {
        TaskKind::FixDiagnostic { diagnostic } => Some(diagnostic),
        _ => task.acceptance.iter().find_map(|a| match a {
            Acceptance::DiagnosticGone { diagnostic } => Some(diagnostic),
            _ => None,
        }),
    }
}

#[async_trait]
impl Verifier for DiagnosticVerifier {
    fn saved_state(&self) -> serde_json::Value {
        let saved = Baseline {
            suite: self.tests.baseline().suite.clone(),
            diagnostics: Some(self.baseline.clone()),
            ..Baseline::default()
        };
        serde_json::to_value(&saved).unwrap_or_default()
    }

    fn baseline_output(&self) -> Option<BaselineOutput> {
        self.first.clone()
    }

    async fn verify(&self, cx: VerifyContext<'_>) -> Verdict {
        // As for tests: a verdict about text that changed while the
        // checks ran is made again.
        let mut unsteady = (Vec::new(), String::new());
        for _ in 0..STEADY_ATTEMPTS {
            let before = hashes(&cx).await;
            let (verdict, checked) = self.check(&cx).await;
            let after = hashes(&cx).await;
            if after == before && checked.iter().all(|e| e.files == before) {
                return with_before(verdict, self.baseline.before.as_ref());
            }
            let moved = moved_files(&before, &after, &checked);
            tracing::info!(%moved, "files changed while the checker ran; checking again");
            unsteady = (checked, moved);
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

/// The baseline run first in the evidence: what was reported before.
fn with_before(verdict: Verdict, before: Option<&Evidence>) -> Verdict {
    let add = |mut evidence: Vec<Evidence>| {
        if let Some(before) = before {
            evidence.insert(0, before.clone());
        }
        evidence
    };
    match verdict {
        Verdict::Verified { summary, evidence } => Verdict::Verified {
            summary,
            evidence: add(evidence),
        },
        Verdict::Gap { gap, evidence } => Verdict::Gap {
            gap,
            evidence: add(evidence),
        },
        Verdict::Unconfirmed { summary, evidence } => Verdict::Unconfirmed {
            summary,
            evidence: add(evidence),
        },
    }
}

/// The files a verdict is about: those the task changed, and the
/// diagnostic's own.
fn checked_files(cx: &VerifyContext<'_>) -> Vec<String> {
    let mut files: Vec<String> = cx
        .touched
        .iter()
        .map(|p| p.trim_start_matches("./").to_owned())
        .chain(diagnostic_of(cx.task).map(|d| d.path.clone()))
        .collect();
    files.sort();
    files.dedup();
    files
}

async fn hashes(cx: &VerifyContext<'_>) -> Vec<(String, rein_text::ContentHash)> {
    let mut out = Vec::new();
    for path in checked_files(cx) {
        if let Ok(file) = cx.workspace.read_file(&path).await {
            out.push((path, file.version.hash));
        }
    }
    out
}

/// What one round of checks found.
#[derive(Default)]
struct Findings {
    /// Silencing: the claim ends unverified (unless allowed).
    distrust: Vec<String>,
    gaps: Vec<String>,
    unconfirmed: Vec<String>,
    passed: Vec<String>,
    /// Silencing the user allowed, said in the verdict.
    notes: Vec<String>,
    evidence: Vec<Evidence>,
}

impl DiagnosticVerifier {
    /// Every check once on the current content; the evidence of this
    /// round (not the baseline's).
    async fn check(&self, cx: &VerifyContext<'_>) -> (Verdict, Vec<Evidence>) {
        let mut found = Findings::default();
        let Some(diagnostic) = diagnostic_of(cx.task) else {
            return (
                Verdict::Unconfirmed {
                    summary: "this task names no diagnostic to check".to_owned(),
                    evidence: Vec::new(),
                },
                Vec::new(),
            );
        };
        let wants = |a: &Acceptance| cx.task.acceptance.contains(a);
        let checker = &self.setup.checker;
        if self
            .baseline
            .checker
            .as_ref()
            .is_some_and(|b| b.command != checker.command)
        {
            found.unconfirmed.push(format!(
                "the checker is not the one the baseline ran (`{}` then), so the two runs cannot be compared",
                self.baseline.checker.as_ref().map_or("", |b| b.shown.as_str())
            ));
        }
        if let Err(e) = cx.workspace.flush_to_disk().await {
            found.gaps.push(format!(
                "the edited files could not be saved to disk to run the checker: {e}"
            ));
        } else {
            self.silencing(cx, &mut found, !wants(&Acceptance::NotSilenced))
                .await;
            self.run_checker(cx, diagnostic, &mut found).await;
        }
        // The tests only once the diagnostic is fixed and nothing is
        // silenced: a run of the suite would only double the wait.
        if wants(&Acceptance::NoRegressions) && found.gaps.is_empty() && found.distrust.is_empty() {
            let task = tests_only(cx.task);
            let tests = VerifyContext {
                task: &task,
                touched: cx.touched,
                workspace: cx.workspace,
                exec: cx.exec,
                artifacts_dir: cx.artifacts_dir.clone(),
                cancel: cx.cancel.clone(),
                time: cx.time,
            };
            match self.tests.verify(tests).await {
                Verdict::Verified { evidence, .. } => {
                    if !evidence.is_empty() {
                        found.passed.push("no regressions".to_owned());
                    }
                    found.evidence.extend(evidence);
                }
                Verdict::Gap { gap, evidence } => {
                    found.gaps.push(gap);
                    found.evidence.extend(evidence);
                }
                Verdict::Unconfirmed { summary, evidence } => {
                    found.unconfirmed.push(summary);
                    found.evidence.extend(evidence);
                }
            }
        }
        let evidence = found.evidence.clone();
        let verdict = if !found.distrust.is_empty() {
            Verdict::Unconfirmed {
                summary: format!(
                    "Rein does not take this as a fix: {}; the diagnostic was silenced, not fixed (set allow_suppressions to accept that)",
                    found.distrust.join("; ")
                ),
                evidence: found.evidence,
            }
        } else if !found.gaps.is_empty() {
            Verdict::Gap {
                gap: found.gaps.join("; "),
                evidence: found.evidence,
            }
        } else if !found.unconfirmed.is_empty() {
            Verdict::Unconfirmed {
                summary: found.unconfirmed.join("; "),
                evidence: found.evidence,
            }
        } else {
            let mut summary = format!("fixed: {}", found.passed.join(", "));
            if !found.notes.is_empty() {
                summary.push_str(&format!(
                    "; silenced, as allow_suppressions lets it: {}",
                    found.notes.join("; ")
                ));
            }
            Verdict::Verified {
                summary,
                evidence: found.evidence,
            }
        };
        (verdict, evidence)
    }

    /// The checker's configuration and the suppressions, against the
    /// baseline: what changed is silencing (a note when `allowed`).
    async fn silencing(&self, cx: &VerifyContext<'_>, found: &mut Findings, allowed: bool) {
        let mut silenced = Vec::new();
        let now = digests(cx.workspace, &self.setup.checker.guarded).await;
        for ((path, before), guarded) in self
            .baseline
            .guarded
            .iter()
            .zip(&self.setup.checker.guarded)
        {
            let after = now
                .iter()
                .find(|(p, _)| p == path)
                .and_then(|(_, d)| d.clone());
            if *before != after {
                let what = match (&guarded.part, before, &after) {
                    (_, None, Some(_)) => "was created".to_owned(),
                    (_, Some(_), None) => "was removed".to_owned(),
                    (Part::TomlTables(t), ..) => format!("changed its {}", tables(t)),
                    (Part::IniSections(s), ..) => format!("changed its [{s}…] sections"),
                    (Part::JsonKey(k), ..) => format!("changed its `{k}`"),
                    (Part::Whole, ..) => "was changed".to_owned(),
                };
                silenced.push(format!(
                    "{path} {what} (the {}'s configuration: it decides what is reported)",
                    self.setup.checker.tool.name()
                ));
            }
        }
        for path in checked_files(cx) {
            let Ok(file) = cx.workspace.read_file(&path).await else {
                continue;
            };
            let before = self.baseline.suppressions.get(&path);
            for (marker, count) in silencing::markers(&path, &file.text) {
                let had = before.and_then(|b| b.get(marker)).copied().unwrap_or(0);
                if count > had {
                    silenced.push(format!("`{marker}` was added in {path}"));
                }
            }
        }
        if allowed {
            found.notes.extend(silenced);
        } else {
            found.distrust.extend(silenced);
        }
    }

    /// Runs the checker: the diagnostic gone, nothing new.
    async fn run_checker(
        &self,
        cx: &VerifyContext<'_>,
        diagnostic: &Diagnostic,
        found: &mut Findings,
    ) {
        let checker = &self.setup.checker;
        let Ok(now) = cx.workspace.read_file(&diagnostic.path).await else {
            found.gaps.push(format!(
                "{} is gone: fix the {} in its file; removing or renaming the file is not a fix",
                diagnostic.path,
                diagnostic.severity.word()
            ));
            return;
        };
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        let log_path = cx.artifacts_dir.join(format!("check-{n}.log"));
        let ran = match run::run(
            checker,
            RunAt {
                root: cx.workspace.root(),
                exec: cx.exec,
                log_path: log_path.clone(),
                cancel: &cx.cancel,
                timeout: self.setup.timeout,
                time: cx.time,
            },
        )
        .await
        {
            Ok(ran) => ran,
            Err(why) => {
                found.unconfirmed.push(why);
                return;
            }
        };
        let log = shown_path(cx.workspace.root(), &log_path);
        let files = checked_files(cx);
        let hashes = hashes(cx).await;
        let sandbox = cx.exec.confinement().describe();
        let reported = match &ran.reported {
            Ok(reported) => reported,
            Err(why) => {
                found.evidence.push(evidence(
                    format!("diagnostic_gone {}", diagnostic.place()),
                    checker,
                    &ran,
                    hashes,
                    Vec::new(),
                    log.clone(),
                    sandbox,
                ));
                let why = format!("{why} (full log: {log})");
                if ran.result.timed_out && cx.time.left().is_zero() {
                    found.gaps.push(why);
                } else {
                    found.unconfirmed.push(why);
                }
                return;
            }
        };
        let in_files: Vec<&Reported> = reported
            .iter()
            .filter(|r| files.contains(&r.path))
            .collect();
        let mut check = format!("diagnostic_gone {}", diagnostic.place());
        match &self.baseline.target {
            None => found
                .unconfirmed
                .push("the baseline holds no report of the diagnostic to compare with".to_owned()),
            Some(target) => {
                check = format!(
                    "diagnostic_gone {} (after: {})",
                    place_of(target),
                    counts(reported)
                );
                // The text the checker ran on (the steady loop checks it
                // did not move): the diagnostic's line followed into it.
                let lines = self
                    .baseline
                    .file_text
                    .as_deref()
                    .map(|old| LineMap::new(old, &now.text));
                match matching::still_there(
                    target,
                    self.baseline.target_count,
                    reported,
                    lines.as_ref(),
                ) {
                    Some(still) => found.gaps.push(format!(
                        "`{}` still reports it: {still}\nfull log: {log}",
                        checker.shown
                    )),
                    None => found.passed.push(format!(
                        "`{}` no longer reports {}",
                        checker.shown,
                        describe(target)
                    )),
                }
                if cx.task.acceptance.contains(&Acceptance::NoNewProblems) {
                    // Fixing a warning by adding another is no fix; an
                    // error's fix may let warnings the error hid show.
                    let worst = target.severity.max(Severity::Error);
                    let new =
                        matching::new_problems(&self.baseline.problems, reported, &files, worst);
                    if new.is_empty() {
                        found.passed.push(format!(
                            "no new {} in {}",
                            if worst == Severity::Error {
                                "error"
                            } else {
                                "problem"
                            },
                            files.join(", ")
                        ));
                    } else {
                        found.gaps.push(format!(
                            "the change brings new problems that `{}` reports: {}",
                            checker.shown,
                            listing(new.into_iter())
                        ));
                    }
                }
            }
        }
        found.evidence.push(evidence(
            check,
            checker,
            &ran,
            hashes,
            in_files.iter().take(20).map(ToString::to_string).collect(),
            log,
            sandbox,
        ));
    }
}

/// Evidence of one checker run.
fn evidence(
    check: String,
    checker: &Checker,
    ran: &Ran,
    files: Vec<(String, rein_text::ContentHash)>,
    failures: Vec<String>,
    log_path: String,
    sandbox: String,
) -> Evidence {
    Evidence {
        check,
        command: checker.shown.clone(),
        exit_code: ran.result.exit_code,
        duration_ms: ran.result.duration.as_millis() as u64,
        files,
        log_path,
        failures,
        sandbox,
    }
}

fn place_of(r: &Reported) -> String {
    match &r.code {
        Some(code) => format!("{}:{} [{code}]", r.path, r.line),
        None => format!("{}:{}", r.path, r.line),
    }
}

/// "[arg-type] at app.py:7 (Argument 1 …)".
fn describe(r: &Reported) -> String {
    let code = r
        .code
        .as_deref()
        .map_or(String::new(), |c| format!("[{c}] "));
    format!("{code}at {}:{} ({})", r.path, r.line, r.headline())
}

/// "2 errors, 1 warning".
fn counts(reported: &[Reported]) -> String {
    let n = |s: Severity| reported.iter().filter(|r| r.severity == s).count();
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}, {}",
        plural(n(Severity::Error), "error"),
        plural(n(Severity::Warning), "warning")
    )
}

fn listing<'a>(reported: impl Iterator<Item = &'a Reported>) -> String {
    let all: Vec<String> = reported.map(ToString::to_string).collect();
    let mut shown: Vec<String> = all.iter().take(SHOWN).cloned().collect();
    if all.len() > SHOWN {
        shown.push(format!("and {} more", all.len() - SHOWN));
    }
    shown.join("; ")
}

fn tables(tables: &[String]) -> String {
    let shown: Vec<String> = tables.iter().map(|t| format!("[{t}]")).collect();
    shown.join(" or ")
}

/// The digest of each guarded file's part that counts.
async fn digests(workspace: &dyn Workspace, guarded: &[Guarded]) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for g in guarded {
        let text = workspace.read_file(&g.path).await.ok().map(|f| f.text);
        out.push((g.path.clone(), silencing::digest(text.as_deref(), &g.part)));
    }
    out
}

/// The suppressions in the workspace's source files, `first` first;
/// whether the scan stopped at its bounds.
async fn scan(
    workspace: &dyn Workspace,
    first: &str,
) -> (BTreeMap<String, BTreeMap<String, usize>>, bool) {
    let mut paths = vec![first.to_owned()];
    let mut partial = false;
    match workspace.list_files("", None, MAX_LISTED).await {
        Ok(listing) => {
            partial |= listing.truncated > 0;
            paths.extend(listing.paths.into_iter().filter(|p| p != first));
        }
        Err(_) => partial = true,
    }
    let mut found = BTreeMap::new();
    let mut scanned = 0;
    for path in paths {
        if !silencing::is_source(&path) {
            continue;
        }
        if scanned == MAX_SCANNED {
            partial = true;
            break;
        }
        scanned += 1;
        let Ok(file) = workspace.read_file(&path).await else {
            continue;
        };
        if file.text.len() > MAX_SCANNED_BYTES {
            continue;
        }
        let markers = silencing::markers(&path, &file.text);
        if !markers.is_empty() {
            found.insert(
                path,
                markers
                    .into_iter()
                    .map(|(m, n)| (m.to_owned(), n))
                    .collect(),
            );
        }
    }
    (found, partial)
}
