//! Conversations a front end keeps across requests (an ACP session): where
//! they work, and the task each request became, in order. The tasks
//! themselves are in `tasks.rs`; a session only names them.

use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::store::{Store, now_ms, require_task};
use crate::validate;

/// A session as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    pub id: String,
    /// Which front end keeps it (`acp`).
    pub front_end: String,
    /// The folder it works in, as the front end gave it.
    pub cwd: String,
    /// The first request's first line, once there is one.
    pub title: Option<String>,
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// One request of a session and the task it became.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionTask {
    pub task_id: String,
    /// The request as the user wrote it.
    pub prompt: String,
}

/// A title is one line, and not a page.
const TITLE_CHARS: usize = 80;

fn from_row(row: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    Ok(SessionRecord {
        id: row.get("id")?,
        front_end: row.get("front_end")?,
        cwd: row.get("cwd")?,
        title: row.get("title")?,
        created_ms: row.get("created_ms")?,
        updated_ms: row.get("updated_ms")?,
    })
}

const COLUMNS: &str = "id, front_end, cwd, title, created_ms, updated_ms";

impl Store {
    /// Records a new, empty session. An id already there is
    /// [`StoreError::SessionExists`], and that session is left as it was.
    pub fn create_session(&self, id: &str, front_end: &str, cwd: &str) -> Result<(), StoreError> {
        validate::non_empty("session id", id)?;
        self.write("creating a session", |tx| {
            let sql = "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)";
            let exists: bool = tx.query_row(sql, [id], |row| row.get(0))?;
            if exists {
                return Err(StoreError::SessionExists { id: id.to_owned() }.into());
            }
            let now = now_ms();
            tx.execute(
                "INSERT INTO sessions (id, front_end, cwd, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, ?4)",
                params![id, front_end, cwd, now],
            )?;
            Ok(())
        })
    }

    /// Adds a request to a session, after its others, with the task it
    /// became; the first one titles the session.
    pub fn add_session_task(
        &self,
        session: &str,
        task: &str,
        prompt: &str,
    ) -> Result<(), StoreError> {
        self.write("adding a task to a session", |tx| {
            require_task(tx, task)?;
            let sql = format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1");
            let Some(record) = tx.query_row(&sql, [session], from_row).optional()? else {
                return Err(StoreError::NoSession {
                    id: session.to_owned(),
                }
                .into());
            };
            let seq: i64 = tx.query_row(
                "SELECT COUNT(*) FROM session_tasks WHERE session_id = ?1",
                [session],
                |row| row.get(0),
            )?;
            tx.execute(
                "INSERT INTO session_tasks (session_id, seq, task_id, prompt) VALUES (?1, ?2, ?3, ?4)",
                params![session, seq, task, prompt],
            )?;
            let title = record.title.unwrap_or_else(|| title_of(prompt));
            tx.execute(
                "UPDATE sessions SET title = ?2, updated_ms = ?3 WHERE id = ?1",
                params![session, title, now_ms()],
            )?;
            Ok(())
        })
    }

    pub fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.read("reading a session", |conn| {
            let sql = format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1");
            Ok(conn.query_row(&sql, [id], from_row).optional()?)
        })
    }

    /// Every session, the most recently used first.
    pub fn sessions(&self) -> Result<Vec<SessionRecord>, StoreError> {
        self.read("listing sessions", |conn| {
            let sql = format!("SELECT {COLUMNS} FROM sessions ORDER BY updated_ms DESC, id");
            let mut statement = conn.prepare(&sql)?;
            let sessions = statement
                .query_map([], from_row)?
                .collect::<Result<_, _>>()?;
            Ok(sessions)
        })
    }

    /// A session's requests and their tasks, in the order they came.
    pub fn session_tasks(&self, session: &str) -> Result<Vec<SessionTask>, StoreError> {
        self.read("listing a session's tasks", |conn| {
            let mut statement = conn.prepare(
                "SELECT task_id, prompt FROM session_tasks WHERE session_id = ?1 ORDER BY seq",
            )?;
            let tasks = statement
                .query_map([session], |row| {
                    Ok(SessionTask {
                        task_id: row.get(0)?,
                        prompt: row.get(1)?,
                    })
                })?
                .collect::<Result<_, _>>()?;
            Ok(tasks)
        })
    }
}

/// A session's title: the first non-blank line of its first request,
/// shortened to [`TITLE_CHARS`] characters.
fn title_of(prompt: &str) -> String {
    let line = prompt
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut title: String = line.chars().take(TITLE_CHARS).collect();
    if line.chars().count() > TITLE_CHARS {
        title.push('…');
    }
    title
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_the_first_line_shortened() {
        assert_eq!(
            title_of("\n  Fix the failing test a::b \nmore"),
            "Fix the failing test a::b"
        );
        let long = "x".repeat(200);
        assert_eq!(title_of(&long).chars().count(), TITLE_CHARS + 1);
        assert_eq!(title_of(""), "");
    }
}
