//! Which tests a run reported as passed, by name, from the runners' lines
//! for each test; fed one line at a time like [`super::tally::Tally`].
//!
//! A count of passes is not evidence that *the target* passed: a filter
//! that matches another test, or a command that ignores its target, passes
//! other tests. The verifier says "fixed" only when the target's own name
//! is among the passes ([`Passes::includes`]).
//!
//! Recognised: pytest (`-v`: `path::Class::test PASSED [ 50%]`; `-rp`/`-rA`
//! and xdist: `PASSED path::Class::test`), unittest `-v` (`test_total
//! (pkg.mod.Class.test_total) ... ok`, also 3.10's `(pkg.mod.Class)`, a
//! docstring line or the test's own output before the `ok`), libtest
//! (`test tests::total ... ok`), cargo nextest (`PASS [ 0.01s] crate::bin
//! tests::total`), go test -v (`--- PASS: TestTotal/case (0.00s)`), and
//! the check-mark lines of jest, vitest and mocha (`✓ adds prices (3 ms)`,
//! `✓ src/cart.test.ts > Cart > adds prices 1ms`).

use super::failures::strip_ansi;
use crate::testfind::{self, Lang};

/// How many passed names are kept: a huge suite's names beyond it are not
/// needed to tell whether a filtered run passed its target.
const MAX_NAMES: usize = 20_000;
/// A longer "name" is not a test's name.
const MAX_NAME_BYTES: usize = 1_000;

/// The tests a run reported as passed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Passes {
    names: Vec<Passed>,
    /// Passed lines seen beyond [`MAX_NAMES`].
    pub dropped: u32,
    /// A unittest `-v` test whose `ok` has not come yet. (A `Box<str>`:
    /// every command result holds a `Passes`, keep it small.)
    unittest_pending: Option<Box<str>>,
}

/// One passed test as its runner named it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Passed {
    id: String,
    /// Only the test's own title (jest, mocha): its describe blocks and
    /// file are on other lines.
    title_only: bool,
    /// A JUnit report's `classname` (a module, class, package or the
    /// describe blocks), apart from the name.
    class: Option<String>,
}

impl Passes {
    /// The passes of a whole output (for fakes and tests).
    pub fn of(output: &str) -> Self {
        let mut passes = Self::default();
        for line in output.lines() {
            passes.line(line);
        }
        passes
    }

