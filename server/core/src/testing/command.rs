//! A project's test command: which runner it uses and how to run one
//! test, file or package with it ([`TestCommand::for_target`]). Pure: how
//! a project's files say which runner it has is `os::testcmd::detect`.
//!
//! A target is a checked [`TestTarget`] (`path::name`, a path, or a name;
//! see [`crate::testtarget`]), never raw text: nothing in it starts with
//! `-` or `@`, so every argument made from it is a test, not an option.
//! Each runner gets the target in its own syntax, quoted for `sh`.

use serde::{Deserialize, Serialize};

use crate::testtarget::TestTarget;

/// The test runners Rein knows how to drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Runner {
    /// `cargo test` (a `Cargo.toml`).
    Cargo,
    /// `python3 -m pytest` (a pytest configuration or `conftest.py`).
    Pytest,
    /// `python3 -m unittest` (`test_*.py` files, no pytest configuration).
    Unittest,
    /// `npx vitest run` (vitest in `package.json`).
    Vitest,
    /// `npx jest` (jest in `package.json`).
    Jest,
    /// The package's `test` script, whatever it runs.
    Npm,
    /// `go test` (a `go.mod`).
    Go,
    /// A command configured by the user, with a `{target}` placeholder.
    Custom,
}

impl Runner {
    /// The command that runs the whole suite with this runner. For
    /// [`Runner::Custom`], which has none, an empty string.
    pub fn default_command(self) -> &'static str {
        match self {
            // `NO_COLOR` is set for every command, but cargo ignores it.
            Runner::Cargo => "cargo test --color never",
            Runner::Pytest => "python3 -m pytest -q",
            Runner::Unittest => "python3 -m unittest",
            Runner::Vitest => "npx vitest run",
            Runner::Jest => "npx jest",
            Runner::Npm => "npm test --",
            Runner::Go => "go test ./...",
            Runner::Custom => "",
        }
    }
}

/// How to run a project's tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestCommand {
    pub runner: Runner,
    /// The command that runs every test; for [`Runner::Custom`], the
    /// template with its `{target}` placeholder.
    pub base: String,
    /// JUnit XML files the command writes (the `test_report` setting), for
    /// the verifier when its output does not name the tests.
    pub report: Option<String>,
}

/// Where a target goes in a custom command.
pub const TARGET_PLACEHOLDER: &str = "{target}";

impl TestCommand {
    /// The runner with its usual command ([`Runner::default_command`]).
    pub fn new(runner: Runner) -> Self {
        Self {
            runner,
            base: runner.default_command().to_owned(),
            report: None,
        }
    }

    /// A user-configured command such as `make test T={target}`.
    pub fn custom(template: impl Into<String>) -> Self {
        Self {
            runner: Runner::Custom,
            base: template.into(),
            report: None,
        }
    }

    /// The same command, with the reports it writes.
    pub fn with_report(self, report: Option<String>) -> Self {
        Self { report, ..self }
    }

    /// The command running `target` (every test when `None`).
    pub fn for_target(&self, target: Option<&TestTarget>) -> String {
        if self.runner == Runner::Custom {
            return custom_command(&self.base, target);
        }
        let Some(target) = target else {
            return self.base.clone();
        };
        // Each runner is made to name the tests it passes (libtest and go
        // `-v` do anyway): the verifier looks for the target's name, since
        // a pass count does not say which test passed.
        let args = match self.runner {
            Runner::Cargo => cargo_args(target),
            Runner::Pytest => [vec!["-rfEp".to_owned()], pytest_args(target)].concat(),
            Runner::Unittest => unittest_args(target),
            Runner::Vitest => [vec!["--reporter=verbose".to_owned()], js_args(target)].concat(),
            Runner::Jest => [vec!["--verbose".to_owned()], js_args(target)].concat(),
            Runner::Npm => vec![quote(&target.to_string())],
            Runner::Go => return go_command(&self.base, target),
            Runner::Custom => Vec::new(),
        };
        join(&self.base, &args)
    }
}

// ---------------------------------------------------------------------------
// Targets in each runner's syntax.

