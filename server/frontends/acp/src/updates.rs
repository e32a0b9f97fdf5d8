//! A task's events as ACP `session/update` notifications: the model's text
//! streamed as `agent_message_chunk`, each tool call as `tool_call` then
//! `tool_call_update` (kind, title, locations, the edit's diff; what it is
//! doing meanwhile, such as an MCP server's progress), tokens
//! and cost as `usage_update` (cost in USD), Rein's progress note as a
//! `plan` (`plan.rs`). Everything sent is redacted
//! with the task's redactor first: no key reaches the client.

use std::path::PathBuf;
use std::sync::Mutex;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Cost, Diff, SessionUpdate, TextContent, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, UsageUpdate,
};
use rein_core::ports::{Evidence, ProgressSink, TaskEvent};
use rein_core::task::TaskId;
use rein_models::Redactor;

use super::approve::CurrentCall;
use super::kind::acp_kind;
use super::redact::send_update;

/// Adds a streamed piece to `pending` and takes what can be sent: up to
/// the last whitespace, so no word (a key has no spaces) is ever split
/// between two messages, where the redactor could not see it whole.
fn ready_to_send(pending: &mut String, piece: &str) -> String {
    pending.push_str(piece);
    match pending.rfind(char::is_whitespace) {
        Some(at) => {
            let cut = at + pending[at..].chars().next().map_or(1, char::len_utf8);
            pending.drain(..cut).collect()
        }
        None => String::new(),
    }
}

/// Sends a task's events to the client.
pub struct AcpProgress {
    pub cx: ConnectionTo<Client>,
    pub session_id: String,
    pub root: PathBuf,
    pub redactor: Redactor,
    pub call: std::sync::Arc<CurrentCall>,
    /// The model's context window, for `usage_update`.
    pub window: u64,
    /// The task has acceptance checks (its plan ends with them).
    pub checks: bool,
    /// What the client served, forgotten whenever time passes.
    pub cache: Option<std::sync::Arc<super::read_cache::ReadCache>>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Streamed text not sent yet: held back to the last whitespace, so a
    /// key split across two pieces is still whole when it is redacted.
    pending: String,
    /// Some text of this turn was streamed (the whole text is then not
    /// sent again).
    streamed: bool,
    /// The last model call's prompt, in tokens.
    context_tokens: u64,
    /// The last verdict's evidence.
    evidence: Vec<Evidence>,
    /// The plan last sent.
    plan: Option<agent_client_protocol::v1::schema::Plan>,
    /// Titles of this task's calls, by id.
    titles: std::collections::HashMap<String, String>,
    /// The calls a cancel stopped while under way (their titles).
    interrupted: Vec<String>,
    /// Calls started and not finished.
    running: std::collections::HashSet<String>,
    /// Edit calls not finished yet: the file each names.
    editing: std::collections::HashMap<String, String>,
    /// The files the task changed (by its progress note and its edits).
    changed: std::collections::BTreeSet<String>,
}

impl AcpProgress {
    pub fn new(
        cx: ConnectionTo<Client>,
        session_id: String,
        root: PathBuf,
        redactor: Redactor,
        call: std::sync::Arc<CurrentCall>,
        window: u64,
        checks: bool,
    ) -> Self {
        Self {
            cx,
            session_id,
            root,
            redactor,
            call,
            window,
            checks,
            cache: None,
            state: Mutex::new(State::default()),
        }
    }

