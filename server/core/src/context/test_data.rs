//! The data a failing test reads, shown beside it. A table-driven test
//! (`for args, expected in CASES`) fails with "True != False" in case 1:
//! without the table the model cannot know which input gave the wrong
//! answer, and a small one then rewrites the code unchanged (seen with
//! Qwen2.5-Coder-1.5B on is_valid_parenthesization, where Aider, which
//! shows the whole test file, fixed it at once).

use std::collections::HashSet;
use std::ops::Range;

/// The most lines of one definition shown: a table of a few cases, not a
/// fixture file pasted into the module.
const MAX_LINES: usize = 40;

/// The module-level assignments (`CASES = [...]`, `const CASES = [...]`)
/// whose names the lines in `test` use, as line ranges of `text`, in file
/// order; none inside `test`, none longer than [`MAX_LINES`].
pub fn definitions_used(text: &str, test: Range<usize>) -> Vec<Range<usize>> {
    let lines: Vec<&str> = text.lines().collect();
    let used: HashSet<&str> = lines
        .get(test.clone())
        .unwrap_or_default()
        .iter()
        .flat_map(|line| identifiers(line))
        .collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(name) = assigned_name(lines[i]) else {
            i += 1;
            continue;
        };
        let end = definition_end(&lines, i);
        if used.contains(name) && !test.contains(&i) && end - i <= MAX_LINES {
            found.push(i..end);
        }
        i = end.max(i + 1);
    }
    found
}

/// The name a top-level line assigns: `NAME = …`, `NAME: T = …`,
/// `[export] const|let|var NAME = …`.
fn assigned_name(line: &str) -> Option<&str> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let mut rest = line.strip_prefix("export ").unwrap_or(line);
    for keyword in ["const ", "let ", "var "] {
        if let Some(after) = rest.strip_prefix(keyword) {
            rest = after.trim_start();
            break;
        }
    }
    let name_len = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(name_len);
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let after = after.trim_start();
    // `NAME: T = …` (a type annotation), not `NAME == …` or `NAME => …`.
    let after = match after.strip_prefix(':') {
        Some(typed) => &typed[typed.find('=')?..],
        None => after,
    };
    let value = after.strip_prefix('=')?;
    (!value.starts_with(['=', '>'])).then_some(name)
}

/// Where the definition starting at `start` ends (exclusive): its
/// brackets closed, and no indented or closing line following.
fn definition_end(lines: &[&str], start: usize) -> usize {
    let mut depth: i64 = 0;
    let mut i = start;
    while i < lines.len() {
        let line = lines[i];
        if i > start && depth <= 0 && !continues(line) {
            break;
        }
        depth += bracket_balance(line);
        i += 1;
    }
    // Trailing blank lines are not part of it.
    while i > start + 1 && lines[i - 1].trim().is_empty() {
        i -= 1;
    }
    i
}

/// A line that carries on the definition above it once its brackets are
/// closed: indented, or a closing bracket alone.
fn continues(line: &str) -> bool {
    !line.trim().is_empty()
        && (line.starts_with(char::is_whitespace) || line.starts_with([']', '}', ')']))
}

/// Opening minus closing brackets, outside strings (roughly: quotes of
/// one line).
fn bracket_balance(line: &str) -> i64 {
    let mut balance = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in line.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' | '`' => quote = Some(c),
                '#' => break,
                '[' | '{' | '(' => balance += 1,
                ']' | '}' | ')' => balance -= 1,
                _ => {}
            },
        }
    }
    balance
}

fn identifiers(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const PY: &str = r#"import unittest

from parens import is_valid
from tests._timeout import case_time_limit

CASES = [
    [['((()()))()'], True],
    [['(('], False],
]
UNUSED = [1, 2]
LIMIT: int = 3


class TestParens(unittest.TestCase):
    def test_is_valid(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                self.assertEqual(is_valid(*args), expected, LIMIT)
"#;

    fn shown(text: &str, test: Range<usize>) -> Vec<String> {
        let lines: Vec<&str> = text.lines().collect();
        definitions_used(text, test)
            .into_iter()
            .map(|r| lines[r].join("\n"))
            .collect()
    }

    #[test]
    fn the_table_a_test_reads_is_found_and_nothing_else() {
        assert_eq!(
            shown(PY, 14..18),
            vec![
                "CASES = [\n    [['((()()))()'], True],\n    [['(('], False],\n]".to_owned(),
                "LIMIT: int = 3".to_owned(),
            ]
        );
    }

    #[test]
    fn javascript_tables_are_found_too() {
        let js = "const cases = [\n  ['((', false],\n];\nexport let other = 1;\n\ntest('x', () => {\n  for (const [s, want] of cases) expect(isValid(s)).toBe(want);\n});\n";
        assert_eq!(
            shown(js, 5..8),
            vec!["const cases = [\n  ['((', false],\n];".to_owned()]
        );
    }

    /// Brackets inside strings do not run a definition on, a comparison is
    /// no assignment, and a table too long to be a few cases is left out.
    #[test]
    fn strings_comparisons_and_long_tables_are_not_taken() {
        let text = format!(
            "A = '[('  # [[\nB == 1\nBIG = [\n{}]\n\ndef test():\n    use(A, B, BIG)\n",
            "    1,\n".repeat(50)
        );
        assert_eq!(shown(&text, 55..57), vec!["A = '[('  # [[".to_owned()]);
        assert_eq!(assigned_name("x => 1"), None);
        assert_eq!(assigned_name("  indented = 1"), None);
        assert_eq!(assigned_name("1abc = 2"), None);
    }

    #[test]
    fn a_span_outside_the_file_finds_nothing() {
        assert_eq!(
            definitions_used("A = 1\n", 5..9),
            Vec::<Range<usize>>::new()
        );
        assert_eq!(definitions_used("", 0..0), Vec::<Range<usize>>::new());
    }
}
