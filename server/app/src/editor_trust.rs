//! The editor's own word on workspace trust, and where it may come from:
//! `initializationOptions` of a client that declares it states it there,
//! never `workspace/configuration` (which mirrors settings a repository
//! can write). Pure; the conversation about trust is `lsp_trust.rs`.

use serde_json::Value;

/// The key of `initializationOptions` where an editor states its own trust.
pub const EDITOR_TRUST_KEY: &str = "workspaceTrusted";

/// The editor's word on trust, from `initializationOptions`, if the client
/// declared it states it there (`declared`).
pub fn editor_trust(options: &Value, declared: bool) -> Option<bool> {
    let said = options.get(EDITOR_TRUST_KEY)?.as_bool();
    if !declared {
        tracing::warn!(
            "ignoring {EDITOR_TRUST_KEY} in initializationOptions: this client does not declare experimental.rein.workspaceTrust, and a project's own file may have set it"
        );
        return None;
    }
    said
}

/// Settings from `workspace/configuration` minus what only
/// `initializationOptions` may say (the editor's trust).
pub fn without_editor_trust(mut settings: Value) -> Value {
    if let Some(map) = settings.as_object_mut()
        && map.remove(EDITOR_TRUST_KEY).is_some()
    {
        tracing::warn!(
            "ignoring {EDITOR_TRUST_KEY} from workspace/configuration: only the editor's initializationOptions may say it (a repository's settings could)"
        );
    }
    settings
}
