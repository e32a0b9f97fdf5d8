//! The durable record of a running task: its state, model calls, the op
//! log around every tool call, and a checkpoint after each step, in
//! `rein-store`. What a crash leaves here is what recovery reconciles.
//!
//! Every write is committed before the loop goes on; a write that fails
//! stops the task (Rein cannot promise "nothing applied twice" without its
//! record). Everything written passes through the task's [`Redactor`]
//! first: the goal, the spec, replies, call arguments and results,
//! checkpoints, reasons.

use std::sync::Arc;
use std::time::Duration;

use rein_models::{ModelReply, Redactor};
use rein_store::{
    CheckpointPhase, FileHash, Lease, NewArtifact, NewCheckpoint, NewOp, NewTask, Store,
    StoreError, TurnRecord,
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

/// Everything needed to rebuild the loop at a checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentSnapshot {
    pub turn: u32,
    pub history: History,
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
            }),
            Lease::HeldBy { owner: holder, .. } if owner_is_dead(&holder) => {
                tracing::info!(task = %task, %holder, "taking over the lease of a process that is gone");
                store.release_lease(&task.0, &holder)?;
                Self::attach(store, task, owner, redactor)
            }
            Lease::HeldBy { owner, until_ms } => Err(JournalError::Leased {
                task: task.0.clone(),
                owner,
                until: crate::host::trace::rfc3339(until_ms),
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
    /// with their hashes now (`pre`), and the hashes they should have after
    /// it (`expected_after`), which recovery compares with.
    pub fn op_requested(
        &self,
        turn: u32,
        call_id: &str,
        tool: &str,
        arguments: &Value,
        pre: Vec<FileHash>,
        expected_after: Vec<FileHash>,
    ) -> Result<i64, JournalError> {
        let expected: serde_json::Map<String, Value> = expected_after
            .into_iter()
            .map(|f| (f.path, Value::String(f.hash)))
            .collect();
        let record = serde_json::json!({"arguments": arguments, "expected_after": expected});
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

    pub fn checkpoint(
        &self,
        phase: CheckpointPhase,
        snapshot: &AgentSnapshot,
    ) -> Result<(), JournalError> {
        let data_json = self.redactor.json(snapshot);
        self.store.save_checkpoint(&NewCheckpoint {
            task_id: self.task.0.clone(),
            turn: snapshot.turn,
            phase,
            data_json,
        })?;
        crate::failpoint::hit(match phase {
            CheckpointPhase::AfterModel => "checkpoint_after_model",
            CheckpointPhase::AfterTools => "checkpoint_after_tools",
        });
        Ok(())
    }
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
