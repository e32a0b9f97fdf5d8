//! The task's time budget binds the commands it runs: a model asking for
//! a long `timeout_s` does not outrun it, and a command still running
//! when it ends is killed and ends the task. Real processes (`sleep`)
//! where the point is that they are killed; assertions on outcomes and
//! reasons, never on durations.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pretty_assertions::assert_eq;
use rein_core::context::history::{History, Item};
use rein_core::fakes::{MemoryWorkspace, ScriptedApprover, ScriptedExec, command_result};
use rein_core::journal::{AgentSnapshot, LoopState};
use rein_core::os::process::ProcessExec;
use rein_core::ports::ApprovalDecision;
use rein_core::task::{TaskId, TaskSpec, TaskState};
use rein_core::{CommandResult, CommandSpec, Exec, ExecError};
use rein_testkit::fake_model::{Fault, Reply, Scenario};
use serde_json::json;
use support::{CART_BROKEN, Setup, TEST_FILE, TEST_TEXT};
use tokio_util::sync::CancellationToken;

/// The model asks to run `sleep 100` for up to 100 s, then (if it ever
/// gets the result) says it is done.
fn sleep_100() -> Scenario {
    Scenario::new()
        .reply(Reply::tool_call(
            "run_command",
            json!({"command": "sleep 100", "timeout_s": 100}),
        ))
        .reply(Reply::text("It slept."))
}

/// A cart project in a real folder (commands run there and write their
/// logs under it), the user allowing the command, real processes.
fn real_setup(root: &std::path::Path) -> Setup {
    let ws = MemoryWorkspace::new(root)
        .with_file("cart.py", CART_BROKEN)
        .with_file(TEST_FILE, TEST_TEXT);
    Setup::new(ws)
        .task(TaskSpec::instruction(TaskId("t-time".into()), "Sleep"))
        .approver(ScriptedApprover::new().decide(ApprovalDecision::AllowOnce))
        .runner(Arc::new(ProcessExec::new()))
}

#[tokio::test]
async fn sleep_100_with_max_minutes_1_is_killed_when_the_budget_ends() {
    let root = tempfile::tempdir().unwrap();
    // A second call in the same reply, which must not run once the time
    // is out.
    let scenario = Scenario::new()
        .reply(
            Reply::tool_call(
                "run_command",
                json!({"command": "sleep 100", "timeout_s": 100}),
            )
            .tool_call("run_command", json!({"command": "touch ran-after"})),
        )
        .reply(Reply::text("It slept."));
    // The support's own guard fails the test if the task outlives 60 s:
    // the command's own 100 s are never waited for.
    let r = real_setup(root.path())
        .approver(
            ScriptedApprover::new()
                .decide(ApprovalDecision::AllowOnce)
                .decide(ApprovalDecision::AllowOnce),
        )
        .run(scenario, |c| {
            c.budgets.max_wall_time = Duration::from_secs(5);
        })
        .await;
    assert_eq!(r.outcome.state, TaskState::BudgetExhausted);
    assert_eq!(
        r.outcome.reason,
        "the time budget (5 s) ran out while `sleep 100` was running; it was killed"
    );
    let results = support::full_results(&r);
    assert!(
        results[0].starts_with("$ sleep 100\nkilled after "),
        "{}",
        results[0]
    );
    assert!(
        results[0].contains("(you asked for 1 min 40 s; the task's time budget of 5 s has "),
        "{}",
        results[0]
    );
    assert_eq!(
        results[1],
        "not run: the time budget (5 s) ran out while `sleep 100` was running; it was killed."
    );
    assert!(!root.path().join("ran-after").exists());
    // The model was not called again: the task ended with the command.
    assert_eq!(r.server.requests().len(), 1);
}

