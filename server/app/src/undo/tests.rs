use std::sync::Arc;

use expect_test::expect;
use pretty_assertions::assert_eq;
use rein_core::fakes::MemoryWorkspace;
use rein_core::task::TaskId;
use rein_store::{KeptText, NewTask, OpState, Store};

use super::*;

const OWNER: &str = "test-host:1:undo";
const INSTALLATION: &str = "inst-ours";

fn ours() -> Undoer<'static> {
    Undoer {
        owner: OWNER,
        installation: Some(INSTALLATION),
    }
}

fn store_with(state: &str, files: &[(&str, KeptText, KeptText)]) -> Arc<Store> {
    let store = Store::open_in_memory().unwrap();
    store
        .create_task(&NewTask {
            id: "t1".into(),
            kind: "fix_test".into(),
            goal: "fix it".into(),
            spec_json: "{}".into(),
            state: state.into(),
            budgets_json: "{}".into(),
            installation: Some(INSTALLATION.into()),
        })
        .unwrap();
    for (path, before, after) in files {
        store.record_file_change("t1", path, before, after).unwrap();
    }
    Arc::new(store)
}

fn text(s: &str) -> KeptText {
    KeptText::Text(s.into())
}

async fn undo(store: &Arc<Store>, ws: &MemoryWorkspace) -> Result<UndoReport, String> {
    undo_task(store, ours(), &TaskId("t1".into()), ws).await
}

fn shown(report: &UndoReport) -> String {
    let mut out = report.summary();
    for file in &report.files {
        out.push_str("\n  ");
        out.push_str(&file.line());
    }
    out
}

