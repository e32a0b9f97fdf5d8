//! Set-up in a minute: `rein/providerStatus` says whether a model provider
//! is configured (and where its key comes from), so an editor can lead a
//! first run to set-up instead of a failed task; `rein/checkProvider`
//! checks a provider the user is setting up — a key against the API, a
//! local server's address — with one model listing (no tokens spent).
//!
//! The settings a task would have are resolved without asking anything:
//! the workspace's own file counts only when its trust is already known.

use std::time::Duration;

use rein_app::settings;
use rein_core::config::Config;
use rein_core::trust::Trust;
use rein_models::{ProviderConfig, ProviderKind, ProviderSettings};
use serde::{Deserialize, Serialize};

use crate::session::Session;

/// `rein/providerStatus`: no parameters.
pub const PROVIDER_STATUS: &str = "rein/providerStatus";
/// `rein/checkProvider`: [`CheckParams`] → [`Checked`].
pub const CHECK_PROVIDER: &str = "rein/checkProvider";

/// A check gives up after this: set-up must answer, not hang.
const CHECK_LIMIT: Duration = Duration::from_secs(10);
/// How many of a server's models an answer lists.
const MODELS_LISTED: usize = 50;

/// The settings a task would have now, without asking anything.
pub fn config_now(session: &Session) -> Result<Config, String> {
    let root = session
        .root
        .get()
        .ok_or("no workspace folder is open in the editor")?;
    let assessment = settings::Assessment::of(root, &session.settings())?;
    let trust = assessment
        .known_trust(root, session.editor_trust(), session.user_state.as_ref())
        .or_else(|| session.trust_answer(assessment.fingerprint()?))
        .unwrap_or(Trust::NOT_NEEDED);
    assessment.config(&trust)
}

#[derive(Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ProviderStatus {
    /// A task would find a provider to call.
    pub configured: bool,
    pub provider: Option<&'static str>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// A key is set (never the key).
    pub has_key: bool,
    /// Where the key comes from, in words.
    pub key_from: Option<String>,
    /// Why not configured, or what is wrong with the settings.
    pub problem: Option<String>,
}

pub fn status(session: &Session) -> ProviderStatus {
    match config_now(session) {
        Ok(config) => {
            let p = &config.provider;
            // The hosted APIs take no call without a key.
            let needs_key = p.provider == ProviderKind::Anthropic
                || (p.provider == ProviderKind::OpenAi && p.base_url.contains("api.openai.com"));
            let missing = needs_key && p.api_key.is_none();
            ProviderStatus {
                configured: !missing,
                provider: Some(p.provider.name()),
                model: Some(p.model.clone()),
                base_url: Some(p.base_url.clone()),
                has_key: p.api_key.is_some(),
                key_from: p.api_key.as_ref().map(|_| p.key_source()),
                problem: missing.then(|| {
                    format!(
                        "{} needs an API key: set one with Rein: Set Up (or the {} environment variable)",
                        p.provider.name(),
                        p.key_env_var()
                    )
                }),
            }
        }
        Err(problem) => ProviderStatus {
            configured: false,
            provider: None,
            model: None,
            base_url: None,
            has_key: false,
            key_from: None,
            problem: Some(problem),
        },
    }
}

/// A provider as the user is setting it up.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckParams {
    pub provider: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub api_key: Option<String>,
}

#[derive(Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Checked {
    /// The provider answered and took the key.
    pub ok: bool,
    /// What it serves (the first [`MODELS_LISTED`]).
    pub models: Vec<String>,
    /// In words: what was found, or what is wrong and what to do.
    pub message: String,
}

