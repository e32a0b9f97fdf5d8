//! [`TrackedWorkspace`]: what the task changed, remembered so the end of
//! `rein run` can show every change as a diff.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use rein_core::workspace::{
    CreateRequest, EditOutcome, EditRequest, FileRead, Listing, SearchResult, Workspace,
    WorkspaceError,
};

/// What a file held before the task first changed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Before {
    Text(String),
    /// The task created it.
    Absent,
    /// It could not be read (too large, not text).
    Unknown,
}

/// A [`Workspace`] that remembers what each file held before the task's
/// first change to it, so the end of the task can show every change as a
/// diff. Everything else is the inner workspace's.
pub struct TrackedWorkspace<W> {
    inner: W,
    before: Mutex<BTreeMap<String, Before>>,
}

impl<W: Workspace> TrackedWorkspace<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            before: Mutex::new(BTreeMap::new()),
        }
    }

    /// Every file the task changed (workspace-relative) and what it held
    /// before.
    pub fn changed(&self) -> BTreeMap<String, Before> {
        self.before
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn tracked(&self, path: &str) -> bool {
        self.before
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(path)
    }

    fn remember(&self, path: String, before: Before) {
        self.before
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(path)
            .or_insert(before);
    }
}

fn applied(outcome: &Result<EditOutcome, WorkspaceError>) -> bool {
    // `Unknown` may have changed the file: show whatever it holds now.
    matches!(
        outcome,
        Ok(EditOutcome::Applied { .. } | EditOutcome::Unknown { .. })
    )
}

#[async_trait]
impl<W: Workspace> Workspace for TrackedWorkspace<W> {
    fn root(&self) -> &std::path::Path {
        self.inner.root()
    }

    async fn read_file(&self, path: &str) -> Result<FileRead, WorkspaceError> {
        self.inner.read_file(path).await
    }

    async fn exists(&self, path: &str) -> bool {
        self.inner.exists(path).await
    }

    async fn list_files(
        &self,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<Listing, WorkspaceError> {
        self.inner.list_files(dir, glob, limit).await
    }

    async fn search(
        &self,
        pattern: &str,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<SearchResult, WorkspaceError> {
        self.inner.search(pattern, dir, glob, limit).await
    }

    async fn edit_file(&self, edit: EditRequest) -> Result<EditOutcome, WorkspaceError> {
        let path = edit.path.clone();
        let before = if self.tracked(&path) {
            None
        } else {
            Some(match self.inner.read_file(&path).await {
                Ok(file) => Before::Text(file.text),
                Err(WorkspaceError::NotFound { .. }) => Before::Absent,
                Err(_) => Before::Unknown,
            })
        };
        let outcome = self.inner.edit_file(edit).await;
        if applied(&outcome)
            && let Some(before) = before
        {
            self.remember(path, before);
        }
        outcome
    }

    async fn create_file(&self, create: CreateRequest) -> Result<EditOutcome, WorkspaceError> {
        let path = create.path.clone();
        let outcome = self.inner.create_file(create).await;
        if applied(&outcome) {
            self.remember(path, Before::Absent);
        }
        outcome
    }

    async fn flush_to_disk(&self) -> Result<(), WorkspaceError> {
        self.inner.flush_to_disk().await
    }

    async fn remove_file(
        &self,
        path: &str,
        expected: &rein_core::workspace::ReadVersion,
    ) -> Result<EditOutcome, WorkspaceError> {
        self.inner.remove_file(path, expected).await
    }
}
