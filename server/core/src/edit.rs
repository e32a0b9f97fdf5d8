//! Exact-match replacement for `edit_file`, shared by every [`Workspace`].
//! Pure: no I/O.
//!
//! The model names the text to replace by quoting it (`old_text`). It must be
//! found **exactly**, and exactly once unless `replace_all` is set. Nothing
//! is applied fuzzily: a near miss is an error whose message shows the model
//! what the file really holds, so its next call is exact.
//!
//! **Line endings.** The model cannot see line endings. When the
//! file has CRLF line endings and `old_text` only matches once its bare `\n`
//! are read as `\r\n`, the edit is applied with `old_text` and `new_text`
//! translated to CRLF; likewise `new_text` is translated when it is inserted
//! into a file whose every line ends in CRLF. [`Applied::crlf_translated`]
//! says when this happened.
//!
//! **Rein's own line numbers.** Files are shown to the model with line
//! numbers (`    20\t…`), and small models copy them into `old_text`.
//! When `old_text` is not found as written, every one of its lines carries
//! such a number, the numbers count up by one, and the text without them
//! is in the file starting at exactly the first number's line, the edit is
//! applied there (with `new_text`'s numbers removed too, if every line of it
//! has one). [`Applied::numbers_removed`] says so. Nothing else is
//! normalized.
//!
//! Line numbers are 1-based and count `\n` (a CRLF line is one line).
//!
//! [`Workspace`]: crate::Workspace

use std::borrow::Cow;
use std::fmt::Write as _;

/// At most this many lines of the file are quoted in a message.
const MAX_SHOWN_LINES: usize = 5;
/// A quoted line is cut after this many characters.
const MAX_SHOWN_CHARS: usize = 300;
/// At most this many line numbers are listed for an ambiguous match.
const MAX_LISTED_LINES: usize = 20;
/// Above this many lines, only windows sharing a token with the start of
/// `old_text` are scored when looking for the closest text.
const BIG_FILE_LINES: usize = 2_000;
/// At most this many windows, and (old line, file line) pairs, are
/// compared by edit distance when looking for the closest text; windows
/// whose first lines share the most tokens with `old_text`'s go first.
const MAX_WINDOWS: usize = 2_000;
const PAIR_BUDGET: usize = 20_000;
/// Lines are compared on at most this many characters.
const COMPARED_CHARS: usize = 120;
/// A window less similar than this is not worth showing.
const MIN_SIMILARITY: f64 = 0.4;
/// At most this many whitespace-insensitive candidates are checked.
const MAX_WS_CANDIDATES: usize = 1_000;

/// An edit that applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The whole new text.
    pub text: String,
    /// How many occurrences were replaced (1 unless `replace_all`).
    pub replacements: usize,
    /// The 1-based line of the first replacement in the new text.
    pub first_line: usize,
    /// The file uses CRLF line endings and the edit's `\n` were translated
    /// to `\r\n` (see the module docs).
    pub crlf_translated: bool,
    /// `old_text` quoted the file with Rein's line numbers, which were
    /// removed (see the module docs).
    pub numbers_removed: bool,
}

impl Applied {
    /// A remark for the model when the edit was applied other than
    /// literally (today: only the CRLF translation).
    pub fn note(&self, path: &str) -> Option<String> {
        let mut notes = Vec::new();
        if self.crlf_translated {
            notes.push(format!(
                "{path} uses CRLF line endings; the edit's LF line endings were converted \
                 to CRLF"
            ));
        }
        if self.numbers_removed {
            notes.push(
                "old_text included the line numbers Rein shows before each line; they are not \
                 part of the file and were removed (leave them out next time)"
                    .to_owned(),
            );
        }
        (!notes.is_empty()).then(|| notes.join("; "))
    }
}

