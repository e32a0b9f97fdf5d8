//! Recovery after a crash: what the op log says was under way is judged
//! against the files as they are, each call gets one result, nothing is
//! applied twice, and the task goes on (or waits when reality is unknown).

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;

use pretty_assertions::assert_eq;
use rein_core::budget::Budgets;
use rein_core::context::history::{History, Item};
use rein_core::journal::{AgentSnapshot, Journal, JournalError, LoopState, file_hash};
use rein_core::resume;
use rein_core::task::{TaskId, TaskSpec, TaskState};
use rein_core::tools::OnCrash;
use rein_models::{Part, Redactor, ToolCall};
use rein_store::{CheckpointPhase, OpState, Store};
use rein_testkit::fake_model::{Reply, Scenario};
use rein_text::ContentHash;
use serde_json::json;
use support::{CART_BROKEN, CART_FIXED, Setup, TEST_FILE, cart_workspace};

const FIX_OLD: &str = "    return len(items)";
const FIX_NEW: &str = "    return sum(item.price * item.qty for item in items)";

fn task() -> TaskSpec {
    TaskSpec::fix_test(TaskId("t-crash".into()), TEST_FILE, "TestCart.test_total")
}

/// The state a crash leaves when it comes while an edit of turn 3 is under
/// way: the checkpoint after the model's reply, and the op started.
fn crashed_mid_edit(store: &Arc<Store>, tool: &str, arguments: serde_json::Value) -> AgentSnapshot {
    crashed_mid_call(
        store,
        tool,
        arguments,
        rein_core::tools::builtin().on_crash(tool),
    )
}

/// The same, for a call of `tool`, which declared `on_crash`.
fn crashed_mid_call(
    store: &Arc<Store>,
    tool: &str,
    arguments: serde_json::Value,
    on_crash: OnCrash,
) -> AgentSnapshot {
    let journal = Journal::begin(
        Arc::clone(store),
        &task(),
        &Budgets::default(),
        "host:1:dead",
        Some("install-1"),
        Redactor::default(),
    )
    .unwrap();
    journal
        .state(TaskState::Running, None, &Default::default())
        .unwrap();
    let call = ToolCall {
        id: "toolu_9".into(),
        name: tool.into(),
        arguments: arguments.clone(),
    };
    let mut history = History::default();
    history.push(Item::user("Fix the failing test `TestCart.test_total`."));
    history.push(Item::assistant(vec![
        Part::text("Fixing it."),
        Part::ToolCall(call),
    ]));
    let snapshot = AgentSnapshot {
        history,
        state: LoopState {
            turn: 3,
            progress: Default::default(),
            spent: rein_core::budget::Spent {
                turns: 3,
                ..Default::default()
            },
            elapsed_ms: 1_000,
            reads: vec![],
            runs: 1,
            compactions: 0,
            verifier: serde_json::Value::Null,
        },
    };
    journal
        .checkpoint(
            CheckpointPhase::AfterModel,
            &snapshot.state,
            &snapshot.history,
        )
        .unwrap();
    let pre = vec![file_hash("cart.py", Some(ContentHash::of_str(CART_BROKEN)))];
    let expected = vec![file_hash("cart.py", Some(ContentHash::of_str(CART_FIXED)))];
    let op = journal
        .op_requested(3, "toolu_9", tool, &arguments, pre, expected, on_crash)
        .unwrap();
    journal.op_started(op, tool).unwrap();
    // The process dies here: the lease stays, held by an owner that is gone.
    snapshot
}

fn edit_args() -> serde_json::Value {
    json!({"path": "cart.py", "old_text": FIX_OLD, "new_text": FIX_NEW})
}

async fn recover(store: &Arc<Store>, ws: &rein_core::fakes::MemoryWorkspace) -> resume::Recovered {
    // The dead owner's lease is taken over ("host:1" is not this machine,
    // so wait it out: release it as an expired lease would).
    store.release_lease("t-crash", "host:1:dead").unwrap();
    resume::recover(
        Arc::clone(store),
        &TaskId("t-crash".into()),
        "host:2:alive",
        ws,
        &rein_core::tools::builtin(),
        Redactor::default(),
    )
    .await
    .unwrap()
}

fn last_result(recovered: &resume::Recovered) -> (String, bool) {
    let Some(Item::Results { results, .. }) =
        recovered.snapshot.as_ref().unwrap().history.items.last()
    else {
        panic!("the turn was not completed")
    };
    (results[0].content.clone(), results[0].is_error)
}

