//! Python tests: `def test…` / `async def test…` at module level (also
//! inside `if` blocks) or as a method of a test class: a class whose name
//! starts with `Test` or whose bases mention `Test` (`unittest.TestCase`,
//! `APITestCase`), nested classes too; never a function inside a
//! function. Decorators start the span; the body is the following lines
//! indented deeper (logical lines: brackets, backslashes and triple-quoted
//! strings continue a line whatever their indentation), up to its last
//! code or comment line. `qualified` is `TestCart.test_total`.
//!
//! Python needs no tokens: it is read by [`LogicalLine`]s. What counts as
//! an assertion in Python is here too ([`python_is_assertion`]).

use super::lexer::Lines;
use super::model::TestFn;

#[derive(Clone, Copy, Debug)]
pub(super) struct LogicalLine {
    pub(super) first: usize,
    pub(super) last: usize,
    indent: usize,
    /// Only blanks and comments.
    pub(super) blank: bool,
    /// A comment and nothing else.
    comment: bool,
}

pub(super) fn python_logical_lines(text: &str, lines: &Lines) -> Vec<LogicalLine> {
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

pub(super) fn python_tests(text: &str, lines: &Lines) -> Vec<TestFn> {
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

pub(super) fn python_is_assertion(line: &str) -> bool {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::testfind::{Lang, tests::show};
    use pretty_assertions::assert_eq;

    #[test]
    fn python_logical_lines_and_blocks() {
        let src = "def test_a():\n    x = '''\nnot indented\n'''\n    y = (1,\n2)\n\n    # trailing comment\n\n# module comment\ndef helper():\n    pass\n";
        assert_eq!(show(src, Lang::Python), ["test_a 0..8 @0"]);
    }
}
