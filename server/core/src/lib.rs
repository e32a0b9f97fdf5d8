//! `rein-core` is the harness: the agent loop, the tools the model may call,
//! allow/ask/deny permissions, budgets and loop guards, the context manager,
//! the verifier and the task state machine. The model decides; this crate
//! does, and checks.
//!
//! It must never know LSP or any model wire format. The loop reaches the
//! editor, the disk and processes only through the traits it owns
//! ([`Workspace`], [`Exec`], `Approver`, `ProgressSink`), implemented by the
//! LSP adapter and by the headless CLI. The one place in this crate that
//! touches the disk or spawns processes is [`host`], which implements those
//! traits for the CLI and for files the editor does not have open.

pub mod edit;
pub mod exec;
pub mod host;
pub mod paths;
pub mod permissions;
pub mod testfind;
pub mod workspace;

pub use exec::{CommandKind, CommandResult, CommandSpec, Exec, ExecError};
pub use workspace::{
    CreateRequest, EditOutcome, EditRequest, FileRead, Listing, ReadVersion, SearchHit,
    SearchResult, Workspace, WorkspaceError,
};
