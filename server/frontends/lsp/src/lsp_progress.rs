//! What the editor shows of a task: `$/progress` (begin, a report at each
//! step, end with the outcome) and `rein/taskStatus` on every state change.
//!
//! The loop reports events synchronously; a forwarding task sends them to
//! the client in order, after the progress token was created (LSP requires
//! the client's answer to `window/workDoneProgress/create` first).

use rein_app::format::cost;
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
use crate::ext::{TASK_STATUS, TaskStatusParams, VERIFICATION, Waiting, WaitingKind};
use crate::session::Session;

pub struct LspProgress {
    tx: mpsc::UnboundedSender<Forward>,
    session: Arc<Session>,
    forwarder: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// What the forwarding task sends on.
enum Forward {
    Event(TaskEvent),
    /// The task now waits for the user (`Some`), or no longer does.
    Waiting(Option<Waiting>),
}

impl Waiting {
    fn activity(&self) -> String {
        match self.kind {
            WaitingKind::Review => format!("waiting for your review of {}", self.detail),
            WaitingKind::Approval => format!("waiting for you to allow {}", self.detail),
            WaitingKind::Answer => "waiting for your answer".into(),
        }
    }
}

/// While alive, the task shows as waiting for the user.
#[must_use]
pub struct WaitingGuard {
    tx: mpsc::UnboundedSender<Forward>,
}

impl Drop for WaitingGuard {
    fn drop(&mut self) {
        let _ = self.tx.send(Forward::Waiting(None));
    }
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

