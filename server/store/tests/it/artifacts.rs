//! The artifacts index.

use pretty_assertions::assert_eq;
use rein_store::{NewArtifact, StoreError};

use crate::support::store_with_task;

fn artifact(rel_path: &str, bytes: u64) -> NewArtifact {
    NewArtifact {
        task_id: "t1".to_owned(),
        rel_path: rel_path.to_owned(),
        kind: "command_log".to_owned(),
        bytes,
    }
}

#[test]
fn artifacts_are_listed_in_the_order_first_recorded() {
    let store = store_with_task("t1");
    store
        .record_artifact(&artifact("logs/cargo-test-1.log", 100))
        .unwrap();
    store.record_artifact(&artifact("patch.diff", 20)).unwrap();
    let first = store.artifacts("t1").unwrap();
    assert_eq!(
        first
            .iter()
            .map(|a| (a.rel_path.as_str(), a.bytes))
            .collect::<Vec<_>>(),
        [("logs/cargo-test-1.log", 100), ("patch.diff", 20)]
    );

    // The log was rewritten: same row, new size, first time kept.
    store
        .record_artifact(&NewArtifact {
            kind: "spilled_output".to_owned(),
            ..artifact("logs/cargo-test-1.log", 300)
        })
        .unwrap();
    let again = store.artifacts("t1").unwrap();
    assert_eq!(
        again
            .iter()
            .map(|a| (a.rel_path.as_str(), a.kind.as_str(), a.bytes))
            .collect::<Vec<_>>(),
        [
            ("logs/cargo-test-1.log", "spilled_output", 300),
            ("patch.diff", "command_log", 20)
        ]
    );
    assert_eq!(again[0].created_ms, first[0].created_ms);
    assert_eq!(store.artifacts("other").unwrap(), []);
}

#[test]
fn an_artifact_path_must_stay_inside_the_task_directory() {
    let store = store_with_task("t1");
    for bad in [
        "",
        "../escape.log",
        "a/../../b",
        "/etc/passwd",
        "./x.log",
        "a\\b.log",
    ] {
        let error = store.record_artifact(&artifact(bad, 1)).unwrap_err();
        assert!(
            matches!(
                error,
                StoreError::Invalid {
                    field: "artifact rel_path",
                    ..
                }
            ),
            "{bad:?}: {error:?}"
        );
    }
    let error = store
        .record_artifact(&NewArtifact {
            task_id: "ghost".to_owned(),
            ..artifact("x.log", 1)
        })
        .unwrap_err();
    assert!(matches!(error, StoreError::NoTask { .. }), "{error:?}");
    assert_eq!(store.artifacts("t1").unwrap(), []);
}
