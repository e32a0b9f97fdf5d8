//! The durable record of a running task: its state, model calls, the op
//! log around every tool call, and a checkpoint after each step, in
//! `rein-store`. What a crash leaves here is what recovery reconciles.
//!
//! Every write is committed before the loop goes on; a write that fails
//! stops the task (Rein cannot promise "nothing applied twice" without its
//! record). Everything written passes through the task's [`Redactor`]
//! first: the goal, the spec, replies, call arguments and results,
//! checkpoints, reasons.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::tools::OnCrash;
use rein_models::{ModelReply, Redactor};
use rein_store::{
    CheckpointPhase, CheckpointRecord, FileHash, HistoryRef, HistoryWrite, KeptText, Lease,
    NewArtifact, NewCheckpoint, NewOp, NewTask, Store, StoreError, TurnRecord,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::budget::{Budgets, Spent};
use crate::context::history::{History, RecordedResult};
use crate::context::progress::Progress;
use crate::task::{TaskId, TaskSpec, TaskState};
use crate::workspace::ReadVersion;

/// How long a lease lasts without renewal, and how often it is renewed.
pub const LEASE_TTL: Duration = Duration::from_secs(30);
const LEASE_RENEW_EVERY: Duration = Duration::from_secs(10);

/// Everything needed to rebuild the loop at a checkpoint: its history and
/// the rest of its state. (As JSON, the history inline: how checkpoints
/// were stored before their items were stored one by one.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentSnapshot {
    pub history: History,
    #[serde(flatten)]
    pub state: LoopState,
}

/// The loop's state at a checkpoint, apart from its history (which the
/// journal stores item by item, each once: [`Journal::checkpoint`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoopState {
    pub turn: u32,
    pub progress: Progress,
    pub spent: Spent,
    pub elapsed_ms: u64,
    /// The version the model last read of each file (what its edits are
    /// based on).
    pub reads: Vec<(String, ReadVersion)>,
    pub runs: u32,
    pub compactions: u32,
    /// The verifier's baseline (what it compares against), as it saved it.
    pub verifier: Value,
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error(
        "task {task} is being run by another Rein ({owner}) until {until}; wait for it to finish or for its lease to expire"
    )]
    Leased {
        task: String,
        owner: String,
        until: String,
    },
    #[error("there is no task {0} in this workspace's state")]
    NoSuchTask(String),
    #[error(
        "Rein cannot record the task's progress, so it stopped it rather than risk applying something twice: {0}"
    )]
    Store(#[from] StoreError),
    #[error("the task's saved state is damaged: {0}")]
    Corrupt(String),
}

pub struct Journal {
    store: Arc<Store>,
    task: TaskId,
    owner: String,
    redactor: Redactor,
    /// The history items stored so far (`None`: not known yet in this
    /// process; the store says at the first checkpoint).
    stored: std::sync::Mutex<Option<HistoryRef>>,
    /// The text of the file each running call may change, as it was just
    /// before the call, by call id: kept for undo once the call changed it.
    befores: std::sync::Mutex<HashMap<String, (String, Option<String>)>>,
}

/// A checkpoint as stored: the loop's state, and the history items it
/// stands on.
#[derive(Serialize)]
struct StoredCheckpoint<'a> {
    #[serde(flatten)]
    state: &'a LoopState,
    history_ref: HistoryRef,
}

/// A checkpoint as read: one written before the history was stored item
/// by item holds it inline.
#[derive(Deserialize)]
struct ReadCheckpoint {
    #[serde(flatten)]
    state: LoopState,
    #[serde(default)]
    history_ref: Option<HistoryRef>,
    #[serde(default)]
    history: Option<History>,
}

impl Journal {
    /// Records a new task, created by `installation` (only that one resumes
    /// it unasked), and takes its lease.
    pub fn begin(
        store: Arc<Store>,
        spec: &TaskSpec,
        budgets: &Budgets,
        owner: &str,
        installation: Option<&str>,
        redactor: Redactor,
    ) -> Result<Self, JournalError> {
        store.create_task(&NewTask {
            id: spec.id.0.clone(),
            kind: match spec.kind {
                crate::task::TaskKind::FixTest { .. } => "fix_test".into(),
                crate::task::TaskKind::FixDiagnostic { .. } => "fix_diagnostic".into(),
                crate::task::TaskKind::Instruction => "instruction".into(),
            },
            goal: redactor.redact(&spec.goal).into_owned(),
            spec_json: redactor.json(spec),
            state: TaskState::Queued.as_str().into(),
            budgets_json: json(budgets),
            installation: installation.map(str::to_owned),
        })?;
        Self::attach(store, &spec.id, owner, redactor)
    }

