//! Why a task stopped, typed: what a front end decides on (ACP's stop
//! reason, the editor's wording), where the reason is only for people.

use serde::{Deserialize, Serialize};

use crate::TaskState;

/// Why a task's run stopped. Each cause has one state; the reason text
/// beside it says the details.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopCause {
    /// The verifier saw the task's checks pass.
    Verified,
    /// The checks held before anything changed (a test that passes).
    AlreadyMet,
    /// A task without checks (a question, an instruction) that the model
    /// said it finished: its summary is the model's word, not a proof.
    Answered,
    /// The checks did not fail, but Rein could not see them pass.
    Unproven,
    /// The model refused the task.
    Refused,
    /// The model could not be reached or answered with an error.
    ModelFailed,
    /// The conversation no longer fits the model's window.
    ContextFull,
    /// The model repeated itself without progress, or the user turned
    /// its changes down until the loop guard stopped it.
    Stuck,
    /// The model's claims were turned down until it gave up.
    GaveUp,
    /// A budget (turns, tokens, cost, time) ran out.
    Budget,
    /// The user or the editor cancelled.
    Cancelled,
    /// The user turned the change down and the model had nothing else to
    /// offer: Rein stopped, as the user decided (not a failure).
    Rejected,
    /// The task waits for the user (an answer, a look at the files).
    WaitingForUser,
    /// Nobody answered a review in time: not a rejection; the task waits,
    /// and resuming it shows the review again.
    UnansweredReview,
    /// Rein itself failed (its task state could not be written).
    Internal,
}

impl StopCause {
    /// The state a task stopped for this cause is in.
    pub fn state(self) -> TaskState {
        match self {
            Self::Verified | Self::AlreadyMet | Self::Answered => TaskState::Succeeded,
            Self::Unproven => TaskState::Unverified,
            Self::Refused
            | Self::ModelFailed
            | Self::ContextFull
            | Self::Stuck
            | Self::GaveUp
            | Self::Internal => TaskState::Failed,
            Self::Budget => TaskState::BudgetExhausted,
            Self::Cancelled | Self::Rejected => TaskState::Cancelled,
            Self::WaitingForUser | Self::UnansweredReview => TaskState::WaitingUser,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_verified_cause_is_a_proof() {
        let proofs = [StopCause::Verified, StopCause::AlreadyMet];
        // `Answered` also ends `succeeded`: front ends must look at the
        // cause, not the state, before they say "verified".
        assert_eq!(StopCause::Answered.state(), TaskState::Succeeded);
        for cause in proofs {
            assert_eq!(cause.state(), TaskState::Succeeded);
        }
        assert_eq!(
            serde_json::to_value(StopCause::WaitingForUser).unwrap(),
            "waiting_for_user"
        );
        assert_eq!(
            serde_json::to_value(StopCause::UnansweredReview).unwrap(),
            "unanswered_review"
        );
    }
}
