//! The LSP service: thin handlers over the document store.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures::future::Either;
use rein_text::{ContentHash, DocumentStore, SaveCheck};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::jsonrpc::{self, ErrorCode};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, ClientSocket, LanguageServer, LspService, Server};

use crate::ext::{self, DocumentState, DocumentStateParams};
use crate::framing::{self, MalformedFrame};
pub use crate::session::ServerOptions;
use crate::session::{ClientCaps, Session};
use crate::{client_requests, code_actions, code_lens, commands, guard, proto, provider};

/// How many client messages the transport works on at once. Handlers are
/// short (agent work runs in spawned tasks), so this only bounds bursts.
const MAX_CONCURRENCY: usize = 16;

/// Bytes buffered between the framing guard and the transport.
const PIPE_CAPACITY: usize = 256 * 1024;

/// The section of `workspace/configuration` that holds Rein's settings.
const CONFIG_SECTION: &str = "rein";

/// A task cancelled because the editor shut the server down says so: the
/// user may not have meant to stop it.
const SHUTDOWN_REASON: &str =
    "cancelled: the editor shut the language server down while the task ran";

/// See `shutdown`.
const FLUSH_BEFORE_SHUTDOWN_ANSWER: std::time::Duration = std::time::Duration::from_millis(100);

/// A view of a running server for its host (the binary, in-process tests).
#[derive(Clone, Debug)]
pub struct ServerHandle(Arc<Session>);

impl ServerHandle {
    /// Whether the client asked for `shutdown` (so `exit` is a clean exit).
    pub fn shutdown_requested(&self) -> bool {
        self.0.shutdown_requested()
    }

    pub fn documents(&self) -> &DocumentStore {
        &self.0.docs
    }

    /// The current settings as the client provided them.
    pub fn settings(&self) -> Value {
        self.0.settings()
    }

    /// Tasks still running.
    pub fn running_tasks(&self) -> usize {
        self.0.tasks.running_count()
    }
}

#[derive(Debug)]
pub struct Backend {
    client: Client,
    shared: Arc<Session>,
}

/// Builds the service with Rein's custom methods registered.
pub fn build_service(options: ServerOptions) -> (LspService<Backend>, ClientSocket, ServerHandle) {
    let shared = Arc::new(Session::new(options));
    let handle = ServerHandle(Arc::clone(&shared));
    let (service, socket) = LspService::build(|client| Backend { client, shared })
        .custom_method(ext::DOCUMENT_STATE, Backend::document_state)
        .custom_method(provider::PROVIDER_STATUS, Backend::provider_status)
        .custom_method(provider::CHECK_PROVIDER, Backend::check_provider)
        .custom_method(framing::MALFORMED_FRAME, Backend::malformed_frame)
        .custom_method(
            "window/workDoneProgress/cancel",
            Backend::work_done_progress_cancel,
        )
        .finish();
    (service, socket, handle)
}

/// Sets up a server on `input`/`output`: returns its handle and the future
/// that serves the client until `exit` or the end of input.
pub fn start<I, O>(
    input: I,
    output: O,
    options: ServerOptions,
) -> (ServerHandle, impl Future<Output = ()>)
where
    I: AsyncRead + Unpin,
    O: AsyncWrite,
{
    let frame_limits = options.frame_limits;
    let (service, socket, handle) = build_service(options);
    // The transport reads from a pipe fed by the framing guard, so no
    // bytes from the client can end the session (see framing.rs).
    let (pipe_out, pipe_in) = tokio::io::duplex(PIPE_CAPACITY);
    let serving = async move {
        let server = Server::new(pipe_out, output, socket)
            .concurrency_level(MAX_CONCURRENCY)
            .serve(service);
        let pump = framing::pump(input, pipe_in, frame_limits);
        futures::pin_mut!(server, pump);
        match futures::future::select(server, pump).await {
            // `exit` (or the end of input): the pump may still be parked on
            // a read that will never complete; drop it.
            Either::Left(((), _pump)) => {}
            Either::Right((pumped, server)) => {
                match pumped {
                    Ok(stats) => tracing::debug!(?stats, "the client's input ended"),
                    Err(error) => tracing::error!(%error, "reading from the client failed"),
                }
                // The pipe is closed: the server drains what it has and stops.
                server.await;
            }
        }
    };
    (handle, serving)
}

