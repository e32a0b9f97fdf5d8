//! The verifier: a claim of completion is checked on the current content,
//! never taken on the model's word, and the evidence is kept.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use rein_core::budget::TimeBudget;
use rein_core::exec::{CommandResult, CommandSpec, Exec, ReportSpec};
use rein_core::fakes::{MemoryWorkspace, ScriptedExec, command_result};
use rein_core::ports::{Verdict, Verifier, VerifyContext};
use rein_core::task::{Acceptance, TaskId, TaskSpec};
use rein_core::testing::command::TestCommand;
use rein_core::verify::TestVerifier;
use rein_text::ContentHash;
use support::{CART_FIXED, TEST_FILE, TEST_TEXT, cart_workspace};
use tokio_util::sync::CancellationToken;

/// A unittest run of the cart project: `test_total` passes once `total`
/// sums; `test_count` fails if `count` was broken.
fn runner(ws: Arc<MemoryWorkspace>) -> ScriptedExec {
    ScriptedExec::new(move |spec| cart_run(&ws, spec))
}

fn cart_run(ws: &MemoryWorkspace, spec: &CommandSpec) -> CommandResult {
    let cart = ws.text("cart.py").unwrap_or_default();
    let only_total = spec.command.ends_with("::test_total");
    let mut failures = Vec::new();
    if !cart.contains("sum(") {
        failures.push("tests.test_cart.TestCart.test_total");
    }
    if !only_total && cart.contains("def count(items):\n    return 0") {
        failures.push("tests.test_cart.TestCart.test_count");
    }
    if failures.is_empty() {
        command_result(0, UNITTEST_PASSED, &[])
    } else {
        command_result(1, "AssertionError: 2 != 30\n\nFAILED", &failures)
    }
}

/// unittest -v's output when the cart tests pass.
const UNITTEST_PASSED: &str = "test_count (tests.test_cart.TestCart.test_count) ... ok\ntest_total (tests.test_cart.TestCart.test_total) ... ok\n\nRan 2 tests in 0.001s\n\nOK";

/// A verifier for `task` with its baseline taken on `ws` by `exec`.
async fn prepared(
    task: &TaskSpec,
    ws: &MemoryWorkspace,
    exec: &dyn Exec,
    command: TestCommand,
) -> TestVerifier {
    TestVerifier::prepare(
        task,
        ws,
        exec,
        Some(command),
        Duration::from_secs(60),
        Path::new(".rein/artifacts/t-v"),
        &CancellationToken::new(),
    )
    .await
}

/// Verifies a claim that touched cart.py, with `verifier` on `ws`.
async fn verify_cart(
    verifier: &TestVerifier,
    task: &TaskSpec,
    ws: &MemoryWorkspace,
    exec: &dyn Exec,
    time: TimeBudget,
) -> Verdict {
    verify_touching(verifier, task, ws, &["cart.py"], exec, time).await
}

/// Verifies a claim that touched `touched`, with `verifier` on `ws`.
async fn verify_touching(
    verifier: &TestVerifier,
    task: &TaskSpec,
    ws: &MemoryWorkspace,
    touched: &[&str],
    exec: &dyn Exec,
    time: TimeBudget,
) -> Verdict {
    let touched: Vec<String> = touched.iter().map(|p| (*p).to_owned()).collect();
    verifier
        .verify(VerifyContext {
            task,
            touched: &touched,
            workspace: ws,
            exec,
            artifacts_dir: ".rein/artifacts/t-v".into(),
            cancel: CancellationToken::new(),
            time,
        })
        .await
}

/// The cart runner, except that the target's own run exits 0 printing
/// `output`.
fn target_run_prints(ws: &Arc<MemoryWorkspace>, output: &'static str) -> ScriptedExec {
    let ws = Arc::clone(ws);
    ScriptedExec::new(move |spec| {
        if spec.command.ends_with("::test_total") {
            command_result(0, output, &[])
        } else {
            cart_run(&ws, spec)
        }
    })
}

/// The cart runner, with someone typing `edits` into cart.py while the
/// first runs go (one edit per run, after the run read the file).
fn typing_runner(ws: Arc<MemoryWorkspace>, edits: Vec<String>) -> ScriptedExec {
    let edits = std::sync::Mutex::new(edits.into_iter());
    ScriptedExec::new(move |spec| {
        let result = cart_run(&ws, spec);
        if let Some(text) = edits.lock().unwrap().next() {
            ws.set("cart.py", &text);
        }
        result
    })
}