/// Lists the provider's models with these settings alone (nothing of the
/// editor's or the environment's): the key is checked, not guessed.
pub async fn check(params: CheckParams) -> Checked {
    let key = params.api_key.clone();
    let layer = ProviderSettings {
        provider: Some(params.provider),
        model: params.model.or_else(|| Some("any".to_owned())),
        base_url: params.base_url,
        api_key: params.api_key,
        origin: Some("the key you entered".to_owned()),
        max_retries: Some(0),
        connect_timeout_secs: Some(5),
        ..ProviderSettings::default()
    };
    let config = match ProviderConfig::resolve(&[layer], &|_| None) {
        Ok(config) => config,
        Err(e) => return failed(e.to_string()),
    };
    if config.provider == ProviderKind::Scripted {
        return Checked {
            ok: true,
            models: vec!["scripted".to_owned()],
            message: "the offline demo model runs inside Rein: nothing to reach".to_owned(),
        };
    }
    let listed = tokio::time::timeout(CHECK_LIMIT, rein_models::list_models(&config)).await;
    let redact = |text: String| {
        key.as_deref()
            .map_or(text.clone(), |k| text.replace(k, rein_models::REDACTED))
    };
    match listed {
        Err(_) => failed(format!(
            "{} did not answer within {} s",
            config.base_url,
            CHECK_LIMIT.as_secs()
        )),
        Ok(Err(error)) => failed(redact(rein_models::redact(
            &error.to_string(),
            config.api_key.as_ref(),
        ))),
        Ok(Ok(models)) => {
            let count = models.len();
            Checked {
                ok: true,
                message: format!("{} answered: {count} models", config.base_url),
                models: models
                    .into_iter()
                    .take(MODELS_LISTED)
                    .map(|m| rein_core::inert::line(&m).chars().take(200).collect())
                    .collect(),
            }
        }
    }
}

fn failed(message: String) -> Checked {
    Checked {
        ok: false,
        models: Vec::new(),
        message,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use rein_testkit::fake_model::{FakeModel, Scenario};

    use super::*;

    fn params(provider: &str, base_url: String, key: Option<&str>) -> CheckParams {
        CheckParams {
            provider: provider.into(),
            model: None,
            base_url: Some(base_url),
            api_key: key.map(str::to_owned),
        }
    }

    /// The key is checked at once, and a wrong one is said so without
    /// ever being repeated.
    #[tokio::test]
    async fn a_key_is_checked_against_the_provider() {
        let server = FakeModel::start(Scenario::new().api_key("sk-ant-right-key-0000"))
            .await
            .unwrap();
        let good = check(params(
            "anthropic",
            server.base_url(),
            Some("sk-ant-right-key-0000"),
        ))
        .await;
        assert!(good.ok, "{good:?}");
        let bad = check(params(
            "anthropic",
            server.base_url(),
            Some("sk-ant-wrong-key-1111"),
        ))
        .await;
        assert!(!bad.ok);
        assert!(
            bad.message.contains("rejected the API key"),
            "{}",
            bad.message
        );
        assert!(
            bad.message
                .contains("check the key from the key you entered"),
            "{}",
            bad.message
        );
        assert!(!bad.message.contains("wrong-key"), "{}", bad.message);
        let none = check(params("anthropic", server.base_url(), None)).await;
        assert!(
            !none.ok && none.message.contains("API key"),
            "{}",
            none.message
        );
    }

    /// A local server's address is checked the same way; nothing listening
    /// is said in words, fast.
    #[tokio::test]
    async fn a_local_server_is_found_or_said_absent() {
        let server = FakeModel::start(Scenario::new().require_api_key(false))
            .await
            .unwrap();
        let found = check(params("openai", format!("{}/v1", server.base_url()), None)).await;
        assert!(found.ok, "{found:?}");
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let absent = check(params(
            "openai",
            format!("http://127.0.0.1:{port}/v1"),
            None,
        ))
        .await;
        assert!(!absent.ok, "{absent:?}");
        let bad = check(params("openai", "file:///etc/passwd".into(), None)).await;
        assert!(
            !bad.ok && bad.message.contains("not an http(s) URL"),
            "{}",
            bad.message
        );
    }
}
