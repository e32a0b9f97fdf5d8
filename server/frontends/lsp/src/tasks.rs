//! Starting and running a session's tasks: started by a command, run in
//! the background (never inside a handler); the table that cancels,
//! answers and shuts them down is `running.rs`.

use std::sync::Arc;

use async_trait::async_trait;
use rein_app::service::{Launch, Notice, Resumed, Started};
use rein_core::cancel::CancelReason;
use rein_core::config::Config;
use rein_core::inert;
use rein_core::ports::{
    ApprovalDecision, Approver, CommandApproval, ProgressSink, TaskEvent, TaskStatus,
};
use rein_core::task::{TaskId, TaskSpec, TaskState};
use rein_core::task_host::FrontEnd;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType};

use crate::ext::WaitingKind;
use crate::lsp_progress::{self, LspProgress};
use crate::lsp_trust;
use crate::lsp_workspace::LspWorkspace;
use crate::session::Session;
use rein_app::settings;

/// Starts `spec` in the background; returns its id at once.
pub fn start(session: &Arc<Session>, client: &Client, spec: TaskSpec) -> TaskId {
    let (id, title) = (spec.id.clone(), spec.title());
    let work = Work::Start(spec);
    spawn(session, client, id, title, work)
}

/// Resumes a task left unfinished (a crash, or waiting for the user):
/// reconciles it first, then continues it in the background.
pub fn resume(session: &Arc<Session>, client: &Client, id: TaskId) -> TaskId {
    let title = format!("Resume task {id}");
    spawn(session, client, id.clone(), title, Work::Resume(id))
}

fn spawn(session: &Arc<Session>, client: &Client, id: TaskId, title: String, work: Work) -> TaskId {
    let cancel = CancellationToken::new();
    let reason = CancelReason::default();
    let progress = LspProgress::start(client.clone(), Arc::clone(session), id.clone(), title);
    let forwarder = progress.take_forwarder();
    let future = run(
        Arc::clone(session),
        client.clone(),
        id.clone(),
        work,
        cancel.clone(),
        reason.clone(),
        progress,
    );
    session
        .tasks
        .register(&id.0, cancel, reason, lsp_progress::token(&id));
    let session_for_end = Arc::clone(session);
    let key = id.0.clone();
    let handle = tokio::spawn(async move {
        future.await;
        // The task is over only once the editor has been told: so
        // `shutdown` (which waits for this) answers after the final
        // status, not before.
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        session_for_end.tasks.remove(&key);
    });
    session.tasks.set_handle(&id.0, handle);
    id
}

/// What a background task does.
enum Work {
    Start(TaskSpec),
    Resume(TaskId),
}

async fn run(
    session: Arc<Session>,
    client: Client,
    id: TaskId,
    work: Work,
    cancel: CancellationToken,
    reason: CancelReason,
    progress: Arc<LspProgress>,
) {
    let progress_sink = Arc::clone(&progress);
    let result = match work {
        Work::Start(spec) => try_run(&session, &client, spec, cancel, reason, progress_sink).await,
        Work::Resume(id) => try_resume(&session, &client, id, cancel, reason, progress_sink).await,
    };
    if let Err(reason) = result {
        tracing::warn!(task = %id, %reason, "task could not start");
        client
            .show_message(
                MessageType::ERROR,
                format!("Rein could not start the task: {reason}"),
            )
            .await;
        progress.event(
            &id,
            &TaskEvent::Status(final_status(&id, TaskState::Failed, reason)),
        );
    }
}

fn final_status(id: &TaskId, state: TaskState, reason: String) -> TaskStatus {
    TaskStatus {
        task_id: id.clone(),
        state,
        reason: Some(reason),
        turn: 0,
        max_turns: 0,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        unpriced_calls: 0,
        cause: None,
    }
}

