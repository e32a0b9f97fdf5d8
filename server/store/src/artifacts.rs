//! The artifacts index. The files themselves (full test logs, spilled tool
//! output, archived history, patches, requests) are written by the caller
//! under `.rein/artifacts/<task>/`; this records what is there.

use rusqlite::{Row, params};
use serde::{Deserialize, Serialize};

use crate::columns;
use crate::error::StoreError;
use crate::store::{Store, now_ms, require_task};
use crate::validate;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewArtifact {
    pub task_id: String,
    /// Relative to `.rein/artifacts/<task>/`, and inside it.
    pub rel_path: String,
    /// "command_log" | "spilled_output" | "history_archive" | "patch" |
    /// "request": the caller's vocabulary, stored as given.
    pub kind: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRecord {
    pub task_id: String,
    pub rel_path: String,
    pub kind: String,
    pub bytes: u64,
    /// When the path was first recorded.
    pub created_ms: i64,
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<ArtifactRecord> {
    Ok(ArtifactRecord {
        task_id: row.get("task_id")?,
        rel_path: row.get("rel_path")?,
        kind: row.get("kind")?,
        bytes: columns::unsigned(row, "bytes")?,
        created_ms: row.get("created_ms")?,
    })
}

impl Store {
    /// Records an artifact. Recording the same path again (the file was
    /// rewritten, or the call is repeated after a crash) updates its kind and
    /// size instead of failing.
    pub fn record_artifact(&self, artifact: &NewArtifact) -> Result<(), StoreError> {
        validate::rel_path("artifact rel_path", &artifact.rel_path)?;
        validate::non_empty("artifact kind", &artifact.kind)?;
        let bytes = i64::try_from(artifact.bytes).map_err(|_| StoreError::Invalid {
            field: "artifact bytes",
            reason: format!("{} is out of range", artifact.bytes),
        })?;
        self.write("recording an artifact", |tx| {
            require_task(tx, &artifact.task_id)?;
            tx.execute(
                "INSERT INTO artifacts (task_id, rel_path, kind, bytes, created_ms) VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT (task_id, rel_path) DO UPDATE SET kind = excluded.kind, bytes = excluded.bytes",
                params![artifact.task_id, artifact.rel_path, artifact.kind, bytes, now_ms()],
            )?;
            Ok(())
        })
    }

    /// The task's artifacts in the order they were first recorded.
    pub fn artifacts(&self, task: &str) -> Result<Vec<ArtifactRecord>, StoreError> {
        self.read("reading artifacts", |conn| {
            let mut statement = conn.prepare(
                "SELECT task_id, rel_path, kind, bytes, created_ms FROM artifacts WHERE task_id = ?1 ORDER BY id",
            )?;
            let artifacts = statement.query_map([task], from_row)?.collect::<Result<_, _>>()?;
            Ok(artifacts)
        })
    }
}
