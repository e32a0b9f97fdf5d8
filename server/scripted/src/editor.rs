//! A headless editor: an LSP client that behaves like a real one. It keeps
//! buffers with versions, sends `didOpen`/`didChange`/`didSave`, applies
//! `workspace/applyEdit` to its buffers (refusing a versioned edit whose
//! version is stale, as VS Code does) and answers the server's other
//! requests. Tests script the user's side (accept, reject, type, ignore);
//! `rein demo` uses it to drive the real server as an editor would.
//!
//! It plays one of two clients ([`ClientKind`]): one as capable as our
//! extensions, or a plain LSP client that does less (as Helix, eglot or
//! Kate do), where Rein's promises must hold too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rein_text::{Document, OffsetEncoding, Position, Range, Rope, position_to_char};
use serde_json::{Value, json};
use tokio::io::AsyncWrite;

use crate::lsp_client::{ClientError, LspClient};

/// What the user does with a proposed edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditDecision {
    Accept,
    Reject,
    /// Answer `applied: true` but change nothing (Neovim ≤ 0.11 does this
    /// with a stale edit).
    ClaimWithoutApplying,
    /// Never answer.
    Ignore,
    /// Hand the request back to the caller of `pump_until`, unanswered.
    Hold,
}

/// Which LSP client the editor plays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientKind {
    /// As capable as our extensions: versioned edits with change
    /// annotations (the editor asks the user), `rein/saveDocuments`, an
    /// instruction prompt, UTF-16, every buffer synced.
    Capable,
    /// A standard client that does less: no change annotations (it applies
    /// an edit without showing it) and answers every `applyEdit` with
    /// `applied: true`, whatever its version; no `rein/saveDocuments`, no
    /// instruction prompt; offers UTF-8; shows documents
    /// (`window/showDocument`); and syncs only the buffers of the language
    /// ids listed (others stay in the editor alone, as a `.txt` or `.toml`
    /// in a client that associates Rein with Python only).
    Plain {
        synced_languages: Vec<String>,
        /// Declares `changeAnnotationSupport` — and still applies an edit
        /// marked `needsConfirmation` unasked (Sublime LSP does).
        change_annotations: bool,
    },
}

impl ClientKind {
    /// A plain client that syncs the usual source languages.
    pub fn plain() -> Self {
        ClientKind::Plain {
            synced_languages: ["python", "rust", "javascript", "typescript", "go"]
                .map(String::from)
                .to_vec(),
            change_annotations: false,
        }
    }
}

/// What the user does with a `window/showMessageRequest`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Choose(String),
    Dismiss,
    /// Never answer (the server may withdraw it).
    Ignore,
    /// Save every buffer whose text is not on disk, then choose this (or,
    /// `None`, leave the question open).
    SaveAllThen(Option<String>),
    /// Answer "method not found", as a client without
    /// `window/showMessageRequest` does (Helix 25.07.1).
    Unsupported,
}

/// A script for the user's answers to questions.
pub type OnQuestion = Box<dyn FnMut(&Value) -> Reply + Send>;

/// The user's answer to a `rein/reviewEdit` (its params in): the answer
/// to send, or `None` to hand the request back to the caller of
/// `pump_until`, unanswered.
pub type OnReview = Box<dyn FnMut(&Value) -> Option<Value> + Send>;

/// How the editor answers the server.
pub struct EditorOptions {
    pub kind: ClientKind,
    /// Decides each question; without it, [`Self::message_choices`] does.
    pub on_question: Option<OnQuestion>,
    pub decide_edit: Box<dyn FnMut(&Value) -> EditDecision + Send>,
    /// The answers the user gives in `window/showMessageRequest`: the
    /// first of these titles among the actions offered is chosen; none of
    /// them offered, the user dismisses the message.
    pub message_choices: Vec<String>,
    /// Returned for `workspace/configuration` and sent as
    /// `initializationOptions`.
    pub settings: Value,
    /// Declare and implement `rein/saveDocuments`.
    pub save_documents: bool,
    /// Run on a buffer's text before each save, like VS Code's
    /// `editor.formatOnSave` (its change reaches the server as a
    /// `didChange` before the `didSave`).
    pub format_on_save: Option<Formatter>,
    /// Called with every message from the server, as it arrives.
    pub on_message: Box<dyn FnMut(&Value) + Send>,
    /// Declare `reviewsEdits` and review edits so (a capable client only).
    pub review: Option<OnReview>,
}

