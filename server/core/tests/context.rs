//! What the model sees: the shedding rules (superseded reads become stubs,
//! old test logs shrink to their summary, large outputs are spilled to a
//! file) and compaction, checked on the requests actually sent.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use rein_core::context::ContextConfig;
use rein_core::ports::TaskEvent;
use rein_core::task::TaskState;
use rein_testkit::fake_model::{Fault, Reply, Scenario};
use serde_json::{Value, json};
use support::{Setup, cart_workspace};

/// A request's messages, one line per part, long texts cut: what a reader
/// needs to see the shape of the context.
fn render(body: &Value) -> String {
    let cut = |s: &str, n: usize| {
        let one_line = s.replace('\n', "⏎");
        if one_line.chars().count() > n {
            format!("{}…", one_line.chars().take(n).collect::<String>())
        } else {
            one_line
        }
    };
    let mut out = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        let role = message["role"].as_str().unwrap();
        for part in message["content"].as_array().unwrap() {
            let cache = if part.get("cache_control").is_some() {
                " [cache]"
            } else {
                ""
            };
            let line = match part["type"].as_str().unwrap() {
                "text" => format!("{role}: {}", cut(part["text"].as_str().unwrap(), 90)),
                "tool_use" => format!(
                    "{role}: call {}({})",
                    part["name"].as_str().unwrap(),
                    part["input"]
                ),
                "tool_result" => {
                    let error = if part.get("is_error").is_some() {
                        " error"
                    } else {
                        ""
                    };
                    format!(
                        "{role}: result{error}: {}",
                        cut(part["content"].as_str().unwrap(), 90)
                    )
                }
                other => format!("{role}: {other}"),
            };
            out.push(format!("{line}{cache}"));
        }
    }
    out.join("\n")
}

/// Test, read, fix, read again, test: a read and a test log superseded.
fn test_read_edit_read_test() -> Scenario {
    Scenario::new()
        .reply(Reply::tool_call("run_tests", json!({})))
        .reply(Reply::tool_call("read_file", json!({"path": "cart.py"})))
        .reply(Reply::tool_call(
            "edit_file",
            json!({"path": "cart.py", "old_text": "    return len(items)", "new_text": "    return sum(i.price * i.qty for i in items)"}),
        ))
        .reply(Reply::tool_call("read_file", json!({"path": "cart.py"})))
        .reply(Reply::tool_call("run_tests", json!({})))
        .reply(Reply::text("Fixed."))
}

