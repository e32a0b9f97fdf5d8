//! `rein run --result-json FILE`: the result of a run for programs (what
//! `rein eval` reads), beside the one stdout shows people. Every string in
//! it came from the task, the repository or the model: a reader shows it
//! as text, never runs it.

use std::path::Path;

use rein_core::agent::Outcome;
use rein_core::ports::Evidence;
use rein_core::task::TaskState;
use serde::{Deserialize, Serialize};

/// The format's version: a reader refuses what it does not know.
pub const VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub version: u32,
    pub task: String,
    pub state: TaskState,
    pub reason: String,
    pub provider: String,
    pub model: String,
    pub turns: u32,
    /// Every input token, cached or not.
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// Calls to a model without a known price: `cost_usd` undercounts.
    pub unpriced_calls: u32,
    pub wall_ms: u64,
    /// Workspace-relative paths of the files the task wrote (one may be
    /// back as it was).
    pub changed_files: Vec<String>,
    /// What proves a success (empty otherwise).
    pub evidence: Vec<Evidence>,
}

impl RunResult {
    pub fn new(
        task: &str,
        outcome: &Outcome,
        (provider, model): (&str, &str),
        wall_ms: u64,
        changed_files: Vec<String>,
    ) -> Self {
        let spent = &outcome.spent;
        Self {
            version: VERSION,
            task: task.to_owned(),
            state: outcome.state,
            reason: outcome.reason.clone(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            turns: spent.turns,
            input_tokens: spent.usage.total_input(),
            cached_input_tokens: spent.usage.cache_read_tokens,
            output_tokens: spent.usage.output_tokens,
            cost_usd: spent.cost_usd,
            unpriced_calls: spent.unpriced_calls,
            wall_ms,
            changed_files,
            evidence: outcome.evidence.clone(),
        }
    }

    pub fn write(&self, path: &Path) -> Result<(), String> {
        let json = serde_json::to_string_pretty(self)
            .map_err(|e| format!("cannot encode the result: {e}"))?;
        // Replaced atomically in the folder named, never through a link.
        rein_core::os::atomic::replace(path, (json + "\n").as_bytes(), None)
            .map_err(|e| format!("cannot write the result to {}: {e}", path.display()))
    }

    /// The result a `rein run` wrote, or why it cannot be read.
    pub fn read(path: &Path) -> Result<Self, String> {
        read_versioned(path, VERSION, "a `rein run` result")
    }
}

/// A JSON file of ours whose `version` must be `version` exactly: a file
/// of another version, or not ours, is named as such rather than misread.
pub fn read_versioned<T: serde::de::DeserializeOwned>(
    path: &Path,
    version: u32,
    what: &str,
) -> Result<T, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("no file at {}: {e}", path.display()))?;
    let found = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("version").and_then(serde_json::Value::as_u64));
    if found != Some(u64::from(version)) {
        return Err(format!(
            "{}: not {what} of version {version}",
            path.display()
        ));
    }
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}