/// A format-on-save: the buffer's text in, the text to save out.
pub type Formatter = Box<dyn Fn(&str) -> String + Send>;

impl Default for EditorOptions {
    fn default() -> Self {
        Self {
            kind: ClientKind::Capable,
            on_question: None,
            decide_edit: Box::new(|_| EditDecision::Accept),
            message_choices: vec!["Allow once".into()],
            settings: Value::Null,
            save_documents: true,
            format_on_save: None,
            on_message: Box::new(|_| {}),
            review: None,
        }
    }
}

struct Buffer {
    doc: Document,
    language: String,
}

pub struct HeadlessEditor<W> {
    client: LspClient<W>,
    root: PathBuf,
    buffers: BTreeMap<String, Buffer>,
    pub options: EditorOptions,
    received: Vec<Value>,
    timeout: Duration,
    /// The position encoding the server chose (UTF-16 until it says).
    encoding: OffsetEncoding,
    /// Documents the server asked to show (`window/showDocument`), as URIs.
    shown: Vec<String>,
    /// How many times the server asked for the CodeLenses again
    /// (`workspace/codeLens/refresh`).
    lens_refreshes: usize,
}

/// `file://` URI of an absolute path (spaces and `%` escaped).
pub fn file_uri(path: &Path) -> String {
    let text = path
        .to_string_lossy()
        .replace('%', "%25")
        .replace(' ', "%20");
    format!("file://{text}")
}

/// The path of a `file://` URI (percent-escapes decoded).
pub fn uri_path(uri: &str) -> PathBuf {
    let raw = uri.strip_prefix("file://").unwrap_or(uri);
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = raw.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    PathBuf::from(String::from_utf8_lossy(&out).into_owned())
}

fn language_of(path: &str) -> &'static str {
    match Path::new(path).extension().and_then(|e| e.to_str()) {
        Some("py") => "python",
        Some("rs") => "rust",
        Some("ts" | "tsx") => "typescript",
        Some("js" | "jsx" | "mjs" | "cjs") => "javascript",
        Some("go") => "go",
        _ => "plaintext",
    }
}

impl<W: AsyncWrite + Unpin> HeadlessEditor<W> {
    pub fn new(client: LspClient<W>, root: impl Into<PathBuf>, options: EditorOptions) -> Self {
        Self {
            client,
            root: root.into(),
            buffers: BTreeMap::new(),
            options,
            received: Vec::new(),
            timeout: Duration::from_secs(60),
            encoding: OffsetEncoding::Utf16,
            shown: Vec::new(),
            lens_refreshes: 0,
        }
    }

    fn plain(&self) -> bool {
        matches!(self.options.kind, ClientKind::Plain { .. })
    }

    /// Whether the server hears of a buffer of this language.
    fn synced(&self, language: &str) -> bool {
        match &self.options.kind {
            ClientKind::Capable => true,
            ClientKind::Plain {
                synced_languages, ..
            } => synced_languages.iter().any(|l| l == language),
        }
    }

    /// The documents the server asked to show, as URIs.
    pub fn shown(&self) -> &[String] {
        &self.shown
    }

