//! Sessions that outlive the agent process. Each prompt's task is recorded
//! under its session in the workspace's state database (the tasks are the
//! session), so `session/list` finds the session after a restart and
//! `session/load` replays it: each request, then how its task ended. A task
//! a crash left unfinished is offered as the `/resume` command, which goes
//! on from the task's last checkpoint through the task host's recovery —
//! the LSP path's at-most-once rules: an edit the op log holds as applied
//! is not applied again, a call whose outcome is unknown waits for the
//! user.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandsUpdate, ContentBlock, ContentChunk, SessionInfo,
    SessionUpdate, TextContent,
};
use rein_core::budget::Spent;
use rein_core::task::{TaskId, TaskSpec, TaskState};

use super::verdict::Checks;
use rein_store::{Store, StoreError, TaskRecord};

/// The front end sessions are recorded under.
const FRONT_END: &str = "acp";
/// The command that resumes an interrupted task.
pub const RESUME: &str = "resume";

/// Records that a prompt of `session` (working in `root`) became `task`;
/// the session itself with its first task.
pub fn record(
    store: &Store,
    session: &str,
    root: &Path,
    task: &TaskId,
    words: &str,
) -> Result<(), StoreError> {
    match store.create_session(session, FRONT_END, &root.display().to_string()) {
        Ok(()) | Err(StoreError::SessionExists { .. }) => {}
        Err(e) => return Err(e),
    }
    store.add_session_task(session, &task.0, words)
}

/// The state database of `root`, if Rein has one there: listing never
/// creates one in a folder Rein did not work in.
fn existing_store(root: &Path) -> Option<Store> {
    let path = rein_store::state_db_path(root);
    if !path.is_file() {
        return None;
    }
    Store::open(&path)
        .map_err(|e| tracing::warn!(error = %e, "cannot read the sessions of {}", root.display()))
        .ok()
}

/// Whether every task of `session` was started by this installation: a
/// `.rein/state.db` can come with a repository, and a session of its own
/// would be shown — and `/resume`d — under a prompt it chose. Without an
/// installation id, nothing is known to be ours.
fn ours(store: &Store, session: &str, installation: Option<&str>) -> bool {
    let Some(installation) = installation else {
        return false;
    };
    let Ok(tasks) = store.session_tasks(session) else {
        return false;
    };
    !tasks.is_empty()
        && tasks.iter().all(|t| {
            store
                .task(&t.task_id)
                .ok()
                .flatten()
                .is_some_and(|task| task.installation.as_deref() == Some(installation))
        })
}

/// The recorded sessions of the folders `roots` that this installation
/// started, most recently used first.
pub fn list(roots: &[PathBuf], installation: Option<&str>) -> Vec<SessionInfo> {
    let mut sessions = Vec::new();
    for root in roots {
        let Some(store) = existing_store(root) else {
            continue;
        };
        let Ok(recorded) = store.sessions() else {
            continue;
        };
        sessions.extend(
            recorded
                .into_iter()
                .filter(|s| s.front_end == FRONT_END && ours(&store, &s.id, installation))
                .map(|s| {
                    (
                        s.updated_ms,
                        SessionInfo::new(s.id, root.clone())
                            .title(s.title)
                            .updated_at(rein_core::os::trace::rfc3339(s.updated_ms)),
                    )
                }),
        );
    }
    sessions.sort_by_key(|(updated, _)| std::cmp::Reverse(*updated));
    sessions.into_iter().map(|(_, info)| info).collect()
}

/// A recorded session, read back.
pub struct Loaded {
    /// The conversation as the client shows it: each request, then how
    /// its task ended.
    pub replay: Vec<SessionUpdate>,
    /// One line per finished request, for the prompts that follow.
    pub earlier: Vec<String>,
    /// The task a crash left unfinished, if the last one is.
    pub interrupted: Option<TaskId>,
}

