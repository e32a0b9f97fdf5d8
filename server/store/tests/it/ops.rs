//! The op log: each step committed on its own, transitions enforced.

use std::sync::{Arc, Barrier};

use pretty_assertions::assert_eq;
use rein_store::{FileHash, NewOp, OpState, Store, StoreError};

use crate::support::{edit_op, file, new_task, store_with_task, temp_db};

#[test]
fn an_op_goes_requested_started_finished() {
    let store = store_with_task("t1");
    let id = store.op_requested(&edit_op("t1", 1, "call_1")).unwrap();

    let requested = store.op(id).unwrap().unwrap();
    assert_eq!(
        (requested.state, requested.started_ms, requested.finished_ms),
        (OpState::Requested, None, None)
    );
    assert_eq!(requested.pre, [file("src/lib.rs", 'a')]);
    assert_eq!(
        (
            requested.post.len(),
            requested.result_json,
            requested.outcome
        ),
        (0, None, None)
    );

    store.op_started(id).unwrap();
    let started = store.op(id).unwrap().unwrap();
    assert_eq!(started.state, OpState::Started);
    assert!(started.started_ms.unwrap() >= started.requested_ms);

    let post = [
        file("src/lib.rs", 'b'),
        FileHash {
            path: "src/new.rs".to_owned(),
            hash: String::new(),
        },
    ];
    store.op_finished(id, r#"{"ok":true}"#, &post).unwrap();
    let finished = store.op(id).unwrap().unwrap();
    assert_eq!(finished.state, OpState::Finished);
    assert_eq!(finished.post, post);
    assert_eq!(finished.result_json.as_deref(), Some(r#"{"ok":true}"#));
    assert!(finished.finished_ms.unwrap() >= finished.started_ms.unwrap());
    assert_eq!(
        (
            finished.task_id.as_str(),
            finished.turn,
            finished.call_id.as_str(),
            finished.tool.as_str()
        ),
        ("t1", 1, "call_1", "edit_file")
    );
    assert_eq!(store.op(id + 1).unwrap(), None);
}

#[test]
fn no_step_happens_twice_or_out_of_order() {
    let store = store_with_task("t1");
    let id = store.op_requested(&edit_op("t1", 1, "call_1")).unwrap();
    let bad = |result: Result<(), StoreError>, from: OpState, to: OpState| {
        let error = result.unwrap_err();
        assert!(
            matches!(error, StoreError::BadTransition { op, from: f, to: t } if op == id && f == from && t == to),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .contains(&format!("op {id} is {from}, so it cannot become {to}")),
            "{error}"
        );
    };

    bad(
        store.op_finished(id, "null", &[]),
        OpState::Requested,
        OpState::Finished,
    );
    store.op_started(id).unwrap();
    bad(store.op_started(id), OpState::Started, OpState::Started);
    store.op_finished(id, r#""done""#, &[]).unwrap();
    bad(
        store.op_finished(id, r#""again""#, &[]),
        OpState::Finished,
        OpState::Finished,
    );
    bad(store.op_started(id), OpState::Finished, OpState::Started);
    bad(
        store.op_recovered(id, "applied", "null"),
        OpState::Finished,
        OpState::Recovered,
    );

    let op = store.op(id).unwrap().unwrap();
    assert_eq!(
        (op.state, op.result_json.as_deref(), op.outcome),
        (OpState::Finished, Some(r#""done""#), None)
    );
}

#[test]
fn ops_left_unfinished_are_listed_and_recovered_once() {
    let store = store_with_task("t1");
    let done = store.op_requested(&edit_op("t1", 1, "call_1")).unwrap();
    store.op_started(done).unwrap();
    store.op_finished(done, "null", &[]).unwrap();
    let started = store.op_requested(&edit_op("t1", 1, "call_2")).unwrap();
    store.op_started(started).unwrap();
    let requested = store.op_requested(&edit_op("t1", 1, "call_3")).unwrap();

    let unfinished: Vec<_> = store
        .unfinished_ops("t1")
        .unwrap()
        .iter()
        .map(|op| (op.id, op.state))
        .collect();
    assert_eq!(
        unfinished,
        [(started, OpState::Started), (requested, OpState::Requested)]
    );

    store
        .op_recovered(started, "applied", r#"{"recovered":"the edit is on disk"}"#)
        .unwrap();
    store
        .op_recovered(requested, "not_run", r#"{"recovered":"never ran"}"#)
        .unwrap();
    let error = store.op_recovered(started, "applied", "null").unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::BadTransition {
                from: OpState::Recovered,
                ..
            }
        ),
        "{error:?}"
    );
    let error = store.op_started(requested).unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::BadTransition {
                from: OpState::Recovered,
                ..
            }
        ),
        "{error:?}"
    );

    assert_eq!(store.unfinished_ops("t1").unwrap(), []);
    let all: Vec<_> = store
        .ops("t1")
        .unwrap()
        .into_iter()
        .map(|op| (op.call_id, op.state, op.outcome))
        .collect();
    assert_eq!(
        all,
        [
            ("call_1".to_owned(), OpState::Finished, None),
            (
                "call_2".to_owned(),
                OpState::Recovered,
                Some("applied".to_owned())
            ),
            (
                "call_3".to_owned(),
                OpState::Recovered,
                Some("not_run".to_owned())
            ),
        ]
    );
    let recovered = store.op(started).unwrap().unwrap();
    assert!(recovered.finished_ms.is_some());
}

#[test]
fn an_op_is_found_by_its_call() {
    let store = store_with_task("t1");
    let id = store.op_requested(&edit_op("t1", 2, "call_9")).unwrap();
    assert_eq!(
        store
            .op_for_call("t1", 2, "call_9")
            .unwrap()
            .map(|op| op.id),
        Some(id)
    );
    assert_eq!(store.op_for_call("t1", 1, "call_9").unwrap(), None);
    assert_eq!(store.op_for_call("t2", 2, "call_9").unwrap(), None);
}

#[test]
fn unknown_ops_and_tasks_are_reported() {
    let store = store_with_task("t1");
    let error = store.op_started(42).unwrap_err();
    assert!(matches!(error, StoreError::NoOp { op: 42 }), "{error:?}");
    let error = store.op_recovered(42, "unknown", "null").unwrap_err();
    assert!(matches!(error, StoreError::NoOp { op: 42 }), "{error:?}");
    let error = store
        .op_requested(&edit_op("ghost", 1, "call_1"))
        .unwrap_err();
    assert!(
        matches!(&error, StoreError::NoTask { id } if id == "ghost"),
        "{error:?}"
    );
    assert_eq!(store.ops("ghost").unwrap(), []);
}

#[test]
fn hashes_must_be_64_lowercase_hex_digits_or_empty() {
    let store = store_with_task("t1");
    let with_hash = |hash: &str| NewOp {
        pre: vec![FileHash {
            path: "a.rs".to_owned(),
            hash: hash.to_owned(),
        }],
        ..edit_op("t1", 1, "call_1")
    };
    for bad in ["abc", &"A".repeat(64), &"g".repeat(64), &"a".repeat(65)] {
        let error = store.op_requested(&with_hash(bad)).unwrap_err();
        assert!(
            matches!(
                error,
                StoreError::Invalid {
                    field: "op pre hashes",
                    ..
                }
            ),
            "{bad}: {error:?}"
        );
    }
    store.op_requested(&with_hash("")).unwrap();
    let id = store
        .op_requested(&with_hash(&"0123456789abcdef".repeat(4)))
        .unwrap();
    store.op_started(id).unwrap();
    let error = store
        .op_finished(
            id,
            "null",
            &[FileHash {
                path: "a.rs".to_owned(),
                hash: "x".to_owned(),
            }],
        )
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::Invalid {
                field: "op post hashes",
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(
        store.op(id).unwrap().unwrap().state,
        OpState::Started,
        "nothing written"
    );
    let error = store
        .op_requested(&NewOp {
            args_json: "{".to_owned(),
            ..edit_op("t1", 1, "c")
        })
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::Invalid {
                field: "op args_json",
                ..
            }
        ),
        "{error:?}"
    );
}

/// Two processes racing to start (run) the same op: exactly one may.
#[test]
fn of_stores_racing_to_start_an_op_exactly_one_wins() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    store.create_task(&new_task("t1")).unwrap();
    let id = store.op_requested(&edit_op("t1", 1, "call_1")).unwrap();

    let barrier = Arc::new(Barrier::new(8));
    let racers: Vec<_> = (0..8)
        .map(|_| {
            let (path, barrier) = (path.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let store = Store::open(&path).unwrap();
                barrier.wait();
                store.op_started(id)
            })
        })
        .collect();
    let results: Vec<_> = racers
        .into_iter()
        .map(|racer| racer.join().unwrap())
        .collect();
    assert_eq!(
        results.iter().filter(|result| result.is_ok()).count(),
        1,
        "{results:?}"
    );
    for result in results.iter().filter(|result| result.is_err()) {
        assert!(
            matches!(
                result,
                Err(StoreError::BadTransition {
                    from: OpState::Started,
                    ..
                })
            ),
            "{result:?}"
        );
    }
}
