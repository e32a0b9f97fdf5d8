//! The history stored item by item: each item written once, a checkpoint
//! and its items saved together, a rewrite (new epoch) replacing them.

use pretty_assertions::assert_eq;
use rein_store::{CheckpointPhase, HistoryRef, HistoryWrite, NewCheckpoint, StoreError};

use crate::support::store_with_task;

fn checkpoint(turn: u32) -> NewCheckpoint {
    NewCheckpoint {
        task_id: "t1".to_owned(),
        turn,
        phase: CheckpointPhase::AfterTools,
        data_json: format!(r#"{{"turn":{turn}}}"#),
    }
}

fn items(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!(r#"{{"item":{i}}}"#)).collect()
}

fn write(epoch: u32, from: usize, len: usize, new_epoch: bool) -> HistoryWrite {
    HistoryWrite {
        at: HistoryRef { epoch, len },
        from,
        items: items(from..len),
        new_epoch,
    }
}

#[test]
fn each_checkpoint_writes_only_the_new_items() {
    let store = store_with_task("t1");
    store
        .save_checkpoint_with_history(&checkpoint(1), &write(0, 0, 2, true))
        .unwrap();
    store
        .save_checkpoint_with_history(&checkpoint(2), &write(0, 2, 5, false))
        .unwrap();
    let at = HistoryRef { epoch: 0, len: 5 };
    assert_eq!(store.history_items("t1", at).unwrap(), items(0..5));
    assert_eq!(store.history_len("t1", 0).unwrap(), 5);
    assert_eq!(store.last_checkpoint("t1").unwrap().unwrap().turn, 2);
    // A prefix is readable too (what an older checkpoint stood on).
    let prefix = HistoryRef { epoch: 0, len: 3 };
    assert_eq!(store.history_items("t1", prefix).unwrap(), items(0..3));
}

#[test]
fn a_rewritten_history_replaces_the_old_epoch() {
    let store = store_with_task("t1");
    store
        .save_checkpoint_with_history(&checkpoint(1), &write(0, 0, 6, true))
        .unwrap();
    // A compaction: three items now, epoch 1.
    store
        .save_checkpoint_with_history(&checkpoint(2), &write(1, 0, 3, true))
        .unwrap();
    assert_eq!(store.history_len("t1", 0).unwrap(), 0);
    assert_eq!(
        store
            .history_items("t1", HistoryRef { epoch: 1, len: 3 })
            .unwrap(),
        items(0..3)
    );
}

#[test]
fn items_beyond_the_checkpoint_are_dropped_with_it() {
    let store = store_with_task("t1");
    store
        .save_checkpoint_with_history(&checkpoint(1), &write(0, 0, 6, true))
        .unwrap();
    // The history is shorter than what is stored (rebuilt from an older
    // point): the rows match the checkpoint again.
    store
        .save_checkpoint_with_history(&checkpoint(2), &write(0, 2, 4, false))
        .unwrap();
    assert_eq!(store.history_len("t1", 0).unwrap(), 4);
}

#[test]
fn a_checkpoint_naming_more_items_than_are_stored_is_an_error() {
    let store = store_with_task("t1");
    store
        .save_checkpoint_with_history(&checkpoint(1), &write(0, 0, 2, true))
        .unwrap();
    let error = store
        .history_items("t1", HistoryRef { epoch: 0, len: 3 })
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("stands on 3 items of epoch 0, but 2 are stored"),
        "{error}"
    );
}

#[test]
fn a_bad_write_changes_nothing() {
    let store = store_with_task("t1");
    store
        .save_checkpoint_with_history(&checkpoint(1), &write(0, 0, 2, true))
        .unwrap();
    // Items that do not end at the checkpoint's length.
    let mut short = write(0, 2, 4, false);
    short.items.pop();
    assert!(matches!(
        store.save_checkpoint_with_history(&checkpoint(2), &short),
        Err(StoreError::Invalid { .. })
    ));
    // An item that is not JSON.
    let mut bad = write(0, 2, 3, false);
    bad.items[0] = "{not json".into();
    assert!(
        store
            .save_checkpoint_with_history(&checkpoint(2), &bad)
            .is_err()
    );
    // A task that does not exist.
    let mut other = checkpoint(2);
    other.task_id = "nope".into();
    assert!(
        store
            .save_checkpoint_with_history(&other, &write(0, 2, 3, false))
            .is_err()
    );
    assert_eq!(store.last_checkpoint("t1").unwrap().unwrap().turn, 1);
    assert_eq!(store.history_len("t1", 0).unwrap(), 2);
}
