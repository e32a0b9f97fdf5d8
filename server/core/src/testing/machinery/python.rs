//! Python: the statements that change the test machinery (see
//! [`super`]). The text is cut into logical statements (brackets and `\`
//! continue a line, `;` splits one) with string contents and comments set
//! apart, so a rule never fires on a word inside a string or a comment,
//! and a call spread over lines is still one statement.

use super::{Finding, output_like};

/// Names that belong to the test framework: an assignment to an attribute
/// reached through one of them changes the framework, not the project.
const FRAMEWORK: &[&str] = &[
    "unittest",
    "TestCase",
    "TestResult",
    "TextTestResult",
    "TextTestRunner",
    "TestSuite",
    "TestLoader",
    "TestProgram",
    "IsolatedAsyncioTestCase",
    "FunctionTestCase",
    "pytest",
    "_pytest",
    "pluggy",
    "builtins",
    "__builtins__",
];

/// Attributes of the framework a test may set as configuration.
const SETTINGS: &[&str] = &["maxDiff", "longMessage"];

/// What kind of file the statements come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PyFile {
    Plain,
    /// A conftest.py or another pytest plugin: its hooks run in pytest.
    Plugin,
}

pub(super) fn scan(path: &str, text: &str, kind: PyFile) -> Vec<Finding> {
    let mut found = Vec::new();
    for stmt in statements(text) {
        for what in rules(&stmt, kind) {
            found.push(Finding::at(path, stmt.line, &stmt.raw, what));
        }
    }
    found
}

/// One logical statement.
#[derive(Debug, Default)]
struct Stmt {
    /// 1-based line where it starts.
    line: usize,
    /// Leading whitespace of that line (0: module scope).
    indent: usize,
    /// The code with every string literal as `""` and no comments.
    code: String,
    /// The string literals' contents.
    strings: Vec<String>,
    /// The text as written (strings included, comments not), whitespace
    /// collapsed: what identifies the statement across versions.
    raw: String,
}

/// Cuts Python source into logical statements. Every delimiter is ASCII,
/// so the text is walked as bytes and cut only at them.
fn statements(text: &str) -> Vec<Stmt> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut cur = Draft::default();
    let mut line = 1;
    let mut depth: usize = 0;
    let mut at_line_start = true;
    let mut indent = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if at_line_start {
            if c == b' ' || c == b'\t' {
                indent += 1;
                i += 1;
                continue;
            }
            at_line_start = false;
        }
        if cur.code.is_empty() && !c.is_ascii_whitespace() && c != b'#' {
            cur.line = line;
            cur.indent = indent;
        }
        match c {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\'' | b'"' => {
                let triple = bytes.get(i + 1) == Some(&c) && bytes.get(i + 2) == Some(&c);
                let quote_len = if triple { 3 } else { 1 };
                let start = i;
                i += quote_len;
                let content_start = i;
                let mut content_end = i;
                while i < bytes.len() {
                    let d = bytes[i];
                    if d == b'\\' {
                        if bytes.get(i + 1) == Some(&b'\n') {
                            line += 1;
                        }
                        i += 2;
                        content_end = i.min(bytes.len());
                        continue;
                    }
                    if d == c
                        && (!triple
                            || (bytes.get(i + 1) == Some(&c) && bytes.get(i + 2) == Some(&c)))
                    {
                        content_end = i;
                        i += quote_len;
                        break;
                    }
                    if d == b'\n' {
                        if !triple {
                            // Unterminated: the line ends it.
                            content_end = i;
                            break;
                        }
                        line += 1;
                    }
                    i += 1;
                    content_end = i;
                }
                let end = i.min(bytes.len());
                cur.raw.extend_from_slice(&bytes[start..end]);
                cur.code.extend_from_slice(b"\"\"");
                cur.strings
                    .push(String::from_utf8_lossy(&bytes[content_start..content_end]).into_owned());
                continue;
            }
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => {
                cur.code.push(b' ');
                cur.raw.push(b' ');
                line += 1;
                i += 2;
                continue;
            }
            b'\n' => {
                line += 1;
                i += 1;
                if depth > 0 {
                    cur.code.push(b' ');
                    cur.raw.push(b' ');
                } else {
                    cur.finish(&mut out);
                    at_line_start = true;
                    indent = 0;
                }
                continue;
            }
            b';' if depth == 0 => {
                cur.finish(&mut out);
                i += 1;
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if cur.code.is_empty() && c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        cur.code.push(c);
        cur.raw.push(c);
        i += 1;
    }
    cur.finish(&mut out);
    out
}

