//! One redactor for everything Rein writes or sends: the task state, the
//! artifacts, the logs, the traces and the model's requests all pass
//! through [`Redactor`], so a secret is removed the same way everywhere.
//!
//! It knows two kinds of secrets: values it was given (the configured API
//! key, the values of the environment's secret-named variables, see
//! [`crate::is_secret_name`]), each also in its JSON-escaped form, and the
//! shapes of common keys (`shapes.rs`). Both are found in one pass of an
//! Aho–Corasick automaton each, so a text without secrets costs two scans
//! and no copy. A value shorter than [`MIN_SECRET_LEN`] is not redacted:
//! it would hit ordinary words.

mod shapes;
mod stream;

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};

use aho_corasick::{AhoCorasick, Input, Match, MatchKind};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use self::shapes::{PEM_MAX_BYTES, PREFIXES, Shape};
pub use self::stream::StreamRedactor;

/// What a secret is replaced with.
pub const REDACTED: &str = "<redacted>";

/// Known values shorter than this (in bytes) are left alone.
pub const MIN_SECRET_LEN: usize = 8;

/// Removes secrets from text. Cheap to clone (shared); built once per task
/// from the environment and the configuration. `Default` knows no values,
/// only the key shapes.
#[derive(Clone)]
pub struct Redactor(Arc<Inner>);

struct Inner {
    /// The values given, as given (trimmed lines), to extend a redactor.
    secrets: Vec<String>,
    /// Every form of every value: as is, and JSON-escaped when different.
    forms: Vec<String>,
    literals: Option<AhoCorasick>,
    shapes: Option<AhoCorasick>,
}

/// Never prints the secrets it holds.
impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.0.secrets.len())
            .finish()
    }
}

impl Default for Redactor {
    fn default() -> Self {
        Self::from_values([])
    }
}

impl Redactor {
    /// From an environment (only the values of secret-named variables are
    /// taken) and extra secret values (a key from the editor's settings).
    pub fn new(
        env: impl IntoIterator<Item = (String, String)>,
        extra: impl IntoIterator<Item = String>,
    ) -> Self {
        let values = env
            .into_iter()
            .filter(|(name, _)| crate::is_secret_name(name))
            .map(|(_, value)| value)
            .chain(extra);
        Self::from_values(values)
    }

    /// This redactor and `extra` values.
    pub fn with_secrets(&self, extra: impl IntoIterator<Item = String>) -> Self {
        Self::from_values(self.0.secrets.iter().cloned().chain(extra))
    }

    /// The values of both (a log that outlives tasks learns each one's).
    pub fn union(&self, other: &Redactor) -> Self {
        if other.0.secrets.iter().all(|s| self.0.secrets.contains(s)) {
            return self.clone();
        }
        self.with_secrets(other.0.secrets.iter().cloned())
    }

    fn from_values(values: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = values
            .into_iter()
            // A multi-line value (a PEM key in a variable) is found line
            // by line, as logs and numbered reads show it.
            .flat_map(|v| v.lines().map(|l| l.trim().to_owned()).collect::<Vec<_>>())
            .filter(|s| s.len() >= MIN_SECRET_LEN && !REDACTED.contains(s.as_str()))
            .collect();
        secrets.sort();
        secrets.dedup();
        let mut forms = secrets.clone();
        for secret in &secrets {
            let quoted = serde_json::to_string(secret).unwrap_or_default();
            let escaped = quoted
                .strip_prefix('"')
                .and_then(|q| q.strip_suffix('"'))
                .unwrap_or(secret);
            if escaped != secret {
                forms.push(escaped.to_owned());
            }
        }
        let literals = (!forms.is_empty()).then(|| automaton(&forms)).flatten();
        // The same for every redactor: built once.
        static SHAPES: OnceLock<Option<AhoCorasick>> = OnceLock::new();
        let shapes = SHAPES
            .get_or_init(|| automaton(PREFIXES.iter().map(|(p, _)| p)))
            .clone();
        Self(Arc::new(Inner {
            secrets,
            forms,
            literals,
            shapes,
        }))
    }

    /// How many secret values it knows (not counting shapes).
    pub fn known_values(&self) -> usize {
        self.0.secrets.len()
    }

