//! `rein acp`: Rein as an Agent Client Protocol agent on stdio, so the
//! agent panels of Zed, JetBrains, Neovim (CodeCompanion, avante.nvim) and
//! Emacs (agent-shell) can host it. Built on Zed's SDK
//! (`agent-client-protocol`), as a front end over the task host like the
//! LSP server and `rein run`: a session is a workspace folder, each prompt
//! a task (a fix-test task when it names the test), approvals go through
//! `session/request_permission`, progress through `session/update`.
//!
//! Never: answers `end_turn` before the task's verdict (the final message
//! carries it, with its evidence); runs anything the LSP path would not;
//! sends a key in any update (`updates::redacted`).

mod approve;
mod plan;
mod prompt;
mod redact;
mod saved;
mod session;
mod terminal;
mod updates;
mod workspace;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    PromptResponse, SessionCapabilities, SessionListCapabilities, StopReason,
};
use agent_client_protocol::{Agent, Client, Stdio};
use rein_core::agent::Outcome;
use rein_core::budget::Spent;
use rein_core::cancel::CancelReason;
use rein_core::host::disk::DiskWorkspace;
use rein_core::ports::Evidence;
use rein_core::task::{TaskId, TaskState};
use rein_core::task_host::{FrontEnd, Recovery, TaskHost};
use tokio_util::sync::CancellationToken;

use self::approve::{AcpApprover, AcpConfirm, CurrentCall, Permissions};
use self::session::AcpSession;
use self::updates::AcpProgress;
use crate::{launch, settings};

type Connection = agent_client_protocol::v1::ConnectionTo<Client>;

