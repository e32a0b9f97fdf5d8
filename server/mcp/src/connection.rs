//! One MCP server, connected: started through the task's launcher (the
//! command sandbox), its tools listed, its calls made with a timeout and
//! cancellation, and restarted with backoff when it dies. Every failure is
//! a [`CallError`] whose text the model can act on.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rein_core::config::mcp::{McpServer, McpTransport, expand};
use rein_core::exec::{CommandKind, CommandSpec, Launcher, SandboxMode};
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities,
    ClientConfig, ClientRequest, Implementation, ProgressNotificationParam, ServerResult,
    Tool as McpToolInfo,
};
use rmcp::service::{
    NotificationContext, Peer, PeerRequestOptions, RoleClient, RunningService, ServiceError,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::progress::{Progress, Progresses};

/// Restarts allowed per server and task: a server that keeps dying is
/// left down, and its tools say so.
pub const MAX_RESTARTS: u32 = 3;
/// The first restart waits this long, each next one twice as long.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// A stderr line longer than this is cut in the log.
const STDERR_LINE: usize = 2_000;
/// The last stderr lines kept, to say why a server did not start.
const STDERR_KEPT: usize = 6;

/// How server processes are started: the task's launcher (the sandbox),
/// the workspace, and the environment they inherit.
#[derive(Clone)]
pub struct Spawner {
    /// `None`: unconfined (tests of this crate only).
    pub launcher: Option<Arc<dyn Launcher>>,
    pub root: PathBuf,
    /// The environment a server starts from, already scrubbed of secrets.
    pub base_env: Vec<(OsString, OsString)>,
    /// Where `${NAME}` in the settings is looked up (Rein's environment).
    pub lookup: Lookup,
}

/// A variable's value by name.
pub type Lookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Why a server could not start or a call did not complete.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("{0}")]
    Start(String),
    #[error(
        "the MCP server `{server}` did not answer within {seconds} s; the call was cancelled (it may have done part of its work)"
    )]
    Timeout { server: String, seconds: u64 },
    #[error(
        "the MCP server `{server}` stopped during the call, so what the call did is unknown; {next}"
    )]
    Crashed {
        server: String,
        /// What happens next: a process is restarted, a URL connected to
        /// again.
        next: &'static str,
    },
    #[error(
        "the MCP server `{server}` is down ({why}) and was not restarted: it failed {restarts} times in this task"
    )]
    GaveUp {
        server: String,
        why: String,
        restarts: u32,
    },
    #[error(
        "the MCP server `{server}` could not be reached ({message}); whether the call ran is unknown"
    )]
    Unreachable { server: String, message: String },
    #[error("the MCP server `{server}` could not be reached ({message}), so the call did not run")]
    NotReached { server: String, message: String },
    /// The server was down and could not be started again.
    #[error("{why}; so the call did not run")]
    NotRun { why: String },
    #[error("the MCP server `{server}` refused the call: {message}")]
    Refused { server: String, message: String },
    #[error("cancelled: the task was cancelled during the call")]
    Cancelled,
}

/// Notices `notifications/tools/list_changed`, and passes each call's
/// `notifications/progress` on to it.
#[derive(Clone)]
struct Handler {
    generation: Arc<AtomicU64>,
    progress: Progresses,
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.generation.fetch_add(1, Ordering::SeqCst);
        std::future::ready(())
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.progress.report(params);
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("rein", env!("CARGO_PKG_VERSION")),
        )
    }
}

struct Live {
    service: RunningService<RoleClient, Handler>,
    /// The server's process group, killed whole when the task ends.
    group: Option<i32>,
}

enum State {
    Live(Live),
    Down { why: String },
}

/// A server, connected: one task's, or shared by the tasks of a session
/// ([`crate::pool::McpPool`]).
pub struct Connection {
    pub server: McpServer,
    spawner: Spawner,
    state: tokio::sync::Mutex<State>,
    /// Bumped whenever what the server offers may have changed (it said
    /// so, or it was restarted): each task compares it with the one it
    /// last saw, so tasks sharing the server each notice the change.
    generation: Arc<AtomicU64>,
    /// Calls waiting for progress reports (kept across restarts).
    progress: Progresses,
    restarts: std::sync::atomic::AtomicU32,
}

