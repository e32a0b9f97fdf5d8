//! A task's state, as `rein/taskStatus`, the store, traces and
//! `rein run --json` spell it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Where a task stands. The snake_case names are the wire contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    Queued,
    Running,
    WaitingUser,
    Verifying,
    Succeeded,
    /// The checks did not fail, but Rein could not see the target pass
    /// (the runner's output names no test): the work is done, not proven.
    Unverified,
    Failed,
    Cancelled,
    BudgetExhausted,
}

/// A name that is no state.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a task state")]
pub struct UnknownState(pub String);

impl TaskState {
    pub const ALL: [TaskState; 9] = [
        Self::Queued,
        Self::Running,
        Self::WaitingUser,
        Self::Verifying,
        Self::Succeeded,
        Self::Unverified,
        Self::Failed,
        Self::Cancelled,
        Self::BudgetExhausted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::WaitingUser => "waiting_user",
            Self::Verifying => "verifying",
            Self::Succeeded => "succeeded",
            Self::Unverified => "unverified",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::BudgetExhausted => "budget_exhausted",
        }
    }

    /// The task is over: no more work happens, it cannot be resumed.
    /// `waiting_user` is not an end: the task goes on when the user says.
    pub fn is_end(self) -> bool {
        matches!(
            self,
            Self::Succeeded
                | Self::Unverified
                | Self::Failed
                | Self::Cancelled
                | Self::BudgetExhausted
        )
    }
}

/// Whether a status says the task's run is over for now: it ended, or it
/// paused until the user resumes it. A `waiting_user` status that says
/// what it waits for (`waitingFor` on the wire: a review, an approval, an
/// answer) is a wait inside the run, not its end.
pub fn run_is_over(state: TaskState, waits_for_something: bool) -> bool {
    state.is_end() || (state == TaskState::WaitingUser && !waits_for_something)
}

impl FromStr for TaskState {
    type Err = UnknownState;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|state| state.as_str() == text)
            .ok_or_else(|| UnknownState(text.to_owned()))
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_parses_from_its_wire_name() {
        for state in TaskState::ALL {
            let wire = serde_json::to_value(state).unwrap();
            assert_eq!(wire.as_str(), Some(state.as_str()));
            assert_eq!(state.as_str().parse::<TaskState>(), Ok(state));
        }
        assert_eq!(
            "done".parse::<TaskState>(),
            Err(UnknownState("done".to_owned()))
        );
    }

    #[test]
    fn a_wait_inside_the_run_is_not_its_end() {
        assert!(!run_is_over(TaskState::WaitingUser, true));
        assert!(run_is_over(TaskState::WaitingUser, false));
        assert!(run_is_over(TaskState::Failed, false));
        assert!(!run_is_over(TaskState::Running, false));
        let ends: Vec<_> = TaskState::ALL.into_iter().filter(|s| s.is_end()).collect();
        assert_eq!(
            ends,
            [
                TaskState::Succeeded,
                TaskState::Unverified,
                TaskState::Failed,
                TaskState::Cancelled,
                TaskState::BudgetExhausted
            ]
        );
    }
}