/// Serves one client until `exit` or the end of input. The returned handle
/// tells a clean shutdown from a client that went away.
pub async fn serve<I, O>(input: I, output: O, options: ServerOptions) -> ServerHandle
where
    I: AsyncRead + Unpin,
    O: AsyncWrite,
{
    let (handle, serving) = start(input, output, options);
    serving.await;
    handle
}

impl Backend {
    fn encoding(&self) -> rein_text::OffsetEncoding {
        self.shared.encoding()
    }

    /// Tasks a crash left running are reconciled and resumed (in the
    /// background: never awaited by a handler) — only those this
    /// installation created: a `.rein/state.db` that came with a repository
    /// must not start its tasks on the user's model and budget. Those are
    /// listed; resuming one is the user's explicit `rein.resumeTask`.
    fn recover_tasks(&self) {
        // No state yet: nothing can have been left behind.
        let Some(root) = self.shared.root.get() else {
            return;
        };
        if !rein_store::state_db_path(root).exists() {
            return;
        }
        let root = root.clone();
        let session = Arc::clone(&self.shared);
        let client = self.client.clone();
        tokio::spawn(async move {
            let store = match session.store() {
                Ok(store) => store,
                Err(error) => {
                    tracing::warn!(%error, "cannot open the task state");
                    return;
                }
            };
            let left = store
                .tasks_in_states(&["queued", "running", "verifying"])
                .unwrap_or_default();
            let (ours, foreign): (Vec<_>, Vec<_>) = left
                .into_iter()
                .filter(rein_core::journal::lease_is_free)
                .partition(|record| {
                    session.installation.is_some() && record.installation == session.installation
                });
            if !foreign.is_empty() {
                let ids: Vec<&str> = foreign.iter().map(|r| r.id.as_str()).collect();
                tracing::warn!(
                    ?ids,
                    "unfinished tasks this installation did not start; not resumed"
                );
                client
                    .show_message(
                        MessageType::WARNING,
                        format!(
                            "This folder's .rein/state.db holds {} unfinished task(s) that this Rein installation did not start ({}); it may have come with the repository. They were not resumed. If you started them, resume them with rein.resumeTask.",
                            foreign.len(),
                            ids.join(", ")
                        ),
                    )
                    .await;
            }
            for record in ours {
                // The editor reopens its buffers right after `initialized`;
                // an edit it applied but never saved is only there.
                let touched = unsaved_edits(&store, &record.id, &root).await;
                if !touched.is_empty() {
                    let within = session.reopen_timeout();
                    let missing = session.wait_until_open(&touched, within).await;
                    if !missing.is_empty() {
                        tracing::info!(task = %record.id, ?missing, "the editor did not reopen these files; judging the interrupted edits by the disk");
                    }
                }
                tracing::info!(task = %record.id, state = %record.state, "resuming a task left unfinished");
                crate::tasks::resume(&session, &client, rein_core::task::TaskId(record.id));
            }
        });
    }

    /// Asks about the workspace's settings now, if they need a decision,
    /// rather than when the first task starts (in the background); then
    /// starts the MCP servers set to start with the session.
    fn settle_trust(&self) {
        let Some(root) = self.shared.root.get().cloned() else {
            return;
        };
        let session = Arc::clone(&self.shared);
        let client = self.client.clone();
        tokio::spawn(async move {
            session.settings_settled().await;
            match rein_app::settings::Assessment::of(&root, &session.settings()) {
                Ok(assessment) => {
                    let trust =
                        crate::lsp_trust::decide(&session, &client, &root, &assessment).await;
                    let started = assessment.config(&trust).and_then(|config| {
                        rein_app::setup::start_session_servers(
                            &root,
                            &config,
                            &session.options.rein_binary,
                            Arc::clone(&session.mcp),
                        )
                    });
                    if let Err(error) = started {
                        tracing::warn!(%error, "the session's MCP servers were not started");
                    }
                }
                Err(error) => tracing::warn!(%error, "the settings cannot be read"),
            }
        });
    }

