//! The report of Rein's own test runner (`rein_runner.py`, see
//! [`super::isolated`]) and what it says about the target test: whether
//! the runner saw it pass, and whether anything in the run makes its word
//! worthless — the process ended before the report was written (what it
//! printed was never the runner's), the test framework was replaced while
//! the tests ran, the process ended otherwise than the runner did, or the
//! test that ran is not the target's own code in the target's own file.
//! Pure: the host reads the file ([`PrivateReport`]).

use serde::Deserialize;

use super::passes::Passes;
use crate::exec::PrivateReport;

/// What `rein_runner.py` writes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct RunnerReport {
    #[serde(default)]
    pub runner: String,
    /// What the runner itself ended with.
    #[serde(default)]
    pub exit_status: Option<i64>,
    #[serde(default)]
    pub tests: Vec<ReportedTest>,
    /// What was found replaced, removed or added at the end of the run.
    #[serde(default)]
    pub tampered: Vec<String>,
    /// The workspace's files the run imported (workspace-relative).
    #[serde(default)]
    pub imported: Vec<String>,
    /// The workspace's files pytest loaded as plugins.
    #[serde(default)]
    pub plugins: Vec<String>,
    /// The runner itself failed.
    #[serde(default)]
    pub error: Option<String>,
}

/// One test as the runner saw it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ReportedTest {
    /// Dotted module and classes, as JUnit XML's `classname`.
    pub class: String,
    pub name: String,
    pub outcome: Outcome,
    /// Where the code that ran is defined: workspace-relative, else absolute.
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub line: Option<u32>,
    /// The file of the module the test's class (or function) came from.
    #[serde(default)]
    pub module_file: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Started, never finished.
    Running,
    Passed,
    /// Skipped, or an expected failure.
    Skipped,
    /// Failed, errored, or an unexpected success.
    Failed,
}

/// What the report says about the target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// The runner saw the target pass, its own code in its own file,
    /// nothing replaced, and the process ended as the runner did.
    Passed,
    NotPassed(NotPassed),
    /// The run cannot be taken at its word: why, each for the user.
    Distrusted(Vec<String>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotPassed {
    Failed,
    Skipped,
    /// The runner never ran it (or left no report).
    NotRun,
}

/// How many replaced names a reason lists.
const SHOWN: usize = 5;

/// Parses the report's text.
pub fn parse(text: &str) -> Result<RunnerReport, String> {
    serde_json::from_str(text).map_err(|e| format!("not Rein's runner report ({e})"))
}

/// The test a report is read for.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// Its file, workspace-relative.
    pub path: &'a str,
    pub name: &'a str,
    /// Whether its code is in that file's text (not inherited from a base
    /// class elsewhere): then the code that ran must come from there.
    pub defined_here: bool,
}

/// What `report` says about `target`, for a process that ended with
/// `exit_code` (`None`: killed); with the parsed report, if there is one.
pub fn read(
    report: &PrivateReport,
    exit_code: Option<i32>,
    target: Target<'_>,
) -> (Reading, Option<RunnerReport>) {
    let exited_0 = exit_code == Some(0);
    let text = match report {
        PrivateReport::Text(text) => text,
        PrivateReport::Missing if exited_0 => {
            return (
                Reading::Distrusted(vec![
                    "the test process exited 0 before Rein's reporter wrote its result: something in the code under test ended it early (os._exit or the like), so whatever it printed about passing tests proves nothing".into(),
                ]),
                None,
            );
        }
        PrivateReport::Unreadable(why) if exited_0 => {
            return (
                Reading::Distrusted(vec![format!(
                    "Rein's reporter's result could not be read ({why}), so whatever the run printed about passing tests proves nothing"
                )]),
                None,
            );
        }
        PrivateReport::Missing | PrivateReport::Unreadable(_) => {
            return (Reading::NotPassed(NotPassed::NotRun), None);
        }
    };
    let parsed = match parse(text) {
        Ok(parsed) => parsed,
        Err(why) if exited_0 => {
            return (
                Reading::Distrusted(vec![format!(
                    "the result in Rein's reporter's file is {why}: something in the run wrote it, so the run proves nothing"
                )]),
                None,
            );
        }
        Err(_) => return (Reading::NotPassed(NotPassed::NotRun), None),
    };
    let reading = judge(&parsed, exit_code, target);
    (reading, Some(parsed))
}

