//! The task service: one workspace folder's tasks, the same for every
//! front end. It holds what starting a task needs beyond the front end's
//! protocol — the folder's task state, this process's identity as a task
//! owner, the MCP servers kept between tasks, the table of running tasks —
//! and it is the one place that builds the core's [`TaskHost`] and a
//! task's [`TaskSetup`] (model, verifier, executor in the sandbox).
//!
//! A front end resolves the settings (asking about trust in its own way),
//! supplies the task's workspace, and then:
//!
//! ```text
//! TaskService::start ──┐                        ┌─ Started { ready, notices }
//!                      ├─ begin/recover, set up ┤
//! TaskService::resume ─┘                        └─ Resumed::NeedsUser { reason }
//! ```
//!
//! `Started::ready.run(front_end, …)` runs it; the notices (typed) are the
//! front end's to show before.
//!
//! Never here: a protocol's messages; asking the user anything.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rein_core::config::Config;
use rein_core::exec::Confinement;
use rein_core::ports::{TaskEvent, TaskStatus};
use rein_core::task::{TaskId, TaskSpec, TaskState};
use rein_core::task_host::{Ready, Recovery, RunningTasks, TaskHost};
use rein_core::workspace::Workspace;
use rein_mcp::McpPool;
use rein_models::Redactor;
use rein_store::Store;
use tokio_util::sync::CancellationToken;

use rein_core::diagnostics::Diagnostic;
use rein_core::os::process::ProcessExec;

use crate::fix_error::{self, ErrorTarget, Find};
use crate::setup::{self, TaskSetup};

/// What a service is made with besides its folder.
pub struct ServiceOptions {
    /// The binary every command starts through (`rein sandbox-exec`).
    pub rein: PathBuf,
    /// MCP servers kept between the service's tasks (an editor's or a
    /// panel's session shares one pool; `rein run` has its own).
    pub mcp: Arc<McpPool>,
    /// The running tasks: cancel, answer, shut down. A front end may keep
    /// one table for all its folders.
    pub running: Arc<RunningTasks>,
    /// This installation: only its tasks resume unasked after a crash.
    pub installation: Option<String>,
}

impl ServiceOptions {
    /// This process: its binary, a pool and a table of its own, the
    /// installation from the user's state.
    pub fn this_process() -> Self {
        Self {
            rein: setup::this_binary(),
            mcp: Arc::default(),
            running: Arc::default(),
            installation: crate::settings::user_state().and_then(|s| s.installation_id().ok()),
        }
    }
}

/// One workspace folder's tasks.
pub struct TaskService {
    root: PathBuf,
    store: Arc<Store>,
    owner: String,
    options: ServiceOptions,
}

/// How one task is set up, beyond the folder: its settings (already
/// decided as far as trust goes) and whether anyone answers the model's
/// questions (an editor, a terminal without `--yes`).
#[derive(Clone, Copy)]
pub struct Launch<'a> {
    pub config: &'a Config,
    pub answers_questions: bool,
}

/// What the user should know before a task runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Part of the set-up did not come up (an MCP server): the task goes
    /// on without it.
    SetUp(String),
    /// This machine cannot give commands the whole sandbox: every command,
    /// the tests included, is asked about before it runs.
    SandboxIncomplete { missing: Vec<String> },
}

/// A task set up and ready to run.
pub struct Started {
    pub ready: Ready,
    pub notices: Vec<Notice>,
}

/// What resuming a task found.
pub enum Resumed {
    Started(Box<Started>),
    /// A step's outcome cannot be known (an edit neither clearly applied nor
    /// clearly not): the user looks first, then resumes again. The task's
    /// trace says so already.
    NeedsUser {
        reason: String,
    },
}

