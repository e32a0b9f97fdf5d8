//! API keys: held in a type that cannot be printed, and scrubbed from any
//! text that came back from a provider before it goes anywhere else.

use std::fmt;

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

const REDACTED: &str = "<redacted>";

/// Removes `key` and anything shaped like a provider key (`sk-…`,
/// `sk-ant-…`, and the `sk-abc***xyz` fragments OpenAI echoes back) from
/// `text`.
pub fn redact(text: &str, key: Option<&ApiKey>) -> String {
    let mut out = match key {
        Some(key) if key.0.len() >= 8 => text.replace(&key.0, REDACTED),
        _ => text.to_owned(),
    };
    // Key-shaped tokens: "sk-" followed by key characters.
    let mut result = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(at) = rest.find("sk-") {
        let boundary_ok = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        result.push_str(&rest[..at]);
        let tail = &rest[at..];
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '*')))
            .unwrap_or(tail.len());
        if boundary_ok && len >= 8 {
            result.push_str(REDACTED);
        } else {
            result.push_str(&tail[..len]);
        }
        rest = &tail[len..];
    }
    result.push_str(rest);
    out = result;
    out
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
}
