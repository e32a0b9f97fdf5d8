//! What the editor shows of a task: `$/progress` (begin, a report at each
//! step, end with the outcome) and `rein/taskStatus` on every state change.
//!
//! The loop reports events synchronously; a forwarding task sends them to
//! the client in order, after the progress token was created (LSP requires
//! the client's answer to `window/workDoneProgress/create` first).

use std::sync::Arc;

use rein_core::ports::{Evidence, ProgressSink, TaskEvent, TaskStatus};
use rein_core::task::{TaskId, TaskState};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::notification::Progress as ProgressNotification;
use tower_lsp_server::ls_types::request::WorkDoneProgressCreate;
use tower_lsp_server::ls_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgressCreateParams,
};

use crate::client_requests;
use crate::ext::{TASK_STATUS, VERIFICATION};
use crate::session::Session;

pub struct LspProgress {
    tx: mpsc::UnboundedSender<TaskEvent>,
    session: Arc<Session>,
    forwarder: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// The progress token of a task: how `window/workDoneProgress/cancel`
/// finds it.
pub fn token(task: &TaskId) -> String {
    format!("rein/{task}")
}

impl LspProgress {
    /// Starts forwarding a task's events to the client.
    pub fn start(client: Client, session: Arc<Session>, task: TaskId, title: String) -> Arc<Self> {
        let (tx, rx) = mpsc::unbounded_channel();
        let forwarder = tokio::spawn(forward(client, Arc::clone(&session), task, title, rx));
        Arc::new(Self {
            tx,
            session,
            forwarder: std::sync::Mutex::new(Some(forwarder)),
        })
    }

    /// The forwarding task: it ends once the final status is sent, or
    /// once every handle on this sink is dropped. Awaiting it is how the
    /// server knows the editor has been told everything.
    pub fn take_forwarder(&self) -> Option<tokio::task::JoinHandle<()>> {
        self.forwarder.lock().ok()?.take()
    }
}

impl ProgressSink for LspProgress {
    fn event(&self, task: &TaskId, event: &TaskEvent) {
        // Ended before the editor can hear so: a cancel or an answer sent
        // after the final status must find no running task.
        if let TaskEvent::Status(status) = event
            && status.state.is_terminal()
        {
            self.session.tasks.mark_ended(&task.0);
        }
        // The receiver only goes away after the task's final status.
        let _ = self.tx.send(event.clone());
    }
}

#[derive(Default)]
struct Line {
    turn: u32,
    max_turns: u32,
    activity: String,
    tokens: u64,
    cost: f64,
}

impl Line {
    fn text(&self) -> String {
        format!(
            "turn {}/{} · {} · {} · ${:.2}",
            self.turn.max(1),
            self.max_turns,
            self.activity,
            tokens(self.tokens),
            self.cost
        )
    }
}

impl Line {
    /// Turns used of those allowed, 0–100.
    fn percentage(&self) -> u32 {
        if self.max_turns == 0 {
            return 0;
        }
        (u64::from(self.turn) * 100 / u64::from(self.max_turns)).min(100) as u32
    }
}

/// One `report` as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Report {
    message: String,
    percentage: u32,
}

fn tokens(n: u64) -> String {
    if n >= 1000 {
        format!("{:.1}k tok", n as f64 / 1000.0)
    } else {
        format!("{n} tok")
    }
}

async fn forward(
    client: Client,
    session: Arc<Session>,
    task: TaskId,
    title: String,
    mut rx: mpsc::UnboundedReceiver<TaskEvent>,
) {
    let token = NumberOrString::String(token(&task));
    let progress =
        session.caps().work_done_progress && create_token(&client, &session, token.clone()).await;
    let mut line = Line {
        activity: "starting".into(),
        ..Line::default()
    };
    // The title is the task (a client shows it next to the server's name,
    // so not "Rein" again); the message, what it is doing; the
    // percentage, the turns used of those allowed.
    let mut last = Report {
        message: line.activity.clone(),
        percentage: 0,
    };
    if progress {
        send_progress(
            &client,
            &token,
            json!({"kind": "begin", "title": title, "cancellable": true, "message": last.message, "percentage": 0}),
        )
        .await;
    }
    while let Some(event) = rx.recv().await {
        let report = match &event {
            TaskEvent::Status(status) => {
                // The final status comes last: a client that waits for it
                // has seen everything else, the end of the progress too.
                if status.state.is_terminal() {
                    if progress {
                        send_progress(
                            &client,
                            &token,
                            json!({"kind": "end", "message": outcome(status)}),
                        )
                        .await;
                    }
                    client
                        .send_notification::<TaskStatusNotification>(status.clone())
                        .await;
                    return;
                }
                client
                    .send_notification::<TaskStatusNotification>(status.clone())
                    .await;
                line.turn = status.turn;
                line.max_turns = status.max_turns;
                line.tokens = status.input_tokens.saturating_add(status.output_tokens);
                line.cost = status.cost_usd;
                match status.state {
                    TaskState::WaitingUser => line.activity = "waiting for your answer".into(),
                    TaskState::Verifying => line.activity = "verifying".into(),
                    _ => {}
                }
                true
            }
            TaskEvent::Activity { text } => {
                line.activity = text.clone();
                true
            }
            TaskEvent::ToolCall {
                tool, arguments, ..
            } => {
                line.activity = describe(tool, arguments);
                true
            }
            TaskEvent::ToolResult { .. } => {
                line.activity = "thinking".into();
                false
            }
            TaskEvent::Verification {
                passed,
                detail,
                evidence,
                ..
            } => {
                let evidence: Vec<Value> = evidence.iter().map(evidence_json).collect();
                let params = json!({"taskId": task, "passed": passed, "detail": detail, "evidence": evidence});
                client
                    .send_notification::<VerificationNotification>(params)
                    .await;
                false
            }
            TaskEvent::ModelRetry { reason, .. } => {
                line.activity = format!("retrying the model ({reason})");
                true
            }
            _ => false,
        };
        if report && progress {
            let next = Report {
                message: line.text(),
                // Never backwards: a client draws it as a bar.
                percentage: line.percentage().max(last.percentage),
            };
            // The same line twice says nothing new.
            if next != last {
                send_progress(
                    &client,
                    &token,
                    json!({"kind": "report", "message": next.message, "percentage": next.percentage, "cancellable": true}),
                )
                .await;
                last = next;
            }
        }
    }
}

