//! How front ends show what a task did, the same everywhere: unified
//! diffs of changes (`diff`), token counts, durations and costs
//! (`numbers`).

pub mod diff;
pub mod numbers;

pub use diff::{Styled, deletion_diff, paint_diff, unified_diff};
pub use numbers::{cost, fmt_duration_ms, fmt_tokens, known_cost};