impl Connection {
    /// Starts `server` and lists its tools (all of them: which are offered
    /// is the caller's choice).
    pub async fn start(
        server: McpServer,
        spawner: Spawner,
    ) -> Result<(Arc<Connection>, Vec<McpToolInfo>), CallError> {
        let handler = Handler {
            generation: Arc::new(AtomicU64::new(0)),
            progress: Progresses::default(),
        };
        let live = connect(&server, &spawner, &handler).await?;
        let tools = list(&server, live.service.peer()).await?;
        let connection = Arc::new(Connection {
            server,
            spawner,
            state: tokio::sync::Mutex::new(State::Live(live)),
            generation: handler.generation,
            progress: handler.progress,
            restarts: Default::default(),
        });
        Ok((connection, tools))
    }

    /// Changes whenever the server's tools may have changed.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Whether a call may still reach the server: it is up, or it may be
    /// restarted. A server that failed [`MAX_RESTARTS`] times, or was shut
    /// down, is not.
    pub async fn usable(&self) -> bool {
        match &*self.state.lock().await {
            State::Live(live) if !live.service.peer().is_transport_closed() => true,
            _ => self.restarts.load(Ordering::SeqCst) < MAX_RESTARTS,
        }
    }

    /// Its tools now.
    pub async fn tools(&self) -> Result<Vec<McpToolInfo>, CallError> {
        let peer = self.peer(&CancellationToken::new()).await?;
        list(&self.server, &peer).await
    }

