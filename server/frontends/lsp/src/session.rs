//! The state of one editor session, shared by the handlers, the tasks they
//! start and the ports those tasks use. Every lock here is a std lock held
//! for a few instructions, never across an `.await`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use rein_core::os::user_state::UserState;
use rein_core::trust::Trust;

use rein_text::{ContentHash, DocumentStore, OffsetEncoding, Snapshot};
use serde_json::Value;
use tokio::sync::watch;
use tower_lsp_server::ls_types::{ClientCapabilities, ResourceOperationKind, Uri};

use crate::framing::FrameLimits;
use rein_app::service::{ServiceOptions, TaskService};
use rein_core::task_host::RunningTasks;

#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// How long the server waits for the client to answer one of its
    /// requests (configuration, progress tokens, saves).
    pub client_request_timeout: Duration,
    /// How long a proposed edit may wait for the user's decision.
    pub approval_timeout: Duration,
    /// After the editor says an edit was applied, how long to wait for the
    /// `didChange` that shows it.
    pub confirm_timeout: Duration,
    /// After a restart, how long recovery waits for the editor to reopen
    /// the files whose saved copy lacks the task's edits: an edit the
    /// editor applied but never saved lives only in its buffer, and the
    /// disk would say "not applied".
    pub reopen_timeout: Duration,
    /// The user's own state (trust decisions, the installation id);
    /// `None`: nothing is remembered and no task is resumed unasked.
    pub user_state: Option<UserState>,
    /// The `rein` binary every command is started through (`rein
    /// sandbox-exec`): this one, unless the server runs inside another
    /// program (tests).
    pub rein_binary: PathBuf,
    /// What one frame from the client may make the server hold.
    pub frame_limits: FrameLimits,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            client_request_timeout: Duration::from_secs(30),
            approval_timeout: Duration::from_secs(600),
            confirm_timeout: Duration::from_secs(5),
            reopen_timeout: Duration::from_secs(3),
            user_state: rein_app::settings::user_state(),
            rein_binary: rein_app::setup::this_binary(),
            frame_limits: FrameLimits::default(),
        }
    }
}

/// What the client can do, read once from `initialize`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientCaps {
    pub configuration: bool,
    pub document_changes: bool,
    pub create_files: bool,
    /// `workspaceEdit.resourceOperations` has `delete`: undo removes a
    /// file the task created through the editor.
    pub delete_files: bool,
    pub change_annotations: bool,
    pub work_done_progress: bool,
    /// `experimental.rein.saveDocuments`: the client saves buffers on
    /// request (`rein/saveDocuments`).
    pub save_documents: bool,
    /// `experimental.rein.instructionPrompt`: the client asks the user for
    /// an instruction before it sends `rein.runTask` (our extensions do),
    /// so "Ask Rein…" can work there.
    pub instruction_prompt: bool,
    /// `experimental.rein.confirmsEdits`: the client shows an edit marked
    /// `needsConfirmation` to the user before applying it (our extensions
    /// do). Declaring `changeAnnotationSupport` is not enough: Sublime
    /// LSP declares it and applies such edits unasked.
    pub confirms_edits: bool,
    /// `experimental.rein.reviewsEdits`: the client answers
    /// `rein/reviewEdit` with its own review (the real diff, the model's
    /// reason, Accept / Reject per hunk), so an edit is applied only
    /// after that, without the editor's generic preview.
    pub reviews_edits: bool,
    /// `experimental.rein.workspaceTrust`: the client states its own
    /// workspace trust in `initializationOptions.workspaceTrusted` (VS Code's
    /// extension, from Workspace Trust). In other clients a project's own
    /// file can set `initializationOptions` (a `.kateproject`, Helix's
    /// `.helix/languages.toml`), so there the key is not the editor's word.
    pub workspace_trust: bool,
    /// `window.showDocument.support`: the client opens a file Rein names
    /// (how a proposed edit's diff is shown where annotations are not).
    pub show_document: bool,
    /// `textDocument.codeAction.disabledSupport`: the client shows an
    /// action Rein cannot take, greyed, with the reason.
    pub disabled_actions: bool,
    /// `workspace.codeLens.refreshSupport`: the client asks for the
    /// lenses again when told the failed tests changed (`code_lens`).
    pub code_lens_refresh: bool,
}

impl ClientCaps {
    /// The client itself asks the user about an edit marked
    /// `needsConfirmation`; otherwise Rein asks first.
    pub fn shows_confirmations(&self) -> bool {
        self.change_annotations && self.confirms_edits
    }

