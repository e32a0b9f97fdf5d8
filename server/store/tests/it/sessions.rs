//! Sessions: a conversation's requests and the tasks they became, listed
//! most recent first; ids and task names are checked, never trusted.

use pretty_assertions::assert_eq;
use rein_store::{SessionTask, StoreError};

use crate::support::{new_task, store_with_task};

#[test]
fn a_session_lists_its_requests_in_order_and_takes_the_first_as_title() {
    let store = store_with_task("t1");
    store.create_task(&new_task("t2")).unwrap();
    store.create_session("s1", "acp", "/work/p").unwrap();
    let empty = store.session("s1").unwrap().unwrap();
    assert_eq!((empty.title, empty.cwd.as_str()), (None, "/work/p"));
    store
        .add_session_task("s1", "t1", "Fix the failing test tests/a.py::t\nplease")
        .unwrap();
    store.add_session_task("s1", "t2", "now rename it").unwrap();
    assert_eq!(
        store.session_tasks("s1").unwrap(),
        vec![
            SessionTask {
                task_id: "t1".into(),
                prompt: "Fix the failing test tests/a.py::t\nplease".into()
            },
            SessionTask {
                task_id: "t2".into(),
                prompt: "now rename it".into()
            },
        ]
    );
    let session = store.session("s1").unwrap().unwrap();
    assert_eq!(
        session.title.as_deref(),
        Some("Fix the failing test tests/a.py::t")
    );
    assert!(session.updated_ms >= session.created_ms);
    assert_eq!(store.session("s2").unwrap(), None);
    assert_eq!(store.session_tasks("s2").unwrap(), vec![]);
}

#[test]
fn sessions_are_listed_most_recently_used_first() {
    let store = store_with_task("t1");
    store.create_session("old", "acp", "/p").unwrap();
    store.create_session("new", "acp", "/p").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    store.add_session_task("old", "t1", "go").unwrap();
    let ids: Vec<String> = store
        .sessions()
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, ["old", "new"]);
}

#[test]
fn a_duplicate_session_or_a_missing_task_is_refused_and_nothing_written() {
    let store = store_with_task("t1");
    store.create_session("s1", "acp", "/p").unwrap();
    assert!(matches!(
        store.create_session("s1", "acp", "/elsewhere"),
        Err(StoreError::SessionExists { .. })
    ));
    assert_eq!(store.session("s1").unwrap().unwrap().cwd, "/p");
    assert!(matches!(
        store.add_session_task("s1", "no-such-task", "x"),
        Err(StoreError::NoTask { .. })
    ));
    assert!(matches!(
        store.add_session_task("no-such-session", "t1", "x"),
        Err(StoreError::NoSession { .. })
    ));
    assert_eq!(store.session_tasks("s1").unwrap(), vec![]);
    assert!(store.create_session("", "acp", "/p").is_err());
}