/// `tests/cart.rs::total` → `--test cart total`: an integration test file
/// is its own test binary. Elsewhere only the name filters (libtest
/// filters are substrings of the full path, so `tests::total` matches
/// `cart::tests::total`). A path that is not a Rust file is a filter too.
fn cargo_args(target: &TestTarget) -> Vec<String> {
    let mut args = Vec::new();
    match target.path() {
        Some(path) if !path.ends_with(".rs") => return vec![quote(&target.to_string())],
        Some(path) => {
            if let Some(binary) = integration_test_binary(path) {
                args.push("--test".to_owned());
                args.push(quote(binary));
            }
        }
        None => {}
    }
    if let Some(name) = target.name() {
        args.push(quote(name));
    }
    args
}

/// The integration test binary a file is part of: `tests/cart.rs` and
/// `tests/cart/main.rs` are `cart` (also inside a workspace member).
fn integration_test_binary(path: &str) -> Option<&str> {
    let parts: Vec<&str> = path.split('/').collect();
    let at = parts.iter().rposition(|p| *p == "tests")?;
    match &parts[at + 1..] {
        [file] => file.strip_suffix(".rs"),
        [dir, "main.rs"] => Some(dir),
        _ => None,
    }
}

/// pytest takes node ids as they are; a name alone becomes `-k`.
fn pytest_args(target: &TestTarget) -> Vec<String> {
    match target.name() {
        Some(name) if target.path().is_none() => vec!["-k".to_owned(), quote(name)],
        _ => vec![quote(&target.to_string())],
    }
}

/// unittest takes dotted names: `tests/test_cart.py::TestCart::test_total`
/// → `tests.test_cart.TestCart.test_total`. A function outside a class has
/// no dotted name: its module runs with `-k` (Python 3.7+).
fn unittest_args(target: &TestTarget) -> Vec<String> {
    // `-v` names each test; discovery takes its options after `discover`.
    let verbose = "-v".to_owned();
    let Some(path) = target.path() else {
        let name = target.name().unwrap_or_default();
        // A dotted name is already unittest's syntax; a bare one filters.
        return if name.contains('.') {
            vec![verbose, quote(name)]
        } else {
            vec![verbose, "-k".to_owned(), quote(name)]
        };
    };
    if target.is_directory() {
        let dir = path.trim_end_matches('/');
        return ["discover", "-v", "-s", dir, "-t", "."].map(quote).to_vec();
    }
    let module = path.strip_suffix(".py").unwrap_or(path).replace('/', ".");
    let parts: Vec<&str> = target
        .name()
        .map(|n| n.split("::").collect())
        .unwrap_or_default();
    match parts.as_slice() {
        [] => vec![verbose, quote(&module)],
        [function] if function.starts_with("test") => {
            vec![verbose, quote(&module), "-k".to_owned(), quote(function)]
        }
        parts => vec![verbose, quote(&format!("{module}.{}", parts.join(".")))],
    }
}

/// jest and vitest: `[file] [-t name]`. `-t` is a regular expression
/// matched against the describe blocks and the title joined by spaces.
fn js_args(target: &TestTarget) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(path) = target.path() {
        args.push(quote(path));
    }
    if let Some(name) = target.name() {
        let words: Vec<&str> = name
            .split(" > ")
            .flat_map(|part| part.split(" › "))
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .collect();
        args.push("-t".to_owned());
        args.push(quote(&regex_escape(&words.join(" "))));
    }
    args
}

/// `go test <package> -run <pattern>`: the package is the file's
/// directory; `-run` takes one anchored expression per subtest level.
fn go_command(base: &str, target: &TestTarget) -> String {
    let package = match target.path() {
        Some(path) if target.is_directory() => go_package(path.trim_end_matches('/')),
        Some(path) => go_package(path.rsplit_once('/').map_or(".", |(dir, _)| dir)),
        None => "./...".to_owned(),
    };
    let command = base.strip_suffix(" ./...").unwrap_or(base);
    let mut args = vec![quote(&package)];
    if let Some(name) = target.name() {
        let levels: Vec<String> = name
            .split('/')
            .map(|level| format!("^{}$", regex_escape(level)))
            .collect();
        args.push("-run".to_owned());
        args.push(quote(&levels.join("/")));
        // Only `-v` prints `--- SKIP`: a skipped test otherwise looks
        // exactly like a passing one (`ok`), and the verifier must tell.
        args.push("-v".to_owned());
    }
    join(command, &args)
}

