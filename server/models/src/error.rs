//! Errors, classified once: transient ones are retried, permanent ones say
//! what is wrong and how to fix it. No message here ever contains an API
//! key: provider error texts pass through [`crate::secret::redact`].

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error(
        "{env_var} is not set: Rein needs an API key for {provider} (or set REIN_PROVIDER to another provider)"
    )]
    MissingApiKey {
        provider: &'static str,
        env_var: &'static str,
    },

    #[error(
        "{provider} rejected the API key ({status} {kind}: {message}); check the key from {key_from}"
    )]
    Unauthorized {
        provider: &'static str,
        status: u16,
        kind: String,
        message: String,
        /// Where the key came from (`ProviderConfig::key_source`).
        key_from: String,
    },

    #[error(
        "{provider} does not know model {model:?} ({status}: {message}); set REIN_MODEL to a model it serves"
    )]
    ModelNotFound {
        provider: &'static str,
        model: String,
        status: u16,
        message: String,
    },

    #[error("{}", context_message(*.tokens, *.window, .message))]
    ContextTooLong {
        tokens: Option<u64>,
        window: Option<u64>,
        message: String,
    },

    /// A 4xx (other than the above) or any other refusal that retrying will
    /// not fix.
    #[error("{provider} refused the request ({status} {kind}: {message})")]
    Rejected {
        provider: &'static str,
        status: u16,
        kind: String,
        message: String,
    },

    /// 429, 529, 500–504: worth retrying.
    #[error("{provider} is unavailable right now ({status} {kind}: {message})")]
    Unavailable {
        provider: &'static str,
        status: u16,
        kind: String,
        message: String,
        retry_after: Option<Duration>,
    },

    /// An error event inside an otherwise successful stream.
    #[error("{provider} reported an error mid-stream ({kind}: {message})")]
    StreamError {
        provider: &'static str,
        kind: String,
        message: String,
        transient: bool,
    },

    #[error("could not connect to {url}: {reason}")]
    Connect { url: String, reason: String },

    #[error("the connection to {provider} failed: {reason}")]
    Transport {
        provider: &'static str,
        reason: String,
    },

    #[error("the reply from {provider} ended before it was complete ({reason})")]
    StreamCut {
        provider: &'static str,
        reason: String,
    },

    /// A stream event that is not JSON: the stream was damaged on its way
    /// (a proxy, a garbled buffer), as a cut one is; worth retrying.
    #[error("{provider} sent a stream event that is not JSON ({reason})")]
    GarbledEvent {
        provider: &'static str,
        reason: String,
    },

    #[error("{provider} sent nothing for {after:?}; giving up on this attempt")]
    IdleTimeout {
        provider: &'static str,
        after: Duration,
    },

    #[error("{provider} did not finish within {after:?}")]
    RequestTimeout {
        provider: &'static str,
        after: Duration,
    },

    #[error("{provider} sent a reply Rein cannot read: {reason}")]
    Protocol {
        provider: &'static str,
        reason: String,
    },

    /// Refused before sending: a bug in the history we were given.
    #[error("refusing to send an invalid request: {0}")]
    InvalidRequest(String),

    #[error("the model call was cancelled")]
    Cancelled,

    #[error("{last} (gave up after {attempts} attempts)")]
    RetriesExhausted {
        attempts: u32,
        last: Box<ModelError>,
    },
}

fn context_message(tokens: Option<u64>, window: Option<u64>, message: &str) -> String {
    match (tokens, window) {
        (Some(t), Some(w)) => format!(
            "the request is {}k tokens; this model's window is {}k (the context must be trimmed or compacted)",
            (t + 500) / 1000,
            w / 1000
        ),
        _ => format!("the request is too long for this model's context window ({message})"),
    }
}

