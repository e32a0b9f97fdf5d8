//! The LSP service: thin handlers over the document store.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use futures::future::Either;
use rein_text::{DocumentStore, OffsetEncoding, SaveCheck};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::jsonrpc::{self, ErrorCode};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, ClientSocket, LanguageServer, LspService, Server};

use crate::ext::{self, DocumentState, DocumentStateParams};
use crate::framing::{self, MalformedFrame};
use crate::{client_requests, guard, proto};

/// How many client messages the transport works on at once. Handlers are
/// short (agent work runs in spawned tasks), so this only bounds bursts.
const MAX_CONCURRENCY: usize = 16;

/// Bytes buffered between the framing guard and the transport.
const PIPE_CAPACITY: usize = 256 * 1024;

/// The section of `workspace/configuration` that holds Rein's settings.
const CONFIG_SECTION: &str = "rein";

#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// How long the server waits for the client to answer one of its
    /// requests before giving up on it.
    pub client_request_timeout: Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            client_request_timeout: Duration::from_secs(30),
        }
    }
}

/// State shared by the handlers and the spawned tasks they start.
#[derive(Debug)]
struct Shared {
    docs: DocumentStore,
    /// Set once by `initialize`; UTF-16 until then (the LSP default).
    encoding: OnceLock<OffsetEncoding>,
    /// Settings from `initializationOptions`, then `workspace/configuration`.
    /// A std lock: it is never held across an `.await`.
    settings: RwLock<Value>,
    client_has_configuration: AtomicBool,
    shutdown_requested: AtomicBool,
    options: ServerOptions,
}

/// A view of a running server for its host (the binary, in-process tests).
#[derive(Clone, Debug)]
pub struct ServerHandle(Arc<Shared>);

impl ServerHandle {
    /// Whether the client asked for `shutdown` (so `exit` is a clean exit).
    pub fn shutdown_requested(&self) -> bool {
        self.0.shutdown_requested.load(Ordering::SeqCst)
    }

    pub fn documents(&self) -> &DocumentStore {
        &self.0.docs
    }

    /// The current settings as the client provided them.
    pub fn settings(&self) -> Value {
        self.0
            .settings
            .read()
            .map(|s| s.clone())
            .unwrap_or_default()
    }
}

#[derive(Debug)]
pub struct Backend {
    client: Client,
    shared: Arc<Shared>,
}

/// Builds the service with Rein's custom methods registered.
pub fn build_service(options: ServerOptions) -> (LspService<Backend>, ClientSocket, ServerHandle) {
    let shared = Arc::new(Shared {
        docs: DocumentStore::new(),
        encoding: OnceLock::new(),
        settings: RwLock::new(Value::Null),
        client_has_configuration: AtomicBool::new(false),
        shutdown_requested: AtomicBool::new(false),
        options,
    });
    let handle = ServerHandle(Arc::clone(&shared));
    let (service, socket) = LspService::build(|client| Backend { client, shared })
        .custom_method(ext::DOCUMENT_STATE, Backend::document_state)
        .custom_method(framing::MALFORMED_FRAME, Backend::malformed_frame)
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
    let (service, socket, handle) = build_service(options);
    // The transport reads from a pipe fed by the framing guard, so one
    // malformed frame cannot end the session (see framing.rs).
    let (pipe_out, pipe_in) = tokio::io::duplex(PIPE_CAPACITY);
    let serving = async move {
        let server = Server::new(pipe_out, output, socket)
            .concurrency_level(MAX_CONCURRENCY)
            .serve(service);
        let pump = framing::pump(input, pipe_in);
        futures::pin_mut!(server, pump);
        match futures::future::select(server, pump).await {
            // `exit` (or the end of input): the pump may still be parked on
            // a read that will never complete; drop it.
            Either::Left(((), _pump)) => {}
            Either::Right((pumped, server)) => {
                if let Err(error) = pumped {
                    tracing::error!(%error, "reading from the client failed");
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
    fn encoding(&self) -> OffsetEncoding {
        self.shared.encoding.get().copied().unwrap_or_default()
    }

    /// Fetches Rein's settings in the background (never awaited here).
    fn refresh_configuration(&self) {
        if !self.shared.client_has_configuration.load(Ordering::SeqCst) {
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
        tokio::spawn(async move {
            if let Ok(Some(mut values)) = task.await {
                let value = if values.is_empty() {
                    Value::Null
                } else {
                    values.swap_remove(0)
                };
                if !value.is_null() {
                    tracing::debug!(settings = %value, "settings from workspace/configuration");
                    if let Ok(mut settings) = shared.settings.write() {
                        *settings = value;
                    }
                }
            }
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
        let has_configuration = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.configuration)
            .unwrap_or(false);
        self.shared
            .client_has_configuration
            .store(has_configuration, Ordering::SeqCst);
        if let Some(options) = params.initialization_options
            && let Ok(mut settings) = self.shared.settings.write()
        {
            *settings = options;
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
    }

    async fn shutdown(&self) -> jsonrpc::Result<()> {
        self.shared.shutdown_requested.store(true, Ordering::SeqCst);
        tracing::info!("shutdown requested");
        Ok(())
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
