//! What a front end is told of a run's tests ([`TaskEvent::TestOutcomes`]):
//! the names a run showed failing and passing, so an editor can mark a
//! failing test as one Rein can fix (a CodeLens) and take the mark away
//! once a later run shows it passing.
//!
//! The names come from test output, which the repository controls: each
//! is kept only if it is short, on one line, free of control and
//! disguising characters, and any file it names is a relative path that
//! stays inside the workspace. The lists are bounded whatever the suite's
//! size. A name that is dropped only means no mark: nothing is cut, since
//! a cut name could name another test.

use std::collections::HashSet;

use crate::exec::CommandResult;
use crate::ports::{Evidence, TaskEvent};
use crate::task::{Acceptance, TaskSpec};

/// At most this many failed names per event (a run with more has a
/// bigger problem than any one test).
pub const MAX_FAILED: usize = 200;
/// At most this many passed names per event: enough for a large suite's
/// run to take back the marks of the tests it passed.
pub const MAX_PASSED: usize = 2_000;
/// A longer name is no test's name.
pub const MAX_NAME_BYTES: usize = 300;

/// `name` if it may be shown and matched: see the module's documentation.
pub fn clean(name: &str) -> Option<&str> {
    let name = name.trim();
    if name.is_empty()
        || name.len() > MAX_NAME_BYTES
        || name
            .chars()
            .any(|c| c.is_control() || crate::inert::disguises(c))
    {
        return None;
    }
    if let Some((file, _)) = name.split_once("::")
        && !file_stays_inside(file)
    {
        return None;
    }
    // A name with no `::` that is a path (`/etc/x.py`, `C:\x`, `../x`).
    if !name.contains("::") && !file_stays_inside(name.split_whitespace().next().unwrap_or("")) {
        return None;
    }
    Some(name)
}

/// Whether `file`, the part of a name before `::` (a file, a module or a
/// crate), is no absolute path and does not climb out of the workspace.
fn file_stays_inside(file: &str) -> bool {
    let absolute = file.starts_with(['/', '\\', '~'])
        || file.as_bytes().get(1) == Some(&b':')
        || file.contains(":\\")
        || file.contains(":/");
    !absolute && !file.split(['/', '\\']).any(|part| part == "..")
}

/// The event for a run, if it names any test: `failed` and `passed`
/// cleaned, deduplicated and bounded; a name in both counts as passed
/// (the later word of the run).
pub fn event<'a>(
    failed: impl IntoIterator<Item = &'a str>,
    passed: impl IntoIterator<Item = &'a str>,
) -> Option<TaskEvent> {
    let passed = bounded(passed, MAX_PASSED, &HashSet::new());
    let passed_set: HashSet<&str> = passed.iter().map(String::as_str).collect();
    let failed = bounded(failed, MAX_FAILED, &passed_set);
    if failed.is_empty() && passed.is_empty() {
        return None;
    }
    Some(TaskEvent::TestOutcomes { failed, passed })
}

fn bounded<'a>(
    names: impl IntoIterator<Item = &'a str>,
    max: usize,
    except: &HashSet<&str>,
) -> Vec<String> {
    let mut seen = HashSet::new();
    names
        .into_iter()
        .filter_map(clean)
        .filter(|n| !except.contains(n) && seen.insert(*n))
        .take(max)
        .map(str::to_owned)
        .collect()
}

/// What a test command's run showed (the model's `run_tests`).
pub fn of_run(result: &CommandResult) -> Option<TaskEvent> {
    event(
        result.failures.iter().map(String::as_str),
        result.passes.names(),
    )
}

