//! The words every part of Rein and its clients share: where a task
//! stands ([`TaskState`]) and why it stopped ([`StopCause`]). A leaf: the
//! core, the store's readers, traces, `rein eval`, the benchmark and the
//! front ends parse and match these types, never the text of a reason.
//!
//! Never here: behaviour. Only the names and what they mean.

mod cause;
mod state;

pub use cause::StopCause;
pub use state::{TaskState, UnknownState, run_is_over};
