//! Tasks: create, read, update, list.

use pretty_assertions::assert_eq;
use rein_store::{NewTask, Store, StoreError, TaskRecord};

use crate::support::{new_task, store_with_task};

#[test]
fn a_created_task_reads_back_as_given() {
    let store = store_with_task("t1");
    let task = store.task("t1").unwrap().unwrap();
    let given = new_task("t1");
    assert_eq!(
        task,
        TaskRecord {
            id: given.id,
            kind: given.kind,
            goal: given.goal,
            spec_json: given.spec_json,
            state: given.state,
            reason: None,
            budgets_json: given.budgets_json,
            spent_json: "{}".to_owned(),
            created_ms: task.created_ms,
            updated_ms: task.created_ms,
            owner: None,
            lease_until_ms: None,
            installation: Some("install-a".to_owned()),
        }
    );
    assert!(
        task.created_ms > 1_600_000_000_000,
        "unix milliseconds: {}",
        task.created_ms
    );
    assert_eq!(store.task("nope").unwrap(), None);
}

#[test]
fn a_duplicate_id_is_refused_and_the_first_task_kept() {
    let store = store_with_task("t1");
    let mut other = new_task("t1");
    other.goal = "something else".to_owned();
    let error = store.create_task(&other).unwrap_err();
    assert!(
        matches!(&error, StoreError::Exists { id } if id == "t1"),
        "{error:?}"
    );
    assert_eq!(store.task("t1").unwrap().unwrap().goal, new_task("t1").goal);
    assert_eq!(store.tasks().unwrap().len(), 1);
}

#[test]
fn update_sets_state_reason_and_spent() {
    let store = store_with_task("t1");
    let spent = r#"{"turns":3,"cost_usd":0.02}"#;
    store
        .update_task("t1", "failed", Some("budget: turns"), spent)
        .unwrap();
    let task = store.task("t1").unwrap().unwrap();
    assert_eq!(
        (
            task.state.as_str(),
            task.reason.as_deref(),
            task.spent_json.as_str()
        ),
        ("failed", Some("budget: turns"), spent)
    );
    assert!(task.updated_ms >= task.created_ms);

    store.update_task("t1", "running", None, spent).unwrap();
    assert_eq!(
        store.task("t1").unwrap().unwrap().reason,
        None,
        "None clears the reason"
    );
}

#[test]
fn updating_an_unknown_task_says_so() {
    let store = Store::open_in_memory().unwrap();
    let error = store
        .update_task("ghost", "running", None, "{}")
        .unwrap_err();
    assert!(
        matches!(&error, StoreError::NoTask { id } if id == "ghost"),
        "{error:?}"
    );
}

#[test]
fn tasks_are_listed_newest_first_and_by_state() {
    let store = Store::open_in_memory().unwrap();
    for (id, state) in [
        ("a", "succeeded"),
        ("b", "running"),
        ("c", "waiting_user"),
        ("d", "running"),
    ] {
        store
            .create_task(&NewTask {
                state: state.to_owned(),
                ..new_task(id)
            })
            .unwrap();
    }
    let ids = |tasks: Vec<TaskRecord>| tasks.into_iter().map(|task| task.id).collect::<Vec<_>>();
    assert_eq!(ids(store.tasks().unwrap()), ["d", "c", "b", "a"]);
    assert_eq!(
        ids(store.tasks_in_states(&["running", "waiting_user"]).unwrap()),
        ["d", "c", "b"]
    );
    assert_eq!(
        ids(store.tasks_in_states(&["cancelled"]).unwrap()),
        Vec::<String>::new()
    );
    assert_eq!(
        ids(store.tasks_in_states(&[]).unwrap()),
        Vec::<String>::new()
    );
}

#[test]
fn records_that_are_not_json_are_refused_and_nothing_written() {
    let store = Store::open_in_memory().unwrap();
    let broken = NewTask {
        spec_json: "{not json".to_owned(),
        ..new_task("t1")
    };
    let error = store.create_task(&broken).unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::Invalid {
                field: "task spec_json",
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(store.tasks().unwrap(), []);

    store.create_task(&new_task("t1")).unwrap();
    let error = store.update_task("t1", "running", None, "").unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::Invalid {
                field: "task spent_json",
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(store.task("t1").unwrap().unwrap().state, "queued");

    let error = store.create_task(&new_task("")).unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::Invalid {
                field: "task id",
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn a_task_resumed_by_another_installation_becomes_its_own() {
    let store = store_with_task("t1");
    store.adopt_task("t1", "install-b").unwrap();
    assert_eq!(
        store.task("t1").unwrap().unwrap().installation.as_deref(),
        Some("install-b")
    );
    assert!(matches!(
        store.adopt_task("nope", "install-b"),
        Err(StoreError::NoTask { .. })
    ));
}
