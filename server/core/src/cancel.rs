//! Why a task was cancelled. A `CancellationToken` says only that it was;
//! whoever cancels can say why here first, so the task's final reason (in
//! its status, store and trace) is the true one: the user, or the editor
//! shutting the server down.

use std::sync::{Arc, Mutex};

/// The reason when nobody gave one: cancelling is the user's doing
/// (a cancel button, a command, Ctrl-C).
pub const BY_THE_USER: &str = "cancelled by the user";

/// Shared between the task and whoever may cancel it. The first reason
/// given wins: a later cancel does not rewrite why the task stopped.
#[derive(Clone, Debug, Default)]
pub struct CancelReason(Arc<Mutex<Option<String>>>);

impl CancelReason {
    /// Records why, before the token is cancelled.
    pub fn set(&self, reason: impl Into<String>) {
        if let Ok(mut slot) = self.0.lock()
            && slot.is_none()
        {
            *slot = Some(reason.into());
        }
    }

    /// The reason given, else [`BY_THE_USER`].
    pub fn text(&self) -> String {
        self.0
            .lock()
            .ok()
            .and_then(|slot| slot.clone())
            .unwrap_or_else(|| BY_THE_USER.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_reason_wins_and_the_user_is_the_default() {
        let reason = CancelReason::default();
        assert_eq!(reason.text(), "cancelled by the user");
        let shared = reason.clone();
        shared.set("cancelled: the editor shut the language server down");
        reason.set("something later");
        assert_eq!(
            reason.text(),
            "cancelled: the editor shut the language server down"
        );
    }
}