/// What the verifier's checks showed: the failures in their evidence,
/// and, when it verified the claim, the task's target tests as passed
/// (named as a runner selects them: `tests/test_cart.py::TestCart::test_total`).
pub fn of_verdict(task: &TaskSpec, verified: bool, evidence: &[Evidence]) -> Option<TaskEvent> {
    let targets: Vec<String> = if verified {
        task.acceptance
            .iter()
            .filter_map(|a| match a {
                Acceptance::TestPasses { path, name } => {
                    Some(crate::verify::test_target(path, name))
                }
                _ => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    event(
        evidence
            .iter()
            .flat_map(|e| e.failures.iter().map(String::as_str)),
        targets.iter().map(String::as_str),
    )
}

/// A name's key for telling whether two runners' names are one test:
/// pytest's `tests/test_cart.py::TestCart::test_total` and unittest's
/// `tests.test_cart.TestCart.test_total` are both
/// `tests.test_cart.TestCart.test_total`; parameters and `()` dropped.
pub fn key(name: &str) -> String {
    let mut name = name.trim().trim_end_matches("()");
    if name.ends_with(']')
        && let Some(open) = name.find('[')
    {
        name = &name[..open];
    }
    name.replace(".py::", "::")
        .split(['/', '\\', '.', ':', ' ', '>'])
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether two names a runner printed are the same test: their keys are
/// equal, or one is the other's tail after a module prefix (nextest and
/// libtest, pytest run from another directory).
pub fn same_test(a: &str, b: &str) -> bool {
    same_key(&key(a), &key(b))
}

/// [`same_test`] of two names' [`key`]s (for comparing many names).
pub fn same_key(a: &str, b: &str) -> bool {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    !short.is_empty()
        && (long == short
            || long
                .strip_suffix(short)
                .is_some_and(|head| head.ends_with('.')))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn lists(event: Option<TaskEvent>) -> (Vec<String>, Vec<String>) {
        match event {
            Some(TaskEvent::TestOutcomes { failed, passed }) => (failed, passed),
            None => (Vec::new(), Vec::new()),
            Some(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn names_are_kept_or_dropped() {
        let cases = [
            ("tests/test_cart.py::TestCart::test_total", true),
            ("tests.test_cart.TestCart.test_total", true),
            ("cart::tests::total", true),
            ("TestTotal/empty", true),
            ("Cart > adds prices", true),
            ("  test_total  ", true),
            ("", false),
            ("/etc/passwd::test_x", false),
            ("../outside/test_x.py::test_x", false),
            ("tests/../../x.py::test_x", false),
            ("C:\\x\\test_x.py::test_x", false),
            ("~/x.py::test_x", false),
            ("/abs/test_x.py", false),
            ("test_\u{202e}latot", false),
            ("test\x1b[31mred", false),
            ("test\rfake", false),
        ];
        for (name, kept) in cases {
            assert_eq!(clean(name).is_some(), kept, "{name:?}");
        }
    }

    /// Regression (hostile output): a 10 MB name is dropped, not cut.
    #[test]
    fn a_huge_name_is_dropped() {
        let huge = format!("tests/test_cart.py::{}", "x".repeat(10_000_000));
        assert_eq!(lists(event([huge.as_str()], [])), (vec![], vec![]));
    }

    /// A suite of 100k tests: the lists stay bounded.
    #[test]
    fn the_lists_are_bounded() {
        let names: Vec<String> = (0..100_000).map(|i| format!("t::test_{i}")).collect();
        let (failed, passed) = lists(event(
            names.iter().map(String::as_str),
            names.iter().map(String::as_str),
        ));
        assert_eq!(passed.len(), MAX_PASSED);
        // Those passed are not failed as well.
        assert_eq!(failed.len(), MAX_FAILED);
        assert!(failed.iter().all(|f| !passed.contains(f)));
    }

    #[test]
    fn a_name_both_failed_and_passed_is_passed_and_repeats_count_once() {
        let (failed, passed) = lists(event(["a::x", "a::y", "a::y"], ["a::x"]));
        assert_eq!(failed, ["a::y"]);
        assert_eq!(passed, ["a::x"]);
        assert_eq!(event([], []), None);
    }

    #[test]
    fn runners_names_of_one_test_are_the_same_test() {
        let same = [
            (
                "tests/test_cart.py::TestCart::test_total",
                "tests.test_cart.TestCart.test_total",
                true,
            ),
            (
                "tests/test_cart.py::TestCart::test_total[1-2]",
                "tests.test_cart.TestCart.test_total",
                true,
            ),
            ("cart::tests::total", "tests::total", true),
            ("cart::tests::total", "tests::subtotal", false),
            (
                "tests.test_cart.TestCart.test_total",
                "tests.test_cart.TestCart.test_count",
                false,
            ),
            ("a::x", "", false),
        ];
        for (a, b, expected) in same {
            assert_eq!(same_test(a, b), expected, "{a} / {b}");
            assert_eq!(same_test(b, a), expected, "{b} / {a}");
        }
    }
}