    /// The files the task changed, as the workspace names them.
    pub fn changed(&self) -> Vec<String> {
        self.state
            .lock()
            .map(|s| s.changed.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The calls a cancel stopped while under way: they may have run in
    /// part, which a later prompt must know.
    pub fn interrupted(&self) -> Vec<String> {
        self.state
            .lock()
            .map(|s| s.interrupted.clone())
            .unwrap_or_default()
    }

    /// The evidence of the last verdict (for the final message).
    pub fn last_evidence(&self) -> Vec<Evidence> {
        self.state
            .lock()
            .map(|s| s.evidence.clone())
            .unwrap_or_default()
    }

    pub fn send(&self, update: SessionUpdate) {
        send_update(&self.cx, &self.redactor, &self.session_id, update);
    }

    /// Text for the user, as the agent's message.
    pub fn say(&self, text: &str) {
        if !text.is_empty() {
            self.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                ContentBlock::Text(TextContent::new(text.to_owned())),
            )));
        }
    }

    fn stream(&self, text: &str) {
        let ready = {
            let Ok(mut state) = self.state.lock() else {
                return;
            };
            state.streamed = true;
            ready_to_send(&mut state.pending, text)
        };
        self.say(&ready);
    }

    /// The turn's text is complete: what was held back, or, if nothing
    /// streamed, the whole text.
    fn complete(&self, text: &str) {
        let rest = {
            let Ok(mut state) = self.state.lock() else {
                return;
            };
            let rest = if state.streamed {
                std::mem::take(&mut state.pending)
            } else {
                text.to_owned()
            };
            state.streamed = false;
            rest
        };
        self.say(&rest);
        if !rest.ends_with('\n') && !rest.is_empty() {
            self.say("\n");
        }
    }

    fn location(&self, arguments: &serde_json::Value) -> Vec<ToolCallLocation> {
        arguments
            .get("path")
            .and_then(|p| p.as_str())
            .map(|p| vec![ToolCallLocation::new(self.root.join(p))])
            .unwrap_or_default()
    }

    fn tool_call(
        &self,
        call_id: &str,
        tool: &str,
        arguments: &serde_json::Value,
        title: &str,
        kind: rein_core::tools::ToolKind,
    ) {
        self.call.set(call_id);
        if let Ok(mut state) = self.state.lock() {
            state.titles.insert(call_id.to_owned(), title.to_owned());
            state.running.insert(call_id.to_owned());
            if kind == rein_core::tools::ToolKind::Edit
                && let Some(path) = arguments.get("path").and_then(|p| p.as_str())
            {
                state.editing.insert(call_id.to_owned(), path.to_owned());
            }
        }
        let mut call = ToolCall::new(call_id.to_owned(), title.to_owned())
            .kind(acp_kind(kind))
            .status(ToolCallStatus::InProgress)
            .locations(self.location(arguments))
            .raw_input(arguments.clone());
        if let Some(change) = rein_core::tools::builtin().proposed_change(tool, arguments) {
            let mut diff = Diff::new(self.root.join(&change.path), change.new_text);
            if let Some(old) = change.old_text.filter(|old| !old.is_empty()) {
                diff = diff.old_text(old);
            }
            call = call.content(vec![ToolCallContent::Diff(diff)]);
        }
        self.send(SessionUpdate::ToolCall(call));
    }

    fn tool_result(&self, call_id: &str, is_error: bool, summary: &str) {
        if let Ok(mut state) = self.state.lock() {
            state.running.remove(call_id);
            if let Some(path) = state.editing.remove(call_id)
                && !is_error
            {
                state.changed.insert(path);
            }
        }
        if is_error
            && summary.starts_with(rein_core::agent::INTERRUPTED)
            && let Ok(mut state) = self.state.lock()
        {
            let title = state.titles.get(call_id).cloned().unwrap_or_default();
            state.interrupted.push(title);
        }
        let status = if is_error {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        };
        let fields =
            ToolCallUpdateFields::new()
                .status(status)
                .content(vec![ToolCallContent::from(ContentBlock::Text(
                    TextContent::new(summary.to_owned()),
                ))]);
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call_id.to_owned(),
            fields,
        )));
    }
}