    /// The names, as the runner printed them.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|p| p.id.as_str())
    }

    /// Feeds one line of output, without its line terminator.
    pub fn line(&mut self, line: &str) {
        let line = strip_ansi(line);
        let line = line.trim();
        if let Some((id, title_only)) = self.passed_on(line) {
            self.add(id, title_only);
        }
    }

    fn add(&mut self, id: String, title_only: bool) {
        if id.is_empty() || id.len() > MAX_NAME_BYTES {
            return;
        }
        if self.names.len() >= MAX_NAMES {
            self.dropped = self.dropped.saturating_add(1);
            return;
        }
        self.names.push(Passed {
            id,
            title_only,
            class: None,
        });
    }

    /// A passed `<testcase classname=… name=…>` of a JUnit report.
    pub fn report_case(&mut self, class: &str, name: &str) {
        self.add(name.to_owned(), false);
        if let Some(last) = self.names.last_mut()
            && last.id == name
            && last.class.is_none()
        {
            last.class = Some(class.to_owned());
        }
    }

    /// The test this line reports as passed, if it does.
    fn passed_on(&mut self, line: &str) -> Option<(String, bool)> {
        if let Some(found) = self.unittest(line) {
            return found.map(|id| (id, false));
        }
        if let Some(rest) = line.strip_prefix("test ") {
            // libtest: `test tests::total ... ok`, `test x - should panic ... ok`.
            let name = rest.strip_suffix(" ... ok")?;
            let name = name.strip_suffix(" - should panic").unwrap_or(name);
            return Some((name.trim().to_owned(), false));
        }
        if let Some(rest) = line.strip_prefix("--- PASS: ") {
            // go test -v.
            let name = rest.rsplit_once(" (").map_or(rest, |(name, _)| name);
            return Some((name.trim().to_owned(), false));
        }
        if let Some(rest) = line.strip_prefix("PASS [") {
            // nextest: the last word is the test, the one before its binary.
            let mut words = rest.split_whitespace().rev();
            let test = words.next()?;
            let binary = words.next().filter(|b| b.contains("::"));
            return Some((
                binary.map_or(test.to_owned(), |b| format!("{b}::{test}")),
                false,
            ));
        }
        if let Some(rest) = ["✓ ", "✔ ", "√ "]
            .iter()
            .find_map(|mark| line.strip_prefix(mark))
        {
            let rest = rest.trim();
            // vitest's workspace projects come first: `|web| src/a.test.ts > …`.
            let rest = match rest.strip_prefix('|').and_then(|r| r.split_once("| ")) {
                Some((_, after)) => after,
                None => rest,
            };
            let title = strip_duration(rest);
            let title_only = !title.contains(" > ");
            return Some((title.to_owned(), title_only));
        }
        pytest(line).map(|id| (id, false))
    }

    /// unittest `-v`: `Some(found)` when the line is one of its per-test
    /// lines (`found` is the passed test, if this line finishes one).
    fn unittest(&mut self, line: &str) -> Option<Option<String>> {
        if let Some((id, rest)) = unittest_head(line) {
            self.unittest_pending = None;
            return Some(match rest.strip_prefix(" ...") {
                Some(status) if status.trim() == "ok" => Some(id),
                // FAIL, ERROR, skipped, expected failure: not a pass.
                Some(status) if is_unittest_status(status.trim()) => None,
                // A docstring line or the test's own output comes first.
                _ => {
                    self.unittest_pending = Some(id.into_boxed_str());
                    None
                }
            });
        }
        let pending = self.unittest_pending.as_ref()?;
        if line == "ok" || line.ends_with(" ... ok") {
            let id = pending.to_string();
            self.unittest_pending = None;
            return Some(Some(id));
        }
        let status = line.rsplit_once(" ... ").map_or(line, |(_, s)| s);
        if is_unittest_status(status) || line.starts_with("Ran ") || line.starts_with("----") {
            self.unittest_pending = None;
            return Some(None);
        }
        None
    }

    /// Whether `id`, a test as a runner named it (failed or passed), is
    /// the test `name` of the file `path`, by the rules of
    /// [`Passes::includes`]: how a front end finds a failed test in a file.
    pub fn names_test(id: &str, path: &str, name: &str) -> bool {
        let one = Passes {
            names: vec![Passed {
                id: id.to_owned(),
                title_only: false,
                class: None,
            }],
            ..Passes::default()
        };
        one.includes(path, name)
    }

    /// Whether the run reported the test `name` of the file `path` (a
    /// workspace-relative path, as the task names it) as passed.
    pub fn includes(&self, path: &str, name: &str) -> bool {
        let lang = testfind::lang_for_path(path);
        let target = components(name, lang);
        if target.is_empty() {
            return false;
        }
        self.names.iter().any(|p| {
            if let Some(class) = &p.class {
                return report_case_is(class, &p.id, path, &target, lang);
            }
            let (file, parts) = split_id(&p.id, lang);
            if let Some(file) = file
                && !same_file(file, path)
            {
                return false;
            }
            if p.title_only {
                // Only the title is printed: it must be the target's own.
                return target.ends_with(&parts);
            }
            if !parts.ends_with(&target) {
                return false;
            }
            // What comes before the name is a module: it must be the
            // target file's (another file's test may have the same name).
            let module = &parts[..parts.len() - target.len()];
            match lang {
                Some(Lang::Python) => file.is_some() || module_is_file(module, path),
                Some(Lang::Rust) => rust_module_is_file(module, path),
                _ => true,
            }
        })
    }
}