    /// Shows the task as waiting for the user until the guard is dropped.
    pub fn waiting(&self, kind: WaitingKind, detail: impl Into<String>) -> WaitingGuard {
        let waiting = Waiting {
            kind,
            detail: rein_core::inert::line(&detail.into()).into_owned(),
        };
        let _ = self.tx.send(Forward::Waiting(Some(waiting)));
        WaitingGuard {
            tx: self.tx.clone(),
        }
    }
}

impl ProgressSink for LspProgress {
    fn event(&self, task: &TaskId, event: &TaskEvent) {
        // Ended before the editor can hear so: a cancel or an answer sent
        // after the final status must find no running task.
        if let TaskEvent::Status(status) = event
            && status.state.is_end()
        {
            self.session.tasks.mark_ended(&task.0);
        }
        // The receiver only goes away after the task's final status.
        let _ = self.tx.send(Forward::Event(event.clone()));
    }
}

#[derive(Default)]
struct Line {
    turn: u32,
    max_turns: u32,
    activity: String,
    tokens: u64,
    cost: f64,
    unpriced_calls: u32,
}

impl Line {
    fn text(&self) -> String {
        format!(
            "turn {}/{} · {} · {} · {}",
            self.turn.max(1),
            self.max_turns,
            self.activity,
            tokens(self.tokens),
            cost(self.cost, self.unpriced_calls)
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
    mut rx: mpsc::UnboundedReceiver<Forward>,
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
    // The last status from the loop, and what the task waits for now: a
    // wait is shown over the status and taken back when it ends.
    let mut last_status: Option<TaskStatus> = None;
    let mut waiting: Option<Waiting> = None;
    // The model's last words: the final status carries them as the task's
    // summary, for the editor to show with the outcome.
    let mut last_text: Option<String> = None;
    while let Some(message) = rx.recv().await {
        let event = match message {
            Forward::Event(event) => event,
            Forward::Waiting(now) => {
                if now == waiting {
                    continue;
                }
                waiting = now;
                // A wait shows over the loop's last status; when it ends,
                // that status again — unless it was the loop's own
                // `waiting_user` (a question), which its next status ends.
                if let Some(status) = &last_status
                    && (waiting.is_some() || status.state != TaskState::WaitingUser)
                {
                    send_status(&client, status, waiting.as_ref()).await;
                }
                line.activity = match &waiting {
                    Some(w) => w.activity(),
                    None => "thinking".into(),
                };
                if progress {
                    report(&client, &token, &line, &mut last).await;
                }
                continue;
            }
        };
        let report_it = match &event {
            TaskEvent::Status(status) => {
                // The final status comes last: a client that waits for it
                // has seen everything else, the end of the progress too.
                if status.state.is_end() {
                    if progress {
                        send_progress(
                            &client,
                            &token,
                            json!({"kind": "end", "message": outcome(status)}),
                        )
                        .await;
                    }
                    let summary = last_text.take();
                    let params = serde_json::to_value(TaskStatusParams::of(
                        status,
                        None,
                        summary.as_deref(),
                    ))
                    .unwrap_or_else(|_| json!({}));
                    client
                        .send_notification::<TaskStatusNotification>(params)
                        .await;
                    return;
                }
                send_status(&client, status, waiting.as_ref()).await;
                last_status = Some(status.clone());
                line.turn = status.turn;
                line.max_turns = status.max_turns;
                line.tokens = status.input_tokens.saturating_add(status.output_tokens);
                line.cost = status.cost_usd;
                line.unpriced_calls = status.unpriced_calls;
                match (&waiting, status.state) {
                    (Some(w), _) => line.activity = w.activity(),
                    (None, TaskState::WaitingUser) => {
                        line.activity = "waiting for your answer".into();
                    }
                    (None, TaskState::Verifying) => line.activity = "verifying".into(),
                    _ => {}
                }
                true
            }
            TaskEvent::Text { text, .. } => {
                last_text = Some(summary_of(text));
                false
            }
            TaskEvent::Activity { text } => {
                line.activity = text.clone();
                true
            }
            TaskEvent::ToolCall { title, .. } => {
                line.activity = title.clone();
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
            TaskEvent::TestOutcomes { failed, passed } => {
                crate::code_lens::outcomes(&client, &session, failed, passed);
                false
            }
            TaskEvent::ModelRetry { reason, .. } => {
                line.activity = format!("retrying the model ({reason})");
                true
            }
            _ => false,
        };
        if report_it && progress {
            report(&client, &token, &line, &mut last).await;
        }
    }
}

/// Sends the line as a `report`, unless it says nothing new.
async fn report(client: &Client, token: &NumberOrString, line: &Line, last: &mut Report) {
    let next = Report {
        message: line.text(),
        // Never backwards: a client draws it as a bar.
        percentage: line.percentage().max(last.percentage),
    };
    if next != *last {
        send_progress(
            client,
            token,
            json!({"kind": "report", "message": next.message, "percentage": next.percentage, "cancellable": true}),
        )
        .await;
        *last = next;
    }
}

/// `rein/taskStatus`: the loop's status, shown as `waiting_user` with
/// `waitingFor` while the task waits for the user.
async fn send_status(client: &Client, status: &TaskStatus, waiting: Option<&Waiting>) {
    client
        .send_notification::<TaskStatusNotification>(status_params(status, waiting))
        .await;
}

fn status_params(status: &TaskStatus, waiting: Option<&Waiting>) -> Value {
    serde_json::to_value(TaskStatusParams::of(status, waiting, None)).unwrap_or_else(|_| json!({}))
}

/// The model's words as a task's summary: bounded (a reply can be long).
fn summary_of(text: &str) -> String {
    // An answer is shown in full: only a runaway reply is cut.
    const MAX_CHARS: usize = 16_000;
    let text = text.trim();
    if text.chars().count() <= MAX_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX_CHARS).collect();
    format!("{cut}…")
}

/// What the status bar says when a task ends.
fn outcome(status: &TaskStatus) -> String {
    let reason = status
        .reason
        .clone()
        .unwrap_or_else(|| status.state.to_string());
    let spent = format!(
        "{} · {}",
        tokens(status.input_tokens.saturating_add(status.output_tokens)),
        cost(status.cost_usd, status.unpriced_calls)
    );
    match status.state {
        TaskState::Succeeded | TaskState::Unverified => format!("{reason} · {spent}"),
        // A plain cancellation says so in a word; a task that stopped on
        // the user's rejection (or with files changed) says what happened.
        TaskState::Cancelled if reason == rein_core::cancel::BY_THE_USER => "cancelled".to_owned(),
        _ => reason,
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
    type Params = Value;
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
    fn an_unknown_cost_is_never_zero_dollars() {
        assert_eq!(cost(0.0312, 0), "$0.03");
        assert_eq!(cost(0.0, 0), "$0.00");
        assert_eq!(cost(0.0, 2), "cost unknown");
        assert_eq!(cost(0.0312, 1), "≥ $0.03");
    }

    #[test]
    fn a_wait_shows_over_the_status_and_names_what_it_waits_for() {
        let status = TaskStatus {
            task_id: TaskId("t".into()),
            state: TaskState::Running,
            reason: None,
            turn: 3,
            max_turns: 20,
            input_tokens: 10,
            output_tokens: 2,
            cost_usd: 0.0,
            unpriced_calls: 3,
            cause: None,
        };
        let waiting = Waiting {
            kind: WaitingKind::Review,
            detail: "cart.py".into(),
        };
        expect_test::expect![[r#"{"taskId":"t","state":"waiting_user","reason":null,"turn":3,"maxTurns":20,"inputTokens":10,"outputTokens":2,"costUsd":0.0,"unpricedCalls":3,"waitingFor":{"kind":"review","detail":"cart.py"}}"#]]
            .assert_eq(&status_params(&status, Some(&waiting)).to_string());
        // A final status is never shown as waiting.
        let done = TaskStatus {
            state: TaskState::Cancelled,
            ..status
        };
        assert_eq!(status_params(&done, Some(&waiting))["state"], "cancelled");
        assert_eq!(waiting.activity(), "waiting for your review of cart.py");
    }

    #[test]
    fn status_lines_read_well() {
        let line = Line {
            turn: 3,
            max_turns: 20,
            activity: "running tests".into(),
            tokens: 12_400,
            cost: 0.0312,
            unpriced_calls: 0,
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
            unpriced_calls: 0,
            cause: None,
        };
        assert_eq!(
            outcome(&status),
            "fixed: `test_total` passes in 4 turns · 18.2k tok · $0.04"
        );
    }
}
