//! A fix-diagnostic task end to end in the loop: the scripted model makes
//! the edit, the real checker (mypy) judges the claim. A real fix
//! succeeds; a suppression ends unverified; a fix that brings a new error
//! is sent back to the model, which then fixes it for real.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod checkers;

use std::sync::Arc;

use checkers::{Fix, diagnostic};
use rein_core::agent::{self, AgentConfig, Outcome, Ports};
use rein_core::fakes::{RecordingProgress, ScriptedApprover};
use rein_core::os::artifacts::DiskArtifacts;
use rein_core::os::disk::DiskWorkspace;
use rein_core::permissions::Policy;
use rein_core::ports::TaskEvent;
use rein_core::task::TaskState;
use rein_models::{ApiKey, ProviderConfig, ProviderKind, Redactor, Timeouts, anthropic_client};
use rein_testkit::fake_model::{FakeModel, Reply, Scenario};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const MYPY_ARG: &str = "Argument 1 to \"greet\" has incompatible type \"int\"; expected \"str\"";

/// The task run by the loop with `scenario` as the model.
async fn run(fix: &Fix, scenario: Scenario) -> (Outcome, Arc<RecordingProgress>) {
    let verifier = fix.prepare().await.unwrap();
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
    let progress = RecordingProgress::new();
    let ports = Ports {
        model: anthropic_client(&provider).unwrap(),
        workspace: Arc::new(DiskWorkspace::new(fix.root()).unwrap()),
        exec: Arc::new(checkers::exec()),
        approver: Arc::new(ScriptedApprover::new()),
        progress: progress.clone(),
        verifier: Arc::new(verifier),
        artifacts: Arc::new(DiskArtifacts::new(fix.root(), Redactor::default())),
        journal: None,
    };
    let config = AgentConfig::new(Policy::with_builtins(Vec::new()));
    let outcome = tokio::time::timeout(
        std::time::Duration::from_secs(240),
        agent::run(fix.task.clone(), config, ports, CancellationToken::new()),
    )
    .await
    .expect("the task ended");
    (outcome, progress)
}

fn edit(old: &str, new: &str) -> Reply {
    Reply::tool_call(
        "edit_file",
        json!({"path": "app.py", "old_text": old, "new_text": new}),
    )
}

fn fix() -> Fix {
    Fix::new(
        "python",
        diagnostic("app.py", 7, "mypy", "arg-type", MYPY_ARG),
    )
}

/// What the verifier said at each claim.
fn verifications(progress: &RecordingProgress) -> Vec<(bool, String)> {
    progress
        .events()
        .iter()
        .filter_map(|e| match e {
            TaskEvent::Verification { passed, detail, .. } => Some((*passed, detail.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_models_real_fix_is_verified_by_mypy() {
    let fix = fix();
    let scenario = Scenario::new()
        .reply(edit("print(greet(3))", "print(greet(str(3)))"))
        .reply(Reply::text("Fixed: the call passes a str now."));
    let (outcome, progress) = run(&fix, scenario).await;
    assert_eq!(outcome.state, TaskState::Succeeded, "{}", outcome.reason);
    assert!(fix.read("app.py").contains("greet(str(3))"));
    let said = verifications(&progress);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].0);
    // The first message quotes the diagnostic and what mypy said before,
    // and shows the file (so the model needs no run or read first).
    let Some(rein_core::context::history::Item::User { text, .. }) = outcome.history.items.first()
    else {
        panic!("no first message");
    };
    let expected = format!(
        "Fix the error reported at `app.py` line 7 (error [arg-type] from mypy):\n> {MYPY_ARG}\n\nRein ran the checker before you started, and it reports it:\n$ mypy --output json --cache-dir=/dev/null .\napp.py:7: error [arg-type]: {MYPY_ARG}\nfull log: .rein/artifacts/t-fix/check-baseline.log\n\napp.py ("
    );
    assert!(text.starts_with(&expected), "{text}");
    assert!(
        text.contains("), lines 1-7 of 7:\n     1\tdef greet(name: str) -> str:\n"),
        "{text}"
    );
    assert!(
        text.ends_with("Rein runs the checker again when you say you are done."),
        "{text}"
    );
    let checks: Vec<&str> = outcome.evidence.iter().map(|e| e.check.as_str()).collect();
    assert_eq!(
        checks,
        [
            "diagnostic_reported app.py:7 [arg-type] (1 error, 0 warnings)",
            "diagnostic_gone app.py:7 [arg-type] (after: 0 errors, 0 warnings)"
        ]
    );
}

#[tokio::test]
async fn the_models_suppression_ends_unverified() {
    let fix = fix();
    let scenario = Scenario::new()
        .reply(edit("print(greet(3))", "print(greet(3))  # type: ignore"))
        .reply(Reply::text("Done."));
    let (outcome, _) = run(&fix, scenario).await;
    assert_eq!(outcome.state, TaskState::Unverified, "{}", outcome.reason);
    assert!(
        outcome
            .reason
            .contains("`# type: ignore` was added in app.py"),
        "{}",
        outcome.reason
    );
}

/// The model's first "fix" changes the parameter's type: the new errors
/// go back to it as the verifier's gap; its second fix is real.
#[tokio::test]
async fn a_fix_with_a_new_error_goes_back_to_the_model() {
    let fix = fix();
    let scenario = Scenario::new()
        .reply(edit("def greet(name: str)", "def greet(name: int)"))
        .reply(Reply::text("Done."))
        .reply(edit("def greet(name: int)", "def greet(name: str)"))
        .reply(edit("print(greet(3))", "print(greet(str(3)))"))
        .reply(Reply::text("Fixed for real."));
    let (outcome, progress) = run(&fix, scenario).await;
    assert_eq!(outcome.state, TaskState::Succeeded, "{}", outcome.reason);
    let said = verifications(&progress);
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(!said[0].0);
    assert!(
        said[0].1.contains("the change brings new problems") && said[0].1.contains("[operator]"),
        "{}",
        said[0].1
    );
    assert!(said[1].0);
}
