//! One open document and its immutable snapshots.

use std::sync::{Arc, OnceLock};

use ropey::Rope;

use crate::encoding::{Clamp, OffsetEncoding, Range, range_to_chars};
use crate::hash::ContentHash;

/// One entry of an LSP `contentChanges` array, in editor terms: replace
/// `range` by `text`, or the whole document when `range` is `None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContentChange {
    pub range: Option<Range>,
    pub text: String,
}

impl ContentChange {
    pub fn full(text: impl Into<String>) -> Self {
        Self {
            range: None,
            text: text.into(),
        }
    }

    pub fn replace(range: Range, text: impl Into<String>) -> Self {
        Self {
            range: Some(range),
            text: text.into(),
        }
    }
}

/// What applying a batch of changes had to adjust. Nothing here is an error:
/// the edits were applied; this only tells the caller what to log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EditReport {
    /// Changes whose range reached past the end of the document.
    pub past_document_end: usize,
    /// Changes whose range ended before it started.
    pub reversed: usize,
}

impl EditReport {
    pub fn is_clean(&self) -> bool {
        *self == Self::default()
    }
}

/// The live state of an open document.
#[derive(Clone, Debug)]
pub struct Document {
    rope: Rope,
    version: i32,
    language_id: Arc<str>,
    /// Computed on first use and shared with snapshots of this version:
    /// hashing a large file on every keystroke would be wasted work.
    hash: Arc<OnceLock<ContentHash>>,
}

impl Document {
    pub fn new(text: &str, version: i32, language_id: &str) -> Self {
        Self {
            rope: Rope::from_str(text),
            version,
            language_id: language_id.into(),
            hash: Arc::default(),
        }
    }

    pub fn version(&self) -> i32 {
        self.version
    }

    pub fn rope(&self) -> &Rope {
        &self.rope
    }

    /// Applies `changes` one after another, as LSP specifies: each range is
    /// relative to the text left by the previous change.
    pub fn apply_changes(
        &mut self,
        version: i32,
        changes: impl IntoIterator<Item = ContentChange>,
        enc: OffsetEncoding,
    ) -> EditReport {
        let mut report = EditReport::default();
        for change in changes {
            match change.range {
                None => self.rope = Rope::from_str(&change.text),
                Some(range) => {
                    let (chars, clamp) = range_to_chars(&self.rope, range, enc);
                    if clamp == Clamp::DocumentEnd {
                        report.past_document_end += 1;
                    }
                    if range.start > range.end {
                        report.reversed += 1;
                    }
                    self.rope.remove(chars.clone());
                    self.rope.insert(chars.start, &change.text);
                }
            }
        }
        self.version = version;
        self.hash = Arc::default();
        report
    }

    /// A cheap, immutable copy of the current state (ropes share their nodes).
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            rope: self.rope.clone(),
            version: self.version,
            language_id: Arc::clone(&self.language_id),
            hash: Arc::clone(&self.hash),
        }
    }
}

/// The text of a document at one version. Cloning is O(1).
#[derive(Clone, Debug)]
pub struct Snapshot {
    rope: Rope,
    version: i32,
    language_id: Arc<str>,
    hash: Arc<OnceLock<ContentHash>>,
}

impl Snapshot {
    pub fn rope(&self) -> &Rope {
        &self.rope
    }

    pub fn version(&self) -> i32 {
        self.version
    }

    pub fn language_id(&self) -> &str {
        &self.language_id
    }

    pub fn text(&self) -> String {
        self.rope.to_string()
    }

    pub fn content_hash(&self) -> ContentHash {
        *self.hash.get_or_init(|| ContentHash::of_rope(&self.rope))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Position;

    fn range(l1: u32, c1: u32, l2: u32, c2: u32) -> Range {
        Range::new(Position::new(l1, c1), Position::new(l2, c2))
    }

    #[test]
    fn changes_apply_in_order() {
        let mut doc = Document::new("hello world\n", 1, "plaintext");
        let report = doc.apply_changes(
            2,
            [
                ContentChange::replace(range(0, 0, 0, 5), "goodbye"),
                // Relative to "goodbye world\n", not to the original text.
                ContentChange::replace(range(0, 8, 0, 13), "moon"),
                ContentChange::replace(range(1, 0, 1, 0), "😀"),
            ],
            OffsetEncoding::Utf16,
        );
        assert!(report.is_clean());
        assert_eq!(doc.snapshot().text(), "goodbye moon\n😀");
        assert_eq!(doc.version(), 2);
    }

    #[test]
    fn full_replacement_then_incremental() {
        let mut doc = Document::new("old", 1, "rust");
        doc.apply_changes(
            5,
            [
                ContentChange::full("a\r\nb"),
                ContentChange::replace(range(1, 1, 1, 1), "c"),
            ],
            OffsetEncoding::Utf8,
        );
        assert_eq!(doc.snapshot().text(), "a\r\nbc");
    }

    #[test]
    fn out_of_range_edits_are_clamped_and_reported() {
        let mut doc = Document::new("ab\ncd", 1, "plaintext");
        let report = doc.apply_changes(
            2,
            [
                ContentChange::replace(range(9, 0, 12, 3), "!"),
                ContentChange::replace(range(0, 2, 0, 1), "X"),
            ],
            OffsetEncoding::Utf16,
        );
        assert_eq!(
            report,
            EditReport {
                past_document_end: 1,
                reversed: 1
            }
        );
        assert_eq!(doc.snapshot().text(), "aX\ncd!");
    }

    #[test]
    fn snapshots_are_immutable_and_hash_their_own_text() {
        let mut doc = Document::new("one", 1, "plaintext");
        let before = doc.snapshot();
        let before_hash = before.content_hash();
        doc.apply_changes(2, [ContentChange::full("two")], OffsetEncoding::Utf16);
        let after = doc.snapshot();
        assert_eq!((before.text(), before.version()), ("one".to_owned(), 1));
        assert_eq!(before.content_hash(), before_hash);
        assert_eq!(after.content_hash(), ContentHash::of_str("two"));
        assert_eq!(before_hash, ContentHash::of_str("one"));
    }
}
