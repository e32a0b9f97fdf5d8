//! Named points where a test can make the process die, to prove that a
//! crash at that point loses nothing and applies nothing twice.
//!
//! `REIN_CRASH_AT=<name>` (read once) makes the process kill itself with
//! SIGKILL when it reaches the point of that name: no destructors, no
//! flushing, exactly like `kill -9` or a power cut of the process. Unset,
//! a point costs one comparison.

use std::sync::OnceLock;

const ENV: &str = "REIN_CRASH_AT";

fn target() -> Option<&'static str> {
    static TARGET: OnceLock<Option<String>> = OnceLock::new();
    TARGET
        .get_or_init(|| std::env::var(ENV).ok().filter(|v| !v.is_empty()))
        .as_deref()
}

/// Dies here if `REIN_CRASH_AT` names this point: exactly
/// (`op_started:edit_file`), or by its kind alone (`op_started`).
pub fn hit(point: &str) {
    let kind = point.split(':').next().unwrap_or(point);
    if target().is_some_and(|t| t == point || t == kind) {
        tracing::error!(point, "REIN_CRASH_AT: killing the process");
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
        // SIGKILL cannot be caught; if raising it failed, still stop here.
        std::process::abort();
    }
}

/// The names of the points, for tests and documentation.
pub const POINTS: &[&str] = &[
    "op_requested",
    "op_started",
    "op_finished",
    "checkpoint_after_model",
    "checkpoint_after_tools",
    "apply_edit",
    "run_tests",
    "compaction",
];
