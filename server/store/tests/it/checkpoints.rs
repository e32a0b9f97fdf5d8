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
    assert_eq!(
        all,
        [
            (1, CheckpointPhase::AfterModel),
            (1, CheckpointPhase::AfterTools),
            (2, CheckpointPhase::AfterModel)
        ]
    );
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