/// Why an edit did not apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchError {
    /// `old_text` is empty.
    Empty,
    /// `old_text` equals `new_text`.
    NoChange,
    /// `old_text` is not in the file.
    NotFound {
        /// The text of the file most similar to `old_text`, as (1-based
        /// line, line text) pairs; at most 5 lines, maybe none.
        closest: Vec<(usize, String)>,
        /// A classic near miss, when detected.
        near_miss: Option<NearMiss>,
    },
    /// `old_text` is in the file more than once and `replace_all` is unset.
    Ambiguous {
        /// How many (possibly overlapping) occurrences.
        count: usize,
        /// The distinct 1-based lines where occurrences start, ascending.
        lines: Vec<usize>,
    },
}

/// A way `old_text` almost matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NearMiss {
    /// The file has `old_text` except for whitespace (indentation, tabs vs
    /// spaces, trailing spaces, spaces around tokens), starting at `line`;
    /// `count` such places. `closest` quotes the first one.
    Whitespace { line: usize, count: usize },
    /// `old_text` has CRLF line endings, the file LF, and it matches at
    /// `line` once read with LF. (Not applied: the model wrote the `\r`.)
    CrlfInOldText { line: usize },
}

impl MatchError {
    /// The message for the model; `path` is the workspace-relative path.
    pub fn message(&self, path: &str) -> String {
        match self {
            MatchError::Empty => "old_text is empty; to create a file use create_file, to insert, \
                 include the neighbouring line in old_text"
                .to_string(),
            MatchError::NoChange => {
                "old_text and new_text are identical; there is nothing to change".to_string()
            }
            MatchError::Ambiguous { count, lines } => {
                let mut listed: Vec<String> = lines
                    .iter()
                    .take(MAX_LISTED_LINES)
                    .map(usize::to_string)
                    .collect();
                if lines.len() > MAX_LISTED_LINES {
                    listed.push(format!("and {} more", lines.len() - MAX_LISTED_LINES));
                }
                let which = if lines.len() == 1 { "line" } else { "lines" };
                format!(
                    "old_text matches {count} places in {path} ({which} {}); include more \
                     surrounding lines to make it unique, or set replace_all",
                    listed.join(", ")
                )
            }
            MatchError::NotFound {
                closest,
                near_miss: Some(NearMiss::Whitespace { line, count }),
            } => {
                let mut msg = format!(
                    "old_text matches {} of {path} except for whitespace; copy its exact \
                     whitespace and indentation:\n{}",
                    line_span(*line, closest),
                    quote(closest)
                );
                if *count > 1 {
                    let _ = write!(
                        msg,
                        "\n(It matches {count} places except for whitespace; include more \
                         surrounding lines to make it unique.)"
                    );
                }
                msg
            }
            MatchError::NotFound {
                closest,
                near_miss: Some(NearMiss::CrlfInOldText { line }),
            } => format!(
                "old_text uses CRLF line endings but {path} uses LF; with LF line endings it \
                 matches {}. Send old_text and new_text with \\n line endings:\n{}",
                line_span(*line, closest),
                quote(closest)
            ),
            MatchError::NotFound {
                closest,
                near_miss: None,
            } => {
                if closest.is_empty() {
                    format!(
                        "old_text was not found in {path}, and no part of the file is similar; \
                         read the file again and copy old_text exactly"
                    )
                } else {
                    let first = closest[0].0;
                    format!(
                        "old_text was not found in {path}. The most similar text is at {}:\n{}\n\
                         Copy old_text exactly from the file (read it again if it may have \
                         changed).",
                        line_span(first, closest),
                        quote(closest)
                    )
                }
            }
        }
    }
}

/// `line 12` or `lines 12-14`, from the quoted lines (or `line` alone).
fn line_span(line: usize, shown: &[(usize, String)]) -> String {
    match shown.last() {
        Some((last, _)) if *last > line => format!("lines {line}-{last}"),
        _ => format!("line {line}"),
    }
}

fn quote(lines: &[(usize, String)]) -> String {
    let mut out = String::new();
    for (i, (n, text)) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = write!(out, "{n:>5}\t{text}");
    }
    out
}

