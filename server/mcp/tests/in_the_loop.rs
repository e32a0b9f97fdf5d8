//! MCP tools inside Rein's loop: a scripted model calls the fault server's
//! tools during a fix-test task, and each call passes the same gates as a
//! built-in one — the permission (default ask, a rule allows, a deny wins),
//! the error results of a crash, a changed tool list taken in between
//! turns, a huge output capped and saved.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use rein_core::agent::{self, AgentConfig, Outcome, Ports};
use rein_core::config::mcp::McpServer;
use rein_core::fakes::{
    MemoryWorkspace, RecordingProgress, ScriptedApprover, ScriptedExec, command_result,
};
use rein_core::permissions::{Decision, Policy, Rule};
use rein_core::ports::{ApprovalDecision, Artifacts, TaskEvent};
use rein_core::task::{TaskId, TaskSpec};
use rein_core::testing::command::TestCommand;
use rein_core::verify::TestVerifier;
use rein_mcp::McpServers;
use rein_models::{ApiKey, ProviderConfig, ProviderKind, anthropic_client};
use rein_testkit::fake_model::{FakeModel, Reply, Scenario};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const TEST_FILE: &str = "tests/test_cart.py";
const BROKEN: &str = "def total(items):\n    return len(items)\n";
const FIXED: &str = "def total(items):\n    return sum(items)\n";

mod support;

fn fault_server() -> McpServer {
    McpServer {
        disabled_tools: vec!["malformed".into()],
        max_output_tokens: 2_000,
        ..support::fault_server(&[])
    }
}

struct Run {
    outcome: Outcome,
    /// The task's op log (what recovery would read after a crash).
    store: Arc<rein_store::Store>,
    ws: Arc<MemoryWorkspace>,
    approver: Arc<ScriptedApprover>,
    progress: Arc<RecordingProgress>,
}

impl Run {
    /// What the op log recorded a crash would leave of each call of `tool`.
    fn on_crash(&self, tool: &str) -> Vec<String> {
        self.store
            .ops("t-mcp")
            .unwrap()
            .iter()
            .filter(|op| op.tool == tool)
            .map(|op| {
                let record: serde_json::Value = serde_json::from_str(&op.args_json).unwrap();
                record["on_crash"].as_str().unwrap().to_owned()
            })
            .collect()
    }

    /// Each result the model got, whole, in order.
    fn results(&self) -> Vec<String> {
        self.outcome
            .history
            .items
            .iter()
            .filter_map(|i| match i {
                rein_core::context::history::Item::Results { results, .. } => Some(results),
                _ => None,
            })
            .flatten()
            .map(|r| r.content.clone())
            .collect()
    }

    fn permissions(&self) -> Vec<String> {
        self.progress
            .events()
            .iter()
            .filter_map(|e| match e {
                TaskEvent::Permission {
                    tool,
                    decision,
                    rule,
                    ..
                } => Some(format!("{tool}: {decision:?} ({rule})")),
                _ => None,
            })
            .collect()
    }
}

