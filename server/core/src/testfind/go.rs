//! Go tests: `func TestX(t *testing.T)` (not `TestMain`), and methods
//! `func (s *Suite) TestX()` of testify-style suites (`qualified`
//! `Suite.TestX`).

use super::lexer::{Kind, Lines, Tok, lex, match_close};
use super::model::{Lang, TestFn};

pub(super) fn go_tests(text: &str, lines: &Lines) -> Vec<TestFn> {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::testfind::tests::show;
    use pretty_assertions::assert_eq;

    #[test]
    fn go_method_and_helpers() {
        let src = "func (s *Suite) TestA() {\n}\nfunc TestMain(m *testing.M) {}\nfunc Testing(t *testing.T) {}\nfunc BenchmarkX(b *testing.B) {}\nfunc TestB(t *testing.T) {\n\ts := \"}\"\n}\n";
        assert_eq!(
            show(src, Lang::Go),
            ["Suite.TestA 0..2 @0", "TestB 5..8 @5"]
        );
    }
}
