//! Finding test functions in source text (no I/O), for the editor's
//! "Fix test X" code action at the cursor and for noticing when a test's
//! assertions are weakened.
//!
//! Each language has a small lexer that knows its strings and comments, so
//! a brace inside a string or a comment never ends a test:
//!
//! - **Rust**: a `fn` (any qualifiers: `pub`, `async`, `unsafe`, …) with an
//!   attribute whose last path segment is `test`, `rstest`, `test_case`,
//!   `wasm_bindgen_test` or `quickcheck` (`#[test]`, `#[tokio::test(…)]`,
//!   `#[rstest]`), other attributes before or after it; the span starts at
//!   its first attribute. The body is found by brace matching that skips
//!   strings (also raw `r#"…"#`, byte and C strings), char literals
//!   (lifetimes are told apart) and nested block comments. `qualified` is
//!   the enclosing inline `mod`s and the name, `tests::total`.
//! - **Python**: `def test…` / `async def test…` at module level (also
//!   inside `if` blocks) or as a method of a test class: a class whose name
//!   starts with `Test` or whose bases mention `Test` (`unittest.TestCase`,
//!   `APITestCase`), nested classes too; never a function inside a
//!   function. Decorators start the span; the body is the following lines
//!   indented deeper (logical lines: brackets, backslashes and triple-quoted
//!   strings continue a line whatever their indentation), up to its last
//!   code or comment line. `qualified` is `TestCart.test_total`.
//! - **JavaScript / TypeScript / JSX**: calls of `it`, `test`, `specify`
//!   (and `xit`, `fit`, `xtest`) with modifiers (`.only`, `.skip`, `.todo`,
//!   `.concurrent`, `.failing`, `.each(table)` / `` .each`table` ``, …),
//!   whose first argument is a string or template literal (the name). The
//!   span runs to the call's closing parenthesis. Enclosing `describe`,
//!   `context`, `suite` (and Playwright's `test.describe`) calls give
//!   `qualified`: `Cart > adds items`. Regular expressions are recognised
//!   by the token before them, best effort.
//! - **Go**: `func TestX(t *testing.T)` (not `TestMain`), and methods
//!   `func (s *Suite) TestX()` of testify-style suites (`qualified`
//!   `Suite.TestX`).
//!
//! Lines are 0-based and end at `\n`, `\r\n` or `\r`, as in the editor.

use std::ops::Range;

/// A language whose tests can be found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    Rust,
    Python,
    /// Also TypeScript and JSX.
    JavaScript,
    Go,
}

/// The language of a file, by its extension.
pub fn lang_for_path(path: &str) -> Option<Lang> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (_, ext) = name.rsplit_once('.')?;
    match ext {
        "rs" => Some(Lang::Rust),
        "py" => Some(Lang::Python),
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Some(Lang::JavaScript),
        "go" => Some(Lang::Go),
        _ => None,
    }
}

/// One test function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TestFn {
    /// `test_total`, `TestTotal`, `adds items` (JS: the literal's text).
    pub name: String,
    /// With its enclosing modules, classes or `describe`s: `tests::total`,
    /// `TestCart.test_total`, `Cart > adds items`, `Suite.TestTotal`.
    pub qualified: String,
    /// 0-based lines of the whole test, attributes and decorators
    /// included; the end is exclusive.
    pub span: Range<usize>,
    /// 0-based line of the name.
    pub name_line: usize,
}

/// The lines of the test `name` (decorators and attributes included),
/// trailing spaces ignored: what a fix-test task must leave as it is.
pub fn test_lines(text: &str, lang: Lang, name: &str) -> Option<Vec<String>> {
    let test = find(text, lang, name)?;
    Some(
        text.lines()
            .skip(test.span.start)
            .take(test.span.len())
            .map(|l| l.trim_end().to_owned())
            .collect(),
    )
}

/// Every test in `text`, in source order.
pub fn tests_in(text: &str, lang: Lang) -> Vec<TestFn> {
    let lines = Lines::new(text);
    let mut tests = match lang {
        Lang::Rust => rust_tests(text, &lines),
        Lang::Python => python_tests(text, &lines),
        Lang::JavaScript => js_tests(text, &lines),
        Lang::Go => go_tests(text, &lines),
    };
    tests.sort_by_key(|t| (t.span.start, std::cmp::Reverse(t.span.end)));
    tests
}

