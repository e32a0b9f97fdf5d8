//! Recovery: a task left running by a crash is reconciled with reality
//! before anything else, then continues from its last checkpoint — or
//! waits for the user when reality cannot be known.
//!
//! For each tool call the op log shows as `requested` or `started`, what
//! its tool declares in the registry ([`OnCrash`]) decides:
//! - an edit (or new file) is judged by the file's content now: its hash
//!   before the edit → *not applied*; after → *applied*; neither → *unknown*
//!   (someone else changed it, or the editor half-did it);
//! - a call with effects (a command, a tool nobody described, a tool this
//!   build does not know) is *unknown*: it may have run, wholly or partly,
//!   and is never run again by Rein; a started test run is reported as
//!   interrupted (running it again is harmless);
//! - a read, list or search is *not run* (harmless to ask again).
//!
//! The model gets one result per call saying what happened, so nothing is
//! applied twice and no finished work is lost. An unknown edit or an
//! interrupted command puts the task in `waiting_user` with the explanation;
//! resuming it again continues, the model being told what is unknown.

use rein_store::{CheckpointPhase, FileHash, OpRecord, OpState};
use serde_json::Value;

use crate::context::history::{Item, RecordedResult, ResultMeta};
use crate::journal::{AgentSnapshot, JournalError};
use crate::tools::{OnCrash, Registry};
use crate::workspace::Workspace;

/// What recovery found for one interrupted call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reconciled {
    Applied,
    NotApplied,
    NotRun,
    /// Harmless to run again (a test run): the model is told, the task
    /// goes on.
    Interrupted(String),
    /// Possibly half-done with effects nobody can see: the user decides.
    Unknown(String),
}

impl Reconciled {
    pub fn outcome(&self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::NotApplied => "not_applied",
            Self::NotRun => "not_run",
            Self::Interrupted(_) | Self::Unknown(_) => "unknown",
        }
    }
}

/// Whether an interrupted call of `tool` is judged by the content of the
/// files it touches (which must then be read as the editor shows them).
pub fn judged_by_content(tools: &Registry, tool: &str) -> bool {
    tools.on_crash(tool) == OnCrash::ByContent
}

/// What a crash leaves of `op`: as its tool declares in `tools`; for a
/// tool recovery's registry does not hold (an MCP server's tools are not
/// there before the task is set up), as the tool declared when the call
/// was recorded — only for an MCP tool, and only the two classes that
/// need no file judged: a read-only tool's call was "not run", an
/// idempotent one's is "interrupted". Anything else is in doubt.
fn on_crash(op: &OpRecord, tools: &Registry) -> OnCrash {
    if tools.get(&op.tool).is_some() || !op.tool.starts_with(crate::permissions::MCP_PREFIX) {
        return tools.on_crash(&op.tool);
    }
    let record: Option<Value> = serde_json::from_str(&op.args_json).ok();
    match record.as_ref().and_then(|r| r["on_crash"].as_str()) {
        Some("not_run") => OnCrash::NotRun,
        Some("rerunnable") => OnCrash::Rerunnable(
            "the MCP tool declared itself idempotent: calling it again is harmless",
        ),
        _ => OnCrash::InDoubt("the MCP tool call was interrupted; what it did is unknown"),
    }
}

/// Judges an interrupted op against the files as they are now.
pub async fn reconcile(op: &OpRecord, tools: &Registry, workspace: &dyn Workspace) -> Reconciled {
    match on_crash(op, tools) {
        OnCrash::ByContent => {
            let mut verdicts = Vec::new();
            for pre in &op.pre {
                let now = workspace
                    .read_file(&pre.path)
                    .await
                    .ok()
                    .map(|f| f.version.hash.to_hex())
                    .unwrap_or_default();
                let post = op
                    .post
                    .iter()
                    .find(|p| p.path == pre.path)
                    .map(|p| p.hash.clone());
                let expected_after = post.or_else(|| expected_after(op, &pre.path));
                verdicts.push(if now == pre.hash {
                    Reconciled::NotApplied
                } else if Some(&now) == expected_after.as_ref() {
                    Reconciled::Applied
                } else {
                    Reconciled::Unknown(format!("{} matches neither its text before this call nor the text it would have after it", pre.path))
                });
            }
            verdicts
                .into_iter()
                .max_by_key(severity)
                .unwrap_or(Reconciled::NotRun)
        }
        OnCrash::InDoubt(why) => Reconciled::Unknown(why.into()),
        // Only a call that had started can have done anything.
        OnCrash::Rerunnable(why) if op.state == OpState::Started => {
            Reconciled::Interrupted(why.into())
        }
        OnCrash::Rerunnable(_) | OnCrash::NotRun => Reconciled::NotRun,
    }
}

