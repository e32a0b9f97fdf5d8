//! Opening: directories, WAL, and refusing (untouched, without a panic) what
//! is not ours or is too new.

use std::sync::{Arc, Barrier};

use pretty_assertions::assert_eq;
use rein_store::{SCHEMA_VERSION, Store, StoreError, state_db_path};

use crate::support::temp_db;

#[test]
fn the_store_can_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Store>();
}

#[test]
fn the_database_lives_in_the_workspace_state_directory() {
    let path = state_db_path(std::path::Path::new("/ws"));
    assert_eq!(path, std::path::Path::new("/ws/.rein/state.db"));
}

#[test]
fn open_creates_the_directories_uses_wal_and_migrates() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.path(), path);
    let raw = rusqlite::Connection::open(&path).unwrap();
    let mode: String = raw
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn an_in_memory_store_is_migrated_too() {
    let store = Store::open_in_memory().unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
}

#[test]
fn an_empty_file_is_a_new_database() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"").unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
}

#[test]
fn reopening_keeps_the_version() {
    let (_dir, path) = temp_db();
    drop(Store::open(&path).unwrap());
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
}

/// Asserts that opening `path` is refused as not ours and leaves its bytes
/// as they were.
fn assert_refused_untouched(path: &std::path::Path) {
    let before = std::fs::read(path).unwrap();
    let error = Store::open(path).unwrap_err();
    assert!(
        matches!(&error, StoreError::NotADatabase { path: reported } if reported == path),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("Move it away"), "{message}");
    assert!(
        message.contains("only the history of past tasks is lost"),
        "{message}"
    );
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "the file was modified"
    );
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_untouched() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "these are my notes, not a database\n".repeat(300)).unwrap();
    assert_refused_untouched(&path);
}

#[test]
fn a_damaged_database_is_refused_untouched() {
    let (_dir, path) = temp_db();
    drop(Store::open(&path).unwrap());
    // Keep SQLite's 100-byte header, destroy the schema page after it.
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 4096, "checkpointed on close");
    for byte in &mut bytes[100..4096] {
        *byte = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    assert_refused_untouched(&path);
}

#[test]
fn another_programs_sqlite_database_is_refused_untouched() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch("CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('ada');")
        .unwrap();
    drop(other);
    assert_refused_untouched(&path);
}

#[test]
fn a_database_from_a_newer_rein_is_refused_untouched() {
    let (_dir, path) = temp_db();
    drop(Store::open(&path).unwrap());
    let newer = rusqlite::Connection::open(&path).unwrap();
    newer
        .execute_batch(
            "PRAGMA journal_mode = DELETE; CREATE TABLE future (x TEXT); PRAGMA user_version = 99;",
        )
        .unwrap();
    drop(newer);
    let before = std::fs::read(&path).unwrap();

    let error = Store::open(&path).unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::TooNew {
                found: 99,
                supported: SCHEMA_VERSION
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("left untouched"), "{error}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file was modified"
    );
}

#[test]
fn a_file_where_the_directory_should_be_is_an_error() {
    let (dir, _) = temp_db();
    let blocker = dir.path().join("workspace");
    std::fs::write(&blocker, "a file, not a directory").unwrap();
    let error = Store::open(&blocker.join(".rein").join("state.db")).unwrap_err();
    assert!(matches!(error, StoreError::CreateDir { .. }), "{error:?}");
}

#[test]
fn processes_opening_a_new_database_at_once_all_succeed() {
    let (_dir, path) = temp_db();
    let barrier = Arc::new(Barrier::new(8));
    let openers: Vec<_> = (0..8)
        .map(|_| {
            let (path, barrier) = (path.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                Store::open(&path).map(|store| store.schema_version())
            })
        })
        .collect();
    for opener in openers {
        assert_eq!(opener.join().unwrap().unwrap().unwrap(), SCHEMA_VERSION);
    }
}

/// Regression: a `.rein/state.db` could be committed with a repository and
/// start its tasks on whoever cloned it. Rein's state now ignores itself in
/// git, while a project's own `config.toml` stays committable.
#[test]
fn the_state_directory_keeps_itself_out_of_git() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    std::fs::create_dir_all(dir.path().join(".rein")).unwrap();
    std::fs::write(dir.path().join(".rein/config.toml"), "max_turns = 5\n").unwrap();
    let store = Store::open(&state_db_path(dir.path())).unwrap();
    drop(store);
    std::fs::create_dir_all(dir.path().join(".rein/traces")).unwrap();
    std::fs::write(dir.path().join(".rein/traces/t.jsonl"), "{}\n").unwrap();
    assert_eq!(
        git(&["status", "--porcelain", "--untracked-files=all"]),
        "?? .rein/config.toml\n"
    );
    // A user's own ignore file is theirs.
    std::fs::write(dir.path().join(".rein/.gitignore"), "state.db\n").unwrap();
    rein_store::ensure_state_dir(dir.path()).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".rein/.gitignore")).unwrap(),
        "state.db\n"
    );
}

/// A repository can ship `.rein` (or a file or folder in it) as a link:
/// Rein's state never goes through one.
#[test]
fn state_files_are_never_written_through_links() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".rein/logs")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("bashrc"),
        root.join(".rein/logs/lsp.log"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join(".rein/traces")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("db"), root.join(".rein/state.db")).unwrap();
    let state = rein_store::state_dir(root).unwrap();
    for rel in ["logs/lsp.log", "traces/t.jsonl"] {
        let error = state.append(rel).unwrap_err();
        assert!(
            error.to_string().contains("is a symbolic link"),
            "{rel}: {error}"
        );
    }
    expect_test::expect![".rein/traces is a symbolic link; Rein does not write through it (Rein keeps its state in .rein/ and never writes through a link there, which a repository may have shipped; remove it)"]
        .assert_eq(&state.replace("traces/t.jsonl", b"x", None).unwrap_err().to_string());
    assert!(state.append("../x").is_err());
    assert!(Store::open(&state_db_path(root)).is_err());
    // A fresh file under a real folder is fine, folders made as needed.
    state
        .replace("artifacts/t-1/out.txt", b"out", None)
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join(".rein/artifacts/t-1/out.txt")).unwrap(),
        "out"
    );
    // `.rein` itself as a link.
    let other = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), other.path().join(".rein")).unwrap();
    assert!(rein_store::ensure_state_dir(other.path()).is_err());
    assert!(Store::open(&state_db_path(other.path())).is_err());
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}