#[tokio::test]
async fn an_edit_that_never_reached_the_file_is_reported_not_applied() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    crashed_mid_edit(&store, "edit_file", edit_args());
    let ws = cart_workspace();
    let recovered = recover(&store, &ws).await;
    assert!(recovered.unknowns.is_empty());
    let (text, is_error) = last_result(&recovered);
    assert!(is_error && text.contains("it was not applied"), "{text}");
    let ops = store.ops("t-crash").unwrap();
    assert_eq!(
        (ops[0].state, ops[0].outcome.as_deref()),
        (OpState::Recovered, Some("not_applied"))
    );
}

#[tokio::test]
async fn an_edit_the_editor_applied_before_the_crash_is_not_applied_again() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    crashed_mid_edit(&store, "edit_file", edit_args());
    let ws = cart_workspace();
    ws.set("cart.py", CART_FIXED);
    let recovered = recover(&store, &ws).await;
    let (text, is_error) = last_result(&recovered);
    assert!(
        !is_error && text.contains("recovery found it applied"),
        "{text}"
    );
    assert_eq!(
        store.ops("t-crash").unwrap()[0].outcome.as_deref(),
        Some("applied")
    );

    // The task goes on from there: the model claims done, the verifier
    // checks, the fix is in the file once.
    let setup = Setup::new(cart_workspace().with_file("cart.py", CART_FIXED));
    let r = support::resume_with(
        setup,
        recovered,
        Scenario::new().reply(Reply::text("Done: total sums price × qty.")),
    )
    .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    // It continued from the checkpoint: the model saw the recovered result.
    let request = &r.server.requests()[0].body;
    assert!(
        request["messages"]
            .to_string()
            .contains("recovery found it applied"),
        "{}",
        request["messages"]
    );
    assert_eq!(r.outcome.spent.turns, 4, "turn 3 was done before the crash");
    assert_eq!(
        r.ws.text("cart.py")
            .unwrap()
            .matches("sum(item.price")
            .count(),
        1
    );
}

/// What a server taking a task over must see in the editor's buffers
/// before judging: the file as the last edit that landed (or may have) left it.
#[tokio::test]
async fn the_expected_contents_follow_the_last_edit_that_may_have_landed() {
    let fixed = ContentHash::of_str(CART_FIXED).to_hex();
    let store = Arc::new(Store::open_in_memory().unwrap());
    crashed_mid_edit(&store, "edit_file", edit_args());
    // Cut short: it may have landed.
    let expected =
        resume::expected_contents(&rein_core::tools::builtin(), &store.ops("t-crash").unwrap());
    assert_eq!(
        expected,
        vec![file_hash("cart.py", Some(ContentHash::of_str(CART_FIXED)))]
    );
    assert_eq!(expected[0].hash, fixed);

    // Judged not applied: nothing is expected of the file any more.
    recover(&store, &cart_workspace()).await;
    assert_eq!(
        resume::expected_contents(&rein_core::tools::builtin(), &store.ops("t-crash").unwrap()),
        vec![]
    );

    // A finished edit expects what it recorded after it; a failed one
    // (no post-hash) changes nothing.
    let journal = Journal::attach(
        Arc::clone(&store),
        &task().id,
        "host:2:alive",
        Redactor::default(),
    )
    .unwrap();
    let edited = "    return 0\n";
    let landed = journal
        .op_requested(
            4,
            "toolu_10",
            "edit_file",
            &edit_args(),
            vec![],
            vec![],
            OnCrash::ByContent,
        )
        .unwrap();
    journal.op_started(landed, "edit_file").unwrap();
    let result = rein_core::context::history::RecordedResult::new(
        "toolu_10".into(),
        "edit_file".into(),
        "Edited cart.py".into(),
        false,
        rein_core::context::history::ResultMeta::Plain,
    );
    journal
        .op_finished(
            landed,
            "edit_file",
            &result,
            vec![file_hash("cart.py", Some(ContentHash::of_str(edited)))],
        )
        .unwrap();
    let failed = journal
        .op_requested(
            5,
            "toolu_11",
            "edit_file",
            &edit_args(),
            vec![],
            vec![],
            OnCrash::ByContent,
        )
        .unwrap();
    journal.op_started(failed, "edit_file").unwrap();
    journal
        .op_finished(failed, "edit_file", &result, vec![])
        .unwrap();
    assert_eq!(
        resume::expected_contents(&rein_core::tools::builtin(), &store.ops("t-crash").unwrap()),
        vec![file_hash("cart.py", Some(ContentHash::of_str(edited)))]
    );
}

