//! A task's history, one row per item, each written once: what makes a
//! turn's persistence cost the same at the thousandth turn as at the
//! tenth. A checkpoint refers to the items (`HistoryRef`) instead of
//! copying them, and is saved with the new ones in one transaction
//! ([`Store::save_checkpoint_with_history`]), so a crash leaves either the
//! old checkpoint and its items or the new ones.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use crate::checkpoints::NewCheckpoint;
use crate::error::{Fail, StoreError};
use crate::store::{Store, require_task};
use crate::validate;

/// The items a checkpoint stands on: the first `len` of `epoch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryRef {
    pub epoch: u32,
    pub len: usize,
}

/// The items to write with a checkpoint: `items` are those from `from` on
/// (those before it are stored already) of `at.epoch`, which `at.len`
/// closes. `new_epoch`: the history was rewritten, so every item of other
/// epochs goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryWrite {
    pub at: HistoryRef,
    pub from: usize,
    pub items: Vec<String>,
    pub new_epoch: bool,
}

impl Store {
    /// Saves the checkpoint and the history items it stands on, in one
    /// transaction: the new items are written, any stored beyond the
    /// checkpoint's length dropped (so the rows are exactly what it refers
    /// to), and the checkpoint replaces the one before.
    pub fn save_checkpoint_with_history(
        &self,
        checkpoint: &NewCheckpoint,
        history: &HistoryWrite,
    ) -> Result<(), StoreError> {
        validate::json("checkpoint data_json", &checkpoint.data_json)?;
        for item in &history.items {
            validate::json("history item data_json", item)?;
        }
        if history.from.saturating_add(history.items.len()) != history.at.len {
            return Err(StoreError::Invalid {
                field: "history write",
                reason: format!(
                    "items {}..{} do not end at the checkpoint's length {}",
                    history.from,
                    history.from.saturating_add(history.items.len()),
                    history.at.len
                ),
            });
        }
        let task = checkpoint.task_id.as_str();
        let epoch = i64::from(history.at.epoch);
        self.write("saving a checkpoint and its history", |tx| {
            require_task(tx, task)?;
            if history.new_epoch {
                tx.execute(
                    "DELETE FROM history_items WHERE task_id = ?1 AND epoch <> ?2",
                    params![task, epoch],
                )?;
            }
            tx.execute(
                "DELETE FROM history_items WHERE task_id = ?1 AND epoch = ?2 AND seq >= ?3",
                params![task, epoch, seq(history.from)?],
            )?;
            let mut insert = tx.prepare_cached(
                "INSERT INTO history_items (task_id, epoch, seq, data_json) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (i, item) in history.items.iter().enumerate() {
                insert.execute(params![task, epoch, seq(history.from + i)?, item])?;
            }
            drop(insert);
            crate::checkpoints::insert_replacing(tx, checkpoint)
        })
    }

    /// The items `at` refers to, in order. Fewer stored than it names is
    /// an error: the checkpoint cannot be rebuilt.
    pub fn history_items(&self, task: &str, at: HistoryRef) -> Result<Vec<String>, StoreError> {
        let items = self.read("reading the history", |conn| {
            let mut statement = conn.prepare(
                "SELECT data_json FROM history_items WHERE task_id = ?1 AND epoch = ?2 AND seq < ?3 ORDER BY seq",
            )?;
            let items = statement
                .query_map(params![task, i64::from(at.epoch), seq(at.len)?], |row| {
                    row.get::<_, String>(0)
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(items)
        })?;
        if items.len() != at.len {
            return Err(StoreError::Invalid {
                field: "history",
                reason: format!(
                    "the checkpoint stands on {} items of epoch {}, but {} are stored",
                    at.len,
                    at.epoch,
                    items.len()
                ),
            });
        }
        Ok(items)
    }

    /// How many items of `epoch` are stored for the task.
    pub fn history_len(&self, task: &str, epoch: u32) -> Result<usize, StoreError> {
        self.read("counting the history", |conn| {
            let n: i64 = conn.query_row(
                "SELECT count(*) FROM history_items WHERE task_id = ?1 AND epoch = ?2",
                params![task, i64::from(epoch)],
                |row| row.get(0),
            )?;
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }
}

fn seq(n: usize) -> Result<i64, Fail> {
    i64::try_from(n).map_err(|_| {
        StoreError::Invalid {
            field: "history item",
            reason: format!("position {n} is out of range"),
        }
        .into()
    })
}