async fn run(scenario: Scenario, rules: &[(Decision, &str)], approver: ScriptedApprover) -> Run {
    let ws = Arc::new(
        MemoryWorkspace::new(env!("CARGO_MANIFEST_DIR"))
            .with_file("cart.py", BROKEN)
            .with_file(TEST_FILE, "from cart import total\n"),
    );
    let fixed = ws.clone();
    let exec = Arc::new(ScriptedExec::new(move |_| {
        if fixed.text("cart.py").is_some_and(|t| t.contains("sum(")) {
            command_result(
                0,
                "test_total (tests.test_cart.TestCart.test_total) ... ok\n\n----------------------------------------------------------------------\nRan 1 test in 0.001s\n\nOK",
                &[],
            )
        } else {
            command_result(
                1,
                "FAIL: test_total (tests.test_cart.TestCart.test_total)\nFAILED (failures=1)",
                &["tests.test_cart.TestCart.test_total"],
            )
        }
    }));
    let server = FakeModel::start(scenario).await.unwrap();
    let provider = ProviderConfig {
        provider: ProviderKind::Anthropic,
        model: "claude-sonnet-4-5".into(),
        base_url: server.base_url(),
        api_key: ApiKey::new("sk-ant-test-key-000000"),
        stream: true,
        retry: Default::default(),
        timeouts: Default::default(),
        prices: Default::default(),
        scenario: None,
        context_window: None,
        temperature: 0.0,
        key_from: None,
    };
    let tools = rein_core::tools::builtin();
    let policy = Policy::with_builtins(
        rules
            .iter()
            .map(|(decision, text)| Rule::parse(*decision, text, &tools).unwrap())
            .collect(),
    );
    let mut config = AgentConfig::new(policy);
    let test_command = TestCommand::custom("run-tests {target}");
    config.test_command = Some(test_command.clone());
    let started = McpServers::start(&[fault_server()], &support::spawner()).await;
    for tool in started.tools {
        config.tools.add(tool).unwrap();
    }
    config.tool_updates = Some(started.servers.clone());
    let task = TaskSpec::fix_test(TaskId("t-mcp".into()), TEST_FILE, "TestCart.test_total");
    let verifier = TestVerifier::prepare(
        &task,
        ws.as_ref(),
        exec.as_ref(),
        Some(test_command),
        config.budgets.test_timeout,
        std::path::Path::new(".rein/artifacts/t-mcp"),
        &CancellationToken::new(),
    )
    .await;
    let approver = Arc::new(approver);
    let progress = RecordingProgress::new();
    let artifacts: Arc<dyn Artifacts> = ws.clone();
    let store = Arc::new(rein_store::Store::open_in_memory().unwrap());
    let journal = rein_core::journal::Journal::begin(
        store.clone(),
        &task,
        &config.budgets,
        "host:1:test",
        None,
        Default::default(),
    )
    .unwrap();
    let ports = Ports {
        model: anthropic_client(&provider).unwrap(),
        workspace: ws.clone(),
        exec,
        approver: approver.clone(),
        progress: progress.clone(),
        verifier: Arc::new(verifier),
        artifacts,
        journal: Some(Arc::new(journal)),
    };
    let outcome = tokio::time::timeout(
        Duration::from_secs(60),
        agent::run(task, config, ports, CancellationToken::new()),
    )
    .await
    .expect("the task did not end within 60 s");
    started.servers.shutdown().await;
    Run {
        outcome,
        store,
        ws,
        approver,
        progress,
    }
}

fn fix() -> Reply {
    Reply::tool_call(
        "edit_file",
        json!({"path": "cart.py", "old_text": "len(items)", "new_text": "sum(items)"}),
    )
}

#[tokio::test]
async fn an_mcp_call_asks_by_default_and_an_unanswered_question_is_a_no() {
    let scenario = Scenario::new()
        .reply(Reply::tool_call("mcp__fault__ok", json!({"text": "hi"})))
        .reply(Reply::tool_call("mcp__fault__ok", json!({"text": "again"})))
        .reply(fix())
        .reply(Reply::text("Fixed."));
    // The user allows the first call once, then says nothing (a no).
    let run = run(
        scenario,
        &[(Decision::Allow, "edit_file")],
        ScriptedApprover::new().decide(ApprovalDecision::AllowOnce),
    )
    .await;
    assert_eq!(run.outcome.state.to_string(), "succeeded");
    assert_eq!(
        run.approver.asked(),
        ["run: mcp__fault__ok", "run: mcp__fault__ok"]
    );
    let results = run.results();
    assert_eq!(results[0], "ok {\"text\": \"hi\"}");
    assert!(
        results[1].starts_with("The user did not allow running `mcp__fault__ok`"),
        "{}",
        results[1]
    );
    assert_eq!(run.ws.text("cart.py").unwrap(), FIXED);
}

