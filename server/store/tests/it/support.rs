//! Builders for records, temporary databases, and child processes.

use std::path::PathBuf;
use std::process::Command;

use rein_store::{FileHash, NewOp, NewTask, Store};
use tempfile::TempDir;

/// A database path in a fresh temporary directory (kept alive by the
/// returned guard), two levels down so that `open` has directories to make.
pub fn temp_db() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("workspace").join(".rein").join("state.db");
    (dir, path)
}

pub fn new_task(id: &str) -> NewTask {
    NewTask {
        id: id.to_owned(),
        kind: "fix_test".to_owned(),
        goal: format!("make the test of {id} pass"),
        spec_json: format!(
            r#"{{"goal":"make the test of {id} pass","constraints":["no new deps"]}}"#
        ),
        state: "queued".to_owned(),
        budgets_json: r#"{"max_turns":20,"max_cost_usd":1.0}"#.to_owned(),
        installation: Some("install-a".to_owned()),
    }
}

/// A store with one task in it.
pub fn store_with_task(id: &str) -> Store {
    let store = Store::open_in_memory().unwrap();
    store.create_task(&new_task(id)).unwrap();
    store
}

/// A 64-hex-digit content hash made of one repeated digit.
pub fn hash(digit: char) -> String {
    std::iter::repeat_n(digit, 64).collect()
}

pub fn file(path: &str, digit: char) -> FileHash {
    FileHash {
        path: path.to_owned(),
        hash: hash(digit),
    }
}

pub fn edit_op(task: &str, turn: u32, call_id: &str) -> NewOp {
    NewOp {
        task_id: task.to_owned(),
        turn,
        call_id: call_id.to_owned(),
        tool: "edit_file".to_owned(),
        args_json: r#"{"path":"src/lib.rs","old_text":"a","new_text":"b"}"#.to_owned(),
        pre: vec![file("src/lib.rs", 'a')],
    }
}

/// The names of the variables that turn a test of this binary into a child
/// process's job. Only children read them; the parent's environment is
/// never changed (it sets them on the child's `Command`).
pub const CHILD_ROLE: &str = "REIN_STORE_TEST_CHILD_ROLE";
pub const CHILD_DB: &str = "REIN_STORE_TEST_CHILD_DB";
pub const CHILD_ARG: &str = "REIN_STORE_TEST_CHILD_ARG";

/// This test binary, set to run only the test `name` (a module path such as
/// `crash::writer_child`) in the role `role` on the database `db`. Child
/// entry points are `#[ignore]`d, so they count in no normal run (nextest's
/// default filter leaves them out even of `--run-ignored`): the child runs
/// its one with `--ignored`.
pub fn child(name: &str, role: &str, db: &std::path::Path) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ROLE, role)
        .env(CHILD_DB, db);
    command
}

/// In a child started by [`child`] for `role`: its database. Run any other
/// way (`cargo test -- --ignored`), a child entry point has nothing to do,
/// and fails rather than pass having checked nothing.
pub fn child_db(role: &str) -> PathBuf {
    let matches = std::env::var_os(CHILD_ROLE).is_some_and(|value| value == role);
    match std::env::var_os(CHILD_DB) {
        Some(db) if matches => PathBuf::from(db),
        _ => panic!(
            "a child process's entry point (role {role}): its parent test starts it; alone it checks nothing"
        ),
    }
}
