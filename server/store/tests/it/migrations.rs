//! The versioned schema: golden snapshots (a schema change is always
//! deliberate: refresh with `UPDATE_EXPECT=1`), and a database written by
//! v1 opening in this version with its data intact.

use std::path::Path;
use std::time::Duration;

use expect_test::{Expect, expect};
use pretty_assertions::assert_eq;
use rein_store::{
    CheckpointPhase, Lease, MIGRATIONS, NewArtifact, OpState, SCHEMA_VERSION, Store, StoreError,
};
use rusqlite::Connection;

use crate::support::{hash, temp_db};

/// The schema as SQLite stores it, plus the header fields we set.
fn dump_schema(conn: &Connection) -> String {
    let mut out = String::new();
    for pragma in ["application_id", "user_version"] {
        let value: i64 = conn
            .query_row(&format!("PRAGMA {pragma}"), [], |row| row.get(0))
            .unwrap();
        out.push_str(&format!("PRAGMA {pragma} = {value};\n"));
    }
    let mut statement = conn
        .prepare("SELECT type, name, sql FROM sqlite_master ORDER BY tbl_name, type DESC, name")
        .unwrap();
    let rows = statement
        .query_map([], |row| {
            let (kind, name): (String, String) = (row.get(0)?, row.get(1)?);
            let sql: Option<String> = row.get(2)?;
            Ok(sql.unwrap_or_else(|| format!("-- {kind} {name} (automatic)")))
        })
        .unwrap();
    for sql in rows {
        out.push('\n');
        out.push_str(&sql.unwrap());
        out.push_str(";\n");
    }
    out
}

/// Builds a database exactly as a Rein that knew only the first `version`
/// scripts wrote it.
fn write_old_database(path: &Path, version: usize) -> Connection {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    for script in &MIGRATIONS[..version] {
        let tx = conn.transaction().unwrap();
        tx.execute_batch(script).unwrap();
        tx.commit().unwrap();
    }
    conn
}

fn check_schema(conn: &Connection, expect: Expect) {
    expect.assert_eq(&dump_schema(conn));
}

