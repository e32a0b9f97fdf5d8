//! The scanning that every language shares: [`Lines`], the line table
//! (lines end at `\n`, `\r\n` or `\r`, as in the editor), and [`lex`], a
//! tokenizer for the brace languages (Rust, JavaScript / TypeScript / JSX,
//! Go) that knows their strings and comments, so that a brace inside a
//! string or a comment never ends a test: Rust raw, byte and C strings, char
//! literals told apart from lifetimes, nested block comments; JS template
//! literals, JSX text, and regular expressions recognised by the token
//! before them (best effort); Go raw strings and runes. Also the small
//! helpers the language files use on tokens: [`match_close`], [`unescape`].

use super::model::Lang;

// ---------------------------------------------------------------------------
// Lines

pub(super) struct Lines {
    /// Byte offset of each line's start.
    pub(super) starts: Vec<usize>,
    len: usize,
}

impl Lines {
    pub(super) fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'\n' => starts.push(i + 1),
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(i + 1),
                _ => {}
            }
        }
        Self {
            starts,
            len: text.len(),
        }
    }

    pub(super) fn count(&self) -> usize {
        self.starts.len()
    }

    /// The line holding byte `offset`.
    pub(super) fn of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// A line's text without its line ending.
    pub(super) fn text<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let Some(&start) = self.starts.get(line) else {
            return "";
        };
        let end = self.starts.get(line + 1).copied().unwrap_or(self.len);
        text.get(start..end)
            .unwrap_or("")
            .trim_end_matches(['\n', '\r'])
    }
}

// ---------------------------------------------------------------------------
// A lexer for the brace languages

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Ident,
    Punct(u8),
    /// A string literal; `inner` is its contents.
    Str,
    /// A JS template literal (contents raw).
    Template,
    /// Numbers, char literals, regular expressions.
    Other,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Tok {
    pub(super) kind: Kind,
    pub(super) start: usize,
    pub(super) end: usize,
    /// The contents of a string literal.
    pub(super) inner: (usize, usize),
}

impl Tok {
    fn new(kind: Kind, start: usize, end: usize) -> Self {
        Self {
            kind,
            start,
            end,
            inner: (start, end),
        }
    }

    pub(super) fn text<'t>(&self, text: &'t str) -> &'t str {
        text.get(self.start..self.end).unwrap_or("")
    }

    pub(super) fn is_ident(&self, text: &str, word: &str) -> bool {
        self.kind == Kind::Ident && self.text(text) == word
    }
}

pub(super) fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

pub(super) fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Tokens of Rust, Go or JavaScript source; comments are dropped.
pub(super) fn lex(text: &str, lang: Lang) -> Vec<Tok> {
    let b = text.as_bytes();
    let n = b.len();
    let mut toks: Vec<Tok> = Vec::new();
    let mut i = 0;
    while i < n {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < n && b[i] != b'\n' && b[i] != b'\r' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = skip_block_comment(b, i, lang == Lang::Rust);
            continue;
        }
        let start = i;
        match (lang, c) {
            (Lang::Rust, b'r' | b'b' | b'c') => {
                if let Some(tok) = rust_prefixed_literal(b, i) {
                    i = tok.end;
                    toks.push(tok);
                    continue;
                }
            }
            (Lang::JavaScript, b'"' | b'\'') => {
                // A quote whose string does not end on its line is JSX
                // text (`<p>Don't</p>`), not a string.
                if let Some(end) = js_string_end(b, i) {
                    toks.push(string_tok(b, start, end));
                    i = end;
                    continue;
                }
            }
            (_, b'"') => {
                let end = skip_quoted(b, i, b'"', false);
                toks.push(string_tok(b, start, end));
                i = end;
                continue;
            }
            (Lang::JavaScript, b'`') => {
                let end = skip_template(b, i);
                let mut tok = Tok::new(Kind::Template, start, end);
                tok.inner = (start + 1, end.saturating_sub(1).max(start + 1));
                toks.push(tok);
                i = end;
                continue;
            }
            (Lang::Go, b'`') => {
                let end = b[i + 1..]
                    .iter()
                    .position(|&x| x == b'`')
                    .map_or(n, |p| i + 1 + p + 1);
                let mut tok = Tok::new(Kind::Str, start, end);
                tok.inner = (start + 1, end.saturating_sub(1).max(start + 1));
                toks.push(tok);
                i = end;
                continue;
            }
            (Lang::Go, b'\'') => {
                i = skip_quoted(b, i, b'\'', true);
                toks.push(Tok::new(Kind::Other, start, i));
                continue;
            }
            (Lang::Rust, b'\'') => {
                // A char literal, or a lifetime / label.
                match rust_char_end(b, i) {
                    Some(end) => {
                        toks.push(Tok::new(Kind::Other, start, end));
                        i = end;
                    }
                    None => {
                        toks.push(Tok::new(Kind::Punct(b'\''), start, start + 1));
                        i += 1;
                    }
                }
                continue;
            }
            (Lang::JavaScript, b'/') if regex_allowed(text, toks.last()) => {
                if let Some(end) = skip_regex(b, i) {
                    toks.push(Tok::new(Kind::Other, start, end));
                    i = end;
                    continue;
                }
            }
            _ => {}
        }
        if is_ident_start(c) || (lang == Lang::JavaScript && c == b'$') {
            while i < n && (is_ident_char(b[i]) || (lang == Lang::JavaScript && b[i] == b'$')) {
                i += 1;
            }
            toks.push(Tok::new(Kind::Ident, start, i));
        } else if c.is_ascii_digit() {
            while i < n && is_ident_char(b[i]) {
                i += 1;
            }
            toks.push(Tok::new(Kind::Other, start, i));
        } else {
            toks.push(Tok::new(Kind::Punct(c), start, start + 1));
            i += 1;
        }
    }
    toks
}

