//! Rein's own LSP methods (`rein/*`). Their shapes are part of the product's
//! contract with editor plugins and tests.
//!
//! The whole LSP surface, for orientation:
//! - `initialize`: `positionEncoding` negotiated; incremental
//!   `textDocumentSync` with open/close and save (with text, to detect a
//!   drifted copy); `codeActionProvider` (quickfix);
//!   `executeCommandProvider.commands` ([`commands::ALL`]): `rein.fixTest
//!   {uri, position, testName}`, `rein.fixError {uri, diagnostic}`,
//!   `rein.runTask {instruction, uri?, range?, about?}`, `rein.cancelTask {taskId}`, `rein.resumeTask {taskId}`,
//!   `rein.answer {taskId, text}`, `rein.trustWorkspace {trusted}`,
//!   `rein.undoTask {taskId}`.
//! - Settings: `initializationOptions`, then the `rein` section of
//!   `workspace/configuration` (an empty answer, `{}` or `null`, leaves the
//!   `initializationOptions`); besides the README's keys, an editor may set
//!   `approvalTimeoutSecs`, `confirmTimeoutSecs`, `reopenTimeoutSecs`.
//! - Server → client: `workspace/applyEdit` (versioned `TextDocumentEdit`s
//!   of `AnnotatedTextEdit`s with `needsConfirmation`, `changes` for clients
//!   without `documentChanges`, `CreateFile` for new files),
//!   `window/workDoneProgress/create` + `$/progress`, `rein/taskStatus`,
//!   `rein/reviewEdit` (clients declaring `experimental.rein.reviewsEdits`),
//!   `rein/verification`, `rein/undone` ([`UNDONE`]), `rein/saveDocuments` (clients declaring
//!   `experimental.rein.saveDocuments`), `window/showMessageRequest`
//!   (commands, edits for clients that cannot show them, saves and writes,
//!   trust), `window/showDocument`, `window/showMessage`.
//! - Client capabilities read under `experimental.rein`: `saveDocuments`,
//!   `instructionPrompt`, `confirmsEdits`, `workspaceTrust`, `reviewsEdits`.
//! - `window/workDoneProgress/cancel` cancels the task of that token.
//! - `rein/documentState`, for tests, benchmarks and `rein doctor`.

use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::Uri;

/// `rein/documentState`: what the server holds for one open document. Used
/// by tests, benchmarks and `rein doctor` to check that the server's view of
/// a buffer matches the editor's.
pub const DOCUMENT_STATE: &str = "rein/documentState";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DocumentStateParams {
    pub uri: Uri,
    #[serde(default)]
    pub include_text: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentState {
    pub uri: Uri,
    pub version: i32,
    pub language_id: String,
    /// BLAKE3 of the UTF-8 text, 64 hex digits.
    pub content_hash: String,
    pub line_count: usize,
    pub utf8_length: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// `rein/taskStatus`: sent on every state change of a task (and as token
/// counts grow), in camelCase: `{taskId, state, reason?, turn, maxTurns,
/// inputTokens, outputTokens, costUsd, unpricedCalls}` (`unpricedCalls >
/// 0`: the cost is unknown, or more than `costUsd`), plus, while the task
/// waits for the user in the middle of its run, `state: "waiting_user"`
/// with `waitingFor: {kind: "review" | "approval" | "answer", detail}` (a
/// status without it follows when the wait ends), and on the final status
/// `summary`: the model's last words (untrusted text), and `cause`: why it
/// stopped, typed (`rein_protocol::StopCause`).
///
/// While the task runs, `step` says what it does now in the user's words
/// ("thinking", "running tests", "reading cart.py", "editing cart.py",
/// "waiting for you · review cart.py", "verifying"): a status is sent
/// whenever it changes, and it never lags (the model called again after a
/// tool reads "thinking" at once). `said` is the model's latest line as it
/// streams (a word at a time, at most about four statuses a second; the
/// whole reply's last line once it is complete). Both are untrusted text,
/// redacted, one line without control, bidi or invisible characters,
/// bounded (`said`: 160 characters): a client shows them as plain text,
/// never as Markdown or links. The core's `TaskStatus` is the data; this
/// is its shape on the wire.
pub const TASK_STATUS: &str = "rein/taskStatus";

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusParams<'a> {
    pub task_id: &'a str,
    pub state: &'static str,
    pub reason: Option<&'a str>,
    pub turn: u32,
    pub max_turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub unpriced_calls: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<&'a Waiting>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<&'a str>,
    /// On a final status: why the task stopped (`model_failed`,
    /// `budget`, `rejected`, …: `rein_protocol::StopCause`, snake_case),
    /// so the editor can offer what fixes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<rein_core::agent::StopCause>,
    /// What the task does now (not on a final status).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<&'a str>,
    /// The model's latest line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub said: Option<&'a str>,
}

impl<'a> TaskStatusParams<'a> {
    /// The status as sent: shown as `waiting_user` while `waiting` (never
    /// a final one), with the model's last words on a final one; `words`:
    /// the step and what the model said.
    pub fn of(
        status: &'a rein_core::ports::TaskStatus,
        waiting: Option<&'a Waiting>,
        summary: Option<&'a str>,
        words: Words<'a>,
    ) -> Self {
        let final_state = status.state.is_end();
        let waiting = waiting.filter(|_| !final_state);
        // A task that stopped to wait (nobody answered) says why, typed,
        // as an ended one does: the editor offers "Resume" by it.
        let stopped = final_state
            || (status.state == rein_core::task::TaskState::WaitingUser && waiting.is_none());
        Self {
            task_id: &status.task_id.0,
            state: if waiting.is_some() {
                rein_core::task::TaskState::WaitingUser.as_str()
            } else {
                status.state.as_str()
            },
            reason: status.reason.as_deref(),
            turn: status.turn,
            max_turns: status.max_turns,
            input_tokens: status.input_tokens,
            output_tokens: status.output_tokens,
            cost_usd: status.cost_usd,
            unpriced_calls: status.unpriced_calls,
            waiting_for: waiting,
            summary: summary.filter(|_| final_state),
            cause: status.cause.filter(|_| stopped),
            step: words.step.filter(|_| !final_state),
            said: words.said,
        }
    }
}

/// What `rein/taskStatus` says of the work beside the counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct Words<'a> {
    pub step: Option<&'a str>,
    pub said: Option<&'a str>,
}

