//! How the verifier runs a project's unittest or pytest tests: not as
//! `python3 -m unittest …`, whose `unittest` (or `pytest`) a file in the
//! workspace can replace and whose output the code under test can print,
//! but through Rein's own runner (`rein_runner.py`, started with
//! `python3 -I` from a directory made for the run outside the workspace):
//! the installed runner is loaded before the workspace is on `sys.path`,
//! and the result is written to a report file only once the runner is
//! done ([`crate::testing::reporter`] reads it). The arguments are the
//! same as the usual command's ([`TestCommand::for_target`]), which is
//! also what the evidence shows.
//!
//! Other runners run as they are: their output is all Rein reads.

use super::command::{Runner, TestCommand};
use crate::exec::{RUN_DIR_VAR, ReportSpec};
use crate::testtarget::TestTarget;

/// The runner's file in the run's directory.
pub const RUNNER_FILE: &str = "rein_runner.py";
/// The report it writes there.
pub const REPORT_FILE: &str = "report.json";
pub(super) const RUNNER_PY: &str = include_str!("rein_runner.py");

/// A test run through Rein's own runner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Isolated {
    /// What runs (`sh -c`).
    pub command: String,
    /// The usual command with the same arguments, for the evidence.
    pub shown: String,
    /// The runner's files and the report to read back.
    pub report: ReportSpec,
}

/// The isolated run of `target` with `command`, for the runners it exists
/// for (unittest and pytest, detected: a configured command is the
/// user's own); `None` for the others.
pub fn isolated(command: &TestCommand, target: Option<&TestTarget>) -> Option<Isolated> {
    let (name, module) = match command.runner {
        Runner::Unittest => ("unittest", "python3 -m unittest"),
        Runner::Pytest => ("pytest", "python3 -m pytest"),
        _ => return None,
    };
    let shown = command.for_target(target);
    // The same arguments as the usual command, after the module.
    let args = shown.strip_prefix(module)?;
    let run = format!("python3 -I \"${RUN_DIR_VAR}/{RUNNER_FILE}\" {name}{args}");
    Some(Isolated {
        command: run,
        shown,
        report: ReportSpec::Private {
            files: vec![(RUNNER_FILE.to_owned(), RUNNER_PY.to_owned())],
            report: REPORT_FILE.to_owned(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(raw: &str) -> Option<TestTarget> {
        TestTarget::parse(raw).unwrap()
    }

    #[test]
    fn unittest_and_pytest_run_through_reins_runner() {
        let run = isolated(
            &TestCommand::new(Runner::Unittest),
            target("tests/test_cart.py::TestCart::test_total").as_ref(),
        )
        .unwrap();
        assert_eq!(
            run.command,
            "python3 -I \"$REIN_RUN_DIR/rein_runner.py\" unittest -v tests.test_cart.TestCart.test_total"
        );
        assert_eq!(
            run.shown,
            "python3 -m unittest -v tests.test_cart.TestCart.test_total"
        );
        let run = isolated(
            &TestCommand::new(Runner::Pytest),
            target("tests/test_cart.py").as_ref(),
        )
        .unwrap();
        assert_eq!(
            run.command,
            "python3 -I \"$REIN_RUN_DIR/rein_runner.py\" pytest -q -rfEp tests/test_cart.py"
        );
        let ReportSpec::Private { files, report } = run.report else {
            panic!("not a private report");
        };
        assert_eq!(report, "report.json");
        assert_eq!(files[0].0, "rein_runner.py");
        assert!(files[0].1.contains("def _run_pytest"));
    }

    /// Hostile target names stay one quoted argument, as in the usual
    /// command.
    #[test]
    fn the_arguments_are_the_usual_commands() {
        let t = target("tests/test_cart.py::test_param[a'; touch x; ']");
        let run = isolated(&TestCommand::new(Runner::Pytest), t.as_ref()).unwrap();
        let usual = TestCommand::new(Runner::Pytest).for_target(t.as_ref());
        assert!(
            run.command
                .ends_with(usual.strip_prefix("python3 -m pytest").unwrap())
        );
    }

    #[test]
    fn other_runners_run_as_they_are() {
        for command in [
            TestCommand::new(Runner::Cargo),
            TestCommand::new(Runner::Jest),
            TestCommand::new(Runner::Go),
            TestCommand::custom("python3 -m unittest {target}"),
        ] {
            assert_eq!(isolated(&command, None), None, "{command:?}");
        }
    }
}