    /// Takes the lease of an existing task (to resume it). A lease held by
    /// a process of this machine that no longer exists (it crashed) is
    /// taken over at once rather than after it expires.
    pub fn attach(
        store: Arc<Store>,
        task: &TaskId,
        owner: &str,
        redactor: Redactor,
    ) -> Result<Self, JournalError> {
        if store.task(&task.0)?.is_none() {
            return Err(JournalError::NoSuchTask(task.0.clone()));
        }
        match store.acquire_lease(&task.0, owner, LEASE_TTL)? {
            Lease::Acquired => Ok(Self {
                store,
                task: task.clone(),
                owner: owner.to_owned(),
                redactor,
                stored: std::sync::Mutex::new(None),
                befores: std::sync::Mutex::new(HashMap::new()),
            }),
            Lease::HeldBy { owner: holder, .. } if owner_is_dead(&holder) => {
                tracing::info!(task = %task, %holder, "taking over the lease of a process that is gone");
                store.release_lease(&task.0, &holder)?;
                Self::attach(store, task, owner, redactor)
            }
            Lease::HeldBy { owner, until_ms } => Err(JournalError::Leased {
                task: task.0.clone(),
                owner,
                until: crate::os::trace::rfc3339(until_ms),
            }),
        }
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub fn task(&self) -> &TaskId {
        &self.task
    }

    /// What every record passes through.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Renews the lease in the background; cancels `cancel` if it is lost
    /// (another process took the task over after this one stalled).
    pub fn keep_lease(self: &Arc<Self>, cancel: CancellationToken) -> JoinHandle<()> {
        let journal = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = cancel.cancelled() => return,
                    () = tokio::time::sleep(LEASE_RENEW_EVERY) => {}
                }
                let store = Arc::clone(&journal.store);
                let (task, owner) = (journal.task.0.clone(), journal.owner.clone());
                let renewed = tokio::task::spawn_blocking(move || {
                    store.renew_lease(&task, &owner, LEASE_TTL)
                })
                .await;
                if !matches!(renewed, Ok(Ok(true))) {
                    tracing::error!(task = %journal.task, "lost the task's lease; stopping it");
                    cancel.cancel();
                    return;
                }
            }
        })
    }

    pub fn release(&self) {
        if let Err(error) = self.store.release_lease(&self.task.0, &self.owner) {
            tracing::warn!(%error, "could not release the task's lease");
        }
    }

    pub fn state(
        &self,
        state: TaskState,
        reason: Option<&str>,
        spent: &Spent,
    ) -> Result<(), JournalError> {
        let spent = serde_json::to_string(spent).unwrap_or_default();
        let reason = reason.map(|r| self.redactor.redact(r));
        Ok(self
            .store
            .update_task(&self.task.0, state.as_str(), reason.as_deref(), &spent)?)
    }

    pub fn turn(
        &self,
        turn: u32,
        request_ref: &str,
        reply: &ModelReply,
        cost_usd: Option<f64>,
        latency_ms: u64,
    ) -> Result<(), JournalError> {
        let response = serde_json::json!({"parts": reply.parts, "stop": format!("{:?}", reply.stop), "retries": reply.retries});
        self.store.record_turn(&TurnRecord {
            task_id: self.task.0.clone(),
            turn,
            request_ref: request_ref.to_owned(),
            response_json: self.redactor.json(&response),
            usage_json: serde_json::to_string(&reply.usage).unwrap_or_default(),
            cost_usd,
            latency_ms,
            created_ms: rein_store::now_ms(),
        })?;
        Ok(())
    }

    pub fn artifact(&self, rel_path: &str, kind: &str, bytes: u64) -> Result<(), JournalError> {
        Ok(self.store.record_artifact(&NewArtifact {
            task_id: self.task.0.clone(),
            rel_path: rel_path.to_owned(),
            kind: kind.to_owned(),
            bytes,
        })?)
    }

    /// Records a call about to run: its arguments, the files it may touch
    /// with their hashes now (`pre`), the hashes they should have after it
    /// (`expected_after`), which recovery compares with, and what its tool
    /// declared a crash leaves of it (`on_crash`: recovery's registry may
    /// not hold the tool, e.g. an MCP server's).
    #[allow(clippy::too_many_arguments)]
    pub fn op_requested(
        &self,
        turn: u32,
        call_id: &str,
        tool: &str,
        arguments: &Value,
        pre: Vec<FileHash>,
        expected_after: Vec<FileHash>,
        on_crash: OnCrash,
    ) -> Result<i64, JournalError> {
        let expected: serde_json::Map<String, Value> = expected_after
            .into_iter()
            .map(|f| (f.path, Value::String(f.hash)))
            .collect();
        let record = serde_json::json!({
            "arguments": arguments,
            "expected_after": expected,
            "on_crash": on_crash.class(),
        });
        let id = self.store.op_requested(&NewOp {
            task_id: self.task.0.clone(),
            turn,
            call_id: call_id.to_owned(),
            tool: tool.to_owned(),
            args_json: self.redactor.json(&record),
            pre,
        })?;
        crate::failpoint::hit(&format!("op_requested:{tool}"));
        Ok(id)
    }

    pub fn op_started(&self, op: i64, tool: &str) -> Result<(), JournalError> {
        self.store.op_started(op)?;
        crate::failpoint::hit(&format!("op_started:{tool}"));
        Ok(())
    }

    pub fn op_finished(
        &self,
        op: i64,
        tool: &str,
        result: &RecordedResult,
        post: Vec<FileHash>,
    ) -> Result<(), JournalError> {
        let result = self.redactor.json(result);
        self.store.op_finished(op, &result, &post)?;
        crate::failpoint::hit(&format!("op_finished:{tool}"));
        Ok(())
    }

    /// Notes `path`'s text (`None`: no such file) just before call
    /// `call_id`, which may change it.
    pub fn file_before(&self, call_id: &str, path: &str, text: Option<String>) {
        if let Ok(mut befores) = self.befores.lock() {
            befores.insert(call_id.to_owned(), (path.to_owned(), text));
        }
    }

    /// Call `call_id` changed nothing.
    pub fn forget_before(&self, call_id: &str) {
        if let Ok(mut befores) = self.befores.lock() {
            befores.remove(call_id);
        }
    }

    /// Call `call_id` changed `path`, which now reads `after`: records the
    /// file's text before and after, for undo (the store keeps the first
    /// `before` of a task's file). These are the user's own files, kept in
    /// the workspace's own `.rein/` as they are: a text the redactor would
    /// change (it holds a secret) is not kept at all, nor one over
    /// [`crate::undo::MAX_TEXT_BYTES`]; the record says which.
    pub fn file_edited(
        &self,
        call_id: &str,
        path: &str,
        after: Option<String>,
    ) -> Result<(), JournalError> {
        let noted = self.befores.lock().ok().and_then(|mut b| b.remove(call_id));
        let Some((noted_path, before)) = noted.filter(|(p, _)| p == path) else {
            // Not read before the call (a tool without a predicted edit):
            // nothing to go back to, so nothing is claimed.
            tracing::warn!(task = %self.task, call_id, path, "a changed file's text before the call is unknown; it cannot be undone");
            return Ok(());
        };
        // A text with a secret in it is not kept: no state is written
        // with a key (the redacted text is no use to undo either).
        let kept = |text: Option<String>| match text {
            None => KeptText::Absent,
            Some(text) if !crate::undo::keepable(&text) => KeptText::TooLarge,
            Some(text) if self.redactor.redact(&text) != text.as_str() => KeptText::Secret,
            Some(text) => KeptText::Text(text),
        };
        Ok(self
            .store
            .record_file_change(&self.task.0, &noted_path, &kept(before), &kept(after))?)
    }

    /// Saves a checkpoint. The history's items are written once each: only
    /// those new since the last checkpoint go with it (all of them after
    /// a compaction rewrote the history, which starts a new epoch), so a
    /// turn costs the same however long the task has run.
    pub fn checkpoint(
        &self,
        phase: CheckpointPhase,
        state: &LoopState,
        history: &History,
    ) -> Result<(), JournalError> {
        let items = &history.items;
        let at = HistoryRef {
            epoch: state.compactions,
            len: items.len(),
        };
        let before = self.stored.lock().ok().and_then(|s| *s);
        let (from, new_epoch) = match before {
            Some(b) if b.epoch == at.epoch => (b.len.min(at.len), false),
            Some(_) => (0, true),
            // A journal attached to a task resumed from its checkpoint: the
            // items stored are the ones the snapshot was rebuilt from.
            None => (
                self.store.history_len(&self.task.0, at.epoch)?.min(at.len),
                true,
            ),
        };
        let write = HistoryWrite {
            at,
            from,
            items: items[from..]
                .iter()
                .map(|i| self.redactor.json(i))
                .collect(),
            new_epoch,
        };
        let data_json = self.redactor.json(&StoredCheckpoint {
            state,
            history_ref: at,
        });
        self.store.save_checkpoint_with_history(
            &NewCheckpoint {
                task_id: self.task.0.clone(),
                turn: state.turn,
                phase,
                data_json,
            },
            &write,
        )?;
        if let Ok(mut stored) = self.stored.lock() {
            *stored = Some(at);
        }
        crate::failpoint::hit(match phase {
            CheckpointPhase::AfterModel => "checkpoint_after_model",
            CheckpointPhase::AfterTools => "checkpoint_after_tools",
        });
        Ok(())
    }
}