#[tokio::test]
async fn a_rule_allows_a_servers_tools_and_a_deny_wins() {
    let scenario = Scenario::new()
        .reply(
            Reply::tool_call("mcp__fault__ok", json!({})).tool_call("mcp__fault__grow", json!({})),
        )
        .reply(fix())
        .reply(Reply::text("Fixed."));
    let run = run(
        scenario,
        &[
            (Decision::Allow, "mcp__fault__*"),
            (Decision::Deny, "mcp__fault__grow"),
            (Decision::Allow, "edit_file"),
        ],
        ScriptedApprover::new(),
    )
    .await;
    assert!(
        run.approver.asked().is_empty(),
        "{:?}",
        run.approver.asked()
    );
    // `ok` declares itself read-only: a crash leaves nothing to check.
    assert_eq!(run.on_crash("mcp__fault__ok"), ["not_run"]);
    expect_test::expect![[r#"
        mcp__fault__ok: Allow (allow: mcp__fault__*)
        mcp__fault__grow: Deny (deny: mcp__fault__grow)
        edit_file: Allow (allow: edit_file)"#]]
    .assert_eq(&run.permissions().join("\n"));
    assert!(run.results()[1].starts_with("Denied by rule deny: mcp__fault__grow"));
}

/// A server crash is an error result, the task goes on, and the server
/// is back for the next call; a tool added mid-task (list_changed) is
/// callable from the next turn; a huge result reaches the model capped,
/// with the whole of it among the task's artifacts.
#[tokio::test]
async fn faults_are_results_and_the_task_goes_on() {
    let scenario = Scenario::new()
        .reply(Reply::tool_call("mcp__fault__crash", json!({})))
        .reply(Reply::tool_call("mcp__fault__grow", json!({})))
        .reply(Reply::tool_call("mcp__fault__late", json!({})))
        .reply(Reply::tool_call("mcp__fault__huge", json!({})))
        .reply(fix())
        .reply(Reply::text("Fixed."));
    let run = run(
        scenario,
        &[
            (Decision::Allow, "mcp__fault__*"),
            (Decision::Allow, "edit_file"),
        ],
        ScriptedApprover::new(),
    )
    .await;
    assert_eq!(
        run.outcome.state.to_string(),
        "succeeded",
        "{}",
        run.outcome.reason
    );
    let results = run.results();
    assert_eq!(
        results[0],
        "the MCP server `fault` stopped during the call, so what the call did is unknown; it will be restarted for the next call"
    );
    assert_eq!(results[1], "grown");
    assert_eq!(results[2], "late tool ran");
    // Each call's record says what a crash would leave of it, from the
    // server's annotations: recovery has no MCP tools to ask.
    assert_eq!(run.on_crash("mcp__fault__crash"), ["in_doubt"]);
    let huge = &results[3];
    assert!(
        huge.len() < 20_000,
        "{} bytes reached the model",
        huge.len()
    );
    assert!(
        huge.contains(
            "over its cap of 2000 tokens; the whole output is in .rein/artifacts/t-mcp/mcp-"
        ),
        "{}",
        &huge[..huge.len().min(300)]
    );
    let saved = run
        .ws
        .paths()
        .into_iter()
        .find(|p| p.ends_with("-full.txt"))
        .expect("the whole output was saved");
    assert_eq!(run.ws.text(&saved).unwrap().len(), 10 * 1024 * 1024);
    let changed: Vec<String> = run
        .progress
        .events()
        .iter()
        .filter_map(|e| match e {
            TaskEvent::Context {
                transformation,
                detail,
            } if transformation == "tools_changed" => Some(detail.clone()),
            _ => None,
        })
        .collect();
    assert!(
        changed
            .iter()
            .any(|d| d.contains("added: mcp__fault__late")),
        "{changed:?}"
    );
}