/// What a task waits for the user to do: `rein/taskStatus` says so in
/// `waitingFor`, with the state `waiting_user`, while the loop itself
/// still runs (a review, an approval or an answer is pending).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Waiting {
    pub kind: WaitingKind,
    /// What it is about, one line ("the edit to cart.py").
    pub detail: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitingKind {
    /// A proposed change to review.
    Review,
    /// A command to allow or deny.
    Approval,
    /// A question from the model.
    Answer,
}

/// `rein/reviewEdit`: the client's own review of a proposed change, for a
/// client that declares `experimental.rein.reviewsEdits`; see `review.rs`
/// for the params and the answer.
pub use crate::review::REVIEW_EDIT;

/// `rein/verification {taskId, passed, detail, evidence}`: what the
/// verifier checked when the model claimed to be done, with the evidence
/// (`[{check, command, exitCode, durationMs, files: [{path, contentHash}],
/// logPath, failures}]`), so an editor can show why a task did or did not
/// succeed.
pub const VERIFICATION: &str = "rein/verification";

/// `rein/saveDocuments {uris}`: asks a client that declares
/// `capabilities.experimental.rein.saveDocuments = true` to save buffers.
pub const SAVE_DOCUMENTS: &str = "rein/saveDocuments";

/// `rein/undone` (server → client notification): what `rein.undoTask`
/// did, when it is done (the same words are shown as a message).
pub const UNDONE: &str = "rein/undone";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UndoneParams {
    pub task_id: String,
    /// One sentence; or why nothing was undone.
    pub summary: String,
    /// Some file was left as it is (a conflict) or could not be undone.
    pub incomplete: bool,
    /// The task was not undone at all (not over, unknown, …): `summary`
    /// says why.
    pub refused: bool,
    pub files: Vec<UndoneFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UndoneFile {
    pub path: String,
    /// `restored`, `removed`, `asBefore`, `alreadyUndone`, `conflict`,
    /// `cannot`.
    pub result: String,
    /// The file's line in the user's words.
    pub message: String,
    /// For a conflict: the 1-based lines (in the file now) of each region.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflict_lines: Vec<usize>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveDocumentsParams {
    pub uris: Vec<Uri>,
}

/// The commands of `workspace/executeCommand` (DESIGN.md §4). Each takes
/// exactly one object argument.
pub mod commands {
    pub const FIX_TEST: &str = "rein.fixTest";
    /// `{uri, diagnostic}`: the diagnostic as the editor sent it in the
    /// code action's context.
    pub const FIX_ERROR: &str = "rein.fixError";
    pub const RUN_TASK: &str = "rein.runTask";
    pub const CANCEL_TASK: &str = "rein.cancelTask";
    pub const RESUME_TASK: &str = "rein.resumeTask";
    pub const ANSWER: &str = "rein.answer";
    /// `{trusted}`: the user's decision about the workspace's own settings.
    pub const TRUST_WORKSPACE: &str = "rein.trustWorkspace";
    /// `{taskId}`: take back an ended task's changes, keeping the user's
    /// since; answered at once, the result comes as `rein/undone`.
    pub const UNDO_TASK: &str = "rein.undoTask";
    pub const ALL: [&str; 8] = [
        FIX_TEST,
        FIX_ERROR,
        RUN_TASK,
        CANCEL_TASK,
        RESUME_TASK,
        ANSWER,
        TRUST_WORKSPACE,
        UNDO_TASK,
    ];
}

#[derive(Debug, Deserialize)]
pub struct TrustArgs {
    pub trusted: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixTestArgs {
    pub uri: Uri,
    pub position: tower_lsp_server::ls_types::Position,
    pub test_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTaskArgs {
    #[serde(default)]
    pub instruction: String,
    pub uri: Option<Uri>,
    pub range: Option<tower_lsp_server::ls_types::Range>,
    /// What the question is about beyond the place (a diagnostic Rein
    /// cannot check, quoted).
    #[serde(default)]
    pub about: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixErrorArgs {
    pub uri: Uri,
    pub diagnostic: tower_lsp_server::ls_types::Diagnostic,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdArgs {
    pub task_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerArgs {
    pub task_id: String,
    pub text: String,
}
