//! The `Store` handle: one SQLite connection behind a mutex, opened,
//! checked and migrated; every public method is one committed transaction.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rein_fsroot::{Links, Root};
use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::error::{Fail, StoreError, classify};
use crate::migrations;

pub use crate::error::BUSY_TIMEOUT;

/// The directory, under the workspace root, that holds Rein's state.
pub const STATE_DIR: &str = ".rein";

/// The task database's file name inside [`STATE_DIR`].
pub const DB_FILE: &str = "state.db";

/// `<workspace>/.rein/state.db`.
pub fn state_db_path(workspace: &Path) -> PathBuf {
    workspace.join(STATE_DIR).join(DB_FILE)
}

/// What `.rein/.gitignore` holds: Rein's state belongs to this machine,
/// as pytest's and mypy's caches do; only a project's own settings file
/// may be committed.
const STATE_GITIGNORE: &str = "# Rein's task state, logs and traces: local to this machine, never committed.\n\
# (A project's settings file, config.toml, may be.)\n\
*\n\
!config.toml\n";

/// What a refusal in `.rein/` tells the user to do.
const LINK_HINT: &str = "Rein keeps its state in .rein/ and never writes through a link there, which a repository may have shipped; remove it";

/// `<workspace>/.rein/`, opened beneath the workspace in one step and made
/// if needed, with its `.gitignore` (left as it is if the user has one), so
/// no task state ends up in a commit: a `state.db` that travels with a
/// repository could start tasks elsewhere. Every file Rein keeps there is
/// then opened through this handle, which follows no symbolic link:
/// `.rein/` comes with cloned repositories too, and one that ships
/// `.rein/logs/lsp.log` as a link to `~/.bashrc` (or `.rein` itself as a
/// link) must not get Rein to write there — nor a process swapping one in
/// while Rein writes.
pub fn state_dir(workspace: &Path) -> std::io::Result<Root> {
    // The workspace itself is the user's (as named); made if missing.
    std::fs::create_dir_all(workspace)?;
    let dir = Root::open(workspace, Links::Refuse)?
        .with_hint(LINK_HINT)
        .dir(STATE_DIR, true)?;
    match dir.create_new(".gitignore", STATE_GITIGNORE.as_bytes(), None) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(dir),
    }
}

/// [`state_dir`], for a caller that needs its path (the database, which
/// SQLite opens by name).
pub fn ensure_state_dir(workspace: &Path) -> std::io::Result<PathBuf> {
    state_dir(workspace).map(|dir| dir.path().to_path_buf())
}

/// Refuses `name` in `dir` if it is a link.
fn refuse_link(dir: &Root, name: &str) -> std::io::Result<()> {
    match dir.symlink_metadata(name) {
        Ok(meta) if meta.file_type().is_symlink() => Err(std::io::Error::other(format!(
            "{} is a symbolic link: {LINK_HINT}",
            dir.path().join(name).display()
        ))),
        _ => Ok(()),
    }
}

/// The current time in unix milliseconds: the unit of every timestamp here.
pub fn now_ms() -> i64 {
    // A clock before 1970 is broken; 0 keeps the ordering sane.
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// `now + ttl` in unix milliseconds, saturating.
pub(crate) fn ms_after(now: i64, ttl: Duration) -> i64 {
    now.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
}

/// Durable task state. `Send + Sync`: share it in an `Arc`. Every method is
/// synchronous and holds the connection only for its own transaction (call
/// it from `spawn_blocking`, never hold it across an `.await`), and every
/// write is committed before the method returns.
pub struct Store {
    conn: Mutex<Connection>,
    /// For error messages; `:memory:` for an in-memory store.
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (creating it and its parent directories if needed) the task
    /// database at `path`, normally [`state_db_path`]. Refuses, without
    /// writing to it, a file that is not a Rein database
    /// ([`StoreError::NotADatabase`]) or one written by a newer Rein
    /// ([`StoreError::TooNew`]); migrates an older one.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            let created = if parent.file_name() == Some(std::ffi::OsStr::new(STATE_DIR)) {
                // SQLite opens the file by name (it has no call to open one
                // beneath a folder handle); `.rein/` and the name are
                // checked in one step each just before.
                let workspace = parent
                    .parent()
                    .filter(|w| !w.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                state_dir(workspace)
                    .and_then(|dir| refuse_link(&dir, name.as_deref().unwrap_or(DB_FILE)))
            } else {
                std::fs::create_dir_all(parent)
            };
            created.map_err(|source| StoreError::CreateDir {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let conn =
            Connection::open(path).map_err(|source| match classify(source, path, "opening") {
                StoreError::Database { path, source, .. } => StoreError::Open { path, source },
                other => other,
            })?;
        Self::prepare(conn, path.to_path_buf())
    }

    /// A private database that lives as long as the `Store`: for tests and
    /// dry runs.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: path.clone(),
            source,
        })?;
        Self::prepare(conn, path)
    }

    fn prepare(mut conn: Connection, path: PathBuf) -> Result<Store, StoreError> {
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|source| classify(source, &path, "opening"))?;
        migrations::prepare(&mut conn, &path).map_err(|fail| fail.into_store(&path, "opening"))?;
        Ok(Store {
            conn: Mutex::new(conn),
            path,
        })
    }

    /// Where the database lives (`:memory:` for an in-memory store).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open database: [`crate::SCHEMA_VERSION`]
    /// once opened.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        self.read("reading the schema version", migrations::user_version)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while the lock was held cannot have left a transaction
        // open: `Transaction` rolls back when dropped during the unwind. So
        // the connection is fine to use.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs reads on the connection (each statement sees one consistent
    /// snapshot).
    pub(crate) fn read<T>(
        &self,
        doing: &'static str,
        f: impl FnOnce(&Connection) -> Result<T, Fail>,
    ) -> Result<T, StoreError> {
        let conn = self.lock();
        f(&conn).map_err(|fail| fail.into_store(&self.path, doing))
    }

    /// Runs `f` in one IMMEDIATE transaction and commits it before
    /// returning; an error rolls everything back. IMMEDIATE takes the write
    /// lock up front, so a read-then-write never fails half-way because
    /// another process wrote in between (it waits up to [`BUSY_TIMEOUT`]).
    pub(crate) fn write<T>(
        &self,
        doing: &'static str,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, Fail>,
    ) -> Result<T, StoreError> {
        let mut conn = self.lock();
        let run = |conn: &mut Connection| -> Result<T, Fail> {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let value = f(&tx)?;
            tx.commit()?;
            Ok(value)
        };
        run(&mut conn).map_err(|fail| fail.into_store(&self.path, doing))
    }
}

pub(crate) fn task_exists(conn: &Connection, id: &str) -> Result<bool, Fail> {
    let sql = "SELECT EXISTS (SELECT 1 FROM tasks WHERE id = ?1)";
    Ok(conn.query_row(sql, [id], |row| row.get(0))?)
}

/// Errors with [`StoreError::NoTask`] unless the task exists. Writes check
/// this first so that the caller gets that error rather than a foreign-key
/// failure.
pub(crate) fn require_task(conn: &Connection, id: &str) -> Result<(), Fail> {
    if task_exists(conn, id)? {
        Ok(())
    } else {
        Err(StoreError::NoTask { id: id.to_owned() }.into())
    }
}