struct Case {
    ws: Arc<MemoryWorkspace>,
    exec: ScriptedExec,
    verifier: TestVerifier,
    task: TaskSpec,
}

async fn case(ws: MemoryWorkspace) -> Case {
    let ws = Arc::new(ws.with_file(
        "cart.py",
        &format!(
            "{}\ndef count(items):\n    return len(items)\n",
            support::CART_BROKEN
        ),
    ));
    let exec = runner(Arc::clone(&ws));
    let task = TaskSpec::fix_test(TaskId("t-v".into()), TEST_FILE, "TestCart.test_total");
    let verifier = prepared(
        &task,
        ws.as_ref(),
        &exec,
        TestCommand::custom("run-tests {target}"),
    )
    .await;
    Case {
        ws,
        exec,
        verifier,
        task,
    }
}

impl Case {
    async fn verify(&self) -> Verdict {
        self.verify_touching(&["cart.py"]).await
    }

    async fn verify_touching(&self, touched: &[&str]) -> Verdict {
        self.verify_with(touched, &self.exec).await
    }

    async fn verify_with(&self, touched: &[&str], exec: &dyn Exec) -> Verdict {
        verify_touching(
            &self.verifier,
            &self.task,
            &self.ws,
            touched,
            exec,
            TimeBudget::unlimited(),
        )
        .await
    }

    fn fix(&self) {
        let cart = self.ws.text("cart.py").unwrap().replace(
            "    return len(items)\n\ndef count",
            "    return sum(item.price * item.qty for item in items)\n\ndef count",
        );
        self.ws.set("cart.py", &cart);
    }
}

#[tokio::test]
async fn a_real_fix_is_verified_with_evidence_of_the_current_content() {
    let c = case(cart_workspace()).await;
    // The baseline saw the target test fail.
    assert_eq!(
        c.verifier.baseline().suite.as_ref().unwrap().failures,
        vec!["tests.test_cart.TestCart.test_total"]
    );
    c.fix();
    let Verdict::Verified { summary, evidence } = c.verify().await else {
        panic!("not verified")
    };
    assert_eq!(
        summary,
        "fixed: `TestCart.test_total` passes, no regressions"
    );
    assert_eq!(
        evidence[0].command,
        "run-tests tests/test_cart.py::TestCart::test_total"
    );
    assert_eq!(evidence[0].exit_code, Some(0));
    // The evidence names the text it is about: the fixed file and the test.
    let hash = |path: &str| {
        (
            path.to_owned(),
            ContentHash::of_str(&c.ws.text(path).unwrap()),
        )
    };
    assert_eq!(evidence[0].files, vec![hash("cart.py"), hash(TEST_FILE)]);
    assert_eq!(evidence[1].check, "no_regressions tests/test_cart.py");
    // Each run has its own log, numbered after the baseline's, and shown
    // workspace-relative as the model reads it.
    assert_eq!(
        (evidence[0].log_path.as_str(), evidence[1].log_path.as_str()),
        (
            ".rein/artifacts/t-v/verify-2.log",
            ".rein/artifacts/t-v/verify-suite-3.log"
        )
    );
    let _ = CART_FIXED;
}

/// A resumed task compares against the baseline recorded when it began:
/// the saved state is that baseline, whole.
#[tokio::test]
async fn the_saved_state_is_the_baseline() {
    let c = case(cart_workspace()).await;
    let saved: rein_core::verify::Baseline =
        serde_json::from_value(rein_core::ports::Verifier::saved_state(&c.verifier)).unwrap();
    assert_eq!(&saved, c.verifier.baseline());
    assert!(saved.suite.is_some() && !saved.tests.is_empty());
}

