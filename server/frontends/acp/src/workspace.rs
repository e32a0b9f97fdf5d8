//! The editor's live buffers over ACP: when the client offers
//! `fs/read_text_file` and `fs/write_text_file`, Rein reads the text the
//! user sees (unsaved changes included) and writes through the client, so
//! the panel's editor shows the change. The rule of every workspace holds:
//! an edit is fitted to the text as it is now; if the user typed while the
//! permission prompt was open, it is fitted again to what they typed, and
//! refused (stale: the model reads again) if it no longer fits — never
//! written over their text. Paths are checked by the disk workspace first
//! (inside the workspace, a text file), listing and search read the disk,
//! and a new file is created on disk.
//!
//! What the client served is kept while no time has passed
//! (`read_cache.rs`); the text an edit is written over is always asked
//! for fresh.
//!
//! The tests run on the disk: before they run, every file written through
//! the client must hold on disk what the client shows; if the client kept
//! a change unsaved, the run is refused with what to do, rather than
//! testing other text than the user sees.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::read_cache::ReadCache;
use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, WriteTextFileRequest};
use async_trait::async_trait;
use rein_core::os::disk::{ConfirmChange, DiskWorkspace};
use rein_core::workspace::{
    CreateRequest, EditOutcome, EditRequest, FileRead, Listing, ReadVersion, SearchResult,
    Workspace, WorkspaceError,
};

/// The client's file system.
#[derive(Clone)]
pub struct ClientFiles {
    pub cx: ConnectionTo<Client>,
    pub session_id: String,
}

impl ClientFiles {
    async fn read(&self, path: &Path, shown: &str) -> Result<String, WorkspaceError> {
        let request = ReadTextFileRequest::new(self.session_id.clone(), path.to_path_buf());
        self.cx
            .send_request(request)
            .block_task()
            .await
            .map(|r| r.content)
            .map_err(|e| WorkspaceError::Io {
                path: shown.to_owned(),
                reason: format!("the editor could not read it: {e}"),
            })
    }

    async fn write(&self, path: &Path, shown: &str, content: &str) -> Result<(), WorkspaceError> {
        let request =
            WriteTextFileRequest::new(self.session_id.clone(), path.to_path_buf(), content);
        self.cx
            .send_request(request)
            .block_task()
            .await
            .map(|_| ())
            .map_err(|e| WorkspaceError::Io {
                path: shown.to_owned(),
                reason: format!("the editor could not write it: {e}"),
            })
    }
}

/// Where a text came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Served earlier, since time last passed.
    Kept,
    /// Asked of the client just now.
    JustAsked,
}

pub struct AcpWorkspace {
    disk: DiskWorkspace,
    client: ClientFiles,
    confirm: Arc<dyn ConfirmChange>,
    /// Files written through the client (workspace-relative).
    written: Mutex<BTreeSet<String>>,
    /// What the client served since time last passed (shared with the
    /// task's progress sink, which says when it does).
    cache: Arc<ReadCache>,
}

impl AcpWorkspace {
    /// `disk` confirms new files with `confirm` too.
    pub fn new(
        disk: DiskWorkspace,
        client: ClientFiles,
        confirm: Arc<dyn ConfirmChange>,
        cache: Arc<ReadCache>,
    ) -> Self {
        Self {
            disk,
            client,
            confirm,
            written: Mutex::new(BTreeSet::new()),
            cache,
        }
    }

    /// Files a resumed task had written through the client before Rein
    /// stopped: like its own writes, they must be saved before tests run.
    pub fn adopt_written(&self, paths: &[String]) {
        if let Ok(mut written) = self.written.lock() {
            written.extend(paths.iter().cloned());
        }
    }

    fn absolute(&self, rel: &str) -> PathBuf {
        self.disk.root().join(rel)
    }

    /// The text the user sees, after the disk workspace checked the path
    /// (as served since time last passed, if it was).
    async fn live(&self, path: &str) -> Result<(String, String), WorkspaceError> {
        let (shown, text, _) = self.live_from(path).await?;
        Ok((shown, text))
    }