    /// Whether `text` may hold something to redact: a known value or the
    /// prefix of a key shape. Never false when [`Redactor::redact`] would
    /// change the text.
    pub fn finds(&self, text: &str) -> bool {
        self.finds_bytes(text.as_bytes())
    }

    pub fn finds_bytes(&self, bytes: &[u8]) -> bool {
        let inner = &self.0;
        inner.literals.as_ref().is_some_and(|a| a.is_match(bytes))
            || inner.shapes.as_ref().is_some_and(|a| a.is_match(bytes))
    }

    /// `text` with every secret replaced by [`REDACTED`]; borrowed when
    /// there was none.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.redact_bytes(text.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            // Only whole UTF-8 values and ASCII keys were replaced by
            // ASCII, so this is still UTF-8.
            Cow::Owned(bytes) => Cow::Owned(
                String::from_utf8(bytes)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            ),
        }
    }

    /// The same for bytes that may not be UTF-8 (a command's output).
    pub fn redact_bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        if !self.finds_bytes(bytes) {
            return Cow::Borrowed(bytes);
        }
        let mut out = Vec::with_capacity(bytes.len());
        self.0.scan(bytes, bytes.len(), &mut None, &mut out);
        if out == bytes {
            Cow::Borrowed(bytes)
        } else {
            Cow::Owned(out)
        }
    }

    /// Redacts every string of a JSON value (object keys too), in place.
    /// Done before serializing, so a secret holding `"` or `\` is found
    /// as it is, not as its escaped form.
    pub fn redact_value(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Cow::Owned(r) = self.redact(s) {
                    *s = r;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_value(v)),
            Value::Object(map) => {
                if map.keys().any(|k| self.finds(k)) {
                    let old = std::mem::take(map);
                    for (k, v) in old {
                        map.insert(self.redact(&k).into_owned(), v);
                    }
                }
                map.values_mut().for_each(|v| self.redact_value(v));
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// `value` as compact JSON, redacted (what the task state stores).
    pub fn json<T: Serialize + ?Sized>(&self, value: &T) -> String {
        self.to_json(value, false)
    }

    /// `value` as indented JSON, redacted (what artifacts hold).
    pub fn json_pretty<T: Serialize + ?Sized>(&self, value: &T) -> String {
        self.to_json(value, true)
    }

    fn to_json<T: Serialize + ?Sized>(&self, value: &T, pretty: bool) -> String {
        let text = print(value, pretty);
        // The usual case: nothing to redact, serialized once.
        if !self.finds(&text) {
            return text;
        }
        match serde_json::to_value(value) {
            Ok(mut tree) => {
                self.redact_value(&mut tree);
                print(&tree, pretty)
            }
            Err(_) => self.redact(&text).into_owned(),
        }
    }

    /// `value` with every string redacted, through its JSON form (a task's
    /// spec: its goal, its constraints). Unchanged when there is nothing
    /// to redact, or if it does not read back.
    pub fn redacted<T: Serialize + DeserializeOwned>(&self, value: T) -> T {
        let text = print(&value, false);
        if !self.finds(&text) {
            return value;
        }
        let Ok(mut tree) = serde_json::to_value(&value) else {
            return value;
        };
        self.redact_value(&mut tree);
        serde_json::from_value(tree).unwrap_or(value)
    }

    /// A redactor for a stream read in pieces (a command's output).
    pub fn stream(&self) -> StreamRedactor {
        StreamRedactor::new(self.clone())
    }

    /// How many bytes at the end of `text` begin a known secret value
    /// without completing it: what a caller that shows text while it
    /// streams (the model's words in an editor's status) holds back
    /// until the rest tells whether it is the secret. 0 when no known
    /// value starts there. (A key shape is recognised from its prefix,
    /// which is no secret; a known value is not, so its start is held.)
    pub fn unfinished(&self, text: &str) -> usize {
        self.0
            .forms
            .iter()
            .filter_map(|form| {
                (1..form.len().min(text.len() + 1))
                    .rev()
                    .filter(|&k| form.is_char_boundary(k))
                    .find(|&k| text.as_bytes().ends_with(&form.as_bytes()[..k]))
            })
            .max()
            .unwrap_or(0)
    }

    /// The longest known value form, in bytes.
    fn longest(&self) -> usize {
        self.0.forms.iter().map(String::len).max().unwrap_or(0)
    }
}

fn print<T: Serialize + ?Sized>(value: &T, pretty: bool) -> String {
    let printed = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    };
    printed.unwrap_or_default()
}

