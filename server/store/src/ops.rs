//! The op log: every tool call is written `requested` before anything is
//! done, `started` right before it acts, and `finished` with its result
//! after, each a committed transaction of its own. After a crash an op left
//! `requested` or `started` is reconciled by the caller (comparing the
//! files' hashes with `pre`) and closed with [`Store::op_recovered`]; it is
//! never re-run blindly.
//!
//! Transitions are enforced by the `UPDATE … WHERE state = …` itself, so no
//! op is started twice, finished twice, or started after it finished, even
//! with two processes on the same database.

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use crate::columns;
use crate::error::{Fail, StoreError};
pub use crate::op_values::{FileHash, OpState};
use crate::store::{Store, now_ms, require_task};
use crate::validate;

/// A tool call about to be run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewOp {
    pub task_id: String,
    pub turn: u32,
    pub call_id: String,
    pub tool: String,
    pub args_json: String,
    /// The files it may touch and their hashes before it runs.
    pub pre: Vec<FileHash>,
}

/// An op as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpRecord {
    pub id: i64,
    pub task_id: String,
    pub turn: u32,
    pub call_id: String,
    pub tool: String,
    pub args_json: String,
    pub state: OpState,
    pub pre: Vec<FileHash>,
    /// Empty until finished.
    pub post: Vec<FileHash>,
    /// Set when finished or recovered.
    pub result_json: Option<String>,
    /// Set when recovered: what reconciliation found ("applied",
    /// "not_applied", "unknown", "not_run", ...).
    pub outcome: Option<String>,
    pub requested_ms: i64,
    pub started_ms: Option<i64>,
    /// When it finished or was recovered.
    pub finished_ms: Option<i64>,
}

const COLUMNS: &str = "id, task_id, turn, call_id, tool, args_json, state, pre_json, post_json, \
                       result_json, outcome, requested_ms, started_ms, finished_ms";

fn from_row(row: &Row<'_>) -> rusqlite::Result<OpRecord> {
    Ok(OpRecord {
        id: row.get("id")?,
        task_id: row.get("task_id")?,
        turn: row.get("turn")?,
        call_id: row.get("call_id")?,
        tool: row.get("tool")?,
        args_json: row.get("args_json")?,
        state: columns::name(row, "state")?,
        pre: columns::json(row, "pre_json")?,
        post: columns::json(row, "post_json")?,
        result_json: row.get("result_json")?,
        outcome: row.get("outcome")?,
        requested_ms: row.get("requested_ms")?,
        started_ms: row.get("started_ms")?,
        finished_ms: row.get("finished_ms")?,
    })
}

fn hashes_json(field: &'static str, files: &[FileHash]) -> Result<String, StoreError> {
    validate::hashes(field, files)?;
    serde_json::to_string(files).map_err(|error| StoreError::Invalid {
        field,
        reason: error.to_string(),
    })
}

/// The zero-rows case of a transition: says why (no such op, or it is in
/// another state) from inside the same transaction.
fn refused(conn: &Connection, op: i64, to: OpState) -> Result<(), Fail> {
    let from = conn
        .query_row("SELECT state FROM ops WHERE id = ?1", [op], |row| {
            columns::name(row, "state")
        })
        .optional()?;
    Err(match from {
        Some(from) => StoreError::BadTransition { op, from, to },
        None => StoreError::NoOp { op },
    }
    .into())
}

