//! `rein-core` is the harness: the agent loop, the tools the model may call,
//! allow/ask/deny permissions, budgets and loop guards, the context manager,
//! the verifier and the task state machine. The model decides; this crate
//! does, and checks.
//!
//! It must never know LSP or any model wire format. The loop reaches the
//! editor, the disk and processes only through the traits it owns
//! ([`Workspace`], [`Exec`], [`ports::Approver`], [`ports::ProgressSink`],
//! [`ports::Verifier`], [`ports::Artifacts`]), implemented by the
//! LSP adapter and by the headless CLI. The one place in this crate that
//! touches the disk or spawns processes is [`os`], which implements those
//! traits for the CLI and for files the editor does not have open.

pub mod agent;
pub mod budget;
pub mod cancel;
pub mod config;
pub mod context;
pub mod diagnostics;
mod dispatch;
pub mod edit;
pub mod effect;
pub mod exec;
pub mod failpoint;
#[cfg(any(test, feature = "test-support"))]
pub mod fakes;
pub mod guard;
pub mod harness;
pub mod inert;
pub mod journal;
pub mod os;
pub mod paths;
pub mod permissions;
pub mod ports;
pub mod repetition;
pub mod resume;
pub mod sandbox_config;
pub mod task;
pub mod task_host;
pub mod testfind;
pub mod testing;
pub mod testtarget;
pub mod text_calls;
pub mod tools;
pub mod trust;
pub mod undo;
pub mod verify;
pub mod whole_files;
pub mod workspace;

pub use exec::{CommandKind, CommandResult, CommandSpec, Confinement, Exec, ExecError, Launcher};
pub use workspace::{
    CreateRequest, EditOutcome, EditRequest, FileRead, Listing, ReadVersion, SearchHit,
    SearchResult, Workspace, WorkspaceError,
};