/// A resumed task has only the time its first run left it.
#[tokio::test]
async fn a_resumed_task_is_killed_when_the_time_it_has_left_ends() {
    let root = tempfile::tempdir().unwrap();
    let snapshot = AgentSnapshot {
        history: History {
            items: vec![Item::user("Sleep")],
        },
        state: LoopState {
            turn: 3,
            progress: Default::default(),
            spent: Default::default(),
            // 57 s of a 1 min budget were spent before the crash.
            elapsed_ms: 57_000,
            reads: Vec::new(),
            runs: 0,
            compactions: 0,
            verifier: serde_json::Value::Null,
        },
    };
    let r = real_setup(root.path())
        .resume_from(snapshot, sleep_100(), |c| {
            c.budgets.max_wall_time = Duration::from_secs(60);
        })
        .await;
    assert_eq!(r.outcome.state, TaskState::BudgetExhausted);
    assert_eq!(
        r.outcome.reason,
        "the time budget (1 min) ran out while `sleep 100` was running; it was killed"
    );
}

/// The timeouts each command got, in order.
fn recording_exec() -> (ScriptedExec, Arc<Mutex<Vec<Duration>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let exec = ScriptedExec::new(move |spec| {
        record.lock().unwrap().push(spec.timeout);
        command_result(0, "ok", &[])
    });
    (exec, seen)
}

#[tokio::test]
async fn a_timeout_over_the_ceiling_is_clipped_and_the_model_is_told() {
    let (exec, timeouts) = recording_exec();
    let scenario = Scenario::new()
        .reply(
            Reply::tool_call(
                "run_command",
                json!({"command": "make slow", "timeout_s": 3600}),
            )
            .tool_call(
                "run_command",
                json!({"command": "make quick", "timeout_s": 5}),
            ),
        )
        .reply(Reply::text("done"));
    let r = Setup::new(support::cart_workspace())
        .task(TaskSpec::instruction(TaskId("t-ceiling".into()), "Build"))
        .approver(
            ScriptedApprover::new()
                .decide(ApprovalDecision::AllowOnce)
                .decide(ApprovalDecision::AllowOnce),
        )
        .exec(exec)
        .run(scenario, |c| {
            c.budgets.command_timeout = Duration::from_secs(120);
            c.budgets.max_turns = 2;
        })
        .await;
    assert_eq!(
        *timeouts.lock().unwrap(),
        [Duration::from_secs(120), Duration::from_secs(5)]
    );
    let results = support::full_results(&r);
    assert!(
        results[0].contains(
            "\ntime limit: 2 min (you asked for 60 min; run_command runs at most 2 min here)\n"
        ),
        "{}",
        results[0]
    );
    assert!(!results[1].contains("time limit"), "{}", results[1]);
}

/// Neither the model's request nor the test ceiling outlasts the task.
#[tokio::test]
async fn every_command_ends_by_the_end_of_the_task() {
    let (exec, timeouts) = recording_exec();
    let scenario = Scenario::new()
        .reply(
            Reply::tool_call("run_tests", json!({}))
                .tool_call("run_command", json!({"command": "make", "timeout_s": 600})),
        )
        .reply(Reply::text("done"));
    Setup::new(support::cart_workspace())
        .task(TaskSpec::instruction(TaskId("t-left".into()), "Test"))
        .approver(ScriptedApprover::new().decide(ApprovalDecision::AllowOnce))
        .exec(exec)
        .run(scenario, |c| {
            c.budgets.max_wall_time = Duration::from_secs(40);
            c.budgets.command_timeout = Duration::from_secs(3600);
            c.budgets.max_turns = 2;
        })
        .await;
    let timeouts = timeouts.lock().unwrap();
    assert_eq!(timeouts.len(), 2);
    for timeout in timeouts.iter() {
        assert!(*timeout <= Duration::from_secs(40), "{timeout:?}");
    }
}

/// Every command runs until its time limit, where it is killed, as the
/// real executor kills one (without waiting for real time to pass twice).
struct RunsUntilKilled;

