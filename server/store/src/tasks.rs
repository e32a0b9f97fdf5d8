//! Tasks: what was asked (the agent's whole spec, as JSON), where it stands
//! (state, reason, what it has spent) and who runs it (see `lease.rs`).

use rusqlite::{OptionalExtension, Row, params, params_from_iter};
use serde::{Deserialize, Serialize};

use crate::error::{Fail, StoreError};
use crate::store::{Store, now_ms, task_exists};
use crate::validate;

/// A task as the agent creates it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewTask {
    pub id: String,
    pub kind: String,
    pub goal: String,
    /// The agent's whole task spec (goal, constraints, acceptance criteria).
    pub spec_json: String,
    pub state: String,
    pub budgets_json: String,
    /// The Rein installation that creates it: only that one resumes it on
    /// its own (a state database can come with a repository).
    #[serde(default)]
    pub installation: Option<String>,
}

/// A task as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub id: String,
    pub kind: String,
    pub goal: String,
    pub spec_json: String,
    pub state: String,
    pub reason: Option<String>,
    pub budgets_json: String,
    /// `{}` until the first [`Store::update_task`].
    pub spent_json: String,
    pub created_ms: i64,
    pub updated_ms: i64,
    /// Who holds the lease, and until when; `None` when nobody does. An
    /// expired lease is still shown (it tells who ran the task last).
    pub owner: Option<String>,
    pub lease_until_ms: Option<i64>,
    /// The installation that created the task (or took it over when the
    /// user resumed it); `None` for tasks older than schema version 3.
    pub installation: Option<String>,
}

/// What a task's `spent_json` is before the agent first reports.
const NOTHING_SPENT: &str = "{}";

const COLUMNS: &str = "id, kind, goal, spec_json, state, reason, budgets_json, spent_json, \
                       created_ms, updated_ms, owner, lease_until_ms, installation";

fn from_row(row: &Row<'_>) -> rusqlite::Result<TaskRecord> {
    Ok(TaskRecord {
        id: row.get("id")?,
        kind: row.get("kind")?,
        goal: row.get("goal")?,
        spec_json: row.get("spec_json")?,
        state: row.get("state")?,
        reason: row.get("reason")?,
        budgets_json: row.get("budgets_json")?,
        spent_json: row.get("spent_json")?,
        created_ms: row.get("created_ms")?,
        updated_ms: row.get("updated_ms")?,
        owner: row.get("owner")?,
        lease_until_ms: row.get("lease_until_ms")?,
        installation: row.get("installation")?,
    })
}

impl Store {
    /// Records a new task. A task id that is already there is
    /// [`StoreError::Exists`], and the stored task is left as it was.
    pub fn create_task(&self, task: &NewTask) -> Result<(), StoreError> {
        validate::non_empty("task id", &task.id)?;
        validate::non_empty("task state", &task.state)?;
        validate::json("task spec_json", &task.spec_json)?;
        validate::json("task budgets_json", &task.budgets_json)?;
        self.write("creating a task", |tx| {
            if task_exists(tx, &task.id)? {
                return Err(StoreError::Exists { id: task.id.clone() }.into());
            }
            let now = now_ms();
            tx.execute(
                "INSERT INTO tasks (id, kind, goal, spec_json, state, budgets_json, spent_json, created_ms, updated_ms, installation) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9)",
                params![
                    task.id,
                    task.kind,
                    task.goal,
                    task.spec_json,
                    task.state,
                    task.budgets_json,
                    NOTHING_SPENT,
                    now,
                    task.installation
                ],
            )?;
            Ok(())
        })
    }

    pub fn task(&self, id: &str) -> Result<Option<TaskRecord>, StoreError> {
        self.read("reading a task", |conn| {
            let sql = format!("SELECT {COLUMNS} FROM tasks WHERE id = ?1");
            Ok(conn.query_row(&sql, [id], from_row).optional()?)
        })
    }

    /// Every task, newest first.
    pub fn tasks(&self) -> Result<Vec<TaskRecord>, StoreError> {
        self.read("listing tasks", |conn| {
            let sql = format!("SELECT {COLUMNS} FROM tasks ORDER BY seq DESC");
            let mut statement = conn.prepare(&sql)?;
            let tasks = statement
                .query_map([], from_row)?
                .collect::<Result<_, _>>()?;
            Ok(tasks)
        })
    }

    /// The tasks in any of `states`, newest first: e.g. the ones a crash
    /// left `running`.
    pub fn tasks_in_states(&self, states: &[&str]) -> Result<Vec<TaskRecord>, StoreError> {
        if states.is_empty() {
            return Ok(Vec::new());
        }
        self.read("listing tasks by state", |conn| {
            let marks = vec!["?"; states.len()].join(", ");
            let sql =
                format!("SELECT {COLUMNS} FROM tasks WHERE state IN ({marks}) ORDER BY seq DESC");
            let mut statement = conn.prepare(&sql)?;
            let tasks = statement
                .query_map(params_from_iter(states), from_row)?
                .collect::<Result<_, _>>()?;
            Ok(tasks)
        })
    }

    /// Sets a task's state, reason (`None` clears it) and what it has spent.
    pub fn update_task(
        &self,
        id: &str,
        state: &str,
        reason: Option<&str>,
        spent_json: &str,
    ) -> Result<(), StoreError> {
        validate::non_empty("task state", state)?;
        validate::json("task spent_json", spent_json)?;
        self.write("updating a task", |tx| {
            let changed = tx.execute(
                "UPDATE tasks SET state = ?2, reason = ?3, spent_json = ?4, updated_ms = ?5 WHERE id = ?1",
                params![id, state, reason, spent_json, now_ms()],
            )?;
            if changed == 0 {
                return Err(Fail::from(StoreError::NoTask { id: id.to_owned() }));
            }
            Ok(())
        })
    }

    /// Makes `installation` the task's creator: the user chose to resume a
    /// task another installation left (or one older than the column), so
    /// from now on it is theirs, resumed on its own after a crash.
    pub fn adopt_task(&self, id: &str, installation: &str) -> Result<(), StoreError> {
        validate::non_empty("installation", installation)?;
        self.write("adopting a task", |tx| {
            let changed = tx.execute(
                "UPDATE tasks SET installation = ?2 WHERE id = ?1",
                params![id, installation],
            )?;
            if changed == 0 {
                return Err(Fail::from(StoreError::NoTask { id: id.to_owned() }));
            }
            Ok(())
        })
    }
}
