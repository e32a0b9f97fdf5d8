//! The task host: a task's whole life in one place, the same for every
//! front end — its durable record (the journal), its set-up (model,
//! verifier, executor), its trace, the ports the loop works through, and
//! recovery after a crash.
//!
//! A front end (the LSP server, `rein run`, an Agent Client Protocol
//! server) supplies a [`FrontEnd`]: where the task works (a workspace),
//! who answers its questions (an approver) and where its events go (a
//! sink). It supplies a [`Setup`] too: how its configuration becomes a
//! model, a verifier and an executor. The host does the rest:
//!
//! ```text
//! TaskHost::begin ─┐                      ┌─ Ready::run → Outcome
//!                  ├─ Pending::prepare ───┤
//! TaskHost::recover┘   (Setup)            └─ (front end may look first:
//!   └─ Recovery::NeedsUser                    budgets, confinement)
//! ```
//!
//! The tasks a front end runs are in a [`RunningTasks`] table
//! (`running.rs`): cancel, answer, shut down.
//!
//! Never here: anything a particular front end speaks (LSP messages, a
//! terminal, ACP updates).

mod running;

pub use running::RunningTasks;

use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use rein_models::{ModelClient, Redactor};
use rein_store::Store;
use tokio_util::sync::CancellationToken;

use crate::agent::{self, AgentConfig, Outcome, Ports};
use crate::budget::Budgets;
use crate::cancel::CancelReason;
use crate::exec::Exec;
use crate::journal::{AgentSnapshot, Journal};
use crate::os::artifacts::DiskArtifacts;
use crate::os::trace::TraceWriter;
use crate::ports::{Approver, ProgressSink, Tee, Verifier};
use crate::resume;
use crate::task::{TaskId, TaskSpec, TaskState};
use crate::tools::Registry;
use crate::verify::Baseline;
use crate::workspace::Workspace;

/// What a front end gives a task.
pub struct FrontEnd {
    /// Where the task reads and edits (an editor's live buffers, the disk).
    pub workspace: Arc<dyn Workspace>,
    /// Who approves commands and answers questions.
    pub approver: Arc<dyn Approver>,
    /// Where the task's events go (the trace gets them too).
    pub events: Arc<dyn ProgressSink>,
}

/// What a task needs beyond its front end, built from configuration.
pub struct Prepared {
    pub config: AgentConfig,
    pub model: Arc<dyn ModelClient>,
    pub verifier: Arc<dyn Verifier>,
    /// Runs every command of the task (the model's, the tests, the
    /// verifier's), confined: the one executor of the task.
    pub exec: Arc<dyn Exec>,
    /// Whatever must live exactly as long as the task (a scripted
    /// model's server, MCP servers).
    pub keep_alive: Option<Box<dyn Any + Send + Sync>>,
    /// What the user should know before the task runs (an MCP server that
    /// did not start): each front end shows them.
    pub notices: Vec<String>,
}

/// How a front end's configuration becomes a [`Prepared`] task.
#[async_trait]
pub trait Setup: Send + Sync {
    /// `baseline`: the verifier's saved baseline, for a resumed task (a new
    /// task records one now, before anything changes).
    async fn prepare(
        &self,
        task: &TaskSpec,
        workspace: &dyn Workspace,
        baseline: Option<Baseline>,
        cancel: &CancellationToken,
    ) -> Result<Prepared, String>;
}

/// Starts and resumes tasks in one workspace's state database.
pub struct TaskHost {
    pub store: Arc<Store>,
    /// This process, as the holder of a task's lease.
    pub owner: String,
    /// This installation, which may resume its own tasks unasked.
    pub installation: Option<String>,
    /// The workspace's root: where traces and artifacts go.
    pub root: PathBuf,
    /// What every sink of the task writes through.
    pub redactor: Redactor,
}

/// A task recorded (or taken over), not yet set up.
pub struct Pending {
    root: PathBuf,
    spec: TaskSpec,
    journal: Arc<Journal>,
    snapshot: Option<AgentSnapshot>,
    baseline: Option<Baseline>,
}

/// A task set up and ready to run.
pub struct Ready {
    pending: Pending,
    prepared: Prepared,
}

/// What recovering a task found.
pub enum Recovery {
    /// Ready to set up and go on.
    Resumable(Box<Pending>),
    /// A call's outcome cannot be known: the task now waits for the user,
    /// who looks before anything else happens. The reason says what to
    /// check.
    NeedsUser { reason: String },
}

impl TaskHost {
    /// The trace of task `id`, for what a front end reports about a task
    /// that does not run (one that cannot start, one waiting after a crash).
    pub fn trace(&self, id: &TaskId) -> Arc<dyn ProgressSink> {
        Arc::new(TraceWriter::open(&self.root, id, self.redactor.clone()))
    }

    /// Records a new task before anything runs (the baseline test run
    /// included), so a crash from here on leaves a task to resume.
    pub fn begin(&self, spec: TaskSpec, budgets: &Budgets) -> Result<Pending, String> {
        let journal = Journal::begin(
            Arc::clone(&self.store),
            &spec,
            budgets,
            &self.owner,
            self.installation.as_deref(),
            self.redactor.clone(),
        )
        .map_err(|e| format!("cannot record the task: {e}"))?;
        Ok(Pending {
            root: self.root.clone(),
            spec,
            journal: Arc::new(journal),
            snapshot: None,
            baseline: None,
        })
    }

