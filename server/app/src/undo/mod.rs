//! Undoing a task for every front end: each file the task changed put back
//! as it was before the task, keeping what the user typed since
//! (`rein_core::undo` plans it), applied through the front end's
//! `Workspace` (the editor's buffers, the client's files, the disk).
//!
//! Crash-safe through the task's op log: each file's undo is an op of the
//! task (`requested → started → finished`, tool [`UNDO_TOOL`]) with the
//! file's hash before and the hash it should have after. A later undo
//! skips the files already undone ("already undone"), and for an op a
//! crash left open compares the file with both hashes: done, not done, or
//! changed since (said, never guessed). The task's lease is held meanwhile,
//! so two undos, or an undo and a resume, never run together.
//!
//! Never: undoes a task that is not over; writes a file where the user
//! changed what the task changed (a conflict, reported with its regions);
//! removes a file the user edited.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;

use rein_core::context::history::{RecordedResult, ResultMeta};
use rein_core::journal::{Journal, JournalError, file_hash};
use rein_core::task::{TaskId, TaskState};
use rein_core::tools::OnCrash;
use rein_core::undo::{self as plan, ChangedFile, Clash, FileUndo, Recorded};
use rein_core::workspace::{EditOutcome, EditRequest, ReadVersion, Workspace, WorkspaceError};
use rein_models::Redactor;
use rein_store::{KeptText, OpRecord, OpState, Store};
use rein_text::ContentHash;

/// The tool name of an undo's ops in the task's op log.
pub const UNDO_TOOL: &str = "rein_undo";

/// What undoing a task did, file by file, in the order the task first
/// changed them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UndoReport {
    pub task: TaskId,
    pub files: Vec<FileUndone>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileUndone {
    pub path: String,
    pub result: Undone,
}

/// What became of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Undone {
    /// Put back as before the task; what the user typed since is kept.
    Restored,
    /// The task created it and nobody changed it since: removed.
    Removed,
    /// Already as it was before the task: nothing to do.
    AsBefore,
    /// An earlier undo did it.
    AlreadyUndone,
    /// The user changed what the task changed: left as it is.
    Conflict { clashes: Vec<Clash> },
    /// Not undone, and why.
    Cannot { reason: String },
}

impl UndoReport {
    /// Whether some file could not be undone (a conflict, or another
    /// reason): a front end says so, `rein undo` exits non-zero.
    pub fn incomplete(&self) -> bool {
        self.files
            .iter()
            .any(|f| matches!(f.result, Undone::Conflict { .. } | Undone::Cannot { .. }))
    }

    /// Whether an earlier undo did all there was to do.
    pub fn already_undone(&self) -> bool {
        self.files.iter().any(|f| f.result == Undone::AlreadyUndone)
            && self
                .files
                .iter()
                .all(|f| matches!(f.result, Undone::AlreadyUndone | Undone::AsBefore))
    }

    /// One sentence for a message.
    pub fn summary(&self) -> String {
        if self.files.is_empty() {
            return "The task changed no files Rein can undo.".into();
        }
        if self.already_undone() {
            return "Already undone: every file is as it was before the task.".into();
        }
        let count = |f: fn(&Undone) -> bool| self.files.iter().filter(|x| f(&x.result)).count();
        let done = count(|r| matches!(r, Undone::Restored | Undone::Removed));
        let conflicts = count(|r| matches!(r, Undone::Conflict { .. }));
        let cannot = count(|r| matches!(r, Undone::Cannot { .. }));
        let mut out = match done {
            0 => "Nothing was undone".to_owned(),
            n => format!("Undid Rein's changes to {}", files(n)),
        };
        if conflicts > 0 {
            out.push_str(&format!(
                "; {} left as {} (you changed what Rein changed)",
                files(conflicts),
                if conflicts == 1 { "it is" } else { "they are" }
            ));
        }
        if cannot > 0 {
            out.push_str(&format!("; {} could not be undone", files(cannot)));
        }
        out.push('.');
        out
    }
}