/// Reads session `id` of the folder `root`, if this installation started
/// it.
pub fn load(root: &Path, id: &str, installation: Option<&str>) -> Result<Loaded, String> {
    let missing = || format!("there is no session {id} in {}", root.display());
    let store = existing_store(root).ok_or_else(missing)?;
    let session = store
        .session(id)
        .map_err(|e| e.to_string())?
        .filter(|s| s.front_end == FRONT_END)
        .ok_or_else(missing)?;
    if !ours(&store, id, installation) {
        return Err(format!(
            "the session {id} in {} was not started by this Rein installation (its .rein/state.db may have come with the folder), so it is not loaded",
            root.display()
        ));
    }
    // The database travels with the folder; a session recorded elsewhere
    // (a copied repository) is still this folder's now.
    tracing::debug!(recorded_cwd = %session.cwd, "loading an ACP session");
    let mut loaded = Loaded {
        replay: Vec::new(),
        earlier: Vec::new(),
        interrupted: None,
    };
    let tasks = store.session_tasks(id).map_err(|e| e.to_string())?;
    let last = tasks.len().saturating_sub(1);
    for (index, entry) in tasks.into_iter().enumerate() {
        loaded
            .replay
            .push(SessionUpdate::UserMessageChunk(text_chunk(
                entry.prompt.clone(),
            )));
        let Some(task) = store.task(&entry.task_id).map_err(|e| e.to_string())? else {
            continue;
        };
        let state: Option<TaskState> = serde_json::from_value(task.state.clone().into()).ok();
        let reason = task.reason.clone().unwrap_or_default();
        match state {
            Some(state) if state.is_end() => {
                loaded
                    .replay
                    .push(SessionUpdate::AgentMessageChunk(text_chunk(
                        super::verdict::verdict_message(
                            state,
                            &reason,
                            &[],
                            &spent(&task),
                            &checks(&task),
                        ),
                    )));
                let goal = entry.prompt.lines().next().unwrap_or_default();
                loaded.earlier.push(format!("{goal} → {state}: {reason}"));
            }
            // Only the last request can still be going on: an earlier one
            // unfinished was given up when the next one started.
            _ if index == last => {
                let why = if reason.is_empty() {
                    "Rein stopped before it finished (a crash, or the editor closed it)".to_owned()
                } else {
                    reason
                };
                loaded.replay.push(SessionUpdate::AgentMessageChunk(text_chunk(format!(
                    "\n**Interrupted**: {why}\nSend /{RESUME} to go on from where it stopped: what was already done is not done again.\n"
                ))));
                loaded.interrupted = Some(TaskId(task.id.clone()));
            }
            _ => loaded
                .replay
                .push(SessionUpdate::AgentMessageChunk(text_chunk(format!(
                    "\n**Left unfinished** ({}).\n",
                    task.state
                )))),
        }
    }
    if loaded.interrupted.is_some() {
        loaded.replay.push(resume_command());
    }
    Ok(loaded)
}

/// The `/resume` command, as the client lists it.
fn resume_command() -> SessionUpdate {
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(vec![
        AvailableCommand::new(
            RESUME,
            "Go on with the request Rein was working on when it stopped",
        ),
    ]))
}

/// What a recorded task's "done" rested on: its spec's acceptance checks
/// (a spec that cannot be read claims none).
fn checks(task: &TaskRecord) -> Checks {
    let spec: Option<TaskSpec> = serde_json::from_str(&task.spec_json).ok();
    if spec.is_some_and(|s| !s.acceptance.is_empty()) {
        Checks::Ran
    } else {
        Checks::None { changed: None }
    }
}

fn spent(task: &TaskRecord) -> Spent {
    serde_json::from_str(&task.spent_json).unwrap_or_default()
}

fn text_chunk(text: String) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

/// Whether a prompt is the command `/name` (the client sends a command
/// as the prompt's text).
pub fn is_command(prompt: &[ContentBlock], name: &str) -> bool {
    let text: String = prompt
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect();
    text.trim()
        .strip_prefix('/')
        .is_some_and(|rest| rest.split_whitespace().next() == Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Vec<ContentBlock> {
        vec![ContentBlock::Text(TextContent::new(t.to_owned()))]
    }

    #[test]
    fn only_the_command_itself_resumes() {
        assert!(is_command(&text("/resume"), RESUME));
        assert!(is_command(&text("  /resume please "), RESUME));
        assert!(!is_command(&text("resume"), RESUME));
        assert!(!is_command(&text("/resumed"), RESUME));
        assert!(!is_command(&text("please /resume"), RESUME));
        assert!(!is_command(&[], RESUME));
    }

    #[test]
    fn a_folder_rein_never_worked_in_lists_nothing_and_stays_untouched() {
        let dir = tempfile::tempdir().unwrap();
        assert!(list(&[dir.path().to_path_buf()], Some("i-1")).is_empty());
        assert!(load(dir.path(), "s-1", Some("i-1")).is_err());
        assert!(!dir.path().join(".rein").exists());
    }
}