/// The file's tests passed before the task, and now the run fails without
/// naming a failing test (a crash at import, a runner error): that is a
/// regression even though no test name is new.
#[tokio::test]
async fn a_suite_that_passed_before_and_now_fails_silently_is_a_regression() {
    let ws = Arc::new(cart_workspace());
    let passing = ScriptedExec::new(|_| command_result(0, UNITTEST_PASSED, &[]));
    let task = TaskSpec::fix_test(TaskId("t-v".into()), TEST_FILE, "TestCart.test_total");
    let verifier = prepared(
        &task,
        ws.as_ref(),
        &passing,
        TestCommand::custom("run-tests {target}"),
    )
    .await;
    let exec = ScriptedExec::new(|spec| {
        if spec.command.ends_with("::test_total") {
            command_result(0, UNITTEST_PASSED, &[])
        } else {
            command_result(1, "ImportError: cannot import name 'count'", &[])
        }
    });
    let verdict = verify_cart(
        &verifier,
        &task,
        ws.as_ref(),
        &exec,
        TimeBudget::unlimited(),
    )
    .await;
    let Verdict::Gap { gap, .. } = verdict else {
        panic!("a suite that broke was not a regression: {verdict:?}")
    };
    assert_eq!(
        gap,
        "tests/test_cart.py passed before the task and fails now"
    );
    // And a suite that still passes is no regression.
    let verdict = verify_cart(
        &verifier,
        &task,
        ws.as_ref(),
        &passing,
        TimeBudget::unlimited(),
    )
    .await;
    assert!(matches!(verdict, Verdict::Verified { .. }), "{verdict:?}");
}

#[tokio::test]
async fn a_claim_without_a_fix_gets_the_failure_as_the_gap() {
    let c = case(cart_workspace()).await;
    let Verdict::Gap { gap, .. } = c.verify().await else {
        panic!("verified a failing test")
    };
    assert!(
        gap.starts_with("`TestCart.test_total` still fails (exit 1):\nAssertionError: 2 != 30"),
        "{gap}"
    );
}

#[tokio::test]
async fn evidence_is_taken_again_after_every_change() {
    let c = case(cart_workspace()).await;
    c.fix();
    assert!(matches!(c.verify().await, Verdict::Verified { .. }));
    // The file changes after a passing check (the user, or a later edit):
    // the next claim is checked on the new content, not on old evidence.
    c.ws.set("cart.py", support::CART_BROKEN);
    assert!(matches!(c.verify().await, Verdict::Gap { .. }));
}

/// The last check passes on the fixed text, and the user breaks the file
/// while it runs: "fixed" would be about text that is gone. The checks are
/// made again on the text as it is, which fails.
#[tokio::test]
async fn a_file_broken_while_the_checks_run_is_checked_again() {
    let c = case(cart_workspace()).await;
    c.fix();
    let fixed = c.ws.text("cart.py").unwrap();
    let broken = fixed.replace("sum(item.price * item.qty for item in items)", "len(items)");
    // Typed during the second run (the regression suite): the target test
    // had passed, the suite passes on the text it read.
    let exec = typing_runner(Arc::clone(&c.ws), vec![fixed, broken.clone()]);
    let Verdict::Gap { gap, evidence } = c.verify_with(&["cart.py"], &exec).await else {
        panic!("verified text that was gone")
    };
    assert!(
        gap.starts_with("`TestCart.test_total` still fails"),
        "{gap}"
    );
    assert_eq!(
        evidence[0].files[0],
        ("cart.py".to_owned(), ContentHash::of_str(&broken))
    );
    // Target and suite, then the target again, which fails: no second suite run.
    assert_eq!(exec.commands().len(), 3, "{:?}", exec.commands());
}

/// Harmless typing during the checks (a comment): they are made again, and
/// the evidence is of the text as it is now.
#[tokio::test]
async fn evidence_is_of_the_text_as_it_is_after_typing_during_the_checks() {
    let c = case(cart_workspace()).await;
    c.fix();
    let commented = format!("{}# total is price × qty\n", c.ws.text("cart.py").unwrap());
    let exec = typing_runner(Arc::clone(&c.ws), vec![commented.clone()]);
    let Verdict::Verified { evidence, .. } = c.verify_with(&["cart.py"], &exec).await else {
        panic!("not verified")
    };
    let now = ("cart.py".to_owned(), ContentHash::of_str(&commented));
    assert!(evidence.iter().all(|e| e.files[0] == now), "{evidence:?}");
    assert_eq!(exec.commands().len(), 4, "checked twice");
}