    /// The progress cancel button (the client sends this notification).
    async fn work_done_progress_cancel(&self, params: WorkDoneProgressCancelParams) {
        let token = match &params.token {
            NumberOrString::String(s) => s.clone(),
            NumberOrString::Number(n) => n.to_string(),
        };
        if !self.shared.tasks.cancel_by_tag(&token) {
            tracing::debug!(token, "progress cancel for no running task");
        }
    }

    /// Fetches Rein's settings in the background (never awaited here).
    fn refresh_configuration(&self) {
        if !self.shared.caps().configuration {
            return;
        }
        let client = self.client.clone();
        let shared = Arc::clone(&self.shared);
        let item = ConfigurationItem {
            scope_uri: None,
            section: Some(CONFIG_SECTION.to_owned()),
        };
        let request = async move { client.configuration(vec![item]).await };
        let task = client_requests::spawn(
            "workspace/configuration",
            shared.options.client_request_timeout,
            request,
        );
        shared.configuration_fetch_started();
        tokio::spawn(async move {
            let fetched = task.await;
            if let Ok(Some(values)) = fetched
                && let Some(value) = rein_app::settings::from_configuration(values)
            {
                tracing::debug!(
                    settings = %rein_app::settings::for_log(&value),
                    "settings from workspace/configuration"
                );
                if let Ok(mut settings) = shared.settings.write() {
                    *settings = value;
                }
            }
            // Whatever came back (or nothing, in time): tasks waiting for
            // the settings go on.
            shared.configuration_fetch_ended();
        });
    }

    /// Answers a frame the client sent malformed with the error it earned.
    async fn malformed_frame(&self, params: MalformedFrame) -> jsonrpc::Result<Value> {
        Err(jsonrpc::Error {
            code: jsonrpc::ErrorCode::from(params.code),
            message: params.message.into(),
            data: None,
        })
    }

    async fn provider_status(&self) -> jsonrpc::Result<provider::ProviderStatus> {
        guard::request(provider::PROVIDER_STATUS, async {
            // Settings the editor just changed are asked for first.
            self.shared.settings_settled().await;
            Ok(provider::status(&self.shared))
        })
        .await
    }

    async fn check_provider(
        &self,
        params: provider::CheckParams,
    ) -> jsonrpc::Result<provider::Checked> {
        guard::request(provider::CHECK_PROVIDER, async {
            Ok(provider::check(params).await)
        })
        .await
    }

