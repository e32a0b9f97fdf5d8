//! A fix-test task whose test already passes before any change (issue 16,
//! "quiet when idle"): it ends at once, succeeded, "already passing", with
//! the evidence of a run on the text as it is, and the model is never
//! called. Only what the verifier's strict reading of a run shows passing
//! counts; a resumed or cancelled task is never ended so.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use rein_core::budget::{Budgets, TimeBudget};
use rein_core::context::history::{History, Item};
use rein_core::exec::{CommandResult, Exec};
use rein_core::fakes::{MemoryWorkspace, ScriptedExec, command_result};
use rein_core::journal::{AgentSnapshot, Journal, LoopState};
use rein_core::ports::{TaskEvent, Verifier, VerifyContext};
use rein_core::task::{TaskId, TaskSpec, TaskState};
use rein_core::testing::command::TestCommand;
use rein_core::verify::TestVerifier;
use rein_models::Redactor;
use rein_store::Store;
use rein_testkit::fake_model::{Reply, Scenario};
use serde_json::json;
use support::{CART_BROKEN, CART_FIXED, Setup, TEST_FILE, cart_workspace};
use tokio_util::sync::CancellationToken;

const ALREADY_PASSING: &str = "already passing: `TestCart.test_total` passes; nothing to change";

/// unittest -v's output when the cart's tests pass.
const ALL_PASS: &str = "test_count (tests.test_cart.TestCart.test_count) ... ok\ntest_total (tests.test_cart.TestCart.test_total) ... ok\n\n----------------------------------------------------------------------\nRan 2 tests in 0.001s\n\nOK";

/// What the model would say if it were asked: a claim of completion, which
/// the verifier would accept ("fixed: …"), so a call shows in the outcome
/// as well as in the fake model's requests.
fn claims_done() -> Scenario {
    Scenario::new().reply(Reply::text("It passes already; nothing to do."))
}

/// The cart project with `total` already right.
fn fixed_workspace() -> MemoryWorkspace {
    cart_workspace().with_file("cart.py", CART_FIXED)
}

#[tokio::test]
async fn a_test_that_already_passes_ends_at_once_without_a_model_call() {
    let r = Setup::new(fixed_workspace())
        .run(claims_done(), |_| {})
        .await;
    assert_eq!(
        (r.outcome.state, r.outcome.reason.as_str()),
        (TaskState::Succeeded, ALREADY_PASSING)
    );
    assert_eq!(r.server.requests().len(), 0, "the model was called");
    assert_eq!(r.outcome.spent.turns, 0);
    assert_eq!(r.outcome.final_text, None, "no words of a model");
    assert!(r.ws.proposals().is_empty(), "nothing was changed");
    // The baseline run of the test's file, then the target's own run on
    // the text as it is now (saved first), which is the evidence.
    assert_eq!(
        r.exec.commands(),
        [
            "run-tests tests/test_cart.py",
            "run-tests tests/test_cart.py::TestCart::test_total"
        ]
    );
    assert_eq!(r.ws.flushes(), 1);
    let evidence = &r.outcome.evidence;
    assert_eq!(evidence.len(), 1, "{evidence:?}");
    assert_eq!(
        evidence[0].check,
        "test_passes tests/test_cart.py::TestCart.test_total"
    );
    assert_eq!(evidence[0].exit_code, Some(0));
    // The editor is shown what proved it, before the final status.
    let verification = r
        .progress
        .events()
        .into_iter()
        .find_map(|e| match e {
            TaskEvent::Verification {
                turn,
                passed,
                detail,
                evidence,
            } => Some((turn, passed, detail, evidence)),
            _ => None,
        })
        .expect("no verification event");
    assert_eq!(
        verification,
        (
            0,
            true,
            ALREADY_PASSING.to_owned(),
            r.outcome.evidence.clone()
        )
    );
    expect_test::expect![[r#"
        status running
        status verifying
        verification passed
        status succeeded"#]]
    .assert_eq(&support::timeline(&r.progress.events()));
    let Some(TaskEvent::Status(last)) = r.progress.events().pop() else {
        panic!("the last event is not the final status")
    };
    assert_eq!(
        (last.state, last.reason.as_deref(), last.turn),
        (TaskState::Succeeded, Some(ALREADY_PASSING), 0)
    );
}

/// The baseline runs on the saved files; the user's buffer can differ
/// (an unsaved change that breaks the code). The target's own run on the
/// text as it is then fails, so the task runs as usual.
#[tokio::test]
async fn a_test_the_baseline_saw_pass_but_the_current_text_fails_is_worked_on() {
    let setup = Setup::new(cart_workspace());
    let current = Arc::clone(&setup.ws);
    // The file's run sees a saved copy that passes; the target's run, the
    // text as it is.
    let exec = ScriptedExec::new(move |spec| {
        let fixed = current.text("cart.py").is_some_and(|t| t.contains("sum("));
        if spec.command == "run-tests tests/test_cart.py" || fixed {
            command_result(0, ALL_PASS, &[])
        } else {
            command_result(
                1,
                "FAIL: test_total (tests.test_cart.TestCart.test_total)\nAssertionError: 2 != 30\n\nRan 1 test in 0.001s\n\nFAILED (failures=1)",
                &["tests.test_cart.TestCart.test_total"],
            )
        }
    });
    let setup = setup.exec(exec);
    let scenario = Scenario::new()
        .reply(Reply::tool_call("read_file", json!({"path": "cart.py"})))
        .reply(Reply::tool_call(
            "edit_file",
            json!({"path": "cart.py", "old_text": "    return len(items)", "new_text": "    return sum(item.price * item.qty for item in items)"}),
        ))
        .reply(Reply::text("Fixed."));
    let r = setup.run(scenario, |_| {}).await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert!(
        r.outcome.reason.starts_with("fixed: "),
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.server.requests().len(), 3);
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
    let timeline = support::timeline(&r.progress.events());
    assert!(
        timeline
            .starts_with("status running\nstatus verifying\nstatus running\ntool_call read_file"),
        "{timeline}"
    );
    // The check that found it failing is no verdict on the task.
    let verdicts = r
        .progress
        .events()
        .iter()
        .filter(|e| matches!(e, TaskEvent::Verification { .. }))
        .count();
    assert_eq!(verdicts, 1);
}

#[tokio::test]
async fn a_failing_test_is_worked_on_as_before() {
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::tool_call("read_file", json!({"path": "cart.py"})))
                .reply(Reply::tool_call(
                    "edit_file",
                    json!({"path": "cart.py", "old_text": "    return len(items)", "new_text": "    return sum(item.price * item.qty for item in items)"}),
                ))
                .reply(Reply::text("Fixed.")),
            |_| {},
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.server.requests().len(), 3);
    // No check before the first turn: the baseline showed it failing.
    assert!(
        support::timeline(&r.progress.events()).starts_with("status running\ntool_call read_file"),
        "{}",
        support::timeline(&r.progress.events())
    );
}