/// Version 1 is frozen: databases in the wild were built by this script.
/// If this snapshot changes, the change belongs in a new migration.
#[test]
fn schema_v1_is_frozen() {
    let (_dir, path) = temp_db();
    let conn = write_old_database(&path, 1);
    check_schema(
        &conn,
        expect![[r#"
            PRAGMA application_id = 1380272462;
            PRAGMA user_version = 1;

            CREATE TABLE checkpoints (
                id         INTEGER PRIMARY KEY,
                task_id    TEXT    NOT NULL REFERENCES tasks (id),
                turn       INTEGER NOT NULL CHECK (turn >= 0),
                phase      TEXT    NOT NULL CHECK (phase IN ('after_model', 'after_tools')),
                data_json  TEXT    NOT NULL,
                created_ms INTEGER NOT NULL
            ) STRICT;

            CREATE INDEX checkpoints_by_task ON checkpoints (task_id, id);

            CREATE TABLE ops (
                id           INTEGER PRIMARY KEY,
                task_id      TEXT    NOT NULL REFERENCES tasks (id),
                turn         INTEGER NOT NULL CHECK (turn >= 0),
                call_id      TEXT    NOT NULL,
                tool         TEXT    NOT NULL,
                args_json    TEXT    NOT NULL,
                state        TEXT    NOT NULL
                    CHECK (state IN ('requested', 'started', 'finished', 'recovered')),
                pre_json     TEXT    NOT NULL,
                post_json    TEXT    NOT NULL DEFAULT '[]',
                result_json  TEXT,
                outcome      TEXT,
                requested_ms INTEGER NOT NULL,
                started_ms   INTEGER,
                finished_ms  INTEGER
            ) STRICT;

            CREATE INDEX ops_by_call ON ops (task_id, turn, call_id);

            CREATE INDEX ops_by_task ON ops (task_id, id);

            CREATE TABLE tasks (
                seq          INTEGER PRIMARY KEY,
                id           TEXT    NOT NULL UNIQUE,
                kind         TEXT    NOT NULL,
                goal         TEXT    NOT NULL,
                spec_json    TEXT    NOT NULL,
                state        TEXT    NOT NULL,
                reason       TEXT,
                budgets_json TEXT    NOT NULL,
                spent_json   TEXT    NOT NULL,
                created_ms   INTEGER NOT NULL,
                updated_ms   INTEGER NOT NULL
            ) STRICT;

            -- index sqlite_autoindex_tasks_1 (automatic);

            CREATE INDEX tasks_by_state ON tasks (state, seq);

            CREATE TABLE turns (
                id            INTEGER PRIMARY KEY,
                task_id       TEXT    NOT NULL REFERENCES tasks (id),
                turn          INTEGER NOT NULL CHECK (turn >= 0),
                request_ref   TEXT    NOT NULL,
                response_json TEXT    NOT NULL,
                usage_json    TEXT    NOT NULL,
                cost_usd      REAL,
                latency_ms    INTEGER NOT NULL CHECK (latency_ms >= 0),
                created_ms    INTEGER NOT NULL
            ) STRICT;

            CREATE INDEX turns_by_task ON turns (task_id, id);
        "#]],
    );
}

#[test]
fn schema_now() {
    let (_dir, path) = temp_db();
    drop(Store::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    assert_eq!(SCHEMA_VERSION as usize, MIGRATIONS.len());
    check_schema(
        &conn,
        expect![[r#"
            PRAGMA application_id = 1380272462;
            PRAGMA user_version = 6;

            CREATE TABLE artifacts (
                id         INTEGER PRIMARY KEY,
                task_id    TEXT    NOT NULL REFERENCES tasks (id),
                rel_path   TEXT    NOT NULL,
                kind       TEXT    NOT NULL,
                bytes      INTEGER NOT NULL CHECK (bytes >= 0),
                created_ms INTEGER NOT NULL,
                UNIQUE (task_id, rel_path)
            ) STRICT;

            -- index sqlite_autoindex_artifacts_1 (automatic);

            CREATE TABLE checkpoints (
                id         INTEGER PRIMARY KEY,
                task_id    TEXT    NOT NULL REFERENCES tasks (id),
                turn       INTEGER NOT NULL CHECK (turn >= 0),
                phase      TEXT    NOT NULL CHECK (phase IN ('after_model', 'after_tools')),
                data_json  TEXT    NOT NULL,
                created_ms INTEGER NOT NULL
            ) STRICT;

            CREATE INDEX checkpoints_by_task ON checkpoints (task_id, id);

            CREATE TABLE history_items (
                task_id   TEXT    NOT NULL REFERENCES tasks (id),
                epoch     INTEGER NOT NULL CHECK (epoch >= 0),
                seq       INTEGER NOT NULL CHECK (seq >= 0),
                data_json TEXT    NOT NULL,
                PRIMARY KEY (task_id, epoch, seq)
            ) STRICT, WITHOUT ROWID;

            CREATE TABLE ops (
                id           INTEGER PRIMARY KEY,
                task_id      TEXT    NOT NULL REFERENCES tasks (id),
                turn         INTEGER NOT NULL CHECK (turn >= 0),
                call_id      TEXT    NOT NULL,
                tool         TEXT    NOT NULL,
                args_json    TEXT    NOT NULL,
                state        TEXT    NOT NULL
                    CHECK (state IN ('requested', 'started', 'finished', 'recovered')),
                pre_json     TEXT    NOT NULL,
                post_json    TEXT    NOT NULL DEFAULT '[]',
                result_json  TEXT,
                outcome      TEXT,
                requested_ms INTEGER NOT NULL,
                started_ms   INTEGER,
                finished_ms  INTEGER
            ) STRICT;

            CREATE INDEX ops_by_call ON ops (task_id, turn, call_id);

            CREATE INDEX ops_by_task ON ops (task_id, id);

            CREATE TABLE session_tasks (
                session_id TEXT    NOT NULL REFERENCES sessions (id),
                seq        INTEGER NOT NULL CHECK (seq >= 0),
                task_id    TEXT    NOT NULL REFERENCES tasks (id),
                prompt     TEXT    NOT NULL,
                PRIMARY KEY (session_id, seq)
            ) STRICT;

            -- index sqlite_autoindex_session_tasks_1 (automatic);

            CREATE TABLE sessions (
                id         TEXT    PRIMARY KEY NOT NULL CHECK (id <> ''),
                front_end  TEXT    NOT NULL,
                cwd        TEXT    NOT NULL,
                title      TEXT,
                created_ms INTEGER NOT NULL,
                updated_ms INTEGER NOT NULL
            ) STRICT;

            -- index sqlite_autoindex_sessions_1 (automatic);

            CREATE TABLE task_files (
                id          INTEGER PRIMARY KEY,
                task_id     TEXT    NOT NULL REFERENCES tasks (id),
                path        TEXT    NOT NULL CHECK (path <> ''),
                before_kind TEXT    NOT NULL CHECK (before_kind IN ('text', 'absent', 'too_large', 'secret')),
                before_text TEXT    CHECK ((before_kind = 'text') = (before_text IS NOT NULL)),
                after_kind  TEXT    NOT NULL CHECK (after_kind IN ('text', 'absent', 'too_large', 'secret')),
                after_text  TEXT    CHECK ((after_kind = 'text') = (after_text IS NOT NULL)),
                changed_ms  INTEGER NOT NULL,
                UNIQUE (task_id, path)
            ) STRICT;

            -- index sqlite_autoindex_task_files_1 (automatic);

            CREATE TABLE tasks (
                seq          INTEGER PRIMARY KEY,
                id           TEXT    NOT NULL UNIQUE,
                kind         TEXT    NOT NULL,
                goal         TEXT    NOT NULL,
                spec_json    TEXT    NOT NULL,
                state        TEXT    NOT NULL,
                reason       TEXT,
                budgets_json TEXT    NOT NULL,
                spent_json   TEXT    NOT NULL,
                created_ms   INTEGER NOT NULL,
                updated_ms   INTEGER NOT NULL
            , owner TEXT, lease_until_ms INTEGER, installation TEXT) STRICT;

            -- index sqlite_autoindex_tasks_1 (automatic);

            CREATE INDEX tasks_by_state ON tasks (state, seq);

            CREATE TABLE turns (
                id            INTEGER PRIMARY KEY,
                task_id       TEXT    NOT NULL REFERENCES tasks (id),
                turn          INTEGER NOT NULL CHECK (turn >= 0),
                request_ref   TEXT    NOT NULL,
                response_json TEXT    NOT NULL,
                usage_json    TEXT    NOT NULL,
                cost_usd      REAL,
                latency_ms    INTEGER NOT NULL CHECK (latency_ms >= 0),
                created_ms    INTEGER NOT NULL
            ) STRICT;

            CREATE INDEX turns_by_task ON turns (task_id, id);
        "#]],
    );
}

#[test]
fn a_v1_database_opens_migrated_with_its_data_intact() {
    let (_dir, path) = temp_db();
    let conn = write_old_database(&path, 1);
    conn.execute_batch(&format!(
        "INSERT INTO tasks (id, kind, goal, spec_json, state, reason, budgets_json, spent_json, created_ms, updated_ms)
             VALUES ('old', 'fix_test', 'fix it', '{{\"goal\":\"fix it\"}}', 'running', NULL, '{{}}', '{{\"turns\":1}}', 1000, 2000);
         INSERT INTO turns (task_id, turn, request_ref, response_json, usage_json, cost_usd, latency_ms, created_ms)
             VALUES ('old', 1, 'requests/1.json', '{{\"text\":\"hi\"}}', '{{\"input_tokens\":10}}', 0.01, 1234, 1500);
         INSERT INTO ops (task_id, turn, call_id, tool, args_json, state, pre_json, post_json, result_json, requested_ms, started_ms, finished_ms)
             VALUES ('old', 1, 'call_1', 'read_file', '{{}}', 'finished', '[]', '[]', '\"text\"', 1600, 1601, 1602);
         INSERT INTO ops (task_id, turn, call_id, tool, args_json, state, pre_json, requested_ms, started_ms)
             VALUES ('old', 1, 'call_2', 'edit_file', '{{}}', 'started', '[{{\"path\":\"a.rs\",\"hash\":\"{}\"}}]', 1700, 1701);
         INSERT INTO checkpoints (task_id, turn, phase, data_json, created_ms)
             VALUES ('old', 1, 'after_model', '{{\"progress\":\"read a.rs\"}}', 1800);",
        hash('a')
    ))
    .unwrap();
    drop(conn);

    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);

    let task = store.task("old").unwrap().unwrap();
    assert_eq!(
        (
            task.state.as_str(),
            task.spent_json.as_str(),
            task.created_ms,
            task.updated_ms
        ),
        ("running", r#"{"turns":1}"#, 1000, 2000)
    );
    assert_eq!((task.owner, task.lease_until_ms), (None, None));
    let turns = store.turns("old").unwrap();
    assert_eq!(turns.len(), 1);
    assert_eq!((turns[0].latency_ms, turns[0].cost_usd), (1234, Some(0.01)));
    let unfinished = store.unfinished_ops("old").unwrap();
    assert_eq!(unfinished.len(), 1);
    assert_eq!(
        (unfinished[0].call_id.as_str(), unfinished[0].state),
        ("call_2", OpState::Started)
    );
    assert_eq!(unfinished[0].pre[0].hash, hash('a'));
    let checkpoint = store.last_checkpoint("old").unwrap().unwrap();
    assert_eq!(checkpoint.phase, CheckpointPhase::AfterModel);

    // What v1 did not have works on the old data.
    store
        .op_recovered(unfinished[0].id, "applied", r#""edited""#)
        .unwrap();
    assert_eq!(
        store
            .acquire_lease("old", "me", Duration::from_secs(60))
            .unwrap(),
        Lease::Acquired
    );
    let log = NewArtifact {
        task_id: "old".to_owned(),
        rel_path: "cargo-test-1.log".to_owned(),
        kind: "command_log".to_owned(),
        bytes: 10,
    };
    store.record_artifact(&log).unwrap();
    assert_eq!(store.artifacts("old").unwrap().len(), 1);
}

#[test]
fn a_failed_migration_is_rolled_back_whole() {
    let (_dir, path) = temp_db();
    let conn = write_old_database(&path, 1);
    // Something v2 wants to create is in the way, so its script fails after
    // its first statements (the lease columns) already ran.
    conn.execute_batch("CREATE TABLE artifacts (x TEXT);")
        .unwrap();
    drop(conn);

    let error = Store::open(&path).unwrap_err();
    assert!(
        matches!(error, StoreError::Migration { version: 2, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("still at version 1"), "{error}");

    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, 1);
    let has_owner: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM pragma_table_info('tasks') WHERE name = 'owner')",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert!(
        !has_owner,
        "the v2 script's first statements were not rolled back"
    );
}
