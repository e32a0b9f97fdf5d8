//! Failing test names, extracted line by line from a test runner's output.
//!
//! The model is shown "these tests failed" next to the tail of the log, so it
//! does not have to read a whole test log to know what broke. Output is
//! streamed (and may be huge), so the scanner sees one line at a time and
//! keeps only the names it found, at most [`MAX_FAILURES`].
//!
//! Recognised: pytest, unittest, cargo test (libtest), cargo nextest,
//! go test, jest and vitest. Names are normalized to what the runner itself
//! uses to select a test, so the model can pass them back to `run_tests`:
//! `tests/test_cart.py::test_total`, `tests.test_cart.TestCart.test_total`,
//! `cart::tests::total`, `TestTotal`, `TestTotal/empty`, `Cart > total`.

use std::borrow::Cow;
use std::collections::HashSet;

/// At most this many failures are kept: past that, the run has a bigger
/// problem than any single test, and the list would only cost tokens.
pub const MAX_FAILURES: usize = 200;

/// A name longer than this is cut: a real test name never is, and the list
/// must stay small whatever the output contains.
const MAX_NAME_BYTES: usize = 500;

/// Finds failing tests in a test runner's output, fed one line at a time.
#[derive(Debug, Default)]
pub struct FailureScanner {
    found: Vec<Found>,
    seen: HashSet<String>,
    omitted: usize,
    /// Where we are in libtest's `failures:` summary.
    libtest: LibtestSummary,
    /// The last `FAIL <file>` line of jest, named when the whole suite failed.
    jest_suite: Option<String>,
}

#[derive(Debug)]
struct Found {
    name: String,
    /// A bare test title (jest `✕`, vitest `×`) that a later, qualified name
    /// (`Cart > total`) replaces instead of being listed twice.
    bare: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum LibtestSummary {
    #[default]
    Outside,
    /// Just after a `failures:` line: either the captured output of the
    /// failed tests (`---- name stdout ----`) or the list of names follows.
    Header,
    /// Inside the indented list of names.
    List,
}

impl FailureScanner {
    /// A scanner that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one line of output, without its line terminator.
    pub fn line(&mut self, line: &str) {
        let line = strip_ansi(line);
        let line = line.trim_end();
        if self.libtest_summary(line) {
            return;
        }
        if let Some((name, bare)) = self.recognise(line) {
            self.add(name, bare);
        }
    }

    /// How many distinct failures were seen past [`MAX_FAILURES`] (roughly:
    /// names past the limit are not remembered, so repeats count again).
    pub fn omitted(&self) -> usize {
        self.omitted
    }

    /// The failures found, deduplicated, in the order first seen.
    pub fn into_failures(self) -> Vec<String> {
        self.found.into_iter().map(|f| f.name).collect()
    }

    /// The line as a failing test, if it is one: the name, and whether it
    /// is a bare title that a qualified name may replace later.
    fn recognise(&mut self, line: &str) -> Option<(String, bool)> {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("FAIL")
            && let Some(found) = self.fail_prefixed(rest)
        {
            return Some(found);
        }
        if let Some(rest) = trimmed.strip_prefix('●') {
            return self.jest_block(rest.trim()).map(|n| (n, false));
        }
        if let Some(rest) = trimmed.strip_prefix(['✕', '×']) {
            return js_bullet(rest).map(|n| (n, true));
        }
        trimmed
            .strip_prefix("--- FAIL: ")
            .and_then(go_test)
            .or_else(|| nextest_other_status(trimmed))
            .or_else(|| unittest_summary(trimmed))
            .or_else(|| libtest_line(trimmed))
            .or_else(|| pytest_summary(trimmed))
            .or_else(|| pytest_verbose(trimmed))
            .or_else(|| unittest_verbose(trimmed))
            .map(|n| (n, false))
    }