/// The test file is text the verdict is about too: typing in it while the
/// checks run makes them run again.
#[tokio::test]
async fn typing_in_the_test_file_during_the_checks_is_seen() {
    let c = case(cart_workspace()).await;
    c.fix();
    let typed = format!("{TEST_TEXT}# more tests to come\n");
    let ws = Arc::clone(&c.ws);
    let once = std::sync::atomic::AtomicBool::new(false);
    let exec = ScriptedExec::new(move |spec| {
        let result = cart_run(&ws, spec);
        if !once.swap(true, std::sync::atomic::Ordering::SeqCst) {
            ws.set(TEST_FILE, &typed);
        }
        result
    });
    let Verdict::Verified { evidence, .. } = c.verify_with(&["cart.py"], &exec).await else {
        panic!("not verified")
    };
    assert_eq!(exec.commands().len(), 4, "checked twice");
    let test_now = (
        TEST_FILE.to_owned(),
        ContentHash::of_str(&c.ws.text(TEST_FILE).unwrap()),
    );
    assert!(
        evidence.iter().all(|e| e.files.contains(&test_now)),
        "{evidence:?}"
    );
}

/// Someone keeps typing: after three tries the claim is turned down,
/// saying why, instead of checking forever.
#[tokio::test]
async fn files_that_keep_changing_turn_the_claim_down() {
    let c = case(cart_workspace()).await;
    c.fix();
    let fixed = c.ws.text("cart.py").unwrap();
    let edits = (0..6).map(|i| format!("{fixed}# {i}\n")).collect();
    let exec = typing_runner(Arc::clone(&c.ws), edits);
    let Verdict::Gap { gap, .. } = c.verify_with(&["cart.py"], &exec).await else {
        panic!("verified text that kept changing")
    };
    assert!(
        gap.starts_with("cart.py changed while Rein ran the checks, 3 times in a row"),
        "{gap}"
    );
}

/// Exit code 0 is not a pass: a test the model marked skipped, or a name
/// the runner no longer finds, shows nothing passing.
#[tokio::test]
async fn a_skipped_or_missing_test_is_not_a_pass() {
    let c = case(cart_workspace()).await;
    c.fix();
    for (output, says) in [
        (
            "s\nRan 1 test in 0.000s\n\nOK (skipped=1)",
            "`TestCart.test_total` did not pass, it was skipped (1 skipped, 0 passed)",
        ),
        (
            "\nRan 0 tests in 0.000s\n\nOK",
            "`TestCart.test_total` did not run: `run-tests tests/test_cart.py::TestCart::test_total` exited 0 but ran no test",
        ),
    ] {
        let exec = target_run_prints(&c.ws, output);
        let Verdict::Gap { gap, evidence } = c.verify_with(&["cart.py"], &exec).await else {
            panic!("verified a test that did not pass: {output:?}")
        };
        assert!(gap.starts_with(says), "{gap}");
        assert_eq!(
            evidence[0].exit_code,
            Some(0),
            "the evidence shows what ran"
        );
    }
}