#[tokio::test]
async fn a_file_changed_by_someone_else_makes_the_outcome_unknown() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    crashed_mid_edit(&store, "edit_file", edit_args());
    let ws = cart_workspace();
    ws.set("cart.py", "# the user rewrote it\n");
    let recovered = recover(&store, &ws).await;
    assert_eq!(recovered.unknowns.len(), 1, "{:?}", recovered.unknowns);
    assert!(
        recovered.unknowns[0].contains("matches neither"),
        "{:?}",
        recovered.unknowns
    );
    // Resuming again does not reconcile anything twice.
    store.release_lease("t-crash", "host:2:alive").unwrap();
    let again = resume::recover(
        Arc::clone(&store),
        &TaskId("t-crash".into()),
        "host:3:alive",
        &ws,
        &rein_core::tools::builtin(),
        Redactor::default(),
    )
    .await
    .unwrap();
    assert!(again.unknowns.is_empty());
    let Some(Item::Results { results, .. }) = again.snapshot.unwrap().history.items.last().cloned()
    else {
        panic!()
    };
    assert!(
        results[0].content.contains("outcome is unknown"),
        "{}",
        results[0].content
    );
}

#[tokio::test]
async fn an_interrupted_command_is_never_run_again() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let args = json!({"command": "make migrate"});
    crashed_mid_edit(&store, "run_command", args);
    let ws = cart_workspace();
    let recovered = recover(&store, &ws).await;
    assert_eq!(
        recovered.unknowns,
        vec![
            "run_command (toolu_9): the command was interrupted; what it did is unknown".to_owned()
        ]
    );
    let (text, _) = last_result(&recovered);
    assert!(text.contains("It was not run again"), "{text}");
}

#[tokio::test]
async fn a_task_held_by_a_live_owner_cannot_be_taken() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let live = Journal::begin(
        Arc::clone(&store),
        &task(),
        &Budgets::default(),
        "otherhost:42:alive",
        None,
        Redactor::default(),
    )
    .unwrap();
    let err = Journal::attach(
        Arc::clone(&store),
        &TaskId("t-crash".into()),
        "host:2:me",
        Redactor::default(),
    )
    .err()
    .unwrap();
    assert!(
        matches!(err, JournalError::Leased { ref owner, .. } if owner == "otherhost:42:alive"),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("task t-crash is being run by another Rein (otherhost:42:alive)")
    );
    live.release();
    assert!(
        Journal::attach(
            store,
            &TaskId("t-crash".into()),
            "host:2:me",
            Redactor::default()
        )
        .is_ok()
    );
}

#[tokio::test]
async fn a_journaled_run_records_every_step() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let mut setup = Setup::new(cart_workspace());
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
    let scenario = Scenario::new()
        .reply(Reply::tool_call("read_file", json!({"path": "cart.py"})))
        .reply(Reply::tool_call("edit_file", edit_args()))
        .reply(Reply::text("Fixed."));
    let r = setup.run(scenario, |_| {}).await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    let record = store.task("t-test").unwrap().unwrap();
    assert_eq!(record.state, "succeeded");
    assert!(record.owner.is_none(), "the lease is released at the end");
    let ops = store.ops("t-test").unwrap();
    assert_eq!(
        ops.iter()
            .map(|o| (o.tool.as_str(), o.state))
            .collect::<Vec<_>>(),
        vec![
            ("read_file", OpState::Finished),
            ("edit_file", OpState::Finished)
        ]
    );
    let edit = &ops[1];
    assert_eq!(
        edit.pre,
        vec![file_hash("cart.py", Some(ContentHash::of_str(CART_BROKEN)))]
    );
    assert_eq!(
        edit.post,
        vec![file_hash("cart.py", Some(ContentHash::of_str(CART_FIXED)))]
    );
    let checkpoints = store.checkpoints("t-test").unwrap();
    // Five were taken (after the model and after the tools of 2 turns,
    // after the model of the last); each replaced the one before.
    assert_eq!(checkpoints.len(), 1);
    assert_eq!(
        (checkpoints[0].turn, checkpoints[0].phase),
        (3, rein_store::CheckpointPhase::AfterModel)
    );
    assert_eq!(store.turns("t-test").unwrap().len(), 3);
    assert!(
        r.ws.text(".rein/artifacts/t-test/request-1.json").is_some(),
        "each request is kept"
    );
}

/// An op of the log as a crash left it.
fn op(id: i64, call_id: &str, tool: &str, state: OpState) -> rein_store::OpRecord {
    rein_store::OpRecord {
        id,
        task_id: "t-crash".into(),
        turn: 3,
        call_id: call_id.into(),
        tool: tool.into(),
        args_json: "{}".into(),
        state,
        pre: Vec::new(),
        post: Vec::new(),
        result_json: None,
        outcome: None,
        requested_ms: 0,
        started_ms: None,
        finished_ms: None,
    }
}