fn go_package(dir: &str) -> String {
    if dir == "." || dir.starts_with("./") || dir.starts_with('/') {
        dir.to_owned()
    } else {
        format!("./{dir}")
    }
}

/// Substitutes the quoted target for `{target}` (appends it when there is
/// no placeholder); without a target, the placeholder becomes nothing.
fn custom_command(template: &str, target: Option<&TestTarget>) -> String {
    let value = target.map(|t| quote(&t.to_string())).unwrap_or_default();
    if template.contains(TARGET_PLACEHOLDER) {
        template
            .replace(TARGET_PLACEHOLDER, &value)
            .trim()
            .to_owned()
    } else {
        join(template.trim(), &[value])
    }
}

fn join(base: &str, args: &[String]) -> String {
    let mut command = base.to_owned();
    for arg in args.iter().filter(|a| !a.is_empty()) {
        command.push(' ');
        command.push_str(arg);
    }
    command
}

/// Quotes `text` for `sh`: plain words stay as they are, anything else is
/// single-quoted (a `'` inside becomes `'\''`).
pub fn quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:-".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Escapes the characters that are special in the regular expressions of
/// go's `-run` and of jest/vitest's `-t`, so a name matches literally.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if r"\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------
// Detection.

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The target as `run_tests` reads it (blank: the whole suite).
    fn target(raw: Option<&str>) -> Option<TestTarget> {
        raw.and_then(|t| TestTarget::parse(t).unwrap())
    }

    fn run(runner: Runner, raw: Option<&str>) -> String {
        TestCommand::new(runner).for_target(target(raw).as_ref())
    }

    #[test]
    fn targets_in_each_runners_syntax() {
        use Runner::*;
        let cases: &[(Runner, Option<&str>, &str)] = &[
            (Cargo, None, "cargo test --color never"),
            (Cargo, Some("total"), "cargo test --color never total"),
            (
                Cargo,
                Some("cart::tests::total"),
                "cargo test --color never cart::tests::total",
            ),
            (
                Cargo,
                Some("tests/cart.rs::total"),
                "cargo test --color never --test cart total",
            ),
            (
                Cargo,
                Some("tests/cart.rs"),
                "cargo test --color never --test cart",
            ),
            (
                Cargo,
                Some("tests/cart/main.rs::a::b"),
                "cargo test --color never --test cart a::b",
            ),
            (
                Cargo,
                Some("crates/shop/tests/cart.rs::total"),
                "cargo test --color never --test cart total",
            ),
            (
                Cargo,
                Some("src/cart.rs::tests::total"),
                "cargo test --color never tests::total",
            ),
            (Cargo, Some("src/cart.rs"), "cargo test --color never"),
            (
                Cargo,
                Some("shop/cart"),
                "cargo test --color never shop/cart",
            ),
            (Pytest, None, "python3 -m pytest -q"),
            (
                Pytest,
                Some("tests/test_cart.py::test_total"),
                "python3 -m pytest -q -rfEp tests/test_cart.py::test_total",
            ),
            (
                Pytest,
                Some("./tests/test_cart.py::TestCart::test_total"),
                "python3 -m pytest -q -rfEp tests/test_cart.py::TestCart::test_total",
            ),
            (
                Pytest,
                Some("tests/test_cart.py::test_param[a - b]"),
                "python3 -m pytest -q -rfEp 'tests/test_cart.py::test_param[a - b]'",
            ),
            (Pytest, Some("tests/"), "python3 -m pytest -q -rfEp tests/"),
            (
                Pytest,
                Some("test_total"),
                "python3 -m pytest -q -rfEp -k test_total",
            ),
            (Unittest, None, "python3 -m unittest"),
            (
                Unittest,
                Some("tests/test_cart.py::TestCart::test_total"),
                "python3 -m unittest -v tests.test_cart.TestCart.test_total",
            ),
            (
                Unittest,
                Some("tests/test_cart.py"),
                "python3 -m unittest -v tests.test_cart",
            ),
            (
                Unittest,
                Some("tests/test_cart.py::TestCart"),
                "python3 -m unittest -v tests.test_cart.TestCart",
            ),
            (
                Unittest,
                Some("tests/test_cart.py::test_total"),
                "python3 -m unittest -v tests.test_cart -k test_total",
            ),
            (
                Unittest,
                Some("tests.test_cart.TestCart.test_total"),
                "python3 -m unittest -v tests.test_cart.TestCart.test_total",
            ),
            (
                Unittest,
                Some("test_total"),
                "python3 -m unittest -v -k test_total",
            ),
            (
                Unittest,
                Some("tests/"),
                "python3 -m unittest discover -v -s tests -t .",
            ),
            (Vitest, None, "npx vitest run"),
            (
                Vitest,
                Some("src/cart.test.ts::Cart > total"),
                "npx vitest run --reporter=verbose src/cart.test.ts -t 'Cart total'",
            ),
            (
                Vitest,
                Some("src/cart.test.ts > Cart > total is (zero)"),
                r"npx vitest run --reporter=verbose src/cart.test.ts -t 'Cart total is \(zero\)'",
            ),
            (
                Vitest,
                Some("src/cart.test.ts"),
                "npx vitest run --reporter=verbose src/cart.test.ts",
            ),
            (
                Jest,
                Some("Cart › total"),
                "npx jest --verbose -t 'Cart total'",
            ),
            (
                Jest,
                Some("Cart > handles a/b >= 2"),
                "npx jest --verbose -t 'Cart handles a/b >= 2'",
            ),
            (
                Jest,
                Some("src/cart.test.js::adds items"),
                "npx jest --verbose src/cart.test.js -t 'adds items'",
            ),
            (Npm, None, "npm test --"),
            (
                Npm,
                Some("src/cart.test.js"),
                "npm test -- src/cart.test.js",
            ),
            (Go, None, "go test ./..."),
            (
                Go,
                Some("pkg/cart/cart_test.go::TestTotal"),
                "go test ./pkg/cart -run '^TestTotal$' -v",
            ),
            (
                Go,
                Some("cart_test.go::TestTotal"),
                "go test . -run '^TestTotal$' -v",
            ),
            (
                Go,
                Some("pkg/cart/cart_test.go::TestTotal/empty_cart"),
                "go test ./pkg/cart -run '^TestTotal$/^empty_cart$' -v",
            ),
            (Go, Some("TestTotal"), "go test ./... -run '^TestTotal$' -v"),
            (
                Go,
                Some("TestTotal/empty"),
                "go test ./... -run '^TestTotal$/^empty$' -v",
            ),
            (Go, Some("pkg/Testdata"), "go test ./pkg/Testdata"),
            (Go, Some("pkg/cart"), "go test ./pkg/cart"),
            (Go, Some("./pkg/..."), "go test ./pkg/..."),
        ];
        for (runner, target, expected) in cases {
            assert_eq!(run(*runner, *target), *expected, "{runner:?} {target:?}");
        }
    }

    #[test]
    fn blank_targets_run_everything() {
        assert_eq!(run(Runner::Go, Some("  ")), "go test ./...");
        assert_eq!(run(Runner::Pytest, Some("")), "python3 -m pytest -q");
    }

    #[test]
    fn custom_commands_take_the_target_in_place() {
        let make = TestCommand::custom("make test T={target}");
        assert_eq!(
            make.for_target(target(Some("cart total")).as_ref()),
            "make test T='cart total'"
        );
        assert_eq!(make.for_target(None), "make test T=");
        let spaced = TestCommand::custom("./run-tests {target}");
        assert_eq!(spaced.for_target(None), "./run-tests");
        let bare = TestCommand::custom("./check.sh");
        assert_eq!(
            bare.for_target(target(Some("x.py")).as_ref()),
            "./check.sh x.py"
        );
        assert_eq!(bare.for_target(None), "./check.sh");
    }

    #[test]
    fn quoting_is_safe_for_sh() {
        assert_eq!(quote("tests/a.py::b-c_1"), "tests/a.py::b-c_1");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("$(rm -rf ~)"), "'$(rm -rf ~)'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("a;b`c`"), "'a;b`c`'");
    }

    #[test]
    fn hostile_targets_stay_one_argument() {
        let out = run(Runner::Cargo, Some("x'; touch /tmp/pwned; echo '"));
        assert_eq!(
            out,
            r"cargo test --color never 'x'\''; touch /tmp/pwned; echo '\'''"
        );
        let out = run(Runner::Go, Some("a/b_test.go::Test$(id)"));
        assert_eq!(out, r"go test ./a -run '^Test\$\(id\)$' -v");
    }
}