impl Store {
    /// Logs a tool call before anything is done about it; returns its id.
    pub fn op_requested(&self, op: &NewOp) -> Result<i64, StoreError> {
        validate::non_empty("op tool", &op.tool)?;
        validate::json("op args_json", &op.args_json)?;
        let pre = hashes_json("op pre hashes", &op.pre)?;
        self.write("logging a requested op", |tx| {
            require_task(tx, &op.task_id)?;
            tx.execute(
                "INSERT INTO ops (task_id, turn, call_id, tool, args_json, state, pre_json, requested_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, 'requested', ?6, ?7)",
                params![op.task_id, op.turn, op.call_id, op.tool, op.args_json, pre, now_ms()],
            )?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// Marks the op as about to act. Only from `requested`: once this has
    /// returned, a crash means "it may have happened".
    pub fn op_started(&self, op: i64) -> Result<(), StoreError> {
        self.write("logging a started op", |tx| {
            let changed = tx.execute(
                "UPDATE ops SET state = 'started', started_ms = ?2 WHERE id = ?1 AND state = 'requested'",
                params![op, now_ms()],
            )?;
            if changed == 0 {
                return refused(tx, op, OpState::Started);
            }
            Ok(())
        })
    }

    /// Records the op's result and the hashes of the files after it. Only
    /// from `started`.
    pub fn op_finished(
        &self,
        op: i64,
        result_json: &str,
        post: &[FileHash],
    ) -> Result<(), StoreError> {
        validate::json("op result_json", result_json)?;
        let post = hashes_json("op post hashes", post)?;
        self.write("logging a finished op", |tx| {
            let changed = tx.execute(
                "UPDATE ops SET state = 'finished', result_json = ?2, post_json = ?3, finished_ms = ?4 \
                 WHERE id = ?1 AND state = 'started'",
                params![op, result_json, post, now_ms()],
            )?;
            if changed == 0 {
                return refused(tx, op, OpState::Finished);
            }
            Ok(())
        })
    }

    /// Closes an op a crash left `requested` or `started`, with what
    /// reconciliation found (`outcome`, e.g. "applied", "not_applied",
    /// "unknown", "not_run") and the result the model will be given.
    pub fn op_recovered(
        &self,
        op: i64,
        outcome: &str,
        result_json: &str,
    ) -> Result<(), StoreError> {
        validate::non_empty("op outcome", outcome)?;
        validate::json("op result_json", result_json)?;
        self.write("logging a recovered op", |tx| {
            let changed = tx.execute(
                "UPDATE ops SET state = 'recovered', outcome = ?2, result_json = ?3, finished_ms = ?4 \
                 WHERE id = ?1 AND state IN ('requested', 'started')",
                params![op, outcome, result_json, now_ms()],
            )?;
            if changed == 0 {
                return refused(tx, op, OpState::Recovered);
            }
            Ok(())
        })
    }

    /// The task's ops in the order they were requested.
    pub fn ops(&self, task: &str) -> Result<Vec<OpRecord>, StoreError> {
        self.select_ops("reading the op log", "task_id = ?1", params![task])
    }

    /// The task's ops a crash left `requested` or `started`, in order: what
    /// must be reconciled before the task goes on.
    pub fn unfinished_ops(&self, task: &str) -> Result<Vec<OpRecord>, StoreError> {
        self.select_ops(
            "reading unfinished ops",
            "task_id = ?1 AND state IN ('requested', 'started')",
            params![task],
        )
    }

    /// The last op logged for this tool call, if any: lets a resumed task
    /// see that a call from a replayed model reply already ran.
    pub fn op_for_call(
        &self,
        task: &str,
        turn: u32,
        call_id: &str,
    ) -> Result<Option<OpRecord>, StoreError> {
        let found = self.select_ops(
            "looking up an op by call",
            "task_id = ?1 AND turn = ?2 AND call_id = ?3",
            params![task, turn, call_id],
        )?;
        Ok(found.into_iter().next_back())
    }

    /// One op by id.
    pub fn op(&self, op: i64) -> Result<Option<OpRecord>, StoreError> {
        let found = self.select_ops("reading an op", "id = ?1", params![op])?;
        Ok(found.into_iter().next())
    }

    fn select_ops(
        &self,
        doing: &'static str,
        filter: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<OpRecord>, StoreError> {
        self.read(doing, |conn| {
            let sql = format!("SELECT {COLUMNS} FROM ops WHERE {filter} ORDER BY id");
            let mut statement = conn.prepare(&sql)?;
            let ops = statement
                .query_map(params, from_row)?
                .collect::<Result<_, _>>()?;
            Ok(ops)
        })
    }
}