impl std::fmt::Debug for TaskService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskService")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl TaskService {
    /// The service for the folder `root`, its task state opened (made on
    /// first use).
    pub fn open(root: &Path, options: ServiceOptions) -> Result<Self, String> {
        let store = Store::open(&rein_store::state_db_path(root))
            .map_err(|e| format!("cannot open the task state: {e}"))?;
        Ok(Self {
            root: root.to_path_buf(),
            store: Arc::new(store),
            owner: rein_core::journal::owner_id(),
            options,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub fn running(&self) -> &Arc<RunningTasks> {
        &self.options.running
    }

    pub fn mcp(&self) -> &Arc<McpPool> {
        &self.options.mcp
    }

    /// The binary every command starts through.
    pub fn rein(&self) -> &Path {
        &self.options.rein
    }

    /// The one redactor of a task with `config`, for every sink.
    pub fn redactor(config: &Config) -> Redactor {
        setup::redactor(config)
    }

    /// The core's task host for this folder; every sink of a task writes
    /// through `redactor`. The one place one is made.
    fn host(&self, redactor: Redactor) -> TaskHost {
        TaskHost {
            store: Arc::clone(&self.store),
            owner: self.owner.clone(),
            installation: self.options.installation.clone(),
            root: self.root.clone(),
            redactor,
        }
    }

    /// A task's set-up from `launch`. The one place one is made.
    fn setup<'a>(&'a self, launch: &Launch<'a>) -> TaskSetup<'a> {
        TaskSetup {
            root: &self.root,
            config: launch.config,
            rein: &self.options.rein,
            answers_questions: launch.answers_questions,
            mcp: &self.options.mcp,
        }
    }

    /// Records `spec` as a new task (its test protected unless the
    /// settings allow test edits, a diagnostic's checker not to be
    /// silenced unless they allow suppressions) and sets it up on `workspace`: the
    /// baseline test run happens here, before anything changes.
    pub async fn start(
        &self,
        spec: TaskSpec,
        launch: &Launch<'_>,
        workspace: &dyn Workspace,
        cancel: &CancellationToken,
    ) -> Result<Started, String> {
        let spec = spec
            .with_test_edits(launch.config.allow_test_edits)
            .with_suppressions(launch.config.allow_suppressions);
        let host = self.host(setup::redactor(launch.config));
        let pending = host.begin(spec, &launch.config.budgets)?;
        let ready = pending
            .prepare(&self.setup(launch), workspace, cancel)
            .await?;
        Ok(started(ready))
    }

    /// Takes over the unfinished task `id` (a crash, or one waiting for
    /// the user): its ops reconciled with `workspace` (`adopt` is told the
    /// files the task had written, for a workspace that must take them as
    /// its own), then set up to go on.
    pub async fn resume(
        &self,
        id: &TaskId,
        launch: &Launch<'_>,
        workspace: &dyn Workspace,
        adopt: impl FnOnce(&[String]),
        cancel: &CancellationToken,
    ) -> Result<Resumed, String> {
        let host = self.host(setup::redactor(launch.config));
        let recovery = host
            .recover(id, workspace, &rein_core::tools::builtin(), adopt)
            .await?;
        let pending = match recovery {
            Recovery::Resumable(pending) => *pending,
            Recovery::NeedsUser { reason } => {
                let status = TaskEvent::Status(waiting(id, &reason));
                host.trace(id).event(id, &status);
                return Ok(Resumed::NeedsUser { reason });
            }
        };
        let ready = pending
            .prepare(&self.setup(launch), workspace, cancel)
            .await?;
        Ok(Resumed::Started(Box::new(started(ready))))
    }
}

impl TaskService {
    /// Undoes the ended task `id` (one this installation ran) on
    /// `workspace`: every file it changed put back as before it, keeping
    /// what the user typed since; a file
    /// where the user changed what the task changed is left as it is and
    /// reported (`undo.rs`).
    pub async fn undo(
        &self,
        id: &TaskId,
        workspace: &dyn Workspace,
    ) -> Result<crate::undo::UndoReport, String> {
        let undoer = crate::undo::Undoer {
            owner: &self.owner,
            installation: self.options.installation.as_deref(),
        };
        crate::undo::undo_task(&self.store, undoer, id, workspace).await
    }

    /// The diagnostic a user names by place (`FILE:LINE[:MESSAGE]`), as
    /// the project's checker reports it now: the checker runs in the
    /// sandbox with `config`'s settings, on the files as they are on disk.
    pub async fn find_diagnostic(
        &self,
        target: &ErrorTarget,
        config: &Config,
        cancel: &CancellationToken,
    ) -> Result<Diagnostic, String> {
        let launcher = setup::command_launcher(&self.options.rein, &self.root, config)?;
        let exec = ProcessExec::new()
            .with_launcher(launcher)
            .with_redactor(setup::redactor(config));
        let log_path = self
            .root
            .join(".rein/artifacts")
            .join(format!("find-{}", TaskId::generate().0))
            .join("check.log");
        fix_error::find(
            target,
            Find {
                root: &self.root,
                config,
                exec: &exec,
                log_path: &log_path,
                timeout: config.budgets.test_timeout,
                cancel,
            },
        )
        .await
    }
}

/// A task that waits for the user, as its trace and status say.
fn waiting(id: &TaskId, reason: &str) -> TaskStatus {
    TaskStatus {
        task_id: id.clone(),
        state: TaskState::WaitingUser,
        reason: Some(reason.to_owned()),
        turn: 0,
        max_turns: 0,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        unpriced_calls: 0,
        cause: None,
    }
}

fn started(ready: Ready) -> Started {
    let mut notices: Vec<Notice> = ready
        .prepared()
        .notices
        .iter()
        .cloned()
        .map(Notice::SetUp)
        .collect();
    if let Confinement::Degraded { missing, .. } = ready.prepared().exec.confinement() {
        notices.push(Notice::SandboxIncomplete { missing });
    }
    Started { ready, notices }
}
