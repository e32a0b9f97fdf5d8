//! The terminal as `rein run`'s human: the progress of a task as lines on
//! stderr ([`TerminalProgress`]), proposed edits as unified diffs with a
//! yes/no question ([`TerminalConfirm`]), commands and questions put to the
//! user ([`TerminalApprover`]), all over one [`Terminal`]: stderr for what
//! Rein says, stdin for the answers, read line by line (a pipe works as
//! well as a keyboard). stdout is not touched here: it carries the result.
//!
//! Everything written goes through [`inert`]: commands, paths, diffs and
//! the model's words are untrusted, and a terminal must show them, not
//! obey them. Rein's own colours come only from [`paint_diff`], which
//! escapes the diff before it colours it (`rein_app::format::Styled`).

mod approver;
mod io;
mod progress;
#[cfg(test)]
mod test_support;
mod tracked;

pub use rein_core::inert;

pub use approver::{TerminalApprover, TerminalConfirm};
pub use io::Terminal;
pub use progress::TerminalProgress;
pub use rein_app::format::{deletion_diff, fmt_duration_ms, fmt_tokens, paint_diff, unified_diff};
pub use tracked::{Before, TrackedWorkspace};