/// A test run that started is reported as interrupted (harmless to run
/// again, the model decides); one that was only requested never ran.
#[tokio::test]
async fn a_test_run_is_interrupted_only_if_it_started() {
    let ws = cart_workspace();
    assert_eq!(
        resume::reconcile(
            &op(1, "c", "run_tests", OpState::Started),
            &rein_core::tools::builtin(),
            &ws
        )
        .await,
        resume::Reconciled::Interrupted("the test run was interrupted before it finished".into())
    );
    assert_eq!(
        resume::reconcile(
            &op(1, "c", "run_tests", OpState::Requested),
            &rein_core::tools::builtin(),
            &ws
        )
        .await,
        resume::Reconciled::NotRun
    );
}

/// Regression: recovery used to record any tool it did not name as "not
/// run", so an interrupted call of a tool with effects (an MCP tool, a tool
/// a newer Rein added) could be run again. It is in doubt, whatever its
/// state, and the user decides.
#[tokio::test]
async fn an_interrupted_call_of_an_unknown_tool_is_in_doubt_never_not_run() {
    let ws = cart_workspace();
    for state in [OpState::Requested, OpState::Started] {
        assert!(matches!(
            resume::reconcile(
                &op(1, "c", "mcp__db__drop_table", state),
                &rein_core::tools::builtin(),
                &ws
            )
            .await,
            resume::Reconciled::Unknown(_)
        ));
    }
    // A read-only tool the registry knows is harmless to ask again.
    assert_eq!(
        resume::reconcile(
            &op(1, "c", "git_diff", OpState::Started),
            &rein_core::tools::builtin(),
            &ws
        )
        .await,
        resume::Reconciled::NotRun
    );
}

/// A turn cut short by a crash is completed with one result per call: a
/// call that finished keeps the result it had, one that did not gets what
/// recovery found.
#[test]
fn a_finished_call_keeps_its_recorded_result() {
    let mut snapshot = crashed_mid_edit(
        &Arc::new(Store::open_in_memory().unwrap()),
        "read_file",
        json!({"path": "cart.py"}),
    );
    let Some(Item::Assistant { parts, .. }) = snapshot.history.items.last_mut() else {
        panic!("no model reply")
    };
    parts.push(Part::ToolCall(ToolCall {
        id: "toolu_10".into(),
        name: "run_command".into(),
        arguments: json!({"command": "make migrate"}),
    }));
    let mut finished = op(1, "toolu_9", "read_file", OpState::Finished);
    finished.result_json = Some(
        serde_json::to_string(&rein_core::context::history::RecordedResult::new(
            "toolu_9".into(),
            "read_file".into(),
            "cart.py (v1): the text".into(),
            false,
            rein_core::context::history::ResultMeta::Plain,
        ))
        .unwrap(),
    );
    let interrupted = op(2, "toolu_10", "run_command", OpState::Started);
    let unknowns = resume::complete_turn(
        &mut snapshot,
        &[finished, interrupted],
        &[(2, resume::Reconciled::Unknown("it may have run".into()))],
    );
    assert_eq!(
        unknowns,
        vec!["run_command (toolu_10): it may have run".to_owned()]
    );
    let Some(Item::Results { results, .. }) = snapshot.history.items.last() else {
        panic!("the turn was not completed")
    };
    assert_eq!(results[0].content, "cart.py (v1): the text");
    assert!(!results[0].is_error);
    assert_eq!(results[1].call_id, "toolu_10");
    assert!(results[1].is_error);
}

/// Only a checkpoint taken right after the model's reply lacks results.
#[test]
fn only_a_checkpoint_after_the_model_needs_results() {
    assert!(resume::needs_results(CheckpointPhase::AfterModel));
    assert!(!resume::needs_results(CheckpointPhase::AfterTools));
}

/// After a second crash, what the files should hold counts an edit that
/// the first recovery found applied, and not one it found not applied.
#[test]
fn an_edit_recovery_found_applied_still_counts_after_another_crash() {
    let edit = |id, outcome: &str, hash: &str| {
        let mut op = op(id, "toolu_9", "edit_file", OpState::Recovered);
        op.args_json = json!({"arguments": {}, "expected_after": {"cart.py": hash}}).to_string();
        op.outcome = Some(outcome.into());
        op
    };
    let expected = |ops: &[rein_store::OpRecord]| {
        resume::expected_contents(&rein_core::tools::builtin(), ops)
            .into_iter()
            .map(|f| (f.path, f.hash))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        expected(&[edit(1, "applied", "h1")]),
        vec![("cart.py".to_owned(), "h1".to_owned())]
    );
    assert_eq!(
        expected(&[edit(1, "applied", "h1"), edit(2, "not_applied", "h2")]),
        vec![("cart.py".to_owned(), "h1".to_owned())]
    );
}

