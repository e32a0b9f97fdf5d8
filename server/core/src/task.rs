//! A task: what the user asked for, how success is judged, and where it
//! stands. States and their names are part of the product's contract
//! (DESIGN.md §4: `rein/taskStatus.state`).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::diagnostics::Diagnostic;

/// A task id: short, unique enough per workspace, safe in file names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskId(pub String);

impl TaskId {
    /// A new id from the current time and a random suffix: `t-20261130-052101-3f9a`.
    pub fn generate() -> Self {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let secs = now.as_secs();
        let (days, rem) = (secs / 86_400, secs % 86_400);
        let (y, m, d) = civil_from_days(days as i64);
        let suffix = (now.subsec_nanos() ^ std::process::id().rotate_left(16)) & 0xffff;
        Self(format!(
            "t-{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{suffix:04x}",
            rem / 3600,
            (rem % 3600) / 60,
            rem % 60
        ))
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
/// (Howard Hinnant's algorithm; avoids a date crate for one id format.)
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// What kind of work, which decides the acceptance checks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskKind {
    /// Make one test pass: `path` is workspace-relative, `name` the test's
    /// (qualified) name as the test finder reports it.
    FixTest { path: String, name: String },
    /// Fix a diagnostic an editor shows (a type error, a lint), shown
    /// fixed by the checker that reports it (`crate::diagnostics`).
    FixDiagnostic { diagnostic: Diagnostic },
    /// Anything else, in the user's words.
    Instruction,
}

/// `text`'s first line, at most 60 characters ("…" where cut).
fn brief(text: &str) -> String {
    const MAX: usize = 60;
    let text = text.trim();
    let first = text.lines().next().unwrap_or_default().trim_end();
    if first.len() == text.len() && first.chars().count() <= MAX {
        return first.to_owned();
    }
    let mut short: String = first.chars().take(MAX - 1).collect();
    short.push('…');
    short
}

/// A check the verifier runs before a task may be called done.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "check", rename_all = "snake_case")]
pub enum Acceptance {
    /// This test passes on the current content.
    TestPasses { path: String, name: String },
    /// The tests that passed before the task still pass.
    NoRegressions,
    /// This test is unchanged: its whole text (assertions, inputs,
    /// decorators). Named for what it first checked; kept for the tasks
    /// already stored.
    AssertionsUnchanged { path: String, name: String },
    /// Every edit stayed inside these globs.
    EditsWithin { globs: Vec<String> },
    /// The checker no longer reports this diagnostic, on the current text.
    DiagnosticGone { diagnostic: Diagnostic },
    /// The checker reports no new problem in the files the task changed.
    NoNewProblems,
    /// Nothing was silenced: no suppression comment or attribute added,
    /// the checker's configuration unchanged.
    NotSilenced,
}

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSpec {
    pub id: TaskId,
    pub kind: TaskKind,
    /// The goal, in a sentence or two.
    pub goal: String,
    /// Things that must stay true ("do not change the public interface").
    pub constraints: Vec<String>,
    pub acceptance: Vec<Acceptance>,
}

impl TaskSpec {
    /// A short name for the task, for a status bar: "Fix
    /// TestCart.test_total", or the first line of the user's words, at most
    /// 60 characters.
    pub fn title(&self) -> String {
        match &self.kind {
            TaskKind::FixTest { name, .. } => brief(&format!("Fix {name}")),
            TaskKind::FixDiagnostic { diagnostic } => brief(&format!(
                "Fix {} in {}",
                diagnostic.severity.word(),
                diagnostic.place()
            )),
            TaskKind::Instruction => brief(&self.goal),
        }
    }

    /// A fix-test task with the acceptance checks that make "fixed" mean
    /// something: the test passes, nothing that passed broke, and the test
    /// itself was not weakened.
    pub fn fix_test(id: TaskId, path: &str, name: &str) -> Self {
        Self {
            id,
            kind: TaskKind::FixTest {
                path: path.to_owned(),
                name: name.to_owned(),
            },
            goal: format!("Make the failing test `{name}` in `{path}` pass."),
            constraints: vec![
                format!(
                    "Do not change `{name}` itself (its assertions, inputs or decorators): fix the code under test, not the test."
                ),
                "Do not break tests that passed before.".to_owned(),
                "Keep the change minimal and in the project's style.".to_owned(),
            ],
            acceptance: vec![
                Acceptance::TestPasses {
                    path: path.to_owned(),
                    name: name.to_owned(),
                },
                Acceptance::AssertionsUnchanged {
                    path: path.to_owned(),
                    name: name.to_owned(),
                },
                Acceptance::NoRegressions,
            ],
        }
    }

