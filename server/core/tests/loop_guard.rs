//! The loop guard against models that go in circles: repeats are seen
//! through what changes on every run (log paths, timings), and a task
//! whose model keeps repeating itself or gives up ends, with the reason,
//! long before its turn budget.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use pretty_assertions::assert_eq;
use rein_core::fakes::{ScriptedExec, command_result};
use rein_core::ports::TaskEvent;
use rein_core::task::TaskState;
use rein_testkit::fake_model::{Reply, Scenario, Usage as FakeUsage};
use serde_json::json;
use support::{Setup, cart_workspace};

const TARGET: &str = "tests/test_cart.py::TestCart::test_total";

/// A test run that fails the same way every time, but like a real runner
/// reports a fresh timing on each run (and Rein a fresh log path).
fn failing_with_fresh_timings() -> (ScriptedExec, Arc<AtomicU32>) {
    let runs = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&runs);
    let exec = ScriptedExec::new(move |spec| {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        let mut result = command_result(
            1,
            &format!(
                "F..\nFAIL: test_total (tests.test_cart.TestCart.test_total)\nAssertionError: 2 != 30\n----------------------------------------------------------------------\nRan 3 tests in 0.{n:03}s\n\nFAILED (failures=1) at 12:00:{n:02}",
            ),
            &["tests.test_cart.TestCart.test_total"],
        );
        result.duration = Duration::from_millis(2_300 + u64::from(n) * 17);
        let _ = spec;
        result
    });
    (exec, runs)
}

#[tokio::test]
async fn identical_failing_test_runs_trip_the_guard() {
    let mut scenario = Scenario::new();
    for _ in 0..4 {
        scenario = scenario.reply(Reply::tool_call("run_tests", json!({"target": TARGET})));
    }
    let scenario = scenario.reply(Reply::text("The test still fails."));
    let (exec, runs) = failing_with_fresh_timings();
    let r = Setup::new(cart_workspace())
        .exec(exec)
        .run(scenario, |c| c.budgets.max_turns = 5)
        .await;
    let results = support::tool_results(&r);
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(results[0].starts_with("ERROR $ run-tests"), "{results:?}");
    assert!(results[1].starts_with("ERROR $ run-tests"), "{results:?}");
    for refused in &results[2..] {
        assert!(
            refused
                .starts_with("ERROR Refused: run_tests with these arguments already ran 2 times"),
            "{results:?}"
        );
    }
    // The baseline, two runs by the model (the other two were refused),
    // the verifier's one for the claim (the target test, which still
    // fails: its file is not run as well).
    assert_eq!(runs.load(Ordering::SeqCst), 4, "{:?}", r.exec.commands());
    let bodies: Vec<String> = r
        .server
        .requests()
        .iter()
        .map(|q| q.body["messages"].to_string())
        .collect();
    assert!(
        bodies[2].contains("You already ran this exact call and got the same result"),
        "{}",
        bodies[2]
    );
    // The notice, two refusals, and (three turns without anything new) the
    // nudge to give a best answer.
    let guards = r.guard_events();
    let kinds: Vec<&str> = guards.iter().filter_map(|g| g.split(':').next()).collect();
    assert_eq!(
        kinds,
        ["repeat", "repeat", "repeat", "no_progress"],
        "{guards:#?}"
    );
    assert!(
        guards[0].starts_with("repeat: You already ran"),
        "{guards:#?}"
    );
}