    async fn document_state(&self, params: DocumentStateParams) -> jsonrpc::Result<DocumentState> {
        guard::request(ext::DOCUMENT_STATE, async {
            let Some(snap) = self.shared.docs.snapshot(params.uri.as_str()) else {
                return Err(jsonrpc::Error {
                    code: ErrorCode::InvalidParams,
                    message: format!("document {} is not open", params.uri.as_str()).into(),
                    data: None,
                });
            };
            Ok(DocumentState {
                uri: params.uri,
                version: snap.version(),
                language_id: snap.language_id().to_owned(),
                content_hash: snap.content_hash().to_hex(),
                line_count: snap.rope().len_lines(),
                utf8_length: snap.rope().len_bytes(),
                text: params.include_text.then(|| snap.text()),
            })
        })
        .await
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> jsonrpc::Result<InitializeResult> {
        let encoding = proto::negotiate_encoding(&params.capabilities);
        // `initialize` runs once (the transport refuses a second one), so
        // the first value is the only one.
        let _ = self.shared.encoding.set(encoding);
        let _ = self
            .shared
            .caps
            .set(ClientCaps::from_lsp(&params.capabilities));
        if let Some(root) = workspace_root(&params) {
            rein_app::logging::log_to_workspace(&root);
            tracing::info!(root = %root.display(), "workspace root");
            let _ = self.shared.root.set(root);
        }
        let options = params.initialization_options.unwrap_or(Value::Null);
        let _ = self
            .shared
            .editor_trust
            .set(rein_app::editor_trust::editor_trust(
                &options,
                self.shared.caps().workspace_trust,
            ));
        if !options.is_null()
            && let Ok(mut settings) = self.shared.settings.write()
        {
            *settings = options;
        }
        if self.shared.caps().configuration {
            // Tasks started before `initialized` fetches the settings wait
            // for them (a `maxTurns: 1` would otherwise be missed).
            self.shared.configuration_fetch_started();
        }
        let client = params
            .client_info
            .as_ref()
            .map(|c| c.name.as_str())
            .unwrap_or("unknown");
        tracing::info!(client, ?encoding, "initialize");

        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(proto::encoding_kind(encoding)),
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::INCREMENTAL),
                        save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                            // The saved text lets us check that our copy of
                            // the buffer never silently drifted.
                            include_text: Some(true),
                        })),
                        ..TextDocumentSyncOptions::default()
                    },
                )),
                code_action_provider: Some(CodeActionProviderCapability::Options(
                    CodeActionOptions {
                        code_action_kinds: Some(vec![
                            CodeActionKind::QUICKFIX,
                            CodeActionKind::EMPTY,
                        ]),
                        ..CodeActionOptions::default()
                    },
                )),
                code_lens_provider: Some(CodeLensOptions {
                    resolve_provider: Some(false),
                }),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: ext::commands::ALL.iter().map(|c| (*c).to_owned()).collect(),
                    ..ExecuteCommandOptions::default()
                }),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo {
                name: "rein".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.refresh_configuration();
        if self.shared.caps().configuration {
            // The fetch counts itself now; `initialize`'s mark can go.
            self.shared.configuration_fetch_ended();
        }
        self.settle_trust();
        self.recover_tasks();
    }

    async fn shutdown(&self) -> jsonrpc::Result<()> {
        self.shared.shutdown_requested.store(true, Ordering::SeqCst);
        tracing::info!("shutdown requested");
        // Tasks end cancelled, their histories consistent. Bounded: a stuck
        // task cannot hold the editor's shutdown hostage.
        if self.shared.tasks.shutdown(SHUTDOWN_REASON).await {
            // The tasks' final statuses are queued for the client, but
            // tower-lsp-server writes its notifications and its responses
            // from two streams it picks between at random when both are
            // ready: without a moment for the writer, the `shutdown` answer
            // can overtake them, and an editor that exits at once would
            // never hear how its tasks ended.
            tokio::time::sleep(FLUSH_BEFORE_SHUTDOWN_ANSWER).await;
        }
        // Each within a couple of seconds, side by side.
        self.shared.mcp.shutdown().await;
        Ok(())
    }

    async fn code_action(
        &self,
        params: CodeActionParams,
    ) -> jsonrpc::Result<Option<CodeActionResponse>> {
        guard::request("textDocument/codeAction", async {
            let actions = code_actions::actions(
                &self.shared,
                &params.text_document.uri,
                params.range,
                &params.context.diagnostics,
            );
            Ok((!actions.is_empty()).then_some(actions))
        })
        .await
    }

    async fn code_lens(&self, params: CodeLensParams) -> jsonrpc::Result<Option<Vec<CodeLens>>> {
        guard::request("textDocument/codeLens", async {
            let lenses = code_lens::lenses(&self.shared, &params.text_document.uri);
            Ok((!lenses.is_empty()).then_some(lenses))
        })
        .await
    }

    async fn execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> jsonrpc::Result<Option<Value>> {
        guard::request("workspace/executeCommand", async {
            commands::execute(
                &self.shared,
                &self.client,
                &params.command,
                params.arguments,
            )
            .await
        })
        .await
    }

    // The document notifications below never `.await`: each applies its
    // change to the store synchronously, so changes land in the order the
    // client sent them even though the transport runs handlers concurrently.

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let reopened = guard::notification("textDocument/didOpen", || {
            self.shared
                .docs
                .open(doc.uri.as_str(), &doc.language_id, doc.version, &doc.text)
        });
        // What the editor loaded: a disk copy still holding it was not
        // changed behind the editor's back.
        if let Ok(mut opened) = self.shared.opened.write() {
            opened.insert(doc.uri.as_str().to_owned(), ContentHash::of_str(&doc.text));
        }
        self.shared.changed();
        if reopened == Some(true) {
            tracing::warn!(
                uri = doc.uri.as_str(),
                "didOpen for a document already open; replaced it"
            );
        }
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        let encoding = self.encoding();
        let changes = params
            .content_changes
            .into_iter()
            .map(proto::content_change);
        let result = guard::notification("textDocument/didChange", || {
            self.shared
                .docs
                .change(uri.as_str(), version, changes, encoding)
        });
        self.shared.changed();
        match result {
            Some(Ok(_)) => {}
            Some(Err(error)) => tracing::warn!(%error, "ignored didChange"),
            None => {
                // Our copy may be half-edited now: forget it rather than
                // work from text the editor does not have.
                self.shared.docs.close(uri.as_str());
                tracing::error!(
                    uri = uri.as_str(),
                    "dropped the document after a failed change"
                );
            }
        }
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        let uri = params.text_document.uri;
        let check = guard::notification("textDocument/didSave", || {
            self.shared
                .docs
                .check_saved(uri.as_str(), params.text.as_deref())
        });
        // What the editor wrote to disk: Rein may write over exactly that.
        if let Some(hash) = params.text.as_deref().map(ContentHash::of_str).or_else(|| {
            self.shared
                .docs
                .snapshot(uri.as_str())
                .map(|s| s.content_hash())
        }) && let Ok(mut saved) = self.shared.saved.write()
        {
            saved.insert(uri.as_str().to_owned(), hash);
        }
        self.shared.changed();
        match check {
            Some(Ok(SaveCheck::Matches | SaveCheck::Unchecked)) => {}
            Some(Ok(SaveCheck::Resynced { ours, editor })) => {
                tracing::error!(
                    uri = uri.as_str(),
                    ?ours,
                    ?editor,
                    "buffer had drifted from the editor's; resynced from didSave"
                );
            }
            Some(Err(error)) => tracing::warn!(%error, "ignored didSave"),
            None => {}
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let was_open = guard::notification("textDocument/didClose", || {
            self.shared.docs.close(uri.as_str())
        });
        if let Ok(mut opened) = self.shared.opened.write() {
            opened.remove(uri.as_str());
        }
        self.shared.changed();
        if was_open == Some(false) {
            tracing::warn!(
                uri = uri.as_str(),
                "didClose for a document that was not open"
            );
        }
    }

    async fn did_change_configuration(&self, _: DidChangeConfigurationParams) {
        // The pull model: the notification's payload is unreliable across
        // clients, so ask for the section again.
        self.refresh_configuration();
    }
}