/// What the status bar says when a task ends.
fn outcome(status: &TaskStatus) -> String {
    let reason = status
        .reason
        .clone()
        .unwrap_or_else(|| status.state.to_string());
    let spent = format!(
        "{} · ${:.2}",
        tokens(status.input_tokens.saturating_add(status.output_tokens)),
        status.cost_usd
    );
    match status.state {
        TaskState::Succeeded | TaskState::Unverified => format!("{reason} · {spent}"),
        TaskState::Cancelled => "cancelled".to_owned(),
        _ => reason,
    }
}

fn describe(tool: &str, arguments: &Value) -> String {
    let arg = |k: &str| arguments[k].as_str().unwrap_or_default().to_owned();
    match tool {
        "read_file" => format!("reading {}", arg("path")),
        "list_files" => "listing files".into(),
        "search" => format!("searching for {}", arg("pattern")),
        "edit_file" => format!("proposing an edit to {}", arg("path")),
        "create_file" => format!("proposing {}", arg("path")),
        "run_tests" => "running tests".into(),
        "run_command" => format!(
            "running `{}`",
            arg("command").chars().take(40).collect::<String>()
        ),
        "ask_user" => "asking you a question".into(),
        other => other.to_owned(),
    }
}

async fn create_token(client: &Client, session: &Session, token: NumberOrString) -> bool {
    let client = client.clone();
    let request = async move {
        client
            .send_request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams { token })
            .await
    };
    client_requests::spawn(
        "window/workDoneProgress/create",
        session.options.client_request_timeout,
        request,
    )
    .await
    .ok()
    .flatten()
    .is_some()
}

async fn send_progress(client: &Client, token: &NumberOrString, value: Value) {
    let Ok(value) = serde_json::from_value(value) else {
        return;
    };
    client
        .send_notification::<ProgressNotification>(ProgressParams {
            token: token.clone(),
            value: ProgressParamsValue::WorkDone(value),
        })
        .await;
}

/// `rein/verification` as a typed notification.
enum VerificationNotification {}

impl tower_lsp_server::ls_types::notification::Notification for VerificationNotification {
    type Params = Value;
    const METHOD: &'static str = VERIFICATION;
}

/// One piece of evidence as `rein/verification` sends it: camelCase like
/// every other Rein message (the trace keeps the core's own shape).
fn evidence_json(evidence: &Evidence) -> Value {
    let files: Vec<Value> = evidence
        .files
        .iter()
        .map(|(path, hash)| json!({"path": path, "contentHash": hash}))
        .collect();
    json!({
        "check": evidence.check,
        "command": evidence.command,
        "exitCode": evidence.exit_code,
        "durationMs": evidence.duration_ms,
        "files": files,
        "logPath": evidence.log_path,
        "failures": evidence.failures,
    })
}

/// `rein/taskStatus` as a typed notification.
enum TaskStatusNotification {}

impl tower_lsp_server::ls_types::notification::Notification for TaskStatusNotification {
    type Params = TaskStatus;
    const METHOD: &'static str = TASK_STATUS;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_are_bounded() {
        let mut line = Line {
            turn: 3,
            max_turns: 20,
            ..Line::default()
        };
        assert_eq!(line.percentage(), 15);
        line.turn = 25;
        assert_eq!(line.percentage(), 100);
        line.max_turns = 0;
        assert_eq!(line.percentage(), 0);
    }

    #[test]
    fn status_lines_read_well() {
        let line = Line {
            turn: 3,
            max_turns: 20,
            activity: "running tests".into(),
            tokens: 12_400,
            cost: 0.0312,
        };
        assert_eq!(line.text(), "turn 3/20 · running tests · 12.4k tok · $0.03");
        let status = TaskStatus {
            task_id: TaskId("t".into()),
            state: TaskState::Succeeded,
            reason: Some("fixed: `test_total` passes in 4 turns".into()),
            turn: 4,
            max_turns: 20,
            input_tokens: 17_000,
            output_tokens: 1_200,
            cost_usd: 0.04,
        };
        assert_eq!(
            outcome(&status),
            "fixed: `test_total` passes in 4 turns · 18.2k tok · $0.04"
        );
    }
}