/// The innermost test whose span contains `line`.
pub fn test_at(text: &str, lang: Lang, line: usize) -> Option<TestFn> {
    tests_in(text, lang)
        .into_iter()
        .filter(|t| t.span.contains(&line))
        .max_by_key(|t| (t.span.start, std::cmp::Reverse(t.span.end)))
}

/// A test by name or qualified name. Exact matches first (qualified, then
/// name); then names as test runners print them: a qualified name after a
/// module or file prefix (`cart::tests::total`,
/// `tests/test_cart.py::TestCart::test_total`), a pytest parameter suffix
/// (`test_total[2-3]`), a Go subtest (`TestTotal/empty`), Jest's `›`.
pub fn find(text: &str, lang: Lang, name: &str) -> Option<TestFn> {
    let tests = tests_in(text, lang);
    let name = name.trim();
    if let Some(t) = tests.iter().find(|t| t.qualified == name) {
        return Some(t.clone());
    }
    if let Some(t) = tests.iter().find(|t| t.name == name) {
        return Some(t.clone());
    }
    let query = normalize_query(name, lang);
    let separators: &[&str] = match lang {
        Lang::Rust => &["::"],
        Lang::Python => &["."],
        Lang::JavaScript => &[" > "],
        Lang::Go => &["/", "."],
    };
    tests
        .iter()
        .find(|t| {
            query == t.qualified
                || query == t.name
                || separators
                    .iter()
                    .any(|sep| query.ends_with(&format!("{sep}{}", t.qualified)))
        })
        .cloned()
}

fn normalize_query(name: &str, lang: Lang) -> String {
    let mut q = name.trim_end_matches("()").to_owned();
    match lang {
        Lang::Python => {
            if q.ends_with(']')
                && let Some(open) = q.find('[')
            {
                q.truncate(open);
            }
            q = q.replace("::", ".");
        }
        Lang::JavaScript => q = q.replace(" › ", " > "),
        Lang::Go => {
            if let Some((test, _subtest)) = q.split_once('/') {
                q = test.to_owned();
            }
        }
        Lang::Rust => {}
    }
    q
}

/// The assertion lines of `test`, trimmed, in order. A statement spread over
/// several lines contributes all of them.
///
/// - Rust: `assert*!`, `debug_assert*!`, `prop_assert*!`, `panic!` (any
///   macro path), expect-test's `.assert_eq(…)`/`.assert_debug_eq(…)`,
///   and `#[should_panic]`;
/// - Python: `assert …`, `self.assert…(`, `self.fail(`, `pytest.raises(`,
///   `pytest.warns(`, `pytest.fail(`;
/// - JavaScript: `expect(`/`expect.`, `assert(`/`assert.`;
/// - Go: `t.Error…(`, `t.Fatal…(`, `t.Fail…(` on any receiver (not
///   `err.Error()`), with the `if …{` line right above; testify's
///   `assert.`/`require.`.
pub fn assertions(text: &str, lang: Lang, test: &TestFn) -> Vec<String> {
    let lines = Lines::new(text);
    let end = test.span.end.min(lines.count());
    let mut picked: Vec<usize> = Vec::new();
    if lang == Lang::Python {
        for logical in python_logical_lines(text, &lines) {
            if logical.first < test.span.start || logical.first >= end || logical.blank {
                continue;
            }
            if python_is_assertion(lines.text(text, logical.first)) {
                picked.extend(logical.first..=logical.last.min(end.saturating_sub(1)));
            }
        }
    } else {
        let mut line = test.span.start;
        while line < end {
            let code = lines.text(text, line);
            if !is_assertion_line(code, lang) {
                line += 1;
                continue;
            }
            if lang == Lang::Go && is_go_failure(code) {
                let above = (test.span.start..line)
                    .rev()
                    .find(|&l| !lines.text(text, l).trim().is_empty());
                if let Some(above) = above {
                    let t = lines.text(text, above).trim();
                    if t.starts_with("if ") && t.ends_with('{') && !picked.contains(&above) {
                        picked.push(above);
                    }
                }
            }
            let last = statement_end(text, &lines, lang, line, end);
            picked.extend(line..=last);
            line = last + 1;
        }
    }
    picked
        .into_iter()
        .map(|l| lines.text(text, l).trim().to_owned())
        .collect()
}

