//! The `Workspace` trait: how the harness reads files and proposes edits,
//! without knowing whether an editor (live buffers, approval in the editor)
//! or the disk (the headless CLI) is behind it.
//!
//! Paths crossing this trait are workspace-relative, with `/` separators,
//! already checked by [`crate::paths`] to stay inside the workspace.

use std::path::Path;

use async_trait::async_trait;
use rein_text::ContentHash;
use serde::{Deserialize, Serialize};

/// Which text a read saw: the editor buffer's version when the file is open
/// there, and always the content hash. An edit carries the version it was
/// based on, so a change made since (the user typing) is detected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadVersion {
    /// The LSP document version, when the text came from an open buffer.
    pub buffer_version: Option<i32>,
    pub hash: ContentHash,
}

impl ReadVersion {
    pub fn of_disk(text: &str) -> Self {
        Self {
            buffer_version: None,
            hash: ContentHash::of_str(text),
        }
    }

    /// A short label for messages: `v5` for a buffer, `#1a2b3c4d` for disk.
    pub fn label(&self) -> String {
        match self.buffer_version {
            Some(v) => format!("v{v}"),
            None => format!("#{}", &self.hash.to_hex()[..8]),
        }
    }
}

/// A file's text as read, with the version it was read at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRead {
    pub path: String,
    pub text: String,
    pub version: ReadVersion,
}

/// The result of listing files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// Workspace-relative paths, sorted.
    pub paths: Vec<String>,
    /// How many more matched than were returned.
    pub truncated: usize,
}

/// One line matching a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchHit {
    pub path: String,
    /// 1-based.
    pub line: u64,
    pub text: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchResult {
    pub hits: Vec<SearchHit>,
    pub truncated: usize,
}

/// An `edit_file` the harness has checked and wants applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditRequest {
    /// For the editor's change annotation ("Rein: fix test_total").
    pub label: String,
    /// What the change is, in short ("change cart.py: +1 −1 lines").
    pub description: String,
    /// Why, in the model's words (what it wrote before the call; may be
    /// empty): shown next to the change when the user decides. Untrusted.
    pub reason: String,
    pub path: String,
    /// The version the model read before asking for this edit.
    pub base: ReadVersion,
    pub old_text: String,
    pub new_text: String,
    pub replace_all: bool,
    /// `true` when the policy says `ask`: the user approves in the editor
    /// (or on the terminal).
    pub needs_confirmation: bool,
}

/// An edit fitted to the file as it is now ([`EditRequest::fit`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fitted {
    pub applied: crate::edit::Applied,
    /// The version the model read, when the file had changed since and the
    /// edit was rebased onto the current text.
    pub rebased_from: Option<ReadVersion>,
}

/// Why an edit does not fit the file as it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unfit {
    /// The file changed since the model read it and `old_text` no longer
    /// matches: the model must read it again.
    Stale(ReadVersion),
    /// The file is as the model read it and `old_text` does not match:
    /// the model's mistake, told with the closest text.
    NoMatch(String),
}

impl Unfit {
    /// What the workspace answers for it.
    pub fn answer(self) -> Result<EditOutcome, WorkspaceError> {
        match self {
            Unfit::Stale(current) => Ok(EditOutcome::Stale { current }),
            Unfit::NoMatch(message) => Err(WorkspaceError::NoMatch(message)),
        }
    }
}

impl EditRequest {
    /// Applies the edit to `text`, the file as it is now (at `now`;
    /// `shown` names it in messages). The rule every workspace follows so a
    /// user's changes are never overwritten: if the file changed since the
    /// model read it (`base`), the edit is rebased onto the current text
    /// only when its `old_text` still matches there; otherwise it is stale,
    /// never placed by a guess.
    pub fn fit(&self, text: &str, now: &ReadVersion, shown: &str) -> Result<Fitted, Unfit> {
        let changed = now.hash != self.base.hash;
        match crate::edit::apply(text, &self.old_text, &self.new_text, self.replace_all) {
            Ok(applied) => Ok(Fitted {
                applied,
                rebased_from: changed.then(|| self.base.clone()),
            }),
            Err(_) if changed => Err(Unfit::Stale(now.clone())),
            Err(e) => Err(Unfit::NoMatch(e.message(shown))),
        }
    }
}

/// A new file the harness wants created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateRequest {
    pub label: String,
    pub description: String,
    /// As [`EditRequest::reason`].
    pub reason: String,
    pub path: String,
    pub content: String,
    pub needs_confirmation: bool,
}

