//! API keys: held in a type that cannot be printed, and scrubbed from any
//! text that came back from a provider before it goes anywhere else.

use std::fmt;

use crate::redact::Redactor;

/// An API key. `Debug` and `Display` never show it; only the adapters call
/// [`ApiKey::expose`], to put it in a request header.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// `None` for an empty or blank value (an unset key, in effect).
    pub fn new(key: impl Into<String>) -> Option<Self> {
        let key = key.into().trim().to_owned();
        (!key.is_empty()).then_some(Self(key))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Variables that hold a secret whatever their name looks like.
const SECRET_NAMES: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "NPM_TOKEN",
];

/// Name endings that mark a secret (`REIN_OPENAI_API_KEY`, `CI_JOB_TOKEN`,
/// `STRIPE_KEY`).
const SECRET_SUFFIXES: &[&str] = &["_KEY", "_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD"];

/// Whether an environment variable's name says it holds a secret. Compared
/// without regard to case: `github_token` is as secret as `GITHUB_TOKEN`.
/// The one definition: commands' environments are scrubbed of these, and
/// their values are redacted from everything Rein writes.
pub fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    SECRET_NAMES.contains(&name.as_str())
        || SECRET_SUFFIXES.iter().any(|suffix| name.ends_with(suffix))
        || name.contains("SECRET")
}

/// Removes `key` and anything shaped like a key (`sk-…`, `sk-ant-…`, the
/// `sk-abc***xyz` fragments OpenAI echoes back, …) from `text`: the
/// provider errors' redaction, by the same [`Redactor`] as everything else.
pub fn redact(text: &str, key: Option<&ApiKey>) -> String {
    Redactor::new([], key.map(|k| k.0.clone()))
        .redact(text)
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_print() {
        let key = ApiKey::new("sk-ant-api03-SECRETSECRET").unwrap();
        assert_eq!(format!("{key:?} {key}"), "ApiKey(<redacted>) <redacted>");
        assert!(ApiKey::new("  ").is_none());
    }

    #[test]
    fn redaction_catches_the_key_and_key_shapes() {
        let key = ApiKey::new("local-key-1234567").unwrap();
        assert_eq!(
            redact(
                "bad key local-key-1234567; Incorrect API key provided: sk-proj-abc***wxyz.",
                Some(&key)
            ),
            "bad key <redacted>; Incorrect API key provided: <redacted>."
        );
        // Ordinary words containing "sk-" are left alone.
        assert_eq!(
            redact("task-list and disk-usage", None),
            "task-list and disk-usage"
        );
    }

    #[test]
    fn secret_names() {
        for name in [
            "ANTHROPIC_API_KEY",
            "REIN_ANTHROPIC_API_KEY",
            "FOO_API_KEY",
            "STRIPE_KEY",
            "SSH_PRIVATE_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "CI_JOB_TOKEN",
            "DB_PASSWORD",
            "APP_SECRET",
            "MY_SECRET_THING",
            "github_token",
            "client_secret",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "TERM",
            "KEYBOARD",
            "VIRTUAL_ENV",
            "TOKENIZERS_PARALLELISM",
            "API_KEYS_DOC",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
