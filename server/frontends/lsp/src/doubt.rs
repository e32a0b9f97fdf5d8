//! Files whose last edit is in doubt. A client that applied an edit to a
//! buffer it does not share with Rein (a file type it does not sync)
//! answers `applied: true` and sends nothing more: the change may sit
//! unsaved in the editor while the disk still holds the old text. Reading
//! that disk copy as if it were the buffer is how an edit got applied
//! twice, so such a file is frozen — no read, no new edit — until its state
//! is known: the editor starts syncing it, its disk copy changes (the user
//! saved it), or the user says what happened.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rein_text::ContentHash;

/// One file's open question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Doubt {
    /// The file on disk when the edit was sent (`None`: absent).
    pub disk_before: Option<ContentHash>,
    /// What the file holds if the edit landed.
    pub expected: ContentHash,
}

/// What is known of a doubted file now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    /// The editor shares its buffer now: that is the truth.
    Synced,
    /// Its disk copy changed since the edit (the user saved it): the disk
    /// is the truth.
    DiskChanged,
    /// Nothing new: still in doubt.
    Unknown,
}

impl Doubt {
    /// `open`: the editor now syncs the file; `disk`: its disk copy now.
    pub fn settle(&self, open: bool, disk: Option<ContentHash>) -> Settled {
        if open {
            Settled::Synced
        } else if disk != self.disk_before {
            Settled::DiskChanged
        } else {
            Settled::Unknown
        }
    }
}

/// The frozen files of a session, by absolute path: a doubt outlives the
/// task that caused it (the next task must not trust that disk copy
/// either).
#[derive(Debug, Default)]
pub struct Doubts(Mutex<HashMap<PathBuf, Doubt>>);

impl Doubts {
    pub fn freeze(&self, path: PathBuf, doubt: Doubt) {
        if let Ok(mut doubts) = self.0.lock() {
            doubts.insert(path, doubt);
        }
    }

    pub fn get(&self, path: &Path) -> Option<Doubt> {
        self.0.lock().ok()?.get(path).copied()
    }

    pub fn clear(&self, path: &Path) {
        if let Ok(mut doubts) = self.0.lock() {
            doubts.remove(path);
        }
    }

    pub fn paths(&self) -> Vec<PathBuf> {
        self.0
            .lock()
            .map(|d| d.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// What the model is told about a frozen file.
pub fn frozen_message(path: &str) -> String {
    format!(
        "{path} is frozen: the editor said it applied Rein's last edit to it, but it does not share {path}'s buffer with Rein and the file on disk is unchanged, so that change may sit unsaved in the editor. Rein will not read or edit {path} until the user saves it, closes it or says what happened (the user has been asked). Do not propose that edit again; work on other files, or ask the user."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_doubt_settles_only_on_news() {
        let before = ContentHash::of_str("old\n");
        let doubt = Doubt {
            disk_before: Some(before),
            expected: ContentHash::of_str("new\n"),
        };
        assert_eq!(doubt.settle(false, Some(before)), Settled::Unknown);
        assert_eq!(
            doubt.settle(false, Some(ContentHash::of_str("new\n"))),
            Settled::DiskChanged
        );
        assert_eq!(doubt.settle(false, None), Settled::DiskChanged);
        assert_eq!(doubt.settle(true, Some(before)), Settled::Synced);
    }

    #[test]
    fn doubts_are_kept_per_file_until_cleared() {
        let doubts = Doubts::default();
        let doubt = Doubt {
            disk_before: None,
            expected: ContentHash::of_str("x"),
        };
        doubts.freeze(PathBuf::from("/w/a.txt"), doubt);
        assert_eq!(doubts.get(Path::new("/w/a.txt")), Some(doubt));
        assert_eq!(doubts.get(Path::new("/w/b.txt")), None);
        doubts.clear(Path::new("/w/a.txt"));
        assert!(doubts.paths().is_empty());
    }
}
