//! `rein-store` makes tasks survive crashes: SQLite state in
//! `<workspace>/.rein/state.db` ([`state_db_path`]) holding tasks (with an
//! owner lease), turns (model calls), the op log, checkpoints and the index
//! of artifacts (whose files live under `.rein/artifacts/<task>/`), and
//! the text of each file a task changed, before and after it (for undo).
//!
//! It must never decide policy or talk to the editor or a model; it records
//! and answers. It knows nothing of LSP, models or the agent's types: the
//! agent's records are JSON strings stored as given (checked to parse), next
//! to the columns the queries need. Nothing secret is ever written by the
//! store itself: it writes only what it is handed (no environment, no
//! configuration), so callers hand it text already redacted.
//!
//! # Guarantees
//! - **Every write is committed before the method returns** (one IMMEDIATE
//!   transaction per call). The database runs in WAL mode with
//!   `synchronous=NORMAL`: a commit survives the death of the process at any
//!   point. The trade-off: after an OS crash or power loss the last few
//!   commits may be missing (never a corrupt database); `FULL` would fsync
//!   every commit, which the op log's three steps per tool call would pay
//!   for on every call. So recovery never treats an op's *absence* or its
//!   `requested` state as proof that nothing happened: it compares the
//!   files' hashes with the op's `pre`.
//! - **The op log**: each tool call is `requested` → `started` →
//!   `finished`, in separate committed steps, or `recovered` after a crash
//!   left it requested or started. The `UPDATE … WHERE state = …` enforces
//!   it, so nothing is started or finished twice
//!   ([`StoreError::BadTransition`]).
//! - **One owner per running task**: [`Store::acquire_lease`] is a single
//!   conditional `UPDATE`; a lease expires unless renewed.
//! - **Versioned schema** ([`MIGRATIONS`], `PRAGMA user_version`): an older
//!   database is migrated on open, one transaction per script; a newer one
//!   is refused untouched ([`StoreError::TooNew`]); a file that is not ours
//!   is refused untouched ([`StoreError::NotADatabase`]). Never a panic.
//!
//! # One tool call, crash-safe
//! ```
//! use rein_store::{FileHash, NewOp, NewTask, Store};
//! # fn main() -> Result<(), rein_store::StoreError> {
//! let store = Store::open_in_memory()?; // `Store::open(&state_db_path(root))` for real
//! store.create_task(&NewTask {
//!     id: "t1".into(), kind: "fix_test".into(), goal: "fix it".into(),
//!     spec_json: "{}".into(), state: "running".into(), budgets_json: "{}".into(),
//!     installation: None,
//! })?;
//! let before = FileHash { path: "src/lib.rs".into(), hash: "a".repeat(64) };
//! let op = store.op_requested(&NewOp {
//!     task_id: "t1".into(), turn: 1, call_id: "call_1".into(), tool: "edit_file".into(),
//!     args_json: "{}".into(), pre: vec![before],
//! })?;
//! store.op_started(op)?; // committed: from here on, a crash means "it may have happened"
//! // ... apply the edit ...
//! let after = FileHash { path: "src/lib.rs".into(), hash: "b".repeat(64) };
//! store.op_finished(op, r#"{"ok":true}"#, &[after])?;
//! assert!(store.op_finished(op, "null", &[]).is_err()); // never twice
//! # Ok(())
//! # }
//! ```
//!
//! The JSONL traces (`.rein/traces/<task>.jsonl`) are written by
//! `rein-core`'s host (`host/trace.rs`), not here.

mod artifacts;
mod checkpoints;
mod columns;
mod error;
mod history;
mod lease;
mod migrations;
mod op_values;
mod ops;
mod sessions;
mod store;
mod task_files;
mod tasks;
mod turns;
mod validate;

pub use artifacts::{ArtifactRecord, NewArtifact};
pub use checkpoints::{CheckpointPhase, CheckpointRecord, NewCheckpoint};
pub use columns::UnknownName;
pub use error::StoreError;
pub use history::{HistoryRef, HistoryWrite};
pub use lease::Lease;
pub use migrations::{MIGRATIONS, SCHEMA_VERSION};
pub use ops::{FileHash, NewOp, OpRecord, OpState};
pub use sessions::{SessionRecord, SessionTask};
pub use store::{
    BUSY_TIMEOUT, DB_FILE, STATE_DIR, Store, ensure_state_dir, now_ms, state_db_path, state_dir,
};
pub use task_files::{FileChange, KeptText};
pub use tasks::{NewTask, TaskRecord};
pub use turns::TurnRecord;
