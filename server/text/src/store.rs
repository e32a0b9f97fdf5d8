//! The concurrent map of open documents.
//!
//! Every method is synchronous and holds a shard lock only for the duration
//! of the call, so the LSP adapter can apply a notification before its first
//! `.await` (the ordering invariant in ARCHITECTURE.md) and readers on other
//! threads take cheap snapshots without waiting for each other.

use std::sync::Arc;

use dashmap::DashMap;

use crate::document::{ContentChange, Document, EditReport, Snapshot};
use crate::encoding::OffsetEncoding;
use crate::hash::ContentHash;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StoreError {
    #[error("document {uri} is not open")]
    NotOpen { uri: String },
}

/// The outcome of [`DocumentStore::check_saved`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveCheck {
    /// The editor saved exactly our text.
    Matches,
    /// The editor did not send the saved text.
    Unchecked,
    /// Our copy had drifted and was replaced by the editor's text.
    Resynced {
        ours: ContentHash,
        editor: ContentHash,
    },
}

/// Documents by URI. URIs are compared as the exact strings the editor sent.
#[derive(Debug, Default)]
pub struct DocumentStore {
    docs: DashMap<Arc<str>, Document>,
}

impl DocumentStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens (or re-opens, replacing) a document. Returns whether it was
    /// already open, which a well-behaved client never does.
    pub fn open(&self, uri: &str, language_id: &str, version: i32, text: &str) -> bool {
        self.docs
            .insert(uri.into(), Document::new(text, version, language_id))
            .is_some()
    }

    /// Applies one `didChange`: the changes in order, then the new version.
    /// A version that does not increase is applied anyway (the editor owns
    /// the buffer) but logged, because it means a client bug.
    pub fn change(
        &self,
        uri: &str,
        version: i32,
        changes: impl IntoIterator<Item = ContentChange>,
        enc: OffsetEncoding,
    ) -> Result<EditReport, StoreError> {
        let mut doc = self.docs.get_mut(uri).ok_or_else(|| StoreError::NotOpen {
            uri: uri.to_owned(),
        })?;
        if version <= doc.version() {
            tracing::warn!(
                uri,
                old = doc.version(),
                new = version,
                "document version did not increase"
            );
        }
        let report = doc.apply_changes(version, changes, enc);
        if !report.is_clean() {
            tracing::warn!(uri, ?report, "clamped out-of-range edits");
        }
        Ok(report)
    }

    /// Checks our copy against the text the editor just saved, if it sent
    /// it. On a mismatch the editor wins: our copy is replaced (keeping the
    /// version) and the caller is told, since it means we missed a change.
    pub fn check_saved(&self, uri: &str, saved: Option<&str>) -> Result<SaveCheck, StoreError> {
        let mut doc = self.docs.get_mut(uri).ok_or_else(|| StoreError::NotOpen {
            uri: uri.to_owned(),
        })?;
        let Some(saved) = saved else {
            return Ok(SaveCheck::Unchecked);
        };
        let ours = doc.snapshot().content_hash();
        let editor = ContentHash::of_str(saved);
        if ours == editor {
            return Ok(SaveCheck::Matches);
        }
        let version = doc.version();
        doc.apply_changes(version, [ContentChange::full(saved)], OffsetEncoding::Utf8);
        Ok(SaveCheck::Resynced { ours, editor })
    }

    /// Forgets a document. Returns whether it was open.
    pub fn close(&self, uri: &str) -> bool {
        self.docs.remove(uri).is_some()
    }

    pub fn snapshot(&self, uri: &str) -> Option<Snapshot> {
        self.docs.get(uri).map(|doc| doc.snapshot())
    }

    pub fn is_open(&self, uri: &str) -> bool {
        self.docs.contains_key(uri)
    }

    /// The URIs of all open documents, sorted for stable output.
    pub fn uris(&self) -> Vec<Arc<str>> {
        let mut uris: Vec<_> = self.docs.iter().map(|e| Arc::clone(e.key())).collect();
        uris.sort();
        uris
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{Position, Range};

    #[test]
    fn lifecycle() {
        let store = DocumentStore::new();
        assert!(!store.open("file:///a.py", "python", 1, "x = 1\n"));
        let change =
            ContentChange::replace(Range::new(Position::new(0, 4), Position::new(0, 5)), "2");
        store
            .change("file:///a.py", 2, [change], OffsetEncoding::Utf16)
            .unwrap();
        let snap = store.snapshot("file:///a.py").unwrap();
        assert_eq!(
            (snap.text().as_str(), snap.version(), snap.language_id()),
            ("x = 2\n", 2, "python")
        );
        assert_eq!(store.uris(), vec![Arc::from("file:///a.py")]);
        assert!(store.close("file:///a.py"));
        assert!(store.snapshot("file:///a.py").is_none());
        assert!(store.is_empty());
    }

    #[test]
    fn change_to_unknown_document_is_an_error_not_a_panic() {
        let store = DocumentStore::new();
        let err = store
            .change(
                "file:///nope",
                1,
                [ContentChange::full("x")],
                OffsetEncoding::Utf8,
            )
            .unwrap_err();
        assert_eq!(err.to_string(), "document file:///nope is not open");
    }

    #[test]
    fn save_check_resyncs_a_drifted_copy() {
        let store = DocumentStore::new();
        store.open("u", "python", 4, "same");
        assert_eq!(store.check_saved("u", Some("same")), Ok(SaveCheck::Matches));
        assert_eq!(store.check_saved("u", None), Ok(SaveCheck::Unchecked));
        let check = store.check_saved("u", Some("theirs")).unwrap();
        assert!(matches!(check, SaveCheck::Resynced { .. }));
        let snap = store.snapshot("u").unwrap();
        assert_eq!((snap.text().as_str(), snap.version()), ("theirs", 4));
    }

    #[test]
    fn reopen_replaces() {
        let store = DocumentStore::new();
        store.open("u", "rust", 3, "a");
        assert!(store.open("u", "rust", 1, "b"));
        assert_eq!(store.snapshot("u").unwrap().text(), "b");
        assert_eq!(store.len(), 1);
    }
}
