//! Checkpoints: per turn, what the agent needs to build the next request
//! (its progress layer and a reference to the history, whose items are
//! stored once each: `history.rs`), as JSON. A resumed task starts from the
//! last one, so only the last one is kept. What each turn did stays in the
//! turns, the op log and the trace.

use std::fmt;
use std::str::FromStr;

use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use crate::columns::{self, UnknownName};
use crate::error::StoreError;
use crate::store::{Store, now_ms, require_task};
use crate::validate;

/// Where in the turn the checkpoint was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointPhase {
    /// The model's reply is in; its tool calls have not run.
    AfterModel,
    /// The turn's tool calls have all got their results.
    AfterTools,
}

impl CheckpointPhase {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointPhase::AfterModel => "after_model",
            CheckpointPhase::AfterTools => "after_tools",
        }
    }
}

impl fmt::Display for CheckpointPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CheckpointPhase {
    type Err = UnknownName;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [CheckpointPhase::AfterModel, CheckpointPhase::AfterTools]
            .into_iter()
            .find(|phase| phase.as_str() == text)
            .ok_or_else(|| UnknownName {
                what: "checkpoint phase",
                value: text.to_owned(),
            })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewCheckpoint {
    pub task_id: String,
    pub turn: u32,
    pub phase: CheckpointPhase,
    pub data_json: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointRecord {
    pub task_id: String,
    pub turn: u32,
    pub phase: CheckpointPhase,
    pub data_json: String,
    pub created_ms: i64,
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<CheckpointRecord> {
    Ok(CheckpointRecord {
        task_id: row.get("task_id")?,
        turn: row.get("turn")?,
        phase: columns::name(row, "phase")?,
        data_json: row.get("data_json")?,
        created_ms: row.get("created_ms")?,
    })
}

/// Inserts the checkpoint and deletes the task's older ones (in the
/// caller's transaction).
pub(crate) fn insert_replacing(
    tx: &rusqlite::Transaction<'_>,
    checkpoint: &NewCheckpoint,
) -> Result<(), crate::error::Fail> {
    tx.execute(
        "INSERT INTO checkpoints (task_id, turn, phase, data_json, created_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            checkpoint.task_id,
            checkpoint.turn,
            checkpoint.phase.as_str(),
            checkpoint.data_json,
            now_ms()
        ],
    )?;
    tx.execute(
        "DELETE FROM checkpoints WHERE task_id = ?1 AND id < last_insert_rowid()",
        params![checkpoint.task_id],
    )?;
    Ok(())
}

const SELECT: &str = "SELECT task_id, turn, phase, data_json, created_ms FROM checkpoints";

impl Store {
    /// Saves the task's checkpoint, replacing the one before in the same
    /// transaction: a crash leaves either the old one or the new one.
    pub fn save_checkpoint(&self, checkpoint: &NewCheckpoint) -> Result<(), StoreError> {
        validate::json("checkpoint data_json", &checkpoint.data_json)?;
        self.write("saving a checkpoint", |tx| {
            require_task(tx, &checkpoint.task_id)?;
            insert_replacing(tx, checkpoint)
        })
    }

    /// The checkpoint saved last (the one to resume from), if any.
    pub fn last_checkpoint(&self, task: &str) -> Result<Option<CheckpointRecord>, StoreError> {
        self.read("reading the last checkpoint", |conn| {
            let sql = format!("{SELECT} WHERE task_id = ?1 ORDER BY id DESC LIMIT 1");
            Ok(conn.query_row(&sql, [task], from_row).optional()?)
        })
    }

    /// All the task's checkpoints, oldest first: the last one, or none (a
    /// database written before checkpoints were replaced may hold more).
    pub fn checkpoints(&self, task: &str) -> Result<Vec<CheckpointRecord>, StoreError> {
        self.read("reading checkpoints", |conn| {
            let sql = format!("{SELECT} WHERE task_id = ?1 ORDER BY id");
            let mut statement = conn.prepare(&sql)?;
            let checkpoints = statement
                .query_map([task], from_row)?
                .collect::<Result<_, _>>()?;
            Ok(checkpoints)
        })
    }
}