    pub fn from_lsp(caps: &ClientCapabilities) -> Self {
        let experimental = |pointer: &str| {
            caps.experimental
                .as_ref()
                .and_then(|e| e.pointer(pointer))
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        let edit = caps
            .workspace
            .as_ref()
            .and_then(|w| w.workspace_edit.as_ref());
        Self {
            configuration: caps
                .workspace
                .as_ref()
                .and_then(|w| w.configuration)
                .unwrap_or(false),
            document_changes: edit.and_then(|e| e.document_changes).unwrap_or(false),
            create_files: edit
                .and_then(|e| e.resource_operations.as_ref())
                .is_some_and(|ops| ops.contains(&ResourceOperationKind::Create)),
            delete_files: edit
                .and_then(|e| e.resource_operations.as_ref())
                .is_some_and(|ops| ops.contains(&ResourceOperationKind::Delete)),
            change_annotations: edit
                .and_then(|e| e.change_annotation_support.as_ref())
                .is_some(),
            work_done_progress: caps
                .window
                .as_ref()
                .and_then(|w| w.work_done_progress)
                .unwrap_or(false),
            save_documents: experimental("/rein/saveDocuments"),
            instruction_prompt: experimental("/rein/instructionPrompt"),
            confirms_edits: experimental("/rein/confirmsEdits"),
            reviews_edits: experimental("/rein/reviewsEdits"),
            workspace_trust: experimental("/rein/workspaceTrust"),
            show_document: caps
                .window
                .as_ref()
                .and_then(|w| w.show_document.as_ref())
                .is_some_and(|s| s.support),
            disabled_actions: caps
                .text_document
                .as_ref()
                .and_then(|t| t.code_action.as_ref())
                .and_then(|c| c.disabled_support)
                .unwrap_or(false),
            code_lens_refresh: caps
                .workspace
                .as_ref()
                .and_then(|w| w.code_lens.as_ref())
                .and_then(|c| c.refresh_support)
                .unwrap_or(false),
        }
    }
}

#[derive(Debug)]
pub struct Session {
    pub docs: DocumentStore,
    /// Set once by `initialize`; UTF-16 until then (the LSP default).
    pub encoding: OnceLock<OffsetEncoding>,
    pub caps: OnceLock<ClientCaps>,
    /// The workspace root, from `initialize`.
    pub root: OnceLock<PathBuf>,
    /// Settings from `initializationOptions`, then `workspace/configuration`.
    pub settings: RwLock<Value>,
    /// Bumped on every document notification: tasks waiting to see an
    /// edit arrive watch it.
    pub changes: watch::Sender<u64>,
    /// The hash of each document's text when the editor last saved it.
    pub saved: RwLock<HashMap<String, ContentHash>>,
    /// The hash of each document's text when the editor opened it: a disk
    /// copy that still holds exactly that was not changed behind the
    /// editor's back, so Rein may write the buffer over it.
    pub opened: RwLock<HashMap<String, ContentHash>>,
    /// Files whose last edit is in doubt, frozen until their state is known.
    pub doubts: crate::doubt::Doubts,
    /// The user chose "Always write them": unsaved buffers are written
    /// before commands run, without asking again this session.
    pub write_buffers_always: AtomicBool,
    pub shutdown_requested: AtomicBool,
    pub tasks: Arc<RunningTasks>,
    /// The MCP servers of this session, kept between its tasks.
    pub mcp: Arc<rein_mcp::McpPool>,
    pub options: ServerOptions,
    /// The tests this session's task runs last showed failing, for the
    /// "Fix with Rein" lenses (`code_lens`).
    pub test_outcomes: crate::known_outcomes::KnownOutcomes,
    /// The workspace's task service, made on first use.
    service: std::sync::Mutex<Option<Arc<TaskService>>>,
    /// The user's own state: trust decisions, the installation id.
    pub user_state: Option<UserState>,
    /// This installation's id: tasks it created are resumed unasked after
    /// a crash; any other task (one that came with a repository) is not.
    pub installation: Option<String>,
    /// The editor's own word on workspace trust (`initializationOptions`).
    pub editor_trust: OnceLock<Option<bool>>,
    /// Held while the user is asked about trust: one question at a time.
    pub trust_question: tokio::sync::Mutex<()>,
    /// This session's trust answers, by settings fingerprint (including
    /// "no answer", so a dismissed question is not asked at every task).
    trust_answers: Mutex<HashMap<String, Trust>>,
    /// Fingerprints whose ignored settings the user has been told about.
    ignored_notices: Mutex<HashSet<String>>,
    /// The user has been told this machine's sandbox is incomplete.
    sandbox_notice: AtomicBool,
    /// The user has been told the editor cannot show Rein's questions.
    questions_notice: AtomicBool,
    /// How many `workspace/configuration` fetches are under way: a task
    /// waits for them, so it runs with the settings the editor has.
    configuration_fetches: watch::Sender<u32>,
}

/// This installation's id, made on first use; without one no task is
/// resumed unasked (said once in the log).
fn installation(state: Option<&UserState>) -> Option<String> {
    let state = state?;
    match state.installation_id() {
        Ok(id) => Some(id),
        Err(error) => {
            tracing::warn!(%error, "no installation id: tasks left by a crash will wait to be resumed by hand");
            None
        }
    }
}

impl Session {
    pub fn new(options: ServerOptions) -> Self {
        Self {
            docs: DocumentStore::new(),
            encoding: OnceLock::new(),
            caps: OnceLock::new(),
            root: OnceLock::new(),
            settings: RwLock::new(Value::Null),
            changes: watch::channel(0).0,
            saved: RwLock::new(HashMap::new()),
            opened: RwLock::new(HashMap::new()),
            doubts: crate::doubt::Doubts::default(),
            write_buffers_always: AtomicBool::new(false),
            shutdown_requested: AtomicBool::new(false),
            tasks: Arc::default(),
            mcp: Arc::default(),
            service: std::sync::Mutex::new(None),
            test_outcomes: crate::known_outcomes::KnownOutcomes::default(),
            installation: installation(options.user_state.as_ref()),
            user_state: options.user_state.clone(),
            editor_trust: OnceLock::new(),
            trust_question: tokio::sync::Mutex::new(()),
            trust_answers: Mutex::new(HashMap::new()),
            ignored_notices: Mutex::new(HashSet::new()),
            sandbox_notice: AtomicBool::new(false),
            questions_notice: AtomicBool::new(false),
            configuration_fetches: watch::channel(0).0,
            options,
        }
    }

