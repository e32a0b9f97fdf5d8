//! A question to the user (`window/showMessageRequest`) from a task:
//! bounded by the approval timeout, withdrawn when no longer wanted.

use std::time::Duration;

use serde_json::{Value, json};
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::MessageType;

use crate::client_requests::{self, Unanswered};
use crate::session::Session;

/// The action chosen (`Ok(None)`: dismissed, or a title not offered), and
/// the time the user had.
pub async fn ask(
    client: &Client,
    session: &Session,
    message: String,
    actions: &[&'static str],
) -> (Result<Option<&'static str>, Unanswered>, Duration) {
    let params = json!({
        "type": MessageType::WARNING,
        "message": message,
        "actions": actions.iter().map(|a| json!({"title": a})).collect::<Vec<_>>(),
    });
    let timeout = session.approval_timeout();
    let answer =
        client_requests::withdrawable(client, "window/showMessageRequest", params, timeout).await;
    if let Err(Unanswered::Error(e)) = &answer
        && e.code == tower_lsp_server::jsonrpc::ErrorCode::MethodNotFound
        && session.first_questions_unsupported_notice()
    {
        client
            .show_message(
                MessageType::ERROR,
                "Your editor cannot show Rein's questions (it does not support window/showMessageRequest), so Rein cannot ask you about its edits, commands or this folder's settings, and refuses each. A newer version of the editor may support it (see Rein's README, \"Other LSP clients\").",
            )
            .await;
    }
    let chosen = answer.map(|value| {
        let title = value.get("title").and_then(Value::as_str)?;
        actions.iter().copied().find(|a| *a == title)
    });
    (chosen, timeout)
}

/// Why an unanswered question got no answer, for the model.
pub fn unanswered(why: &Unanswered, timeout: Duration) -> String {
    match why {
        Unanswered::Timeout => {
            format!("the user did not answer within {} s", timeout.as_secs_f64())
        }
        Unanswered::Error(e) if e.code == tower_lsp_server::jsonrpc::ErrorCode::MethodNotFound => {
            "the editor cannot ask the user: it does not support window/showMessageRequest".into()
        }
        Unanswered::Error(e) => format!("the editor could not ask the user: {}", e.message),
        Unanswered::Gone => "the editor went away".into(),
    }
}
