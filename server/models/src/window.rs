//! The context window as the model's own server states it. A local
//! OpenAI-compatible server runs with the window it was started with
//! (`llama-server -c 4096`), which no table can know; each kind says it in
//! its own place, asked in this order:
//! - llama.cpp: `GET <root>/props` → `default_generation_settings.n_ctx`;
//! - vLLM: `GET <base>/models` → the model's `max_model_len`;
//! - Ollama: `POST <root>/api/show` → `num_ctx` in `parameters`, else
//!   Ollama's default num_ctx, at most the model's `context_length`.
//!
//! (`<base>` is the configured base URL, `<root>` the same without `/v1`.)
//!
//! What a server says is untrusted: a number outside
//! [`MIN_WINDOW`]..=[`MAX_WINDOW`], a wrong type, an HTTP error, a
//! redirect, a body over [`BODY_LIMIT`] or a server slower than
//! [`TIME_LIMIT`] all mean "the server did not say" (`None`), never an
//! error: the window has other sources (`ProviderConfig::context_window_from`).

use std::time::Duration;

use futures::StreamExt;
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::config::{ProviderConfig, ProviderKind, WindowSource};
use crate::openai::OpenAi;
use crate::wire::Wire;

/// All the asking together: it delays every task's start, and a server
/// that is up answers these in milliseconds.
pub const TIME_LIMIT: Duration = Duration::from_secs(3);
/// These answers are a few kilobytes; more is not one of them.
pub const BODY_LIMIT: usize = 1024 * 1024;
/// The smallest window accepted, as for `context_window` in the settings.
pub const MIN_WINDOW: u64 = 1_024;
/// Beyond any model's window: a bigger number is a lie or garbage.
pub const MAX_WINDOW: u64 = 10_000_000;
/// What Ollama runs a model with unless `num_ctx` says otherwise, however
/// long a context the model was trained for.
const OLLAMA_DEFAULT_NUM_CTX: u64 = 4_096;

const LLAMA_CPP: &str = "llama.cpp /props";
const VLLM: &str = "vLLM max_model_len";
const OLLAMA_NUM_CTX: &str = "Ollama num_ctx";
const OLLAMA_DEFAULT: &str = "Ollama's default num_ctx";
const OLLAMA_MODEL: &str = "Ollama model_info context_length";

/// The model's context window, and where it comes from: the settings
/// when they say, else the price table when it knows the model (hosted
/// models, or the user's `[prices]` entry: the server is not asked, so a
/// hosted API gets no stray requests), else the server's answer
/// ([`server_window`]), else a guess.
pub async fn ask_context_window(config: &ProviderConfig) -> (u64, WindowSource) {
    let known = config.context_window.is_some() || config.prices.lookup(&config.model).is_some();
    let server = if known {
        None
    } else {
        server_window(config).await
    };
    config.context_window_from(server)
}

/// The window an OpenAI-compatible server says it runs the model with,
/// and what said it (e.g. "llama.cpp /props"); `None` when no server kind
/// answered acceptably within [`TIME_LIMIT`], or for other providers.
pub async fn server_window(config: &ProviderConfig) -> Option<(u64, &'static str)> {
    if config.provider != ProviderKind::OpenAi {
        return None;
    }
    let server = Server::new(config)?;
    match tokio::time::timeout(TIME_LIMIT, server.ask()).await {
        Ok(found) => found,
        Err(_) => {
            tracing::debug!(after = ?TIME_LIMIT, "the server did not state its context window in time");
            None
        }
    }
}

/// The server as this module asks it: the provider's headers (its key,
/// marked sensitive), and no redirects, so neither the key nor the
/// question leaves for a host the user did not configure.
struct Server {
    http: reqwest::Client,
    headers: HeaderMap,
    models_url: String,
    root: String,
    model: String,
}

