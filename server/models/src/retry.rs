//! When to try a failed call again, and how long to wait first.

use std::time::{Duration, SystemTime};

use rand::Rng;
use reqwest::header::HeaderMap;
use serde::{Deserialize, Serialize};

use crate::error::ModelError;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `3` means up to 4 attempts).
    pub max_retries: u32,
    /// The first backoff; doubled on each retry, with full jitter.
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// A provider asking us to wait longer than this is not waited for: the
    /// call fails with its message instead of hanging the task silently.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_millis(1_000),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based) after `error`, or
    /// `None` if the call should not be retried.
    pub fn plan(&self, retry: u32, error: &ModelError) -> Option<Duration> {
        if retry > self.max_retries || !error.is_transient() {
            return None;
        }
        if let Some(wait) = error.retry_after() {
            return (wait <= self.max_retry_after).then_some(wait);
        }
        let ceiling = self
            .base_delay
            .saturating_mul(1 << (retry - 1).min(16))
            .min(self.max_delay);
        // Full jitter between half the ceiling and the ceiling: spreads
        // retries from many clients without ever retrying immediately.
        let half = ceiling / 2;
        let jitter = rand::rng().random_range(0..=half.as_millis().max(1) as u64);
        Some(half + Duration::from_millis(jitter))
    }
}

/// The wait a response asks for: `retry-after-ms` (OpenAI), else
/// `retry-after` in seconds or as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return duration_from_secs(ms / 1000.0);
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return duration_from_secs(secs);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(SystemTime::now()).unwrap_or_default())
}

/// Whether the response says that retrying will not help:
/// `x-should-retry: false`, which Anthropic's and OpenAI's APIs send and
/// their own SDKs obey (and the fake model server sends once its scenario
/// has run out: a script with no reply left is not a passing outage).
pub(crate) fn retry_forbidden(headers: &HeaderMap) -> bool {
    headers
        .get("x-should-retry")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("false"))
}

fn duration_from_secs(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unavailable(retry_after: Option<Duration>) -> ModelError {
        ModelError::Unavailable {
            provider: "test",
            status: 529,
            kind: "overloaded_error".into(),
            message: "Overloaded".into(),
            retry_after,
        }
    }

    #[test]
    fn backoff_grows_with_jitter_and_stops() {
        let policy = RetryPolicy::default();
        for retry in 1..=3 {
            let ceiling = Duration::from_secs(1 << (retry - 1));
            let wait = policy.plan(retry, &unavailable(None)).unwrap();
            assert!(
                wait >= ceiling / 2 && wait <= ceiling,
                "retry {retry}: {wait:?}"
            );
        }
        assert_eq!(policy.plan(4, &unavailable(None)), None);
        let permanent = ModelError::Rejected {
            provider: "test",
            status: 400,
            kind: "invalid_request_error".into(),
            message: "bad".into(),
        };
        assert_eq!(policy.plan(1, &permanent), None);
    }

    #[test]
    fn retry_after_is_honoured_within_limits() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.plan(1, &unavailable(Some(Duration::from_secs(7)))),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            policy.plan(1, &unavailable(Some(Duration::from_secs(600)))),
            None
        );
    }

    #[test]
    fn the_provider_may_forbid_a_retry() {
        let mut headers = HeaderMap::new();
        assert!(!retry_forbidden(&headers));
        headers.insert("x-should-retry", "true".parse().unwrap());
        assert!(!retry_forbidden(&headers));
        headers.insert("x-should-retry", "False".parse().unwrap());
        assert!(retry_forbidden(&headers));
    }

    #[test]
    fn retry_after_headers() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(1500)));
        let mut dated = HeaderMap::new();
        dated.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&dated), Some(Duration::ZERO));
        let mut junk = HeaderMap::new();
        junk.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&junk), None);
    }
}