/// A leftmost-longest automaton over `patterns`; `None` only if it cannot
/// be built (far more patterns than a process has secrets).
fn automaton<I, P>(patterns: I) -> Option<AhoCorasick>
where
    I: IntoIterator<Item = P>,
    P: AsRef<[u8]>,
{
    match AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(patterns)
    {
        Ok(automaton) => Some(automaton),
        Err(error) => {
            tracing::error!(%error, "cannot build the secret matcher");
            None
        }
    }
}

impl Inner {
    /// Redacts `hay` into `out`. Secrets that start before `stop` are
    /// handled whole (up to the end of `hay`); the text after `stop` that
    /// no secret covered is left for the caller's next piece. `pem` is
    /// the open PEM block's remaining budget, carried across pieces.
    /// Returns how much of `hay` was consumed (at least `stop`).
    fn scan(&self, hay: &[u8], stop: usize, pem: &mut Option<usize>, out: &mut Vec<u8>) -> usize {
        let marker = REDACTED.as_bytes();
        let mut copied = 0;
        let mut pos = 0;
        let mut literals = Cursor::new(self.literals.as_ref());
        let mut keys = Cursor::new(self.shapes.as_ref());
        while pos < stop {
            if let Some(budget) = *pem {
                out.extend_from_slice(&hay[copied..pos]);
                let (next, left) = shapes::pem_body(hay, pos, stop, budget, marker, out);
                (copied, pos, *pem) = (next, next, left);
                continue;
            }
            let literal = literals.next(hay, pos);
            let (start, end) = match (literal, keys.next(hay, pos)) {
                (None, None) => break,
                (Some(l), None) => (l.start(), l.end()),
                (Some(l), Some(s)) if l.start() <= s.start() => (l.start(), l.end()),
                (_, Some(s)) if s.start() >= stop => break,
                (l, Some(s)) => {
                    let kind = PREFIXES[s.pattern().as_usize()].1;
                    if kind == Shape::PemBegin {
                        match shapes::pem_label_end(hay, s.end()) {
                            // The BEGIN line stays; its body goes.
                            Some(end) => {
                                out.extend_from_slice(&hay[copied..end]);
                                (copied, pos) = (end, end);
                                *pem = Some(PEM_MAX_BYTES);
                            }
                            None => pos = s.start() + 1,
                        }
                        continue;
                    }
                    match kind.token_end(hay, s.start(), s.end()) {
                        // A known value starting inside the key goes whole.
                        Some(end) => (
                            s.start(),
                            l.filter(|l| l.start() < end)
                                .map_or(end, |l| end.max(l.end())),
                        ),
                        None => {
                            pos = s.start() + 1;
                            continue;
                        }
                    }
                }
            };
            if start >= stop {
                break;
            }
            out.extend_from_slice(&hay[copied..start]);
            out.extend_from_slice(marker);
            (copied, pos) = (end, end);
        }
        let consumed = stop.max(copied);
        out.extend_from_slice(&hay[copied..consumed]);
        consumed
    }
}

/// The next match of one automaton at or after a position that only moves
/// forward: searched again only once the position passed it.
struct Cursor<'a> {
    automaton: Option<&'a AhoCorasick>,
    found: Option<Match>,
    searched: bool,
}

impl<'a> Cursor<'a> {
    fn new(automaton: Option<&'a AhoCorasick>) -> Self {
        Self {
            automaton,
            found: None,
            searched: false,
        }
    }

    fn next(&mut self, hay: &[u8], pos: usize) -> Option<Match> {
        if !self.searched || self.found.is_some_and(|m| m.start() < pos) {
            self.found = self
                .automaton
                .and_then(|a| a.find(Input::new(hay).range(pos..)));
            self.searched = true;
        }
        self.found
    }
}

#[cfg(test)]
mod tests;