impl Server {
    fn new(config: &ProviderConfig) -> Option<Self> {
        let wire = OpenAi::new(&config.base_url, config.api_key.clone());
        let headers = wire.headers().ok()?;
        let http = reqwest::Client::builder()
            .connect_timeout(config.timeouts.connect.min(TIME_LIMIT))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("rein/", env!("CARGO_PKG_VERSION")))
            .build()
            .ok()?;
        Some(Self {
            http,
            headers,
            models_url: wire.models_url(),
            root: root_of(&config.base_url).to_owned(),
            model: config.model.clone(),
        })
    }

    /// Each kind in turn; the first acceptable answer wins.
    async fn ask(&self) -> Option<(u64, &'static str)> {
        let props = self.http.get(format!("{}/props", self.root));
        if let Some(n_ctx) = self
            .json(props, LLAMA_CPP)
            .await
            .and_then(|p| llama_cpp(&p))
        {
            return Some((n_ctx, LLAMA_CPP));
        }
        let models = self.http.get(&self.models_url);
        if let Some(len) = self
            .json(models, VLLM)
            .await
            .and_then(|listing| vllm(&listing, &self.model))
        {
            return Some((len, VLLM));
        }
        let show = self
            .http
            .post(format!("{}/api/show", self.root))
            .json(&serde_json::json!({"model": self.model}));
        self.json(show, "Ollama /api/show")
            .await
            .and_then(|show| ollama(&show))
    }

    /// The JSON of a 2xx answer of at most [`BODY_LIMIT`] bytes. Only
    /// the reason is logged: neither headers nor reqwest's messages.
    async fn json(&self, request: reqwest::RequestBuilder, what: &str) -> Option<Value> {
        let response = match request.headers(self.headers.clone()).send().await {
            Ok(response) => response,
            Err(e) => {
                let reason = if e.is_connect() {
                    "cannot connect"
                } else {
                    "no answer"
                };
                tracing::debug!(what, reason, "no context window from the server");
                return None;
            }
        };
        let status = response.status();
        if !status.is_success() {
            tracing::debug!(
                what,
                status = status.as_u16(),
                "no context window from the server"
            );
            return None;
        }
        if response
            .content_length()
            .is_some_and(|length| length > BODY_LIMIT as u64)
        {
            tracing::debug!(what, "the server's answer is too big");
            return None;
        }
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.ok()?;
            if body.len() + chunk.len() > BODY_LIMIT {
                tracing::debug!(what, "the server's answer is too big");
                return None;
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).ok()
    }
}

/// The server's root: the base URL without a trailing `/v1`, where
/// llama.cpp and Ollama keep their own endpoints.
fn root_of(base_url: &str) -> &str {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base)
}

/// A window, if `value` is a whole number in the accepted range.
fn tokens(value: &Value) -> Option<u64> {
    value
        .as_u64()
        .filter(|n| (MIN_WINDOW..=MAX_WINDOW).contains(n))
}

/// llama.cpp's `/props`: `default_generation_settings.n_ctx` (older and
/// newer builds), or a top-level `n_ctx`.
fn llama_cpp(props: &Value) -> Option<u64> {
    props
        .pointer("/default_generation_settings/n_ctx")
        .and_then(tokens)
        .or_else(|| props.get("n_ctx").and_then(tokens))
}

/// vLLM's model list: the `max_model_len` of the entry for `model`.
fn vllm(listing: &Value, model: &str) -> Option<u64> {
    listing
        .get("data")?
        .as_array()?
        .iter()
        .find(|entry| entry.get("id").and_then(Value::as_str) == Some(model))?
        .get("max_model_len")
        .and_then(tokens)
}