    /// [`Self::live`], and whether the text was asked for just now.
    async fn live_from(&self, path: &str) -> Result<(String, String, Origin), WorkspaceError> {
        let on_disk = self.disk.read_file(path).await?;
        if let Some(text) = self.cache.get(&on_disk.path) {
            return Ok((on_disk.path, text, Origin::Kept));
        }
        let text = self.fresh(&on_disk.path).await?;
        Ok((on_disk.path, text, Origin::JustAsked))
    }

    /// The text the user sees now, asked of the client.
    async fn fresh(&self, shown: &str) -> Result<String, WorkspaceError> {
        let text = self.client.read(&self.absolute(shown), shown).await?;
        self.cache.put(shown, &text);
        Ok(text)
    }
}

#[async_trait]
impl Workspace for AcpWorkspace {
    fn root(&self) -> &Path {
        self.disk.root()
    }

    async fn read_file(&self, path: &str) -> Result<FileRead, WorkspaceError> {
        let (path, text) = self.live(path).await?;
        Ok(FileRead {
            version: ReadVersion::of_disk(&text),
            path,
            text,
        })
    }

    async fn exists(&self, path: &str) -> bool {
        self.disk.exists(path).await
    }

    async fn list_files(
        &self,
        dir: &str,
        pattern: Option<&str>,
        limit: usize,
    ) -> Result<Listing, WorkspaceError> {
        self.disk.list_files(dir, pattern, limit).await
    }

    async fn search(
        &self,
        pattern: &str,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<SearchResult, WorkspaceError> {
        self.disk.search(pattern, dir, glob, limit).await
    }

    async fn edit_file(&self, edit: EditRequest) -> Result<EditOutcome, WorkspaceError> {
        let (shown, current, origin) = self.live_from(&edit.path).await?;
        let now = ReadVersion::of_disk(&current);
        let fitted = match edit.fit(&current, &now, &shown) {
            Ok(fitted) => fitted,
            Err(unfit) => return unfit.answer(),
        };
        if edit.needs_confirmation
            && !self
                .confirm
                .confirm(
                    &shown,
                    Some(&current),
                    &fitted.applied.text,
                    &edit.description,
                )
                .await
        {
            return Ok(EditOutcome::Rejected {
                reason: String::new(),
            });
        }
        // The user may have typed (while the question was open, or since
        // the text was served): what is written over is asked for now,
        // unless it was asked for just now and nothing was asked since.
        let latest = if edit.needs_confirmation || origin == Origin::Kept {
            self.fresh(&shown).await?
        } else {
            current.clone()
        };
        let (text, rebased_from) = if latest == current {
            (fitted.applied.text, fitted.rebased_from)
        } else {
            let latest_version = ReadVersion::of_disk(&latest);
            match edit.fit(&latest, &latest_version, &shown) {
                Ok(refitted) => (refitted.applied.text, Some(edit.base.clone())),
                Err(_) => {
                    return Ok(EditOutcome::Stale {
                        current: latest_version,
                    });
                }
            }
        };
        self.client
            .write(&self.absolute(&shown), &shown, &text)
            .await?;
        self.cache.put(&shown, &text);
        if let Ok(mut written) = self.written.lock() {
            written.insert(shown);
        }
        Ok(EditOutcome::Applied {
            version: ReadVersion::of_disk(&text),
            rebased_from,
        })
    }

    async fn create_file(&self, create: CreateRequest) -> Result<EditOutcome, WorkspaceError> {
        self.disk.create_file(create).await
    }

    async fn flush_to_disk(&self) -> Result<(), WorkspaceError> {
        // Commands follow, for as long as they take.
        self.cache.commands_may_run();
        let written: Vec<String> = self
            .written
            .lock()
            .map(|w| w.iter().cloned().collect())
            .unwrap_or_default();
        for path in written {
            let shown_text = self.client.read(&self.absolute(&path), &path).await?;
            let on_disk = self.disk.read_file(&path).await?;
            if on_disk.text != shown_text {
                return Err(WorkspaceError::Io {
                    path,
                    reason: "the editor holds changes to it that are not saved, and the tests run on the saved file: save it in the editor, then ask again".into(),
                });
            }
        }
        Ok(())
    }
}
