//! Undoing a task: every file the task changed put back as it was before
//! the task, keeping what the user typed since. Pure: from what the task
//! recorded of each file (its text before the first edit and after the
//! last, `journal.rs`) and the file now, a plan per file; the task service
//! applies it through the `Workspace` and the op log.
//!
//! The merge is three-way ([`merge::merge3`]): base = the task's result,
//! ours = the file now, theirs = the file before the task; so only the
//! task's own edits are taken back. Where the user changed the very lines
//! the task changed, the file is a [`FileUndo::Conflict`] and is left as it
//! is: undo never overwrites what the user typed.
//!
//! The record lives in `.rein/state.db`, which a repository could ship:
//! its paths are untrusted ([`check_path`]), and the workspace resolves
//! them beneath its root again.

pub mod merge;
#[cfg(test)]
mod tests;

pub use merge::Clash;

/// The most text kept of a file, before or after a task; a bigger file
/// cannot be undone (said so), rather than the state growing unbounded.
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// A file's text at one moment, as the task recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recorded {
    Text(String),
    /// There was no such file.
    Absent,
    /// Over [`MAX_TEXT_BYTES`]: not kept.
    TooLarge,
    /// It held a secret (what the task's redactor hides): not kept, since
    /// no state is written with one.
    Secret,
}

/// What a task recorded of one file it changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedFile {
    pub path: String,
    /// Before the task's first edit of it.
    pub before: Recorded,
    /// After the task's last edit of it.
    pub after: Recorded,
}

/// What undoing one file means, given the file now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileUndo {
    /// Write this text (the file without the task's edits).
    Restore { text: String },
    /// Remove the file: the task created it and nobody changed it since.
    Remove,
    /// Nothing to do: the file is already as it was before the task.
    AsBefore,
    /// The user changed what the task changed; the file is left as it is.
    Conflict { clashes: Vec<Clash> },
    /// Cannot be undone, and why (in the user's words).
    Cannot { reason: String },
}

/// Plans undoing `change`, the file being `now` (`None`: it does not exist).
pub fn plan_file(change: &ChangedFile, now: Option<&str>) -> FileUndo {
    if let Err(reason) = check_path(&change.path) {
        return FileUndo::Cannot { reason };
    }
    let (before, after) = match (&change.before, &change.after) {
        (Recorded::TooLarge, _) | (_, Recorded::TooLarge) => {
            return FileUndo::Cannot {
                reason: format!(
                    "too large: Rein keeps files up to {} MiB to undo them",
                    MAX_TEXT_BYTES >> 20
                ),
            };
        }
        (Recorded::Secret, _) | (_, Recorded::Secret) => {
            return FileUndo::Cannot {
                reason: "it holds a secret (an API key), which Rein keeps nowhere; undo it by hand"
                    .into(),
            };
        }
        (before, Recorded::Text(after)) => (before, after),
        // The task's tools never remove a file; a record saying so is not
        // one Rein wrote.
        (_, Recorded::Absent) => {
            return FileUndo::Cannot {
                reason: "the task's record of this file is incomplete".into(),
            };
        }
    };
    match (before, now) {
        (Recorded::Absent, None) => FileUndo::AsBefore,
        (Recorded::Absent, Some(now)) if now == after => FileUndo::Remove,
        // The user edited a file the task created: removing it would lose
        // that, so it is shown, not removed.
        (Recorded::Absent, Some(now)) => FileUndo::Conflict {
            clashes: vec![Clash {
                ours_line: 1,
                base: after.clone(),
                ours: now.to_owned(),
                theirs: String::new(),
            }],
        },
        (Recorded::Text(_), None) => FileUndo::Cannot {
            reason: "it was deleted since the task; not recreated".into(),
        },
        (Recorded::Text(before), Some(now)) if now == before => FileUndo::AsBefore,
        (Recorded::Text(before), Some(now)) => match merge::merge3(after, now, before) {
            Ok(text) if text == now => FileUndo::AsBefore,
            Ok(text) => FileUndo::Restore { text },
            Err(clashes) => FileUndo::Conflict { clashes },
        },
        // Answered above; the compiler cannot see it.
        (Recorded::TooLarge | Recorded::Secret, _) => FileUndo::Cannot {
            reason: "not kept".into(),
        },
    }
}

/// A path from the record is a plain relative path in the workspace,
/// outside `.git` and `.rein`: anything else is refused, whatever the
/// record says (a repository may ship a `.rein/state.db` of its own).
pub fn check_path(path: &str) -> Result<(), String> {
    let refuse = |why: &str| Err(format!("refused: the recorded path {path:?} {why}"));
    if path.is_empty() {
        return refuse("is empty");
    }
    if path.contains('\0') {
        return refuse("contains a NUL byte");
    }
    if path.starts_with('/') {
        return refuse("is absolute");
    }
    for part in path.split('/') {
        match part {
            "" | "." | ".." => return refuse("is not a plain path inside the workspace"),
            ".git" | ".rein" => return refuse("is inside .git or .rein"),
            _ => {}
        }
    }
    Ok(())
}

/// Whether a text is small enough to keep for undo.
pub fn keepable(text: &str) -> bool {
    text.len() <= MAX_TEXT_BYTES
}
