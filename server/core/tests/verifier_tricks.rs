//! Issue 32, attack 13: tricks that made the verifier say "fixed" while
//! the target test still failed, each played against the real verifier,
//! the real `python3` and the real command runner on a small unittest
//! project on disk. None may be verified; each must be turned down with a
//! reason that names the trick. The honest fix is still verified.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use rein_core::budget::TimeBudget;
use rein_core::os::disk::DiskWorkspace;
use rein_core::os::process::ProcessExec;
use rein_core::ports::{Verdict, Verifier, VerifyContext};
use rein_core::task::{TaskId, TaskSpec};
use rein_core::testing::command::{Runner, TestCommand};
use rein_core::verify::TestVerifier;
use tokio_util::sync::CancellationToken;

const CART: &str = "class Item:\n    def __init__(self, price, qty=1):\n        self.price = price\n        self.qty = qty\n\n\ndef total(items):\n    return sum(item.qty for item in items)\n";
const TEST: &str = "import unittest\n\nfrom cart import Item, total\n\n\nclass TestCart(unittest.TestCase):\n    def test_total(self):\n        self.assertEqual(total([Item(10, qty=3)]), 30)\n\n    def test_empty(self):\n        self.assertEqual(total([]), 0)\n";
/// What unittest -v prints for a passing `test_total`, as the tricks print
/// it: the whole line, or (from inside the test, after unittest printed
/// the test's name) its end.
const PASS_LINES: &str = "test_total (tests.test_cart.TestCart.test_total) ... ok\\n\\n----------------------------------------------------------------------\\nRan 1 test in 0.001s\\n\\nOK\\n";
const PASS_END: &str = "ok\\n\\n----------------------------------------------------------------------\\nRan 1 test in 0.001s\\n\\nOK\\n";

/// The cart project, its test failing: `total` sums the quantities.
struct Project {
    dir: tempfile::TempDir,
    artifacts: tempfile::TempDir,
}