/// From `'` at `i`, the index after a Rust char literal (`'x'`, `'\n'`,
/// `'é'`); `None` for a lifetime or label (`'a`).
pub(super) fn rust_char_end(b: &[u8], i: usize) -> Option<usize> {
    let first = *b.get(i + 1)?;
    if first == b'\\' {
        return Some(skip_quoted(b, i, b'\'', true));
    }
    let width = match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    (b.get(i + 1 + width) == Some(&b'\'')).then_some(i + width + 2)
}

fn string_tok(b: &[u8], start: usize, end: usize) -> Tok {
    let mut tok = Tok::new(Kind::Str, start, end);
    let close = if end > start + 1 && b.get(end - 1) == b.get(start) {
        end - 1
    } else {
        end
    };
    tok.inner = (start + 1, close);
    tok
}

/// From `/*` at `i`, the index after the comment (Rust nests them).
fn skip_block_comment(b: &[u8], mut i: usize, nests: bool) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
            if !nests {
                depth = 1;
            }
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// From the opening quote at `i`, the index after the closing one. With
/// `stop_at_newline`, an unterminated literal ends at the line's end.
pub(super) fn skip_quoted(b: &[u8], i: usize, quote: u8, stop_at_newline: bool) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            x if x == quote => return j + 1,
            b'\n' | b'\r' if stop_at_newline => return j,
            _ => j += 1,
        }
    }
    b.len()
}

/// From a quote at `i`, the index after the JS string it starts, if it
/// ends on the same line.
fn js_string_end(b: &[u8], i: usize) -> Option<usize> {
    let quote = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' if b.get(j + 1) == Some(&b'\n') => j += 2,
            b'\\' => j += 2,
            b'\n' | b'\r' => return None,
            x if x == quote => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

/// `r"…"`, `r#"…"#`, `b"…"`, `br#"…"#`, `c"…"`, `b'x'`, raw identifiers.
fn rust_prefixed_literal(b: &[u8], i: usize) -> Option<Tok> {
    let mut j = i;
    if matches!(b[j], b'b' | b'c') {
        j += 1;
    }
    if b.get(j) == Some(&b'r') {
        let mut k = j + 1;
        let mut hashes = 0;
        while b.get(k) == Some(&b'#') {
            hashes += 1;
            k += 1;
        }
        if b.get(k) == Some(&b'"') {
            // Raw string: ends at `"` followed by as many `#`.
            let mut m = k + 1;
            while m < b.len() {
                if b[m] == b'"'
                    && b[m + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&x| x == b'#')
                        .count()
                        == hashes
                {
                    let end = m + 1 + hashes;
                    let mut tok = Tok::new(Kind::Str, i, end);
                    tok.inner = (k + 1, m);
                    return Some(tok);
                }
                m += 1;
            }
            let mut tok = Tok::new(Kind::Str, i, b.len());
            tok.inner = (k + 1, b.len());
            return Some(tok);
        }
        if j == i && hashes == 1 && b.get(k).is_some_and(|&x| is_ident_start(x)) {
            // `r#ident`
            let mut end = k;
            while end < b.len() && is_ident_char(b[end]) {
                end += 1;
            }
            return Some(Tok::new(Kind::Ident, i, end));
        }
        return None;
    }
    if j > i {
        match b.get(j) {
            Some(b'"') => {
                let end = skip_quoted(b, j, b'"', false);
                return Some(string_tok_at(b, i, j, end));
            }
            Some(b'\'') if b[i] == b'b' => {
                let end = skip_quoted(b, j, b'\'', true);
                return Some(Tok::new(Kind::Other, i, end));
            }
            _ => {}
        }
    }
    None
}

fn string_tok_at(b: &[u8], start: usize, quote: usize, end: usize) -> Tok {
    let mut tok = string_tok(b, quote, end);
    tok.start = start;
    tok
}

/// A `/` starts a regular expression after an operator, an opening
/// bracket, a keyword, or at the start.
fn regex_allowed(text: &str, prev: Option<&Tok>) -> bool {
    match prev {
        None => true,
        Some(t) => match t.kind {
            Kind::Punct(p) => b"(,=:[!&|?{};+-*%<>~^".contains(&p),
            Kind::Ident => matches!(
                t.text(text),
                "return"
                    | "typeof"
                    | "case"
                    | "do"
                    | "else"
                    | "in"
                    | "of"
                    | "new"
                    | "delete"
                    | "void"
                    | "throw"
                    | "instanceof"
                    | "yield"
                    | "await"
            ),
            _ => false,
        },
    }
}

/// From `/` at `i`, the index after a regular expression literal and its
/// flags, if one ends on this line.
fn skip_regex(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let mut in_class = false;
    if matches!(b.get(j), Some(b'/' | b'*')) {
        return None;
    }
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'\n' | b'\r' => return None,
            b'[' => {
                in_class = true;
                j += 1;
            }
            b']' => {
                in_class = false;
                j += 1;
            }
            b'/' if !in_class => {
                j += 1;
                while j < b.len() && is_ident_char(b[j]) {
                    j += 1;
                }
                return Some(j);
            }
            _ => j += 1,
        }
    }
    None
}