    /// Lines starting with `FAIL`: nextest's result lines, vitest's failed
    /// test headers and jest's failed suites.
    fn fail_prefixed(&mut self, rest: &str) -> Option<(String, bool)> {
        if rest.trim_start().starts_with('[') {
            return nextest(rest.trim_start()).map(|n| (n, false));
        }
        // Jest and vitest put spaces after `FAIL`; go's `FAIL\tpkg` and a
        // bare `FAIL` are package results, not tests.
        if !rest.starts_with(' ') {
            return None;
        }
        let rest = rest.trim();
        if rest.contains(" > ") || rest.ends_with(" ]") {
            return vitest_fail(rest).map(|n| (n, false));
        }
        // Jest: `FAIL src/cart.test.js` or `FAIL src/cart.test.js (5.2 s)`.
        let file = rest.split_whitespace().next().unwrap_or_default();
        self.jest_suite = (!file.is_empty()).then(|| file.to_owned());
        None
    }

    /// Jest's `● Cart › total` headers; `● Test suite failed to run` names
    /// the suite from the `FAIL` line above it.
    fn jest_block(&self, title: &str) -> Option<String> {
        if title == "Test suite failed to run" {
            return self.jest_suite.clone();
        }
        // `● Console` precedes captured logs; `● Validation Warning:` and
        // friends are configuration messages.
        if title.is_empty() || title == "Console" || title.ends_with(':') {
            return None;
        }
        Some(title.split(" › ").collect::<Vec<_>>().join(" > "))
    }

    /// libtest's summary: `failures:` then the failed names indented by four
    /// spaces. Returns true when the line was consumed here.
    fn libtest_summary(&mut self, line: &str) -> bool {
        if line == "failures:" {
            self.libtest = LibtestSummary::Header;
            return true;
        }
        let name = line
            .strip_prefix("    ")
            .filter(|n| !n.is_empty() && !n.starts_with(char::is_whitespace));
        match (self.libtest, name) {
            (LibtestSummary::Outside, _) => false,
            (LibtestSummary::Header, None) if line.is_empty() => true,
            (_, Some(name)) => {
                self.libtest = LibtestSummary::List;
                self.add(name.to_owned(), false);
                true
            }
            (_, None) => {
                self.libtest = LibtestSummary::Outside;
                false
            }
        }
    }

    fn add(&mut self, name: String, bare: bool) {
        let name = cap(name);
        if name.is_empty() || self.seen.contains(&name) {
            return;
        }
        if bare && self.has_qualified(&name) {
            return;
        }
        if !bare && self.replace_bare(&name) {
            return;
        }
        if self.found.len() >= MAX_FAILURES {
            self.omitted += 1;
            return;
        }
        self.seen.insert(name.clone());
        self.found.push(Found { name, bare });
    }

    /// Whether a qualified name ending with this bare title is listed.
    fn has_qualified(&self, title: &str) -> bool {
        self.found.iter().any(|f| is_qualified_form(&f.name, title))
    }