fn judge(report: &RunnerReport, exit_code: Option<i32>, target: Target<'_>) -> Reading {
    let (path, name) = (target.path.trim_start_matches("./"), target.name);
    let mut distrust = Vec::new();
    if !report.tampered.is_empty() {
        let shown: Vec<&str> = report
            .tampered
            .iter()
            .take(SHOWN)
            .map(String::as_str)
            .collect();
        let more = report.tampered.len().saturating_sub(SHOWN);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        distrust.push(format!(
            "while the tests ran the test framework was changed: {}{more}; a test cannot pass on its own assertions then",
            shown.join(", ")
        ));
    }
    if let (Some(code), Some(status)) = (exit_code, report.exit_status)
        && i64::from(code) != status
    {
        distrust.push(format!(
            "the test process exited {code}, but the test runner itself ended with {status}: something in the code under test changed how the process ends (an exit hook?)"
        ));
    }
    let targets: Vec<&ReportedTest> = report
        .tests
        .iter()
        .filter(|t| is_target(t, path, name))
        .collect();
    for test in &targets {
        if let Some(module) = test.module_file.as_deref()
            && module != path
        {
            distrust.push(format!(
                "the test module that ran is {module}, not {path}: a file in the workspace stands in for the test module"
            ));
            continue;
        }
        match (test.file.as_deref(), test.line) {
            // An inherited test is defined where its base class is.
            _ if !target.defined_here => {}
            (Some(file), _) if file == path => {}
            (Some(file), line) if !file.starts_with('/') => distrust.push(format!(
                "the `{name}` that ran is defined in {file}{}, not in {path}: something replaced the test",
                line.map(|l| format!(":{l}")).unwrap_or_default()
            )),
            (Some(file), _) => distrust.push(format!(
                "the `{name}` that ran is defined in {file}, not in {path} (a decorator without functools.wraps?), so Rein could not confirm it is the test"
            )),
            (None, _) => distrust.push(format!(
                "the `{name}` that ran is not a function of {path}, so Rein could not confirm it is the test"
            )),
        }
    }
    let failed = targets.iter().any(|t| t.outcome == Outcome::Failed);
    let passed = targets.iter().any(|t| t.outcome == Outcome::Passed);
    let skipped = targets.iter().any(|t| t.outcome == Outcome::Skipped);
    if exit_code == Some(0) && failed {
        distrust.push(format!(
            "the test process exited 0, but Rein's reporter saw `{name}` fail"
        ));
    }
    distrust.dedup();
    if !distrust.is_empty() {
        return Reading::Distrusted(distrust);
    }
    if failed {
        Reading::NotPassed(NotPassed::Failed)
    } else if passed && report.error.is_none() {
        Reading::Passed
    } else if skipped {
        Reading::NotPassed(NotPassed::Skipped)
    } else {
        Reading::NotPassed(NotPassed::NotRun)
    }
}