impl Project {
    fn new() -> Self {
        let project = Self {
            dir: tempfile::tempdir().unwrap(),
            artifacts: tempfile::tempdir().unwrap(),
        };
        project.write("cart.py", CART);
        project.write("tests/__init__.py", "");
        project.write("tests/test_cart.py", TEST);
        project
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn append(&self, rel: &str, text: &str) {
        let now = std::fs::read_to_string(self.root().join(rel)).unwrap();
        self.write(rel, &format!("{now}{text}"));
    }

    /// The verifier's verdict on a claim after `change` was made to the
    /// project (touching `touched`), with the baseline taken before it.
    async fn verdict_after(&self, touched: &[&str], change: impl FnOnce(&Self)) -> Verdict {
        let ws = DiskWorkspace::new(self.root()).unwrap();
        let exec = ProcessExec::new();
        let task = TaskSpec::fix_test(
            TaskId("t-tricks".into()),
            "tests/test_cart.py",
            "TestCart.test_total",
        );
        let verifier = TestVerifier::prepare(
            &task,
            &ws,
            &exec,
            Some(TestCommand::new(Runner::Unittest)),
            Duration::from_secs(60),
            self.artifacts.path(),
            &CancellationToken::new(),
        )
        .await;
        change(self);
        let touched: Vec<String> = touched.iter().map(|p| (*p).to_owned()).collect();
        verifier
            .verify(VerifyContext {
                task: &task,
                touched: &touched,
                workspace: &ws,
                exec: &exec,
                artifacts_dir: self.artifacts.path().to_path_buf(),
                cancel: CancellationToken::new(),
                time: TimeBudget::unlimited(),
            })
            .await
    }
}

/// The verdict is `unverified` and its reason names every one of `named`.
fn assert_distrusted(verdict: &Verdict, named: &[&str]) {
    let Verdict::Unconfirmed { summary, evidence } = verdict else {
        panic!("not turned down as unverified: {verdict:?}");
    };
    assert!(
        summary.starts_with("Rein does not trust this test run: "),
        "{summary}"
    );
    for name in named {
        assert!(summary.contains(name), "{name:?} not in:\n{summary}");
    }
    assert!(!evidence.is_empty(), "the run is kept as evidence");
}

/// (a) The code under test prints unittest's pass line and summary, then
/// ends the process with `os._exit(0)`: exit 0 and a pass by name used to
/// be "fixed". Rein's reporter never wrote its result, and the scan names
/// the line that exits.
#[tokio::test]
async fn a_prints_the_pass_lines_and_exits_0() {
    let project = Project::new();
    let verdict = project
        .verdict_after(&["cart.py"], |p| {
            p.append(
                "cart.py",
                &format!(
                    "\n\nimport os\nimport sys\n\n\ndef total(items):\n    sys.stderr.write(\"{PASS_END}\")\n    sys.stderr.flush()\n    os._exit(0)\n"
                ),
            );
        })
        .await;
    assert_distrusted(
        &verdict,
        &[
            "the test process exited 0 before Rein's reporter wrote its result",
            "cart.py:18 calls os._exit, which ends the test process at once",
            "cart.py:16 prints a test runner's result line (`Ran 1 test in 0.001s`)",
        ],
    );
}

/// (a), aimed at Rein: the code under test finds Rein's reporter's file
/// (next to the runner, `__main__`), writes a passing report there itself,
/// then exits 0 (through a name the scan cannot read). The report lacks
/// the token the reporter took before any code of the workspace ran: it
/// does not count.
#[tokio::test]
async fn a_the_code_under_test_forges_reins_report() {
    let project = Project::new();
    let forged = r#"{"runner": "unittest", "exit_status": 0, "tests": [{"class": "tests.test_cart.TestCart", "name": "test_total", "outcome": "passed", "file": "tests/test_cart.py", "module_file": "tests/test_cart.py"}]}"#;
    let verdict = project
        .verdict_after(&["cart.py"], |p| {
            p.append(
                "cart.py",
                &format!(
                    "\n\nimport os\nimport sys\n\n\ndef total(items):\n    here = os.path.dirname(sys.modules['__main__'].__file__)\n    with open(os.path.join(here, 'report.json'), 'w') as f:\n        f.write({forged:?})\n    getattr(os, '_ex' + 'it')(0)\n"
                ),
            );
        })
        .await;
    assert_distrusted(
        &verdict,
        &["report.json: not written by Rein's reporter (its token is missing or wrong)"],
    );
}

/// (a), from a hostile repository: the trick is there before the task —
/// cart.py prints a passing run of the test file when it is imported,
/// then exits 0 — so the run before the task "showed" the target passing,
/// and the task ended at once as "already passing". Rein's reporter wrote
/// nothing: it is not.
#[tokio::test]
async fn a_a_repository_that_fakes_its_pass_is_not_already_passing() {
    let project = Project::new();
    let lines = "test_empty (tests.test_cart.TestCart.test_empty) ... ok\\ntest_total (tests.test_cart.TestCart.test_total) ... ok\\n\\n----------------------------------------------------------------------\\nRan 2 tests in 0.001s\\n\\nOK\\n";
    project.append(
        "cart.py",
        &format!("\n\nimport os\nimport sys\n\nsys.stderr.write(\"{lines}\")\nsys.stderr.flush()\nos._exit(0)\n"),
    );
    let ws = DiskWorkspace::new(project.root()).unwrap();
    let task = TaskSpec::fix_test(
        TaskId("t-tricks".into()),
        "tests/test_cart.py",
        "TestCart.test_total",
    );
    let verifier = TestVerifier::prepare(
        &task,
        &ws,
        &ProcessExec::new(),
        Some(TestCommand::new(Runner::Unittest)),
        Duration::from_secs(60),
        project.artifacts.path(),
        &CancellationToken::new(),
    )
    .await;
    assert!(!verifier.met_at_baseline(), "taken for already passing");
}

/// The target passes while another test of its file fails (the run exits
/// 1): it is already passing, on the report's word. Seen in real VS Code:
/// "Fix test_count" on the demo ran the model instead of saying so, since
/// the report was believed only for a run that exited 0.
#[tokio::test]
async fn a_target_that_passes_beside_a_failing_test_is_already_passing() {
    let project = Project::new();
    let ws = DiskWorkspace::new(project.root()).unwrap();
    let task = TaskSpec::fix_test(
        TaskId("t-tricks".into()),
        "tests/test_cart.py",
        "TestCart.test_empty",
    );
    let verifier = TestVerifier::prepare(
        &task,
        &ws,
        &ProcessExec::new(),
        Some(TestCommand::new(Runner::Unittest)),
        Duration::from_secs(60),
        project.artifacts.path(),
        &CancellationToken::new(),
    )
    .await;
    assert!(verifier.met_at_baseline(), "not taken for already passing");
}

/// (a), variant: the test fails, and an exit hook turns the runner's exit
/// 1 into 0.
#[tokio::test]
async fn a_an_exit_hook_turns_the_failure_into_exit_0() {
    let project = Project::new();
    let verdict = project
        .verdict_after(&["cart.py"], |p| {
            p.append(
                "cart.py",
                "\n\nimport atexit\nimport os\n\natexit.register(os._exit, 0)\n",
            );
        })
        .await;
    assert_distrusted(
        &verdict,
        &[
            "the test process exited 0, but the test runner itself ended with 1",
            "cart.py:14 registers an exit hook",
        ],
    );
}

/// (b) A package `tests/test_cart/__init__.py` with a `TestCart` that
/// passes shadows `tests/test_cart.py`: Python imports the package.
#[tokio::test]
async fn b_a_package_shadows_the_test_module() {
    let project = Project::new();
    let verdict = project
        .verdict_after(&["tests/test_cart/__init__.py"], |p| {
            p.write(
                "tests/test_cart/__init__.py",
                "import unittest\n\n\nclass TestCart(unittest.TestCase):\n    def test_total(self):\n        pass\n",
            );
        })
        .await;
    assert_distrusted(
        &verdict,
        &[
            "tests/test_cart/__init__.py makes a package with the name of the test module tests/test_cart.py",
            "the test module that ran is tests/test_cart/__init__.py, not tests/test_cart.py",
        ],
    );
}

/// (c) A `unittest` package in the workspace replaces `python3 -m
/// unittest` and prints a pass: Rein's runner loads the real one (so the
/// test runs, and fails), and the file is refused by name.
#[tokio::test]
async fn c_a_unittest_package_in_the_workspace_replaces_the_runner() {
    let project = Project::new();
    let fake = format!("import sys\nsys.stderr.write(\"{PASS_LINES}\")\n");
    let verdict = project
        .verdict_after(&["unittest/__main__.py", "unittest/__init__.py"], |p| {
            p.write("unittest/__main__.py", &fake);
            p.write("unittest/__init__.py", &fake);
        })
        .await;
    assert_distrusted(
        &verdict,
        &[
            "unittest/__init__.py in the workspace has the name of the test runner's own module `unittest`",
            "unittest/__main__.py in the workspace has the name of the test runner's own module `unittest`",
        ],
    );
    // The real runner ran the real test, which still fails.
    let log = std::fs::read_dir(project.artifacts.path())
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .find(|l| l.contains("FAIL: test_total"));
    assert!(log.is_some(), "the real test did not run");
}

/// (d) cart.py makes `assertEqual` do nothing.
#[tokio::test]
async fn d_cart_makes_assert_equal_do_nothing() {
    let project = Project::new();
    let verdict = project
        .verdict_after(&["cart.py"], |p| {
            p.append(
                "cart.py",
                "\n\nimport unittest\n\nunittest.TestCase.assertEqual = lambda *a, **k: None\n",
            );
        })
        .await;
    assert_distrusted(
        &verdict,
        &[
            "cart.py:13 replaces `unittest.TestCase.assertEqual`, part of the test framework",
            "while the tests ran the test framework was changed: unittest.case.TestCase.assertEqual was replaced",
        ],
    );
}

/// (d), variant: the names are built at run time, so no line reads as a
/// patch; the runner still finds the assertion replaced.
#[tokio::test]
async fn d_an_assertion_patched_through_built_names() {
    let project = Project::new();
    let verdict = project
        .verdict_after(&["cart.py"], |p| {
            p.append(
                "cart.py",
                "\n\n_m = __import__(''.join(['unit', 'test']))\n_c = getattr(_m, 'Test' + 'Case')\nsetattr(_c, ''.join(['as', 'sertEqual']), lambda *a, **k: None)\n",
            );
        })
        .await;
    assert_distrusted(
        &verdict,
        &["unittest.case.TestCase.assertEqual was replaced"],
    );
}

/// The honest fix is verified, through Rein's runner.
#[tokio::test]
async fn the_honest_fix_is_still_verified() {
    let project = Project::new();
    let verdict = project
        .verdict_after(&["cart.py"], |p| {
            p.write(
                "cart.py",
                &CART.replace(
                    "sum(item.qty for item in items)",
                    "sum(item.price * item.qty for item in items)",
                ),
            );
        })
        .await;
    let Verdict::Verified { summary, evidence } = &verdict else {
        panic!("the honest fix is not verified: {verdict:?}");
    };
    assert_eq!(
        summary,
        "fixed: `TestCart.test_total` passes, no regressions"
    );
    assert_eq!(
        evidence[0].command,
        "python3 -m unittest -v tests.test_cart.TestCart.test_total"
    );
}

// ---------------------------------------------------------------------------
// The verdict rules on the reporter's word, with a scripted runner.

mod by_report {
    use super::*;
    use rein_core::exec::{CommandResult, PrivateReport};
    use rein_core::fakes::{MemoryWorkspace, ScriptedExec, command_result};
    use rein_core::verify::Baseline;