/// The workspace root: the first workspace folder, else the (deprecated)
/// root URI, else the root path.
#[allow(deprecated)]
fn workspace_root(params: &InitializeParams) -> Option<std::path::PathBuf> {
    let from_uri = |uri: &Uri| uri.to_file_path().map(|p| p.into_owned());
    params
        .workspace_folders
        .as_ref()
        .and_then(|folders| folders.first())
        .and_then(|folder| from_uri(&folder.uri))
        .or_else(|| params.root_uri.as_ref().and_then(from_uri))
        .or_else(|| params.root_path.as_ref().map(std::path::PathBuf::from))
        .and_then(|root| std::fs::canonicalize(&root).ok().or(Some(root)))
}

/// The files this task changed whose saved copy lacks its edits: those may
/// live only in buffers the editor is about to reopen, and recovery must
/// judge (and the model read) what the editor shows, not the disk.
async fn unsaved_edits(
    store: &rein_store::Store,
    task: &str,
    root: &std::path::Path,
) -> Vec<std::path::PathBuf> {
    let ops = store.ops(task).unwrap_or_default();
    let mut unsaved = Vec::new();
    for file in rein_core::resume::expected_contents(&rein_core::tools::builtin(), &ops) {
        let path = root.join(&file.path);
        let saved = tokio::fs::read(&path)
            .await
            .is_ok_and(|bytes| ContentHash::of_bytes(&bytes).to_hex() == file.hash);
        if !saved {
            unsaved.push(path);
        }
    }
    unsaved
}