    /// Replaces a bare title that `name` qualifies, keeping its place.
    fn replace_bare(&mut self, name: &str) -> bool {
        let Some(found) = self
            .found
            .iter_mut()
            .find(|f| f.bare && is_qualified_form(name, &f.name))
        else {
            return false;
        };
        self.seen.remove(&found.name);
        self.seen.insert(name.to_owned());
        found.name = name.to_owned();
        found.bare = false;
        true
    }
}

/// `Cart > total` is the qualified form of `total` (and of `Cart > total`).
fn is_qualified_form(qualified: &str, bare: &str) -> bool {
    qualified == bare
        || qualified
            .strip_suffix(bare)
            .is_some_and(|head| head.ends_with(" > "))
}

/// pytest's short summary: `FAILED tests/x.py::test_y - message`,
/// `ERROR tests/x.py::test_y - message`, `ERROR tests/x.py` (a collection
/// error), `SUBFAILED(i=1) tests/x.py::test_y - message`; with xdist,
/// `[gw0] [ 50%] FAILED tests/x.py::test_y`.
fn pytest_summary(line: &str) -> Option<String> {
    let line = skip_bracket_groups(line);
    let rest = line
        .strip_prefix("FAILED ")
        .or_else(|| line.strip_prefix("ERROR "))
        .or_else(|| {
            let after = line.strip_prefix("SUBFAILED")?;
            let close = after.starts_with('(').then(|| after.find(") "))??;
            Some(&after[close + 2..])
        })?;
    pytest_node_id(rest)
}

/// pytest -v: `tests/x.py::test_y FAILED    [ 12%]`.
fn pytest_verbose(line: &str) -> Option<String> {
    let id = pytest_node_id(line)?;
    let status = line[id.len()..].trim_start();
    let word = status.split_whitespace().next()?;
    matches!(word, "FAILED" | "ERROR").then_some(id)
}

/// The node id at the start of `text`: up to the first space outside
/// brackets (parametrized ids may contain spaces: `test_x[a - b]`). Only
/// accepted if it looks like one: `path.py::name`, or a `.py` file.
fn pytest_node_id(text: &str) -> Option<String> {
    let mut depth = 0usize;
    let mut end = text.len();
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            c if c.is_whitespace() && depth == 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let id = &text[..end];
    let file = id.split("::").next().unwrap_or_default();
    let looks_like_id = file.ends_with(".py") && !file.starts_with('(');
    looks_like_id.then(|| id.to_owned())
}

/// Skips xdist's leading `[gw0] [ 50%] ` groups.
fn skip_bracket_groups(mut line: &str) -> &str {
    while line.starts_with('[') {
        match line.find(']') {
            Some(close) => line = line[close + 1..].trim_start(),
            None => break,
        }
    }
    line
}

/// unittest's failure headers: `FAIL: test_total (tests.test_cart.TestCart)`
/// (Python < 3.11), `FAIL: test_total (tests.test_cart.TestCart.test_total)`
/// (3.11+), `ERROR: ...`, optionally followed by a subtest ` (i=1)`.
fn unittest_summary(line: &str) -> Option<String> {
    let rest = line
        .strip_prefix("FAIL: ")
        .or_else(|| line.strip_prefix("ERROR: "))?;
    unittest_name(rest)
}

/// unittest -v: `test_total (tests.test_cart.TestCart.test_total) ... FAIL`,
/// subtests indented with their parameters before the ` ... `.
fn unittest_verbose(line: &str) -> Option<String> {
    let (test, status) = line.rsplit_once(" ... ")?;
    matches!(status, "FAIL" | "ERROR").then_some(())?;
    unittest_name(test)
}

/// `method (dotted.path)` as the dotted name unittest accepts back.
fn unittest_name(text: &str) -> Option<String> {
    let (method, rest) = text.split_once(" (")?;
    let (path, _) = rest.split_once(')')?;
    let is_word = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace);
    if !is_word(method) || !is_word(path) {
        return None;
    }
    // A module that failed to import: `ERROR: tests.test_cart
    // (unittest.loader._FailedTest.tests.test_cart)`.
    if path.starts_with("unittest.loader.") {
        return Some(method.to_owned());
    }
    let qualified = path
        .strip_suffix(method)
        .is_some_and(|head| head.ends_with('.'));
    Some(if qualified {
        path.to_owned()
    } else {
        format!("{path}.{method}")
    })
}

/// libtest: `test cart::tests::total ... FAILED` (also inside nextest's
/// captured output, indented), `test tests::boom - should panic ... FAILED`,
/// doc tests `test src/lib.rs - add (line 3) ... FAILED`.
fn libtest_line(line: &str) -> Option<String> {
    let rest = line.strip_prefix("test ")?;
    let (name, status) = rest.rsplit_once(" ... ")?;
    // `--report-time` appends `<0.001s>`.
    let status = status.split(" <").next().unwrap_or(status);
    if status != "FAILED" {
        return None;
    }
    let name = name.strip_suffix(" - should panic").unwrap_or(name);
    Some(name.to_owned())
}

/// nextest: `[   0.004s] cart cart::tests::total` after `FAIL` (also with a
/// `(2/4)` counter after the time). The name is the test's libtest name,
/// without the binary id, so it matches what `cargo test` prints.
fn nextest(rest: &str) -> Option<String> {
    let (_, after_time) = rest.split_once(']')?;
    let mut after = after_time.trim_start();
    if after.starts_with('(') {
        let (_, tail) = after.split_once(')')?;
        after = tail.trim_start();
    }
    let name = match after.split_once(' ') {
        Some((_binary, name)) => name.trim(),
        None => after,
    };
    (!name.is_empty()).then(|| name.to_owned())
}