    pub fn configuration_fetch_started(&self) {
        self.configuration_fetches.send_modify(|n| *n += 1);
    }

    pub fn configuration_fetch_ended(&self) {
        self.configuration_fetches
            .send_modify(|n| *n = n.saturating_sub(1));
    }

    /// Waits (bounded by the client request timeout, which also bounds the
    /// fetch) until no settings fetch is under way.
    pub async fn settings_settled(&self) {
        let mut fetches = self.configuration_fetches.subscribe();
        let settled = fetches.wait_for(|n| *n == 0);
        let _ = tokio::time::timeout(self.options.client_request_timeout, settled).await;
    }

    pub fn editor_trust(&self) -> Option<bool> {
        self.editor_trust.get().copied().flatten()
    }

    pub fn trust_answer(&self, fingerprint: &str) -> Option<Trust> {
        self.trust_answers.lock().ok()?.get(fingerprint).cloned()
    }

    pub fn remember_trust_answer(&self, fingerprint: &str, trust: Trust) {
        if let Ok(mut answers) = self.trust_answers.lock() {
            answers.insert(fingerprint.to_owned(), trust);
        }
    }

    /// `true` the first time it is asked.
    pub fn first_sandbox_notice(&self) -> bool {
        !self.sandbox_notice.swap(true, Ordering::SeqCst)
    }

    /// `true` the first time it is asked.
    pub fn first_questions_unsupported_notice(&self) -> bool {
        !self.questions_notice.swap(true, Ordering::SeqCst)
    }

    /// `true` the first time it is asked for `fingerprint`.
    pub fn first_ignored_notice(&self, fingerprint: &str) -> bool {
        self.ignored_notices
            .lock()
            .map(|mut told| told.insert(fingerprint.to_owned()))
            .unwrap_or(false)
    }