fn files(n: usize) -> String {
    if n == 1 {
        "1 file".into()
    } else {
        format!("{n} files")
    }
}

impl FileUndone {
    /// The file's line: `cart.py: restored (your later changes kept)`.
    pub fn line(&self) -> String {
        let what = match &self.result {
            Undone::Restored => "restored as before the task (your later changes kept)".into(),
            Undone::Removed => "removed (Rein created it)".into(),
            Undone::AsBefore => "already as before the task".into(),
            Undone::AlreadyUndone => "already undone".into(),
            Undone::Conflict { clashes } => format!(
                "not undone: you changed what Rein changed (line {}); the file is left as it is",
                clashes
                    .iter()
                    .map(|c| c.ours_line.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Undone::Cannot { reason } => format!("not undone: {reason}"),
        };
        format!("{}: {what}", self.path)
    }
}

/// Who undoes: the lease's owner, and this installation (only its own
/// tasks are undone: a `.rein/state.db` can come with a repository, and
/// its "texts before" would be written into the user's files).
pub(crate) struct Undoer<'a> {
    pub owner: &'a str,
    pub installation: Option<&'a str>,
}

/// Undoes task `id` on `workspace` (see the module's doc). An error is a
/// sentence for the user.
pub(crate) async fn undo_task(
    store: &Arc<Store>,
    undoer: Undoer<'_>,
    id: &TaskId,
    workspace: &dyn Workspace,
) -> Result<UndoReport, String> {
    let Some(record) = store.task(&id.0).map_err(|e| e.to_string())? else {
        return Err(format!("there is no task {id} in this workspace"));
    };
    if undoer.installation.is_none() || record.installation.as_deref() != undoer.installation {
        return Err(format!(
            "the task {id} was not run by this Rein installation (its .rein/state.db may have come with the folder), so Rein does not undo it"
        ));
    }
    let owner = undoer.owner;
    match TaskState::from_str(&record.state) {
        Ok(state) if state.is_end() => {}
        Ok(TaskState::WaitingUser) => {
            return Err(
                "the task is waiting for you; cancel it first, then undo its changes".into(),
            );
        }
        _ => {
            return Err("the task is still running; cancel it first, then undo its changes".into());
        }
    }
    let journal = Journal::attach(Arc::clone(store), id, owner, Redactor::default()).map_err(
        |e| match e {
            JournalError::Leased { .. } => {
                "another Rein is working on this task (undoing it?); try again when it is done"
                    .to_owned()
            }
            other => other.to_string(),
        },
    )?;
    let journal = Leased(journal);
    let changes = store.file_changes(&id.0).map_err(|e| e.to_string())?;
    let ops = store.ops(&id.0).map_err(|e| e.to_string())?;
    // The latest undo op of each file.
    let mut last_undo: HashMap<String, OpRecord> = HashMap::new();
    let mut seq = 0;
    for op in ops.into_iter().filter(|op| op.tool == UNDO_TOOL) {
        seq += 1;
        if let Some(pre) = op.pre.first() {
            last_undo.insert(pre.path.clone(), op);
        }
    }
    let mut files = Vec::with_capacity(changes.len());
    for change in changes {
        let path = change.path.clone();
        seq += 1;
        let call_id = format!("undo-{seq}");
        let result = undo_file(
            &journal.0,
            workspace,
            change,
            last_undo.get(&path),
            &call_id,
        )
        .await;
        files.push(FileUndone { path, result });
    }
    Ok(UndoReport {
        task: id.clone(),
        files,
    })
}

/// The journal, its lease released when dropped.
struct Leased(Journal);

impl Drop for Leased {
    fn drop(&mut self) {
        self.0.release();
    }
}

async fn undo_file(
    journal: &Journal,
    workspace: &dyn Workspace,
    change: rein_store::FileChange,
    last: Option<&OpRecord>,
    call_id: &str,
) -> Undone {
    if let Err(reason) = plan::check_path(&change.path) {
        return Undone::Cannot { reason };
    }
    let path = change.path.as_str();
    let now = match workspace.read_file(path).await {
        Ok(file) => Some(file),
        Err(WorkspaceError::NotFound { .. }) => None,
        Err(e) => {
            return Undone::Cannot {
                reason: e.to_string(),
            };
        }
    };
    let now_hash = now.as_ref().map(|f| f.version.hash);
    match last {
        // Finished with the file's hash after: the change landed (a
        // declined or stale one finishes with none).
        Some(op) if op.state == OpState::Finished && !op.post.is_empty() => {
            return Undone::AlreadyUndone;
        }
        Some(op) if op.state == OpState::Recovered && op.outcome.as_deref() == Some(APPLIED) => {
            return Undone::AlreadyUndone;
        }
        Some(op) if matches!(op.state, OpState::Requested | OpState::Started) => {
            // A crash during an earlier undo of this file.
            let hash = |h: Option<ContentHash>| file_hash(path, h).hash;
            let now = hash(now_hash);
            let store = journal.store();
            let close = |outcome: &str| {
                let result = serde_json::json!({ "recovered": outcome }).to_string();
                if let Err(error) = store.op_recovered(op.id, outcome, &result) {
                    tracing::warn!(%error, "could not close an interrupted undo op");
                }
            };
            if expected_after(op, path).as_deref() == Some(now.as_str()) {
                close(APPLIED);
                return Undone::AlreadyUndone;
            }
            if op.pre.first().map(|p| p.hash.as_str()) == Some(now.as_str()) {
                close("not_applied");
            } else {
                return Undone::Cannot {
                    reason: "an earlier undo of it was interrupted and the file changed since; look at it, then undo again".into(),
                };
            }
        }
        _ => {}
    }
    let planned = plan::plan_file(
        &ChangedFile {
            path: change.path.clone(),
            before: recorded(change.before),
            after: recorded(change.after),
        },
        now.as_ref().map(|f| f.text.as_str()),
    );
    match (planned, now) {
        (FileUndo::Restore { text }, Some(now)) => {
            let expected = file_hash(path, Some(ContentHash::of_str(&text)));
            apply(journal, call_id, path, &now.version, expected, || {
                workspace.edit_file(EditRequest {
                    label: "Rein: undo the task's changes".into(),
                    description: format!("undo Rein's changes to {path}"),
                    reason: String::new(),
                    path: path.to_owned(),
                    base: now.version.clone(),
                    old_text: now.text.clone(),
                    new_text: text,
                    replace_all: false,
                    needs_confirmation: false,
                })
            })
            .await
            .unwrap_or_else(|reason| Applied::Not(Undone::Cannot { reason }))
            .or(Undone::Restored)
        }
        (FileUndo::Remove, Some(now)) => apply(
            journal,
            call_id,
            path,
            &now.version,
            file_hash(path, None),
            || workspace.remove_file(path, &now.version),
        )
        .await
        .unwrap_or_else(|reason| Applied::Not(Undone::Cannot { reason }))
        .or(Undone::Removed),
        (FileUndo::Restore { .. } | FileUndo::Remove, None) => Undone::AsBefore,
        (FileUndo::AsBefore, _) => Undone::AsBefore,
        (FileUndo::Conflict { clashes }, _) => Undone::Conflict { clashes },
        (FileUndo::Cannot { reason }, _) => Undone::Cannot { reason },
    }
}

/// The outcome of an undo op that changed its file.
const APPLIED: &str = "applied";

/// What [`apply`] found: done (the caller names it), or not and why.
enum Applied {
    Done,
    Not(Undone),
}

impl Applied {
    fn or(self, done: Undone) -> Undone {
        match self {
            Applied::Done => done,
            Applied::Not(other) => other,
        }
    }
}

/// Runs one file's change as an op of the task: requested and started
/// (committed) before the workspace is asked, finished after.
async fn apply<F, Fut>(
    journal: &Journal,
    call_id: &str,
    path: &str,
    now: &ReadVersion,
    expected: rein_store::FileHash,
    change: F,
) -> Result<Applied, String>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<EditOutcome, WorkspaceError>>,
{
    let arguments = serde_json::json!({ "path": path });
    let pre = vec![file_hash(path, Some(now.hash))];
    let op = journal
        .op_requested(
            0,
            call_id,
            UNDO_TOOL,
            &arguments,
            pre,
            vec![expected.clone()],
            OnCrash::ByContent,
        )
        .map_err(|e| e.to_string())?;
    journal
        .op_started(op, UNDO_TOOL)
        .map_err(|e| e.to_string())?;
    let (applied, words, post) = match change().await {
        Ok(EditOutcome::Applied { .. }) => (Applied::Done, APPLIED.to_owned(), vec![expected]),
        Ok(EditOutcome::Stale { .. }) => (
            Applied::Not(Undone::Cannot {
                reason: "it changed while being undone; undo again".into(),
            }),
            "stale".to_owned(),
            Vec::new(),
        ),
        Ok(EditOutcome::Rejected { reason }) => (
            Applied::Not(Undone::Cannot {
                reason: format!("the editor declined the change{}", because(&reason)),
            }),
            "rejected".to_owned(),
            Vec::new(),
        ),
        Ok(EditOutcome::NoAnswer { waited }) => (
            Applied::Not(Undone::Cannot {
                reason: format!(
                    "nobody answered the editor's question in {} min; undo again",
                    waited.as_secs().div_ceil(60)
                ),
            }),
            "no_answer".to_owned(),
            Vec::new(),
        ),
        Ok(EditOutcome::AppliedInPart { .. } | EditOutcome::AppliedAsEdited { .. }) => (
            Applied::Not(Undone::Cannot {
                reason: "only part of the undo was kept; look at the file".into(),
            }),
            "in_part".to_owned(),
            Vec::new(),
        ),
        Ok(EditOutcome::Unknown { detail }) => (
            Applied::Not(Undone::Cannot {
                reason: format!(
                    "it is not known whether the change landed ({detail}); look at the file"
                ),
            }),
            "unknown".to_owned(),
            Vec::new(),
        ),
        Err(e) => (
            Applied::Not(Undone::Cannot {
                reason: e.to_string(),
            }),
            "error".to_owned(),
            Vec::new(),
        ),
    };
    // The file is changed; its op does not say so yet.
    rein_core::failpoint::hit("undo_applied");
    let result = RecordedResult::new(
        call_id.to_owned(),
        UNDO_TOOL.to_owned(),
        words,
        !matches!(applied, Applied::Done),
        ResultMeta::Plain,
    );
    journal
        .op_finished(op, UNDO_TOOL, &result, post)
        .map_err(|e| e.to_string())?;
    Ok(applied)
}

fn because(reason: &str) -> String {
    if reason.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", reason.trim())
    }
}

fn recorded(kept: KeptText) -> Recorded {
    match kept {
        KeptText::Text(text) => Recorded::Text(text),
        KeptText::Absent => Recorded::Absent,
        KeptText::TooLarge => Recorded::TooLarge,
        KeptText::Secret => Recorded::Secret,
    }
}

/// The hash an op expected `path` to have after it (`journal.rs` records
/// `{"expected_after": {path: hash}}`).
fn expected_after(op: &OpRecord, path: &str) -> Option<String> {
    let record: serde_json::Value = serde_json::from_str(&op.args_json).ok()?;
    record
        .get("expected_after")?
        .get(path)?
        .as_str()
        .map(str::to_owned)
}

#[cfg(test)]
mod tests;
