//! `rein-text` keeps the text of every document the editor has open, exactly
//! as the editor sees it: a rope per document with its version, language id
//! and a content hash, plus the one place where LSP-style positions
//! (line + UTF-8/UTF-16/UTF-32 column) are turned into rope offsets and back.
//!
//! It must never know the LSP wire types (the `rein` crate converts at the
//! boundary), never do I/O, and never panic on any position, range or edit it
//! is given: out-of-range input is clamped and logged, because a confused
//! client is not a reason to lose the user's buffer.

mod document;
mod encoding;
mod hash;
pub mod patch;
mod store;

pub use document::{ContentChange, Document, EditReport, Snapshot};
pub use encoding::{
    Clamp, OffsetEncoding, Position, Range, char_to_position, line_content_len, position_to_char,
    range_to_chars,
};
pub use hash::ContentHash;
pub use store::{DocumentStore, SaveCheck, StoreError};

/// Re-exported so callers can hold snapshots without depending on ropey directly.
pub use ropey::Rope;
