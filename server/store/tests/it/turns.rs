//! Turns: one row per model call, never overwritten.

use pretty_assertions::assert_eq;
use rein_store::{StoreError, TurnRecord, now_ms};

use crate::support::store_with_task;

fn turn(task: &str, turn: u32, cost_usd: Option<f64>) -> TurnRecord {
    TurnRecord {
        task_id: task.to_owned(),
        turn,
        request_ref: format!("requests/{turn}.json"),
        response_json: r#"{"content":[{"type":"text","text":"ok"}]}"#.to_owned(),
        usage_json: r#"{"input_tokens":1200,"output_tokens":80}"#.to_owned(),
        cost_usd,
        latency_ms: 2345,
        created_ms: now_ms(),
    }
}

#[test]
fn turns_read_back_in_the_order_recorded() {
    let store = store_with_task("t1");
    let recorded = [turn("t1", 1, Some(0.012)), turn("t1", 2, None)];
    for record in &recorded {
        store.record_turn(record).unwrap();
    }
    assert_eq!(store.turns("t1").unwrap(), recorded);
    assert_eq!(store.turns("other").unwrap(), []);
}

#[test]
fn a_turn_recorded_twice_keeps_both_calls() {
    // A turn re-run after a crash: both calls cost money.
    let store = store_with_task("t1");
    store.record_turn(&turn("t1", 1, Some(0.01))).unwrap();
    store.record_turn(&turn("t1", 1, Some(0.02))).unwrap();
    let costs: Vec<_> = store
        .turns("t1")
        .unwrap()
        .iter()
        .map(|turn| turn.cost_usd)
        .collect();
    assert_eq!(costs, [Some(0.01), Some(0.02)]);
}

#[test]
fn bad_turns_are_refused() {
    let store = store_with_task("t1");
    let error = store.record_turn(&turn("ghost", 1, None)).unwrap_err();
    assert!(
        matches!(&error, StoreError::NoTask { id } if id == "ghost"),
        "{error:?}"
    );
    let error = store
        .record_turn(&turn("t1", 1, Some(f64::NAN)))
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::Invalid {
                field: "turn cost_usd",
                ..
            }
        ),
        "{error:?}"
    );
    let error = store
        .record_turn(&TurnRecord {
            latency_ms: u64::MAX,
            ..turn("t1", 1, None)
        })
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::Invalid {
                field: "turn latency_ms",
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(store.turns("t1").unwrap(), []);
}
