//! One owner per running task. Two server processes (two editor windows on
//! one workspace) share the database; before running a task a process takes
//! its lease, renews it while it runs (a heartbeat well inside the TTL), and
//! releases it when done. A process that dies simply stops renewing: its
//! lease expires and another may take the task over.
//!
//! Expiry compares wall clocks of processes on the same machine, so they
//! agree; a clock jumping forward can end a lease early, which is why the
//! owner checks the answer of every renewal and stops when it is `false`.

use std::time::Duration;

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::store::{Store, ms_after, now_ms, require_task};
use crate::validate;

/// The answer to [`Store::acquire_lease`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lease {
    /// The caller owns the task until `now + ttl`.
    Acquired,
    /// Someone else does, until `until_ms` (unix milliseconds).
    HeldBy { owner: String, until_ms: i64 },
}

impl Store {
    /// Takes the task's lease for `ttl` if nobody holds it, it has expired,
    /// or `owner` already holds it (then it is extended). The decision is one
    /// `UPDATE … WHERE`, so two processes asking at once cannot both win.
    pub fn acquire_lease(&self, id: &str, owner: &str, ttl: Duration) -> Result<Lease, StoreError> {
        validate::non_empty("lease owner", owner)?;
        self.write("acquiring a task lease", |tx| {
            let now = now_ms();
            let taken = tx.execute(
                "UPDATE tasks SET owner = ?2, lease_until_ms = ?3 \
                 WHERE id = ?1 AND (owner IS NULL OR owner = ?2 OR lease_until_ms IS NULL OR lease_until_ms <= ?4)",
                params![id, owner, ms_after(now, ttl), now],
            )?;
            if taken == 1 {
                return Ok(Lease::Acquired);
            }
            // Same transaction: this is the holder that made the UPDATE fail.
            let holder = tx
                .query_row("SELECT owner, lease_until_ms FROM tasks WHERE id = ?1", [id], |row| {
                    Ok((row.get::<_, Option<String>>(0)?, row.get::<_, Option<i64>>(1)?))
                })
                .optional()?;
            match holder {
                Some((Some(owner), Some(until_ms))) => Ok(Lease::HeldBy { owner, until_ms }),
                // Unreachable: a free lease would have been taken above.
                Some(_) => Ok(Lease::Acquired),
                None => Err(StoreError::NoTask { id: id.to_owned() }.into()),
            }
        })
    }

    /// The heartbeat: extends `owner`'s lease to `now + ttl`. `false` means
    /// someone else holds the task now: stop working on it. An expired lease
    /// that nobody took over is still the owner's and is renewed.
    pub fn renew_lease(&self, id: &str, owner: &str, ttl: Duration) -> Result<bool, StoreError> {
        self.write("renewing a task lease", |tx| {
            let renewed = tx.execute(
                "UPDATE tasks SET lease_until_ms = ?3 WHERE id = ?1 AND owner = ?2",
                params![id, owner, ms_after(now_ms(), ttl)],
            )?;
            if renewed == 0 {
                require_task(tx, id)?;
            }
            Ok(renewed == 1)
        })
    }

    /// Gives the lease up if `owner` holds it; otherwise does nothing (the
    /// task has moved on to another owner, whose lease must stay).
    pub fn release_lease(&self, id: &str, owner: &str) -> Result<(), StoreError> {
        self.write("releasing a task lease", |tx| {
            let released = tx.execute(
                "UPDATE tasks SET owner = NULL, lease_until_ms = NULL WHERE id = ?1 AND owner = ?2",
                params![id, owner],
            )?;
            if released == 0 {
                require_task(tx, id)?;
            }
            Ok(())
        })
    }
}
