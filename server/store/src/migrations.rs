//! The versioned schema: `PRAGMA user_version` says which scripts of
//! [`MIGRATIONS`] a database has had; opening applies the missing ones, in
//! order, one transaction each. A database written by an older Rein opens in
//! a newer one; a newer database is refused by an older Rein, untouched.
//!
//! Adding a migration: append a script to `schema/` and to [`MIGRATIONS`]
//! (it must end with `PRAGMA user_version = <its version>;`), never edit an
//! earlier one, and refresh the golden schema test. A script that rebuilds a
//! table (SQLite's 12-step ALTER) needs `foreign_keys` off around its
//! transaction; the runner does not do that yet because no script needs it.

use std::path::Path;

use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, TransactionBehavior};

use crate::error::BUSY_TIMEOUT;
use crate::error::{Fail, StoreError};

/// The schema scripts, oldest first: script `i` takes a database from
/// version `i` to `i + 1`. Public so that tests and tools can build a
/// database exactly as an older Rein wrote it.
pub const MIGRATIONS: &[&str] = &[
    include_str!("schema/v1.sql"),
    include_str!("schema/v2.sql"),
    include_str!("schema/v3.sql"),
    include_str!("schema/v4.sql"),
    include_str!("schema/v5.sql"),
    include_str!("schema/v6.sql"),
];

/// The schema version this build writes and the newest it can open.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// "REIN": set by the v1 script; tells our databases from other programs'.
const APPLICATION_ID: i64 = 0x5245_494E;

/// Checks that the database is ours and not too new (reading only), then
/// sets the connection up and migrates it to [`SCHEMA_VERSION`].
pub(crate) fn prepare(conn: &mut Connection, path: &Path) -> Result<(), Fail> {
    // The first reads: a file that is not SQLite fails here (SQLITE_NOTADB),
    // before anything has been written to it.
    check_ours(conn, path)?;
    // Only now may we write (switching to WAL writes the file header).
    enable_wal(conn, path)?;
    // With WAL, NORMAL commits survive the death of the process (the WAL is
    // written before a commit returns); only an OS crash or power loss can
    // lose the last commits, never corrupt the database. See the crate doc.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    migrate(conn)
}

/// Switches the database to WAL (a no-op once it is: the mode is stored in
/// the file).
fn enable_wal(conn: &Connection, path: &Path) -> Result<(), Fail> {
    // The switch needs a moment when no other connection uses the file, and
    // SQLite answers SQLITE_BUSY at once rather than through the busy
    // handler; so two processes creating the database together retry here,
    // within the same time limit as any other wait.
    let deadline = Instant::now() + BUSY_TIMEOUT;
    let mode = loop {
        match conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
        {
            Ok(mode) => break mode,
            Err(error)
                if error.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(error) => return Err(error.into()),
        }
    };
    if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
        // E.g. a file system without shared memory. Every commit is still
        // durable against a crash of the process, only slower and with
        // readers blocking the writer.
        tracing::warn!(path = %path.display(), mode, "the task database cannot use WAL mode");
    }
    Ok(())
}

/// The schema version of a database (its `user_version`).
pub(crate) fn user_version(conn: &Connection) -> Result<u32, Fail> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    // Negative: never written by Rein; `check_ours` refuses such a file.
    Ok(u32::try_from(version).unwrap_or(u32::MAX))
}

fn check_ours(conn: &mut Connection, path: &Path) -> Result<(), Fail> {
    // One read transaction, so the three facts come from one snapshot: a
    // process migrating the file at the same time must not make it look
    // half ours.
    let tx = conn.transaction()?;
    let application_id: i64 = tx.pragma_query_value(None, "application_id", |row| row.get(0))?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let objects: i64 = tx.query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))?;
    tx.finish()?;
    let fresh = application_id == 0 && version == 0 && objects == 0;
    if (!fresh && application_id != APPLICATION_ID) || version < 0 {
        return Err(StoreError::NotADatabase {
            path: path.to_path_buf(),
        }
        .into());
    }
    let found = u32::try_from(version).unwrap_or(u32::MAX);
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            found,
            supported: SCHEMA_VERSION,
        }
        .into());
    }
    Ok(())
}

/// Applies the missing scripts, each in its own IMMEDIATE transaction that
/// re-reads the version first: two processes opening a fresh database at
/// once never apply a script twice.
fn migrate(conn: &mut Connection) -> Result<(), Fail> {
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version = user_version(&tx)?;
        if version > SCHEMA_VERSION {
            // A newer Rein migrated it between our check and now.
            return Err(StoreError::TooNew {
                found: version,
                supported: SCHEMA_VERSION,
            }
            .into());
        }
        let Some(script) = MIGRATIONS.get(version as usize) else {
            return Ok(());
        };
        let to = version + 1;
        let failed = |source| StoreError::Migration {
            version: to,
            source,
        };
        tx.execute_batch(script).map_err(failed)?;
        let reached = user_version(&tx)?;
        if reached != to {
            // A script that forgot its `PRAGMA user_version`: a bug, caught
            // before it commits.
            let reason = format!("script {to} left user_version at {reached}");
            return Err(StoreError::Invalid {
                field: "migration",
                reason,
            }
            .into());
        }
        tx.commit().map_err(failed)?;
        tracing::info!(from = version, to, "migrated the task database");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_sets_its_own_version() {
        for (index, script) in MIGRATIONS.iter().enumerate() {
            let line = format!("PRAGMA user_version = {};", index + 1);
            assert!(
                script.trim_end().ends_with(&line),
                "script {} must end with `{line}`",
                index + 1
            );
        }
    }
}