/// Whether a JUnit case is the target. Reports spell it their runner's
/// way: pytest `classname="tests.test_cart.TestCart" name="test_total"`,
/// go `classname="example.com/cart" name="TestTotal/empty"`, nextest
/// `name="tests::total"`, vitest `name="Cart > adds prices"`, jest-junit
/// `name="Cart adds prices"` (describe blocks and title joined by spaces).
fn report_case_is(
    class: &str,
    name: &str,
    path: &str,
    target: &[String],
    lang: Option<Lang>,
) -> bool {
    let ends_with_target = |id: &str| components(id, lang).ends_with(target);
    match lang {
        Some(Lang::Python) => {
            let dotted = format!("{class}.{name}");
            let parts = components(&dotted, lang);
            parts.ends_with(target) && module_is_file(&parts[..parts.len() - target.len()], path)
        }
        Some(Lang::JavaScript) => ends_with_target(name) || name == target.join(" "),
        _ => ends_with_target(name) || ends_with_target(&format!("{class}::{name}")),
    }
}

/// unittest's closing words for a test other than `ok`.
fn is_unittest_status(status: &str) -> bool {
    matches!(
        status,
        "FAIL" | "ERROR" | "expected failure" | "unexpected success"
    ) || status.starts_with("skipped")
}

/// `test_total (pkg.mod.Class.test_total)…` → the dotted name and what
/// follows the parenthesis; 3.10's `(pkg.mod.Class)` gets the method added.
fn unittest_head(line: &str) -> Option<(String, &str)> {
    let (method, rest) = line.split_once(" (")?;
    if !is_identifier(method) {
        return None;
    }
    let (dotted, rest) = rest.split_once(')')?;
    if !dotted.contains('.') || !dotted.split('.').all(is_identifier) {
        return None;
    }
    let id = if dotted.ends_with(&format!(".{method}")) {
        dotted.to_owned()
    } else {
        format!("{dotted}.{method}")
    };
    Some((id, rest))
}

fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// pytest: a word `PASSED` and a node id (`path::name`) on the line.
fn pytest(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if !words.contains(&"PASSED") {
        return None;
    }
    words
        .iter()
        .find(|w| w.contains("::"))
        .map(|id| (*id).to_owned())
}

/// `adds prices (3 ms)`, `adds prices (45ms)`, `adds prices 1ms` →
/// `adds prices` (jest, mocha and vitest write durations in ms).
fn strip_duration(title: &str) -> &str {
    let is_number = |n: &str| !n.is_empty() && n.parse::<f64>().is_ok();
    let Some((head, last)) = title.rsplit_once(' ') else {
        return title;
    };
    let bare = last.trim_start_matches('(').trim_end_matches(')');
    if let Some(n) = bare.strip_suffix("ms")
        && is_number(n)
    {
        return head.trim_end();
    }
    if last == "ms)"
        && let Some((head, n)) = head.rsplit_once(" (")
        && is_number(n)
    {
        return head.trim_end();
    }
    title
}

/// A test name's parts in its language: `TestCart.test_total`,
/// `tests::total`, `TestTotal/case`, `Cart > adds prices`. Parameters
/// (`test_total[1]`) and call parentheses are not part of the name.
fn components(name: &str, lang: Option<Lang>) -> Vec<String> {
    let mut name = name.trim().trim_end_matches("()");
    // Parameters can hold any text (`test_total[1.5-a::b]`).
    if lang == Some(Lang::Python)
        && name.ends_with(']')
        && let Some(open) = name.find('[')
    {
        name = &name[..open];
    }
    let parts: Vec<&str> = match lang {
        Some(Lang::Python) => name.split("::").flat_map(|p| p.split('.')).collect(),
        Some(Lang::Rust) => name.split("::").collect(),
        Some(Lang::Go) => name.split('/').collect(),
        Some(Lang::JavaScript) => name.split(" > ").flat_map(|p| p.split(" › ")).collect(),
        None => name.split("::").collect(),
    };
    parts
        .into_iter()
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}

/// A passed id's file (pytest's and vitest's first part), and its name's
/// parts.
fn split_id(id: &str, lang: Option<Lang>) -> (Option<&str>, Vec<String>) {
    let separator = if id.contains("::") {
        "::"
    } else if id.contains(" > ") {
        " > "
    } else {
        return (None, components(id, lang));
    };
    match id.split_once(separator) {
        Some((first, rest)) if testfind::lang_for_path(first).is_some() => {
            (Some(first), components(rest, lang))
        }
        _ => (None, components(id, lang)),
    }
}