    /// How many `workspace/codeLens/refresh` requests the server sent.
    pub fn lens_refreshes(&self) -> usize {
        self.lens_refreshes
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn uri(&self, rel: &str) -> String {
        file_uri(&self.root.join(rel))
    }

    fn rel(&self, uri: &str) -> String {
        let path = uri_path(uri);
        path.strip_prefix(&self.root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| path.to_string_lossy().into_owned())
    }

    /// Every message received from the server so far.
    pub fn received(&self) -> &[Value] {
        &self.received
    }

    /// The buffer's text, if the file is open.
    pub fn buffer(&self, rel: &str) -> Option<String> {
        self.buffers
            .get(&self.uri(rel))
            .map(|b| b.doc.snapshot().text())
    }

    pub fn version(&self, rel: &str) -> Option<i32> {
        self.buffers.get(&self.uri(rel)).map(|b| b.doc.version())
    }

    /// `initialize` + `initialized`, with the capabilities of a capable
    /// editor (versioned edits, file creation, annotations, progress).
    pub async fn initialize(&mut self) -> Result<Value, ClientError> {
        let root_uri = file_uri(&self.root);
        let capabilities = if let ClientKind::Plain {
            change_annotations, ..
        } = &self.options.kind
        {
            let mut workspace_edit =
                json!({"documentChanges": true, "resourceOperations": ["create"]});
            if *change_annotations {
                workspace_edit["changeAnnotationSupport"] = json!({"groupsOnLabel": true});
            }
            json!({
                "workspace": {
                    "applyEdit": true,
                    "configuration": true,
                    "workspaceEdit": workspace_edit,
                    "workspaceFolders": true
                },
                "window": {"workDoneProgress": true, "showDocument": {"support": true}},
                "general": {"positionEncodings": ["utf-8", "utf-16"]},
                "textDocument": {"codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", ""]}}}}
            })
        } else {
            json!({
            "workspace": {
                "applyEdit": true,
                "configuration": true,
                "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create", "delete"], "changeAnnotationSupport": {"groupsOnLabel": true}},
                "workspaceFolders": true,
                "codeLens": {"refreshSupport": true}
            },
            "window": {"workDoneProgress": true, "showMessage": {"messageActionItem": {"additionalPropertiesSupport": false}}},
            "general": {"positionEncodings": ["utf-16"]},
            "textDocument": {"codeAction": {"disabledSupport": true, "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", ""]}}}},
            "experimental": {"rein": {"saveDocuments": self.options.save_documents, "instructionPrompt": true, "confirmsEdits": true, "workspaceTrust": true, "reviewsEdits": self.options.review.is_some()}}
            })
        };
        let params = json!({
            "processId": std::process::id(),
            "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "project"}],
            "capabilities": capabilities,
            "clientInfo": {"name": "rein-headless-editor"},
            "initializationOptions": self.options.settings
        });
        let response = self.request("initialize", params).await?;
        if response["result"]["capabilities"]["positionEncoding"] == "utf-8" {
            self.encoding = OffsetEncoding::Utf8;
        }
        self.client.notify("initialized", json!({})).await?;
        Ok(response)
    }

    /// Opens a file from disk in a buffer.
    pub async fn open(&mut self, rel: &str) -> Result<(), ClientError> {
        let text = std::fs::read_to_string(self.root.join(rel))?;
        self.open_with(rel, &text).await
    }

    /// Opens a buffer with the given text (an editor reconnecting to a new
    /// server with unsaved changes).
    pub async fn open_text(&mut self, rel: &str, text: &str) -> Result<(), ClientError> {
        self.open_with(rel, text).await
    }

    async fn open_with(&mut self, rel: &str, text: &str) -> Result<(), ClientError> {
        let uri = self.uri(rel);
        let language = language_of(rel).to_owned();
        if self.synced(&language) {
            self.client
                .notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
                )
                .await?;
        }
        self.buffers.insert(
            uri,
            Buffer {
                doc: Document::new(text, 1, &language),
                language,
            },
        );
        Ok(())
    }

    /// The user types: replaces the first `from` in the buffer by `to`.
    pub async fn replace(&mut self, rel: &str, from: &str, to: &str) -> Result<(), ClientError> {
        let uri = self.uri(rel);
        let Some(buffer) = self.buffers.get(&uri) else {
            return Err(ClientError::Closed {
                what: format!("{rel} is not open"),
            });
        };
        let text = buffer.doc.snapshot().text();
        let Some(start) = text.find(from) else {
            return Err(ClientError::Closed {
                what: format!("{from:?} is not in {rel}"),
            });
        };
        let rope = Rope::from_str(&text);
        let encoding = self.encoding;
        let pos = |byte: usize| {
            let p = rein_text::char_to_position(&rope, rope.byte_to_char(byte), encoding);
            json!({"line": p.line, "character": p.character})
        };
        let change =
            json!({"range": {"start": pos(start), "end": pos(start + from.len())}, "text": to});
        self.change(&uri, vec![change]).await
    }

    /// Applies LSP content changes to a buffer and tells the server.
    async fn change(&mut self, uri: &str, changes: Vec<Value>) -> Result<(), ClientError> {
        let encoding = self.encoding;
        let Some(buffer) = self.buffers.get_mut(uri) else {
            return Ok(());
        };
        let version = buffer.doc.version() + 1;
        let parsed: Vec<rein_text::ContentChange> =
            changes.iter().filter_map(parse_change).collect();
        buffer.doc.apply_changes(version, parsed, encoding);
        let language = buffer.language.clone();
        if !self.synced(&language) {
            return Ok(());
        }
        self.client
            .notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}))
            .await
    }

    /// Saves a buffer to disk, as the user pressing save.
    pub async fn save(&mut self, rel: &str) -> Result<(), ClientError> {
        let uri = self.uri(rel);
        self.save_uri(&uri).await
    }

    async fn save_uri(&mut self, uri: &str) -> Result<(), ClientError> {
        let Some(mut text) = self.buffers.get(uri).map(|b| b.doc.snapshot().text()) else {
            return Ok(());
        };
        if let Some(format) = &self.options.format_on_save {
            let formatted = format(&text);
            if formatted != text {
                self.change(uri, vec![json!({"text": formatted})]).await?;
                text = formatted;
            }
        }
        std::fs::write(uri_path(uri), &text)?;
        let synced = self
            .buffers
            .get(uri)
            .is_some_and(|b| self.synced(&b.language));
        if !synced {
            return Ok(());
        }
        self.client
            .notify(
                "textDocument/didSave",
                json!({"textDocument": {"uri": uri}, "text": text}),
            )
            .await
    }

    /// Saves every buffer whose text is not what its file holds.
    pub async fn save_all(&mut self) -> Result<(), ClientError> {
        let dirty: Vec<String> = self
            .buffers
            .iter()
            .filter(|(uri, b)| {
                std::fs::read_to_string(uri_path(uri)).ok() != Some(b.doc.snapshot().text())
            })
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in dirty {
            self.save_uri(&uri).await?;
        }
        Ok(())
    }

    /// Sends a request and answers the server's requests until the
    /// response comes.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = self.client.send_request(method, params).await?;
        let want = json!(id);
        self.pump_until(|m| m.get("method").is_none() && m["id"] == want)
            .await
    }

    /// Handles messages from the server (answering its requests as the
    /// options say) until one satisfies `done`, which is returned.
    pub async fn pump_until(
        &mut self,
        mut done: impl FnMut(&Value) -> bool,
    ) -> Result<Value, ClientError> {
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
            let message = tokio::time::timeout(remaining, self.client.recv())
                .await
                .map_err(|_| ClientError::Timeout {
                    what: "the awaited message".into(),
                    timeout: self.timeout,
                })??;
            (self.options.on_message)(&message);
            self.received.push(message.clone());
            if message.get("id").is_some() && message.get("method").is_some() {
                self.handle_request(&message).await?;
            }
            if done(&message) {
                return Ok(message);
            }
        }
    }

    /// Handles messages from the server for `period` (answering its
    /// requests as the options say), whatever they are: for a test that
    /// waits for something outside the protocol. Only the wait for a
    /// message is cut short, never the handling of one.
    pub async fn pump_for(&mut self, period: Duration) -> Result<(), ClientError> {
        let deadline = tokio::time::Instant::now() + period;
        loop {
            let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
            let Ok(message) = tokio::time::timeout(remaining, self.client.recv()).await else {
                return Ok(());
            };
            let message = message?;
            (self.options.on_message)(&message);
            self.received.push(message.clone());
            if message.get("id").is_some() && message.get("method").is_some() {
                self.handle_request(&message).await?;
            }
        }
    }

    /// Runs until the task's `rein/taskStatus` reaches a final state;
    /// returns that status.
    pub async fn until_task_ends(&mut self, task_id: &str) -> Result<Value, ClientError> {
        self.pump_until(|m| task_ended(m) && m["params"]["taskId"] == task_id)
            .await
            .map(|m| m["params"].clone())
    }

    /// Answers a server request, unless the options hold it back for the
    /// caller.
    async fn handle_request(&mut self, request: &Value) -> Result<(), ClientError> {
        let id = request["id"].clone();
        let method = request["method"].as_str().unwrap_or_default();
        match method {
            "workspace/applyEdit" => {
                let decision = (self.options.decide_edit)(&request["params"]);
                match decision {
                    EditDecision::Hold => return Ok(()),
                    EditDecision::Ignore => {}
                    other => self.answer_edit(request, other).await?,
                }
            }
            "window/workDoneProgress/create"
            | "client/registerCapability"
            | "client/unregisterCapability" => self.client.respond(&id, Value::Null).await?,
            "workspace/configuration" => {
                let items = request["params"]["items"].as_array().map_or(1, Vec::len);
                self.client
                    .respond(&id, json!(vec![self.options.settings.clone(); items]))
                    .await?
            }
            "window/showMessageRequest" => {
                let reply = match &mut self.options.on_question {
                    Some(decide) => decide(&request["params"]),
                    None => {
                        let offered: Vec<&str> = request["params"]["actions"]
                            .as_array()
                            .map(|a| a.iter().filter_map(|a| a["title"].as_str()).collect())
                            .unwrap_or_default();
                        self.options
                            .message_choices
                            .iter()
                            .find(|c| offered.contains(&c.as_str()))
                            .map_or(Reply::Dismiss, |t| Reply::Choose(t.clone()))
                    }
                };
                let choice = match reply {
                    Reply::Unsupported => {
                        let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
                        self.client.send(&error).await?;
                        None
                    }
                    Reply::Choose(title) => Some(json!({"title": title})),
                    Reply::Dismiss => Some(Value::Null),
                    Reply::Ignore => None,
                    Reply::SaveAllThen(title) => {
                        self.save_all().await?;
                        title.map(|t| json!({"title": t}))
                    }
                };
                if let Some(choice) = choice {
                    self.client.respond(&id, choice).await?
                }
            }
            "workspace/codeLens/refresh" if !self.plain() => {
                self.lens_refreshes += 1;
                self.client.respond(&id, Value::Null).await?
            }
            "window/showDocument" => {
                if let Some(uri) = request["params"]["uri"].as_str() {
                    self.shown.push(uri.to_owned());
                }
                self.client.respond(&id, json!({"success": true})).await?
            }
            "rein/reviewEdit" if self.options.review.is_some() && !self.plain() => {
                if let Some(review) = &mut self.options.review
                    && let Some(answer) = review(&request["params"])
                {
                    self.client.respond(&id, answer).await?
                }
            }
            "rein/saveDocuments" if self.options.save_documents && !self.plain() => {
                for uri in request["params"]["uris"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                {
                    if let Some(uri) = uri.as_str() {
                        self.save_uri(uri).await?;
                    }
                }
                self.client.respond(&id, Value::Null).await?
            }
            _ => {
                let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("unhandled: {method}")}});
                self.client.send(&error).await?
            }
        }
        Ok(())
    }

    /// Answers a `workspace/applyEdit` request (one that was held, or from
    /// `handle_request`).
    pub async fn answer_edit(
        &mut self,
        request: &Value,
        decision: EditDecision,
    ) -> Result<(), ClientError> {
        let id = request["id"].clone();
        let result = match decision {
            EditDecision::Reject => {
                // As VS Code's client answers a declined edit: no reason.
                json!({"applied": false})
            }
            EditDecision::ClaimWithoutApplying => json!({"applied": true}),
            EditDecision::Ignore | EditDecision::Hold => return Ok(()),
            EditDecision::Accept => match self
                .apply_workspace_edit(&request["params"]["edit"])
                .await?
            {
                Ok(()) => json!({"applied": true}),
                // A plain client says so whatever happened.
                Err(_) if self.plain() => json!({"applied": true}),
                Err(reason) => json!({"applied": false, "failureReason": reason}),
            },
        };
        self.client.respond(&id, result).await
    }

    /// Applies an edit the way VS Code does: all or nothing, refusing a
    /// document edit whose version is not the buffer's.
    async fn apply_workspace_edit(
        &mut self,
        edit: &Value,
    ) -> Result<Result<(), String>, ClientError> {
        let mut operations: Vec<(String, Option<i64>, Vec<Value>, bool)> = Vec::new();
        let mut deletes: Vec<String> = Vec::new();
        if let Some(changes) = edit["documentChanges"].as_array() {
            for change in changes {
                if change["kind"] == "delete" {
                    deletes.push(change["uri"].as_str().unwrap_or_default().to_owned());
                } else if change["kind"] == "create" {
                    operations.push((
                        change["uri"].as_str().unwrap_or_default().to_owned(),
                        None,
                        Vec::new(),
                        true,
                    ));
                } else {
                    let uri = change["textDocument"]["uri"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    let version = change["textDocument"]["version"].as_i64();
                    operations.push((
                        uri,
                        version,
                        change["edits"].as_array().cloned().unwrap_or_default(),
                        false,
                    ));
                }
            }
        } else if let Some(changes) = edit["changes"].as_object() {
            for (uri, edits) in changes {
                operations.push((
                    uri.clone(),
                    None,
                    edits.as_array().cloned().unwrap_or_default(),
                    false,
                ));
            }
        }
        // Check every versioned edit first: all or nothing. (A plain
        // client applies it whatever its version.)
        for (uri, version, _, _) in operations.iter().filter(|_| !self.plain()) {
            if let (Some(v), Some(buffer)) = (version, self.buffers.get(uri))
                && i64::from(buffer.doc.version()) != *v
            {
                return Ok(Err(format!(
                    "{} changed (version {} is not {v})",
                    self.rel(uri),
                    buffer.doc.version()
                )));
            }
        }
        for (uri, _, edits, create) in operations {
            let rel = self.rel(&uri);
            if create {
                std::fs::write(uri_path(&uri), "")?;
                self.open_with(&rel, "").await?;
                continue;
            }
            if !self.buffers.contains_key(&uri) {
                self.open(&rel).await?;
            }
            // Edits of one document refer to its text before any of them:
            // apply from the last to the first.
            let mut edits = edits;
            edits.sort_by_key(|e| {
                std::cmp::Reverse((
                    e["range"]["start"]["line"].as_u64(),
                    e["range"]["start"]["character"].as_u64(),
                ))
            });
            let changes: Vec<Value> = edits
                .iter()
                .map(|e| json!({"range": e["range"], "text": e["newText"]}))
                .collect();
            self.change(&uri, changes).await?;
        }
        // As VS Code deletes a file: from the disk, and its buffer closed.
        for uri in deletes {
            match std::fs::remove_file(uri_path(&uri)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                _ => {}
            }
            if let Some(buffer) = self.buffers.remove(&uri)
                && self.synced(&buffer.language)
            {
                self.client
                    .notify(
                        "textDocument/didClose",
                        json!({"textDocument": {"uri": uri}}),
                    )
                    .await?;
            }
        }
        Ok(Ok(()))
    }

    pub async fn shutdown(&mut self) -> Result<(), ClientError> {
        self.request("shutdown", Value::Null).await?;
        self.client.notify("exit", Value::Null).await
    }

    /// The raw client, for messages this type does not model.
    pub fn client(&mut self) -> &mut LspClient<W> {
        &mut self.client
    }

    /// The language id a buffer was opened with.
    pub fn language(&self, rel: &str) -> Option<String> {
        self.buffers.get(&self.uri(rel)).map(|b| b.language.clone())
    }
}

