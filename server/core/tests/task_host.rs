//! The task host as a front end sees it: begin → prepare (its `Setup`) →
//! run (its `FrontEnd`), and what is recorded when a step fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use rein_core::agent::AgentConfig;
use rein_core::budget::Budgets;
use rein_core::cancel::CancelReason;
use rein_core::fakes::{RecordingProgress, ScriptedApprover};
use rein_core::permissions::Policy;
use rein_core::ports::TaskEvent;
use rein_core::task::{TaskId, TaskSpec, TaskState};
use rein_core::task_host::{FrontEnd, Prepared, Setup, TaskHost};
use rein_core::testing::command::TestCommand;
use rein_core::verify::{Baseline, TestVerifier};
use rein_core::workspace::Workspace;
use rein_models::{ApiKey, ProviderConfig, ProviderKind, Redactor, Timeouts, anthropic_client};
use rein_store::Store;
use rein_testkit::fake_model::{FakeModel, Reply, Scenario};
use serde_json::json;
use support::{cart_workspace, passing_when_fixed};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

fn host(root: &std::path::Path) -> (TaskHost, Arc<Store>) {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let host = TaskHost {
        store: Arc::clone(&store),
        owner: "test-owner".into(),
        installation: None,
        root: root.to_path_buf(),
        redactor: Redactor::default(),
    };
    (host, store)
}

fn spec(id: &str) -> TaskSpec {
    TaskSpec::instruction(TaskId(id.into()), "Read the cart")
}

struct Failing;

#[async_trait]
impl Setup for Failing {
    async fn prepare(
        &self,
        _: &TaskSpec,
        _: &dyn Workspace,
        _: Option<Baseline>,
        _: &CancellationToken,
    ) -> Result<Prepared, String> {
        Err("no API key is configured".into())
    }
}

/// A task whose set-up fails is not left "queued" with its lease held: a
/// restart would retry it forever.
#[tokio::test]
async fn a_set_up_that_fails_is_the_tasks_failure_and_frees_it() {
    let root = TempDir::new().unwrap();
    let (host, store) = host(root.path());
    let pending = host.begin(spec("t-fail"), &Budgets::default()).unwrap();
    let ws = cart_workspace();
    let err = match pending
        .prepare(&Failing, &ws, &CancellationToken::new())
        .await
    {
        Err(e) => e,
        Ok(_) => panic!("the set-up cannot succeed"),
    };
    assert_eq!(err, "no API key is configured");
    let record = store.task("t-fail").unwrap().unwrap();
    assert_eq!(
        (
            record.state.as_str(),
            record.reason.as_deref(),
            record.owner
        ),
        ("failed", Some("no API key is configured"), None)
    );
    // The same id cannot be begun twice.
    assert!(host.begin(spec("t-fail"), &Budgets::default()).is_err());
}

/// A scripted model behind the front end's set-up.
struct Scripted {
    server: FakeModel,
    ws: Arc<rein_core::fakes::MemoryWorkspace>,
}

#[async_trait]
impl Setup for Scripted {
    async fn prepare(
        &self,
        task: &TaskSpec,
        workspace: &dyn Workspace,
        _: Option<Baseline>,
        cancel: &CancellationToken,
    ) -> Result<Prepared, String> {
        let provider = ProviderConfig {
            provider: ProviderKind::Anthropic,
            model: "claude-sonnet-4-5".into(),
            base_url: self.server.base_url(),
            api_key: ApiKey::new("sk-ant-test-key-000000"),
            stream: true,
            retry: Default::default(),
            timeouts: Timeouts::default(),
            prices: Default::default(),
            scenario: None,
            context_window: None,
            temperature: 0.0,
            key_from: None,
        };
        let exec = Arc::new(passing_when_fixed(Arc::clone(&self.ws)));
        let command = TestCommand::custom("run-tests {target}");
        let mut config = AgentConfig::new(Policy::with_builtins(Vec::new()));
        config.test_command = Some(command.clone());
        let verifier = TestVerifier::prepare(
            task,
            workspace,
            exec.as_ref(),
            Some(command),
            config.budgets.test_timeout,
            std::path::Path::new(".rein/artifacts/t-run"),
            cancel,
        )
        .await;
        Ok(Prepared {
            config,
            model: anthropic_client(&provider).map_err(|e| e.to_string())?,
            verifier: Arc::new(verifier),
            exec,
            keep_alive: None,
            notices: Vec::new(),
        })
    }
}

/// The front end's sink gets every event, the trace gets them too, and
/// the journal records the end.
#[tokio::test]
async fn a_front_end_supplies_a_workspace_an_approver_and_a_sink() {
    let root = TempDir::new().unwrap();
    let (host, store) = host(root.path());
    let server = FakeModel::start(
        Scenario::new()
            .reply(Reply::text("Reading it.").tool_call("read_file", json!({"path": "cart.py"})))
            .reply(Reply::text("It sums quantities.")),
    )
    .await
    .unwrap();
    let ws = Arc::new(cart_workspace());
    let setup = Scripted {
        server,
        ws: Arc::clone(&ws),
    };
    let pending = host.begin(spec("t-run"), &Budgets::default()).unwrap();
    let cancel = CancellationToken::new();
    let ready = pending.prepare(&setup, ws.as_ref(), &cancel).await.unwrap();
    assert_eq!(ready.spec().id.0, "t-run");
    let events = RecordingProgress::new();
    let front = FrontEnd {
        workspace: Arc::clone(&ws) as _,
        approver: Arc::new(ScriptedApprover::new()),
        events: Arc::clone(&events) as _,
    };
    let outcome = ready.run(front, cancel, CancelReason::default()).await;
    assert_ne!(outcome.state, TaskState::Failed, "{}", outcome.reason);
    assert!(events.events().iter().any(|e| matches!(
        e,
        TaskEvent::ToolCall { title, .. } if title == "reading cart.py"
    )));
    let trace = std::fs::read_to_string(root.path().join(".rein/traces/t-run.jsonl")).unwrap();
    assert!(trace.contains(r#""tool":"read_file""#), "{trace}");
    let record = store.task("t-run").unwrap().unwrap();
    assert_eq!(record.state, outcome.state.as_str());
}