/// What starting and resuming a task both need first: the workspace
/// folder, its configuration (the settings the editor has, and the
/// workspace's own file only as far as the user trusts it), and the
/// editor-backed workspace.
async fn task_context(
    session: &Arc<Session>,
    client: &Client,
    id: &TaskId,
    progress: &Arc<LspProgress>,
) -> Result<(Config, Arc<LspWorkspace>), String> {
    let root = session
        .root
        .get()
        .cloned()
        .ok_or("no workspace folder is open in the editor")?;
    session.settings_settled().await;
    let assessment = settings::Assessment::of(&root, &session.settings())?;
    let trust = lsp_trust::decide(session, client, &root, &assessment).await;
    let config = assessment.config(&trust)?;
    lsp_trust::tell_ignored(session, client, &assessment, &trust, &config.ignored).await;
    let workspace = Arc::new(
        LspWorkspace::new(
            root.clone(),
            client.clone(),
            Arc::clone(session),
            id.clone(),
            Arc::clone(progress),
        )
        .map_err(|e| e.to_string())?,
    );
    Ok((config, workspace))
}

/// What the user should know before a task runs: its set-up's notices (an
/// MCP server that did not start), and, once per session, that this machine
/// cannot give commands the whole sandbox (every command is then asked).
async fn tell_before_run(session: &Session, client: &Client, notices: &[Notice]) {
    for notice in notices {
        match notice {
            Notice::SetUp(notice) => {
                client
                    .show_message(MessageType::WARNING, format!("Rein: {notice}"))
                    .await;
            }
            Notice::SandboxIncomplete { missing } if session.first_sandbox_notice() => {
                let message = format!(
                    "Rein's sandbox is incomplete on this machine ({}). Every command, the tests included, will be asked about before it runs.",
                    missing.join("; ")
                );
                tracing::warn!("{message}");
                client.show_message(MessageType::WARNING, message).await;
            }
            Notice::SandboxIncomplete { .. } => {}
        }
    }
}

/// What the editor gives a task: its live buffers, the user through
/// message requests, and progress.
fn front_end(
    session: &Arc<Session>,
    client: &Client,
    workspace: Arc<LspWorkspace>,
    progress: Arc<LspProgress>,
) -> FrontEnd {
    FrontEnd {
        workspace,
        approver: Arc::new(LspApprover {
            client: client.clone(),
            session: Arc::clone(session),
            waits: Arc::clone(&progress),
        }),
        events: progress,
    }
}

async fn try_resume(
    session: &Arc<Session>,
    client: &Client,
    id: TaskId,
    cancel: CancellationToken,
    reason: CancelReason,
    progress: Arc<LspProgress>,
) -> Result<(), String> {
    let (config, workspace) = task_context(session, client, &id, &progress).await?;
    let service = session.service()?;
    let launch = launch(&config);
    let adopt = |paths: &[String]| workspace.adopt_edited(paths);
    let resumed = service
        .resume(&id, &launch, workspace.as_ref(), adopt, &cancel)
        .await?;
    let started = match resumed {
        Resumed::Started(started) => *started,
        Resumed::NeedsUser { reason } => {
            // Reality is unknown: the user looks before anything else happens.
            client
                .show_message(MessageType::WARNING, reason.clone())
                .await;
            progress.event(
                &id,
                &TaskEvent::Status(final_status(&id, TaskState::WaitingUser, reason)),
            );
            return Ok(());
        }
    };
    run_started(
        session, client, started, workspace, progress, cancel, reason,
    )
    .await
}

async fn try_run(
    session: &Arc<Session>,
    client: &Client,
    spec: TaskSpec,
    cancel: CancellationToken,
    reason: CancelReason,
    progress: Arc<LspProgress>,
) -> Result<(), String> {
    let (config, workspace) = task_context(session, client, &spec.id, &progress).await?;
    let service = session.service()?;
    let started = service
        .start(spec, &launch(&config), workspace.as_ref(), &cancel)
        .await?;
    run_started(
        session, client, started, workspace, progress, cancel, reason,
    )
    .await
}

