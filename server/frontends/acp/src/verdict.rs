//! How a task ended, in the words the panel shows: the verdict, its
//! evidence and the spend — at the end of a prompt, and again when a
//! loaded session replays it.
//!
//! "Verified" is said only of a task whose acceptance checks Rein ran and
//! saw pass (a fix-test task). A request with no checks (an instruction, a
//! question) ends "succeeded" in the core's terms on the model's word
//! alone: here that is "not verified" with the files to review, or, when
//! nothing changed (a question answered), no verdict at all.

use rein_core::agent::Outcome;
use rein_core::budget::Spent;
use rein_core::ports::Evidence;
use rein_core::task::TaskState;

/// What a task's "done" rests on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checks {
    /// Acceptance checks: "done" is the verifier's word.
    Ran,
    /// None: the files it changed, if known (a replayed session's are not).
    None { changed: Option<Vec<String>> },
}

/// The task's verdict for the user, with the evidence behind it.
pub fn final_message(outcome: &Outcome, evidence: &[Evidence], checks: &Checks) -> String {
    let evidence = if outcome.evidence.is_empty() {
        evidence
    } else {
        &outcome.evidence
    };
    verdict_message(
        outcome.state,
        &outcome.reason,
        evidence,
        &outcome.spent,
        checks,
    )
}

/// How a task ended, for the user: the verdict, its evidence, the spend
/// (also what a loaded session replays).
pub fn verdict_message(
    state: TaskState,
    reason: &str,
    evidence: &[Evidence],
    spent: &Spent,
    checks: &Checks,
) -> String {
    let head = match (state, checks) {
        (TaskState::Succeeded, Checks::Ran) => {
            Some(format!("**Done, verified by Rein**: {reason}"))
        }
        (
            TaskState::Succeeded,
            Checks::None {
                changed: Some(changed),
            },
        ) if changed.is_empty() => {
            // A question answered: the answer is the message.
            None
        }
        (
            TaskState::Succeeded,
            Checks::None {
                changed: Some(changed),
            },
        ) => Some(format!(
            "**Done, not verified**: no test checks this request, so the changes are the model's word; review them: {}",
            changed.join(", ")
        )),
        (TaskState::Succeeded, Checks::None { changed: None }) => {
            Some("**Done, not verified**: no test checks this request".to_owned())
        }
        (TaskState::Unverified, _) => Some(format!("**Not verified**: {reason}")),
        (TaskState::Failed, _) => Some(format!("**Not done**: {reason}")),
        (TaskState::BudgetExhausted, _) => Some(format!("**Stopped: a budget ran out**: {reason}")),
        // The user's own no: not done, and no failure either.
        (TaskState::Cancelled, _)
            if reason.starts_with(rein_core::agent::REJECTED.trim_end_matches('.')) =>
        {
            Some(format!("**Not done**: {reason}"))
        }
        (TaskState::Cancelled, _) => Some(format!("**Cancelled**: {reason}")),
        (TaskState::WaitingUser, _) => Some(format!("**Waiting for you**: {reason}")),
        _ => Some(format!("**Ended**: {reason}")),
    };
    let mut text = String::from("\n");
    if let Some(head) = head {
        text.push_str(&head);
        text.push('\n');
    }
    for check in evidence {
        let exit = check
            .exit_code
            .map_or_else(|| "no exit code".to_owned(), |c| format!("exit {c}"));
        text.push_str(&format!(
            "- {}: `{}` → {exit}, log {}\n",
            check.check, check.command, check.log_path
        ));
    }
    text.push_str(&format!(
        "Spent: {} turn{}, {} tokens in, {} out, {}.\n",
        spent.turns,
        if spent.turns == 1 { "" } else { "s" },
        spent.usage.input_tokens,
        spent.usage.output_tokens,
        // Never "$0.00" for a cost Rein does not know.
        rein_app::format::cost(spent.cost_usd, spent.unpriced_calls)
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(state: TaskState, reason: &str, checks: Checks) -> String {
        verdict_message(state, reason, &[], &Spent::default(), &checks)
    }

    /// Issue 37 B: a question ended "Done, verified by Rein: done (this
    /// task has no acceptance checks…)". Only checks Rein ran verify.
    #[test]
    fn only_a_task_with_checks_is_verified() {
        let no_checks = "done (this task has no acceptance checks; the summary is the model's)";
        expect_test::expect![[r#"

            **Done, verified by Rein**: fixed: `test_total` passes
            Spent: 0 turns, 0 tokens in, 0 out, $0.00.
        "#]]
        .assert_eq(&said(
            TaskState::Succeeded,
            "fixed: `test_total` passes",
            Checks::Ran,
        ));
        expect_test::expect![[r#"

            Spent: 0 turns, 0 tokens in, 0 out, $0.00.
        "#]]
        .assert_eq(&said(
            TaskState::Succeeded,
            no_checks,
            Checks::None {
                changed: Some(vec![]),
            },
        ));
        expect_test::expect![[r#"

            **Done, not verified**: no test checks this request, so the changes are the model's word; review them: cart.py, README.md
            Spent: 0 turns, 0 tokens in, 0 out, $0.00.
        "#]]
        .assert_eq(&said(
            TaskState::Succeeded,
            no_checks,
            Checks::None {
                changed: Some(vec!["cart.py".into(), "README.md".into()]),
            },
        ));
        assert!(
            !said(
                TaskState::Succeeded,
                no_checks,
                Checks::None { changed: None }
            )
            .contains("verified by")
        );
    }
}
