//! Checkpoints: the last one is what a resumed task starts from.

use pretty_assertions::assert_eq;
use rein_store::{CheckpointPhase, NewCheckpoint, StoreError};

use crate::support::store_with_task;

fn checkpoint(turn: u32, phase: CheckpointPhase) -> NewCheckpoint {
    NewCheckpoint {
        task_id: "t1".to_owned(),
        turn,
        phase,
        data_json: format!(r#"{{"progress":"turn {turn}","context_ref":"history/{turn}.json"}}"#),
    }
}

#[test]
fn the_last_checkpoint_saved_is_the_one_to_resume_from() {
    let store = store_with_task("t1");
    assert_eq!(store.last_checkpoint("t1").unwrap(), None);
    let saved = [
        checkpoint(1, CheckpointPhase::AfterModel),
        checkpoint(1, CheckpointPhase::AfterTools),
        checkpoint(2, CheckpointPhase::AfterModel),
    ];
    for one in &saved {
        store.save_checkpoint(one).unwrap();
    }
    let last = store.last_checkpoint("t1").unwrap().unwrap();
    assert_eq!(
        (
            last.task_id.as_str(),
            last.turn,
            last.phase,
            last.data_json.as_str()
        ),
        (
            "t1",
            2,
            CheckpointPhase::AfterModel,
            saved[2].data_json.as_str()
        )
    );
    let all: Vec<_> = store
        .checkpoints("t1")
        .unwrap()
        .into_iter()
        .map(|c| (c.turn, c.phase))
        .collect();
    // Only the last is kept: each holds the whole history.
    assert_eq!(all, [(2, CheckpointPhase::AfterModel)]);
}

#[test]
fn a_checkpoint_replaces_only_its_own_tasks() {
    let store = store_with_task("t1");
    store.create_task(&crate::support::new_task("t2")).unwrap();
    store
        .save_checkpoint(&checkpoint(1, CheckpointPhase::AfterTools))
        .unwrap();
    let other = NewCheckpoint {
        task_id: "t2".to_owned(),
        ..checkpoint(7, CheckpointPhase::AfterModel)
    };
    store.save_checkpoint(&other).unwrap();
    store
        .save_checkpoint(&checkpoint(2, CheckpointPhase::AfterTools))
        .unwrap();
    assert_eq!(store.last_checkpoint("t1").unwrap().unwrap().turn, 2);
    assert_eq!(store.last_checkpoint("t2").unwrap().unwrap().turn, 7);
    assert_eq!(store.checkpoints("t2").unwrap().len(), 1);
}

#[test]
fn bad_checkpoints_are_refused() {
    let store = store_with_task("t1");
    let error = store
        .save_checkpoint(&NewCheckpoint {
            task_id: "ghost".to_owned(),
            ..checkpoint(1, CheckpointPhase::AfterModel)
        })
        .unwrap_err();
    assert!(matches!(error, StoreError::NoTask { .. }), "{error:?}");
    let error = store
        .save_checkpoint(&NewCheckpoint {
            data_json: "progress".to_owned(),
            ..checkpoint(1, CheckpointPhase::AfterModel)
        })
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::Invalid {
                field: "checkpoint data_json",
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(store.last_checkpoint("t1").unwrap(), None);
}
