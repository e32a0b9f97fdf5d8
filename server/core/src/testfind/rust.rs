//! Rust tests: a `fn` (any qualifiers: `pub`, `async`, `unsafe`, …) with
//! an attribute whose last path segment is `test`, `rstest`, `test_case`,
//! `wasm_bindgen_test` or `quickcheck` (`#[test]`, `#[tokio::test(…)]`,
//! `#[rstest]`), other attributes before or after it; the span starts at
//! its first attribute. The body is found by brace matching that skips
//! strings (also raw `r#"…"#`, byte and C strings), char literals
//! (lifetimes are told apart) and nested block comments. `qualified` is
//! the enclosing inline `mod`s and the name, `tests::total`.

use super::lexer::{Kind, Lines, Tok, lex, match_close};
use super::model::{Lang, TestFn};

const RUST_TEST_ATTRIBUTES: &[&str] = &[
    "test",
    "rstest",
    "test_case",
    "wasm_bindgen_test",
    "quickcheck",
];

pub(super) fn rust_tests(text: &str, lines: &Lines) -> Vec<TestFn> {
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
