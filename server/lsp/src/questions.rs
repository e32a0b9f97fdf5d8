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
        Unanswered::Error(e) => format!("the editor could not ask the user: {e}"),
        Unanswered::Gone => "the editor went away".into(),
    }
}