/// A statement being read: its text as bytes (cut only at ASCII).
#[derive(Default)]
struct Draft {
    line: usize,
    indent: usize,
    code: Vec<u8>,
    strings: Vec<String>,
    raw: Vec<u8>,
}

impl Draft {
    fn finish(&mut self, out: &mut Vec<Stmt>) {
        let draft = std::mem::take(self);
        let code = String::from_utf8_lossy(&draft.code).into_owned();
        if code.trim().is_empty() {
            return;
        }
        out.push(Stmt {
            line: draft.line,
            indent: draft.indent,
            code,
            strings: draft.strings,
            raw: collapse(&String::from_utf8_lossy(&draft.raw)),
        });
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a statement does to the test machinery, if anything.
fn rules(stmt: &Stmt, kind: PyFile) -> Vec<String> {
    let code = stmt.code.trim();
    let mut found = Vec::new();
    let (targets, deleted) = match code.strip_prefix("del ") {
        Some(rest) => (split_top(rest, ','), true),
        None => (assignment_targets(code), false),
    };
    for target in targets {
        if let Some(what) = target_rule(&target, stmt, deleted) {
            found.push(what);
        }
    }
    found.extend(call_rules(code, stmt));
    if kind == PyFile::Plugin
        && let Some(hook) = code
            .strip_prefix("def ")
            .or_else(|| code.strip_prefix("async def "))
            .and_then(|rest| rest.split('(').next())
            .filter(|name| name.starts_with("pytest_"))
    {
        found.push(format!(
            "implements the pytest hook `{hook}`, which runs inside the test run"
        ));
    }
    if let Some(line) = stmt
        .strings
        .iter()
        .find_map(|s| output_like(&s.replace("\\n", "\n")))
    {
        found.push(format!("prints a test runner's result line (`{line}`)"));
    }
    found
}

/// The targets of an assignment statement (`a.b = c.d = value`, `x += 1`,
/// `x: T = v`, `a, b = …`), each as written.
fn assignment_targets(code: &str) -> Vec<String> {
    let bytes = code.as_bytes();
    let mut depth: usize = 0;
    let mut cuts = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'=' if depth == 0 => {
                let before = i.checked_sub(1).map(|j| bytes[j]);
                let after = bytes.get(i + 1).copied();
                let comparison =
                    matches!(before, Some(b'=' | b'!' | b'<' | b'>' | b':')) || after == Some(b'=');
                if !comparison {
                    cuts.push(i);
                }
            }
            _ => {}
        }
    }
    let mut targets = Vec::new();
    let mut start = 0;
    for cut in cuts {
        let mut target = &code[start..cut];
        // An augmented assignment's operator.
        target = target.trim_end_matches(['+', '-', '*', '/', '%', '&', '|', '^', '@', '<', '>']);
        // An annotation.
        if let Some(name) = split_top(target, ':').first()
            && !target.trim_start().starts_with("lambda")
        {
            for part in split_top(name, ',') {
                targets.push(part);
            }
        }
        start = cut + 1;
    }
    targets
}