/// Cancelled before it began: cancelled, not "already passing".
#[tokio::test]
async fn a_cancelled_task_is_not_ended_as_already_passing() {
    let setup = Setup::new(fixed_workspace());
    setup.cancel.cancel();
    let r = setup.run(claims_done(), |_| {}).await;
    assert_eq!(
        r.outcome.state,
        TaskState::Cancelled,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.server.requests().len(), 0);
}

/// A resumed task has begun its work: it is never ended "already
/// passing", even when a fresh baseline would show the test passing (the
/// model's edit before the crash may be what made it pass).
#[tokio::test]
async fn a_resumed_task_is_never_ended_as_already_passing() {
    let setup = Setup::new(fixed_workspace());
    let mut history = History::default();
    history.push(Item::user("Fix the failing test `TestCart.test_total`."));
    let snapshot = AgentSnapshot {
        history,
        state: LoopState {
            turn: 1,
            progress: Default::default(),
            spent: Default::default(),
            elapsed_ms: 0,
            reads: vec![],
            runs: 0,
            compactions: 0,
            verifier: serde_json::Value::Null,
        },
    };
    let r = setup.resume_from(snapshot, claims_done(), |_| {}).await;
    assert_eq!(r.server.requests().len(), 1);
    assert_eq!(r.outcome.state, TaskState::Succeeded);
    assert!(
        r.outcome.reason.starts_with("fixed: "),
        "{}",
        r.outcome.reason
    );
}

/// The record ends as the task does: succeeded with the reason, the lease
/// released, no turn.
#[tokio::test]
async fn an_already_passing_task_is_journaled_to_its_end() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let mut setup = Setup::new(fixed_workspace());
    setup.journal = Some(Arc::new(
        Journal::begin(
            Arc::clone(&store),
            &setup.task,
            &Budgets::default(),
            &rein_core::journal::owner_id(),
            None,
            Redactor::default(),
        )
        .unwrap(),
    ));
    let r = setup.run(claims_done(), |_| {}).await;
    assert_eq!(r.outcome.reason, ALREADY_PASSING);
    let record = store.task("t-test").unwrap().unwrap();
    assert_eq!(
        (record.state.as_str(), record.reason.as_deref()),
        ("succeeded", Some(ALREADY_PASSING))
    );
    assert!(record.owner.is_none(), "the lease is released at the end");
    assert!(store.turns("t-test").unwrap().is_empty());
}

/// A verifier whose baseline is the cart's file run printing `output`
/// (exit `code`, failures `failures`).
async fn baseline_of(run: CommandResult) -> TestVerifier {
    let ws = fixed_workspace();
    let exec = ScriptedExec::new(move |_| run.clone());
    let task = TaskSpec::fix_test(TaskId("t-b".into()), TEST_FILE, "TestCart.test_total");
    prepared(&task, &ws, &exec).await
}

async fn prepared(task: &TaskSpec, ws: &MemoryWorkspace, exec: &dyn Exec) -> TestVerifier {
    TestVerifier::prepare(
        task,
        ws,
        exec,
        Some(TestCommand::custom("run-tests {target}")),
        Duration::from_secs(60),
        Path::new(".rein/artifacts/t-b"),
        &CancellationToken::new(),
    )
    .await
}