/// Exit code 0 with output that does not name the target among the passes
/// is not "fixed" either: a wrapper whose output Rein cannot read, a quiet
/// runner, a command that ignores its target, a filter that matched another
/// test. The verdict says so, distinctly, for the user.
#[tokio::test]
async fn a_run_that_does_not_name_the_target_passing_is_not_verified() {
    let c = case(cart_workspace()).await;
    c.fix();
    for (why, output, says) in [
        (
            "a wrapper script",
            "make[1]: Entering directory '/src'\nall tests passed\nmake[1]: Leaving directory '/src'",
            "exited 0, but Rein cannot read which tests its output reports as passed",
        ),
        (
            "a quiet runner",
            "...\n3 passed in 0.02s",
            "exited 0 and reported 3 passed, but not which",
        ),
        (
            "a command that ignores its target",
            "test_count (tests.test_cart.TestCart.test_count) ... ok\n\nRan 1 test in 0.001s\n\nOK",
            "is not among the 1 test(s) it reports as passed (`tests.test_cart.TestCart.test_count`)",
        ),
        (
            "a filter that matched a longer name",
            "test_total_with_tax (tests.test_cart.TestCart.test_total_with_tax) ... ok\n\nRan 1 test in 0.001s\n\nOK",
            "is not among the 1 test(s)",
        ),
    ] {
        let exec = target_run_prints(&c.ws, output);
        let Verdict::Unconfirmed { summary, evidence } = c.verify_with(&["cart.py"], &exec).await
        else {
            panic!("{why}: not an unconfirmed verdict")
        };
        assert!(
            summary.starts_with("`run-tests tests/test_cart.py::TestCart::test_total` "),
            "{why}: {summary}"
        );
        assert!(summary.contains(says), "{why}: {summary}");
        assert!(
            summary.contains("could not confirm that `TestCart.test_total` passed"),
            "{why}: {summary}"
        );
        assert_eq!(
            evidence[0].exit_code,
            Some(0),
            "{why}: the evidence shows what ran"
        );
    }
    // A pass line alone is not enough: code under test can print one and
    // exit 0 before the runner gets to its summary; and a summary of
    // nothing run outweighs it.
    for (output, says) in [
        (
            "test_total (tests.test_cart.TestCart.test_total) ... ok",
            "named `TestCart.test_total` as passed, but printed no closing summary",
        ),
        (
            "test_total (tests.test_cart.TestCart.test_total) ... ok\n\nRan 0 tests in 0.000s\n\nOK",
            "`TestCart.test_total` did not run",
        ),
    ] {
        let verdict = c
            .verify_with(&["cart.py"], &target_run_prints(&c.ws, output))
            .await;
        let (Verdict::Unconfirmed { summary: said, .. } | Verdict::Gap { gap: said, .. }) = verdict
        else {
            panic!("a pass line was taken as a pass: {output:?}")
        };
        assert!(said.contains(says), "{said}");
    }
    // What the model can still fix comes first: a weakened test is a gap.
    c.ws.set(TEST_FILE, &TEST_TEXT.replace("30)", "3)"));
    let exec = ScriptedExec::new(|_| command_result(0, "all tests passed", &[]));
    assert!(matches!(
        c.verify_with(&["cart.py"], &exec).await,
        Verdict::Gap { .. }
    ));
}

#[tokio::test]
async fn a_weakened_assertion_is_refused_even_if_the_test_passes() {
    let c = case(cart_workspace()).await;
    c.fix();
    c.ws.set(
        TEST_FILE,
        &TEST_TEXT.replace(
            "assertEqual(total(items), 30)",
            "assertTrue(total(items) >= 0)",
        ),
    );
    let Verdict::Gap { gap, .. } = c.verify().await else {
        panic!("accepted a weakened test")
    };
    assert_eq!(
        gap,
        "`TestCart.test_total` in tests/test_cart.py was changed (its assertions, inputs or decorators); restore it and fix the code under test instead"
    );
}

/// The test's input changed so the broken code gives the expected answer:
/// no assertion moved, and it is refused all the same. A baseline stored
/// before whole tests were recorded still compares the assertions.
#[tokio::test]
async fn a_test_weakened_through_its_inputs_is_refused() {
    let c = case(cart_workspace()).await;
    let weakened = TEST_TEXT.replace("Item(10, 2)]", "Item(10, 2), Item(0, 27)]");
    assert_ne!(weakened, TEST_TEXT);
    c.ws.set(TEST_FILE, &weakened);
    let Verdict::Gap { gap, .. } = c.verify().await else {
        panic!("accepted a weakened test")
    };
    assert!(
        gap.contains("`TestCart.test_total` in tests/test_cart.py was changed"),
        "{gap}"
    );

    // A baseline stored by an older Rein (no `tests`): the assertions are
    // what it can compare, and a changed one is still refused.
    let mut old: serde_json::Value = serde_json::to_value(c.verifier.baseline()).unwrap();
    old.as_object_mut().unwrap().remove("tests");
    let old: rein_core::verify::Baseline = serde_json::from_value(old).unwrap();
    assert!(old.tests.is_empty() && !old.assertions.is_empty());
    let resumed = TestVerifier::with_baseline(
        Some(TestCommand::custom("run-tests {target}")),
        Duration::from_secs(60),
        old,
    );
    c.ws.set(
        TEST_FILE,
        &TEST_TEXT.replace("total(items), 30)", "total(items), 3)"),
    );
    let verdict = verify_cart(
        &resumed,
        &c.task,
        c.ws.as_ref(),
        &c.exec,
        TimeBudget::unlimited(),
    )
    .await;
    let Verdict::Gap { gap, .. } = verdict else {
        panic!("accepted a changed assertion")
    };
    assert!(gap.contains("was changed"), "{gap}");
}

