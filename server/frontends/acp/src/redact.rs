//! What Rein sends the client is redacted first: no key in any update or
//! question.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{SessionNotification, SessionUpdate};
use rein_models::Redactor;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// `value` with every secret the redactor knows replaced, as the same
/// type; `None` (nothing is sent) if it cannot be looked through.
pub fn redacted<T: Serialize + DeserializeOwned>(redactor: &Redactor, value: &T) -> Option<T> {
    let mut json = serde_json::to_value(value).ok()?;
    redactor.redact_value(&mut json);
    serde_json::from_value(json).ok()
}

/// Sends `update` of session `session_id`, redacted; an update that cannot
/// be redacted is not sent.
pub fn send_update(
    cx: &ConnectionTo<Client>,
    redactor: &Redactor,
    session_id: &str,
    update: SessionUpdate,
) {
    let Some(notification) = redacted(
        redactor,
        &SessionNotification::new(session_id.to_owned(), update),
    ) else {
        tracing::warn!("a session/update could not be redacted, so it was not sent");
        return;
    };
    if let Err(error) = cx.send_notification(notification) {
        tracing::debug!(%error, "session/update not sent");
    }
}