    /// Calls `tool` with `arguments`, within the server's tool timeout and
    /// until `cancel`; the result as the protocol's JSON. The server's
    /// progress reports for the call go to `progress` (when given).
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        cancel: &CancellationToken,
        progress: Option<tokio::sync::mpsc::Sender<Progress>>,
    ) -> Result<Value, CallError> {
        let peer = self.peer(cancel).await.map_err(|error| match error {
            CallError::Start(why) => CallError::NotRun { why },
            other => other,
        })?;
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let server = self.server.name.clone();
        // Dropping the call (timeout, cancel) sends `notifications/cancelled`.
        let outcome = tokio::select! {
            () = cancel.cancelled() => return Err(CallError::Cancelled),
            outcome = tokio::time::timeout(self.server.tool_timeout, self.call_watched(&peer, params, progress)) => outcome,
        };
        match outcome {
            Err(_) => Err(CallError::Timeout {
                server,
                seconds: self.server.tool_timeout.as_secs().max(1),
            }),
            Ok(Ok(result)) => {
                let result = match result {
                    ServerResult::CallToolResult(result) => serde_json::to_value(result),
                    // A result with nothing but metadata: no content.
                    ServerResult::EmptyResult(_) => Ok(Value::Object(Default::default())),
                    ServerResult::CustomResult(custom) => Ok(custom.0),
                    _ => {
                        return Err(CallError::Refused {
                            server,
                            message: "it answered with a kind of result Rein does not read (a task, or a request for input)".into(),
                        });
                    }
                };
                result.map_err(|e| CallError::Refused {
                    server,
                    message: format!("its result could not be read: {e}"),
                })
            }
            Ok(Err(ServiceError::McpError(error))) => Err(CallError::Refused {
                server,
                message: error.message.to_string(),
            }),
            Ok(Err(ServiceError::Timeout { .. })) => Err(CallError::Timeout {
                server,
                seconds: self.server.tool_timeout.as_secs().max(1),
            }),
            // HTTP: sending failed. Only a connection never made is sure
            // not to have reached the server; the session may recover by
            // the next call.
            Ok(Err(ServiceError::TransportSend(error))) => {
                // The transport's own error, without rmcp's type names.
                let message = error.error.to_string();
                Err(if never_connected(error.error.as_ref()) {
                    CallError::NotReached { server, message }
                } else {
                    CallError::Unreachable { server, message }
                })
            }
            // The connection ended with the call in flight: the server
            // stopped (a process that exited, an HTTP server that went
            // away), whatever `is_transport_closed` says yet.
            Ok(Err(ServiceError::TransportClosed)) => {
                self.mark_down("it stopped during a call".to_owned()).await;
                Err(CallError::Crashed {
                    server,
                    next: self.after_a_crash(),
                })
            }
            Ok(Err(error)) => {
                if peer.is_transport_closed() {
                    self.mark_down(format!("it stopped: {error}")).await;
                    Err(CallError::Crashed {
                        server,
                        next: self.after_a_crash(),
                    })
                } else {
                    Err(CallError::Refused {
                        server,
                        message: error.to_string(),
                    })
                }
            }
        }
    }

    /// `tools/call` with `params`; the server's progress reports for it
    /// go to `progress`. Dropped before the answer, it tells the server
    /// the call is cancelled.
    async fn call_watched(
        &self,
        peer: &Peer<RoleClient>,
        params: CallToolRequestParams,
        progress: Option<tokio::sync::mpsc::Sender<Progress>>,
    ) -> Result<ServerResult, ServiceError> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await?;
        // Until the answer: then its reports stop.
        let _watch = progress.map(|to| self.progress.watch(handle.progress_token.clone(), to));
        let mut abandoned = Abandoned {
            peer: peer.clone(),
            id: Some(handle.id.clone()),
        };
        let result = handle.await_response().await;
        abandoned.id = None;
        result
    }

    /// A live peer: the running one, or a restarted one (with backoff) if
    /// the server died, up to [`MAX_RESTARTS`].
    /// One restart at a time: the lock is held through it, so calls
    /// waiting for the server get the restarted one.
    async fn peer(&self, cancel: &CancellationToken) -> Result<Peer<RoleClient>, CallError> {
        let mut state = self.state.lock().await;
        let why = match &*state {
            State::Live(live) if !live.service.peer().is_transport_closed() => {
                return Ok(live.service.peer().clone());
            }
            State::Live(_) => "it stopped".to_owned(),
            State::Down { why } => why.clone(),
        };
        let restarts = self.restarts.load(Ordering::SeqCst);
        if restarts >= MAX_RESTARTS {
            *state = State::Down { why: why.clone() };
            return Err(CallError::GaveUp {
                server: self.server.name.clone(),
                why,
                restarts,
            });
        }
        let restarts = restarts + 1;
        self.restarts.store(restarts, Ordering::SeqCst);
        tracing::warn!(server = %self.server.name, restarts, "restarting the MCP server ({why})");
        let restart = async {
            tokio::time::sleep(FIRST_BACKOFF * 2u32.pow(restarts - 1)).await;
            let handler = Handler {
                generation: Arc::clone(&self.generation),
                progress: self.progress.clone(),
            };
            connect(&self.server, &self.spawner, &handler).await
        };
        let restarted = tokio::select! {
            () = cancel.cancelled() => Err(CallError::Cancelled),
            restarted = restart => restarted,
        };
        match restarted {
            Ok(live) => {
                let peer = live.service.peer().clone();
                *state = State::Live(live);
                // What it offers may differ after a restart.
                self.generation.fetch_add(1, Ordering::SeqCst);
                Ok(peer)
            }
            Err(error) => {
                *state = State::Down {
                    why: error.to_string(),
                };
                Err(error)
            }
        }
    }

    /// What happens after the server stopped during a call.
    fn after_a_crash(&self) -> &'static str {
        match self.server.transport {
            McpTransport::Stdio { .. } => "it will be restarted for the next call",
            McpTransport::Http { .. } => "Rein connects to it again for the next call",
        }
    }

    async fn mark_down(&self, why: String) {
        let mut state = self.state.lock().await;
        if let State::Live(live) = &*state {
            kill_group(live.group);
        }
        *state = State::Down { why };
    }

    /// Stops the server (and whatever it started).
    pub async fn shutdown(&self) {
        let mut state = self.state.lock().await;
        // Never restarted after this.
        self.restarts.store(MAX_RESTARTS, Ordering::SeqCst);
        if let State::Live(live) = std::mem::replace(
            &mut *state,
            State::Down {
                why: "it was stopped (its task or Rein's session ended)".into(),
            },
        ) {
            let group = live.group;
            let _ = tokio::time::timeout(Duration::from_secs(2), live.service.cancel()).await;
            kill_group(group);
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Ok(state) = self.state.try_lock()
            && let State::Live(live) = &*state
        {
            kill_group(live.group);
        }
    }
}