/// Replaces `old_text` by `new_text` in `text`: the only occurrence, or
/// every non-overlapping one when `replace_all`.
pub fn apply(
    text: &str,
    old_text: &str,
    new_text: &str,
    replace_all: bool,
) -> Result<Applied, MatchError> {
    if old_text.is_empty() {
        return Err(MatchError::Empty);
    }
    if old_text == new_text {
        return Err(MatchError::NoChange);
    }

    let mut old = Cow::Borrowed(old_text);
    let mut new = Cow::Borrowed(new_text);
    let mut crlf_translated = false;
    let mut starts = occurrences(text, old_text);
    if starts.is_empty() && has_bare_lf(old_text) && text.contains("\r\n") {
        let translated = to_crlf(old_text);
        let found = occurrences(text, &translated);
        if !found.is_empty() {
            starts = found;
            old = Cow::Owned(translated);
            new = Cow::Owned(to_crlf(new_text));
            crlf_translated = true;
        }
    } else if !starts.is_empty() && has_bare_lf(new_text) && is_crlf_only(text) {
        new = Cow::Owned(to_crlf(new_text));
        crlf_translated = true;
    }

    let mut numbers_removed = false;
    if starts.is_empty()
        && let Some((first_line, bare_old)) = without_line_numbers(old_text)
    {
        let at_that_line: Vec<usize> = occurrences(text, &bare_old)
            .into_iter()
            .filter(|&at| line_at(text, at) == first_line)
            .collect();
        let bare_new =
            without_line_numbers(new_text).map_or_else(|| new_text.to_owned(), |(_, t)| t);
        if at_that_line.len() == 1 {
            if bare_old == bare_new {
                return Err(MatchError::NoChange);
            }
            starts = at_that_line;
            new = Cow::Owned(bare_new);
            old = Cow::Owned(bare_old);
            numbers_removed = true;
        }
    }

    let Some(&first) = starts.first() else {
        return Err(not_found(text, old_text));
    };
    if starts.len() > 1 && !replace_all && !numbers_removed {
        let mut lines = lines_of(text, &starts);
        lines.dedup();
        return Err(MatchError::Ambiguous {
            count: starts.len(),
            lines,
        });
    }

    let (result, replacements) = if replace_all && !numbers_removed {
        let n = text.matches(old.as_ref()).count();
        (text.replace(old.as_ref(), &new), n)
    } else {
        let mut s = String::with_capacity(text.len() - old.len() + new.len());
        s.push_str(&text[..first]);
        s.push_str(&new);
        s.push_str(&text[first + old.len()..]);
        (s, 1)
    };
    Ok(Applied {
        text: result,
        replacements,
        first_line: line_at(text, first),
        crlf_translated,
        numbers_removed,
    })
}

/// `text` without Rein's line numbers (`{n:>6}\t` before each line, as
/// `read_file` and the first message show files), and the first number:
/// only when every line has one and they count up by one.
fn without_line_numbers(text: &str) -> Option<(usize, String)> {
    let mut first = None;
    let mut bare = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let line = line.trim_start_matches(' ');
        // A blank line may come without the tab after its number.
        let (number, rest) = match line.split_once('\t') {
            Some(split) => split,
            None => (
                line.trim_end_matches(['\r', '\n']),
                &line[line.trim_end_matches(['\r', '\n']).len()..],
            ),
        };
        if number.is_empty() || number.len() > 9 || !number.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: usize = number.parse().ok()?;
        let start = *first.get_or_insert(n);
        if n != start + i {
            return None;
        }
        bare.push_str(rest);
    }
    Some((first?, bare))
}

/// Byte offsets of every occurrence of `pat`, overlapping ones included
/// (`aa` is twice in `aaa`: that is ambiguous).
fn occurrences(text: &str, pat: &str) -> Vec<usize> {
    occurrences_up_to(text, pat, usize::MAX)
}

