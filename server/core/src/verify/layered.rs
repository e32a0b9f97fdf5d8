//! The workspace as a candidate fix would leave it: its files over the
//! real ones, for the verifier's reads (the target test's text, what
//! could make a run lie). The commands see the same through the sandbox's
//! layer ([`crate::exec::Layer`]); nothing is ever written here.

use std::collections::BTreeMap;
use std::path::Path;

use async_trait::async_trait;
use globset::Glob;

use crate::workspace::{
    CreateRequest, EditOutcome, EditRequest, FileRead, Listing, ReadVersion, SearchResult,
    Workspace, WorkspaceError,
};

pub(super) struct Layered<'a> {
    inner: &'a dyn Workspace,
    files: BTreeMap<&'a str, &'a str>,
}

impl<'a> Layered<'a> {
    pub(super) fn new(inner: &'a dyn Workspace, files: &'a [(String, String)]) -> Self {
        Self {
            inner,
            files: files
                .iter()
                .map(|(p, t)| (p.as_str(), t.as_str()))
                .collect(),
        }
    }
}

const READ_ONLY: &str = "a candidate's workspace is only read";

#[async_trait]
impl Workspace for Layered<'_> {
    fn root(&self) -> &Path {
        self.inner.root()
    }

    async fn read_file(&self, path: &str) -> Result<FileRead, WorkspaceError> {
        match self.files.get(path) {
            Some(text) => Ok(FileRead {
                path: path.to_owned(),
                text: (*text).to_owned(),
                version: ReadVersion::of_disk(text),
            }),
            None => self.inner.read_file(path).await,
        }
    }

    async fn exists(&self, path: &str) -> bool {
        self.files.contains_key(path) || self.inner.exists(path).await
    }

    async fn list_files(
        &self,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<Listing, WorkspaceError> {
        let mut listing = self.inner.list_files(dir, glob, limit).await?;
        let matcher = match glob {
            Some(g) => Some(
                Glob::new(g)
                    .map_err(|e| WorkspaceError::BadPattern {
                        pattern: g.to_owned(),
                        reason: e.to_string(),
                    })?
                    .compile_matcher(),
            ),
            None => None,
        };
        let prefix = dir.trim_end_matches('/');
        for path in self.files.keys() {
            let under = prefix.is_empty()
                || path
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with('/'));
            let matches = matcher.as_ref().is_none_or(|m| m.is_match(path));
            if under && matches && !listing.paths.iter().any(|p| p == path) {
                listing.paths.push((*path).to_owned());
            }
        }
        listing.paths.sort();
        if listing.paths.len() > limit {
            listing.truncated += listing.paths.len() - limit;
            listing.paths.truncate(limit);
        }
        Ok(listing)
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

    async fn edit_file(&self, _edit: EditRequest) -> Result<EditOutcome, WorkspaceError> {
        Err(WorkspaceError::Denied(READ_ONLY.into()))
    }

    async fn create_file(&self, _create: CreateRequest) -> Result<EditOutcome, WorkspaceError> {
        Err(WorkspaceError::Denied(READ_ONLY.into()))
    }

    /// The real workspace's unsaved buffers go to disk: the layer holds
    /// only the candidate's files, the rest is read from there.
    async fn flush_to_disk(&self) -> Result<(), WorkspaceError> {
        self.inner.flush_to_disk().await
    }
}