/// Whether two paths name the same file, one possibly relative to a
/// deeper root than the other (`tests/test_cart.py`, `test_cart.py`).
fn same_file(a: &str, b: &str) -> bool {
    let a = a.trim_start_matches("./");
    let b = b.trim_start_matches("./");
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}

/// Whether libtest's module path before the test's own (`cart` in
/// `cart::tests::total`, `rein-core::cart` from nextest) is the target
/// file's module (`src/cart.rs`, `src/cart/mod.rs`); a file that is a
/// crate root or outside `src/` (an integration test) has none to check.
fn rust_module_is_file(module: &[String], path: &str) -> bool {
    let Some((_, in_src)) = path.rsplit_once("src/") else {
        return true;
    };
    let stem = in_src.strip_suffix(".rs").unwrap_or(in_src);
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    let file: Vec<&str> = stem.split('/').collect();
    if matches!(file.as_slice(), ["lib" | "main"] | ["bin", _]) || module.is_empty() {
        return true;
    }
    module.len() >= file.len()
        && module[module.len() - file.len()..]
            .iter()
            .zip(&file)
            .all(|(m, f)| m == f)
}

/// Whether unittest's module parts (`tests`, `test_cart`) are the file
/// `path` (`tests/test_cart.py`), from the same root or a deeper one.
fn module_is_file(module: &[String], path: &str) -> bool {
    if module.is_empty() {
        return true;
    }
    let stem = path.rsplit_once('.').map_or(path, |(stem, _)| stem);
    same_file(&module.join("/"), stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real output of each runner, and the names it reports as passed.
    const CASES: &[(&str, &str, &[&str])] = &[
        (
            "pytest -v",
            "tests/test_cart.py::TestCart::test_total PASSED                   [ 50%]\ntests/test_cart.py::TestCart::test_count FAILED                   [100%]",
            &["tests/test_cart.py::TestCart::test_total"],
        ),
        (
            "pytest -rp",
            "..F\n=========================== short test summary info ============================\nPASSED tests/test_cart.py::test_total[1]\nFAILED tests/test_cart.py::test_count - assert 0 == 2",
            &["tests/test_cart.py::test_total[1]"],
        ),
        (
            "pytest xdist",
            "[gw0] [ 50%] PASSED tests/test_cart.py::test_total",
            &["tests/test_cart.py::test_total"],
        ),
        (
            "unittest -v (3.11)",
            "test_count (tests.test_cart.TestCart.test_count) ... FAIL\ntest_total (tests.test_cart.TestCart.test_total) ... ok\ntest_skip (tests.test_cart.TestCart.test_skip) ... skipped 'later'",
            &["tests.test_cart.TestCart.test_total"],
        ),
        (
            "unittest -v (3.10)",
            "test_total (tests.test_cart.TestCart) ... ok",
            &["tests.test_cart.TestCart.test_total"],
        ),
        (
            "unittest -v with a docstring and output",
            "test_total (test_cart.TestCart.test_total)\nSums the prices. ... computing\nok\ntest_count (test_cart.TestCart.test_count)\nCounts. ... FAIL\nok\ntest_empty (test_cart.TestCart.test_empty) ... printing\nok",
            &[
                "test_cart.TestCart.test_total",
                "test_cart.TestCart.test_empty",
            ],
        ),
        (
            "libtest",
            "running 3 tests\ntest tests::total ... ok\ntest tests::count ... FAILED\ntest tests::later ... ignored\ntest tests::boom - should panic ... ok",
            &["tests::total", "tests::boom"],
        ),
        (
            "nextest",
            "        PASS [   0.025s] (6/8) cart::cart tests::total\n        FAIL [   0.020s] (7/8) cart::cart tests::count",
            &["cart::cart::tests::total"],
        ),
        (
            "go -v",
            "=== RUN   TestTotal\n=== RUN   TestTotal/empty\n    --- PASS: TestTotal/empty (0.00s)\n--- PASS: TestTotal (0.00s)\n--- SKIP: TestLater (0.00s)\n--- FAIL: TestCount (0.00s)",
            &["TestTotal/empty", "TestTotal"],
        ),
        (
            "jest --verbose",
            "PASS src/cart.test.js\n  Cart\n    ✓ adds prices (3 ms)\n    ✕ counts (2 ms)\n    ○ skipped later",
            &["adds prices"],
        ),
        (
            "vitest verbose",
            " ✓ src/cart.test.ts > Cart > adds prices 1ms\n ↓ src/cart.test.ts > Cart > later\n × src/cart.test.ts > Cart > counts 2ms",
            &["src/cart.test.ts > Cart > adds prices"],
        ),
        (
            "vitest workspace project",
            " ✓ |web| src/cart.test.ts > Cart > adds prices 1ms",
            &["src/cart.test.ts > Cart > adds prices"],
        ),
        (
            "mocha",
            "  Cart\n    ✔ adds prices\n    ✔ handles programs\n    1) counts",
            &["adds prices", "handles programs"],
        ),
    ];

    #[test]
    fn each_runners_passed_tests_are_named() {
        for (runner, output, names) in CASES {
            let passes = Passes::of(output);
            assert_eq!(
                passes.names().collect::<Vec<_>>(),
                names.to_vec(),
                "{runner}"
            );
        }
    }

    #[test]
    fn output_without_per_test_lines_names_no_test() {
        for output in [
            "",
            "...\nRan 3 tests in 0.001s\n\nOK",
            "3 passed in 0.02s",
            "test result: ok. 1 passed; 0 failed",
            "ok  \texample.com/cart\t0.002s",
            "all good: PASSED",
            "Tests: 2 passed, 2 total",
            // A test's own output is not unittest's verdict.
            "ok",
            "test_x (a.B.test_x) ... FAIL\nok",
            "test_x (a.B.test_x)\n----------------------------------------------------------------------\nok",
            "test_x (a.B.test_x)\nRan 1 test in 0.001s\nok",
            // Parentheses that hold no dotted name of identifiers.
            "building (release) ... ok",
            "test_x (a.1b.test_x) ... ok",
            "building... ok",
        ] {
            let passes = Passes::of(output);
            assert!(
                passes.names().next().is_none(),
                "{output:?} gave {passes:?}"
            );
        }
    }

    /// (task's test file, task's test name, a runner's output, whether the
    /// output shows that test passing).
    const TARGETS: &[(&str, &str, &str, bool)] = &[
        (
            "tests/test_cart.py",
            "TestCart.test_total",
            "tests/test_cart.py::TestCart::test_total PASSED",
            true,
        ),
        (
            "tests/test_cart.py",
            "TestCart.test_total",
            "test_total (tests.test_cart.TestCart.test_total) ... ok",
            true,
        ),
        (
            "tests/test_cart.py",
            "TestCart.test_total",
            // The run was rooted in tests/.
            "test_total (test_cart.TestCart.test_total) ... ok",
            true,
        ),
        (
            "tests/test_cart.py",
            "test_total",
            "PASSED tests/test_cart.py::test_total[1.5-a::b]",
            true,
        ),
        (
            "tests/test_cart.py",
            "TestCart.test_total",
            // Another file's test of the same name.
            "tests/test_shop.py::TestCart::test_total PASSED",
            false,
        ),
        (
            "tests/test_cart.py",
            "TestCart.test_total",
            "test_total (tests.test_shop.TestCart.test_total) ... ok",
            false,
        ),
        (
            "tests/test_cart.py",
            "TestCart.test_total",
            // A filter that matched a longer name.
            "test_total_with_tax (tests.test_cart.TestCart.test_total_with_tax) ... ok",
            false,
        ),
        (
            "tests/test_cart.py",
            "TestCart.test_total",
            "test_total (tests.test_cart.TestShop.test_total) ... ok",
            false,
        ),
        (
            "src/cart.rs",
            "tests::total",
            "test cart::tests::total ... ok",
            true,
        ),
        (
            "src/cart.rs",
            "tests::total",
            "test tests::total_with_tax ... ok",
            false,
        ),
        (
            // Another module's test of the same name.
            "src/cart.rs",
            "tests::total",
            "test shop::tests::total ... ok",
            false,
        ),
        (
            "server/core/src/os/cart/mod.rs",
            "tests::total",
            "PASS [   0.010s] rein-core os::cart::tests::total",
            true,
        ),
        (
            "src/lib.rs",
            "tests::total",
            "test tests::total ... ok",
            true,
        ),
        ("tests/cart.rs", "total", "test total ... ok", true),
        (
            // A package deeper than the test run's root.
            "src/shop/tests/test_cart.py",
            "TestCart.test_total",
            "test_total (src.shop.tests.test_cart.TestCart.test_total) ... ok",
            true,
        ),
        (
            "cart_test.go",
            "TestTotal",
            "--- PASS: TestTotal (0.00s)",
            true,
        ),
        (
            "cart_test.go",
            "TestTotal",
            "--- PASS: TestTotalTax (0.00s)",
            false,
        ),
        (
            "src/cart.test.js",
            "Cart > adds prices",
            "    ✓ adds prices (3 ms)",
            true,
        ),
        (
            "src/cart.test.ts",
            "Cart > adds prices",
            " ✓ src/cart.test.ts > Cart > adds prices 1ms",
            true,
        ),
        (
            "src/cart.test.ts",
            "Cart > adds prices",
            " ✓ src/other.test.ts > Cart > adds prices 1ms",
            false,
        ),
        (
            "src/cart.test.js",
            "Cart > adds prices",
            "    ✓ adds prices twice (3 ms)",
            false,
        ),
    ];

    #[test]
    fn only_the_targets_own_name_shows_it_passed() {
        for (path, name, output, shown) in TARGETS {
            assert_eq!(
                Passes::of(output).includes(path, name),
                *shown,
                "{path} {name} in {output:?}"
            );
        }
    }

    /// (task's test file and name, a report's classname and name, whether
    /// that case is the target).
    const REPORT_CASES: &[(&str, &str, &str, &str, bool)] = &[
        (
            "tests/test_cart.py",
            "TestCart.test_total",
            "tests.test_cart.TestCart",
            "test_total",
            true,
        ),
        (
            "tests/test_cart.py",
            "TestCart.test_total",
            "tests.test_shop.TestCart",
            "test_total",
            false,
        ),
        (
            "tests/test_cart.py",
            "TestCart.test_total",
            "tests.test_cart.TestCart",
            "test_total_tax",
            false,
        ),
        (
            "tests/test_cart.py",
            "test_total",
            "tests.test_cart",
            "test_total[1]",
            true,
        ),
        (
            "cart_test.go",
            "TestTotal/empty",
            "example.com/cart",
            "TestTotal/empty",
            true,
        ),
        (
            "cart_test.go",
            "TestTotal",
            "example.com/cart",
            "TestTotalTax",
            false,
        ),
        (
            "src/cart.rs",
            "tests::total",
            "cart::cart",
            "tests::total",
            true,
        ),
        (
            "src/cart.test.ts",
            "Cart > adds prices",
            "src/cart.test.ts",
            "Cart > adds prices",
            true,
        ),
        (
            "src/cart.test.js",
            "Cart > adds prices",
            "Cart adds prices",
            "Cart adds prices",
            true,
        ),
        (
            "src/cart.test.js",
            "Cart > adds prices",
            "Cart adds prices twice",
            "Cart adds prices twice",
            false,
        ),
    ];

    #[test]
    fn a_report_case_is_the_target_only_by_its_own_name() {
        for (path, name, class, case, shown) in REPORT_CASES {
            let mut passes = Passes::default();
            passes.report_case(class, case);
            assert_eq!(
                passes.includes(path, name),
                *shown,
                "{path} {name} vs {class} {case}"
            );
        }
    }

    #[test]
    fn names_are_bounded() {
        let mut passes = Passes::default();
        passes.line(&format!("test {} ... ok", "x".repeat(MAX_NAME_BYTES + 1)));
        passes.line(&format!("test {} ... ok", "y".repeat(MAX_NAME_BYTES)));
        assert_eq!(passes.names().count(), 1, "only the name within bounds");
        for i in 1..MAX_NAMES + 5 {
            passes.line(&format!("test t{i} ... ok"));
        }
        assert_eq!(passes.names().count(), MAX_NAMES);
        assert_eq!(passes.dropped, 5);
    }
}