    /// Takes over a task left unfinished (a crash, or waiting for the
    /// user) and reconciles what it was doing with the files as
    /// `workspace` shows them. Files the task meant to change are handed
    /// to `adopt` (an editor flushes those buffers before tests run).
    pub async fn recover(
        &self,
        id: &TaskId,
        workspace: &dyn Workspace,
        tools: &Registry,
        adopt: impl FnOnce(&[String]),
    ) -> Result<Recovery, String> {
        let recovered = resume::recover(
            Arc::clone(&self.store),
            id,
            &self.owner,
            workspace,
            tools,
            self.redactor.clone(),
        )
        .await
        .map_err(|e| e.to_string())?;
        adopt(&recovered.edited_paths);
        if !recovered.unknowns.is_empty()
            && recovered.previous_state != TaskState::WaitingUser.as_str()
        {
            let reason = format!(
                "Rein stopped (a crash) in the middle of: {}. Check those files, then resume the task to go on.",
                recovered.unknowns.join("; ")
            );
            let spent = recovered
                .snapshot
                .as_ref()
                .map(|s| s.state.spent.clone())
                .unwrap_or_default();
            recovered
                .journal
                .state(TaskState::WaitingUser, Some(&reason), &spent)
                .map_err(|e| e.to_string())?;
            recovered.journal.release();
            return Ok(Recovery::NeedsUser { reason });
        }
        let baseline = recovered
            .snapshot
            .as_ref()
            .and_then(|s| serde_json::from_value(s.state.verifier.clone()).ok());
        Ok(Recovery::Resumable(Box::new(Pending {
            root: self.root.clone(),
            spec: recovered.spec,
            journal: recovered.journal,
            snapshot: recovered.snapshot,
            baseline,
        })))
    }
}

impl Pending {
    pub fn spec(&self) -> &TaskSpec {
        &self.spec
    }

    /// Sets the task up. A set-up that fails is recorded as the task's
    /// failure (a restart must not retry it forever) and its lease freed.
    pub async fn prepare(
        self,
        setup: &dyn Setup,
        workspace: &dyn Workspace,
        cancel: &CancellationToken,
    ) -> Result<Ready, String> {
        match setup
            .prepare(&self.spec, workspace, self.baseline.clone(), cancel)
            .await
        {
            Ok(mut prepared) => {
                search_notice(&mut prepared);
                Ok(Ready {
                    pending: self,
                    prepared,
                })
            }
            Err(reason) => {
                let _ = self
                    .journal
                    .state(TaskState::Failed, Some(&reason), &Default::default());
                self.journal.release();
                Err(reason)
            }
        }
    }
}

/// The search with the verifier lays candidates over the workspace in
/// private layers: where the executor cannot, the loop searches not, and
/// the user is told once per process (it is on by default).
fn search_notice(prepared: &mut Prepared) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let config = &prepared.config;
    if config.search.mode == crate::config::search::SearchMode::Off
        || config.harness.is_naive()
        || prepared.exec.lays_files()
        || SAID.swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        return;
    }
    prepared.notices.push(format!(
        "The search with the verifier (search = \"{}\") is off here: it checks candidate fixes in private layers over the workspace, which this machine's sandbox cannot make (or the sandbox is off). Rein works as without it.",
        config.search.mode.name()
    ));
}

impl Ready {
    pub fn spec(&self) -> &TaskSpec {
        &self.pending.spec
    }

    pub fn prepared(&self) -> &Prepared {
        &self.prepared
    }

    /// Routes the task's commands through `route`, given the executor it
    /// has (an ACP panel's terminal for the model's commands). The
    /// verifier keeps its own: its checks run where the set-up put them.
    pub fn route_commands(mut self, route: impl FnOnce(Arc<dyn Exec>) -> Arc<dyn Exec>) -> Self {
        self.prepared.exec = route(self.prepared.exec);
        self
    }

    /// Runs the task to its end (or its pause, `waiting_user`): the
    /// front end's events and the trace get every event; artifacts go to
    /// the workspace's `.rein/artifacts`.
    pub async fn run(
        self,
        front: FrontEnd,
        cancel: CancellationToken,
        reason: CancelReason,
    ) -> Outcome {
        let Ready { pending, prepared } = self;
        let root = pending.root.as_path();
        let redactor = prepared.config.redactor.clone();
        let trace = Arc::new(TraceWriter::open(root, &pending.spec.id, redactor.clone()));
        let ports = Ports {
            model: prepared.model,
            workspace: front.workspace,
            exec: prepared.exec,
            approver: front.approver,
            progress: Arc::new(Tee(vec![front.events, trace])),
            verifier: prepared.verifier,
            artifacts: Arc::new(DiskArtifacts::new(root, redactor)),
            journal: Some(pending.journal),
        };
        let mut config = prepared.config;
        config.cancel_reason = reason;
        // Held until the task ends.
        let _keep_alive = prepared.keep_alive;
        match pending.snapshot {
            Some(snapshot) => agent::resume(pending.spec, snapshot, config, ports, cancel).await,
            None => agent::run(pending.spec, config, ports, cancel).await,
        }
    }
}