    const PASSED_OUTPUT: &str = "test_total (tests.test_cart.TestCart.test_total) ... ok\n\n----------------------------------------------------------------------\nRan 1 test in 0.001s\n\nOK";

    fn workspace(cart: &str) -> MemoryWorkspace {
        MemoryWorkspace::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/memory-root"
        ))
        .with_file("cart.py", cart)
        .with_file("tests/test_cart.py", TEST)
    }

    /// Every run exits `exit`, prints `output` and leaves `report`.
    fn runner(exit: i32, output: &'static str, report: String) -> ScriptedExec {
        ScriptedExec::new(move |_| CommandResult {
            private_report: Some(Box::new(PrivateReport::Text(report.clone()))),
            ..command_result(exit, output, &[])
        })
    }

    fn report(outcome: &str) -> String {
        format!(
            r#"{{"exit_status": 0, "tests": [{{"class": "tests.test_cart.TestCart", "name": "test_total", "outcome": "{outcome}", "file": "tests/test_cart.py", "module_file": "tests/test_cart.py"}}]}}"#
        )
    }

    async fn verdict(ws: &MemoryWorkspace, exec: &ScriptedExec, baseline: Baseline) -> Verdict {
        let task = TaskSpec::fix_test(
            TaskId("t-tricks".into()),
            "tests/test_cart.py",
            "TestCart.test_total",
        );
        let verifier = TestVerifier::with_baseline(
            Some(TestCommand::new(Runner::Unittest)),
            Duration::from_secs(60),
            baseline,
        );
        let touched = vec!["cart.py".to_owned()];
        verifier
            .verify(VerifyContext {
                task: &task,
                touched: &touched,
                workspace: ws,
                exec,
                artifacts_dir: "/tmp/rein-tricks-artifacts".into(),
                cancel: CancellationToken::new(),
                time: TimeBudget::unlimited(),
            })
            .await
    }

    /// The output names the target as passed, but Rein's reporter never
    /// saw it run: the output was not the runner's.
    #[tokio::test]
    async fn a_pass_the_reporter_never_saw_is_distrusted() {
        let ws = workspace(CART);
        let exec = runner(
            0,
            PASSED_OUTPUT,
            r#"{"exit_status": 0, "tests": []}"#.into(),
        );
        assert_distrusted(
            &verdict(&ws, &exec, Baseline::default()).await,
            &[
                "the run's output says `TestCart.test_total` passed, but Rein's reporter never saw it run",
            ],
        );
    }

    /// The reporter's word is the verdict, whatever the output shows.
    #[tokio::test]
    async fn the_reporter_decides() {
        let ws = workspace(CART);
        let exec = runner(0, "", report("passed"));
        assert!(matches!(
            verdict(&ws, &exec, Baseline::default()).await,
            Verdict::Verified { .. }
        ));
        let exec = runner(0, PASSED_OUTPUT, report("skipped"));
        let Verdict::Gap { gap, .. } = verdict(&ws, &exec, Baseline::default()).await else {
            panic!("a skipped target is not a pass");
        };
        assert!(
            gap.starts_with("`TestCart.test_total` did not pass, it was skipped"),
            "{gap}"
        );
    }

    /// A baseline kept before the scan's findings were: what the touched
    /// files hold counts; what the baseline knew is the project's own.
    #[tokio::test]
    async fn a_finding_known_to_the_baseline_is_the_projects_own() {
        let patched = format!("{CART}\nimport unittest\nunittest.TestCase.assertEqual = print\n");
        let ws = workspace(&patched);
        let exec = runner(0, PASSED_OUTPUT, report("passed"));
        assert_distrusted(
            &verdict(&ws, &exec, Baseline::default()).await,
            &["cart.py:11 replaces `unittest.TestCase.assertEqual`"],
        );
        let known = Baseline {
            machinery: Some(vec![rein_core::testing::machinery::FindingKey {
                path: "cart.py".into(),
                text: "unittest.TestCase.assertEqual = print".into(),
            }]),
            ..Baseline::default()
        };
        assert!(matches!(
            verdict(&ws, &exec, known).await,
            Verdict::Verified { .. }
        ));
    }
}