fn severity(r: &Reconciled) -> u8 {
    match r {
        Reconciled::NotRun => 0,
        Reconciled::NotApplied => 1,
        Reconciled::Applied => 2,
        Reconciled::Interrupted(_) => 3,
        Reconciled::Unknown(_) => 4,
    }
}

/// The hash the file would have after the edit, which the agent records
/// with the op (`{"arguments": …, "expected_after": {path: hash}}`) for a
/// crash that comes before `finished` can record the post-hash.
fn expected_after(op: &OpRecord, path: &str) -> Option<String> {
    expected_after_all(op)
        .into_iter()
        .find_map(|f| (f.path == path).then_some(f.hash))
}

fn expected_after_all(op: &OpRecord) -> Vec<FileHash> {
    let record: Option<Value> = serde_json::from_str(&op.args_json).ok();
    let Some(Value::Object(expected)) =
        record.and_then(|mut r| r.get_mut("expected_after").map(Value::take))
    else {
        return Vec::new();
    };
    expected
        .into_iter()
        .filter_map(|(path, hash)| {
            Some(FileHash {
                path,
                hash: hash.as_str()?.to_owned(),
            })
        })
        .collect()
}

/// What each file this task changed holds if every edit it made (or that a
/// crash cut short, which may have landed) is still there: per file, the
/// hash after the last such edit. A file whose saved copy differs may hold
/// those edits only in an editor buffer that was never saved, so a server
/// taking the task over must see that buffer before judging anything.
pub fn expected_contents(tools: &Registry, ops: &[OpRecord]) -> Vec<FileHash> {
    let mut latest = std::collections::BTreeMap::new();
    for op in ops.iter().filter(|op| judged_by_content(tools, &op.tool)) {
        let landed = match op.state {
            // Only a successful edit records the file after it.
            OpState::Finished => op.post.clone(),
            OpState::Recovered if op.outcome.as_deref() == Some("applied") => {
                expected_after_all(op)
            }
            OpState::Recovered => Vec::new(),
            OpState::Requested | OpState::Started => expected_after_all(op),
        };
        for file in landed.into_iter().filter(|f| !f.hash.is_empty()) {
            latest.insert(file.path, file.hash);
        }
    }
    latest
        .into_iter()
        .map(|(path, hash)| FileHash { path, hash })
        .collect()
}

/// The result the model gets for a call interrupted by a crash.
pub fn interrupted_result(op: &OpRecord, reconciled: &Reconciled) -> RecordedResult {
    let path = op
        .pre
        .first()
        .map(|p| p.path.as_str())
        .unwrap_or("the file");
    let (text, is_error) = match reconciled {
        Reconciled::Applied => (
            format!(
                "Rein stopped (a crash) right after this call; recovery found it applied: {path} has the new text. Read it before editing it again."
            ),
            false,
        ),
        Reconciled::NotApplied => (
            format!(
                "Rein stopped (a crash) before this call reached {path}; it was not applied. Read the file and make the change again if it is still needed."
            ),
            true,
        ),
        Reconciled::NotRun => (
            "Rein stopped (a crash) before this call ran. Run it again if you still need it."
                .to_owned(),
            true,
        ),
        Reconciled::Interrupted(why) => (
            format!(
                "Rein stopped (a crash) during this call: {why}. It was not run again; run it again to see the result."
            ),
            true,
        ),
        Reconciled::Unknown(why) => (
            format!(
                "Rein stopped (a crash) during this call and its outcome is unknown: {why}. It was not run again. Check the files involved before going on."
            ),
            true,
        ),
    };
    RecordedResult::new(
        op.call_id.clone(),
        op.tool.clone(),
        text,
        is_error,
        ResultMeta::Plain,
    )
}

/// A finished op's result as it was recorded.
pub fn recorded_result(op: &OpRecord) -> Option<RecordedResult> {
    serde_json::from_str(op.result_json.as_deref()?).ok()
}