/// The naive loop (`harness = "naive"`, what `rein eval` measures the
/// harness against): nothing refused or nudged, no call read from the
/// model's text, and a first message with the goal only.
#[tokio::test]
async fn the_naive_harness_refuses_nothing_and_reads_no_calls_from_text() {
    let mut scenario = Scenario::new();
    for _ in 0..4 {
        scenario = scenario.reply(Reply::tool_call("run_tests", json!({"target": TARGET})));
    }
    let scenario = scenario.reply(Reply::text(
        "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"cart.py\"}}\n```",
    ));
    let (exec, runs) = failing_with_fresh_timings();
    let r = Setup::new(cart_workspace())
        .exec(exec)
        .run(scenario, |c| {
            c.budgets.max_turns = 5;
            c.harness = rein_core::harness::Harness::Naive;
        })
        .await;
    let results = support::tool_results(&r);
    assert_eq!(results.len(), 4, "{results:?}");
    for result in &results {
        assert!(result.starts_with("ERROR $ run-tests"), "{results:?}");
    }
    assert_eq!(r.guard_events(), Vec::<String>::new());
    // The text was a claim, checked by running the target once more.
    assert_eq!(runs.load(Ordering::SeqCst), 6, "{:?}", r.exec.commands());
    let read_from_text = r.progress.events().iter().any(|e| {
        matches!(e, TaskEvent::Context { transformation, .. } if transformation == "tool_calls_from_text")
    });
    assert!(!read_from_text);
    let first = r.server.requests()[0].body["messages"].to_string();
    assert!(
        first.contains("Run it with run_tests to see how it fails."),
        "{first}"
    );
    assert!(
        !first.contains("AssertionError"),
        "the baseline is not shown: {first}"
    );
    assert_ne!(r.outcome.state, TaskState::Succeeded);
}

#[tokio::test]
async fn a_test_run_that_changed_is_not_a_repeat() {
    // Same call, nothing edited, but the runner reports a different
    // failure each time (a flaky test): that is information, not a loop.
    let runs = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&runs);
    let exec = ScriptedExec::new(move |_| {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        command_result(
            1,
            &format!("AssertionError: {n} != 30\nFAILED (failures=1)"),
            &["tests.test_cart.TestCart.test_total"],
        )
    });
    let mut scenario = Scenario::new();
    for _ in 0..4 {
        scenario = scenario.reply(Reply::tool_call("run_tests", json!({"target": TARGET})));
    }
    let r = Setup::new(cart_workspace())
        .exec(exec)
        .run(scenario, |c| c.budgets.max_turns = 4)
        .await;
    assert_eq!(r.outcome.state, TaskState::BudgetExhausted);
    assert!(
        support::tool_results(&r)
            .iter()
            .all(|t| t.starts_with("ERROR $ run-tests")),
        "{:?}",
        support::tool_results(&r)
    );
    assert_eq!(r.guard_events(), Vec::<String>::new());
}

#[tokio::test]
async fn the_loop_guard_ends_a_task_that_keeps_repeating() {
    let mut scenario = Scenario::new();
    for _ in 0..30 {
        scenario = scenario.reply(
            Reply::text("Let me look at cart.py again.")
                .tool_call("read_file", json!({"path": "cart.py"})),
        );
    }
    let r = Setup::new(cart_workspace())
        .run(scenario, |c| c.budgets.max_turns = 30)
        .await;
    assert_eq!(r.outcome.state, TaskState::Failed, "{}", r.outcome.reason);
    // Two runs, then three refusals with nothing changed in between.
    assert_eq!(r.outcome.spent.turns, 5);
    assert_eq!(
        r.outcome.reason,
        "stopped: the model kept repeating calls the loop guard had refused (3 refusals with nothing changed in between; last: read_file). Its last words: \"Let me look at cart.py again.\""
    );
    assert_eq!(
        r.outcome.final_text.as_deref(),
        Some("Let me look at cart.py again.")
    );
    let guards = r.guard_events();
    assert!(
        guards
            .last()
            .is_some_and(|g| g.starts_with("stuck: stopped: the model kept repeating calls")),
        "{guards:#?}"
    );
    // The refused calls still have their results: the history is whole.
    let mut messages = support::messages_of(&r.outcome.history);
    assert_eq!(rein_models::pairing::repair(&mut messages).unwrap(), vec![]);
}

