//! The tools: the registry (`registry.rs`: what a tool is), the built-in
//! ones (`builtin.rs`, one file per tool), argument schemas and their
//! validation (`schema.rs`), and what a running tool may use (`call.rs`,
//! and [`ToolCx`] here). Tools never decide policy: they name the action
//! they are about to take and the dispatcher (`crate::dispatch`) checks
//! it; tools only act and report.

pub mod call;
pub use crate::effect;
pub mod registry;
pub mod schema;

mod builtin;
mod command;
mod files;
mod no_answer;

pub mod ask_user;
pub mod create_file;
pub mod edit_file;
pub mod git_diff;
pub mod list_files;
pub mod read_file;
pub mod run_command;
pub mod run_tests;
pub mod search;
pub mod write_file;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use tokio_util::sync::CancellationToken;

pub use self::builtin::builtin;
pub use self::command::format_command_result;
pub use self::registry::{
    Described, Effect, OnCrash, ProposedChange, Registry, Tool, ToolKind, ToolUpdates, TypedTool,
};
use crate::budget::{Budgets, TimeBudget};
use crate::context::history::ResultMeta;
use crate::exec::Exec;
use crate::permissions::Policy;
use crate::ports::Approver;
use crate::task::TaskSpec;
use crate::testing::command::TestCommand;
use crate::workspace::{ReadVersion, Workspace};

/// What a tool returns to the model, and what the harness learns from it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
    pub meta: ResultMeta,
    /// The call changed the project (an edit, a new file, a command that
    /// may have written files): earlier results may no longer hold.
    pub changed_project: bool,
    /// The task's time budget ran out during the call (a command killed
    /// for it): the task ends, with this reason.
    pub out_of_time: Option<String>,
    /// The call put something to the user (a question, a review) and got
    /// no answer: the task stops, waiting for it.
    pub unanswered: Option<Waiting>,
    /// The user turned this change down (a rejected edit or new file).
    pub rejected: bool,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>, meta: ResultMeta) -> Self {
        Self {
            content: content.into(),
            is_error: false,
            meta,
            changed_project: false,
            out_of_time: None,
            unanswered: None,
            rejected: false,
        }
    }

    pub fn error(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: true,
            meta: ResultMeta::Plain,
            changed_project: false,
            out_of_time: None,
            unanswered: None,
            rejected: false,
        }
    }

    fn changed(mut self) -> Self {
        self.changed_project = true;
        self
    }

    /// The user turned the change down (see [`ToolOutput::rejected`]).
    pub(crate) fn rejected(mut self) -> Self {
        self.rejected = true;
        self
    }

    /// Why the task waits (see [`ToolOutput::unanswered`]).
    pub(crate) fn unanswered(mut self, waiting: Waiting) -> Self {
        self.unanswered = Some(waiting);
        self
    }
}

/// Why a task stops to wait for the user: what it waits for, typed (an
/// editor offers "Resume" for a review nobody answered by this, not by
/// the words), and the reason in the user's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub cause: rein_protocol::StopCause,
    pub reason: String,
}

/// `text` with every character but ASCII letters, digits, `-` and `_`
/// made `_`: a model's call id (or a server's tool name) as part of a file
/// or tool name.
pub fn file_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Where a task's artifacts (command logs, spilled outputs, archives) go.
#[derive(Clone, Debug)]
pub struct ArtifactDir {
    /// Absolute, for writing.
    pub abs: PathBuf,
    /// Workspace-relative, for the model (`.rein/artifacts/<task>`).
    pub rel: String,
}

impl ArtifactDir {
    pub fn new(root: &std::path::Path, task: &str) -> Self {
        let rel = format!(".rein/artifacts/{task}");
        Self {
            abs: root.join(&rel),
            rel,
        }
    }
}

/// The version of each file as the model last saw it: what its edits
/// are based on.
#[derive(Debug, Default)]
pub struct ReadTracker(Mutex<HashMap<String, ReadVersion>>);

impl ReadTracker {
    pub fn get(&self, path: &str) -> Option<ReadVersion> {
        self.0.lock().ok().and_then(|m| m.get(path).cloned())
    }

    pub fn set(&self, path: &str, version: ReadVersion) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(path.to_owned(), version);
        }
    }

    /// Every file and the version last read, for a checkpoint.
    pub fn all(&self) -> Vec<(String, ReadVersion)> {
        let mut all: Vec<_> = self
            .0
            .lock()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    pub fn forget(&self, path: &str) {
        if let Ok(mut m) = self.0.lock() {
            m.remove(path);
        }
    }
}

/// Everything a tool may use.
pub struct ToolCx<'a> {
    pub task: &'a TaskSpec,
    pub workspace: &'a dyn Workspace,
    pub exec: &'a dyn Exec,
    pub approver: &'a dyn Approver,
    pub policy: &'a Policy,
    pub reads: &'a ReadTracker,
    pub artifacts: &'a ArtifactDir,
    /// Where files under `artifacts` are written (redacted, for text).
    pub artifact_store: &'a dyn crate::ports::Artifacts,
    pub runs: &'a AtomicU32,
    pub budgets: &'a Budgets,
    /// The task's wall-time budget: no command outlives it.
    pub time: TimeBudget,
    pub test_command: Option<&'a TestCommand>,
    pub cancel: &'a CancellationToken,
    /// What the model wrote in the reply that made these calls: the
    /// "why" shown with a proposed edit.
    pub reason: &'a str,
}

impl ToolCx<'_> {
    /// A fresh log file name for a command run: `run-3.log`.
    fn next_log(&self) -> (PathBuf, String) {
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        let name = format!("run-{n}.log");
        (
            self.artifacts.abs.join(&name),
            format!("{}/{name}", self.artifacts.rel),
        )
    }
}