#[tokio::test]
async fn a_regression_elsewhere_is_refused() {
    let c = case(cart_workspace()).await;
    c.fix();
    let broken_count = c.ws.text("cart.py").unwrap().replace(
        "def count(items):\n    return len(items)",
        "def count(items):\n    return 0",
    );
    c.ws.set("cart.py", &broken_count);
    let Verdict::Gap { gap, evidence } = c.verify().await else {
        panic!("accepted a regression")
    };
    assert_eq!(
        gap,
        "tests that passed before now fail: tests.test_cart.TestCart.test_count"
    );
    assert_eq!(
        evidence[0].exit_code,
        Some(0),
        "the target test itself passes"
    );
}

/// Defect (issue 18): a claim while the target test still fails ran the
/// whole scope again for regressions, doubling every turned-down claim.
#[tokio::test]
async fn a_claim_whose_target_still_fails_runs_the_tests_once() {
    let c = case(cart_workspace()).await;
    let Verdict::Gap { gap, evidence } = c.verify().await else {
        panic!("accepted a failing test")
    };
    assert_eq!(evidence.len(), 1, "{evidence:#?}");
    assert_ne!(evidence[0].exit_code, Some(0));
    assert!(!gap.contains("passed before"), "{gap}");
    c.fix();
    let Verdict::Verified { evidence, .. } = c.verify().await else {
        panic!("refused the fix")
    };
    assert_eq!(evidence.len(), 2, "the fix is checked for regressions too");
}

#[tokio::test]
async fn an_edit_outside_the_allowed_paths_is_refused() {
    let mut c = case(cart_workspace()).await;
    c.task.acceptance.push(Acceptance::EditsWithin {
        globs: vec!["cart.py".into(), "src/**".into()],
    });
    c.fix();
    assert!(matches!(
        c.verify_touching(&["cart.py", "src/lib/util.py"]).await,
        Verdict::Verified { .. }
    ));
    let Verdict::Gap { gap, .. } = c.verify_touching(&["cart.py", "setup.py"]).await else {
        panic!("accepted an edit outside the allowed paths")
    };
    assert_eq!(
        gap,
        "edits were made outside the allowed paths (cart.py, src/**): setup.py"
    );
    // A check that cannot be made does not pass.
    c.task.acceptance.push(Acceptance::EditsWithin {
        globs: vec!["src/[".into()],
    });
    let Verdict::Gap { gap, .. } = c.verify().await else {
        panic!("a broken check passed")
    };
    assert_eq!(
        gap,
        "the allowed paths cannot be checked: src/[ is not a valid glob"
    );
}

/// Attack (8): the checks outran the task's time budget. Each of the
/// verifier's runs gets at most the time the task has left, and a run the
/// budget cut short proves nothing.
#[tokio::test]
async fn the_verifiers_runs_end_with_the_task_time_budget() {
    let c = case(cart_workspace()).await;
    c.fix();
    let timeouts = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = Arc::clone(&timeouts);
    let killed_at_the_limit = ScriptedExec::new(move |spec| {
        record.lock().unwrap().push(spec.timeout);
        CommandResult {
            timed_out: true,
            duration: spec.timeout,
            ..CommandResult::default()
        }
    });
    let verdict = verify_cart(
        &c.verifier,
        &c.task,
        c.ws.as_ref(),
        &killed_at_the_limit,
        TimeBudget::from_now(Duration::from_secs(5)),
    )
    .await;
    let timeouts = timeouts.lock().unwrap().clone();
    assert_eq!(
        timeouts.len(),
        1,
        "the target test only: it did not pass, so its file is not run"
    );
    for timeout in &timeouts {
        assert!(*timeout <= Duration::from_secs(5), "{timeout:?}");
    }
    let Verdict::Gap { gap, .. } = verdict else {
        panic!("a killed run was taken as a pass")
    };
    assert!(
        gap.starts_with("`run-tests tests/test_cart.py::TestCart::test_total` was killed when the task's time ran out, so `TestCart.test_total` is not shown to pass"),
        "{gap}"
    );
}