/// A call whose answer nobody waits for any more: the server is told it is
/// cancelled (`notifications/cancelled`), as MCP asks.
struct Abandoned {
    peer: Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let cancelled =
                CancelledNotificationParam::new(Some(id), Some("cancelled by Rein".to_owned()));
            if let Err(error) = peer.notify_cancelled(cancelled).await {
                tracing::debug!(%error, "notifications/cancelled not sent");
            }
        });
    }
}

/// Why `initialize` failed, in the transport's words (rmcp's own text
/// names its transport's Rust types).
fn init_failure(error: &rmcp::service::ClientInitializeError) -> String {
    match error {
        rmcp::service::ClientInitializeError::TransportError { error, context } => {
            format!("{}; while trying to {context}", error.error)
        }
        other => other.to_string(),
    }
}

/// Whether `error` (a transport's) is a connection that was never made:
/// nothing was sent, so nothing ran.
fn never_connected(error: &(dyn std::error::Error + 'static)) -> bool {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(StreamableHttpError::Client(http)) =
            error.downcast_ref::<StreamableHttpError<crate::http::HttpError>>()
        {
            return http.is_connect();
        }
        cause = error.source();
    }
    false
}

fn kill_group(group: Option<i32>) {
    if let Some(group) = group.filter(|g| *g > 1) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(group),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

async fn list(server: &McpServer, peer: &Peer<RoleClient>) -> Result<Vec<McpToolInfo>, CallError> {
    match tokio::time::timeout(server.startup_timeout, peer.list_all_tools()).await {
        Ok(Ok(tools)) => Ok(tools),
        Ok(Err(e)) => Err(CallError::Start(format!(
            "the MCP server `{}` did not list its tools: {e}",
            server.name
        ))),
        Err(_) => Err(CallError::Start(format!(
            "the MCP server `{}` did not list its tools within {} s",
            server.name,
            server.startup_timeout.as_secs().max(1)
        ))),
    }
}

/// What the server last wrote on stderr, for an error message (after a
/// moment for its last lines to arrive).
async fn said(last_words: &std::sync::Mutex<std::collections::VecDeque<String>>) -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    let lines: Vec<String> = last_words
        .lock()
        .map(|kept| kept.iter().cloned().collect())
        .unwrap_or_default();
    if lines.is_empty() {
        String::new()
    } else {
        format!("; its last words on stderr: {}", lines.join(" ⏎ "))
    }
}

