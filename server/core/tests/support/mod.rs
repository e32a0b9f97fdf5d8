//! The shared set-up of the loop tests: a small Python project with a
//! failing test, a command runner that passes the test once the code is
//! fixed, and helpers to read what happened.

#![allow(dead_code)] // Each test file uses a part of this module.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use rein_core::agent::{self, AgentConfig, Outcome, Ports};
use rein_core::context::history::{History, to_messages};
use rein_core::fakes::{
    MemoryWorkspace, RecordingProgress, ScriptedApprover, ScriptedExec, command_result,
};
use rein_core::permissions::Policy;
use rein_core::ports::{Artifacts, TaskEvent};
use rein_core::task::{TaskId, TaskSpec};
use rein_core::testing::command::TestCommand;
use rein_core::verify::TestVerifier;
use rein_core::workspace::{
    CreateRequest, EditOutcome, EditRequest, FileRead, Listing, SearchResult, Workspace,
    WorkspaceError,
};
use rein_models::{
    ApiKey, Message, ProviderConfig, ProviderKind, Timeouts, anthropic_client, openai_client,
};
use rein_testkit::fake_model::{FakeModel, Scenario};
use tokio::sync::Barrier;
use tokio_util::sync::CancellationToken;

pub const TEST_FILE: &str = "tests/test_cart.py";
pub const CART_BROKEN: &str = "class Item:\n    def __init__(self, price, qty):\n        self.price = price\n        self.qty = qty\n\ndef total(items):\n    return len(items)\n";
pub const CART_FIXED: &str = "class Item:\n    def __init__(self, price, qty):\n        self.price = price\n        self.qty = qty\n\ndef total(items):\n    return sum(item.price * item.qty for item in items)\n";
pub const TEST_TEXT: &str = "import unittest\nfrom cart import Item, total\n\n\nclass TestCart(unittest.TestCase):\n    def test_total(self):\n        items = [Item(10, 1), Item(10, 2)]\n        self.assertEqual(total(items), 30)\n";

/// The module docstring a QuixBugs program carries after its code.
pub const CART_DOC: &str = "\n\n\"\"\"\nCart\n\nTotals a cart.\n\nInput:\n    items: a list of Item\n\nOutput:\n    The sum of price times quantity\n\"\"\"\n";

/// The cart with [`CART_DOC`] after its code: long enough that a few lines
/// of it are a fragment, not a version of the file.
pub fn documented_cart_workspace() -> MemoryWorkspace {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/memory-root");
    MemoryWorkspace::new(root)
        .with_file("cart.py", &format!("{CART_BROKEN}{CART_DOC}"))
        .with_file(TEST_FILE, TEST_TEXT)
}

pub fn cart_workspace() -> MemoryWorkspace {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/memory-root");
    MemoryWorkspace::new(root)
        .with_file("cart.py", CART_BROKEN)
        .with_file(TEST_FILE, TEST_TEXT)
}

/// The unittest run of the cart project: passes once `total` sums.
pub fn passing_when_fixed(ws: Arc<MemoryWorkspace>) -> ScriptedExec {
    ScriptedExec::new(cart_tests(ws))
}

/// The script of [`passing_when_fixed`]: the test passes once `cart.py`,
/// as the command sees it, sums.
pub fn cart_tests(
    ws: Arc<MemoryWorkspace>,
) -> impl Fn(&rein_core::exec::CommandSpec) -> rein_core::exec::CommandResult + Send + Sync + 'static
{
    cart_tests_passing_when(ws, |cart| cart.contains("sum("))
}

/// The script of the cart's unittest run: the test passes when `passes`
/// holds of `cart.py` as the command sees it.
pub fn cart_tests_passing_when(
    ws: Arc<MemoryWorkspace>,
    passes: impl Fn(&str) -> bool + Send + Sync + 'static,
) -> impl Fn(&rein_core::exec::CommandSpec) -> rein_core::exec::CommandResult + Send + Sync + 'static
{
    move |spec| {
        if !spec.command.contains("run-tests") {
            return command_result(0, &format!("ran {}", spec.command), &[]);
        }
        if cart_as_run(&ws, spec).is_some_and(|t| passes(&t)) {
            command_result(
                0,
                "test_count (tests.test_cart.TestCart.test_count) ... ok\ntest_empty (tests.test_cart.TestCart.test_empty) ... ok\ntest_total (tests.test_cart.TestCart.test_total) ... ok\n\n----------------------------------------------------------------------\nRan 3 tests in 0.001s\n\nOK",
                &[],
            )
        } else {
            command_result(
                1,
                "F..\n======================================================================\nFAIL: test_total (tests.test_cart.TestCart.test_total)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"tests/test_cart.py\", line 8, in test_total\n    self.assertEqual(total(items), 30)\nAssertionError: 2 != 30\n\nFAILED (failures=1)",
                &["tests.test_cart.TestCart.test_total"],
            )
        }
    }
}