impl ProgressSink for AcpProgress {
    fn event(&self, _task: &TaskId, event: &TaskEvent) {
        // Steps that take time: the user may have typed meanwhile.
        if let Some(cache) = &self.cache
            && matches!(
                event,
                TaskEvent::Started { .. }
                    | TaskEvent::ModelCall { .. }
                    | TaskEvent::ToolResult { .. }
                    | TaskEvent::Verification { .. }
            )
        {
            cache.time_passed();
        }
        match event {
            TaskEvent::TextDelta { text, .. } => self.stream(text),
            TaskEvent::Text { text, .. } => self.complete(text),
            TaskEvent::ModelRetry { .. } => {
                // The reply starts over: what was shown of it stays, marked.
                let had = self.state.lock().is_ok_and(|mut s| {
                    s.pending.clear();
                    std::mem::take(&mut s.streamed)
                });
                if had {
                    self.say("\n(the model's reply was cut off; it starts over)\n");
                }
            }
            TaskEvent::ToolCall {
                call_id,
                tool,
                arguments,
                title,
                kind,
                ..
            } => self.tool_call(call_id, tool, arguments, title, *kind),
            TaskEvent::ToolResult {
                call_id,
                is_error,
                summary,
                ..
            } => self.tool_result(call_id, *is_error, summary),
            // What the running call is doing now (an MCP server's progress
            // report, "waiting for approval"): shown in that call.
            // (Not "waiting for approval": the permission request says so.)
            TaskEvent::Activity { text } if text != rein_core::ports::APPROVAL_WAIT => {
                let call_id = self.call.get();
                let running = self
                    .state
                    .lock()
                    .is_ok_and(|s| s.running.contains(&call_id));
                if running {
                    self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                        call_id,
                        ToolCallUpdateFields::new().content(vec![ToolCallContent::from(
                            ContentBlock::Text(TextContent::new(text.clone())),
                        )]),
                    )));
                }
            }
            TaskEvent::ModelCall { usage, .. } => {
                if let Ok(mut state) = self.state.lock() {
                    state.context_tokens = usage
                        .input_tokens
                        .saturating_add(usage.cache_read_tokens)
                        .saturating_add(usage.cache_write_tokens)
                        .saturating_add(usage.output_tokens);
                }
            }
            TaskEvent::Status(status) => {
                let used = self.state.lock().map(|s| s.context_tokens).unwrap_or(0);
                self.send(SessionUpdate::UsageUpdate(
                    UsageUpdate::new(used, self.window).cost(Cost::new(status.cost_usd, "USD")),
                ));
            }
            TaskEvent::ProgressNote { progress, .. } => {
                if let Ok(mut state) = self.state.lock() {
                    state.changed.extend(progress.changed.keys().cloned());
                }
                let Some(plan) = super::plan::plan_of(progress, self.checks) else {
                    return;
                };
                let changed = self.state.lock().is_ok_and(|mut s| {
                    let changed = s.plan.as_ref() != Some(&plan);
                    s.plan = Some(plan.clone());
                    changed
                });
                // Sent when it changed: the client replaces the whole plan.
                if changed {
                    self.send(SessionUpdate::Plan(plan));
                }
            }
            TaskEvent::Verification { evidence, .. } => {
                if let Ok(mut state) = self.state.lock() {
                    state.evidence = evidence.clone();
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key streamed in pieces is sent whole, so the redactor sees it.
    #[test]
    fn a_key_streamed_in_pieces_is_redacted_whole() {
        let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
        let redactor = Redactor::default().with_secrets([key.to_owned()]);
        let mut pending = String::new();
        let mut sent = String::new();
        for piece in [
            "The key is sk-ant-api03-abcdef",
            "ghijklmnopqrstuvwxyz",
            "0123456789 ok\n",
        ] {
            let ready = ready_to_send(&mut pending, piece);
            sent.push_str(&redactor.redact(&ready));
        }
        sent.push_str(&redactor.redact(&pending));
        assert_eq!(sent, "The key is <redacted> ok\n");
    }
}
