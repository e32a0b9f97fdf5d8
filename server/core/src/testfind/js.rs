//! JavaScript / TypeScript / JSX tests: calls of `it`, `test`, `specify`
//! (and `xit`, `fit`, `xtest`) with modifiers (`.only`, `.skip`, `.todo`,
//! `.concurrent`, `.failing`, `.each(table)` / `` .each`table` ``, …),
//! whose first argument is a string or template literal (the name). The
//! span runs to the call's closing parenthesis. Enclosing `describe`,
//! `context`, `suite` (and Playwright's `test.describe`) calls give
//! `qualified`: `Cart > adds items`. Regular expressions are recognised
//! by the token before them, best effort.

use super::lexer::{Kind, Lines, Tok, lex, match_close, unescape};
use super::model::{Lang, TestFn};

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

pub(super) fn js_tests(text: &str, lines: &Lines) -> Vec<TestFn> {
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
