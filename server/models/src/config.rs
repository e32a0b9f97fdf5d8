//! Which provider, model, endpoint and key to use, resolved from layered
//! settings (DESIGN.md §3): the editor, then `.rein/config.toml`, then the
//! user's config file (each a [`ProviderSettings`], highest first), then the
//! environment, then defaults.
//!
//! The environment is passed in as a function, never read here directly,
//! so tests never touch the process environment.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::pricing::{Price, PriceTable};
use crate::retry::RetryPolicy;
use crate::secret::ApiKey;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Anthropic,
    #[serde(rename = "openai")]
    OpenAi,
    /// A scenario played by the fake model server (`rein demo`, tests).
    Scripted,
}

impl ProviderKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
            Self::Scripted => "scripted",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "anthropic" | "claude" => Some(Self::Anthropic),
            "openai" | "openai-compatible" | "ollama" | "llamacpp" | "llama.cpp" | "vllm" => {
                Some(Self::OpenAi)
            }
            "scripted" | "fake" => Some(Self::Scripted),
            _ => None,
        }
    }
}

/// One layer of settings. Every field is optional; JSON from an editor may
/// use camelCase (`baseUrl`), TOML files snake_case (`base_url`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ProviderSettings {
    pub provider: Option<String>,
    pub model: Option<String>,
    #[serde(alias = "baseUrl")]
    pub base_url: Option<String>,
    /// Accepted from an editor's secret storage; discouraged in files.
    #[serde(alias = "apiKey")]
    pub api_key: Option<String>,
    pub stream: Option<bool>,
    #[serde(alias = "maxRetries")]
    pub max_retries: Option<u32>,
    #[serde(alias = "connectTimeoutSecs")]
    pub connect_timeout_secs: Option<u64>,
    #[serde(alias = "requestTimeoutSecs")]
    pub request_timeout_secs: Option<u64>,
    #[serde(alias = "idleTimeoutSecs")]
    pub idle_timeout_secs: Option<u64>,
    #[serde(alias = "firstTokenTimeoutSecs")]
    pub first_token_timeout_secs: Option<u64>,
    pub prices: BTreeMap<String, Price>,
    /// The scenario file for the scripted provider.
    pub scenario: Option<PathBuf>,
    /// Where this layer came from, in words ("the editor's settings"): a
    /// rejected key is said to come from there. Set by whoever reads the
    /// layer, never by its text.
    #[serde(skip)]
    pub origin: Option<String>,
    /// Tokens the model accepts in one request (input + output), for a
    /// model Rein has no price entry for (a local one): what the output
    /// reserve and the compaction threshold are cut from.
    #[serde(alias = "contextWindow")]
    pub context_window: Option<u64>,
    /// The sampling temperature of every request but the harness's own
    /// hotter retries (default 0: the first answer is the model's most
    /// likely one).
    pub temperature: Option<f64>,
    /// The temperature for a model by name, over `temperature`.
    pub temperatures: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timeouts {
    pub connect: Duration,
    /// The whole call, stream included.
    pub request: Duration,
    /// The longest silence tolerated inside a stream, between two pieces.
    pub idle: Duration,
    /// The longest wait for a stream's first piece: a local model on a CPU
    /// reads a long prompt for minutes before it says anything.
    pub first_token: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            request: Duration::from_secs(600),
            // Anthropic pings every few seconds; local servers can think for
            // a while before the first token on a cold model.
            idle: Duration::from_secs(120),
            first_token: Duration::from_secs(300),
        }
    }
}

/// The sampling temperature: the first layer naming this model in
/// `temperatures`, else the first `temperature`, else 0 (greedy: a small
/// model's most likely answer is its best first try; the harness samples
/// hotter only when that failed).
fn temperature(layers: &[ProviderSettings], model: &str) -> Result<f64, ConfigError> {
    let chosen = layers
        .iter()
        .find_map(|l| l.temperatures.get(model).copied())
        .or_else(|| layers.iter().find_map(|l| l.temperature))
        .unwrap_or(0.0);
    if chosen.is_finite() && (0.0..=2.0).contains(&chosen) {
        Ok(chosen)
    } else {
        Err(ConfigError::BadTemperature(chosen.to_string()))
    }
}