    /// The task as the `allowTestEdits` setting has it: when the user lets
    /// it change the test itself, the test's text is no longer a constraint
    /// or a check; it must still pass, and nothing else may break.
    pub fn with_test_edits(mut self, allowed: bool) -> Self {
        if !allowed {
            return self;
        }
        if let TaskKind::FixTest { name, .. } = &self.kind {
            let allowed = format!(
                "You may change `{name}` itself if it is wrong (the user allows it); say what you changed and why."
            );
            let protected = format!("Do not change `{name}` itself");
            for constraint in &mut self.constraints {
                if constraint.starts_with(&protected) {
                    *constraint = allowed.clone();
                }
            }
            self.acceptance
                .retain(|a| !matches!(a, Acceptance::AssertionsUnchanged { .. }));
        }
        self
    }

    /// A fix-diagnostic task: the checker that reports `diagnostic` must
    /// stop reporting it, report nothing new in the files changed, and see
    /// nothing silenced; the tests that passed must still pass. The goal
    /// quotes the diagnostic (source, code, message, place). Give it a
    /// diagnostic that went through [`Diagnostic::cleaned`].
    pub fn fix_diagnostic(id: TaskId, diagnostic: Diagnostic) -> Self {
        let what = match diagnostic.severity {
            crate::diagnostics::Severity::Error => "error",
            _ => "problem",
        };
        let mut goal = format!(
            "Fix the {what} reported at `{}` line {} ({}):\n",
            diagnostic.path,
            diagnostic.line(),
            diagnostic.label()
        );
        for line in diagnostic.message.lines() {
            goal.push_str("> ");
            goal.push_str(line);
            goal.push('\n');
        }
        Self {
            id,
            kind: TaskKind::FixDiagnostic {
                diagnostic: diagnostic.clone(),
            },
            goal: goal.trim_end().to_owned(),
            constraints: vec![
                "Fix the cause: do not silence the checker (no `# type: ignore`, `@ts-ignore`, `#[allow(...)]`, `noqa`, `eslint-disable` or `nolint`, no change to the checker's configuration).".to_owned(),
                "Do not introduce new errors, and do not break tests that passed before.".to_owned(),
                "Keep the change minimal and in the project's style.".to_owned(),
            ],
            acceptance: vec![
                Acceptance::DiagnosticGone { diagnostic },
                Acceptance::NoNewProblems,
                Acceptance::NotSilenced,
                Acceptance::NoRegressions,
            ],
        }
    }

    /// The task as the `allow_suppressions` setting has it: when the user
    /// lets a fix-diagnostic task silence the checker, silencing is no
    /// longer a constraint or a check.
    pub fn with_suppressions(mut self, allowed: bool) -> Self {
        if !allowed || !matches!(self.kind, TaskKind::FixDiagnostic { .. }) {
            return self;
        }
        if let Some(first) = self.constraints.first_mut() {
            *first = "Prefer fixing the cause; the user allows silencing the checker (a suppression comment) where fixing is not reasonable: say why.".to_owned();
        }
        self.acceptance
            .retain(|a| !matches!(a, Acceptance::NotSilenced));
        self
    }

    pub fn instruction(id: TaskId, instruction: &str) -> Self {
        Self {
            id,
            kind: TaskKind::Instruction,
            goal: instruction.trim().to_owned(),
            constraints: vec!["Keep changes minimal and in the project's style.".to_owned()],
            acceptance: Vec::new(),
        }
    }
}

/// Where a task stands: the shared protocol's (`rein-protocol`).
pub use rein_protocol::{TaskState, run_is_over};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_short() {
        let fix = TaskSpec::fix_test(TaskId("t".into()), "tests/t.py", "T.test_a");
        assert_eq!(fix.title(), "Fix T.test_a");
        let ask = |text: &str| TaskSpec::instruction(TaskId("t".into()), text).title();
        assert_eq!(ask("Rename total to sum"), "Rename total to sum");
        assert_eq!(ask("Rename total\nand its callers"), "Rename total…");
        assert_eq!(ask(&"é".repeat(80)).chars().count(), 60);
    }

