//! What Rein sends the client is redacted first: no key in any update or
//! question.

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