/// `context_window` from the settings, else `REIN_CONTEXT_WINDOW`; a
/// window too small to hold a prompt is a mistake, said as one.
fn context_window(
    layers: &[ProviderSettings],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<u64>, ConfigError> {
    let window = match layers.iter().find_map(|l| l.context_window) {
        Some(window) => window,
        None => match env("REIN_CONTEXT_WINDOW") {
            Some(text) => text
                .trim()
                .parse()
                .map_err(|_| ConfigError::BadContextWindow(text.clone()))?,
            None => return Ok(None),
        },
    };
    if window < 1_024 {
        return Err(ConfigError::BadContextWindow(window.to_string()));
    }
    Ok(Some(window))
}

/// The window assumed for a model nobody described: the common size of
/// hosted models. A local model's is usually far smaller, so Rein says it
/// is guessing (`rein doctor`, the log) and asks for `context_window`.
pub const GUESSED_WINDOW: u64 = 200_000;

/// Where a model's context window comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowSource {
    /// `context_window` in the settings, or `REIN_CONTEXT_WINDOW`.
    Configured,
    /// The model's server, asked at launch (`crate::window::server_window`):
    /// what told it, e.g. "llama.cpp /props".
    Server(&'static str),
    /// The price table's entry for the model.
    PriceTable,
    /// Nobody said: [`GUESSED_WINDOW`].
    Guessed,
}

impl std::fmt::Display for WindowSource {
    /// How `rein doctor` and the log say where a window comes from.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Configured => f.write_str("configured"),
            Self::Server(what) => write!(f, "from the server: {what}"),
            Self::PriceTable => f.write_str("Rein's table for this model"),
            Self::Guessed => f.write_str("a guess"),
        }
    }
}

/// Everything needed to build a client. `Debug` never shows the key.
#[derive(Clone, Debug)]
pub struct ProviderConfig {
    pub provider: ProviderKind,
    pub model: String,
    /// Without the endpoint path: `https://api.anthropic.com`,
    /// `https://api.openai.com/v1`, `http://localhost:11434/v1`.
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    pub stream: bool,
    pub retry: RetryPolicy,
    pub timeouts: Timeouts,
    pub prices: PriceTable,
    pub scenario: Option<PathBuf>,
    /// The configured context window (`context_window`), if any.
    pub context_window: Option<u64>,
    /// The sampling temperature of an ordinary request: the model's own
    /// (`temperatures`), else the provider's (`temperature`), else 0.
    pub temperature: f64,
    /// Where the key came from, in words (a layer's origin, or the
    /// environment variable): what a "key rejected" message tells the user
    /// to check. `None`: the provider's environment variable.
    pub key_from: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "no model provider is configured: set ANTHROPIC_API_KEY (Anthropic), OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama (http://localhost:11434/v1) or llama.cpp (http://localhost:8080/v1); or REIN_PROVIDER=scripted for the demo scenario"
    )]
    NoProvider,
    #[error(
        "unknown provider {0:?}: use anthropic, openai (also for Ollama, llama.cpp, vLLM, DeepSeek, OpenRouter) or scripted"
    )]
    UnknownProvider(String),
    #[error(
        "no model is set for {base_url}: set REIN_MODEL to a model that server serves (e.g. qwen2.5-coder:7b on Ollama)"
    )]
    NoModel { base_url: String },
    #[error("the base URL {0:?} is not an http(s) URL")]
    BadBaseUrl(String),
    #[error(
        "context_window must be a number of tokens of at least 1024 (the server's context size, e.g. llama-server --ctx-size), got {0:?}"
    )]
    BadContextWindow(String),
    #[error(
        "temperature must be a number from 0 to 2 (0: the model's most likely answer), got {0}"
    )]
    BadTemperature(String),
}

pub const ANTHROPIC_DEFAULT_BASE: &str = "https://api.anthropic.com";
pub const OPENAI_DEFAULT_BASE: &str = "https://api.openai.com/v1";
const ANTHROPIC_DEFAULT_MODEL: &str = "claude-sonnet-4-5";
const OPENAI_DEFAULT_MODEL: &str = "gpt-5-mini";