async fn connect(
    server: &McpServer,
    spawner: &Spawner,
    handler: &Handler,
) -> Result<Live, CallError> {
    let fail =
        |message: String| CallError::Start(format!("the MCP server `{}` {message}", server.name));
    let (command, args, env, env_vars) = match &server.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            env_vars,
        } => (command, args, env, env_vars),
        McpTransport::Http { url, headers } => {
            return connect_http(server, spawner, handler, url, headers).await;
        }
    };
    let mut vars = spawner.base_env.clone();
    if let Some(launcher) = &spawner.launcher {
        vars.extend(launcher.env());
    }
    for name in env_vars {
        if let Some(value) = (spawner.lookup)(name) {
            vars.push((name.into(), value.into()));
        }
    }
    for (name, template) in env {
        let value = expand(template, &*spawner.lookup)
            .map_err(|e| fail(format!("cannot start: env {name}: {e}")))?;
        vars.push((name.into(), value.into()));
    }
    let mut readable = server.readable_roots.clone();
    readable.extend(crate::roots::install_roots(command, args));
    let mut line: Vec<OsString> = match &spawner.launcher {
        Some(launcher) => launcher.server_prefix(
            &CommandSpec {
                command: server.describe(),
                cwd: spawner.root.clone(),
                timeout: Duration::ZERO,
                log_path: PathBuf::new(),
                kind: CommandKind::Other,
                network: server.network,
                sandbox_mode: server.unconfined.then_some(SandboxMode::Off),
                report: None,
                layer: None,
            },
            &readable,
        ),
        None => Vec::new(),
    };
    line.push(command.into());
    line.extend(args.iter().map(OsString::from));
    let Some((program, rest)) = line.split_first() else {
        return Err(fail("has no command".into()));
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(rest)
        .env_clear()
        .envs(vars)
        .current_dir(&spawner.root)
        .process_group(0)
        .kill_on_drop(true);
    let started = Instant::now();
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            fail(format!(
                "could not be started (`{}`): {e}",
                server.describe()
            ))
        })?;
    let group = transport.id().and_then(|id| i32::try_from(id).ok());
    let last_words = Arc::new(std::sync::Mutex::new(std::collections::VecDeque::new()));
    if let Some(stderr) = stderr {
        let name = server.name.clone();
        let last_words = last_words.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(mut line)) = lines.next_line().await {
                if line.len() > STDERR_LINE {
                    let mut cut = STDERR_LINE;
                    while !line.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    line.truncate(cut);
                    line.push_str(" …");
                }
                tracing::info!(target: "rein_mcp::stderr", server = %name, "{line}");
                if let Ok(mut kept) = last_words.lock() {
                    if kept.len() == STDERR_KEPT {
                        kept.pop_front();
                    }
                    kept.push_back(line);
                }
            }
        });
    }
    let service = match tokio::time::timeout(
        server.startup_timeout,
        handler.clone().serve(transport),
    )
    .await
    {
        Ok(Ok(service)) => service,
        Ok(Err(e)) => {
            kill_group(group);
            return Err(fail(format!(
                "did not start: {}{}",
                init_failure(&e),
                said(&last_words).await
            )));
        }
        Err(_) => {
            kill_group(group);
            return Err(fail(format!(
                "did not answer `initialize` within {} s{}",
                server.startup_timeout.as_secs().max(1),
                said(&last_words).await
            )));
        }
    };
    tracing::info!(server = %server.name, ms = started.elapsed().as_millis() as u64, "MCP server started");
    Ok(Live { service, group })
}

/// Connects to a Streamable HTTP server: no process, so no group to kill;
/// the session is ended (DELETE) when the service is cancelled.
async fn connect_http(
    server: &McpServer,
    spawner: &Spawner,
    handler: &Handler,
    url: &str,
    headers: &[(String, String)],
) -> Result<Live, CallError> {
    let fail =
        |message: String| CallError::Start(format!("the MCP server `{}` {message}", server.name));
    let mut custom = HashMap::new();
    for (name, template) in headers {
        let value = expand(template, &*spawner.lookup)
            .map_err(|e| fail(format!("cannot start: header {name}: {e}")))?;
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| fail(format!("cannot start: `{name}` is no HTTP header name")))?;
        let mut value = HeaderValue::from_str(&value).map_err(|_| {
            fail(format!(
                "cannot start: the value of header {name} is not a valid HTTP header value"
            ))
        })?;
        value.set_sensitive(true);
        custom.insert(name, value);
    }
    let client = crate::http::HttpClient::new()
        .map_err(|e| fail(format!("cannot start: no HTTP client: {e}")))?;
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let started = Instant::now();
    let service = match tokio::time::timeout(
        server.startup_timeout,
        handler.clone().serve(transport),
    )
    .await
    {
        Ok(Ok(service)) => service,
        Ok(Err(e)) => {
            let unreachable = matches!(&e, rmcp::service::ClientInitializeError::TransportError { error, .. } if never_connected(error.error.as_ref()));
            return Err(fail(if unreachable {
                format!("could not be reached at {url} ({})", init_failure(&e))
            } else {
                format!("did not start ({url}): {}", init_failure(&e))
            }));
        }
        Err(_) => {
            return Err(fail(format!(
                "did not answer `initialize` within {} s ({url})",
                server.startup_timeout.as_secs().max(1)
            )));
        }
    };
    tracing::info!(server = %server.name, ms = started.elapsed().as_millis() as u64, "MCP server connected");
    Ok(Live {
        service,
        group: None,
    })
}