/// From a backtick at `i`, the index after the template literal.
fn skip_template(b: &[u8], i: usize) -> usize {
    skip_template_at(b, i, 0)
}

/// How deeply template literals and `${…}` may nest before the rest of the
/// file is taken as one literal.
const MAX_TEMPLATE_NESTING: usize = 64;

fn skip_template_at(b: &[u8], i: usize, nesting: usize) -> usize {
    if nesting > MAX_TEMPLATE_NESTING {
        return b.len();
    }
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'`' => return j + 1,
            b'$' if b.get(j + 1) == Some(&b'{') => j = skip_js_braces(b, j + 1, nesting + 1),
            _ => j += 1,
        }
    }
    b.len()
}

/// From `{` at `i`, the index after its matching `}` in JS code.
fn skip_js_braces(b: &[u8], i: usize, nesting: usize) -> usize {
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        match b[j] {
            b'{' => {
                depth += 1;
                j += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                j += 1;
                if depth == 0 {
                    return j;
                }
            }
            q @ (b'"' | b'\'') => j = skip_quoted(b, j, q, true),
            b'`' => j = skip_template_at(b, j, nesting + 1),
            b'/' if b.get(j + 1) == Some(&b'/') => {
                while j < b.len() && b[j] != b'\n' {
                    j += 1;
                }
            }
            b'/' if b.get(j + 1) == Some(&b'*') => j = skip_block_comment(b, j, false),
            _ => j += 1,
        }
    }
    b.len()
}

/// The index of the token closing the bracket at `open`; the last token
/// when the file ends first (a test being typed).
pub(super) fn match_close(toks: &[Tok], open: usize, left: u8, right: u8) -> usize {
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t.kind {
            Kind::Punct(p) if p == left => depth += 1,
            Kind::Punct(p) if p == right => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    toks.len().saturating_sub(1)
}

/// Decodes the common escapes of a string literal's contents.
pub(super) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::testfind::{tests::show, tests_in};
    use pretty_assertions::assert_eq;

    #[test]
    fn line_endings() {
        let lines = Lines::new("a\r\nb\rc\n");
        assert_eq!(lines.count(), 4);
        assert_eq!(lines.text("a\r\nb\rc\n", 1), "b");
        assert_eq!(lines.of(3), 1);
    }

    #[test]
    fn rust_lexing_edge_cases() {
        let src = r####"
#[test]
fn strings() {
    let a = "}";
    let b = r#"}"{"#;
    let c = '}';
    let d = b'{';
    let e: &'static str = "\"}";
    /* } /* nested } */ } */
    // }
    let f = br##"}"#}"##;
}

#[test]
fn after() {}
"####;
        assert_eq!(
            show(src, Lang::Rust),
            ["strings 1..12 @2", "after 13..15 @14"]
        );
    }

    #[test]
    fn js_regex_and_templates() {
        let src = "test('a', () => {\n  const r = /\\)/;\n  const s = `${')'}`;\n  expect(1 / 2).toBe(0.5);\n});\ntest(`b`, () => {});\n";
        assert_eq!(show(src, Lang::JavaScript), ["a 0..5 @0", "b 5..6 @5"]);
    }

    #[test]
    fn jsx_text_with_apostrophes() {
        let src = "it('renders', () => {\n  render(<p>Don't panic</p>);\n  expect(1).toBe(1);\n});\nit(\"second\", () => {});\n";
        assert_eq!(
            show(src, Lang::JavaScript),
            ["renders 0..4 @0", "second 4..5 @4"]
        );
    }

    #[test]
    fn deeply_nested_templates_do_not_overflow() {
        let src = format!("test(`{}`, () => {{}})", "${`".repeat(20_000));
        let _ = tests_in(&src, Lang::JavaScript);
    }
}