/// `cart.py` as a command sees it: a candidate's file where its layer has
/// one, else the workspace's.
pub fn cart_as_run(ws: &MemoryWorkspace, spec: &rein_core::exec::CommandSpec) -> Option<String> {
    layered(spec, "cart.py").or_else(|| ws.text("cart.py"))
}

/// The text a command's layer lays at `path`, if it has one there.
pub fn layered(spec: &rein_core::exec::CommandSpec, path: &str) -> Option<String> {
    match &spec.layer {
        Some(rein_core::exec::Layer::Files(files)) => files
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, text)| text.clone()),
        _ => None,
    }
}

pub struct Run {
    pub outcome: Outcome,
    pub ws: Arc<MemoryWorkspace>,
    pub exec: Arc<ScriptedExec>,
    pub approver: Arc<ScriptedApprover>,
    pub progress: Arc<RecordingProgress>,
    pub server: FakeModel,
}

impl Run {
    /// The details of the context transformations named `name`, in order.
    pub fn transformations(&self, name: &str) -> Vec<String> {
        self.progress
            .events()
            .iter()
            .filter_map(|e| match e {
                rein_core::ports::TaskEvent::Context {
                    transformation,
                    detail,
                } if transformation == name => Some(detail.clone()),
                _ => None,
            })
            .collect()
    }

    /// The loop guard's events, as "guard: message", in order.
    pub fn guard_events(&self) -> Vec<String> {
        self.progress
            .events()
            .iter()
            .filter_map(|e| match e {
                rein_core::ports::TaskEvent::Guard { guard, message, .. } => {
                    Some(format!("{guard}: {message}"))
                }
                _ => None,
            })
            .collect()
    }
}

/// Everything a run needs; defaults: the cart project, the fix-test task,
/// tests that pass once fixed, a user who says no.
pub struct Setup {
    pub ws: Arc<MemoryWorkspace>,
    /// What the loop sees as its workspace (defaults to `ws`).
    pub workspace: Arc<dyn Workspace>,
    pub exec: Arc<ScriptedExec>,
    pub approver: Arc<ScriptedApprover>,
    pub progress: Arc<RecordingProgress>,
    pub cancel: CancellationToken,
    pub task: TaskSpec,
    /// A durable record, for the tests of recovery.
    pub journal: Option<Arc<rein_core::journal::Journal>>,
    /// Runs the model's commands and the checks instead of `exec` (which
    /// then records only the verifier's baseline): a real process runner.
    pub runner: Option<Arc<dyn rein_core::Exec>>,
    /// Talk to the fake model as to a local OpenAI-compatible server
    /// (llama.cpp, Ollama) instead of Anthropic's API.
    pub openai_compatible: bool,
    /// The process "dies" (the task's future is dropped, nothing more is
    /// written) once the events so far satisfy this: the outcome is then
    /// `running`, "crashed".
    pub crash_when: Option<CrashWhen>,
}

/// When the process "dies", from the events so far.
pub type CrashWhen = Box<dyn Fn(&[TaskEvent]) -> bool + Send + Sync>;

impl Setup {
    pub fn new(ws: MemoryWorkspace) -> Self {
        let ws = Arc::new(ws);
        Self {
            workspace: ws.clone(),
            exec: Arc::new(passing_when_fixed(Arc::clone(&ws))),
            ws,
            approver: Arc::new(ScriptedApprover::new()),
            progress: RecordingProgress::new(),
            cancel: CancellationToken::new(),
            task: TaskSpec::fix_test(TaskId("t-test".into()), TEST_FILE, "TestCart.test_total"),
            journal: None,
            runner: None,
            openai_compatible: false,
            crash_when: None,
        }
    }

