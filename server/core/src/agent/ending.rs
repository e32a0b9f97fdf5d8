//! How a task's end reads to the user: a model that stops after the user
//! turned its change down stopped because the user said no (not a
//! failure), and the end names the files the task changed. The typed
//! cause stays what front ends decide on; only the words change here.

use super::*;

/// The end of a task whose change the user turned down.
pub const REJECTED: &str = "You rejected the change; Rein stopped.";

/// At most this many files are named; the rest are counted.
const NAMED_FILES: usize = 5;

impl Agent {
    /// `stop` in the user's words (see the module doc).
    pub(super) fn in_users_words(&self, mut stop: Stop) -> Stop {
        if self.user_rejected && matches!(stop.cause, StopCause::GaveUp | StopCause::Stuck) {
            stop.cause = StopCause::Rejected;
            REJECTED.clone_into(&mut stop.reason);
        }
        // A task that waits is not over: what it changed is told at its end.
        if stop.cause.state().is_end() {
            let changed: Vec<&str> = self.progress.changed.keys().map(String::as_str).collect();
            stop.reason = with_changed_files(&stop.reason, &changed);
        }
        stop
    }
}

/// The end of a task without checks (a question, an instruction): the
/// model's answer is its summary, taken on its word.
pub(super) fn answered(turn: u32) -> String {
    format!(
        "answered in {} (the answer is the model's; there was nothing to check)",
        turns(turn)
    )
}

/// "1 turn", "4 turns": `n` with its noun.
pub(super) fn turns(n: u32) -> String {
    if n == 1 {
        "1 turn".to_owned()
    } else {
        format!("{n} turns")
    }
}

/// `reason`, then the files changed ("…; files changed: cart.py, app.py").
fn with_changed_files(reason: &str, changed: &[&str]) -> String {
    if changed.is_empty() {
        return reason.to_owned();
    }
    let mut names = changed
        .iter()
        .take(NAMED_FILES)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if changed.len() > NAMED_FILES {
        names.push_str(&format!(" and {} more", changed.len() - NAMED_FILES));
    }
    match reason.strip_suffix('.') {
        Some(sentence) => format!("{sentence}; files changed: {names}."),
        None => format!("{reason}; files changed: {names}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_names_the_files_changed() {
        let said = [
            with_changed_files("fixed: `t` passes in 2 turns", &[]),
            with_changed_files("fixed: `t` passes in 2 turns", &["cart.py"]),
            with_changed_files(REJECTED, &["a.py", "b.py"]),
            with_changed_files("x", &["1", "2", "3", "4", "5", "6", "7"]),
        ];
        expect_test::expect![[r#"
            [
                "fixed: `t` passes in 2 turns",
                "fixed: `t` passes in 2 turns; files changed: cart.py",
                "You rejected the change; Rein stopped; files changed: a.py, b.py.",
                "x; files changed: 1, 2, 3, 4, 5 and 2 more",
            ]
        "#]]
        .assert_debug_eq(&said);
        assert_eq!(turns(1), "1 turn");
        assert_eq!(turns(4), "4 turns");
    }
}
