//! The progress layer: what has been done, what was verified, what is
//! open — kept as structured data and rendered as a short note at the end
//! of the context each turn, so it is the last thing the model reads.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::task::TaskSpec;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Each file the task changed: from the version it first edited to
    /// the latest.
    pub changed: BTreeMap<String, Change>,
    /// Edits the user rejected (path: what).
    pub rejected: Vec<String>,
    /// The latest test run: target and outcome.
    pub last_test: Option<String>,
    /// The latest verification gap, if a claim was refused.
    pub last_gap: Option<String>,
    /// Questions asked of the user and their answers.
    pub answers: Vec<(String, String)>,
}

/// A file's versions over the task: "v3 → v5".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "ChangeRepr")]
pub struct Change {
    /// Before the task's first edit ("read" when it is not known).
    pub from: String,
    /// After its latest.
    pub to: String,
}

/// How a [`Change`] is read: `{from, to}`, or the "v3 → v5" text a
/// checkpoint written by an older Rein holds.
#[derive(Deserialize)]
#[serde(untagged)]
enum ChangeRepr {
    Fields { from: String, to: String },
    Text(String),
}

impl From<ChangeRepr> for Change {
    fn from(repr: ChangeRepr) -> Self {
        match repr {
            ChangeRepr::Fields { from, to } => Change { from, to },
            ChangeRepr::Text(text) => match text.split_once(" → ") {
                Some((from, to)) => Change {
                    from: from.to_owned(),
                    to: to.to_owned(),
                },
                None => Change {
                    from: "read".to_owned(),
                    to: text,
                },
            },
        }
    }
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} → {}", self.from, self.to)
    }
}

impl Progress {
    /// An edit left `path` at version `to`: the file's first version in
    /// the task stays where it was.
    pub fn record_edit(&mut self, path: &str, to: String) {
        let from = self
            .changed
            .get(path)
            .map_or_else(|| "read".to_owned(), |c| c.from.clone());
        self.changed.insert(path.to_owned(), Change { from, to });
    }

    /// The note for this turn. Every `restate_every` turns it repeats the
    /// goal and constraints, which long tasks otherwise drift away from.
    pub fn render(&self, turn: u32, max_turns: u32, task: &TaskSpec, restate_every: u32) -> String {
        let mut out = format!("[Progress: turn {turn} of {max_turns}]");
        if self.changed.is_empty() {
            out.push_str(" No files changed yet.");
        } else {
            let files: Vec<String> = self
                .changed
                .iter()
                .map(|(p, v)| format!("{p} ({v})"))
                .collect();
            let _ = write!(out, " Changed: {}.", files.join(", "));
        }
        if !self.rejected.is_empty() {
            let _ = write!(out, " Rejected by the user: {}.", self.rejected.join("; "));
        }
        if let Some(test) = &self.last_test {
            let _ = write!(out, " Last test run: {test}.");
        }
        if let Some(gap) = &self.last_gap {
            let _ = write!(out, " Not accepted yet: {gap}");
        }
        for (q, a) in &self.answers {
            let _ = write!(out, " You asked \"{q}\"; the user answered \"{a}\".");
        }
        if restate_every > 0 && turn > 1 && turn.is_multiple_of(restate_every) {
            let _ = write!(out, "\nReminder, the goal: {}", task.goal);
            for c in &task.constraints {
                let _ = write!(out, "\n- {c}");
            }
        }
        let left = max_turns.saturating_sub(turn);
        if left <= 2 {
            let _ = write!(
                out,
                "\n{left} turn(s) left after this one: converge now, or explain what blocks you."
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::TaskId;

    #[test]
    fn renders_a_compact_note_and_restates_the_goal() {
        let task = TaskSpec::fix_test(TaskId("t-1".into()), "tests/test_cart.py", "test_total");
        let mut p = Progress::default();
        assert_eq!(
            p.render(1, 20, &task, 5),
            "[Progress: turn 1 of 20] No files changed yet."
        );
        p.changed.insert(
            "cart.py".into(),
            Change {
                from: "v3".into(),
                to: "v4".into(),
            },
        );
        p.last_test = Some("tests/test_cart.py::test_total failed (1 failing)".into());
        expect_test::expect![[r#"
            [Progress: turn 5 of 20] Changed: cart.py (v3 → v4). Last test run: tests/test_cart.py::test_total failed (1 failing).
            Reminder, the goal: Make the failing test `test_total` in `tests/test_cart.py` pass.
            - Do not change `test_total` itself (its assertions, inputs or decorators): fix the code under test, not the test.
            - Do not break tests that passed before.
            - Keep the change minimal and in the project's style."#]]
        .assert_eq(&p.render(5, 20, &task, 5));
        assert!(
            p.render(19, 20, &task, 0).ends_with(
                "1 turn(s) left after this one: converge now, or explain what blocks you."
            )
        );
    }
}

#[cfg(test)]
mod change_tests {
    use super::*;

    #[test]
    fn an_edit_keeps_the_files_first_version() {
        let mut p = Progress::default();
        p.record_edit("cart.py", "v4".into());
        p.record_edit("cart.py", "v6".into());
        assert_eq!(p.changed["cart.py"].to_string(), "read → v6");
    }

    #[test]
    fn a_change_written_as_text_by_an_older_rein_is_read() {
        let old: Progress = serde_json::from_str(
            r#"{"changed":{"cart.py":"v3 → v5","odd.py":"v2"},"rejected":[],"last_test":null,"last_gap":null,"answers":[]}"#,
        )
        .unwrap();
        assert_eq!(
            old.changed["cart.py"],
            Change {
                from: "v3".into(),
                to: "v5".into()
            }
        );
        assert_eq!(old.changed["odd.py"].to_string(), "read → v2");
        let again: Progress = serde_json::from_str(&serde_json::to_string(&old).unwrap()).unwrap();
        assert_eq!(again, old);
    }
}