/// The task's time ran out before the check: nothing runs, and the gap
/// says why rather than reporting a failure.
#[tokio::test]
async fn no_time_left_runs_nothing_and_says_so() {
    let c = case(cart_workspace()).await;
    c.fix();
    let exec = runner(Arc::clone(&c.ws));
    let verdict = verify_cart(
        &c.verifier,
        &c.task,
        c.ws.as_ref(),
        &exec,
        TimeBudget::ending(std::time::Instant::now(), Duration::ZERO),
    )
    .await;
    let Verdict::Gap { gap, .. } = verdict else {
        panic!("verified without running: {verdict:?}")
    };
    assert!(
        gap.contains("ran out before Rein could run `TestCart.test_total`"),
        "{gap}"
    );
    assert!(
        !exec.commands().iter().any(|c| c.ends_with("::test_total")),
        "{:?}",
        exec.commands()
    );
}

/// A run killed by its own timeout (not the task's time) still fails the
/// check, with no exit code of its own (-1 in the evidence).
#[tokio::test]
async fn a_run_that_timed_out_is_a_failure_without_an_exit_code() {
    let c = case(cart_workspace()).await;
    c.fix();
    let exec = ScriptedExec::new(|_| CommandResult {
        exit_code: None,
        timed_out: true,
        tail: vec!["still running…".into()],
        ..CommandResult::default()
    });
    let Verdict::Gap { gap, evidence } = c.verify_with(&["cart.py"], &exec).await else {
        panic!("verified a run that timed out")
    };
    assert!(
        gap.starts_with("`TestCart.test_total` still fails (exit -1):\nstill running…"),
        "{gap}"
    );
    assert_eq!(evidence[0].exit_code, Some(-1));
}

/// A failure's gap quotes the lines that say why (errors, assertions,
/// expectations, panics), not the noise around them.
#[tokio::test]
async fn a_failure_quotes_the_lines_that_say_why() {
    let c = case(cart_workspace()).await;
    c.fix();
    let noise = "step 1\nstep 2\nstep 3\nstep 4\nstep 5\nstep 6";
    for telling in [
        "Error: total is wrong",
        "AssertionError: 2 != 30",
        "expected 30, got 2",
        "thread 'tests::total' panicked at src/cart.rs:9:5",
    ] {
        let output = format!("{telling}\n{noise}");
        let exec = ScriptedExec::new(move |_| command_result(1, &output, &[]));
        let Verdict::Gap { gap, .. } = c.verify_with(&["cart.py"], &exec).await else {
            panic!("verified a failing run")
        };
        assert!(gap.contains(telling), "{telling}: {gap}");
        assert!(!gap.contains("step 6"), "{telling}: {gap}");
    }
}

/// The gap a failing run of `output` gives, up to its log line; `{root}`
/// in `output` stands for the project's root, as the runner prints it.
async fn gap_for_output(output: &str) -> String {
    use rein_core::workspace::Workspace as _;
    let c = case(cart_workspace()).await;
    c.fix();
    let output = output.replace("{root}", &c.ws.root().display().to_string());
    let exec = ScriptedExec::new(move |_| command_result(1, &output, &[]));
    let Verdict::Gap { gap, .. } = c.verify_with(&["cart.py"], &exec).await else {
        panic!("verified a failing run")
    };
    gap.split("\nfull log:").next().unwrap().to_owned()
}

/// Seen in the quiet QuixBugs round (bitcount): a rewrite left a syntax
/// error, and the gap said only "SyntaxError: invalid syntax", which a
/// 1.5B model cannot place; it changed the loop for four turns while the
/// broken docstring stayed. Where it failed is in the project's innermost
/// frames: they are quoted, relative to the project; the standard
/// library's are not.
#[tokio::test]
async fn a_syntax_error_is_shown_with_its_file_and_line() {
    let shown = gap_for_output(
        r#"Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/usr/lib/python3.11/unittest/loader.py", line 162, in loadTestsFromName
    module = __import__(module_name)
             ^^^^^^^^^^^^^^^^^^^^^^^
  File "{root}/tests/test_cart.py", line 2, in <module>
    from cart import Item, total
  File "{root}/cart.py", line 13
    Input:
          ^
SyntaxError: invalid syntax"#,
    )
    .await;
    assert_eq!(
        shown,
        r#"`TestCart.test_total` still fails (exit 1):
  File "tests/test_cart.py", line 2, in <module>
    from cart import Item, total
  File "cart.py", line 13
    Input:
          ^
SyntaxError: invalid syntax"#
    );
}