    /// Commands run by `runner` (e.g. the real `ProcessExec`).
    pub fn runner(mut self, runner: Arc<dyn rein_core::Exec>) -> Self {
        self.runner = Some(runner);
        self
    }

    /// Continues the task from `snapshot` (as a resumed task would).
    pub async fn resume_from(
        self,
        snapshot: rein_core::journal::AgentSnapshot,
        scenario: Scenario,
        configure: impl FnOnce(&mut AgentConfig),
    ) -> Run {
        self.go(scenario, configure, Some(snapshot)).await
    }

    pub fn approver(mut self, approver: ScriptedApprover) -> Self {
        self.approver = Arc::new(approver);
        self
    }

    pub fn exec(mut self, exec: ScriptedExec) -> Self {
        self.exec = Arc::new(exec);
        self
    }

    pub fn task(mut self, task: TaskSpec) -> Self {
        self.task = task;
        self
    }

    pub fn workspace(mut self, workspace: Arc<dyn Workspace>) -> Self {
        self.workspace = workspace;
        self
    }

    pub async fn run(self, scenario: Scenario, configure: impl FnOnce(&mut AgentConfig)) -> Run {
        self.go(scenario, configure, None).await
    }

    async fn go(
        self,
        scenario: Scenario,
        configure: impl FnOnce(&mut AgentConfig),
        snapshot: Option<rein_core::journal::AgentSnapshot>,
    ) -> Run {
        let server = FakeModel::start(scenario).await.unwrap();
        let provider = ProviderConfig {
            provider: ProviderKind::Anthropic,
            model: "claude-sonnet-4-5".into(),
            base_url: server.base_url(),
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
        let test_command = TestCommand::custom("run-tests {target}");
        let mut config = AgentConfig::new(Policy::with_builtins(Vec::new()));
        config.test_command = Some(test_command.clone());
        configure(&mut config);
        let verifier = TestVerifier::prepare(
            &self.task,
            self.ws.as_ref(),
            self.exec.as_ref(),
            Some(test_command),
            config.budgets.test_timeout,
            std::path::Path::new(".rein/artifacts/t-test"),
            &tokio_util::sync::CancellationToken::new(),
        )
        .await;
        let artifacts: Arc<dyn Artifacts> = self.ws.clone();
        let ports = Ports {
            model: if self.openai_compatible {
                openai_client(&ProviderConfig {
                    provider: ProviderKind::OpenAi,
                    model: "qwen2.5-coder-1.5b".into(),
                    base_url: format!("{}/v1", server.base_url()),
                    ..provider.clone()
                })
                .unwrap()
            } else {
                anthropic_client(&provider).unwrap()
            },
            workspace: Arc::clone(&self.workspace),
            exec: match &self.runner {
                Some(runner) => Arc::clone(runner),
                None => self.exec.clone(),
            },
            approver: self.approver.clone(),
            progress: self.progress.clone(),
            verifier: Arc::new(verifier),
            artifacts,
            journal: self.journal.clone(),
        };
        let work = async move {
            match snapshot {
                Some(snapshot) => {
                    agent::resume(self.task, snapshot, config, ports, self.cancel).await
                }
                None => agent::run(self.task, config, ports, self.cancel).await,
            }
        };
        let progress = self.progress.clone();
        let crash_when = self.crash_when;
        let crashed = async move {
            let Some(when) = crash_when else {
                return std::future::pending().await;
            };
            while !when(&progress.events()) {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        };
        let work = async move {
            tokio::select! {
                outcome = work => outcome,
                () = crashed => Outcome {
                    state: rein_core::task::TaskState::Running,
                    cause: rein_core::agent::StopCause::Internal,
                    reason: "crashed".into(),
                    spent: Default::default(),
                    evidence: Vec::new(),
                    final_text: None,
                    history: History::default(),
                },
            }
        };
        let outcome = tokio::time::timeout(std::time::Duration::from_secs(60), work)
            .await
            .expect("the task did not end within 60 s");
        Run {
            outcome,
            ws: self.ws,
            exec: self.exec,
            approver: self.approver,
            progress: self.progress,
            server,
        }
    }
}

/// Continues a recovered task in `setup`'s workspace.
pub async fn resume_with(
    setup: Setup,
    recovered: rein_core::resume::Recovered,
    scenario: Scenario,
) -> Run {
    resume_configured(setup, recovered, scenario, |_| {}).await
}

/// [`resume_with`], the task configured by `configure`.
pub async fn resume_configured(
    mut setup: Setup,
    recovered: rein_core::resume::Recovered,
    scenario: Scenario,
    configure: impl FnOnce(&mut AgentConfig),
) -> Run {
    setup.task = recovered.spec;
    setup.journal = Some(recovered.journal);
    setup.go(scenario, configure, recovered.snapshot).await
}

/// Each tool result the model got, as "ok <first line>" or "ERROR <…>".
pub fn tool_results(run: &Run) -> Vec<String> {
    run.progress
        .events()
        .iter()
        .filter_map(|e| match e {
            TaskEvent::ToolResult {
                is_error, summary, ..
            } => Some(format!(
                "{} {summary}",
                if *is_error { "ERROR" } else { "ok" }
            )),
            _ => None,
        })
        .collect()
}

/// Each tool result the model got, whole (from the task's history).
pub fn full_results(run: &Run) -> Vec<String> {
    run.outcome
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

/// The events as one line each: what a reader of the trace would scan.
pub fn timeline(events: &[TaskEvent]) -> String {
    let mut lines = Vec::new();
    let mut state = None;
    for e in events {
        let line = match e {
            // Status updates within a state (new token counts) are not steps.
            TaskEvent::Status(s) if state == Some(s.state) => continue,
            TaskEvent::Status(s) => {
                state = Some(s.state);
                format!("status {}", s.state)
            }
            TaskEvent::ToolCall { tool, .. } => format!("tool_call {tool}"),
            TaskEvent::Permission { tool, decision, .. } => format!(
                "permission {tool} {}",
                format!("{decision:?}").to_lowercase()
            ),
            TaskEvent::ToolResult { tool, is_error, .. } => format!(
                "tool_result {tool} {}",
                if *is_error { "error" } else { "ok" }
            ),
            TaskEvent::Verification { passed, .. } => {
                format!("verification {}", if *passed { "passed" } else { "failed" })
            }
            _ => continue,
        };
        // Consecutive identical status lines say nothing new.
        if lines.last() != Some(&line) {
            lines.push(line);
        }
    }
    lines.join("\n")
}

/// The history as the model would receive it (without shedding).
pub fn messages_of(history: &History) -> Vec<Message> {
    to_messages(&history.items, |r| r.content.clone())
}

/// A workspace whose reads wait until `n` of them are in flight at once:
/// it proves that reads run in parallel (run in sequence, they deadlock).
pub struct BarrierWorkspace {
    inner: Arc<MemoryWorkspace>,
    barrier: Barrier,
    /// Only the first `n` reads meet at the barrier.
    waiting: std::sync::atomic::AtomicUsize,
    reached: AtomicBool,
}

impl BarrierWorkspace {
    pub fn new(inner: Arc<MemoryWorkspace>, n: usize) -> Arc<Self> {
        Arc::new(Self {
            inner,
            barrier: Barrier::new(n),
            waiting: std::sync::atomic::AtomicUsize::new(n),
            reached: AtomicBool::new(false),
        })
    }

    pub fn reached_barrier(&self) -> bool {
        self.reached.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Workspace for BarrierWorkspace {
    fn root(&self) -> &std::path::Path {
        self.inner.root()
    }
    async fn read_file(&self, path: &str) -> Result<FileRead, WorkspaceError> {
        let first_reads = self
            .waiting
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if first_reads {
            self.barrier.wait().await;
            self.reached.store(true, Ordering::SeqCst);
        }
        self.inner.read_file(path).await
    }
    async fn list_files(
        &self,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<Listing, WorkspaceError> {
        self.inner.list_files(dir, glob, limit).await
    }
    async fn search(
        &self,
        p: &str,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<SearchResult, WorkspaceError> {
        self.inner.search(p, dir, glob, limit).await
    }
    async fn edit_file(&self, edit: EditRequest) -> Result<EditOutcome, WorkspaceError> {
        self.inner.edit_file(edit).await
    }
    async fn create_file(&self, create: CreateRequest) -> Result<EditOutcome, WorkspaceError> {
        self.inner.create_file(create).await
    }
    async fn flush_to_disk(&self) -> Result<(), WorkspaceError> {
        self.inner.flush_to_disk().await
    }
}