/// How the editor's tasks are set up: the editor shows the model's
/// questions and takes answers.
fn launch(config: &Config) -> Launch<'_> {
    Launch {
        config,
        answers_questions: true,
    }
}

/// Runs a task the service set up, after telling the user what they
/// should know.
async fn run_started(
    session: &Arc<Session>,
    client: &Client,
    started: Started,
    workspace: Arc<LspWorkspace>,
    progress: Arc<LspProgress>,
    cancel: CancellationToken,
    reason: CancelReason,
) -> Result<(), String> {
    tell_before_run(session, client, &started.notices).await;
    let id = started.ready.spec().id.clone();
    // The editor is sent what the model wrote only through the task's
    // own redactor: the key and the environment's secrets never reach it.
    progress.redact_with(started.ready.prepared().config.redactor.clone());
    let front = front_end(session, client, workspace, progress);
    let outcome = started.ready.run(front, cancel, reason).await;
    tracing::info!(task = %id, state = %outcome.state, reason = %outcome.reason, "task ended");
    Ok(())
}

/// The human, through the editor: commands are approved with
/// `window/showMessageRequest`; questions are shown and answered with the
/// `rein.answer` command.
pub struct LspApprover {
    client: Client,
    session: Arc<Session>,
    /// Shows the task as waiting for the user while a question is open.
    waits: Arc<LspProgress>,
}

const ALLOW_ONCE: &str = "Allow once";
const ALLOW_FOR_TASK: &str = "Allow for this task";
const DENY: &str = "Deny";

#[async_trait]
impl Approver for LspApprover {
    async fn approve_command(&self, request: &CommandApproval) -> ApprovalDecision {
        // The command is the model's text: shown inert, and flagged when
        // it holds characters that would make it read other than it runs.
        let hidden = inert::escapes(&request.command);
        let mut message = format!(
            "Rein wants to run “{}” in {} ({}).",
            inert::line(&request.command),
            inert::line(&request.cwd.display().to_string()),
            request.rule
        );
        if request.network {
            message.push_str(
                " It wants the network: commands have loopback only unless you allow it.",
            );
        }
        if !hidden.is_empty() {
            message.push_str(&format!(
                " Careful: it contains control or invisible characters ({}), shown escaped; it may not do what it seems to.",
                hidden.join(", ")
            ));
        }
        let actions = [ALLOW_ONCE, ALLOW_FOR_TASK, DENY]
            .map(|title| MessageActionItem {
                title: title.to_owned(),
                properties: Default::default(),
            })
            .to_vec();
        let _waiting = self.waits.waiting(
            WaitingKind::Approval,
            format!(
                "“{}”",
                inert::line(&request.command)
                    .chars()
                    .take(60)
                    .collect::<String>()
            ),
        );
        let ask = self
            .client
            .show_message_request(MessageType::WARNING, message, Some(actions));
        // No answer in time is a no: a command never runs unapproved.
        match tokio::time::timeout(self.session.approval_timeout(), ask).await {
            Ok(Ok(Some(choice))) if choice.title == ALLOW_ONCE => ApprovalDecision::AllowOnce,
            Ok(Ok(Some(choice))) if choice.title == ALLOW_FOR_TASK => {
                ApprovalDecision::AllowForTask
            }
            _ => ApprovalDecision::Deny,
        }
    }

    async fn ask_user(&self, task: &TaskId, question: &str) -> Option<String> {
        let answer = self.session.tasks.wait_for_answer(&task.0)?;
        let _waiting = self.waits.waiting(WaitingKind::Answer, question);
        self.client
            .show_message(
                MessageType::INFO,
                format!(
                    "Rein asks: {}\n(Answer with the “Rein: Answer” command.)",
                    inert::block(question)
                ),
            )
            .await;
        answer.await.ok()
    }
}
