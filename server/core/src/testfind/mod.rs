//! Finding test functions in source text (no I/O), for the editor's
//! "Fix test X" code action at the cursor and for noticing when a test's
//! assertions are weakened.
//!
//! Each language has a small lexer that knows its strings and comments, so
//! a brace inside a string or a comment never ends a test. The parts:
//!
//! - `model`: [`Lang`], [`lang_for_path`] and [`TestFn`], shared by all;
//! - `lexer`: the line table and the tokenizer of the brace languages;
//! - `rust`, `python`, `js` (JavaScript, TypeScript, JSX), `go`: what a
//!   test is in each language, and how its span and `qualified` name are
//!   found (the rules are in each file's documentation);
//! - `assertions`: a test's assertion lines ([`assertions()`]);
//! - this file: finding tests by line or by name ([`tests_in`],
//!   [`test_at`], [`find`], [`test_lines`]).
//!
//! Lines are 0-based and end at `\n`, `\r\n` or `\r`, as in the editor.

mod assertions;
mod go;
mod js;
mod lexer;
mod model;
mod python;
mod rust;

pub use assertions::assertions;
pub use model::{Lang, TestFn, lang_for_path};

use go::go_tests;
use js::js_tests;
use lexer::Lines;
use python::python_tests;
use rust::rust_tests;

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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    pub(super) fn show(text: &str, lang: Lang) -> Vec<String> {
        tests_in(text, lang)
            .iter()
            .map(|t| format!("{} {:?} @{}", t.qualified, t.span, t.name_line))
            .collect()
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