#[tokio::test]
async fn superseded_reads_become_stubs_and_old_test_logs_summaries() {
    let scenario = test_read_edit_read_test();
    // Shed as soon as there is anything to shed (batching is tested below).
    let r = Setup::new(cart_workspace())
        .run(scenario, |c| c.context.shed_slack_tokens = 0)
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    let last = &r.server.requests()[5].body;
    expect_test::expect![[r#"
        user: Fix the failing test `TestCart.test_total` in `tests/test_cart.py`. The test is right: fix…
        assistant: call run_tests({})
        user: result error: [earlier test run, summarized] $ run-tests: exit code 1 after 0.1s; failing: tests.test_ca…
        assistant: call read_file({"path":"cart.py"})
        user: result: [cart.py read at v1; superseded by a later read of it below]
        assistant: call edit_file({"path":"cart.py","old_text":"    return len(items)","new_text":"    return sum(i.price * i.qty for i in items)"})
        user: result: Edited cart.py (v1 → v2).⏎Now lines 4-7 read:⏎     4	        self.qty = qty⏎     5	⏎     6…
        assistant: call read_file({"path":"cart.py"})
        user: result: cart.py (v2), lines 1-7 of 7:⏎     1	class Item:⏎     2	    def __init__(self, price, qty)…
        assistant: call run_tests({}) [cache]
        user: result: $ run-tests⏎exit code 0 after 0.1s⏎output:⏎test_count (tests.test_cart.TestCart.test_count…
        user: [Progress: turn 6 of 20] Changed: cart.py (read → v2). Last test run: $ run-tests: exit co… [cache]"#]]
    .assert_eq(&render(last));
    let transformations: Vec<String> = r
        .progress
        .events()
        .iter()
        .filter_map(|e| match e {
            TaskEvent::Context {
                transformation,
                detail,
            } => Some(format!("{transformation} {detail}")),
            _ => None,
        })
        .collect();
    // Each is traced once, when it starts, though every later request
    // carries it too.
    expect_test::expect![[r#"
        [
            "stub_superseded_read cart.py v1",
            "summarize_old_test_log toolu_fake_0001",
        ]
    "#]]
    .assert_debug_eq(&transformations);
}

/// The same task with the default settings: shedding would save little, so
/// nothing is shed and every request is the previous one plus the new turn
/// (the prompt cache is read up to the end of the previous request).
#[tokio::test]
async fn below_the_slack_each_request_extends_the_previous_one() {
    let scenario = test_read_edit_read_test();
    let r = Setup::new(cart_workspace()).run(scenario, |_| {}).await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    // The messages without cache markers, and without the progress note
    // (always the last part of the last message: it changes every turn).
    let history = |body: &Value| -> Vec<Value> {
        let mut messages = body["messages"].as_array().unwrap().clone();
        for message in &mut messages {
            for part in message["content"].as_array_mut().unwrap() {
                part.as_object_mut().unwrap().remove("cache_control");
            }
        }
        let last = messages.last_mut().unwrap();
        let parts = last["content"].as_array_mut().unwrap();
        assert!(
            parts.pop().unwrap()["text"]
                .as_str()
                .unwrap()
                .starts_with("[Progress: turn")
        );
        if parts.is_empty() {
            messages.pop();
        }
        messages
    };
    let requests = r.server.requests();
    assert_eq!(requests.len(), 6);
    for pair in requests.windows(2) {
        let (before, after) = (history(&pair[0].body), history(&pair[1].body));
        assert!(after.len() > before.len());
        assert_eq!(
            after[..before.len()],
            before[..],
            "an earlier message changed"
        );
    }
    let shed = r
        .progress
        .events()
        .iter()
        .filter(|e| matches!(e, TaskEvent::Context { .. }))
        .count();
    assert_eq!(shed, 0);
}

/// Reads of the same file, turn after turn, assembled as the loop does:
/// superseded reads are stubbed only once stubbing them saves more than
/// the slack, then all at once, and a stub stays a stub.
#[test]
fn shedding_comes_in_batches_and_stays() {
    use rein_core::context::history::{History, Item, RecordedResult, ResultMeta};
    use rein_core::context::{ContextManager, Shedding};
    use rein_core::task::{TaskId, TaskSpec};
    use rein_core::workspace::ReadVersion;
    use rein_models::{Part, ToolCall};

    let config = ContextConfig {
        shed_slack_tokens: 2_500,
        ..ContextConfig::default()
    };
    let task = TaskSpec::fix_test(TaskId("t".into()), "tests/test_cart.py", "test_total");
    let manager = ContextManager::new(config, "claude-sonnet-4-5", &task, Vec::new(), None);
    let mut history = History::default();
    history.push(Item::user("Fix it."));
    let mut shed = Shedding::default();
    let mut stubbed_per_turn = Vec::new();
    for turn in 1..=8 {
        // Each read of src/a.rs is ~1,200 tokens, a new version each time.
        let text: String = (1..=100)
            .map(|l| format!("let v{l} = step({l}, {turn});\n"))
            .collect();
        let id = format!("call_{turn}");
        history.push(Item::assistant(vec![Part::ToolCall(ToolCall {
            id: id.clone(),
            name: "read_file".into(),
            arguments: json!({"path": "src/a.rs"}),
        })]));
        history.push(Item::Results {
            results: vec![RecordedResult::new(
                id,
                "read_file".into(),
                text.clone(),
                false,
                ResultMeta::FileRead {
                    path: "src/a.rs".into(),
                    version: ReadVersion::of_disk(&text),
                },
            )],
            notes: Vec::new(),
        });
        let assembled = manager.assemble_with(&history, "[Progress]", &mut shed);
        stubbed_per_turn.push(assembled.transformations.len());
    }
    // Turn 4: three superseded reads save more than 2,500 tokens; from then
    // on, a batch each time three more have piled up.
    expect_test::expect![[r#"
        [
            0,
            0,
            0,
            3,
            3,
            3,
            6,
            6,
        ]
    "#]]
    .assert_debug_eq(&stubbed_per_turn);
    // The eager assembly sheds everything at once.
    assert_eq!(
        manager
            .assemble(&history, "[Progress]")
            .transformations
            .len(),
        7
    );
}

#[tokio::test]
async fn a_large_output_is_spilled_to_a_file_the_model_can_read() {
    let big: String = (1..=400)
        .map(|n| format!("line {n}: the quick brown fox jumps over the lazy dog\n"))
        .collect();
    let scenario = Scenario::new()
        .reply(Reply::tool_call("read_file", json!({"path": "big.txt"})))
        .reply(Reply::tool_call("read_file", json!({"path": ".rein/artifacts/t-test/output-toolu_fake_0001.txt", "start_line": 200, "end_line": 201})))
        .reply(Reply::text("done"));
    let r = Setup::new(cart_workspace().with_file("big.txt", &big))
        .run(scenario, |c| {
            c.context = ContextConfig {
                tool_output_cap: 500,
                ..ContextConfig::default()
            };
            c.budgets.max_turns = 3;
        })
        .await;
    let results = support::full_results(&r);
    assert!(results[0].contains("lines (") && results[0].contains("tokens) omitted; the whole output is in .rein/artifacts/t-test/output-toolu_fake_0001.txt"), "{}", results[0]);
    assert!(results[0].len() < big.len() / 2);
    // The spilled file is the whole original result, readable despite .rein/ being off limits.
    let spilled =
        r.ws.text(".rein/artifacts/t-test/output-toolu_fake_0001.txt")
            .unwrap();
    assert!(spilled.contains("line 400: the quick brown fox"));
    assert!(
        results[1].contains("   200\t   199\tline 199:"),
        "{}",
        results[1]
    );
}

#[tokio::test]
async fn compaction_summarizes_the_old_part_and_keeps_the_recent_one() {
    let page = |n: usize| -> String {
        (1..=150)
            .map(|l| format!("module {n} line {l}: fn compute_{l}(x: u64) -> u64 {{ x * {l} }}\n"))
            .collect()
    };
    let scenario = Scenario::new()
        .reply(Reply::tool_call("read_file", json!({"path": "a.rs"})))
        .reply(Reply::tool_call("read_file", json!({"path": "b.rs"})))
        .reply(Reply::tool_call("read_file", json!({"path": "c.rs"})))
        // The compaction call.
        .reply(Reply::text("Goal: fix test_total. Read a.rs (150 lines of compute_N functions) and b.rs (same shape). Nothing changed yet. Next: read cart.py."))
        .reply(Reply::text("done"));
    let ws = cart_workspace()
        .with_file("a.rs", &page(1))
        .with_file("b.rs", &page(2))
        .with_file("c.rs", &page(3));
    let r = Setup::new(ws)
        .run(scenario, |c| {
            c.context = ContextConfig {
                window_tokens: 16_000,
                max_output_tokens: 1_000,
                keep_recent_items: 2,
                ..ContextConfig::default()
            };
            c.budgets.max_turns = 5;
        })
        .await;
    let requests = r.server.requests();
    let compaction = &requests[3].body;
    assert!(
        compaction["system"]
            .to_string()
            .contains("You condense the working history"),
        "{}",
        compaction["system"]
    );
    assert!(compaction["tools"].is_null());
    let transcript = compaction["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        transcript.contains("RESULT of read_file") && transcript.contains("module 2 line 1:"),
        "{transcript}"
    );

    let after = &requests[4].body;
    expect_test::expect![[r#"
        user: Fix the failing test `TestCart.test_total` in `tests/test_cart.py`. The test is right: fix…
        user: [Summary of the earlier part of this task, written when the context grew large. The full r…
        assistant: call read_file({"path":"c.rs"}) [cache]
        user: result: c.rs (v1), lines 1-150 of 150:⏎     1	module 3 line 1: fn compute_1(x: u64) -> u64 { x * 1…
        user: [Progress: turn 4 of 5] No files changed yet.⏎1 turn(s) left after this one: converge now,… [cache]"#]]
    .assert_eq(&render(after));
    let archive = r.ws.text(".rein/artifacts/t-test/history-1.json").unwrap();
    assert!(
        archive.contains("module 1 line 150"),
        "the originals stay retrievable"
    );
    let compacted = r.progress.events().iter().any(|e| {
        matches!(
            e,
            TaskEvent::Compaction {
                summarized_items: 4,
                ..
            }
        )
    });
    assert!(compacted);
    // The compaction call is not a turn; its tokens count.
    assert_eq!(r.outcome.spent.turns, 4);
}

/// The compaction's summary is a model call too: a model still writing it
/// when the task's time ends does not keep the task running.
#[tokio::test]
async fn a_summary_still_being_written_when_the_time_ends_ends_the_task() {
    let page: String = (1..=150)
        .map(|l| format!("module line {l}: fn compute_{l}(x: u64) -> u64 {{ x * {l} }}\n"))
        .collect();
    let scenario = Scenario::new()
        .reply(Reply::tool_call("read_file", json!({"path": "a.rs"})))
        .reply(Reply::tool_call("read_file", json!({"path": "b.rs"})))
        .reply(Reply::tool_call("read_file", json!({"path": "c.rs"})))
        // The compaction call, which would answer after two minutes; the
        // support's own guard fails the test if the task outlives 60 s.
        .reply(
            Reply::text("Goal: fix test_total.").with_fault(Fault::SlowStart { delay_ms: 120_000 }),
        );
    let ws = cart_workspace()
        .with_file("a.rs", &page)
        .with_file("b.rs", &page.replace("module", "crate"))
        .with_file("c.rs", &page.replace("module", "file"));
    let r = Setup::new(ws)
        .run(scenario, |c| {
            c.context = ContextConfig {
                window_tokens: 16_000,
                max_output_tokens: 1_000,
                keep_recent_items: 2,
                ..ContextConfig::default()
            };
            c.budgets.max_wall_time = std::time::Duration::from_secs(3);
        })
        .await;
    assert_eq!(r.outcome.state, TaskState::BudgetExhausted);
    assert_eq!(
        r.outcome.reason,
        "stopped: max time (3 s), while the model was answering"
    );
    // The fourth request was the summary's.
    let requests = r.server.requests();
    assert_eq!(requests.len(), 4);
    assert!(
        requests[3].body["system"]
            .to_string()
            .contains("You condense the working history")
    );
}