/// An assertion in a test: the frame that failed, then the assertion's
/// own words, once each (the frame quotes a line that mentions "assert").
#[tokio::test]
async fn an_assertion_is_shown_with_the_line_that_failed() {
    let shown = gap_for_output(
        r#"======================================================================
FAIL: test_total (tests.test_cart.TestCart.test_total)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "{root}/tests/test_cart.py", line 8, in test_total
    self.assertEqual(total(items), 30)
AssertionError: 2 != 30

----------------------------------------------------------------------
Ran 1 test in 0.001s

FAILED (failures=1)"#,
    )
    .await;
    assert_eq!(
        shown,
        r#"`TestCart.test_total` still fails (exit 1):
  File "tests/test_cart.py", line 8, in test_total
    self.assertEqual(total(items), 30)
AssertionError: 2 != 30"#
    );
}

/// When the run names many other tests but not the target, the verdict
/// lists a few and says there are more.
#[tokio::test]
async fn many_other_passes_are_listed_in_part() {
    let c = case(cart_workspace()).await;
    c.fix();
    let output: String = (1..=7)
        .map(|i| format!("test_other{i} (tests.test_cart.TestCart.test_other{i}) ... ok\n"))
        .collect::<String>()
        + "\nRan 7 tests in 0.001s\n\nOK";
    let exec = ScriptedExec::new(move |_| command_result(0, &output, &[]));
    let Verdict::Unconfirmed { summary, .. } = c.verify_with(&["cart.py"], &exec).await else {
        panic!("not unconfirmed")
    };
    assert!(summary.contains("is not among the 7 test(s)"), "{summary}");
    assert!(
        summary.contains("`tests.test_cart.TestCart.test_other5`, …)"),
        "{summary}"
    );
    assert!(!summary.contains("test_other6"), "{summary}");
}

/// A test that already failed before the task and still fails is not a
/// regression: only what passed before must pass now.
#[tokio::test]
async fn a_failure_that_was_there_before_is_not_a_regression() {
    let c = case(cart_workspace()).await;
    // `count` breaks before the baseline is taken: a second failure.
    let broken_count = c.ws.text("cart.py").unwrap().replace(
        "def count(items):\n    return len(items)",
        "def count(items):\n    return 0",
    );
    c.ws.set("cart.py", &broken_count);
    let c = Case {
        verifier: prepared(
            &c.task,
            c.ws.as_ref(),
            &c.exec,
            TestCommand::custom("run-tests {target}"),
        )
        .await,
        ..c
    };
    assert_eq!(
        c.verifier.baseline().suite.as_ref().unwrap().failures,
        vec![
            "tests.test_cart.TestCart.test_total",
            "tests.test_cart.TestCart.test_count"
        ]
    );
    c.fix();
    let verdict = c.verify().await;
    assert!(matches!(verdict, Verdict::Verified { .. }), "{verdict:?}");
}

/// Where the user said the test command writes its JUnit reports goes with
/// every run the verifier makes (the runner reads them after the run).
#[tokio::test]
async fn every_verifier_run_is_told_where_the_reports_are() {
    let ws = Arc::new(cart_workspace());
    let reports = Arc::new(std::sync::Mutex::new(Vec::new()));
    let exec = ScriptedExec::new({
        let reports = Arc::clone(&reports);
        move |spec| {
            reports.lock().unwrap().push(spec.report.clone());
            command_result(0, UNITTEST_PASSED, &[])
        }
    });
    let task = TaskSpec::fix_test(TaskId("t-v".into()), TEST_FILE, "TestCart.test_total");
    let command =
        TestCommand::custom("make test T={target}").with_report(Some("build/*.xml".into()));
    let verifier = prepared(&task, ws.as_ref(), &exec, command).await;
    verify_cart(
        &verifier,
        &task,
        ws.as_ref(),
        &exec,
        TimeBudget::unlimited(),
    )
    .await;
    let reports = reports.lock().unwrap().clone();
    assert_eq!(reports.len(), 3, "baseline, target, suite");
    assert!(
        reports
            .iter()
            .all(|r| *r == Some(ReportSpec::Junit("build/*.xml".into()))),
        "{reports:?}"
    );
}