/// `text` split at `sep` outside brackets, each part trimmed (and without
/// a leading `*` or enclosing parentheses).
fn split_top(text: &str, sep: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth: usize = 0;
    let mut cur = String::new();
    for c in text.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if c == sep && depth == 0 {
            parts.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    parts.push(cur);
    parts
        .into_iter()
        .map(|p| {
            p.trim()
                .trim_start_matches('*')
                .trim_start_matches('(')
                .trim_end_matches(')')
                .trim()
                .to_owned()
        })
        .filter(|p| !p.is_empty())
        .collect()
}

fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// Whether a name is one of unittest's assertions (`assertEqual`,
/// `assert_` of mocks is not: it is written `assert_called…`).
fn is_assertion(name: &str) -> bool {
    let camel = |rest: &str| rest.is_empty() || rest.starts_with(|c: char| c.is_ascii_uppercase());
    name.strip_prefix("assert").is_some_and(camel) || name.strip_prefix("fail").is_some_and(camel)
}

/// A rule for one assignment (or `del`) target.
fn target_rule(target: &str, stmt: &Stmt, deleted: bool) -> Option<String> {
    let verb = if deleted { "deletes" } else { "replaces" };
    let compact: String = target.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.starts_with("sys.modules[") || compact == "sys.modules" {
        return Some(format!(
            "{verb} an entry of sys.modules: an import would then return something other than the file"
        ));
    }
    if compact.starts_with("__builtins__[") {
        return Some(format!("{verb} a builtin through `__builtins__`"));
    }
    if matches!(
        compact.as_str(),
        "sys.meta_path" | "sys.path_hooks" | "sys.path_importer_cache"
    ) {
        return Some(format!(
            "{verb} `{compact}`: imports would then load something other than the files"
        ));
    }
    if matches!(compact.as_str(), "sys.exit" | "os._exit" | "os.kill") {
        return Some(format!(
            "{verb} `{compact}`, which decides how the test process ends"
        ));
    }
    let parts: Vec<&str> = compact.split('.').collect();
    if !parts.iter().all(|p| is_identifier(p)) {
        return None;
    }
    let last = *parts.last()?;
    if parts.len() == 1 {
        if last == "pytest_plugins" && stmt.indent == 0 {
            return Some("sets `pytest_plugins`: pytest loads those plugins into the run".into());
        }
        // An assertion defined over, in a class body.
        return (stmt.indent > 0 && is_assertion(last))
            .then(|| format!("{verb} the assertion `{last}` of its test class"));
    }
    if matches!(parts[0], "builtins" | "__builtins__") {
        return Some(format!("{verb} the builtin `{last}`"));
    }
    if parts[..parts.len() - 1]
        .iter()
        .any(|p| FRAMEWORK.contains(p))
        && !SETTINGS.contains(&last)
    {
        return Some(format!("{verb} `{compact}`, part of the test framework"));
    }
    if is_assertion(last) {
        return Some(format!("{verb} the assertion `{compact}`"));
    }
    None
}

/// Calls that change the machinery, wherever they are in a statement.
fn call_rules(code: &str, stmt: &Stmt) -> Vec<String> {
    let mut found = Vec::new();
    // Most statements mention none of the words every rule below needs.
    let words = [
        "setattr",
        "_exit",
        "sys",
        "atexit",
        "exit",
        "quit",
        "SystemExit",
        "kill",
        "main",
    ];
    if !words.iter().any(|w| code.contains(w)) {
        return found;
    }
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    for args in calls(&compact, "setattr") {
        let first = split_top(&args, ',').into_iter().next().unwrap_or_default();
        let named = first.split('.').any(|p| FRAMEWORK.contains(&p));
        let assertion = stmt
            .strings
            .iter()
            .any(|s| is_assertion(s) || s.starts_with("assert"));
        let exit = matches!(first.as_str(), "sys" | "os")
            && stmt
                .strings
                .iter()
                .any(|s| matches!(s.as_str(), "exit" | "_exit" | "kill"));
        if named || assertion || exit {
            found.push(format!(
                "replaces an attribute of `{first}` with setattr, part of the test machinery"
            ));
        }
    }
    if compact.contains("os._exit(")
        || compact.contains("posix._exit(")
        || has_call(&compact, "_exit")
    {
        found.push(
            "calls os._exit, which ends the test process at once, before any result is reported"
                .into(),
        );
    }
    for method in [
        "update",
        "setdefault",
        "__setitem__",
        "pop",
        "clear",
        "__delitem__",
    ] {
        if compact.contains(&format!("sys.modules.{method}(")) {
            found.push(
                "changes sys.modules: an import would then return something other than the file"
                    .into(),
            );
            break;
        }
    }
    if ["sys.meta_path.", "sys.path_hooks."]
        .iter()
        .any(|p| compact.contains(p))
    {
        found.push(
            "adds an import hook: imports would then load something other than the files".into(),
        );
    }
    if compact.contains("atexit.register(")
        && ["exit", "kill"]
            .iter()
            .any(|w| compact.replace("atexit.register(", "").contains(w))
    {
        found.push("registers an exit hook that changes how the test process ends".into());
    }
    if stmt.indent == 0 {
        let ends = [
            "sys.exit(",
            "exit(",
            "quit(",
            "raisesystemexit",
            "os.kill(",
            "unittest.main(",
            "pytest.main(",
        ];
        let lower = compact.to_ascii_lowercase();
        if ends.iter().any(|e| lower.starts_with(e)) {
            found.push(
                "ends the process (or runs the tests itself) as soon as the module is imported"
                    .into(),
            );
        }
    }
    found
}

/// The argument text of each call of `name` in `code` (no whitespace).
fn calls(code: &str, name: &str) -> Vec<String> {
    let pattern = format!("{name}(");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(&pattern) {
        let start = from + at;
        let word_start = start == 0
            || !code[..start]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let open = start + pattern.len();
        if word_start {
            let mut depth = 1usize;
            let mut end = open;
            for (i, c) in code[open..].char_indices() {
                match c {
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + i;
                            break;
                        }
                    }
                    _ => {}
                }
                end = open + i + c.len_utf8();
            }
            out.push(code[open..end].to_owned());
        }
        from = open;
    }
    out
}