/// Issue 19: recovery's registry has no MCP tools (their servers start with
/// the task), so what the tool declared when the call was recorded
/// decides — a read-only tool's call was not run, an idempotent one's is
/// reported interrupted, any other is in doubt and waits for the user.
/// Only an MCP tool's record is taken at its word, and never for a class
/// that would judge files: a forged record on another unknown tool, or a
/// "by content" claim, stays in doubt.
#[tokio::test]
async fn an_interrupted_mcp_call_is_judged_by_what_its_tool_declared() {
    let cases = [
        ("mcp__db__query", OnCrash::NotRun, "not_run", false),
        (
            "mcp__db__refresh",
            OnCrash::Rerunnable("idempotent"),
            "unknown",
            false,
        ),
        (
            "mcp__db__drop",
            OnCrash::InDoubt("unknown"),
            "unknown",
            true,
        ),
        ("mcp__db__write", OnCrash::ByContent, "unknown", true),
        ("plugin_tool", OnCrash::NotRun, "unknown", true),
    ];
    for (tool, declared, outcome, waits) in cases {
        let store = Arc::new(Store::open_in_memory().unwrap());
        crashed_mid_call(&store, tool, json!({"sql": "select 1"}), declared);
        let recovered = recover(&store, &cart_workspace()).await;
        assert_eq!(
            !recovered.unknowns.is_empty(),
            waits,
            "{tool}: {:?}",
            recovered.unknowns
        );
        assert_eq!(
            store.ops("t-crash").unwrap()[0].outcome.as_deref(),
            Some(outcome),
            "{tool}"
        );
    }
}

#[tokio::test]
async fn a_journaled_run_keeps_each_changed_files_text_before_and_after_for_undo() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let mut setup = Setup::new(cart_workspace());
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
    let scenario = Scenario::new()
        .reply(Reply::tool_call("read_file", json!({"path": "cart.py"})))
        .reply(Reply::tool_call("edit_file", edit_args()))
        .reply(Reply::tool_call(
            "create_file",
            json!({"path": "notes.txt", "content": "why\n"}),
        ))
        .reply(Reply::text("Fixed."));
    let r = setup.run(scenario, |_| {}).await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    use rein_store::{FileChange, KeptText};
    assert_eq!(
        store.file_changes("t-test").unwrap(),
        vec![
            FileChange {
                path: "cart.py".into(),
                before: KeptText::Text(CART_BROKEN.into()),
                after: KeptText::Text(CART_FIXED.into()),
            },
            FileChange {
                path: "notes.txt".into(),
                before: KeptText::Absent,
                after: KeptText::Text("why\n".into()),
            },
        ],
        "a read changes nothing and is not kept"
    );
}

/// A file holding the task's secret (an API key) is not kept for undo:
/// no state is written with a key, and a redacted text is no use to undo.
#[tokio::test]
async fn a_changed_file_holding_a_key_is_not_kept_for_undo() {
    const KEY: &str = "sk-undo-test-secret-0123456789";
    let store = Arc::new(Store::open_in_memory().unwrap());
    let ws = cart_workspace().with_file("cart.py", &format!("{CART_BROKEN}# {KEY}\n"));
    let mut setup = Setup::new(ws);
    let redactor = Redactor::default().with_secrets([KEY.to_owned()]);
    setup.journal = Some(Arc::new(
        Journal::begin(
            Arc::clone(&store),
            &setup.task,
            &Budgets::default(),
            &rein_core::journal::owner_id(),
            None,
            redactor,
        )
        .unwrap(),
    ));
    let scenario = Scenario::new()
        .reply(Reply::tool_call("read_file", json!({"path": "cart.py"})))
        .reply(Reply::tool_call("edit_file", edit_args()))
        .reply(Reply::text("Fixed."));
    setup.run(scenario, |_| {}).await;
    use rein_store::{FileChange, KeptText};
    assert_eq!(
        store.file_changes("t-test").unwrap(),
        vec![FileChange {
            path: "cart.py".into(),
            before: KeptText::Secret,
            after: KeptText::Secret,
        }]
    );
}
