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
//! sends a key in any update (`redact::redacted`).

mod approve;
mod folder;
mod kind;
mod lines;
mod plan;
mod prompt;
mod read_cache;
mod redact;
mod run;
mod saved;
mod session;
mod terminal;
mod transport;
mod undo;
mod updates;
mod verdict;
mod workspace;
mod writes;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    PromptResponse, SessionCapabilities, SessionListCapabilities,
};
use agent_client_protocol::{Agent, Client};
use rein_core::cancel::CancelReason;
use rein_core::task_host::RunningTasks;
use tokio_util::sync::CancellationToken;

use self::run::{ClientOffers, run_prompt};
use self::session::AcpSession;
use rein_app::{settings, setup as launch};

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
    /// The running prompts, one per session at most, under the session's
    /// id (tagged with it too): what `session/cancel` cancels and what
    /// winds down when the client goes.
    running: Arc<RunningTasks>,
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
        redact::send_update(cx, &redactor, &id, update);
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
    let served = Agent
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
                let (cancel, reason) = (CancellationToken::new(), CancelReason::default());
                let running = Arc::clone(&prompts.running);
                if !running.register_unless_tagged(
                    &session.id,
                    cancel.clone(),
                    reason.clone(),
                    session.id.clone(),
                ) {
                    return responder.respond_with_error(invalid_params(
                        "a prompt is already running in this session".into(),
                    ));
                }
                // Outside the dispatch loop: the task asks the client for
                // permissions, and `session/cancel` must get through.
                let table = Arc::clone(&running);
                let prompt_id = session.id.clone();
                let handle = tokio::spawn(async move {
                    let stop =
                        run_prompt(&session, &request, cx, (cancel, reason), &table, client).await;
                    table.remove(&session.id);
                    if let Err(error) = responder.respond(PromptResponse::new(stop)) {
                        tracing::warn!(%error, "the prompt's answer was not sent");
                    }
                });
                running.set_handle(&prompt_id, handle);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                cancels.running.cancel_by_tag(&notification.session_id.0);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        // Not the SDK's own stdio: see transport.rs.
        .connect_to(transport::stdio(lines::LineLimits::default()))
        .await;
    // The client is gone: its prompts' tasks stop saying why, and their
    // histories end consistently before the process exits.
    sessions.running.shutdown(CLIENT_GONE).await;
    served
}

/// Why a prompt still running when the client went stopped.
const CLIENT_GONE: &str = "cancelled: the client closed the connection";
