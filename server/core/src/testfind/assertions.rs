//! A test's assertion lines, for noticing when a fix weakens them:
//! [`assertions`]. Python's are found by logical lines (see `python`); the
//! brace languages' by identifiers outside strings and comments, and a
//! statement runs until its brackets balance.

use super::lexer::{Lines, is_ident_char, is_ident_start, rust_char_end, skip_quoted};
use super::model::{Lang, TestFn};
use super::python::{python_is_assertion, python_logical_lines};

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