/// Whether a reported test is the target, by the rules a JUnit report's
/// case is matched with ([`Passes::includes`]).
fn is_target(test: &ReportedTest, path: &str, name: &str) -> bool {
    let mut one = Passes::default();
    one.report_case(&test.class, &test.name);
    one.includes(path, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const PATH: &str = "tests/test_cart.py";
    const NAME: &str = "TestCart.test_total";

    fn report(tests: &str, extra: &str) -> PrivateReport {
        PrivateReport::Text(format!(
            r#"{{"runner": "unittest", "exit_status": 0, "tests": [{tests}]{extra}}}"#
        ))
    }

    fn test(outcome: &str, file: &str, module: &str) -> String {
        format!(
            r#"{{"class": "tests.test_cart.TestCart", "name": "test_total", "outcome": "{outcome}", "file": "{file}", "line": 7, "module_file": "{module}"}}"#
        )
    }

    fn target(defined_here: bool) -> Target<'static> {
        Target {
            path: PATH,
            name: NAME,
            defined_here,
        }
    }

    fn reading(report: &PrivateReport, exit: Option<i32>) -> Reading {
        read(report, exit, target(true)).0
    }

    #[test]
    fn a_pass_in_the_target_file_is_a_pass() {
        let r = report(&test("passed", PATH, PATH), "");
        assert_eq!(reading(&r, Some(0)), Reading::Passed);
        let other = r#"{"class": "tests.test_cart.TestCart", "name": "test_count", "outcome": "passed", "file": "tests/test_cart.py", "module_file": "tests/test_cart.py"}"#;
        assert_eq!(
            reading(&report(other, ""), Some(0)),
            Reading::NotPassed(NotPassed::NotRun)
        );
        assert_eq!(
            reading(&report(&test("skipped", PATH, PATH), ""), Some(0)),
            Reading::NotPassed(NotPassed::Skipped)
        );
        let failed = PrivateReport::Text(format!(
            r#"{{"exit_status": 1, "tests": [{}]}}"#,
            test("failed", PATH, PATH)
        ));
        assert_eq!(
            reading(&failed, Some(1)),
            Reading::NotPassed(NotPassed::Failed)
        );
    }

    #[test]
    fn an_early_exit_leaves_no_report_and_proves_nothing() {
        let Reading::Distrusted(why) = reading(&PrivateReport::Missing, Some(0)) else {
            panic!("trusted");
        };
        assert!(
            why[0].starts_with("the test process exited 0 before Rein's reporter wrote its result"),
            "{why:?}"
        );
        // A failing run without a report is a failing run.
        assert_eq!(
            reading(&PrivateReport::Missing, Some(1)),
            Reading::NotPassed(NotPassed::NotRun)
        );
        assert!(matches!(
            reading(&PrivateReport::Text("garbage".into()), Some(0)),
            Reading::Distrusted(_)
        ));
    }

    #[test]
    fn what_makes_a_run_worthless_is_named() {
        let cases = [
            (
                report(
                    &test("passed", PATH, PATH),
                    r#", "tampered": ["unittest.case.TestCase.assertEqual was replaced"]"#,
                ),
                Some(0),
                "while the tests ran the test framework was changed: unittest.case.TestCase.assertEqual was replaced; a test cannot pass on its own assertions then",
            ),
            (
                report(&test("passed", PATH, PATH), ""),
                Some(3),
                "the test process exited 3, but the test runner itself ended with 0: something in the code under test changed how the process ends (an exit hook?)",
            ),
            (
                report(
                    &test(
                        "passed",
                        "tests/test_cart/__init__.py",
                        "tests/test_cart/__init__.py",
                    ),
                    "",
                ),
                Some(0),
                "the test module that ran is tests/test_cart/__init__.py, not tests/test_cart.py: a file in the workspace stands in for the test module",
            ),
            (
                report(&test("passed", "cart.py", PATH), ""),
                Some(0),
                "the `TestCart.test_total` that ran is defined in cart.py:7, not in tests/test_cart.py: something replaced the test",
            ),
            (
                report(&test("passed", "/usr/lib/python3/x.py", PATH), ""),
                Some(0),
                "the `TestCart.test_total` that ran is defined in /usr/lib/python3/x.py, not in tests/test_cart.py (a decorator without functools.wraps?), so Rein could not confirm it is the test",
            ),
            (
                report(&test("failed", PATH, PATH), ""),
                Some(0),
                "the test process exited 0, but Rein's reporter saw `TestCart.test_total` fail",
            ),
        ];
        for (r, exit, expected) in cases {
            assert_eq!(
                reading(&r, exit),
                Reading::Distrusted(vec![expected.to_owned()])
            );
        }
    }

    /// A test the target's class inherits runs code from its base class's
    /// file; its module is still the target file's.
    #[test]
    fn an_inherited_test_runs_code_from_elsewhere() {
        let r = report(&test("passed", "tests/base.py", PATH), "");
        assert_eq!(read(&r, Some(0), target(false)).0, Reading::Passed);
        let shadowed = report(
            &test("passed", "tests/base.py", "tests/test_cart/__init__.py"),
            "",
        );
        assert!(matches!(
            read(&shadowed, Some(0), target(false)).0,
            Reading::Distrusted(_)
        ));
    }

    #[test]
    fn pytest_ids_match_too() {
        let r = PrivateReport::Text(
            r#"{"runner": "pytest", "exit_status": 0, "tests": [{"class": "tests.test_cart", "name": "test_total[3]", "outcome": "passed", "file": "tests/test_cart.py", "module_file": "tests/test_cart.py"}]}"#.into(),
        );
        let target = Target {
            path: "tests/test_cart.py",
            name: "test_total",
            defined_here: true,
        };
        assert_eq!(read(&r, Some(0), target).0, Reading::Passed);
    }
}
