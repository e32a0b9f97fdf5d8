//! Turns: one row per model call (request reference, response, usage, cost,
//! latency). Rows are only ever added: a turn re-run after a crash, or a
//! compaction call in the same turn, is one more row, so the money and
//! tokens spent are all accounted for.

use rusqlite::{Row, params};
use serde::{Deserialize, Serialize};

use crate::columns;
use crate::error::StoreError;
use crate::store::{Store, require_task};
use crate::validate;

/// One model call, as recorded and as read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRecord {
    pub task_id: String,
    pub turn: u32,
    /// Where the request is (an artifact path, a hash): requests are large
    /// and mostly repeat the previous one.
    pub request_ref: String,
    pub response_json: String,
    pub usage_json: String,
    pub cost_usd: Option<f64>,
    pub latency_ms: u64,
    /// Set by the caller (when the call was made); see [`crate::now_ms`].
    pub created_ms: i64,
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<TurnRecord> {
    Ok(TurnRecord {
        task_id: row.get("task_id")?,
        turn: row.get("turn")?,
        request_ref: row.get("request_ref")?,
        response_json: row.get("response_json")?,
        usage_json: row.get("usage_json")?,
        cost_usd: row.get("cost_usd")?,
        latency_ms: columns::unsigned(row, "latency_ms")?,
        created_ms: row.get("created_ms")?,
    })
}

impl Store {
    /// Adds a model call to the task's record.
    pub fn record_turn(&self, turn: &TurnRecord) -> Result<(), StoreError> {
        validate::json("turn response_json", &turn.response_json)?;
        validate::json("turn usage_json", &turn.usage_json)?;
        let latency_ms = i64::try_from(turn.latency_ms).map_err(|_| StoreError::Invalid {
            field: "turn latency_ms",
            reason: format!("{} ms is out of range", turn.latency_ms),
        })?;
        if turn.cost_usd.is_some_and(|cost| !cost.is_finite()) {
            return Err(StoreError::Invalid {
                field: "turn cost_usd",
                reason: format!("{:?} is not a finite number", turn.cost_usd),
            });
        }
        self.write("recording a turn", |tx| {
            require_task(tx, &turn.task_id)?;
            tx.execute(
                "INSERT INTO turns (task_id, turn, request_ref, response_json, usage_json, cost_usd, latency_ms, created_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    turn.task_id,
                    turn.turn,
                    turn.request_ref,
                    turn.response_json,
                    turn.usage_json,
                    turn.cost_usd,
                    latency_ms,
                    turn.created_ms
                ],
            )?;
            Ok(())
        })
    }

    /// The task's model calls in the order they were recorded.
    pub fn turns(&self, task: &str) -> Result<Vec<TurnRecord>, StoreError> {
        self.read("reading turns", |conn| {
            let mut statement = conn.prepare(
                "SELECT task_id, turn, request_ref, response_json, usage_json, cost_usd, latency_ms, created_ms \
                 FROM turns WHERE task_id = ?1 ORDER BY id",
            )?;
            let turns = statement.query_map([task], from_row)?.collect::<Result<_, _>>()?;
            Ok(turns)
        })
    }
}