impl ProviderConfig {
    /// Resolves `layers` (highest precedence first), then `env`, then
    /// defaults.
    pub fn resolve(
        layers: &[ProviderSettings],
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let first = |get: &dyn Fn(&ProviderSettings) -> Option<String>| layers.iter().find_map(get);

        let provider = match first(&|l| l.provider.clone()).or_else(|| env("REIN_PROVIDER")) {
            Some(name) => ProviderKind::parse(&name).ok_or(ConfigError::UnknownProvider(name))?,
            None if env("ANTHROPIC_API_KEY").is_some() => ProviderKind::Anthropic,
            None if env("OPENAI_API_KEY").is_some() || env("OPENAI_BASE_URL").is_some() => {
                ProviderKind::OpenAi
            }
            None => return Err(ConfigError::NoProvider),
        };
        let (key_var, base_var, default_base) = match provider {
            ProviderKind::Anthropic => (
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_BASE_URL",
                ANTHROPIC_DEFAULT_BASE,
            ),
            ProviderKind::OpenAi => ("OPENAI_API_KEY", "OPENAI_BASE_URL", OPENAI_DEFAULT_BASE),
            // The fake server's address is only known once it runs.
            ProviderKind::Scripted => (
                "REIN_SCRIPTED_API_KEY",
                "REIN_SCRIPTED_BASE_URL",
                "http://127.0.0.1",
            ),
        };
        let base_url = first(&|l| l.base_url.clone())
            .or_else(|| env(base_var))
            .unwrap_or_else(|| default_base.to_owned());
        let base_url = normalize_base_url(provider, &base_url)?;
        let model = match first(&|l| l.model.clone()).or_else(|| env("REIN_MODEL")) {
            Some(model) => model,
            None => match provider {
                ProviderKind::Anthropic => ANTHROPIC_DEFAULT_MODEL.to_owned(),
                ProviderKind::OpenAi if base_url == OPENAI_DEFAULT_BASE => {
                    OPENAI_DEFAULT_MODEL.to_owned()
                }
                ProviderKind::OpenAi => return Err(ConfigError::NoModel { base_url }),
                ProviderKind::Scripted => "scripted".to_owned(),
            },
        };
        let from_layer = layers
            .iter()
            .find(|l| l.api_key.as_deref().is_some_and(|k| !k.trim().is_empty()));
        let (api_key, key_from) = match from_layer {
            Some(layer) => (
                layer.api_key.clone().and_then(ApiKey::new),
                layer.origin.clone(),
            ),
            None => (env(key_var).and_then(ApiKey::new), Some(key_var.to_owned())),
        };

        let mut retry = RetryPolicy::default();
        if let Some(n) = layers.iter().find_map(|l| l.max_retries) {
            retry.max_retries = n;
        }
        let mut timeouts = Timeouts::default();
        let secs = |get: fn(&ProviderSettings) -> Option<u64>| {
            layers.iter().find_map(get).map(Duration::from_secs)
        };
        if let Some(t) = secs(|l| l.connect_timeout_secs) {
            timeouts.connect = t;
        }
        if let Some(t) = secs(|l| l.request_timeout_secs) {
            timeouts.request = t;
        }
        if let Some(t) = secs(|l| l.idle_timeout_secs) {
            timeouts.idle = t;
        }
        if let Some(t) = secs(|l| l.first_token_timeout_secs) {
            timeouts.first_token = t;
        }
        // Lower layers' prices first, so higher layers overwrite them.
        let mut prices = PriceTable::default();
        for layer in layers.iter().rev() {
            prices.overrides.extend(layer.prices.clone());
        }
        let temperature = temperature(layers, &model)?;
        Ok(Self {
            provider,
            model,
            base_url,
            api_key,
            stream: layers.iter().find_map(|l| l.stream).unwrap_or(true),
            retry,
            timeouts,
            prices,
            scenario: layers
                .iter()
                .find_map(|l| l.scenario.clone())
                .or_else(|| env("REIN_SCENARIO").map(PathBuf::from)),
            context_window: context_window(layers, &env)?,
            temperature,
            key_from,
        })
    }

    /// The model's context window, and where Rein knows it from, without
    /// asking the server.
    pub fn context_window(&self) -> (u64, WindowSource) {
        self.context_window_from(None)
    }

