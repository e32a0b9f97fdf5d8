//! Rein's progress note — what the model reads at the end of every turn's
//! context: the files changed, the edits the user turned down, the last
//! test run, why the last claim was not accepted — as an ACP `plan`, so
//! the panel shows where the task stands. For a task with acceptance
//! checks (a fix-test task) the first entry is the fix to find and the
//! last is always the check that decides: Rein runs the tests and sees
//! them pass. A request without checks (an instruction, a question) has
//! no such steps: its plan is only what happened, and a question that
//! changed nothing has none.

use agent_client_protocol::v1::schema::{Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus};
use rein_core::context::progress::Progress;

/// A line of a plan entry is one line: the first of a multi-line gap.
fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The plan for `progress`; `checks`: the task has acceptance checks.
/// `None` when there is nothing to show.
pub fn plan_of(progress: &Progress, checks: bool) -> Option<Plan> {
    use PlanEntryPriority::{High, Low, Medium};
    use PlanEntryStatus::{Completed, InProgress, Pending};
    let mut entries = Vec::new();
    if checks && progress.changed.is_empty() {
        entries.push(PlanEntry::new(
            "Find the cause and change the code",
            High,
            InProgress,
        ));
    }
    for (path, change) in &progress.changed {
        entries.push(PlanEntry::new(
            format!("Changed {path} ({change})"),
            Medium,
            Completed,
        ));
    }
    for rejected in &progress.rejected {
        entries.push(PlanEntry::new(
            format!("Turned down by you: {rejected}"),
            Low,
            Completed,
        ));
    }
    if let Some(test) = &progress.last_test {
        entries.push(PlanEntry::new(
            format!("Test run: {}", first_line(test)),
            Low,
            Completed,
        ));
    }
    if let Some(gap) = &progress.last_gap {
        entries.push(PlanEntry::new(
            format!("Not accepted yet: {}", first_line(gap)),
            High,
            InProgress,
        ));
    }
    if checks {
        entries.push(PlanEntry::new(
            "Rein runs the checks and sees them pass",
            High,
            Pending,
        ));
    }
    (!entries.is_empty()).then(|| Plan::new(entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(plan: &Plan) -> String {
        plan.entries
            .iter()
            .map(|e| {
                let json = serde_json::to_value(e).unwrap();
                format!(
                    "[{}] {} ({})\n",
                    json["status"].as_str().unwrap(),
                    e.content,
                    json["priority"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn a_fresh_task_plans_the_fix_then_the_check() {
        expect_test::expect![[r#"
            [in_progress] Find the cause and change the code (high)
            [pending] Rein runs the checks and sees them pass (high)
        "#]]
        .assert_eq(&lines(&plan_of(&Progress::default(), true).unwrap()));
    }

    #[test]
    fn the_plan_follows_the_progress_note() {
        let mut progress = Progress::default();
        progress.record_edit("cart.py", "v3".into());
        progress.rejected.push("cart.py: the rename".into());
        progress.last_test = Some("tests/test_cart.py: 1 failed\nmore".into());
        progress.last_gap =
            Some("\n`TestCart.test_total` still fails (exit 1):\nAssertionError".into());
        expect_test::expect![[r#"
            [completed] Changed cart.py (read → v3) (medium)
            [completed] Turned down by you: cart.py: the rename (low)
            [completed] Test run: tests/test_cart.py: 1 failed (low)
            [in_progress] Not accepted yet: `TestCart.test_total` still fails (exit 1): (high)
            [pending] Rein runs the checks and sees them pass (high)
        "#]]
        .assert_eq(&lines(&plan_of(&progress, true).unwrap()));
    }

    /// Issue 37 B: a question showed a fix-test plan ("Find the cause and
    /// change the code", "Rein runs the checks"). Without checks there are
    /// no such steps; a question that changed nothing has no plan.
    #[test]
    fn a_request_without_checks_plans_no_fix_and_no_check() {
        assert_eq!(plan_of(&Progress::default(), false), None);
        let mut progress = Progress::default();
        progress.record_edit("README.md", "v2".into());
        expect_test::expect![[r#"
            [completed] Changed README.md (read → v2) (medium)
        "#]]
        .assert_eq(&lines(&plan_of(&progress, false).unwrap()));
    }
}
