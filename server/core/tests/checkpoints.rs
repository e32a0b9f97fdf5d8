//! Checkpoints through the journal: the history is stored item by item,
//! each item once, and a resumed task gets it back whole — after a
//! compaction rewrote it, from a journal attached after a crash, and from a
//! checkpoint an older Rein wrote with the history inline.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use pretty_assertions::assert_eq;
use rein_core::budget::{Budgets, Spent};
use rein_core::context::history::{History, Item};
use rein_core::context::progress::Progress;
use rein_core::journal::{self, AgentSnapshot, Journal, LoopState};
use rein_core::task::{TaskId, TaskSpec};
use rein_models::Redactor;
use rein_store::{CheckpointPhase, HistoryRef, NewCheckpoint, Store};

fn task() -> TaskSpec {
    TaskSpec::fix_test(TaskId("t-cp".into()), "tests/test_cart.py", "test_total")
}

fn begin(store: &Arc<Store>) -> Journal {
    Journal::begin(
        Arc::clone(store),
        &task(),
        &Budgets::default(),
        "host:1:me",
        None,
        Redactor::default(),
    )
    .unwrap()
}

fn snapshot(turn: u32, items: usize, compactions: u32) -> AgentSnapshot {
    let mut history = History::default();
    for i in 0..items {
        history.push(Item::user(format!("item {i} of epoch {compactions}")));
    }
    AgentSnapshot {
        history,
        state: LoopState {
            turn,
            progress: Progress::default(),
            spent: Spent::default(),
            elapsed_ms: 10,
            reads: Vec::new(),
            runs: 0,
            compactions,
            verifier: serde_json::Value::Null,
        },
    }
}

fn save(journal: &Journal, phase: CheckpointPhase, s: &AgentSnapshot) {
    journal.checkpoint(phase, &s.state, &s.history).unwrap();
}

fn resumed(store: &Store) -> AgentSnapshot {
    journal::last_snapshot(store, &TaskId("t-cp".into()))
        .unwrap()
        .unwrap()
        .1
}

#[test]
fn a_checkpoint_stores_each_history_item_once_and_refers_to_them() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let journal = begin(&store);
    for turn in 1..=30 {
        let s = snapshot(turn, 2 * turn as usize, 0);
        save(&journal, CheckpointPhase::AfterModel, &s);
    }
    let last = store.last_checkpoint("t-cp").unwrap().unwrap();
    // The checkpoint's own JSON names the items; it does not copy them.
    assert!(!last.data_json.contains("item 0 of"), "{}", last.data_json);
    assert!(
        last.data_json
            .contains(r#""history_ref":{"epoch":0,"len":60}"#),
        "{}",
        last.data_json
    );
    assert_eq!(store.history_len("t-cp", 0).unwrap(), 60);
    assert_eq!(resumed(&store), snapshot(30, 60, 0));
}

#[test]
fn a_compaction_starts_a_new_epoch_and_the_old_items_go() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let journal = begin(&store);
    save(&journal, CheckpointPhase::AfterTools, &snapshot(5, 10, 0));
    save(&journal, CheckpointPhase::AfterTools, &snapshot(6, 4, 1));
    assert_eq!(store.history_len("t-cp", 0).unwrap(), 0);
    assert_eq!(store.history_len("t-cp", 1).unwrap(), 4);
    assert_eq!(resumed(&store), snapshot(6, 4, 1));
}

#[test]
fn a_journal_attached_after_a_crash_goes_on_appending() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let first = begin(&store);
    save(&first, CheckpointPhase::AfterModel, &snapshot(3, 6, 0));
    drop(first);
    store.release_lease("t-cp", "host:1:me").unwrap();
    let again = Journal::attach(
        Arc::clone(&store),
        &TaskId("t-cp".into()),
        "host:2:me",
        Redactor::default(),
    )
    .unwrap();
    let mut s = resumed(&store);
    s.history.push(Item::user("item 6 of epoch 0"));
    s.state.turn = 4;
    save(&again, CheckpointPhase::AfterTools, &s);
    assert_eq!(store.history_len("t-cp", 0).unwrap(), 7);
    assert_eq!(resumed(&store), snapshot(4, 7, 0));
}

#[test]
fn a_checkpoint_written_with_the_history_inline_still_resumes() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let _journal = begin(&store);
    // As Rein wrote checkpoints before the history was stored by item.
    let old = snapshot(2, 4, 0);
    let data = serde_json::to_value(&old).unwrap();
    assert!(data["history"].is_object(), "{data}");
    store
        .save_checkpoint(&NewCheckpoint {
            task_id: "t-cp".into(),
            turn: 2,
            phase: CheckpointPhase::AfterTools,
            data_json: data.to_string(),
        })
        .unwrap();
    assert_eq!(resumed(&store), old);
}

#[test]
fn a_checkpoint_whose_items_are_missing_is_reported_not_guessed() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let _journal = begin(&store);
    let s = snapshot(2, 0, 0);
    let mut data = serde_json::to_value(&s.state).unwrap();
    data["history_ref"] = serde_json::to_value(HistoryRef { epoch: 0, len: 5 }).unwrap();
    store
        .save_checkpoint(&NewCheckpoint {
            task_id: "t-cp".into(),
            turn: 2,
            phase: CheckpointPhase::AfterTools,
            data_json: data.to_string(),
        })
        .unwrap();
    let error = journal::last_snapshot(&store, &TaskId("t-cp".into())).unwrap_err();
    assert!(error.to_string().contains("stands on 5 items"), "{error}");
}
