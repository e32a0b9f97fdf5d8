//! What can go wrong, worded so that whoever reads it (the agent's log, a
//! user) learns what failed, what it means, and what to do about it.

use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

use crate::op_values::OpState;

/// How long a write waits for another process (a second editor window on
/// the same workspace) to finish its transaction before giving up with
/// [`StoreError::Busy`]. Our transactions are short; 5 s means trouble.
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create {}, the directory of the task database: {source}", .path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot open the task database {}: {source}", .path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    /// The file is not SQLite, is another program's SQLite database, or is
    /// damaged. Nothing was written to it.
    #[error(
        "{} is not a Rein task database (it is not SQLite, belongs to another program, or is damaged); \
         it was left as it is. Move it away (for example rename it to state.db.broken) and Rein will \
         start a new one: only the history of past tasks is lost, no workspace file is affected",
        .path.display()
    )]
    NotADatabase { path: PathBuf },

    /// A newer Rein wrote this database. It was not touched.
    #[error(
        "the task database was written by a newer Rein (schema version {found}, this Rein knows up \
         to {supported}); it was left untouched. Use the newer Rein, or move the file away to start \
         a new one"
    )]
    TooNew { found: u32, supported: u32 },

    #[error(
        "migrating the task database to schema version {version} failed and was rolled back \
         (it is still at version {}): {source}", .version - 1
    )]
    Migration {
        version: u32,
        #[source]
        source: rusqlite::Error,
    },

    #[error("task {id:?} already exists in the task database; nothing was written")]
    Exists { id: String },

    #[error("there is no task {id:?} in the task database; nothing was written")]
    NoTask { id: String },

    #[error("session {id:?} already exists in the task database; nothing was written")]
    SessionExists { id: String },

    #[error("there is no session {id:?} in the task database; nothing was written")]
    NoSession { id: String },

    #[error("there is no op {op} in the op log; nothing was written")]
    NoOp { op: i64 },

    /// The op-log guard: an op goes `requested → started → finished` (or
    /// `requested | started → recovered`) once. This is what stops a step
    /// from being applied twice.
    #[error(
        "op {op} is {from}, so it cannot become {to}: an op goes requested → started → finished \
         (or to recovered after a crash) exactly once; nothing was written"
    )]
    BadTransition { op: i64, from: OpState, to: OpState },

    #[error("invalid {field}: {reason}; nothing was written")]
    Invalid { field: &'static str, reason: String },

    /// Another process (a second editor window on the same workspace) kept
    /// the database locked for longer than the busy timeout.
    #[error(
        "the task database {} stayed locked by another process for more than {} s while {doing}; \
         it did not happen, try again",
        .path.display(), BUSY_TIMEOUT.as_secs()
    )]
    Busy { path: PathBuf, doing: &'static str },

    #[error("the task database {} failed while {doing}: {source}", .path.display())]
    Database {
        path: PathBuf,
        doing: &'static str,
        #[source]
        source: rusqlite::Error,
    },
}

/// The error type inside the crate: lets the code use `?` on both SQLite
/// and our own errors; [`Fail::into_store`] adds the context (which
/// database, doing what) once, at the public method's boundary.
#[derive(Debug)]
pub(crate) enum Fail {
    Sql(rusqlite::Error),
    Store(StoreError),
}

impl From<rusqlite::Error> for Fail {
    fn from(error: rusqlite::Error) -> Self {
        Fail::Sql(error)
    }
}

impl From<StoreError> for Fail {
    fn from(error: StoreError) -> Self {
        Fail::Store(error)
    }
}

impl Fail {
    pub(crate) fn into_store(self, path: &Path, doing: &'static str) -> StoreError {
        match self {
            Fail::Store(error) => error,
            Fail::Sql(source) => classify(source, path, doing),
        }
    }
}

/// Turns the SQLite failures a caller can act on into their own variants.
pub(crate) fn classify(source: rusqlite::Error, path: &Path, doing: &'static str) -> StoreError {
    let path = path.to_path_buf();
    match source.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            StoreError::NotADatabase { path }
        }
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            StoreError::Busy { path, doing }
        }
        _ => StoreError::Database {
            path,
            doing,
            source,
        },
    }
}