/// What became of a proposed change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditOutcome {
    /// Applied and confirmed; the file is now at `version`.
    Applied {
        version: ReadVersion,
        /// Set when the file had changed since the model read it and the
        /// edit was rebased onto the current text (its `old_text` was
        /// still there, exactly once).
        rebased_from: Option<ReadVersion>,
    },
    /// The user kept only some of the change's hunks; the file is now at
    /// `version`. `left_out` says which were dropped, for the model.
    AppliedInPart {
        version: ReadVersion,
        left_out: String,
    },
    /// The user changed the proposal before accepting it: the file is now
    /// at `version`, holding their text. `changes` is what they changed
    /// (a unified diff from the proposal), for the model.
    AppliedAsEdited {
        version: ReadVersion,
        changes: String,
    },
    /// The user said no.
    Rejected { reason: String },
    /// Nobody answered the review within `waited`: not applied, and not a
    /// no either (a coffee break must not rule out the right fix), so the
    /// task waits for the user instead of being told to look elsewhere.
    NoAnswer { waited: std::time::Duration },
    /// The file changed since it was read and the edit no longer fits.
    Stale { current: ReadVersion },
    /// Not confirmed either way (the editor said applied but never showed
    /// the change): the file must be read again before anything else.
    Unknown { detail: String },
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    #[error("{path} not found{}", did_you_mean(.suggestions))]
    NotFound {
        path: String,
        suggestions: Vec<String>,
    },
    #[error("{path} is a directory, not a file")]
    IsADirectory { path: String },
    #[error("{path} already exists")]
    AlreadyExists { path: String },
    #[error("{path} is not text (binary or not UTF-8)")]
    NotText { path: String },
    #[error(
        "{path} is {size} bytes, over the {limit}-byte limit for reading at once; read a line range"
    )]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("{0}")]
    Denied(String),
    /// `edit_file`'s `old_text` does not fit the file the model read (not
    /// found, ambiguous, empty, no change): the message says why and how to
    /// fix the call (`crate::edit::MatchError::message`).
    #[error("{0}")]
    NoMatch(String),
    #[error("invalid pattern {pattern:?}: {reason}")]
    BadPattern { pattern: String, reason: String },
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
}

fn did_you_mean(suggestions: &[String]) -> String {
    match suggestions {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        many => format!("; did you mean one of {}?", many.join(", ")),
    }
}

/// Reads and changes the files of one workspace.
#[async_trait]
pub trait Workspace: Send + Sync {
    /// The workspace root on disk (commands run here).
    fn root(&self) -> &Path;

    /// The current text of a file: the live buffer when the editor has it
    /// open, else the disk.
    async fn read_file(&self, path: &str) -> Result<FileRead, WorkspaceError>;

    /// Whether `path` is a file of the workspace (an open buffer, or a
    /// regular file inside the root), without what a failed read costs
    /// (a "did you mean" walk): for guesses, like the first message's.
    async fn exists(&self, path: &str) -> bool {
        self.read_file(path).await.is_ok()
    }

    /// Files under `dir` (`""` for the root), respecting `.gitignore`,
    /// optionally filtered by a glob over the relative path.
    async fn list_files(
        &self,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<Listing, WorkspaceError>;

    /// Lines matching the regular expression `pattern` under `dir`,
    /// respecting `.gitignore`.
    async fn search(
        &self,
        pattern: &str,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<SearchResult, WorkspaceError>;

    /// Applies (after approval, if asked) an edit based on `edit.base`.
    async fn edit_file(&self, edit: EditRequest) -> Result<EditOutcome, WorkspaceError>;

    /// Creates a file that does not exist yet.
    async fn create_file(&self, create: CreateRequest) -> Result<EditOutcome, WorkspaceError>;

    /// Makes the disk hold exactly the text of the buffers the harness
    /// edited, so commands and tests never run against stale files.
    async fn flush_to_disk(&self) -> Result<(), WorkspaceError>;

    /// Removes `path` if it still holds the text at `expected` (undo
    /// taking back a file a task created): `Applied`, or `Stale` when it
    /// changed. Never asks: the user asked for the undo. No tool calls it.
    /// A workspace that cannot remove files says so.
    async fn remove_file(
        &self,
        path: &str,
        expected: &ReadVersion,
    ) -> Result<EditOutcome, WorkspaceError> {
        let _ = expected;
        Err(WorkspaceError::Denied(format!(
            "{path}: this editor connection cannot remove files; remove it yourself"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_help_the_model() {
        let e = WorkspaceError::NotFound {
            path: "carts.py".into(),
            suggestions: vec!["cart.py".into()],
        };
        assert_eq!(e.to_string(), "carts.py not found; did you mean cart.py?");
        let e = WorkspaceError::NotFound {
            path: "x".into(),
            suggestions: vec!["a".into(), "b".into()],
        };
        assert_eq!(e.to_string(), "x not found; did you mean one of a, b?");
    }
}
