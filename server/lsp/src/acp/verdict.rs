//! How a task ended, in the words the panel shows: the verdict, its
//! evidence and the spend — at the end of a prompt, and again when a
//! loaded session replays it.

use rein_core::agent::Outcome;
use rein_core::budget::Spent;
use rein_core::ports::Evidence;
use rein_core::task::TaskState;

/// The task's verdict for the user, with the evidence behind it.
pub fn final_message(outcome: &Outcome, evidence: &[Evidence]) -> String {
    let evidence = if outcome.evidence.is_empty() {
        evidence
    } else {
        &outcome.evidence
    };
    verdict_message(outcome.state, &outcome.reason, evidence, &outcome.spent)
}

/// How a task ended, for the user: the verdict, its evidence, the spend
/// (also what a loaded session replays).
pub fn verdict_message(
    state: TaskState,
    reason: &str,
    evidence: &[Evidence],
    spent: &Spent,
) -> String {
    let head = match state {
        TaskState::Succeeded => "Done, verified by Rein",
        TaskState::Unverified => "Not verified",
        TaskState::Failed => "Not done",
        TaskState::BudgetExhausted => "Stopped: a budget ran out",
        TaskState::Cancelled => "Cancelled",
        TaskState::WaitingUser => "Waiting for you",
        _ => "Ended",
    };
    let mut text = format!("\n**{head}**: {reason}\n");
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
        "Spent: {} turns, {} tokens in, {} out, ${:.4}.\n",
        spent.turns, spent.usage.input_tokens, spent.usage.output_tokens, spent.cost_usd
    ));
    text
}