pub fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("rein acp: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("rein acp: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The sessions of this connection, and what the client can do.
#[derive(Default)]
struct Sessions {
    all: Mutex<HashMap<String, Arc<AcpSession>>>,
    /// The client reads and writes files for Rein (its live buffers).
    client_fs: std::sync::atomic::AtomicBool,
    /// The client runs commands in its terminal (`terminal/*`).
    client_terminal: std::sync::atomic::AtomicBool,
}

impl Sessions {
    fn get(&self, id: &str) -> Result<Arc<AcpSession>, agent_client_protocol::Error> {
        self.all
            .lock()
            .ok()
            .and_then(|s| s.get(id).cloned())
            .ok_or_else(|| invalid_params(format!("no session {id}")))
    }
}

impl Sessions {
    fn insert(&self, session: AcpSession) {
        if let Ok(mut all) = self.all.lock() {
            all.insert(session.id.clone(), Arc::new(session));
        }
    }

    /// The folders this connection's sessions work in.
    fn roots(&self) -> Vec<std::path::PathBuf> {
        let Ok(all) = self.all.lock() else {
            return Vec::new();
        };
        let mut roots: Vec<std::path::PathBuf> = all.values().map(|s| s.root.clone()).collect();
        roots.sort();
        roots.dedup();
        roots
    }
}

/// `session/load`: the recorded session, replayed to the client before
/// the answer (as the protocol asks), and open again for prompts.
fn load_session(
    sessions: &Sessions,
    request: &LoadSessionRequest,
    cx: &Connection,
) -> Result<(), String> {
    let id = request.session_id.0.to_string();
    if sessions.get(&id).is_ok() {
        return Err(format!("the session {id} is open already"));
    }
    let session = AcpSession::open_as(id.clone(), &request.cwd, &request.mcp_servers)?;
    let installation = settings::user_state().and_then(|s| s.installation_id().ok());
    let loaded = saved::load(&session.root, &id, installation.as_deref())?;
    let redactor = launch::redactor(&session.config()?);
    for update in loaded.replay {
        let Some(notification) = redact::redacted(
            &redactor,
            &agent_client_protocol::v1::schema::SessionNotification::new(id.clone(), update),
        ) else {
            continue;
        };
        if let Err(error) = cx.send_notification(notification) {
            tracing::debug!(%error, "a replayed update was not sent");
        }
    }
    if let Ok(mut earlier) = session.earlier.lock() {
        *earlier = loaded.earlier;
    }
    session.set_interrupted(loaded.interrupted);
    tracing::info!(session = %id, root = %session.root.display(), "ACP session loaded");
    sessions.insert(session);
    Ok(())
}

fn invalid_params(message: String) -> agent_client_protocol::Error {
    agent_client_protocol::Error::invalid_params().data(serde_json::json!({ "message": message }))
}

async fn serve() -> Result<(), agent_client_protocol::Error> {
    let sessions = Arc::new(Sessions::default());
    let initialized = Arc::clone(&sessions);
    let new_sessions = Arc::clone(&sessions);
    let prompts = Arc::clone(&sessions);
    let cancels = Arc::clone(&sessions);
    let loads = Arc::clone(&sessions);
    let lists = Arc::clone(&sessions);
    Agent
        .v1()
        .name("rein")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                initialized.client_terminal.store(
                    request.client_capabilities.terminal,
                    std::sync::atomic::Ordering::SeqCst,
                );
                let fs = &request.client_capabilities.fs;
                initialized.client_fs.store(
                    fs.read_text_file && fs.write_text_file,
                    std::sync::atomic::Ordering::SeqCst,
                );
                responder.respond(
                    InitializeResponse::new(request.protocol_version)
                        .agent_capabilities(
                            AgentCapabilities::new()
                                .prompt_capabilities(
                                    PromptCapabilities::new().embedded_context(true),
                                )
                                .mcp_capabilities(McpCapabilities::new().http(true))
                                .load_session(true)
                                .session_capabilities(
                                    SessionCapabilities::new().list(SessionListCapabilities::new()),
                                ),
                        )
                        .agent_info(Implementation::new("rein", env!("CARGO_PKG_VERSION"))),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, _cx| match AcpSession::open(
                &request.cwd,
                &request.mcp_servers,
            ) {
                Ok(session) => {
                    let id = session.id.clone();
                    tracing::info!(session = %id, root = %session.root.display(), "ACP session");
                    new_sessions.insert(session);
                    responder.respond(NewSessionResponse::new(id))
                }
                Err(message) => responder.respond_with_error(invalid_params(message)),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| match load_session(
                &loads, &request, &cx,
            ) {
                Ok(()) => responder.respond(LoadSessionResponse::new()),
                Err(message) => responder.respond_with_error(invalid_params(message)),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ListSessionsRequest, responder, _cx| {
                let roots = match &request.cwd {
                    Some(cwd) if !cwd.is_absolute() => {
                        return responder.respond_with_error(invalid_params(format!(
                            "cwd must be an absolute path, got {}",
                            cwd.display()
                        )));
                    }
                    Some(cwd) => cwd.canonicalize().into_iter().collect(),
                    // The folders of this connection's sessions.
                    None => lists.roots(),
                };
                let installation = settings::user_state().and_then(|s| s.installation_id().ok());
                responder.respond(ListSessionsResponse::new(saved::list(
                    &roots,
                    installation.as_deref(),
                )))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx| {
                let session = match prompts.get(&request.session_id.0) {
                    Ok(session) => session,
                    Err(error) => return responder.respond_with_error(error),
                };
                let client = ClientOffers {
                    fs: prompts.client_fs.load(std::sync::atomic::Ordering::SeqCst),
                    terminal: prompts
                        .client_terminal
                        .load(std::sync::atomic::Ordering::SeqCst),
                };
                let cancel = CancellationToken::new();
                {
                    let Ok(mut running) = session.running.lock() else {
                        return responder
                            .respond_with_error(agent_client_protocol::Error::internal_error());
                    };
                    if running.is_some() {
                        return responder.respond_with_error(invalid_params(
                            "a prompt is already running in this session".into(),
                        ));
                    }
                    *running = Some(cancel.clone());
                }
                // Outside the dispatch loop: the task asks the client for
                // permissions, and `session/cancel` must get through.
                tokio::spawn(async move {
                    let stop = run_prompt(&session, &request, cx, cancel, client).await;
                    if let Ok(mut running) = session.running.lock() {
                        *running = None;
                    }
                    if let Err(error) = responder.respond(PromptResponse::new(stop)) {
                        tracing::warn!(%error, "the prompt's answer was not sent");
                    }
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                if let Ok(session) = cancels.get(&notification.session_id.0)
                    && let Ok(running) = session.running.lock()
                    && let Some(cancel) = running.as_ref()
                {
                    cancel.cancel();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await
}

/// What the client offers to do for Rein.
#[derive(Clone, Copy)]
struct ClientOffers {
    fs: bool,
    terminal: bool,
}

/// What a prompt does: start a task, or go on with one a crash stopped.
enum Start {
    New(rein_core::task::TaskSpec),
    Resume(TaskId),
}

/// Runs one prompt as a task; how it ended, as ACP's stop reason (the
/// final message, with the verdict and its evidence, is sent before).
async fn run_prompt(
    session: &Arc<AcpSession>,
    request: &PromptRequest,
    cx: Connection,
    cancel: CancellationToken,
    client: ClientOffers,
) -> StopReason {
    let call = Arc::new(CurrentCall::default());
    let permissions = |redactor: &rein_models::Redactor, outside_sandbox: bool| Permissions {
        cx: cx.clone(),
        session_id: session.id.clone(),
        rules: Arc::clone(&session.rules),
        call: Arc::clone(&call),
        redactor: redactor.clone(),
        cancel: cancel.clone(),
        outside_sandbox,
    };
    // The answer decides the settings the task runs with.
    if let Some(question) = session.take_trust_question() {
        let redactor = session
            .config()
            .map(|c| launch::redactor(&c))
            .unwrap_or_default();
        let answer = permissions(&redactor, false)
            .ask_trust(&question.text)
            .await;
        if let Err(e) = session.decide_trust(question, answer) {
            tracing::warn!(error = %e, "the trust answer could not be applied");
        }
    }
    let config = match session.config() {
        Ok(config) => config,
        Err(e) => {
            tracing::error!(error = %e, "no settings for the prompt");
            return StopReason::EndTurn;
        }
    };
    let config = &config;
    let redactor = launch::redactor(config);
    let in_terminal = config.client_terminal && client.terminal;
    let permissions = permissions(&redactor, in_terminal);
    // Until the task is prepared (and its window known), messages go out
    // through a progress sink of its own.
    let say = |text: &str| {
        AcpProgress::new(
            cx.clone(),
            session.id.clone(),
            session.root.clone(),
            redactor.clone(),
            Arc::clone(&call),
            0,
        )
        .say(text)
    };
    for notice in session.take_notices() {
        say(&format!("{notice}\n\n"));
    }
    let disk = match DiskWorkspace::new(&session.root) {
        Ok(disk) => disk,
        Err(e) => {
            say(&format!(
                "Rein cannot work in {}: {e}\n",
                session.root.display()
            ));
            return StopReason::EndTurn;
        }
    };
    let start = if saved::is_command(&request.prompt, saved::RESUME) {
        match session.take_interrupted() {
            Some(task) => Start::Resume(task),
            None => {
                say("There is nothing to resume in this session.\n");
                return StopReason::EndTurn;
            }
        }
    } else {
        match prompt::task_spec(&disk, &request.prompt, session.earlier_context()).await {
            Ok(spec) => Start::New(spec.with_test_edits(config.allow_test_edits)),
            Err(why) => {
                say(&format!("{why}\n"));
                return StopReason::EndTurn;
            }
        }
    };
    let confirm = Arc::new(AcpConfirm {
        permissions: permissions.clone(),
        root: session.root.clone(),
    });
    let disk = disk.with_confirm(confirm.clone());
    let (workspace, client_files): (Arc<dyn rein_core::workspace::Workspace>, _) = if client.fs {
        let files = workspace::ClientFiles {
            cx: cx.clone(),
            session_id: session.id.clone(),
        };
        let live = Arc::new(workspace::AcpWorkspace::new(disk, files, confirm));
        (Arc::clone(&live) as _, Some(live))
    } else {
        (Arc::new(disk), None)
    };
    let host = match rein_store::Store::open(&rein_store::state_db_path(&session.root)) {
        Ok(store) => TaskHost {
            store: Arc::new(store),
            owner: rein_core::journal::owner_id(),
            installation: settings::user_state().and_then(|s| s.installation_id().ok()),
            root: session.root.clone(),
            redactor: redactor.clone(),
        },
        Err(e) => {
            say(&format!(
                "Rein could not start the task: cannot open the task state: {e}\n"
            ));
            return StopReason::EndTurn;
        }
    };
    let pending = match start {
        Start::New(spec) => {
            let task = spec.id.clone();
            let pending = host.begin(spec, &config.budgets);
            if pending.is_ok() {
                let words = redactor
                    .redact(&prompt::prompt_words(&request.prompt))
                    .into_owned();
                if let Err(e) =
                    saved::record(&host.store, &session.id, &session.root, &task, &words)
                {
                    // The task runs; only `session/load` will not find it.
                    tracing::warn!(error = %e, "the session's task was not recorded");
                }
            }
            pending
        }
        Start::Resume(task) => {
            let adopt = |paths: &[String]| {
                if let Some(files) = &client_files {
                    files.adopt_written(paths);
                }
            };
            match host
                .recover(
                    &task,
                    workspace.as_ref(),
                    &rein_core::tools::builtin(),
                    adopt,
                )
                .await
            {
                Ok(Recovery::Resumable(pending)) => Ok(*pending),
                Ok(Recovery::NeedsUser { reason }) => {
                    // Reality is unknown: the user looks first, then says go on.
                    session.set_interrupted(Some(task));
                    say(&format!(
                        "{reason}\nSend /{} when you have.\n",
                        saved::RESUME
                    ));
                    return StopReason::EndTurn;
                }
                Err(e) => Err(e),
            }
        }
    };
    let rein = launch::this_binary();
    let launch = launch::Launch {
        root: &session.root,
        config,
        rein: &rein,
        // ACP has no way to put the model's questions to the user.
        answers_questions: false,
        mcp: &session.mcp,
    };
    let ready = match pending {
        Ok(pending) => pending.prepare(&launch, workspace.as_ref(), &cancel).await,
        Err(e) => Err(e),
    };
    let ready = match ready {
        Ok(ready) => ready,
        Err(e) => {
            say(&format!("Rein could not start the task: {e}\n"));
            return StopReason::EndTurn;
        }
    };
    for notice in &ready.prepared().notices {
        say(&format!("Warning: {notice}\n"));
    }
    let ready = if in_terminal {
        ready.route_commands(|inner| {
            Arc::new(terminal::ClientTerminal {
                inner,
                cx: cx.clone(),
                session_id: session.id.clone(),
                call: Arc::clone(&call),
            })
        })
    } else {
        if config.client_terminal {
            say(
                "Warning: client_terminal is set, but this panel offers no terminal: commands run in Rein's sandbox.\n",
            );
        }
        ready
    };
    let progress = Arc::new(AcpProgress::new(
        cx.clone(),
        session.id.clone(),
        session.root.clone(),
        redactor,
        Arc::clone(&call),
        ready.prepared().config.context.window_tokens,
    ));
    let front = FrontEnd {
        workspace,
        approver: Arc::new(AcpApprover(permissions)),
        events: Arc::clone(&progress) as _,
    };
    let task = ready.spec().id.clone();
    let goal = ready.spec().goal.clone();
    let outcome = ready.run(front, cancel, CancelReason::default()).await;
    session.remember(
        goal.lines().next().unwrap_or_default(),
        &outcome.state.to_string(),
        &outcome.reason,
    );
    tracing::info!(%task, state = %outcome.state, reason = %outcome.reason, "ACP prompt ended");
    progress.say(&final_message(&outcome, &progress.last_evidence()));
    stop_reason(&outcome)
}

/// How a task's end reads in ACP's terms: `end_turn` once the task has a
/// verdict (good or bad: the final message says which), `cancelled`,
/// `max_turn_requests` for a budget, `refusal` for a model that refused.
fn stop_reason(outcome: &Outcome) -> StopReason {
    match outcome.state {
        TaskState::Cancelled => StopReason::Cancelled,
        TaskState::BudgetExhausted => StopReason::MaxTurnRequests,
        TaskState::Failed if outcome.reason.starts_with("the model refused") => StopReason::Refusal,
        _ => StopReason::EndTurn,
    }
}

/// The task's verdict for the user, with the evidence behind it.
fn final_message(outcome: &Outcome, evidence: &[Evidence]) -> String {
    let evidence = if outcome.evidence.is_empty() {
        evidence
    } else {
        &outcome.evidence
    };
    verdict_message(outcome.state, &outcome.reason, evidence, &outcome.spent)
}

/// How a task ended, for the user: the verdict, its evidence, the spend
/// (also what a loaded session replays).
fn verdict_message(state: TaskState, reason: &str, evidence: &[Evidence], spent: &Spent) -> String {
    let head = match state {
        TaskState::Succeeded => "Done, verified by Rein",
        TaskState::Unverified => "Not verified",
        TaskState::Failed => "Not done",
        TaskState::BudgetExhausted => "Stopped: a budget ran out",
        TaskState::Cancelled => "Cancelled",
        TaskState::WaitingUser => "Waiting for you",
        _ => "Ended",
    };
    let mut text = format!("\n**{head}**: {reason}\n");
    for check in evidence {
        let exit = check
            .exit_code
            .map_or_else(|| "no exit code".to_owned(), |c| format!("exit {c}"));
        text.push_str(&format!(
            "- {}: `{}` → {exit}, log {}\n",
            check.check, check.command, check.log_path
        ));
    }
    text.push_str(&format!(
        "Spent: {} turns, {} tokens in, {} out, ${:.4}.\n",
        spent.turns, spent.usage.input_tokens, spent.usage.output_tokens, spent.cost_usd
    ));
    text
}