/// The same answer twice earns one more try: the model is told to change
/// its approach and sampled at temperature 1.0 (a seeded local model gives
/// the same answer to nearly the same prompt otherwise); the same answer
/// again ends the task.
#[tokio::test]
async fn a_model_that_gives_up_twice_gets_one_more_try_then_the_task_ends() {
    const GIVING_UP: &str = "My edit was not applied, so I stop here.";
    let mut scenario = Scenario::new();
    for _ in 0..10 {
        scenario = scenario.reply(Reply::text(GIVING_UP));
    }
    let r = Setup::new(cart_workspace())
        .run(scenario, |c| c.budgets.max_turns = 10)
        .await;
    assert_eq!(r.outcome.state, TaskState::Failed, "{}", r.outcome.reason);
    assert_eq!(r.outcome.spent.turns, 3);
    assert_eq!(
        r.outcome.reason,
        "stopped: the model gave up (the same answer twice, nothing changed in between); not verified: Rein's checks show the task is not done. Its last words: \"My edit was not applied, so I stop here.\""
    );
    assert_eq!(r.outcome.final_text.as_deref(), Some(GIVING_UP));
    let guards = r.guard_events();
    assert_eq!(
        guards,
        vec![
            "resample: the model gave up (the same answer twice, nothing changed in between): one more try, at temperature 1, asked to change its approach".to_owned(),
            format!("gave_up: {}", r.outcome.reason)
        ],
        "{guards:#?}"
    );
    let requests = r.server.requests();
    // The first claim was checked and turned down, so the model was told.
    let second = requests[1].body["messages"].to_string();
    assert!(second.contains("Rein checked your claim"), "{second}");
    assert!(second.contains("Keep going."), "{second}");
    let third = requests[2].body["messages"].to_string();
    assert!(
        third.contains(rein_core::context::prompt::TRY_SOMETHING_ELSE),
        "{third}"
    );
    let temperatures: Vec<&serde_json::Value> =
        requests.iter().map(|r| &r.body["temperature"]).collect();
    assert_eq!(
        temperatures,
        [
            &serde_json::Value::Null,
            &serde_json::Value::Null,
            &serde_json::json!(1.0)
        ]
    );
}

/// The one more try that changes the project is progress: the model is
/// sampled as usual again.
#[tokio::test]
async fn an_edit_after_the_extra_try_ends_the_hotter_sampling() {
    const GIVING_UP: &str = "My edit was not applied, so I stop here.";
    let scenario = Scenario::new()
        .reply(Reply::text(GIVING_UP))
        .reply(Reply::text(GIVING_UP))
        .reply(Reply::tool_call(
            "edit_file",
            serde_json::json!({"path": "cart.py", "old_text": "    return len(items)", "new_text": "    return sum(item.price * item.qty for item in items)"}),
        ))
        .reply(Reply::text("Fixed: total multiplies price by quantity."));
    let r = Setup::new(cart_workspace())
        .run(scenario, |c| c.budgets.max_turns = 10)
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    let temperatures: Vec<serde_json::Value> = r
        .server
        .requests()
        .iter()
        .map(|r| r.body["temperature"].clone())
        .collect();
    assert_eq!(
        temperatures,
        [
            serde_json::Value::Null,
            serde_json::Value::Null,
            serde_json::json!(1.0),
            serde_json::Value::Null
        ]
    );
}

#[tokio::test]
async fn a_model_that_says_the_same_after_changing_something_goes_on() {
    // The same words, but an edit in between: not a stall.
    let scenario = Scenario::new()
        .reply(Reply::text("I cannot find the bug."))
        .reply(Reply::tool_call("read_file", json!({"path": "cart.py"})))
        .reply(Reply::tool_call(
            "edit_file",
            json!({"path": "cart.py", "old_text": "    return len(items)", "new_text": "    return len(items) + 0"}),
        ))
        .reply(Reply::text("I cannot find the bug."));
    let r = Setup::new(cart_workspace())
        .run(scenario, |c| c.budgets.max_turns = 4)
        .await;
    assert_eq!(r.outcome.state, TaskState::BudgetExhausted);
    assert_eq!(r.guard_events(), Vec::<String>::new());
}