/// Ollama's `/api/show`: `num_ctx` when the model's parameters set it,
/// else what Ollama runs it with by default.
fn ollama(show: &Value) -> Option<(u64, &'static str)> {
    // `parameters` is Modelfile text: lines of `<name> <value>`.
    let num_ctx = show
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|parameters| {
            parameters.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx")).then(|| words.next().unwrap_or_default())
            })
        });
    if let Some(num_ctx) = num_ctx {
        // Set, but not to a window we accept: the default does not apply
        // either, so the server has not said.
        return num_ctx
            .parse::<u64>()
            .ok()
            .filter(|n| (MIN_WINDOW..=MAX_WINDOW).contains(n))
            .map(|n| (n, OLLAMA_NUM_CTX));
    }
    let info = show.get("model_info")?;
    let architecture = info.get("general.architecture")?.as_str()?;
    let trained = tokens(info.get(format!("{architecture}.context_length").as_str())?)?;
    Some(if trained > OLLAMA_DEFAULT_NUM_CTX {
        (OLLAMA_DEFAULT_NUM_CTX, OLLAMA_DEFAULT)
    } else {
        (trained, OLLAMA_MODEL)
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn only_whole_numbers_in_range_are_windows() {
        let cases = [
            (json!(4096), Some(4096)),
            (json!(1024), Some(1024)),
            (json!(10_000_000), Some(10_000_000)),
            (json!(1023), None),
            (json!(10_000_001), None),
            (json!(0), None),
            (json!(-1), None),
            (json!(4096.0), None),
            (json!(1e30), None),
            (json!(u64::MAX), None),
            (json!("4096"), None),
            (json!(null), None),
            (json!([4096]), None),
        ];
        for (value, expected) in cases {
            assert_eq!(tokens(&value), expected, "{value}");
        }
    }

    #[test]
    fn the_root_is_the_base_without_v1() {
        let cases = [
            ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
            ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080"),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("https://proxy.example/api/v1", "https://proxy.example/api"),
            (
                "https://proxy.example/v1beta",
                "https://proxy.example/v1beta",
            ),
        ];
        for (base, root) in cases {
            assert_eq!(root_of(base), root, "{base}");
        }
    }

    #[test]
    fn each_kind_is_read_where_it_says_it() {
        let llama_cases = [
            (
                json!({"default_generation_settings": {"n_ctx": 4096}}),
                Some(4096),
            ),
            (json!({"n_ctx": 8192}), Some(8192)),
            (
                json!({"default_generation_settings": {"n_ctx": "4096"}}),
                None,
            ),
            (json!({"default_generation_settings": 4096}), None),
            (json!([]), None),
        ];
        for (props, expected) in llama_cases {
            assert_eq!(llama_cpp(&props), expected, "{props}");
        }
        let listing = json!({"data": [
            {"id": "other", "max_model_len": 2048},
            {"id": "qwen", "max_model_len": 32768},
        ]});
        assert_eq!(vllm(&listing, "qwen"), Some(32_768));
        assert_eq!(vllm(&listing, "missing"), None);
        assert_eq!(vllm(&json!({"data": {"id": "qwen"}}), "qwen"), None);

        let info = |length: Value| json!({"general.architecture": "qwen2", "qwen2.context_length": length});
        let ollama_cases = [
            (
                json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx                        8192", "model_info": info(json!(32768))}),
                Some((8192, "Ollama num_ctx")),
            ),
            (
                json!({"parameters": "stop \"<|im_end|>\"", "model_info": info(json!(32768))}),
                Some((4096, "Ollama's default num_ctx")),
            ),
            (
                json!({"model_info": info(json!(2048))}),
                Some((2048, "Ollama model_info context_length")),
            ),
            (
                json!({"parameters": "num_ctx", "model_info": info(json!(32768))}),
                None,
            ),
            (
                json!({"parameters": "num_ctx 99999999999", "model_info": info(json!(32768))}),
                None,
            ),
            (
                json!({"model_info": {"general.architecture": "llama", "qwen2.context_length": 32768}}),
                None,
            ),
            (json!({"model_info": {"general.architecture": 7}}), None),
            (json!({"model_info": info(json!(-1))}), None),
        ];
        for (show, expected) in ollama_cases {
            assert_eq!(ollama(&show), expected, "{show}");
        }
    }
}