impl ModelError {
    /// Whether a retry of the same request may succeed.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Unavailable { .. }
            | Self::Connect { .. }
            | Self::Transport { .. }
            | Self::StreamCut { .. }
            | Self::GarbledEvent { .. }
            | Self::IdleTimeout { .. }
            | Self::RequestTimeout { .. } => true,
            Self::StreamError { transient, .. } => *transient,
            _ => false,
        }
    }

    /// The wait the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Unavailable { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The same error, naming the provider `name`. A wire format names
    /// its own provider ("Anthropic"); a client that only borrows the
    /// format (the scripted model) must not send the user looking for
    /// that provider's outage.
    pub(crate) fn naming(mut self, name: &'static str) -> Self {
        match &mut self {
            Self::MissingApiKey { provider, .. }
            | Self::Unauthorized { provider, .. }
            | Self::ModelNotFound { provider, .. }
            | Self::Rejected { provider, .. }
            | Self::Unavailable { provider, .. }
            | Self::StreamError { provider, .. }
            | Self::Transport { provider, .. }
            | Self::StreamCut { provider, .. }
            | Self::GarbledEvent { provider, .. }
            | Self::IdleTimeout { provider, .. }
            | Self::RequestTimeout { provider, .. }
            | Self::Protocol { provider, .. } => *provider = name,
            Self::RetriesExhausted { last, .. } => {
                let inner = std::mem::replace(&mut **last, Self::Cancelled);
                **last = inner.naming(name);
            }
            Self::ContextTooLong { .. }
            | Self::Connect { .. }
            | Self::InvalidRequest(_)
            | Self::Cancelled => {}
        }
        self
    }

    /// The error with a rejected key said to come from `from` (the wire
    /// knows only the provider's environment variable; the settings know
    /// where the key really was: the editor's Set API Key, a config file).
    pub(crate) fn key_from(mut self, from: String) -> Self {
        match &mut self {
            Self::Unauthorized { key_from, .. } => *key_from = from,
            Self::RetriesExhausted { last, .. } => {
                let inner = std::mem::replace(&mut **last, Self::Cancelled);
                **last = inner.key_from(from);
            }
            _ => {}
        }
        self
    }

    /// The error when the provider said a retry will not help
    /// (`x-should-retry: false`): an outage becomes a refusal, which is
    /// not retried and does not read as "unavailable right now".
    pub(crate) fn not_to_retry(self) -> Self {
        match self {
            Self::Unavailable {
                provider,
                status,
                kind,
                message,
                ..
            } => Self::Rejected {
                provider,
                status,
                kind,
                message,
            },
            other => other,
        }
    }
}

/// An event's data that did not parse, for [`ModelError::GarbledEvent`]:
/// the parser's complaint and the start of the data (an event can be long).
pub(crate) fn garbled_event(
    provider: &'static str,
    data: &str,
    error: &serde_json::Error,
) -> ModelError {
    const SHOWN: usize = 200;
    let mut cut = data.len().min(SHOWN);
    while !data.is_char_boundary(cut) {
        cut -= 1;
    }
    let more = if cut < data.len() { "…" } else { "" };
    ModelError::GarbledEvent {
        provider,
        reason: format!(
            "{error}: {}{more}",
            crate::secret::redact(&data[..cut], None)
        ),
    }
}

/// Parses "prompt is too long: 212345 tokens > 200000 maximum" (Anthropic)
/// and "maximum context length is 128000 tokens. However, your messages
/// resulted in 130001 tokens" (OpenAI) into (tokens, window).
pub(crate) fn parse_context_numbers(message: &str) -> (Option<u64>, Option<u64>) {
    let numbers: Vec<u64> = message
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| s.len() >= 3)
        .filter_map(|s| s.parse().ok())
        .collect();
    match numbers.as_slice() {
        [a, b, ..] if message.contains("maximum context length") => (Some(*b), Some(*a)),
        [a, b, ..] => (Some(*a), Some(*b)),
        _ => (None, None),
    }
}

/// Whether a provider's error message says the prompt does not fit.
pub(crate) fn is_context_overflow(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("prompt is too long")
        || m.contains("maximum context length")
        || m.contains("context_length_exceeded")
        || m.contains("context window")
        || m.contains("too many tokens")
        // llama.cpp
        || m.contains("exceeds the available context size")
        // vLLM
        || m.contains("maximum model length")
        // Ollama
        || m.contains("exceeds the context length")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_error_names_the_new_provider_even_when_wrapped() {
        let unavailable = ModelError::Unavailable {
            provider: "Anthropic",
            status: 500,
            kind: "api_error".into(),
            message: "boom".into(),
            retry_after: None,
        };
        let wrapped = ModelError::RetriesExhausted {
            attempts: 4,
            last: Box::new(unavailable.clone()),
        };
        assert_eq!(
            wrapped.naming("the scripted model").to_string(),
            "the scripted model is unavailable right now (500 api_error: boom) (gave up after 4 attempts)"
        );
        let refused = unavailable.not_to_retry().naming("the scripted model");
        assert!(!refused.is_transient());
        assert_eq!(
            refused.to_string(),
            "the scripted model refused the request (500 api_error: boom)"
        );
        // What has no provider in it is left as it is.
        assert_eq!(
            ModelError::Cancelled.naming("x").to_string(),
            "the model call was cancelled"
        );
    }

    #[test]
    fn context_numbers_from_both_providers() {
        assert_eq!(
            parse_context_numbers("prompt is too long: 212345 tokens > 200000 maximum"),
            (Some(212345), Some(200000))
        );
        assert_eq!(
            parse_context_numbers(
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens."
            ),
            (Some(130001), Some(128000))
        );
        let e = ModelError::ContextTooLong {
            tokens: Some(212_345),
            window: Some(200_000),
            message: String::new(),
        };
        assert_eq!(
            e.to_string(),
            "the request is 212k tokens; this model's window is 200k (the context must be trimmed or compacted)"
        );
    }
}