#[tokio::test]
async fn absurd_usage_from_the_provider_neither_wraps_nor_panics() {
    let absurd = FakeUsage {
        input: u64::MAX,
        output: u64::MAX,
        cache_read: u64::MAX,
        cache_write: u64::MAX,
    };
    let scenario = Scenario::new()
        .reply(Reply::tool_call("read_file", json!({"path": "cart.py"})).usage(absurd))
        .reply(Reply::text("done").usage(absurd));
    let r = Setup::new(cart_workspace()).run(scenario, |_| {}).await;
    assert_eq!(r.outcome.state, TaskState::BudgetExhausted);
    assert_eq!(
        r.outcome.reason,
        format!("stopped: max tokens ({} used of 2000000)", u64::MAX)
    );
    assert!(r.outcome.spent.cost_usd.is_finite());
    let last = r.progress.events().into_iter().rev().find_map(|e| match e {
        TaskEvent::Status(s) => Some(s),
        _ => None,
    });
    let last = last.unwrap();
    assert_eq!(
        (last.input_tokens, last.output_tokens),
        (u64::MAX, u64::MAX)
    );
    assert!(last.cost_usd.is_finite());
}

/// Greedy first (the provider's temperature, 0 unless the user set one):
/// every ordinary turn is sampled at it, only the one more try hotter.
#[tokio::test]
async fn ordinary_turns_are_sampled_at_the_configured_temperature_and_the_extra_try_hotter() {
    const GIVING_UP: &str = "My edit was not applied, so I stop here.";
    let scenario = Scenario::new()
        .reply(Reply::text(GIVING_UP))
        .reply(Reply::text(GIVING_UP))
        .reply(Reply::tool_call(
            "edit_file",
            serde_json::json!({"path": "cart.py", "old_text": "    return len(items)", "new_text": "    return sum(item.price * item.qty for item in items)"}),
        ))
        .reply(Reply::text("Fixed: total multiplies price by quantity."));
    let r = Setup::new(cart_workspace())
        .run(scenario, |c| {
            c.budgets.max_turns = 10;
            c.temperature = Some(0.0);
        })
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    let temperatures: Vec<serde_json::Value> = r
        .server
        .requests()
        .iter()
        .map(|r| r.body["temperature"].clone())
        .collect();
    assert_eq!(
        temperatures,
        [
            serde_json::json!(0.0),
            serde_json::json!(0.0),
            serde_json::json!(1.0),
            serde_json::json!(0.0)
        ]
    );
}

/// A model that gives up after the user turned its change down stopped
/// because the user said no: the task ends in the user's words, cancelled
/// (not failed), its cause typed.
#[tokio::test]
async fn a_rejection_then_giving_up_ends_as_the_users_decision() {
    const GIVING_UP: &str = "You rejected the fix, so I stop here.";
    let ws = cart_workspace();
    ws.review_with(|_| Err(String::new()));
    let mut scenario = Scenario::new()
        .reply(Reply::tool_call("read_file", json!({"path": "cart.py"})))
        .reply(Reply::tool_call(
            "edit_file",
            json!({"path": "cart.py", "old_text": "    return len(items)", "new_text": "    return sum(item.price * item.qty for item in items)"}),
        ));
    for _ in 0..10 {
        scenario = scenario.reply(Reply::text(GIVING_UP));
    }
    let r = Setup::new(ws)
        .run(scenario, |c| c.budgets.max_turns = 10)
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Cancelled,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.outcome.cause, rein_protocol::StopCause::Rejected);
    assert_eq!(r.outcome.reason, "You rejected the change; Rein stopped.");
}