    /// The task service of the workspace (its `.rein/state.db` opened),
    /// made once the editor has named the folder.
    pub fn service(&self) -> Result<Arc<TaskService>, String> {
        let root = self
            .root
            .get()
            .ok_or("no workspace folder is open in the editor")?;
        let mut service = self
            .service
            .lock()
            .map_err(|_| "the task state is unavailable".to_owned())?;
        if let Some(service) = service.as_ref() {
            return Ok(Arc::clone(service));
        }
        let opened = Arc::new(TaskService::open(
            root,
            ServiceOptions {
                rein: self.options.rein_binary.clone(),
                mcp: Arc::clone(&self.mcp),
                running: Arc::clone(&self.tasks),
                installation: self.installation.clone(),
            },
        )?);
        *service = Some(Arc::clone(&opened));
        Ok(opened)
    }

    /// The task state of the workspace (`.rein/state.db`).
    pub fn store(&self) -> Result<Arc<rein_store::Store>, String> {
        self.service().map(|s| Arc::clone(s.store()))
    }

    pub fn encoding(&self) -> OffsetEncoding {
        self.encoding.get().copied().unwrap_or_default()
    }

    pub fn caps(&self) -> ClientCaps {
        self.caps.get().copied().unwrap_or_default()
    }

    pub fn settings(&self) -> Value {
        self.settings.read().map(|s| s.clone()).unwrap_or_default()
    }

    /// How long an edit may wait for the user: the editor's
    /// `approvalTimeoutSecs` setting, else the server's default.
    pub fn approval_timeout(&self) -> Duration {
        self.seconds_setting("approvalTimeoutSecs")
            .unwrap_or(self.options.approval_timeout)
    }

    /// How long an applied edit may take to show up in a `didChange`:
    /// `confirmTimeoutSecs`, else the server's default.
    pub fn confirm_timeout(&self) -> Duration {
        self.seconds_setting("confirmTimeoutSecs")
            .unwrap_or(self.options.confirm_timeout)
    }

    /// How long recovery waits for the editor to reopen a file holding
    /// unsaved edits of the task: `reopenTimeoutSecs`, else the default.
    pub fn reopen_timeout(&self) -> Duration {
        self.seconds_setting("reopenTimeoutSecs")
            .unwrap_or(self.options.reopen_timeout)
    }

    fn seconds_setting(&self, key: &str) -> Option<Duration> {
        self.settings()
            .get(key)?
            .as_f64()
            .filter(|s| *s >= 0.0)
            .map(Duration::from_secs_f64)
    }

    pub fn shutdown_requested(&self) -> bool {
        self.shutdown_requested.load(Ordering::SeqCst)
    }

    /// A document notification was applied.
    pub fn changed(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// The open document for a file on disk, if the editor has it open.
    /// URIs are compared as paths: clients spell them differently
    /// (`%3A`, trailing slashes), the file is the same.
    pub fn open_document(&self, path: &Path) -> Option<(String, Snapshot)> {
        self.docs.uris().into_iter().find_map(|uri| {
            let parsed: Uri = uri.parse().ok()?;
            let doc_path = parsed.to_file_path()?;
            (doc_path == path).then(|| self.docs.snapshot(&uri).map(|s| (uri.to_string(), s)))?
        })
    }

    /// Asks `seen` now, then after every document notification (and every
    /// `poll`, for what only the disk shows), until it has an answer or
    /// `within` has passed.
    pub async fn wait_for<T, F, Fut>(
        &self,
        within: Duration,
        poll: Option<Duration>,
        mut seen: F,
    ) -> Option<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Option<T>>,
    {
        // Subscribed before the first look: no notification falls between.
        let mut changes = self.changes.subscribe();
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(answer) = seen().await {
                return Some(answer);
            }
            let tick = async {
                match poll {
                    Some(every) => tokio::time::sleep(every).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return None },
                () = tick => {}
                () = tokio::time::sleep_until(deadline) => return None,
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
        }
    }

    /// Waits, at most `within`, until the editor has each of `paths` open.
    /// Returns those it still has not opened.
    pub async fn wait_until_open(&self, paths: &[PathBuf], within: Duration) -> Vec<PathBuf> {
        let missing = || -> Vec<PathBuf> {
            paths
                .iter()
                .filter(|p| self.open_document(p).is_none())
                .cloned()
                .collect()
        };
        self.wait_for(within, None, || async {
            missing().is_empty().then_some(())
        })
        .await;
        missing()
    }

    /// The workspace-relative path of a document, if it is in the workspace.
    pub fn relative_path(&self, uri: &Uri) -> Option<String> {
        let root = self.root.get()?;
        let path = uri.to_file_path()?;
        let relative = path.strip_prefix(root).ok()?;
        Some(relative.to_string_lossy().replace('\\', "/"))
    }
}