    /// The model's context window given what its server said (`server`:
    /// tokens and what told them, from `crate::window::server_window`).
    /// The user's setting wins (they may want less than the server allows);
    /// the running server knows better than a table of hosted models.
    pub fn context_window_from(&self, server: Option<(u64, &'static str)>) -> (u64, WindowSource) {
        if let Some(window) = self.context_window {
            return (window, WindowSource::Configured);
        }
        if let Some((window, what)) = server {
            return (window, WindowSource::Server(what));
        }
        match self.prices.lookup(&self.model) {
            Some(price) => (price.context_window, WindowSource::PriceTable),
            None => (GUESSED_WINDOW, WindowSource::Guessed),
        }
    }

    /// Where the key came from, for messages: the layer it was set in, or
    /// the environment variable.
    pub fn key_source(&self) -> String {
        self.key_from
            .clone()
            .unwrap_or_else(|| self.key_env_var().to_owned())
    }

    /// The environment variable that holds this provider's key, for messages.
    pub fn key_env_var(&self) -> &'static str {
        match self.provider {
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::OpenAi => "OPENAI_API_KEY",
            ProviderKind::Scripted => "REIN_SCRIPTED_API_KEY",
        }
    }
}

/// Trims trailing slashes; for Anthropic also a trailing `/v1` (the
/// endpoint adds it), so both `https://api.anthropic.com` and
/// `https://api.anthropic.com/v1` work. OpenAI-format bases keep their
/// path: servers differ (`/v1`, `/api/v1`, none) and users copy them from
/// their server's docs.
fn normalize_base_url(provider: ProviderKind, url: &str) -> Result<String, ConfigError> {
    let trimmed = url.trim().trim_end_matches('/');
    if !(trimmed.starts_with("http://") || trimmed.starts_with("https://")) {
        return Err(ConfigError::BadBaseUrl(url.to_owned()));
    }
    let trimmed = match provider {
        ProviderKind::Anthropic => trimmed.strip_suffix("/v1").unwrap_or(trimmed),
        _ => trimmed,
    };
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn the_first_token_has_a_bound_of_its_own() {
        let local = env(&[
            ("OPENAI_BASE_URL", "http://localhost:8080/v1"),
            ("REIN_MODEL", "q"),
        ]);
        let c = ProviderConfig::resolve(&[], &local).unwrap();
        assert_eq!(
            (c.timeouts.first_token, c.timeouts.idle),
            (Duration::from_secs(300), Duration::from_secs(120))
        );
        let set: ProviderSettings =
            serde_json::from_value(serde_json::json!({"firstTokenTimeoutSecs": 900})).unwrap();
        let c = ProviderConfig::resolve(&[set], &local).unwrap();
        assert_eq!(c.timeouts.first_token, Duration::from_secs(900));
    }

    /// Greedy first: without a setting, 0; a model's own temperature wins
    /// over the provider's, a higher layer over a lower; nonsense is an
    /// error naming the range.
    #[test]
    fn the_temperature_is_zero_unless_set_for_the_provider_or_the_model() {
        let local = env(&[
            ("OPENAI_BASE_URL", "http://localhost:8080/v1"),
            ("REIN_MODEL", "qwen2.5-coder-1.5b"),
        ]);
        let t = |layers: &[ProviderSettings]| {
            ProviderConfig::resolve(layers, &local).map(|c| c.temperature)
        };
        let layer =
            |json: serde_json::Value| -> ProviderSettings { serde_json::from_value(json).unwrap() };
        assert_eq!(t(&[]), Ok(0.0));
        assert_eq!(
            t(&[layer(serde_json::json!({"temperature": 0.3}))]),
            Ok(0.3)
        );
        let both = [
            layer(serde_json::json!({"temperature": 0.3})),
            layer(serde_json::json!({"temperatures": {"qwen2.5-coder-1.5b": 0.7, "other": 1.0}})),
        ];
        assert_eq!(t(&both), Ok(0.7));
        assert_eq!(
            t(&[layer(serde_json::json!({"temperatures": {"other": 1.0}}))]),
            Ok(0.0)
        );
        for bad in [-0.1, 2.5, f64::NAN] {
            let e = t(&[ProviderSettings {
                temperature: Some(bad),
                ..ProviderSettings::default()
            }])
            .unwrap_err();
            assert!(matches!(e, ConfigError::BadTemperature(_)), "{bad}: {e}");
        }
    }

    #[test]
    fn the_context_window_is_configured_known_or_said_to_be_a_guess() {
        let local = env(&[
            ("OPENAI_BASE_URL", "http://localhost:8080/v1"),
            ("REIN_MODEL", "qwen2.5-coder-1.5b"),
        ]);
        let c = ProviderConfig::resolve(&[], &local).unwrap();
        assert_eq!(c.context_window(), (GUESSED_WINDOW, WindowSource::Guessed));
        let set = ProviderSettings {
            context_window: Some(4_096),
            ..ProviderSettings::default()
        };
        let c = ProviderConfig::resolve(&[set], &local).unwrap();
        assert_eq!(c.context_window(), (4_096, WindowSource::Configured));
        let by_env = env(&[
            ("OPENAI_BASE_URL", "http://localhost:8080/v1"),
            ("REIN_MODEL", "qwen"),
            ("REIN_CONTEXT_WINDOW", " 8192 "),
        ]);
        let c = ProviderConfig::resolve(&[], &by_env).unwrap();
        assert_eq!(c.context_window(), (8_192, WindowSource::Configured));
        let hosted = env(&[("ANTHROPIC_API_KEY", "sk-ant-x")]);
        let c = ProviderConfig::resolve(&[], &hosted).unwrap();
        assert_eq!(c.context_window(), (200_000, WindowSource::PriceTable));
        for bad in ["4k", "-1", "100"] {
            let e = ProviderConfig::resolve(
                &[],
                &env(&[
                    ("ANTHROPIC_API_KEY", "sk-ant-x"),
                    ("REIN_CONTEXT_WINDOW", bad),
                ]),
            )
            .unwrap_err();
            assert!(matches!(e, ConfigError::BadContextWindow(_)), "{bad}: {e}");
        }
    }

    /// Configured > the server > the price table > a guess.
    #[test]
    fn the_window_a_server_states_yields_only_to_the_settings() {
        let llama = Some((4_096, "llama.cpp /props"));
        let from_llama = (4_096, WindowSource::Server("llama.cpp /props"));
        let local_env = env(&[
            ("OPENAI_BASE_URL", "http://localhost:8080/v1"),
            ("REIN_MODEL", "qwen2.5-coder-1.5b"),
        ]);
        let local = ProviderConfig::resolve(&[], &local_env).unwrap();
        let configured = ProviderSettings {
            context_window: Some(16_384),
            ..ProviderSettings::default()
        };
        let configured = ProviderConfig::resolve(&[configured], &local_env).unwrap();
        let hosted = env(&[("OPENAI_API_KEY", "sk-x"), ("REIN_MODEL", "gpt-4o")]);
        let hosted = ProviderConfig::resolve(&[], &hosted).unwrap();
        let cases = [
            (
                "configured beats the server",
                &configured,
                llama,
                (16_384, WindowSource::Configured),
            ),
            ("the server beats a guess", &local, llama, from_llama),
            ("the server beats the table", &hosted, llama, from_llama),
            (
                "the table without a server",
                &hosted,
                None,
                (128_000, WindowSource::PriceTable),
            ),
            (
                "a guess without either",
                &local,
                None,
                (GUESSED_WINDOW, WindowSource::Guessed),
            ),
        ];
        for (name, config, server, expected) in cases {
            assert_eq!(config.context_window_from(server), expected, "{name}");
        }
        assert_eq!(
            WindowSource::Server("llama.cpp /props").to_string(),
            "from the server: llama.cpp /props"
        );
    }

    #[test]
    fn provider_is_inferred_from_keys() {
        let c = ProviderConfig::resolve(&[], &env(&[("ANTHROPIC_API_KEY", "sk-ant-xyz")])).unwrap();
        assert_eq!(
            (c.provider, c.model.as_str(), c.base_url.as_str()),
            (
                ProviderKind::Anthropic,
                "claude-sonnet-4-5",
                "https://api.anthropic.com"
            )
        );
        assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some("sk-ant-xyz"));

        let c = ProviderConfig::resolve(
            &[],
            &env(&[
                ("OPENAI_BASE_URL", "http://localhost:11434/v1/"),
                ("REIN_MODEL", "qwen2.5-coder:7b"),
            ]),
        )
        .unwrap();
        assert_eq!(
            (c.provider, c.base_url.as_str(), c.api_key.is_none()),
            (ProviderKind::OpenAi, "http://localhost:11434/v1", true)
        );

        assert_eq!(
            ProviderConfig::resolve(&[], &env(&[])).unwrap_err(),
            ConfigError::NoProvider
        );
        assert_eq!(
            ProviderConfig::resolve(
                &[],
                &env(&[("OPENAI_BASE_URL", "http://localhost:8080/v1")])
            )
            .unwrap_err(),
            ConfigError::NoModel {
                base_url: "http://localhost:8080/v1".into()
            }
        );
    }

    #[test]
    fn layers_beat_the_environment_in_order() {
        let editor = ProviderSettings {
            model: Some("claude-opus-4-5".into()),
            ..Default::default()
        };
        let workspace: ProviderSettings = serde_json::from_str(r#"{"provider": "anthropic", "model": "ignored", "baseUrl": "https://proxy.example/v1", "maxRetries": 1}"#).unwrap();
        let c = ProviderConfig::resolve(
            &[editor, workspace],
            &env(&[
                ("REIN_PROVIDER", "openai"),
                ("ANTHROPIC_API_KEY", "k-123456789"),
            ]),
        )
        .unwrap();
        assert_eq!(
            (
                c.provider,
                c.model.as_str(),
                c.base_url.as_str(),
                c.retry.max_retries
            ),
            (
                ProviderKind::Anthropic,
                "claude-opus-4-5",
                "https://proxy.example",
                1
            )
        );
    }

    #[test]
    fn bad_values_are_named() {
        assert_eq!(
            ProviderConfig::resolve(&[], &env(&[("REIN_PROVIDER", "gemini")]))
                .unwrap_err()
                .to_string(),
            "unknown provider \"gemini\": use anthropic, openai (also for Ollama, llama.cpp, vLLM, DeepSeek, OpenRouter) or scripted"
        );
        assert!(matches!(
            ProviderConfig::resolve(
                &[],
                &env(&[
                    ("ANTHROPIC_API_KEY", "k"),
                    ("ANTHROPIC_BASE_URL", "api.anthropic.com")
                ])
            ),
            Err(ConfigError::BadBaseUrl(_))
        ));
    }

    #[test]
    fn debug_output_hides_the_key() {
        let c = ProviderConfig::resolve(&[], &env(&[("ANTHROPIC_API_KEY", "sk-ant-SUPERSECRET")]))
            .unwrap();
        let debug = format!("{c:?}");
        assert!(!debug.contains("SUPERSECRET"), "{debug}");
        assert!(debug.contains("ApiKey(<redacted>)"), "{debug}");
    }

    /// Where the key came from: the first layer that sets one (by its
    /// origin), else the provider's environment variable.
    #[test]
    fn the_key_says_where_it_came_from() {
        let editor = ProviderSettings {
            provider: Some("anthropic".into()),
            api_key: Some("sk-ant-from-editor".into()),
            origin: Some("the editor's settings".into()),
            ..ProviderSettings::default()
        };
        let env = |name: &str| (name == "ANTHROPIC_API_KEY").then(|| "sk-ant-env".to_owned());
        let c = ProviderConfig::resolve(&[editor], &env).unwrap();
        assert_eq!(c.key_source(), "the editor's settings");
        assert_eq!(
            c.api_key.as_ref().map(ApiKey::expose),
            Some("sk-ant-from-editor")
        );
        let blank = ProviderSettings {
            provider: Some("anthropic".into()),
            api_key: Some("  ".into()),
            origin: Some("the editor's settings".into()),
            ..ProviderSettings::default()
        };
        let c = ProviderConfig::resolve(&[blank], &env).unwrap();
        assert_eq!(c.key_source(), "ANTHROPIC_API_KEY");
        assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some("sk-ant-env"));
    }
}
