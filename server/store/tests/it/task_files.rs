//! The files a task changed, kept for undo.

use pretty_assertions::assert_eq;
use rein_store::{FileChange, KeptText, StoreError};

use crate::support::store_with_task;

fn text(s: &str) -> KeptText {
    KeptText::Text(s.to_owned())
}

#[test]
fn the_first_before_is_kept_and_the_last_after_wins() {
    let store = store_with_task("t1");
    store
        .record_file_change("t1", "cart.py", &text("v0"), &text("v1"))
        .unwrap();
    store
        .record_file_change("t1", "new.py", &KeptText::Absent, &text("n"))
        .unwrap();
    // A second edit of cart.py: its `before` is the first edit's result,
    // which undo must not go back to.
    store
        .record_file_change("t1", "cart.py", &text("v1"), &text("v2"))
        .unwrap();
    store
        .record_file_change("t1", "big.bin", &KeptText::TooLarge, &KeptText::TooLarge)
        .unwrap();
    store
        .record_file_change("t1", ".env", &KeptText::Secret, &KeptText::Secret)
        .unwrap();
    assert_eq!(
        store.file_changes("t1").unwrap(),
        [
            FileChange {
                path: "cart.py".into(),
                before: text("v0"),
                after: text("v2"),
            },
            FileChange {
                path: "new.py".into(),
                before: KeptText::Absent,
                after: text("n"),
            },
            FileChange {
                path: "big.bin".into(),
                before: KeptText::TooLarge,
                after: KeptText::TooLarge,
            },
            FileChange {
                path: ".env".into(),
                before: KeptText::Secret,
                after: KeptText::Secret,
            },
        ]
    );
    assert_eq!(store.file_changes("other").unwrap(), []);
}

#[test]
fn a_change_of_an_unknown_task_or_without_a_path_is_refused() {
    let store = store_with_task("t1");
    assert!(matches!(
        store.record_file_change("ghost", "a.py", &text("a"), &text("b")),
        Err(StoreError::NoTask { .. })
    ));
    assert!(matches!(
        store.record_file_change("t1", "", &text("a"), &text("b")),
        Err(StoreError::Invalid { .. })
    ));
}