#[async_trait::async_trait]
impl Exec for RunsUntilKilled {
    async fn run(
        &self,
        spec: CommandSpec,
        cancel: CancellationToken,
    ) -> Result<CommandResult, ExecError> {
        tokio::select! {
            () = tokio::time::sleep(spec.timeout) => {}
            () = cancel.cancelled() => {}
        }
        Ok(CommandResult {
            timed_out: true,
            duration: spec.timeout,
            log_path: spec.log_path,
            ..CommandResult::default()
        })
    }
}

/// The verifier's test run is bounded by the task's time too: when it is
/// cut short, the task ends out of budget instead of waiting for the
/// tests' own 10 minutes.
#[tokio::test]
async fn a_claim_still_being_checked_when_the_time_ends_ends_the_task() {
    let scenario = Scenario::new().reply(Reply::text("Fixed."));
    let r = Setup::new(support::cart_workspace())
        .runner(Arc::new(RunsUntilKilled))
        .run(scenario, |c| {
            c.budgets.max_wall_time = Duration::from_secs(2);
        })
        .await;
    assert_eq!(r.outcome.state, TaskState::BudgetExhausted);
    assert_eq!(
        r.outcome.reason,
        "the time budget (2 s) ran out while Rein verified the claim: `run-tests tests/test_cart.py::TestCart::test_total` was killed when the task's time ran out, so `TestCart.test_total` is not shown to pass"
    );
}

/// Seen in the quiet QuixBugs round (flatten): one answer of a 1.5B model
/// on 2 cores took 447 s of a task allowed 300. The model call is bounded
/// by the time the task has left: the task ends when its budget does.
#[tokio::test]
async fn a_model_still_answering_when_the_time_ends_ends_the_task() {
    // The answer would come after two minutes; the support's own guard
    // fails the test if the task outlives 60 s.
    let scenario = Scenario::new()
        .reply(Reply::text("Fixed.").with_fault(Fault::SlowStart { delay_ms: 120_000 }));
    let r = Setup::new(support::cart_workspace())
        .run(scenario, |c| {
            c.budgets.max_wall_time = Duration::from_secs(2);
        })
        .await;
    assert_eq!(r.outcome.state, TaskState::BudgetExhausted);
    assert_eq!(
        r.outcome.reason,
        "stopped: max time (2 s), while the model was answering"
    );
}

/// Seen in the quiet held-out round of 2026-12-06 (flatten): the 1.5B
/// model wrote for the task's whole five minutes, the call was cut, and
/// the task ended "0 turns · 0 tok · $0.00" with nothing in the trace of
/// what it wrote. A call cut at the task's time counts as a turn with its
/// prompt and what it streamed, and the trace keeps the end of its text.
#[tokio::test]
async fn a_reply_cut_at_the_tasks_time_still_counts_its_tokens() {
    let rambling = "the fix is to flatten the list again ".repeat(400);
    let scenario =
        Scenario::new().reply(Reply::text(&rambling).with_fault(Fault::Slow { delay_ms: 100 }));
    let r = Setup::new(support::cart_workspace())
        .run(scenario, |c| {
            c.budgets.max_wall_time = Duration::from_secs(2);
        })
        .await;
    assert_eq!(
        r.outcome.reason,
        "stopped: max time (2 s), while the model was answering"
    );
    let spent = &r.outcome.spent;
    assert_eq!(spent.turns, 1);
    assert!(spent.usage.input_tokens > 100, "{spent:?}");
    assert!(spent.usage.output_tokens > 0, "{spent:?}");
    let unfinished = r.transformations("unfinished_reply");
    assert_eq!(unfinished.len(), 1, "{unfinished:?}");
    assert!(
        unfinished[0].starts_with("the model's reply was cut at the task's time after about ")
            && unfinished[0].contains("; it ended with: ")
            && unfinished[0].contains("flatten the list"),
        "{unfinished:?}"
    );
}