/// The first `cap` of [`occurrences`].
fn occurrences_up_to(text: &str, pat: &str, cap: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut from = 0;
    while out.len() < cap
        && let Some(i) = text[from..].find(pat)
    {
        let at = from + i;
        out.push(at);
        // Step one character: `pat` is non-empty, so `at` starts one.
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// The 1-based line of byte offset `at`.
fn line_at(text: &str, at: usize) -> usize {
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The 1-based lines of ascending byte offsets, in one pass.
fn lines_of(text: &str, offsets: &[usize]) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut line = 1;
    let mut pos = 0;
    offsets
        .iter()
        .map(|&at| {
            line += bytes[pos..at].iter().filter(|&&b| b == b'\n').count();
            pos = at;
            line
        })
        .collect()
}

/// Whether `s` has a `\n` not preceded by `\r`.
fn has_bare_lf(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter()
        .enumerate()
        .any(|(i, &c)| c == b'\n' && (i == 0 || b[i - 1] != b'\r'))
}

/// Whether `s` has line breaks and every one is CRLF.
fn is_crlf_only(s: &str) -> bool {
    s.contains("\r\n") && !has_bare_lf(s)
}

/// `s` with every bare `\n` made `\r\n`.
fn to_crlf(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    let mut prev = '\0';
    for c in s.chars() {
        if c == '\n' && prev != '\r' {
            out.push('\r');
        }
        out.push(c);
        prev = c;
    }
    out
}

/// The lines of `s` split at `\n`, each without its `\r\n` / `\n`. A final
/// line terminator does not start another line.
fn split_lines(s: &str) -> Vec<&str> {
    let body = s.strip_suffix('\n').unwrap_or(s);
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

fn shown(line: &str) -> String {
    match line.char_indices().nth(MAX_SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// The `NotFound` error, with the best explanation we can find.
fn not_found(text: &str, old_text: &str) -> MatchError {
    let lines = split_lines(text);
    let quote_lines = |first: usize, last: usize| -> Vec<(usize, String)> {
        // `first`/`last` are 1-based, inclusive.
        let last = last.min(first + MAX_SHOWN_LINES - 1).min(lines.len());
        (first..=last)
            .map(|n| (n, shown(lines.get(n - 1).copied().unwrap_or(""))))
            .collect()
    };

    // CRLF in old_text, LF in the file.
    if old_text.contains("\r\n") && !text.contains("\r\n") {
        let lf = old_text.replace("\r\n", "\n");
        if let Some(at) = text.find(&lf) {
            let first = line_at(text, at);
            let last = line_at(text, at + lf.trim_end_matches('\n').len());
            return MatchError::NotFound {
                closest: quote_lines(first, last),
                near_miss: Some(NearMiss::CrlfInOldText { line: first }),
            };
        }
    }

    // The same text except for whitespace.
    let ws = whitespace_matches(text, old_text);
    if let Some(&(start, end)) = ws.first() {
        let first = line_at(text, start);
        let last = line_at(text, end);
        return MatchError::NotFound {
            closest: quote_lines(first, last),
            near_miss: Some(NearMiss::Whitespace {
                line: first,
                count: ws.len(),
            }),
        };
    }

    MatchError::NotFound {
        closest: closest_window(&lines, &split_lines(old_text)),
        near_miss: None,
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where `old_text` is in `text` when whitespace is ignored: (start, end)
/// byte ranges in `text` from the first to the last non-whitespace character.
/// A match must not start or end inside a word (`foo = 1` is not in
/// `barfoo=1`).
fn whitespace_matches(text: &str, old_text: &str) -> Vec<(usize, usize)> {
    let needle: String = old_text.chars().filter(|c| !c.is_whitespace()).collect();
    let (Some(needle_first), Some(needle_last)) = (needle.chars().next(), needle.chars().last())
    else {
        return Vec::new();
    };
    let hay: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let found = occurrences_up_to(&hay, &needle, MAX_WS_CANDIDATES);
    if found.is_empty() {
        return Vec::new();
    }

    // Map stripped offsets (each match's first and last character) to
    // offsets in `text`, in one forward pass.
    let last_len = needle_last.len_utf8();
    let mut targets: Vec<usize> = found
        .iter()
        .flat_map(|&s| [s, s + needle.len() - last_len])
        .collect();
    targets.sort_unstable();
    targets.dedup();
    let mut mapped = Vec::with_capacity(targets.len());
    let mut next = targets.iter().peekable();
    let mut stripped = 0;
    for (at, c) in text.char_indices() {
        if c.is_whitespace() {
            continue;
        }
        while next.peek().is_some_and(|&&t| t == stripped) {
            mapped.push((stripped, at));
            next.next();
        }
        stripped += c.len_utf8();
    }
    let original = |s: usize| {
        mapped
            .binary_search_by_key(&s, |&(k, _)| k)
            .ok()
            .map(|i| mapped[i].1)
    };

    found
        .iter()
        .filter_map(|&s| {
            let start = original(s)?;
            let end = original(s + needle.len() - last_len)? + last_len;
            let before = text[..start].chars().next_back();
            let after = text[end..].chars().next();
            let cuts_word = (is_word(needle_first) && before.is_some_and(is_word))
                || (is_word(needle_last) && after.is_some_and(is_word));
            (!cuts_word).then_some((start, end))
        })
        .collect()
}

/// Identifier-like tokens of a line (two characters or more), sorted.
fn tokens(line: &str) -> Vec<&str> {
    let mut t: Vec<&str> = line
        .split(|c: char| !is_word(c))
        .filter(|t| t.len() >= 2)
        .collect();
    t.sort_unstable();
    t.dedup();
    t
}

fn shared(a: &[&str], b: &[&str]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

fn prefix_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((cut, _)) => &s[..cut],
        None => s,
    }
}

/// Similarity of two lines in [0, 1], ignoring surrounding whitespace.
fn line_similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (a.trim(), b.trim());
    if a == b {
        return 1.0;
    }
    strsim::normalized_levenshtein(
        prefix_chars(a, COMPARED_CHARS),
        prefix_chars(b, COMPARED_CHARS),
    )
}

/// The window of `lines` (as many lines as `old`) most similar to `old`,
/// quoted: up to [`MAX_SHOWN_LINES`] lines, starting just before the first
/// line that differs when the window is longer than that.
fn closest_window(lines: &[&str], old: &[&str]) -> Vec<(usize, String)> {
    let n = old.len();
    let m = lines.len();
    if n == 0 || m == 0 {
        return Vec::new();
    }
    let windows = if m >= n { m - n + 1 } else { 1 };

    let mut candidates: Vec<usize> = (0..windows).collect();
    let budget = (PAIR_BUDGET / n).clamp(1, MAX_WINDOWS);
    if m > BIG_FILE_LINES || windows > budget {
        // Rank windows by the tokens their first lines share with the first
        // lines of old_text; in a big file, drop those sharing none.
        let anchor = n.min(3);
        let old_tokens: Vec<Vec<&str>> = old[..anchor].iter().map(|l| tokens(l)).collect();
        let line_tokens: Vec<Vec<&str>> = lines.iter().map(|l| tokens(l)).collect();
        let mut ranked: Vec<(usize, usize)> = candidates
            .iter()
            .map(|&i| {
                let score = (0..anchor)
                    .filter_map(|k| Some(shared(&old_tokens[k], line_tokens.get(i + k)?)))
                    .sum();
                (score, i)
            })
            .filter(|&(score, _)| score > 0 || m <= BIG_FILE_LINES)
            .collect();
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked.truncate(budget);
        candidates = ranked.into_iter().map(|(_, i)| i).collect();
        candidates.sort_unstable();
    }

    let mut best: Option<(f64, usize)> = None;
    for i in candidates {
        let total: f64 = (0..n)
            .map(|k| lines.get(i + k).map_or(0.0, |l| line_similarity(old[k], l)))
            .sum();
        let score = total / n as f64;
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, i));
        }
    }
    let Some((score, start)) = best else {
        return Vec::new();
    };
    if score < MIN_SIMILARITY {
        return Vec::new();
    }

    let len = n.min(m - start);
    let mut from = start;
    if len > MAX_SHOWN_LINES {
        let first_diff = (0..len)
            .find(|&k| old[k].trim() != lines[start + k].trim())
            .unwrap_or(0);
        from = start + first_diff.saturating_sub(1).min(len - MAX_SHOWN_LINES);
    }
    let to = (from + MAX_SHOWN_LINES).min(start + len);
    (from..to).map(|i| (i + 1, shown(lines[i]))).collect()
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    /// The outcome of an edit, rendered for snapshots: the new text (with
    /// line endings visible) or the message.
    fn render(text: &str, old: &str, new: &str, replace_all: bool) -> String {
        match apply(text, old, new, replace_all) {
            Ok(a) => format!(
                "applied {} at line {}{}\n{}",
                a.replacements,
                a.first_line,
                a.note("f.py")
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default(),
                a.text.replace('\r', "\\r")
            ),
            Err(e) => format!("error: {}", e.message("f.py")),
        }
    }

    const CART: &str = "\
def total(items):
    total = 0
    for item in items:
        total += item.price
    return total


def count(items):
    total = 0
    for item in items:
        total += 1
    return total
";

    /// Qwen2.5-Coder-1.5B copied the line numbers of the first message
    /// into old_text on every turn of a real run, and never fixed a thing.
    #[test]
    fn old_text_with_reins_line_numbers_applies_at_exactly_those_lines() {
        // `total = 0 / for item in items:` is at lines 2-3 and 9-10: the
        // numbers say which, and an exact match is needed there.
        let numbered = "     9\t    total = 0\n    10\t    for item in items:\n";
        let applied = apply(
            CART,
            numbered,
            "    total = 1\n    for item in items:\n",
            false,
        )
        .unwrap();
        assert!(applied.numbers_removed);
        assert_eq!(applied.first_line, 9);
        assert!(
            applied.text.contains("def count(items):\n    total = 1\n"),
            "{}",
            applied.text
        );
        assert!(
            applied
                .text
                .starts_with("def total(items):\n    total = 0\n")
        );
        assert!(applied.note("f.py").unwrap().contains("line numbers"));
        // new_text numbered too: both lose them.
        let applied = apply(
            CART,
            "     4\t        total += item.price\n",
            "     4\t        total += item.price * item.qty\n",
            false,
        )
        .unwrap();
        assert!(
            applied
                .text
                .contains("        total += item.price * item.qty\n")
        );
        assert!(!applied.text.contains('\t'));
        // A blank line written as its number alone.
        let applied = apply(
            CART,
            "     5\t    return total\n     6\n     7\n     8\tdef count(items):\n",
            "    return total\n\n\ndef count(items, kind):\n",
            false,
        )
        .unwrap();
        assert!(applied.text.contains("def count(items, kind):"));
        // Not applied: numbers that do not name the lines the text is at,
        // numbers that skip, a line without a number, or nothing to change.
        for (old, new, says) in [
            ("     3\t    total = 0\n", "    total = 1\n", "not found"),
            (
                "     9\t    total = 0\n    11\t    for item in items:\n",
                "x",
                "not found",
            ),
            (
                "     9\t    total = 0\n    for item in items:\n",
                "x",
                "not found",
            ),
            (
                "     9\t    total = 0\n",
                "     9\t    total = 0\n",
                "identical",
            ),
        ] {
            let error = apply(CART, old, new, false).unwrap_err().message("f.py");
            assert!(error.contains(says), "{old:?}: {error}");
        }
    }

    #[test]
    fn table() {
        let cases: &[(&str, &str, &str, &str, bool, Expect)] = &[
            (
                "unique",
                CART,
                "        total += item.price\n",
                "        total += item.price * item.qty\n",
                false,
                expect![[r#"
                    applied 1 at line 4
                    def total(items):
                        total = 0
                        for item in items:
                            total += item.price * item.qty
                        return total


                    def count(items):
                        total = 0
                        for item in items:
                            total += 1
                        return total
                "#]],
            ),
            (
                "empty",
                CART,
                "",
                "x",
                false,
                expect![[
                    r#"error: old_text is empty; to create a file use create_file, to insert, include the neighbouring line in old_text"#
                ]],
            ),
            (
                "no change",
                CART,
                "total",
                "total",
                false,
                expect![[
                    r#"error: old_text and new_text are identical; there is nothing to change"#
                ]],
            ),
            (
                "ambiguous",
                CART,
                "    total = 0\n",
                "    total = 0.0\n",
                false,
                expect![[
                    r#"error: old_text matches 2 places in f.py (lines 2, 9); include more surrounding lines to make it unique, or set replace_all"#
                ]],
            ),
            (
                "ambiguous on one line",
                "a = b + b\n",
                "b",
                "c",
                false,
                expect![[
                    r#"error: old_text matches 2 places in f.py (line 1); include more surrounding lines to make it unique, or set replace_all"#
                ]],
            ),
            (
                "overlapping occurrences are ambiguous",
                "aaa\n",
                "aa",
                "b",
                false,
                expect![[
                    r#"error: old_text matches 2 places in f.py (line 1); include more surrounding lines to make it unique, or set replace_all"#
                ]],
            ),
            (
                "replace all",
                CART,
                "    total = 0\n",
                "    total = 0.0\n",
                true,
                expect![[r#"
                    applied 2 at line 2
                    def total(items):
                        total = 0.0
                        for item in items:
                            total += item.price
                        return total


                    def count(items):
                        total = 0.0
                        for item in items:
                            total += 1
                        return total
                "#]],
            ),
            (
                "replace all, non-overlapping",
                "aaaa\n",
                "aa",
                "b",
                true,
                expect![[r#"
                    applied 2 at line 1
                    bb
                "#]],
            ),
            (
                "not found, closest lines",
                CART,
                "    for item in items:\n        total += item.cost\n",
                "x",
                false,
                expect![[r#"
                    error: old_text was not found in f.py. The most similar text is at lines 3-4:
                        3	    for item in items:
                        4	        total += item.price
                    Copy old_text exactly from the file (read it again if it may have changed)."#]],
            ),
            (
                "not found, nothing similar",
                CART,
                "class Basket:\n",
                "x",
                false,
                expect![[
                    r#"error: old_text was not found in f.py, and no part of the file is similar; read the file again and copy old_text exactly"#
                ]],
            ),
            (
                "whitespace: wrong indentation",
                CART,
                "  for item in items:\n      total += item.price\n",
                "x",
                false,
                expect![[r#"
                    error: old_text matches lines 3-4 of f.py except for whitespace; copy its exact whitespace and indentation:
                        3	    for item in items:
                        4	        total += item.price"#]],
            ),
            (
                "whitespace: tabs, in two places",
                CART,
                "\tfor item in items:\n",
                "x",
                false,
                expect![[r#"
                    error: old_text matches line 3 of f.py except for whitespace; copy its exact whitespace and indentation:
                        3	    for item in items:
                    (It matches 2 places except for whitespace; include more surrounding lines to make it unique.)"#]],
            ),
            (
                "whitespace inside a line",
                "x = f(a,b)\n",
                "f(a, b)",
                "g(a, b)",
                false,
                expect![[r#"
                    error: old_text matches line 1 of f.py except for whitespace; copy its exact whitespace and indentation:
                        1	x = f(a,b)"#]],
            ),
            (
                "no whitespace near miss inside a word",
                "barfoo=1\n",
                "foo = 1",
                "foo = 2",
                false,
                expect![
                    "error: old_text was not found in f.py, and no part of the file is similar; read the file again and copy old_text exactly"
                ],
            ),
            (
                "CRLF file, LF old_text: applied in CRLF",
                "a\r\nb\r\nc\r\n",
                "a\nb\n",
                "a\nB\nB2\n",
                false,
                expect![[r#"
                    applied 1 at line 1 (f.py uses CRLF line endings; the edit's LF line endings were converted to CRLF)
                    a\r
                    B\r
                    B2\r
                    c\r
                "#]],
            ),
            (
                "CRLF file, one-line old_text, multi-line new_text",
                "a\r\nb\r\n",
                "b",
                "b\nc",
                false,
                expect![[r#"
                    applied 1 at line 2 (f.py uses CRLF line endings; the edit's LF line endings were converted to CRLF)
                    a\r
                    b\r
                    c\r
                "#]],
            ),
            (
                "CRLF file, exact CRLF old_text",
                "a\r\nb\r\n",
                "a\r\nb",
                "x\r\ny",
                false,
                expect![[r#"
                    applied 1 at line 1
                    x\r
                    y\r
                "#]],
            ),
            (
                "mixed endings: an exact LF match is used as is",
                "a\r\nb\nc\n",
                "b\nc",
                "b\nC",
                false,
                expect![[r#"
                    applied 1 at line 2
                    a\r
                    b
                    C
                "#]],
            ),
            (
                "CRLF old_text, LF file",
                "a\nb\nc\n",
                "a\r\nb\r\n",
                "x",
                false,
                expect![[r#"
                    error: old_text uses CRLF line endings but f.py uses LF; with LF line endings it matches lines 1-2. Send old_text and new_text with \n line endings:
                        1	a
                        2	b"#]],
            ),
            (
                "non-ASCII text",
                "prix = 3 €\nnom = \"café\"\n",
                "\"café\"",
                "\"thé\"",
                false,
                expect![[r#"
                    applied 1 at line 2
                    prix = 3 €
                    nom = "thé"
                "#]],
            ),
            (
                "whitespace near miss with non-ASCII",
                "nom  =  \"café\"\n",
                "nom = \"café\"",
                "x",
                false,
                expect![[r#"
                    error: old_text matches line 1 of f.py except for whitespace; copy its exact whitespace and indentation:
                        1	nom  =  "café""#]],
            ),
        ];
        for (name, text, old, new, all, expected) in cases {
            let got = render(text, old, new, *all);
            eprintln!("case: {name}");
            expected.assert_eq(&got);
        }
    }

    #[test]
    fn first_line_counts_lines_before_the_match() {
        let a = apply("x\ny\nz\n", "z", "w", false).unwrap();
        assert_eq!(a.first_line, 3);
        let a = apply("x\ny\nz\n", "\nz", "\nw", false).unwrap();
        assert_eq!(a.first_line, 2);
    }

    #[test]
    fn long_old_text_shows_from_the_first_difference() {
        let text: String = (1..=30).map(|i| format!("line number {i}\n")).collect();
        let mut old: String = (10..=20).map(|i| format!("line number {i}\n")).collect();
        old = old.replace("line number 15", "line numbr 15");
        let err = apply(&text, &old, "x", false).unwrap_err();
        expect![[r#"
            old_text was not found in f.py. The most similar text is at lines 14-18:
               14	line number 14
               15	line number 15
               16	line number 16
               17	line number 17
               18	line number 18
            Copy old_text exactly from the file (read it again if it may have changed)."#]]
        .assert_eq(&err.message("f.py"));
    }

    #[test]
    fn big_files_only_score_windows_sharing_a_token() {
        // 50,000 lines; the near miss is at line 40,001.
        let mut text = String::new();
        for i in 0..50_000 {
            if i == 40_000 {
                text.push_str("    subtotal = compute_subtotal(cart, discount)\n");
            } else {
                text.push_str(&format!("    value_{i} = other_{i}\n"));
            }
        }
        let err = apply(
            &text,
            "    subtotal = compute_subtotal(cart, discounts)\n",
            "x",
            false,
        )
        .unwrap_err();
        let MatchError::NotFound { closest, .. } = err else {
            panic!("{err:?}");
        };
        assert_eq!(closest[0].0, 40_001);
    }

    #[test]
    fn long_ambiguous_lists_are_cut() {
        let text = "x\n".repeat(30);
        let err = apply(&text, "x", "y", false).unwrap_err();
        expect![[r#"old_text matches 30 places in f.py (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, and 10 more); include more surrounding lines to make it unique, or set replace_all"#]]
        .assert_eq(&err.message("f.py"));
    }

    #[test]
    fn whitespace_only_old_text_is_not_a_whitespace_near_miss() {
        let err = apply("a\nb\n", "\n\n\n", "x", false).unwrap_err();
        assert!(
            matches!(
                err,
                MatchError::NotFound {
                    near_miss: None,
                    ..
                }
            ),
            "{err:?}"
        );
    }
}