/// Completes a snapshot taken right after a model call (its calls not yet
/// answered) with one result per call: the recorded one where the call
/// finished, the reconciled one where it did not. Returns the unknowns.
pub fn complete_turn(
    snapshot: &mut AgentSnapshot,
    ops: &[OpRecord],
    reconciled: &[(i64, Reconciled)],
) -> Vec<String> {
    let Some(Item::Assistant { parts, .. }) = snapshot.history.items.last() else {
        return Vec::new();
    };
    let calls: Vec<(String, String)> = parts
        .iter()
        .filter_map(|p| match p {
            rein_models::Part::ToolCall(c) => Some((c.id.clone(), c.name.clone())),
            _ => None,
        })
        .collect();
    let mut unknowns = Vec::new();
    let mut results = Vec::with_capacity(calls.len());
    for (call_id, tool) in calls {
        let op = ops
            .iter()
            .rev()
            .find(|o| o.call_id == call_id && o.turn == snapshot.state.turn);
        let result = match op {
            Some(op) if op.state == OpState::Finished => recorded_result(op),
            Some(op) => reconciled
                .iter()
                .find(|(id, _)| *id == op.id)
                .map(|(_, r)| {
                    if let Reconciled::Unknown(why) = r {
                        unknowns.push(format!("{tool} ({call_id}): {why}"));
                    }
                    interrupted_result(op, r)
                }),
            None => None,
        };
        results.push(result.unwrap_or_else(|| {
            RecordedResult::new(
                call_id,
                tool,
                "Rein stopped (a crash) before this call ran. Run it again if you still need it."
                    .into(),
                true,
                ResultMeta::Plain,
            )
        }));
    }
    snapshot.history.items.push(Item::Results {
        results,
        notes: Vec::new(),
    });
    unknowns
}

/// Whether a checkpoint still lacks the results of its turn's calls.
pub fn needs_results(phase: CheckpointPhase) -> bool {
    phase == CheckpointPhase::AfterModel
}

pub type ResumeResult<T> = Result<T, JournalError>;

/// A task reconciled and ready to continue.
pub struct Recovered {
    pub spec: crate::task::TaskSpec,
    /// `None`: the task never reached its first checkpoint; start it over.
    pub snapshot: Option<AgentSnapshot>,
    /// Calls whose outcome could not be known, explained.
    pub unknowns: Vec<String>,
    pub journal: std::sync::Arc<crate::journal::Journal>,
    /// The state the task was left in.
    pub previous_state: String,
    /// Every file a call of this task meant to change, so the new process
    /// flushes those buffers before running tests, as the old one would.
    pub edited_paths: Vec<String>,
}

/// Takes over a task left unfinished (by a crash, or waiting for the user)
/// and reconciles its op log with the files as they are now. `redactor`
/// is what the resumed task's journal writes through.
pub async fn recover(
    store: std::sync::Arc<rein_store::Store>,
    task: &crate::task::TaskId,
    owner: &str,
    workspace: &dyn Workspace,
    tools: &Registry,
    redactor: rein_models::Redactor,
) -> ResumeResult<Recovered> {
    let record = store
        .task(&task.0)?
        .ok_or_else(|| JournalError::NoSuchTask(task.0.clone()))?;
    let journal = std::sync::Arc::new(crate::journal::Journal::attach(
        std::sync::Arc::clone(&store),
        task,
        owner,
        redactor,
    )?);
    let spec: crate::task::TaskSpec = serde_json::from_str(&record.spec_json)
        .map_err(|e| JournalError::Corrupt(format!("the task's spec cannot be read: {e}")))?;
    let (checkpoint, mut snapshot) = match crate::journal::last_snapshot(&store, task)? {
        Some((record, snapshot)) => (Some(record), Some(snapshot)),
        None => (None, None),
    };
    let mut reconciled = Vec::new();
    for op in store.unfinished_ops(&task.0)? {
        let verdict = reconcile(&op, tools, workspace).await;
        let result = interrupted_result(&op, &verdict);
        store.op_recovered(op.id, verdict.outcome(), &journal.redactor().json(&result))?;
        tracing::info!(task = %task, op = op.id, tool = %op.tool, outcome = verdict.outcome(), "reconciled an interrupted call");
        reconciled.push((op.id, verdict));
    }
    let ops = store.ops(&task.0)?;
    let mut edited_paths: Vec<String> = ops
        .iter()
        .flat_map(|op| op.pre.iter().map(|f| f.path.clone()))
        .collect();
    edited_paths.sort();
    edited_paths.dedup();
    let mut unknowns = Vec::new();
    if let (Some(c), Some(s)) = (&checkpoint, snapshot.as_mut())
        && needs_results(c.phase)
    {
        unknowns = complete_turn(s, &ops, &reconciled);
        // The completed turn is the new starting point: resuming again
        // must not reconcile (or run) anything twice.
        journal.checkpoint(CheckpointPhase::AfterTools, &s.state, &s.history)?;
    }
    Ok(Recovered {
        spec,
        snapshot,
        unknowns,
        journal,
        previous_state: record.state,
        edited_paths,
    })
}
