//! Workspace trust in the editor: whose word decides whether the
//! workspace's own settings count, and asking the user when nobody has
//! decided yet. The rules of what an untrusted file may set are
//! `rein_core::trust`'s; this is only the conversation.
//!
//! In order: nothing to decide (the file only tightens, or there is none);
//! the editor's own trust (`initializationOptions.workspaceTrusted`, which
//! VS Code's extension sets from Workspace Trust — taken only from a client
//! that declares `experimental.rein.workspaceTrust`, since other clients
//! let a project's own file set `initializationOptions`, and never from
//! `workspace/configuration`, which mirrors settings a repository can
//! write); the user's stored answer about this very file; this session's
//! answer; else one `window/showMessageRequest` naming what the file would
//! grant. No answer is "not trusted" (asked again next session).

use std::path::Path;

use rein_core::trust::{self, Trust, TrustSource};
use serde_json::Value;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType};

use crate::session::Session;
use rein_app::settings::{ANY_WORKSPACE_FILE, Assessment};

const TRUST: &str = "Trust this folder's settings";
const DONT_TRUST: &str = "Don't trust";

/// Decides the trust for `assessment` of `root`, asking the user if no one
/// has decided. Questions are one at a time: a second task waits for the
/// first question's answer instead of asking again.
pub async fn decide(
    session: &Session,
    client: &Client,
    root: &Path,
    assessment: &Assessment,
) -> Trust {
    let known = || {
        assessment
            .known_trust(root, session.editor_trust(), session.user_state.as_ref())
            .or_else(|| session.trust_answer(assessment.fingerprint()?))
    };
    if let Some(trust) = known() {
        return trust;
    }
    let _asking = session.trust_question.lock().await;
    if let Some(trust) = known() {
        return trust;
    }
    let Some(fingerprint) = assessment.fingerprint() else {
        return Trust::NOT_NEEDED;
    };
    let answer = ask(session, client, assessment).await;
    let trust = match answer {
        Some(trusted) => {
            if let Some(state) = &session.user_state
                && let Err(error) = state.record(root, fingerprint, trusted)
            {
                tracing::warn!(%error, "cannot remember the trust decision; it holds for this session");
            }
            Trust {
                trusted,
                why: TrustSource::Answered,
            }
        }
        None => Trust {
            trusted: false,
            why: TrustSource::NoAnswer,
        },
    };
    session.remember_trust_answer(fingerprint, trust.clone());
    tracing::info!(trust = trust.describe(), "workspace trust decided");
    trust
}

/// `Some(trusted)` if the user picked an answer in time.
async fn ask(session: &Session, client: &Client, assessment: &Assessment) -> Option<bool> {
    let message = trust::question(assessment.files, &assessment.grants);
    let actions = [TRUST, DONT_TRUST]
        .map(|title| MessageActionItem {
            title: title.to_owned(),
            properties: Default::default(),
        })
        .to_vec();
    let question = client.show_message_request(MessageType::WARNING, message, Some(actions));
    match tokio::time::timeout(session.approval_timeout(), question).await {
        Ok(Ok(Some(choice))) if choice.title == TRUST => Some(true),
        Ok(Ok(Some(choice))) if choice.title == DONT_TRUST => Some(false),
        _ => None,
    }
}

/// Tells the user, once per session and file, what was ignored.
pub async fn tell_ignored(
    session: &Session,
    client: &Client,
    assessment: &Assessment,
    trust: &Trust,
    ignored: &[trust::Grant],
) {
    if ignored.is_empty() {
        return;
    }
    let summary = trust::ignored_summary(assessment.files, ignored);
    tracing::warn!(trust = trust.describe(), "{summary}");
    let Some(fingerprint) = assessment.fingerprint() else {
        return;
    };
    if session.first_ignored_notice(fingerprint) {
        client
            .show_message(
                MessageType::WARNING,
                format!(
                    "Rein {summary}. To use them, trust the folder (command rein.trustWorkspace, or answer Rein's question when it asks)."
                ),
            )
            .await;
    }
}

/// `rein.trustWorkspace {trusted}`: the user's explicit decision about the
/// workspace's settings as they are now.
pub fn set_trust(session: &Session, trusted: bool) -> Result<Value, String> {
    let root = session
        .root
        .get()
        .ok_or("no workspace folder is open in the editor")?;
    let assessment = Assessment::of(root, &session.settings())?;
    let Some(fingerprint) = assessment.fingerprint() else {
        return Ok(serde_json::json!({
            "trusted": trusted,
            "message": format!("this folder has no {ANY_WORKSPACE_FILE}; there is nothing to trust"),
        }));
    };
    let trust = Trust {
        trusted,
        why: TrustSource::Answered,
    };
    session.remember_trust_answer(fingerprint, trust.clone());
    if let Some(state) = &session.user_state {
        state
            .record(root, fingerprint, trusted)
            .map_err(|e| e.to_string())?;
    }
    Ok(serde_json::json!({
        "trusted": trusted,
        "grants": assessment.grants.iter().map(ToString::to_string).collect::<Vec<_>>(),
    }))
}