// ---------------------------------------------------------------------------
// Lines

struct Lines {
    /// Byte offset of each line's start.
    starts: Vec<usize>,
    len: usize,
}

impl Lines {
    fn new(text: &str) -> Self {
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

    fn count(&self) -> usize {
        self.starts.len()
    }

    /// The line holding byte `offset`.
    fn of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// A line's text without its line ending.
    fn text<'t>(&self, text: &'t str, line: usize) -> &'t str {
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
enum Kind {
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
struct Tok {
    kind: Kind,
    start: usize,
    end: usize,
    /// The contents of a string literal.
    inner: (usize, usize),
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

    fn text<'t>(&self, text: &'t str) -> &'t str {
        text.get(self.start..self.end).unwrap_or("")
    }

    fn is_ident(&self, text: &str, word: &str) -> bool {
        self.kind == Kind::Ident && self.text(text) == word
    }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Tokens of Rust, Go or JavaScript source; comments are dropped.
fn lex(text: &str, lang: Lang) -> Vec<Tok> {
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
fn rust_char_end(b: &[u8], i: usize) -> Option<usize> {
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
fn skip_quoted(b: &[u8], i: usize, quote: u8, stop_at_newline: bool) -> usize {
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
fn match_close(toks: &[Tok], open: usize, left: u8, right: u8) -> usize {
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
fn unescape(raw: &str) -> String {
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

// ---------------------------------------------------------------------------
// Rust

const RUST_TEST_ATTRIBUTES: &[&str] = &[
    "test",
    "rstest",
    "test_case",
    "wasm_bindgen_test",
    "quickcheck",
];

fn rust_tests(text: &str, lines: &Lines) -> Vec<TestFn> {
    let toks = lex(text, Lang::Rust);
    let mut out = Vec::new();
    // Enclosing braces: `Some(name)` for a `mod name {`.
    let mut scopes: Vec<Option<String>> = Vec::new();
    let mut pending_mod: Option<String> = None;
    // First line of the attributes before the next item, and whether one marks a test.
    let mut attrs: Option<(usize, bool)> = None;
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        match t.kind {
            Kind::Punct(b'#') => {
                let inner = matches!(toks.get(i + 1).map(|t| t.kind), Some(Kind::Punct(b'!')));
                let open = if inner { i + 2 } else { i + 1 };
                if matches!(toks.get(open).map(|t| t.kind), Some(Kind::Punct(b'['))) {
                    let close = match_close(&toks, open, b'[', b']');
                    if !inner {
                        let inside = toks.get(open + 1..close).unwrap_or_default();
                        let is_test = rust_attribute_is_test(text, inside);
                        let first = attrs.map_or(lines.of(t.start), |(line, _)| line);
                        let any_test = attrs.is_some_and(|(_, test)| test) || is_test;
                        attrs = Some((first, any_test));
                    }
                    i = close + 1;
                    continue;
                }
            }
            Kind::Ident if t.is_ident(text, "mod") => {
                if let (Some(name), Some(next)) = (toks.get(i + 1), toks.get(i + 2))
                    && name.kind == Kind::Ident
                    && next.kind == Kind::Punct(b'{')
                {
                    pending_mod = Some(name.text(text).to_owned());
                }
                attrs = None;
            }
            Kind::Ident if t.is_ident(text, "fn") => {
                let test_attrs = attrs.take().filter(|(_, test)| *test);
                if let (Some((first_line, _)), Some(name)) = (test_attrs, toks.get(i + 1))
                    && name.kind == Kind::Ident
                    && let Some(open) = rust_body_open(&toks, i + 2)
                {
                    let close = match_close(&toks, open, b'{', b'}');
                    let fn_name = name.text(text).to_owned();
                    let mut path: Vec<&str> = scopes.iter().flatten().map(String::as_str).collect();
                    path.push(&fn_name);
                    out.push(TestFn {
                        qualified: path.join("::"),
                        name: fn_name.clone(),
                        span: first_line..lines.of(toks[close].start) + 1,
                        name_line: lines.of(name.start),
                    });
                    i = open;
                    continue;
                }
            }
            Kind::Punct(b'{') => {
                scopes.push(pending_mod.take());
                attrs = None;
            }
            Kind::Punct(b'}') => {
                scopes.pop();
                attrs = None;
            }
            Kind::Punct(b';') => {
                pending_mod = None;
                attrs = None;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether the tokens inside `#[…]` name a test attribute.
fn rust_attribute_is_test(text: &str, inside: &[Tok]) -> bool {
    let path: Vec<&str> = inside
        .iter()
        .take_while(|t| t.kind == Kind::Ident || t.kind == Kind::Punct(b':'))
        .filter(|t| t.kind == Kind::Ident)
        .map(|t| t.text(text))
        .collect();
    path.last()
        .is_some_and(|last| RUST_TEST_ATTRIBUTES.contains(last))
}

/// After a fn's name: the index of its body's `{`, or `None` when the
/// signature ends with `;`.
fn rust_body_open(toks: &[Tok], from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate().skip(from) {
        match t.kind {
            Kind::Punct(b'(' | b'[') => depth += 1,
            Kind::Punct(b')' | b']') => depth -= 1,
            Kind::Punct(b'{') if depth <= 0 => return Some(i),
            Kind::Punct(b';') if depth <= 0 => return None,
            _ => {}
        }
    }
    None
}

// ---------------------------------------------------------------------------
// Go

fn go_tests(text: &str, lines: &Lines) -> Vec<TestFn> {
    let toks = lex(text, Lang::Go);
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        match t.kind {
            Kind::Punct(b'{') => depth += 1,
            Kind::Punct(b'}') => depth = depth.saturating_sub(1),
            Kind::Ident if depth == 0 && t.is_ident(text, "func") => {
                if let Some((test, open)) = go_test_at(text, &toks, i, lines) {
                    out.push(test);
                    // Skip the body: tests do not nest.
                    i = match_close(&toks, open, b'{', b'}') + 1;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// A test function starting at the `func` token `i`, and its body's `{`.
fn go_test_at(text: &str, toks: &[Tok], i: usize, lines: &Lines) -> Option<(TestFn, usize)> {
    let mut j = i + 1;
    let mut receiver = None;
    if toks.get(j)?.kind == Kind::Punct(b'(') {
        let close = match_close(toks, j, b'(', b')');
        receiver = toks
            .get(j + 1..close)
            .unwrap_or_default()
            .iter()
            .rev()
            .find(|t| t.kind == Kind::Ident)
            .map(|t| t.text(text).to_owned());
        j = close + 1;
    }
    let name_tok = toks.get(j)?;
    if name_tok.kind != Kind::Ident {
        return None;
    }
    let name = name_tok.text(text);
    let rest = name.strip_prefix("Test")?;
    if rest.starts_with(|c: char| c.is_lowercase()) || name == "TestMain" {
        return None;
    }
    let params_open = j + 1;
    if toks.get(params_open)?.kind != Kind::Punct(b'(') {
        return None;
    }
    let params_close = match_close(toks, params_open, b'(', b')');
    if receiver.is_none() {
        // `t *testing.T` (or a dot-imported `*T`), not `*testing.B`, `M`, `F`.
        let params: Vec<&str> = toks
            .get(params_open + 1..params_close)
            .unwrap_or_default()
            .iter()
            .map(|t| t.text(text))
            .collect();
        if params.last() != Some(&"T") && params.last() != Some(&"TB") {
            return None;
        }
    }
    let open = (params_close + 1..toks.len()).find(|&k| toks[k].kind == Kind::Punct(b'{'))?;
    let close = match_close(toks, open, b'{', b'}');
    let qualified = match &receiver {
        Some(recv) => format!("{recv}.{name}"),
        None => name.to_owned(),
    };
    Some((
        TestFn {
            name: name.to_owned(),
            qualified,
            span: lines.of(toks[i].start)..lines.of(toks[close].start) + 1,
            name_line: lines.of(name_tok.start),
        },
        open,
    ))
}

// ---------------------------------------------------------------------------
// JavaScript / TypeScript

const JS_TESTS: &[&str] = &["it", "test", "specify", "xit", "fit", "xtest", "xspecify"];
const JS_GROUPS: &[&str] = &[
    "describe",
    "context",
    "suite",
    "xdescribe",
    "fdescribe",
    "xcontext",
];
const JS_MODIFIERS: &[&str] = &[
    "only",
    "skip",
    "todo",
    "concurrent",
    "failing",
    "sequential",
    "fails",
    "each",
    "for",
    "skipIf",
    "runIf",
    "shuffle",
    "serial",
    "parallel",
    "fixme",
    "slow",
    "fail",
    "describe",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum JsKind {
    Test,
    Group,
}

fn js_tests(text: &str, lines: &Lines) -> Vec<TestFn> {
    let toks = lex(text, Lang::JavaScript);
    let mut out = Vec::new();
    let mut groups: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        while groups.last().is_some_and(|(_, close)| *close < i) {
            groups.pop();
        }
        let Some(call) = js_call_at(text, &toks, i) else {
            i += 1;
            continue;
        };
        let name_tok = toks[call.open + 1];
        let raw = text.get(name_tok.inner.0..name_tok.inner.1).unwrap_or("");
        let name = if name_tok.kind == Kind::Template {
            raw.to_owned()
        } else {
            unescape(raw)
        };
        match call.kind {
            JsKind::Group => groups.push((name, call.close)),
            JsKind::Test => {
                let mut path: Vec<&str> = groups.iter().map(|(n, _)| n.as_str()).collect();
                path.push(&name);
                out.push(TestFn {
                    qualified: path.join(" > "),
                    span: lines.of(toks[i].start)..lines.of(toks[call.close].start) + 1,
                    name_line: lines.of(name_tok.start),
                    name,
                });
            }
        }
        // Look inside the arguments for nested calls.
        i = call.open + 1;
    }
    out
}

struct JsCall {
    kind: JsKind,
    /// The `(` of the call with the name argument, and its `)`.
    open: usize,
    close: usize,
}

fn js_call_at(text: &str, toks: &[Tok], i: usize) -> Option<JsCall> {
    let t = toks[i];
    if t.kind != Kind::Ident {
        return None;
    }
    let word = t.text(text);
    let mut kind = if JS_TESTS.contains(&word) {
        JsKind::Test
    } else if JS_GROUPS.contains(&word) {
        JsKind::Group
    } else {
        return None;
    };
    if let Some(prev) = i.checked_sub(1).map(|p| toks[p])
        && (prev.kind == Kind::Punct(b'.') || prev.is_ident(text, "function"))
    {
        return None;
    }
    let mut j = i + 1;
    while toks.get(j)?.kind == Kind::Punct(b'.') {
        let modifier = toks.get(j + 1)?;
        let m = modifier.text(text);
        if modifier.kind != Kind::Ident || !JS_MODIFIERS.contains(&m) {
            return None;
        }
        if m == "describe" {
            kind = JsKind::Group;
        }
        j += 2;
        if matches!(m, "each" | "for" | "skipIf" | "runIf") {
            match toks.get(j)?.kind {
                Kind::Punct(b'(') => j = match_close(toks, j, b'(', b')') + 1,
                Kind::Template => j += 1,
                _ => return None,
            }
        }
    }
    if toks.get(j)?.kind != Kind::Punct(b'(') {
        return None;
    }
    let name = toks.get(j + 1)?;
    if !matches!(name.kind, Kind::Str | Kind::Template) {
        return None;
    }
    Some(JsCall {
        kind,
        open: j,
        close: match_close(toks, j, b'(', b')'),
    })
}

// ---------------------------------------------------------------------------
// Python

#[derive(Clone, Copy, Debug)]
struct LogicalLine {
    first: usize,
    last: usize,
    indent: usize,
    /// Only blanks and comments.
    blank: bool,
    /// A comment and nothing else.
    comment: bool,
}

fn python_logical_lines(text: &str, lines: &Lines) -> Vec<LogicalLine> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    // (quote, triple)
    let mut in_str: Option<(u8, bool)> = None;
    let mut current: Option<LogicalLine> = None;
    for line in 0..lines.count() {
        let s = lines.text(text, line).as_bytes();
        let cur = current.get_or_insert(LogicalLine {
            first: line,
            last: line,
            indent: indentation(s),
            blank: true,
            comment: false,
        });
        cur.last = line;
        let mut j = 0;
        let mut continued = false;
        while j < s.len() {
            let c = s[j];
            if let Some((quote, triple)) = in_str {
                if c == b'\\' {
                    j += 2;
                    continue;
                }
                if c == quote {
                    if !triple {
                        in_str = None;
                    } else if s.get(j + 1) == Some(&quote) && s.get(j + 2) == Some(&quote) {
                        in_str = None;
                        j += 3;
                        continue;
                    }
                }
                j += 1;
                continue;
            }
            match c {
                b'#' => {
                    if cur.blank {
                        cur.comment = true;
                    }
                    break;
                }
                b'\'' | b'"' => {
                    cur.blank = false;
                    cur.comment = false;
                    let triple = s.get(j + 1) == Some(&c) && s.get(j + 2) == Some(&c);
                    in_str = Some((c, triple));
                    j += if triple { 3 } else { 1 };
                    continue;
                }
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                b'\\' if j + 1 == s.len() => continued = true,
                _ => {}
            }
            if !c.is_ascii_whitespace() {
                cur.blank = false;
                cur.comment = false;
            }
            j += 1;
        }
        if matches!(in_str, Some((_, false))) {
            // An unterminated one-line string ends with its line.
            in_str = None;
        }
        if in_str.is_none() && depth == 0 && !continued {
            out.extend(current.take());
        }
    }
    out.extend(current);
    out
}

fn indentation(line: &[u8]) -> usize {
    let mut col = 0;
    for &b in line {
        match b {
            b' ' => col += 1,
            b'\t' => col = (col / 8 + 1) * 8,
            b'\x0c' => col = 0,
            _ => break,
        }
    }
    col
}

enum PyScope {
    Class { name: String, test: bool },
    Def,
}

fn python_tests(text: &str, lines: &Lines) -> Vec<TestFn> {
    let logical = python_logical_lines(text, lines);
    let mut out = Vec::new();
    let mut stack: Vec<(usize, PyScope)> = Vec::new();
    let mut decorators: Option<usize> = None;
    for (k, l) in logical.iter().enumerate() {
        if l.blank {
            continue;
        }
        while stack.last().is_some_and(|(indent, _)| *indent >= l.indent) {
            stack.pop();
        }
        let first = lines.text(text, l.first).trim_start();
        if first.starts_with('@') {
            decorators.get_or_insert(l.first);
            continue;
        }
        let decorated = decorators.take();
        if let Some(rest) = keyword(first, "class") {
            let name = identifier(rest);
            let whole = logical_text(text, lines, l);
            let bases = whole.find('(').map_or("", |open| {
                &whole[open..whole.find(':').unwrap_or(whole.len()).max(open)]
            });
            let test = name.starts_with("Test") || bases.contains("Test");
            stack.push((
                l.indent,
                PyScope::Class {
                    name: name.to_owned(),
                    test,
                },
            ));
            continue;
        }
        let def = keyword(first, "def")
            .or_else(|| keyword(first, "async").and_then(|rest| keyword(rest, "def")));
        if let Some(rest) = def {
            let name = identifier(rest);
            let in_def = stack.iter().any(|(_, s)| matches!(s, PyScope::Def));
            let classes: Vec<(&str, bool)> = stack
                .iter()
                .filter_map(|(_, s)| match s {
                    PyScope::Class { name, test } => Some((name.as_str(), *test)),
                    PyScope::Def => None,
                })
                .collect();
            let in_test_class = classes.last().is_none_or(|(_, test)| *test);
            if !in_def && name.starts_with("test") && in_test_class {
                let mut path: Vec<&str> = classes.iter().map(|(n, _)| *n).collect();
                path.push(name);
                out.push(TestFn {
                    name: name.to_owned(),
                    qualified: path.join("."),
                    span: decorated.unwrap_or(l.first)..python_block_end(&logical, k) + 1,
                    name_line: l.first,
                });
            }
            stack.push((l.indent, PyScope::Def));
        }
    }
    out
}

/// The last line of the block opened by logical line `k`.
fn python_block_end(logical: &[LogicalLine], k: usize) -> usize {
    let indent = logical[k].indent;
    let mut end = logical[k].last;
    for l in &logical[k + 1..] {
        if l.blank {
            if l.comment && l.indent > indent {
                end = l.last;
            }
            continue;
        }
        if l.indent <= indent {
            break;
        }
        end = l.last;
    }
    end
}

fn logical_text<'t>(text: &'t str, lines: &Lines, l: &LogicalLine) -> &'t str {
    let start = lines.starts.get(l.first).copied().unwrap_or(0);
    let end = lines.starts.get(l.last + 1).copied().unwrap_or(text.len());
    text.get(start..end).unwrap_or("")
}

/// `rest` after `word` and at least one blank.
fn keyword<'t>(line: &'t str, word: &str) -> Option<&'t str> {
    let rest = line.strip_prefix(word)?;
    rest.starts_with([' ', '\t']).then(|| rest.trim_start())
}

fn identifier(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

fn python_is_assertion(line: &str) -> bool {
    let t = line.trim_start();
    let code = t.split(" #").next().unwrap_or(t);
    code.starts_with("assert ")
        || code.starts_with("assert(")
        || code == "assert"
        || code.contains("self.assert")
        || code.contains("self.fail(")
        || code.contains("pytest.raises(")
        || code.contains("pytest.warns(")
        || code.contains("pytest.fail(")
}

// ---------------------------------------------------------------------------
// Assertions in the brace languages

/// Identifiers of one line outside strings and before a line comment:
/// `(start, end)` byte ranges.
fn line_idents(line: &str, lang: Lang) -> Vec<(usize, usize)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => break,
            b'"' => i = skip_quoted(b, i, b'"', true),
            b'`' if lang != Lang::Rust => {
                i = b[i + 1..]
                    .iter()
                    .position(|&x| x == b'`')
                    .map_or(b.len(), |p| i + p + 2);
            }
            b'\'' if lang == Lang::Rust => i = rust_char_end(b, i).unwrap_or(i + 1),
            b'\'' => i = skip_quoted(b, i, b'\'', true),
            c if is_ident_start(c) => {
                let start = i;
                while i < b.len() && is_ident_char(b[i]) {
                    i += 1;
                }
                out.push((start, i));
            }
            _ => i += 1,
        }
    }
    out
}

fn is_assertion_line(line: &str, lang: Lang) -> bool {
    let b = line.as_bytes();
    let idents = line_idents(line, lang);
    let next_non_blank = |end: usize| line[end..].trim_start().as_bytes().first().copied();
    let prev = |start: usize| start.checked_sub(1).map(|p| b[p]);
    match lang {
        Lang::Rust => {
            line.trim_start().starts_with("#[should_panic")
                || idents.iter().any(|&(s, e)| {
                    let word = &line[s..e];
                    let next = next_non_blank(e);
                    let assert_like = word.starts_with("assert")
                        || word.starts_with("debug_assert")
                        || word.starts_with("prop_assert");
                    (next == Some(b'!') && (assert_like || word == "panic"))
                        || (prev(s) == Some(b'.')
                            && next == Some(b'(')
                            && word.starts_with("assert"))
                })
        }
        Lang::JavaScript => idents.iter().any(|&(s, e)| {
            let word = &line[s..e];
            let next = next_non_blank(e);
            prev(s) != Some(b'.')
                && (word == "expect" || word == "assert")
                && matches!(next, Some(b'(' | b'.'))
        }),
        Lang::Go => {
            is_go_failure(line)
                || idents.iter().any(|&(s, e)| {
                    let word = &line[s..e];
                    prev(s) != Some(b'.')
                        && (word == "assert" || word == "require")
                        && b.get(e) == Some(&b'.')
                })
        }
        Lang::Python => python_is_assertion(line),
    }
}

/// `t.Errorf(…)`, `t.Fatal(…)`, `t.FailNow()`, on any receiver; not `err.Error()`.
fn is_go_failure(line: &str) -> bool {
    let b = line.as_bytes();
    line_idents(line, Lang::Go).iter().any(|&(s, e)| {
        let after_dot = s > 0 && b[s - 1] == b'.';
        let call = b.get(e) == Some(&b'(');
        let failure = match &line[s..e] {
            // `err.Error()` is a method on errors, not a failure.
            "Error" => b.get(e + 1).is_some_and(|&c| c != b')'),
            "Errorf" | "Fatal" | "Fatalf" | "Fail" | "FailNow" => true,
            _ => false,
        };
        after_dot && call && failure
    })
}

/// The last line of the statement starting on `line`: until its brackets balance.
fn statement_end(text: &str, lines: &Lines, lang: Lang, line: usize, end: usize) -> usize {
    let mut depth = 0i64;
    for l in line..end {
        let s = lines.text(text, l);
        depth += bracket_balance(s, lang);
        if depth <= 0 {
            return l;
        }
    }
    end.saturating_sub(1).max(line)
}

fn bracket_balance(line: &str, lang: Lang) -> i64 {
    let b = line.as_bytes();
    let mut balance = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => break,
            b'"' => {
                i = skip_quoted(b, i, b'"', true);
                continue;
            }
            b'\'' if lang == Lang::Rust => {
                i = rust_char_end(b, i).unwrap_or(i + 1);
                continue;
            }
            b'\'' => {
                i = skip_quoted(b, i, b'\'', true);
                continue;
            }
            b'`' if lang != Lang::Rust => {
                i = b[i + 1..]
                    .iter()
                    .position(|&x| x == b'`')
                    .map_or(b.len(), |p| i + p + 2);
                continue;
            }
            b'(' | b'[' | b'{' => balance += 1,
            b')' | b']' | b'}' => balance -= 1,
            _ => {}
        }
        i += 1;
    }
    balance
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn show(text: &str, lang: Lang) -> Vec<String> {
        tests_in(text, lang)
            .iter()
            .map(|t| format!("{} {:?} @{}", t.qualified, t.span, t.name_line))
            .collect()
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(lang_for_path("src/lib.rs"), Some(Lang::Rust));
        assert_eq!(lang_for_path("tests/test_cart.py"), Some(Lang::Python));
        for ext in ["js", "jsx", "ts", "tsx", "mjs", "cjs"] {
            assert_eq!(
                lang_for_path(&format!("a/cart.test.{ext}")),
                Some(Lang::JavaScript)
            );
        }
        assert_eq!(lang_for_path("cart_test.go"), Some(Lang::Go));
        assert_eq!(lang_for_path("Makefile"), None);
        assert_eq!(lang_for_path("dir.rs/README"), None);
    }

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
    fn python_logical_lines_and_blocks() {
        let src = "def test_a():\n    x = '''\nnot indented\n'''\n    y = (1,\n2)\n\n    # trailing comment\n\n# module comment\ndef helper():\n    pass\n";
        assert_eq!(show(src, Lang::Python), ["test_a 0..8 @0"]);
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
    fn go_method_and_helpers() {
        let src = "func (s *Suite) TestA() {\n}\nfunc TestMain(m *testing.M) {}\nfunc Testing(t *testing.T) {}\nfunc BenchmarkX(b *testing.B) {}\nfunc TestB(t *testing.T) {\n\ts := \"}\"\n}\n";
        assert_eq!(
            show(src, Lang::Go),
            ["Suite.TestA 0..2 @0", "TestB 5..8 @5"]
        );
    }

    #[test]
    fn deeply_nested_templates_do_not_overflow() {
        let src = format!("test(`{}`, () => {{}})", "${`".repeat(20_000));
        let _ = tests_in(&src, Lang::JavaScript);
    }

    #[test]
    fn unfinished_code_does_not_panic() {
        for lang in [Lang::Rust, Lang::Python, Lang::JavaScript, Lang::Go] {
            for src in [
                "#[test] fn a() {",
                "def test_a(:\n  '''",
                "test('a', () => {",
                "func TestA(t *testing.T) {",
                "\"",
                "'",
                "`",
                "r#\"",
                "/*",
                "#[",
            ] {
                let _ = tests_in(src, lang);
                let _ = test_at(src, lang, 0);
            }
        }
    }
}