    /// `allowTestEdits`: the test's text is no longer protected (nor
    /// checked), but it must still pass and nothing else may break.
    #[test]
    fn allowing_test_edits_drops_the_tests_protection_only() {
        let strict = TaskSpec::fix_test(TaskId("t-1".into()), "tests/t.py", "T.test_a");
        let allowed = strict.clone().with_test_edits(true);
        assert_eq!(
            allowed.acceptance,
            vec![
                Acceptance::TestPasses {
                    path: "tests/t.py".into(),
                    name: "T.test_a".into()
                },
                Acceptance::NoRegressions
            ]
        );
        assert_eq!(allowed.constraints.len(), strict.constraints.len());
        assert!(allowed.constraints[0].starts_with("You may change `T.test_a` itself"));
        assert_eq!(allowed.constraints[1..], strict.constraints[1..]);
        // An instruction has nothing to drop.
        let ask = TaskSpec::instruction(TaskId("t-2".into()), "explain");
        assert_eq!(ask.clone().with_test_edits(true), ask);
        assert_eq!(strict.clone().with_test_edits(false), strict);
    }

    #[test]
    fn a_fix_diagnostic_task_quotes_the_diagnostic_and_checks_the_checker() {
        use crate::diagnostics::{Position, Range, Severity};
        let diagnostic = Diagnostic {
            path: "app.py".into(),
            range: Range {
                start: Position { line: 6, character: 10 },
                end: Position { line: 6, character: 11 },
            },
            severity: Severity::Error,
            source: Some("mypy".into()),
            code: Some("arg-type".into()),
            message: "Argument 1 to \"greet\" has incompatible type \"int\"; expected \"str\"\nsecond line".into(),
        };
        let task = TaskSpec::fix_diagnostic(TaskId("t".into()), diagnostic.clone());
        assert_eq!(task.title(), "Fix error in app.py:7");
        expect_test::expect![[r#"
            Fix the error reported at `app.py` line 7 (error [arg-type] from mypy):
            > Argument 1 to "greet" has incompatible type "int"; expected "str"
            > second line"#]]
        .assert_eq(&task.goal);
        assert_eq!(
            task.acceptance,
            [
                Acceptance::DiagnosticGone { diagnostic },
                Acceptance::NoNewProblems,
                Acceptance::NotSilenced,
                Acceptance::NoRegressions
            ]
        );
        let allowed = task.clone().with_suppressions(true);
        assert!(!allowed.acceptance.contains(&Acceptance::NotSilenced));
        assert!(allowed.constraints[0].contains("the user allows silencing"));
        assert_eq!(task.clone().with_suppressions(false), task);
        // The record round-trips (a resumed task reads it back).
        let json = serde_json::to_string(&task).unwrap();
        assert_eq!(serde_json::from_str::<TaskSpec>(&json).unwrap(), task);
    }

    #[test]
    fn ids_are_dated_and_file_safe() {
        let id = TaskId::generate();
        assert!(id.0.starts_with("t-20"), "{id}");
        assert!(
            id.0.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "{id}"
        );
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
    }

    #[test]
    fn states_serialize_as_the_contract_names() {
        let names: Vec<String> = [
            TaskState::Queued,
            TaskState::Running,
            TaskState::WaitingUser,
            TaskState::Verifying,
            TaskState::Succeeded,
            TaskState::Failed,
            TaskState::Cancelled,
            TaskState::BudgetExhausted,
        ]
        .iter()
        .map(|s| serde_json::to_string(s).unwrap())
        .collect();
        assert_eq!(
            names.join(" "),
            r#""queued" "running" "waiting_user" "verifying" "succeeded" "failed" "cancelled" "budget_exhausted""#
        );
    }
}