/// The baseline counts as passing only by the rules of a check of the
/// target: the runner names it among the passes and its closing summary
/// counts passes; and none of the run's failures is it. Other tests of
/// the file may fail.
#[tokio::test]
async fn only_a_baseline_that_names_the_target_passing_is_met() {
    let met = |output: &str, code: i32, failures: &[&str]| {
        let run = command_result(code, output, failures);
        async move { baseline_of(run).await.met_at_baseline() }
    };
    assert!(met(ALL_PASS, 0, &[]).await, "all pass");
    assert!(
        met(
            "test_count (tests.test_cart.TestCart.test_count) ... FAIL\ntest_total (tests.test_cart.TestCart.test_total) ... ok\n\nRan 2 tests in 0.001s\n\nFAILED (failures=1)",
            1,
            &["tests.test_cart.TestCart.test_count"],
        )
        .await,
        "another test of the file fails"
    );
    for (why, output, code, failures) in [
        (
            "cut short: no closing summary",
            "test_total (tests.test_cart.TestCart.test_total) ... ok",
            0,
            &[][..],
        ),
        (
            "a summary that names no test",
            "..\nRan 2 tests in 0.001s\n\nOK",
            0,
            &[],
        ),
        (
            "a summary of nothing run",
            "test_total (tests.test_cart.TestCart.test_total) ... ok\n\nRan 0 tests in 0.000s\n\nOK",
            0,
            &[],
        ),
        (
            "only other tests pass",
            "test_count (tests.test_cart.TestCart.test_count) ... ok\n\nRan 1 test in 0.001s\n\nOK",
            0,
            &[],
        ),
        (
            "the target is among the failures too",
            ALL_PASS,
            1,
            &["tests.test_cart.TestCart.test_total"],
        ),
        (
            "a wrapper whose output Rein cannot read",
            "all tests passed",
            0,
            &[],
        ),
    ] {
        assert!(
            !met(output, code, failures).await,
            "{why}: counted as passing"
        );
    }
    let timed_out = CommandResult {
        timed_out: true,
        ..command_result(0, ALL_PASS, &[])
    };
    assert!(!baseline_of(timed_out).await.met_at_baseline(), "timed out");
}

/// A resumed task's verifier compares against its saved baseline and
/// never says the task was done before it began.
#[tokio::test]
async fn a_verifier_for_a_resumed_task_is_never_met_at_baseline() {
    let verifier = baseline_of(command_result(0, ALL_PASS, &[])).await;
    assert!(verifier.met_at_baseline());
    let resumed = TestVerifier::with_baseline(
        Some(TestCommand::custom("run-tests {target}")),
        Duration::from_secs(60),
        verifier.baseline().clone(),
    );
    assert!(!resumed.met_at_baseline());
}

/// A task without a target test (an instruction) is never done before it
/// starts: nothing but the model's word would say it is.
#[tokio::test]
async fn an_instruction_is_never_met_at_baseline() {
    let ws = fixed_workspace();
    let exec = ScriptedExec::new(|_| command_result(0, ALL_PASS, &[]));
    let task = TaskSpec::instruction(TaskId("t-i".into()), "Explain total()");
    assert!(!prepared(&task, &ws, &exec).await.met_at_baseline());
}

/// What the baseline showed is confirmed on the text as it is now: a
/// change made since (the user's unsaved typing) is what counts, and the
/// evidence is of that text.
#[tokio::test]
async fn already_met_is_confirmed_on_the_text_as_it_is_now() {
    let ws = Arc::new(fixed_workspace());
    let current = Arc::clone(&ws);
    let exec = ScriptedExec::new(move |_| {
        if current.text("cart.py").is_some_and(|t| t.contains("sum(")) {
            command_result(0, ALL_PASS, &[])
        } else {
            command_result(
                1,
                "FAILED (failures=1)",
                &["tests.test_cart.TestCart.test_total"],
            )
        }
    });
    let task = TaskSpec::fix_test(TaskId("t-b".into()), TEST_FILE, "TestCart.test_total");
    let verifier = prepared(&task, &ws, &exec).await;
    assert!(verifier.met_at_baseline());
    let cx = || VerifyContext {
        task: &task,
        touched: &[],
        workspace: ws.as_ref(),
        exec: &exec,
        artifacts_dir: ".rein/artifacts/t-b".into(),
        cancel: CancellationToken::new(),
        time: TimeBudget::unlimited(),
    };
    ws.set("cart.py", CART_BROKEN);
    assert_eq!(verifier.already_met(cx()).await, None);
    ws.set("cart.py", CART_FIXED);
    let met = verifier.already_met(cx()).await.expect("not met");
    assert_eq!(met.summary, ALREADY_PASSING);
    assert_eq!(met.evidence.len(), 1);
    assert_eq!(
        met.evidence[0].files,
        vec![(
            TEST_FILE.to_owned(),
            rein_text::ContentHash::of_str(&ws.text(TEST_FILE).unwrap())
        )]
    );
}