/// The task's last checkpoint and the snapshot it rebuilds (its history
/// read back item by item), if it has one.
pub fn last_snapshot(
    store: &Store,
    task: &TaskId,
) -> Result<Option<(CheckpointRecord, AgentSnapshot)>, JournalError> {
    let Some(record) = store.last_checkpoint(&task.0)? else {
        return Ok(None);
    };
    let corrupt = |what: &str, e: &dyn std::fmt::Display| {
        JournalError::Corrupt(format!("the last checkpoint cannot be read: {what}: {e}"))
    };
    let read: ReadCheckpoint =
        serde_json::from_str(&record.data_json).map_err(|e| corrupt("its data", &e))?;
    let history = match (read.history_ref, read.history) {
        (Some(at), _) => {
            let mut history = History::default();
            for item in store.history_items(&task.0, at)? {
                history
                    .push(serde_json::from_str(&item).map_err(|e| corrupt("a history item", &e))?);
            }
            history
        }
        (None, Some(inline)) => inline,
        (None, None) => return Err(corrupt("its history", &"neither stored nor inline")),
    };
    Ok(Some((
        record,
        AgentSnapshot {
            history,
            state: read.state,
        },
    )))
}

/// A lease owner name for this process: `host:pid:nonce`. The host and pid
/// let another process on the same machine see that the owner is gone.
pub fn owner_id() -> String {
    let host = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".into());
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    format!("{host}:{}:{nonce:08x}", std::process::id())
}

/// Whether a task's lease can be taken: none, expired, or held by a
/// process of this machine that is gone.
pub fn lease_is_free(record: &rein_store::TaskRecord) -> bool {
    match (&record.owner, record.lease_until_ms) {
        (Some(owner), Some(until)) => until < rein_store::now_ms() || owner_is_dead(owner),
        _ => true,
    }
}

/// Whether a lease owner was a process of this machine that has exited.
fn owner_is_dead(owner: &str) -> bool {
    let mut parts = owner.split(':');
    let (Some(host), Some(pid)) = (
        parts.next(),
        parts.next().and_then(|p| p.parse::<i32>().ok()),
    ) else {
        return false;
    };
    let this_host = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_default();
    if host != this_host || pid == std::process::id() as i32 {
        return false;
    }
    // Signal 0 checks that the process exists without touching it.
    matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
        Err(nix::errno::Errno::ESRCH)
    )
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A file's hash for the op log: 64 hex digits, or `""` when it does not
/// exist.
pub fn file_hash(path: &str, hash: Option<rein_text::ContentHash>) -> FileHash {
    FileHash {
        path: path.to_owned(),
        hash: hash.map(|h| h.to_hex()).unwrap_or_default(),
    }
}