fn parse_change(change: &Value) -> Option<rein_text::ContentChange> {
    let text = change["text"].as_str()?.to_owned();
    if change.get("range").is_none() {
        return Some(rein_text::ContentChange::full(text));
    }
    let pos = |p: &Value| {
        Position::new(
            p["line"].as_u64().unwrap_or(0) as u32,
            p["character"].as_u64().unwrap_or(0) as u32,
        )
    };
    let range = Range::new(pos(&change["range"]["start"]), pos(&change["range"]["end"]));
    Some(rein_text::ContentChange::replace(range, text))
}

/// The byte offset of a UTF-16 position in `text` (for tests that build
/// ranges by hand).
pub fn byte_offset(text: &str, line: u32, character: u32) -> usize {
    let rope = Rope::from_str(text);
    let (c, _) = position_to_char(&rope, Position::new(line, character), OffsetEncoding::Utf16);
    rope.char_to_byte(c)
}

/// Whether `m` is a `rein/taskStatus` in which a task stops: a final
/// state, or `waiting_user` (nothing happens until someone answers).
pub fn task_ended(m: &Value) -> bool {
    let params = &m["params"];
    m["method"] == "rein/taskStatus"
        // Stopped for the user (a question, a crash to look at) ends the
        // run too; with `waitingFor` it is the task still at work, waiting
        // on a review, an approval, or the answer to its question.
        && params["state"]
            .as_str()
            .and_then(|s| s.parse::<rein_protocol::TaskState>().ok())
            .is_some_and(|state| {
                rein_protocol::run_is_over(
                    state,
                    !params.get("waitingFor").is_none_or(Value::is_null),
                )
            })
}