/// Whether `code` calls `name` as a bare name (`_exit(0)` after `from os
/// import _exit`), not as some object's method.
fn has_call(code: &str, name: &str) -> bool {
    let pattern = format!("{name}(");
    code.match_indices(&pattern).any(|(at, _)| {
        !code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whats(text: &str) -> Vec<String> {
        scan("x.py", text, PyFile::Plain)
            .into_iter()
            .map(|f| format!("{}: {}", f.line, f.what))
            .collect()
    }

    #[test]
    fn statements_join_lines_and_keep_strings_apart() {
        let stmts = statements(
            "a = f(\n  1,\n  2)  # c = 3\nb = 'x = 1'; c = \"\"\"\nmulti\n\"\"\"\nd = 1 \\\n  + 2\n",
        );
        let seen: Vec<(usize, &str)> = stmts.iter().map(|s| (s.line, s.code.as_str())).collect();
        assert_eq!(
            seen,
            vec![
                (1, "a = f(   1,   2)  "),
                (4, "b = \"\""),
                (4, "c = \"\""),
                (7, "d = 1    + 2"),
            ]
        );
        assert_eq!(stmts[2].strings, vec!["\nmulti\n".to_owned()]);
        assert_eq!(stmts[1].raw, "b = 'x = 1'");
    }

    #[test]
    fn changes_to_the_framework_are_named() {
        let cases: &[(&str, &[&str])] = &[
            (
                "import unittest\nunittest.TestCase.assertEqual = lambda *a: None\n",
                &["2: replaces `unittest.TestCase.assertEqual`, part of the test framework"],
            ),
            (
                "from unittest import TestCase\nTestCase.assertTrue = TestCase.assertFalse\n",
                &["2: replaces `TestCase.assertTrue`, part of the test framework"],
            ),
            (
                "setattr(unittest.TestCase,\n        'assertEqual', noop)\n",
                &[
                    "1: replaces an attribute of `unittest.TestCase` with setattr, part of the test machinery",
                ],
            ),
            (
                "setattr(TestCart, 'assert' + 'Equal', noop)\n",
                &[
                    "1: replaces an attribute of `TestCart` with setattr, part of the test machinery",
                ],
            ),
            (
                "self.assertEqual = print\n",
                &["1: replaces the assertion `self.assertEqual`"],
            ),
            (
                "class T(Base):\n    assertEqual = lambda *a: None\n",
                &["2: replaces the assertion `assertEqual` of its test class"],
            ),
            (
                "import builtins\nbuiltins.print = log\n",
                &["2: replaces the builtin `print`"],
            ),
            (
                "__builtins__['len'] = f\n",
                &["1: replaces a builtin through `__builtins__`"],
            ),
            (
                "sys.modules['tests.test_cart'] = fake\n",
                &[
                    "1: replaces an entry of sys.modules: an import would then return something other than the file",
                ],
            ),
            (
                "sys.modules.update({'unittest': m})\n",
                &[
                    "1: changes sys.modules: an import would then return something other than the file",
                ],
            ),
            (
                "sys.meta_path.insert(0, Finder())\n",
                &["1: adds an import hook: imports would then load something other than the files"],
            ),
            (
                "def total(items):\n    os._exit(0)\n",
                &[
                    "2: calls os._exit, which ends the test process at once, before any result is reported",
                ],
            ),
            (
                "from os import _exit\n_exit(0)\n",
                &[
                    "2: calls os._exit, which ends the test process at once, before any result is reported",
                ],
            ),
            (
                "sys.exit = lambda *a: None\n",
                &["1: replaces `sys.exit`, which decides how the test process ends"],
            ),
            (
                "atexit.register(lambda: os.kill(os.getpid(), 9))\n",
                &["1: registers an exit hook that changes how the test process ends"],
            ),
            (
                "sys.exit(0)\n",
                &[
                    "1: ends the process (or runs the tests itself) as soon as the module is imported",
                ],
            ),
            (
                "pytest_plugins = ['evil']\n",
                &["1: sets `pytest_plugins`: pytest loads those plugins into the run"],
            ),
            (
                "print('test_total (tests.test_cart.TestCart.test_total) ... ok')\n",
                &[
                    "1: prints a test runner's result line (`test_total (tests.test_cart.TestCart.test_total) ... ok`)",
                ],
            ),
            (
                "sys.stderr.write('\\nRan 1 test in 0.001s\\n\\nOK\\n')\n",
                &["1: prints a test runner's result line (`Ran 1 test in 0.001s`)"],
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(whats(text), *expected, "{text}");
        }
    }

    /// Ordinary code, and tests as people write them, are not flagged.
    #[test]
    fn ordinary_code_is_not_flagged() {
        for text in [
            "import unittest\nfrom unittest import mock\n\nclass TestCart(unittest.TestCase):\n    maxDiff = None\n    def test_total(self):\n        self.assertEqual(total([]), 0)\n",
            "unittest.TestCase.maxDiff = None\n",
            "x == unittest.TestCase\nif a <= b: pass\nn = f(a=1, b=2)\nwhile (y := g()) != 0: pass\n",
            "# unittest.TestCase.assertEqual = None\ns = 'unittest.TestCase.assertEqual = None'\n",
            "def total(items):\n    return sum(i.price * i.qty for i in items)\n",
            "with mock.patch.dict(sys.modules, {'x': m}):\n    pass\n",
            "sys.path.insert(0, os.path.dirname(__file__))\n",
            "if __name__ == '__main__':\n    unittest.main()\n",
            "atexit.register(cleanup)\n",
            "self.failures = 0\nresult.assertions = []\nassert_ok = True\n",
            "os.exit_code = 3\nprint('3 items passed the filter')\n",
            "m.assert_called_once_with(1)\n",
            "self._exit()\nlock._exit(1)\n",
        ] {
            assert_eq!(whats(text), Vec::<String>::new(), "{text}");
        }
    }

    #[test]
    fn hooks_count_in_plugins_only() {
        let text = "def pytest_runtest_makereport(item, call):\n    pass\n";
        assert!(scan("x.py", text, PyFile::Plain).is_empty());
        let found = scan("conftest.py", text, PyFile::Plugin);
        assert_eq!(
            found[0].what,
            "implements the pytest hook `pytest_runtest_makereport`, which runs inside the test run"
        );
    }
}
