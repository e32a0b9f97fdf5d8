//! Named points where a test can make the process die, to prove that a
//! crash at that point loses nothing and applies nothing twice.
//!
//! `REIN_CRASH_AT=<point>` (read once) makes the process kill itself with
//! SIGKILL when it reaches that point: no destructors, no flushing, exactly
//! like `kill -9`. A point is named exactly (`op_started:edit_file`) or by
//! its kind (`op_started`); `<point>#<n>` waits for its n-th hit
//! (`run_tests#2`: the second test run). Unset, a point costs one
//! comparison.
//!
//! `REIN_CRASH_ONCE=<file>` as well: only the process that removes that
//! file dies. An editor that restarts its crashed server hands the new
//! process the same environment; this lets that one live.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

const ENV: &str = "REIN_CRASH_AT";
const ONCE_ENV: &str = "REIN_CRASH_ONCE";

/// (point, hit number) parsed from the environment.
fn target() -> Option<&'static (String, u32)> {
    static TARGET: OnceLock<Option<(String, u32)>> = OnceLock::new();
    TARGET
        .get_or_init(|| {
            let value = std::env::var(ENV).ok().filter(|v| !v.is_empty())?;
            Some(match value.split_once('#') {
                Some((point, n)) => (point.to_owned(), n.parse().unwrap_or(1)),
                None => (value, 1),
            })
        })
        .as_ref()
}

/// Dies here if `REIN_CRASH_AT` names this point (and this is its hit).
pub fn hit(point: &str) {
    let Some((target, nth)) = target() else {
        return;
    };
    let kind = point.split(':').next().unwrap_or(point);
    if target != point && target != kind {
        return;
    }
    static HITS: OnceLock<Mutex<HashMap<String, u32>>> = OnceLock::new();
    let count = HITS
        .get_or_init(Default::default)
        .lock()
        .map(|mut hits| {
            let n = hits.entry(target.clone()).or_insert(0);
            *n += 1;
            *n
        })
        .unwrap_or(0);
    if count == *nth && claim_the_crash() {
        tracing::error!(point, hit = count, "REIN_CRASH_AT: killing the process");
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
        // SIGKILL cannot be caught; if raising it failed, still stop here.
        std::process::abort();
    }
}

/// Whether this process is the one to die: always, unless
/// `REIN_CRASH_ONCE` names a file, which only one process can remove.
fn claim_the_crash() -> bool {
    match std::env::var_os(ONCE_ENV) {
        Some(file) if !file.is_empty() => std::fs::remove_file(file).is_ok(),
        _ => true,
    }
}

/// The kinds of points, for tests and documentation.
pub const POINTS: &[&str] = &[
    "op_requested",
    "op_started",
    "op_finished",
    "checkpoint_after_model",
    "checkpoint_after_tools",
    "apply_edit",
    "run_tests",
    "compaction",
    "undo_applied",
];
