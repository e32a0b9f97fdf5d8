//! The tests this session's runs last showed failing, as their runners
//! named them: what "▶ Fix with Rein" is offered on (`code_lens`). Kept
//! apart from the lenses so the session can hold it without knowing them.

use std::sync::Mutex;

use rein_core::testing::outcomes;

/// At most this many failed names are remembered (the oldest go first).
pub const MAX_KNOWN: usize = 1_000;

/// The tests this session's runs last showed failing, as their runners
/// named them (cleaned and bounded by the core).
#[derive(Debug, Default)]
pub struct KnownOutcomes {
    failed: Mutex<Vec<Known>>,
}

/// A failed name and its key ([`outcomes::key`]), made once: each run's
/// passes are compared with every known name.
#[derive(Debug)]
struct Known {
    name: String,
    key: String,
}

impl KnownOutcomes {
    /// Notes a run's outcomes; whether the failed set changed.
    pub fn record(&self, failed: &[String], passed: &[String]) -> bool {
        let Ok(mut known) = self.failed.lock() else {
            return false;
        };
        let before = known.len();
        let passed: Vec<String> = passed.iter().map(|p| outcomes::key(p)).collect();
        known.retain(|k| !passed.iter().any(|p| outcomes::same_key(&k.key, p)));
        let mut changed = known.len() != before;
        for name in failed {
            if !known.iter().any(|k| k.name == *name) {
                known.push(Known {
                    key: outcomes::key(name),
                    name: name.clone(),
                });
                changed = true;
            }
        }
        let excess = known.len().saturating_sub(MAX_KNOWN);
        known.drain(..excess);
        changed
    }

    pub fn failed(&self) -> Vec<String> {
        self.failed
            .lock()
            .map(|k| k.iter().map(|k| k.name.clone()).collect())
            .unwrap_or_default()
    }
}