#[tokio::test]
async fn undo_keeps_a_line_typed_after_the_task_and_a_second_undo_says_already_undone() {
    let store = store_with(
        "succeeded",
        &[
            ("cart.py", text("a\nb\nc\n"), text("a\nB\nc\n")),
            ("new.py", KeptText::Absent, text("new\n")),
        ],
    );
    let ws = MemoryWorkspace::new("/w")
        .with_file("cart.py", "a\nB\nc\ntyped\n")
        .with_file("new.py", "new\n");
    let report = undo(&store, &ws).await.unwrap();
    expect![[r#"
        Undid Rein's changes to 2 files.
          cart.py: restored as before the task (your later changes kept)
          new.py: removed (Rein created it)"#]]
    .assert_eq(&shown(&report));
    assert!(!report.incomplete());
    assert_eq!(ws.text("cart.py").as_deref(), Some("a\nb\nc\ntyped\n"));
    assert_eq!(ws.text("new.py"), None);

    let again = undo(&store, &ws).await.unwrap();
    assert!(again.already_undone());
    expect![[r#"
        Already undone: every file is as it was before the task.
          cart.py: already undone
          new.py: already undone"#]]
    .assert_eq(&shown(&again));
    let ops: Vec<(String, OpState)> = store
        .ops("t1")
        .unwrap()
        .into_iter()
        .map(|op| (op.tool, op.state))
        .collect();
    assert_eq!(
        ops,
        [
            (UNDO_TOOL.to_owned(), OpState::Finished),
            (UNDO_TOOL.to_owned(), OpState::Finished)
        ],
        "each file's undo is an op of the task, and the second undo adds none"
    );
    assert!(
        store.task("t1").unwrap().unwrap().owner.is_none(),
        "the lease is released"
    );
}

#[tokio::test]
async fn a_conflict_leaves_the_file_untouched_and_the_others_are_undone() {
    let store = store_with(
        "failed",
        &[
            ("cart.py", text("a\nb\nc\n"), text("a\nB\nc\n")),
            ("new.py", KeptText::Absent, text("new\n")),
            ("other.py", text("x\n"), text("y\n")),
        ],
    );
    let ws = MemoryWorkspace::new("/w")
        .with_file("cart.py", "a\nMINE\nc\n")
        .with_file("new.py", "new\nmine too\n")
        .with_file("other.py", "y\n");
    let report = undo(&store, &ws).await.unwrap();
    expect![[r#"
        Undid Rein's changes to 1 file; 2 files left as they are (you changed what Rein changed).
          cart.py: not undone: you changed what Rein changed (line 2); the file is left as it is
          new.py: not undone: you changed what Rein changed (line 1); the file is left as it is
          other.py: restored as before the task (your later changes kept)"#]]
    .assert_eq(&shown(&report));
    assert!(report.incomplete());
    assert_eq!(ws.text("cart.py").as_deref(), Some("a\nMINE\nc\n"));
    assert_eq!(ws.text("new.py").as_deref(), Some("new\nmine too\n"));
    assert_eq!(ws.text("other.py").as_deref(), Some("x\n"));
}

#[tokio::test]
async fn a_task_not_over_is_refused() {
    for state in ["running", "queued", "waiting_user"] {
        let store = store_with(state, &[("a.py", text("x\n"), text("y\n"))]);
        let ws = MemoryWorkspace::new("/w").with_file("a.py", "y\n");
        let refused = undo(&store, &ws).await.unwrap_err();
        assert!(refused.contains("cancel it first"), "{state}: {refused}");
        assert_eq!(ws.text("a.py").as_deref(), Some("y\n"));
    }
    let store = store_with("succeeded", &[]);
    let ws = MemoryWorkspace::new("/w");
    let nothing = undo(&store, &ws).await.unwrap();
    assert_eq!(
        nothing.summary(),
        "The task changed no files Rein can undo."
    );
    let unknown = undo_task(&store, ours(), &TaskId("ghost".into()), &ws).await;
    assert_eq!(
        unknown.unwrap_err(),
        "there is no task ghost in this workspace"
    );
}

#[tokio::test]
async fn a_hostile_path_in_the_record_is_refused_and_nothing_is_read_or_written() {
    let store = store_with(
        "succeeded",
        &[
            ("../outside.py", text("x\n"), text("y\n")),
            (".git/config", text("x\n"), text("y\n")),
        ],
    );
    let ws = MemoryWorkspace::new("/w")
        .with_file("../outside.py", "y\n")
        .with_file(".git/config", "y\n");
    let report = undo(&store, &ws).await.unwrap();
    expect![[r#"
        Nothing was undone; 2 files could not be undone.
          ../outside.py: not undone: refused: the recorded path "../outside.py" is not a plain path inside the workspace
          .git/config: not undone: refused: the recorded path ".git/config" is inside .git or .rein"#]]
    .assert_eq(&shown(&report));
    assert_eq!(ws.text("../outside.py").as_deref(), Some("y\n"));
    assert_eq!(ws.text(".git/config").as_deref(), Some("y\n"));
}

/// A crash during an undo leaves its op started: the next undo looks at
/// the file and finishes the job, or sees it was done, or says it cannot
/// tell.
#[tokio::test]
async fn an_undo_a_crash_interrupted_is_finished_or_reported_never_guessed() {
    let crashed = |store: &Arc<Store>, now: &str, expected: &str| {
        let journal = Journal::attach(
            Arc::clone(store),
            &TaskId("t1".into()),
            "host:1:dead",
            Redactor::default(),
        )
        .unwrap();
        let op = journal
            .op_requested(
                0,
                "undo-1",
                UNDO_TOOL,
                &serde_json::json!({"path": "a.py"}),
                vec![file_hash("a.py", Some(ContentHash::of_str(now)))],
                vec![file_hash("a.py", Some(ContentHash::of_str(expected)))],
                OnCrash::ByContent,
            )
            .unwrap();
        journal.op_started(op, UNDO_TOOL).unwrap();
        journal.release();
    };
    let record = [("a.py", text("x\n"), text("y\n"))];

    // The crash came after the write: done.
    let store = store_with("succeeded", &record);
    crashed(&store, "y\n", "x\n");
    let ws = MemoryWorkspace::new("/w").with_file("a.py", "x\n");
    let report = undo(&store, &ws).await.unwrap();
    assert_eq!(report.files[0].result, Undone::AlreadyUndone);
    assert_eq!(store.ops("t1").unwrap()[0].state, OpState::Recovered);

    // Before the write: done now.
    let store = store_with("succeeded", &record);
    crashed(&store, "y\n", "x\n");
    let ws = MemoryWorkspace::new("/w").with_file("a.py", "y\n");
    let report = undo(&store, &ws).await.unwrap();
    assert_eq!(report.files[0].result, Undone::Restored);
    assert_eq!(ws.text("a.py").as_deref(), Some("x\n"));

    // The file changed since: said, untouched.
    let store = store_with("succeeded", &record);
    crashed(&store, "y\n", "x\n");
    let ws = MemoryWorkspace::new("/w").with_file("a.py", "z\n");
    let report = undo(&store, &ws).await.unwrap();
    assert!(
        matches!(&report.files[0].result, Undone::Cannot { reason } if reason.contains("interrupted")),
        "{report:?}"
    );
    assert_eq!(ws.text("a.py").as_deref(), Some("z\n"));
}

/// A `.rein/state.db` that came with the folder may name a task whose
/// "text before" is the attacker's: only this installation's tasks are
/// undone.
#[tokio::test]
async fn a_task_another_installation_ran_is_not_undone() {
    let store = store_with("succeeded", &[("cart.py", text("evil\n"), text("y\n"))]);
    let ws = MemoryWorkspace::new("/w").with_file("cart.py", "y\n");
    for installation in [Some("inst-theirs"), None] {
        let undoer = Undoer {
            owner: OWNER,
            installation,
        };
        let refused = undo_task(&store, undoer, &TaskId("t1".into()), &ws)
            .await
            .unwrap_err();
        assert!(
            refused.contains("was not run by this Rein installation"),
            "{refused}"
        );
    }
    assert_eq!(ws.text("cart.py").as_deref(), Some("y\n"));
}