/// nextest's other failed results: `TIMEOUT [ 60.003s] …`, `SIGSEGV [ …`,
/// `SIGABRT`, `ABORT` (Windows), `LEAK-FAIL`.
fn nextest_other_status(line: &str) -> Option<String> {
    let (status, rest) = line.split_once(' ')?;
    let is_failure = status == "TIMEOUT"
        || status == "ABORT"
        || status == "LEAK-FAIL"
        || (status.len() > 3
            && status.starts_with("SIG")
            && status.chars().all(|c| c.is_ascii_uppercase()));
    let rest = rest.trim_start();
    (is_failure && rest.starts_with('[')).then(|| nextest(rest))?
}

/// go test: `TestTotal (0.00s)` after `--- FAIL: `, subtests
/// `TestTotal/empty (0.00s)`.
fn go_test(rest: &str) -> Option<String> {
    let name = match rest.rsplit_once(" (") {
        Some((name, time)) if time.ends_with("s)") => name,
        _ => rest,
    };
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// vitest: `src/cart.test.ts > Cart > total` (a failed test) or
/// `src/cart.test.ts [ src/cart.test.ts ]` (a suite that failed to run).
fn vitest_fail(rest: &str) -> Option<String> {
    if let Some((file, _)) = rest.split_once(" [ ") {
        return Some(file.trim().to_owned());
    }
    let (_file, name) = rest.split_once(" > ")?;
    Some(name.trim().to_owned())
}

/// jest `✕ adds items (3 ms)` and vitest `× adds items 8ms`: a bare title
/// (jest) or a `>`-joined one (older vitest), without the duration.
fn js_bullet(rest: &str) -> Option<String> {
    let title = strip_duration(rest.trim());
    let title = title.split(" › ").collect::<Vec<_>>().join(" > ");
    (!title.is_empty()).then_some(title)
}

/// Removes a trailing ` (3 ms)`, ` (1.2 s)`, ` 8ms` or ` 1.2s`.
fn strip_duration(title: &str) -> &str {
    let is_duration = |s: &str| {
        let number = s.strip_suffix("ms").or_else(|| s.strip_suffix('s'));
        let number = number.map(str::trim_end).unwrap_or_default();
        !number.is_empty() && number.chars().all(|c| c.is_ascii_digit() || c == '.')
    };
    if let Some((head, last)) = title.rsplit_once(" (")
        && last.strip_suffix(')').is_some_and(is_duration)
    {
        return head.trim_end();
    }
    match title.rsplit_once(' ') {
        Some((head, last)) if is_duration(last) => head.trim_end(),
        _ => title,
    }
}

/// Cuts an overlong name at a character boundary.
fn cap(mut name: String) -> String {
    if name.len() > MAX_NAME_BYTES {
        let mut end = MAX_NAME_BYTES;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
    name
}

/// Removes terminal escape sequences (colours, cursor moves, titles):
/// `NO_COLOR` is set for commands, but not every tool honours it.
pub fn strip_ansi(line: &str) -> Cow<'_, str> {
    if !line.contains('\u{1b}') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameters, then one final byte in `@`..=`~`.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: up to BEL or ESC `\`.
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            // Any other escape is two characters long.
            _ => {}
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn scan(output: &str) -> Vec<String> {
        let mut scanner = FailureScanner::new();
        for line in output.lines() {
            scanner.line(line);
        }
        scanner.into_failures()
    }

    /// Each case: a runner's real-looking output and the failures in it.
    #[test]
    fn recognises_every_runner() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "pytest -q",
                PYTEST_Q,
                &[
                    "tests/test_cart.py::test_total",
                    "tests/test_cart.py::test_param[a - b]",
                    "tests/test_cart.py::TestCart::test_method",
                    "tests/test_cart.py::TestUnit::test_sub",
                    "tests/test_cart.py::test_fixture_error",
                ],
            ),
            (
                "pytest -v",
                PYTEST_V,
                &[
                    "tests/test_cart.py::test_total",
                    "tests/test_cart.py::test_param[a - b]",
                    "tests/test_cart.py::test_fixture_error",
                    "tests/test_cart.py::TestCart::test_method",
                ],
            ),
            (
                "pytest collection error",
                PYTEST_COLLECTION,
                &["tests/test_broken.py"],
            ),
            (
                "pytest xdist",
                PYTEST_XDIST,
                &["tests/test_a.py::test_one", "tests/test_b.py::test_two"],
            ),
            (
                "unittest 3.11+",
                UNITTEST_NEW,
                &[
                    "tests.test_cart.TestCart.test_err",
                    "tests.test_cart.TestCart.test_sub",
                    "tests.test_cart.TestCart.test_total",
                ],
            ),
            (
                "unittest < 3.11",
                UNITTEST_OLD,
                &["tests.test_cart.TestCart.test_total", "test_broken"],
            ),
            (
                "unittest -v",
                UNITTEST_VERBOSE,
                &[
                    "tests.test_cart.TestCart.test_err",
                    "tests.test_cart.TestCart.test_sub",
                    "tests.test_cart.TestCart.test_total",
                ],
            ),
            (
                "unittest import error",
                UNITTEST_IMPORT,
                &["tests.test_broken"],
            ),
            (
                "cargo test",
                CARGO_TEST,
                &["cart::tests::boom", "cart::tests::total", "total"],
            ),
            (
                "cargo test --doc",
                CARGO_DOCTEST,
                &["src/lib.rs - add (line 3)"],
            ),
            (
                "cargo nextest",
                NEXTEST,
                &[
                    "cart::tests::boom",
                    "cart::tests::total",
                    "total",
                    "cart::tests::slow",
                ],
            ),
            (
                "go test",
                GO_TEST,
                &["TestTotal", "TestTable", "TestTable/empty_cart"],
            ),
            ("go test -v", GO_TEST_V, &["TestTotal"]),
            (
                "jest (one file, verbose)",
                JEST_VERBOSE,
                &[
                    "top level",
                    "Cart > total",
                    "Cart > when empty > total is (zero)",
                ],
            ),
            (
                "jest (several files)",
                JEST_MANY,
                &["Cart > total", "top level", "src/broken.test.js"],
            ),
            (
                "vitest",
                VITEST,
                &[
                    "Cart > total",
                    "Cart > when empty > total is (zero)",
                    "top level",
                    "vt/broken.test.mjs",
                ],
            ),
            ("vitest 1.x", VITEST_OLD, &["Cart > total"]),
            ("all green", ALL_GREEN, &[]),
        ];
        for (runner, output, expected) in cases {
            assert_eq!(scan(output), *expected, "{runner}");
        }
    }

    #[test]
    fn colours_are_ignored() {
        let line = "\u{1b}[31mFAILED\u{1b}[0m tests/test_cart.py::test_total - assert 3 == 30";
        assert_eq!(scan(line), ["tests/test_cart.py::test_total"]);
        assert_eq!(
            strip_ansi("\u{1b}]0;title\u{7}ok \u{1b}[1;32mgreen\u{1b}[0m"),
            "ok green"
        );
        assert_eq!(strip_ansi("plain"), "plain");
        assert_eq!(strip_ansi("cut \u{1b}["), "cut ");
    }

    #[test]
    fn duplicates_are_listed_once_in_first_seen_order() {
        let out = "--- FAIL: TestB (0.00s)\n--- FAIL: TestA (0.00s)\n--- FAIL: TestB (0.00s)";
        assert_eq!(scan(out), ["TestB", "TestA"]);
    }

    #[test]
    fn the_list_is_capped() {
        let mut scanner = FailureScanner::new();
        for i in 0..MAX_FAILURES + 5 {
            scanner.line(&format!("--- FAIL: Test{i} (0.00s)"));
        }
        assert_eq!(scanner.omitted(), 5);
        let failures = scanner.into_failures();
        assert_eq!(failures.len(), MAX_FAILURES);
        assert_eq!(failures[0], "Test0");
    }

    #[test]
    fn overlong_names_are_cut() {
        let name = "é".repeat(400);
        let failures = scan(&format!("--- FAIL: {name} (0.00s)"));
        assert!(failures[0].len() <= MAX_NAME_BYTES);
        assert!(name.starts_with(&failures[0]));
    }

    #[test]
    fn look_alikes_are_not_failures() {
        let out = "\
FAILED (failures=2)
FAIL
FAIL\texample.com/cart\t0.002s
ERROR something went wrong
test result: FAILED. 1 passed; 2 failed; 0 ignored
stdout | vt/cart.test.mjs > Cart > total
  ● Console
  ● Validation Warning:
XFAIL tests/test_x.py::test_y - known
tests/test_x.py::test_y PASSED                     [100%]
test_xf (tests.test_u.TestCart.test_xf) ... unexpected success
--- PASS: TestTotal (0.00s)
        PASS [   0.009s] (2/4) cart cart::tests::ok
    ✓ adds items (3 ms)
";
        assert_eq!(scan(out), Vec::<String>::new());
    }

    #[test]
    fn odd_input_never_panics() {
        for line in [
            "",
            "FAIL",
            "FAIL [",
            "FAIL [ 1s] (",
            "--- FAIL: ",
            "●",
            "✕",
            "× ",
            "FAIL:  (",
            "ERROR: x (",
            "FAILED ",
            "SUBFAILED(",
            "SUBFAILED(x",
            "[",
            "[gw0",
            "test  ... FAILED",
            "failures:",
            "    ",
            "é ... FAIL",
            "FAIL  a > ",
            "FAIL   [ ",
        ] {
            let mut scanner = FailureScanner::new();
            scanner.line(line);
            scanner.line("    x");
            let _ = scanner.into_failures();
        }
    }

    #[test]
    fn durations_are_stripped_from_titles() {
        assert_eq!(strip_duration("adds items (3 ms)"), "adds items");
        assert_eq!(strip_duration("adds items (1.2 s)"), "adds items");
        assert_eq!(strip_duration("adds items 8ms"), "adds items");
        assert_eq!(strip_duration("total is (zero)"), "total is (zero)");
        assert_eq!(strip_duration("costs 5 items"), "costs 5 items");
        assert_eq!(strip_duration("s"), "s");
    }

    // Samples captured from real runs (pytest 9.2, Python 3.11, cargo
    // 1.95, nextest 0.9, jest 30, vitest 4) and, for older formats and go,
    // written from those tools' documented output.

    const PYTEST_Q: &str = "\
FFF.EFF.F                                                                [100%]
==================================== ERRORS ====================================
_____________________ ERROR at setup of test_fixture_error _____________________
    @pytest.fixture
    def boom():
>       raise RuntimeError(\"fixture broke\")
E       RuntimeError: fixture broke

tests/test_cart.py:15: RuntimeError
=================================== FAILURES ===================================
__________________________________ test_total __________________________________

    def test_total():
>       assert total() == 30
E       assert 3 == 30
E        +  where 3 = total()

tests/test_cart.py:8: AssertionError
=========================== short test summary info ============================
FAILED tests/test_cart.py::test_total - assert 3 == 30
FAILED tests/test_cart.py::test_param[a - b] - AssertionError: assert 'a - b'...
FAILED tests/test_cart.py::TestCart::test_method - assert False
SUBFAILED(i=1) tests/test_cart.py::TestUnit::test_sub - AssertionError: 1 != 0
ERROR tests/test_cart.py::test_fixture_error - RuntimeError: fixture broke
5 failed, 2 passed, 1 error, 1 subtests passed in 0.05s
";

    const PYTEST_V: &str = "\
============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.6.0 -- /usr/bin/python3
collecting ... collected 5 items

tests/test_cart.py::test_total FAILED                                    [ 20%]
tests/test_cart.py::test_param[a - b] FAILED                             [ 40%]
tests/test_cart.py::test_param[c] PASSED                                 [ 60%]
tests/test_cart.py::test_fixture_error ERROR                             [ 80%]
tests/test_cart.py::TestCart::test_method FAILED                         [100%]
";

    const PYTEST_COLLECTION: &str = "\
==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_broken.py _____________________
E   ModuleNotFoundError: No module named 'nonexistent_mod'
=========================== short test summary info ============================
ERROR tests/test_broken.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.13s
";

    const PYTEST_XDIST: &str = "\
[gw0] [ 50%] FAILED tests/test_a.py::test_one
[gw1] [100%] PASSED tests/test_b.py::test_ok
=========================== short test summary info ============================
FAILED tests/test_a.py::test_one - assert 1 == 2
FAILED tests/test_b.py::test_two - KeyError: 'x'
";

    const UNITTEST_NEW: &str = "\
EF.Fu
======================================================================
ERROR: test_err (tests.test_cart.TestCart.test_err)
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"/tmp/p/tests/test_cart.py\", line 11, in test_err
    raise ValueError(\"x\")
ValueError: x

======================================================================
FAIL: test_sub (tests.test_cart.TestCart.test_sub) (i=1)
----------------------------------------------------------------------
AssertionError: 1 != 0

======================================================================
FAIL: test_total (tests.test_cart.TestCart.test_total)
Check the total.
----------------------------------------------------------------------
AssertionError: 3 != 30

----------------------------------------------------------------------
Ran 4 tests in 0.001s

FAILED (failures=2, errors=1, unexpected successes=1)
";

    const UNITTEST_OLD: &str = "\
F
======================================================================
FAIL: test_total (tests.test_cart.TestCart)
----------------------------------------------------------------------
AssertionError: 3 != 30

======================================================================
ERROR: test_broken (unittest.loader._FailedTest)
----------------------------------------------------------------------
ImportError: Failed to import test module: test_broken
";

    const UNITTEST_VERBOSE: &str = "\
test_err (tests.test_cart.TestCart.test_err) ... ERROR
test_sub (tests.test_cart.TestCart.test_sub) ...
  test_sub (tests.test_cart.TestCart.test_sub) (i=1) ... FAIL
test_total (tests.test_cart.TestCart.test_total) ... FAIL
test_ok (tests.test_cart.TestCart.test_ok) ... ok
";

    const UNITTEST_IMPORT: &str = "\
E
======================================================================
ERROR: tests.test_broken (unittest.loader._FailedTest.tests.test_broken)
----------------------------------------------------------------------
ImportError: Failed to import test module: tests.test_broken
";

    const CARGO_TEST: &str = "\
     Running unittests src/lib.rs (target/debug/deps/cart-cc34d4ae7363b857)

running 3 tests
test cart::tests::boom - should panic ... FAILED
test cart::tests::ok ... ok
test cart::tests::total ... FAILED

failures:

---- cart::tests::boom stdout ----
note: test did not panic as expected at src/lib.rs:2:127
---- cart::tests::total stdout ----

thread 'cart::tests::total' (12755) panicked at src/lib.rs:2:47:
assertion `left == right` failed
  left: 3
 right: 30
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    cart::tests::boom
    cart::tests::total

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.09s

     Running tests/cart.rs (target/debug/deps/cart-0c0f2b8a5e4d1c3a)

running 1 test
    indented output
test total ... FAILED

failures:

---- total stdout ----
    indented output

failures:
    total

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--test cart`
";

    const CARGO_DOCTEST: &str = "\
running 1 test
test src/lib.rs - add (line 3) ... FAILED

failures:

---- src/lib.rs - add (line 3) stdout ----
Test executable failed (exit status: 101).

failures:
    src/lib.rs - add (line 3)

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

    const NEXTEST: &str = "\
────────────
 Nextest run ID 89e24997-70be-40d5-b6fe-9069266e8db4 with nextest profile: default
    Starting 4 tests across 2 binaries
        FAIL [   0.007s] (1/4) cart cart::tests::boom
  stdout ───

    running 1 test
    test cart::tests::boom - should panic ... FAILED

    failures:

    ---- cart::tests::boom stdout ----
    note: test did not panic as expected at src/lib.rs:2:127

    failures:
        cart::tests::boom

    test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 2 filtered out; finished in 0.00s

        PASS [   0.009s] (2/4) cart cart::tests::ok
        FAIL [   0.006s] (3/4) cart cart::tests::total
        FAIL [   0.007s] (4/4) cart::cart total
     TIMEOUT [  60.002s] ( 5/12) cart cart::tests::slow
────────────
     Summary [   0.136s] 4 tests run: 1 passed, 3 failed, 0 skipped
        FAIL [   0.008s] (1/4) cart cart::tests::boom
        FAIL [   0.129s] (3/4) cart cart::tests::total
        FAIL [   0.007s] (4/4) cart::cart total
error: test run failed
";

    const GO_TEST: &str = "\
--- FAIL: TestTotal (0.00s)
    cart_test.go:8: total() = 3, want 30
--- FAIL: TestTable (0.00s)
    --- FAIL: TestTable/empty_cart (0.00s)
        cart_test.go:21: got 1, want 0
    --- PASS: TestTable/one_item (0.00s)
FAIL
FAIL\texample.com/cart\t0.002s
FAIL
";

    const GO_TEST_V: &str = "\
=== RUN   TestTotal
    cart_test.go:8: total() = 3, want 30
--- FAIL: TestTotal (0.00s)
=== RUN   TestEmpty
--- PASS: TestEmpty (0.00s)
FAIL
exit status 1
FAIL\texample.com/cart\t0.003s
";

    const JEST_VERBOSE: &str = "\
  console.log
    hello

      at Object.log (src/cart.test.js:6:45)

FAIL src/cart.test.js
  ✕ top level (1 ms)
  Cart
    ✓ adds items (3 ms)
    ✕ total (3 ms)
    when empty
      ✕ total is (zero) (14 ms)

  ● Cart › total

    expect(received).toBe(expected) // Object.is equality

    Expected: 30
    Received: 3

  ● Cart › when empty › total is (zero)

    expect(received).toBe(expected) // Object.is equality

  ● top level

    expect(received).toBe(expected) // Object.is equality

Test Suites: 1 failed, 1 total
Tests:       3 failed, 1 passed, 4 total
";

    const JEST_MANY: &str = "\
FAIL src/cart.test.js
  ● Console

    console.log
      hello

  ● Cart › total

    expect(received).toBe(expected) // Object.is equality

  ● top level

    expect(received).toBe(expected) // Object.is equality

FAIL src/broken.test.js (5.2 s)
  ● Test suite failed to run

    Cannot find module './nope' from 'src/broken.test.js'

PASS src/other.test.js
Test Suites: 2 failed, 1 passed, 3 total
";

    const VITEST: &str = "
 RUN  v4.1.12 /tmp/rein-probe/js

stdout | vt/cart.test.mjs > Cart > when empty > total is (zero)
hello

 ❯ vt/cart.test.mjs (4 tests | 3 failed) 17ms
     ✓ adds items 2ms
     × total 8ms
       × total is (zero) 4ms
   × top level 1ms
 ❯ vt/broken.test.mjs (0 test)

⎯⎯⎯⎯⎯⎯ Failed Suites 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  vt/broken.test.mjs [ vt/broken.test.mjs ]
Error: Cannot find module './nope'

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 3 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  vt/cart.test.mjs > Cart > total
AssertionError: expected 3 to be 30 // Object.is equality
 FAIL  vt/cart.test.mjs > Cart > when empty > total is (zero)
AssertionError: expected 1 to be +0 // Object.is equality
 FAIL  vt/cart.test.mjs > top level
AssertionError: expected 1 to be 2 // Object.is equality

 Test Files  2 failed (2)
      Tests  3 failed | 1 passed (4)
";

    const VITEST_OLD: &str = "
 ❯ src/cart.test.ts  (2 tests | 1 failed) 5ms
   × Cart > total
     → expected 3 to be 30

 FAIL  src/cart.test.ts > Cart > total
AssertionError: expected 3 to be 30
";

    const ALL_GREEN: &str = "\
running 2 tests
test cart::tests::ok ... ok
test cart::tests::total ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out
..                                                                       [100%]
2 passed in 0.01s
--- PASS: TestTotal (0.00s)
ok  \texample.com/cart\t0.002s
";
}
