//! What a task did to each file it changed: the text before its first
//! edit and after its last, for undo (schema v6). The caller decides what
//! is kept (a size bound); this stores what it is handed.

use rusqlite::{Row, params};
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::store::{Store, now_ms, require_task};
use crate::validate;

/// A file's text at one moment, as kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeptText {
    Text(String),
    /// There was no such file.
    Absent,
    /// The caller did not keep it (too large).
    TooLarge,
    /// The caller did not keep it: it held a secret.
    Secret,
}

impl KeptText {
    fn columns(&self) -> (&'static str, Option<&str>) {
        match self {
            KeptText::Text(text) => ("text", Some(text)),
            KeptText::Absent => ("absent", None),
            KeptText::TooLarge => ("too_large", None),
            KeptText::Secret => ("secret", None),
        }
    }

    fn from_columns(kind: &str, text: Option<String>) -> rusqlite::Result<Self> {
        match (kind, text) {
            ("text", Some(text)) => Ok(KeptText::Text(text)),
            ("absent", None) => Ok(KeptText::Absent),
            ("too_large", None) => Ok(KeptText::TooLarge),
            ("secret", None) => Ok(KeptText::Secret),
            (other, _) => Err(rusqlite::Error::InvalidColumnType(
                0,
                format!("file text kind {other:?}"),
                rusqlite::types::Type::Text,
            )),
        }
    }
}

/// One file a task changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    pub path: String,
    pub before: KeptText,
    pub after: KeptText,
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<FileChange> {
    Ok(FileChange {
        path: row.get("path")?,
        before: KeptText::from_columns(
            &row.get::<_, String>("before_kind")?,
            row.get("before_text")?,
        )?,
        after: KeptText::from_columns(
            &row.get::<_, String>("after_kind")?,
            row.get("after_text")?,
        )?,
    })
}

impl Store {
    /// Records that `task` changed `path` from `before` to `after`. The
    /// first record of a path keeps its `before`; later ones only move
    /// `after` (the text before the task is what undo goes back to).
    pub fn record_file_change(
        &self,
        task: &str,
        path: &str,
        before: &KeptText,
        after: &KeptText,
    ) -> Result<(), StoreError> {
        validate::non_empty("file path", path)?;
        let (before_kind, before_text) = before.columns();
        let (after_kind, after_text) = after.columns();
        self.write("recording a file the task changed", |tx| {
            require_task(tx, task)?;
            tx.execute(
                "INSERT INTO task_files (task_id, path, before_kind, before_text, after_kind, after_text, changed_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
                 ON CONFLICT (task_id, path) DO UPDATE SET after_kind = excluded.after_kind, \
                 after_text = excluded.after_text, changed_ms = excluded.changed_ms",
                params![task, path, before_kind, before_text, after_kind, after_text, now_ms()],
            )?;
            Ok(())
        })
    }

    /// The files `task` changed, in the order it first changed them.
    pub fn file_changes(&self, task: &str) -> Result<Vec<FileChange>, StoreError> {
        self.read("reading the files a task changed", |conn| {
            let mut statement = conn.prepare(
                "SELECT path, before_kind, before_text, after_kind, after_text FROM task_files \
                 WHERE task_id = ?1 ORDER BY id",
            )?;
            let files = statement
                .query_map([task], from_row)?
                .collect::<Result<_, _>>()?;
            Ok(files)
        })
    }
}
