//! The core's `Workspace`, backed by the editor: reads come from the live
//! buffer when the file is open (with its version), else from disk; every
//! change is a `workspace/applyEdit` the user approves, made of minimal
//! hunks and tied to the buffer version it was computed from, and only
//! counts as applied once the editor's `didChange` shows the expected text.
//!
//! A user's keystrokes are never overwritten: an edit computed on text the
//! user has since changed is rebased only if its `old_text` still matches
//! exactly once, and refused otherwise; a client that applies a stale edit
//! anyway (Neovim ≤ 0.11 answers `applied: true`) is caught by the
//! confirmation, which then reports the edit's state as unknown.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rein_core::inert;
use rein_core::os::disk::DiskWorkspace;
use rein_core::task::TaskId;
use rein_core::workspace::{
    CreateRequest, EditOutcome, EditRequest, FileRead, Fitted, Listing, ReadVersion, SearchResult,
    Workspace, WorkspaceError,
};
use rein_fsroot::{Links, Root};
use rein_text::{ContentHash, Rope, Snapshot, char_to_position, patch};
use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{ApplyWorkspaceEditResponse, MessageType, Uri};

use crate::client_requests::{self, Unanswered};
use crate::doubt::{self, Doubt, Settled};
use crate::edit_approval::{self, Proposal, Verdict};
use crate::ext::WaitingKind;
use crate::ext::{SAVE_DOCUMENTS, SaveDocumentsParams};
use crate::lsp_progress::LspProgress;
use crate::review::{self, Reviewed};
use crate::saving::{self, SaveAnswer};
use crate::session::Session;

pub struct LspWorkspace {
    root: PathBuf,
    disk: DiskWorkspace,
    /// The handle Rein's own reads and writes of the disk go beneath
    /// (write-behind of buffers, hashes of disk copies).
    fs: Root,
    client: Client,
    session: Arc<Session>,
    task: TaskId,
    /// Files Rein changed in this task: what must be on disk before a
    /// command runs.
    edited: Mutex<BTreeSet<String>>,
    /// The disk content Rein last saw for each file: the disk may only be
    /// overwritten while it still holds that (or what the editor saved).
    disk_seen: Mutex<HashMap<String, ContentHash>>,
    annotations: AtomicU32,
    /// Shows the task as waiting for the user while an edit is reviewed
    /// (none for an undo: it asks nothing).
    waits: Option<Arc<LspProgress>>,
}

/// The change annotation the editor shows with an edit.
struct Note<'a> {
    label: &'a str,
    description: &'a str,
    /// `needsConfirmation`: the editor asks the user before applying.
    confirm: bool,
}

impl Note<'_> {
    fn annotation(&self) -> Value {
        json!({"label": self.label, "description": self.description, "needsConfirmation": self.confirm})
    }
}

/// A change as a review names it.
struct Shown<'a> {
    path: &'a str,
    uri: &'a Uri,
    label: &'a str,
    summary: &'a str,
    reason: &'a str,
}

/// What the user accepted: `text` replaces `current` (the text it was
/// fitted to and shown against).
/// `workspace/applyEdit`'s answer, with Rein's two extensions, sent by an
/// editor whose own preview lets the user change what is applied (Rein's
/// Neovim plugin): `reinKept`, the indices of the text edits it applied
/// when the user kept some of them; `reinText`, the file's whole text as
/// the user left it when they edited the proposal before accepting it
/// (then `reinKept` is not read). Both count only for an edit the editor
/// confirmed. Any other editor never sends them, and the answer reads as
/// plain LSP.
#[derive(Debug, Deserialize)]
struct ApplyAnswer {
    #[serde(flatten)]
    response: ApplyWorkspaceEditResponse,
    #[serde(default, rename = "reinKept")]
    kept: Option<Vec<usize>>,
    #[serde(default, rename = "reinText")]
    text: Option<String>,
}

struct Accepted {
    current: Current,
    text: String,
    rebased_from: Option<ReadVersion>,
    /// The hunks the user dropped, for the model.
    left_out: Option<String>,
    /// What the user changed in the proposal before accepting it.
    edited: Option<String>,
}

/// What the user reads next to a change: the model's reason if it gave
/// one, else what the change is.
fn why<'a>(reason: &'a str, description: &'a str) -> &'a str {
    if reason.trim().is_empty() {
        description
    } else {
        reason
    }
}

/// Where a file's text was before an edit was sent.
#[derive(Clone, Copy)]
enum Before {
    /// In a buffer the editor shares with Rein: what it shows is the truth.
    Synced,
    /// Not shared (the client does not sync the file, or does not have it
    /// open): the disk copy then (`None`: absent).
    Unsynced(Option<ContentHash>),
}

/// The current text of a file, wherever it lives.
struct Current {
    text: String,
    version: ReadVersion,
}

impl LspWorkspace {
    pub fn new(
        root: PathBuf,
        client: Client,
        session: Arc<Session>,
        task: TaskId,
        waits: Arc<LspProgress>,
    ) -> Result<Self, WorkspaceError> {
        Self::build(root, client, session, task, Some(waits))
    }

    /// The workspace an undo of `task` goes through: the live buffers,
    /// edits the editor applies without asking (the user asked for the
    /// undo), no task progress.
    pub fn for_undo(
        root: PathBuf,
        client: Client,
        session: Arc<Session>,
        task: TaskId,
    ) -> Result<Self, WorkspaceError> {
        Self::build(root, client, session, task, None)
    }

    fn build(
        root: PathBuf,
        client: Client,
        session: Arc<Session>,
        task: TaskId,
        waits: Option<Arc<LspProgress>>,
    ) -> Result<Self, WorkspaceError> {
        let fs = Root::open(&root, Links::Within).map_err(|e| WorkspaceError::Io {
            path: root.display().to_string(),
            reason: e.to_string(),
        })?;
        Ok(Self {
            disk: DiskWorkspace::new(&root)?,
            fs,
            root,
            client,
            session,
            task,
            edited: Mutex::new(BTreeSet::new()),
            disk_seen: Mutex::new(HashMap::new()),
            annotations: AtomicU32::new(0),
            waits,
        })
    }

    fn waiting(&self, path: &str) -> Option<crate::lsp_progress::WaitingGuard> {
        self.waits
            .as_ref()
            .map(|w| w.waiting(WaitingKind::Review, path))
    }

    fn abs(&self, path: &str) -> PathBuf {
        self.root.join(path)
    }

    fn uri_of(&self, path: &str) -> Result<Uri, WorkspaceError> {
        Uri::from_file_path(self.abs(path)).ok_or_else(|| WorkspaceError::Io {
            path: path.to_owned(),
            reason: "cannot be written as a file URI".into(),
        })
    }

    async fn current(&self, path: &str) -> Result<Current, WorkspaceError> {
        if let Some((_, snap)) = self.session.open_document(&self.abs(path)) {
            return Ok(Current {
                text: snap.text(),
                version: ReadVersion {
                    buffer_version: Some(snap.version()),
                    hash: snap.content_hash(),
                },
            });
        }
        let file = self.disk.read_file(path).await?;
        self.remember_disk(path, file.version.hash);
        Ok(Current {
            text: file.text,
            version: file.version,
        })
    }

    fn remember_disk(&self, path: &str, hash: ContentHash) {
        if let Ok(mut seen) = self.disk_seen.lock() {
            seen.entry(path.to_owned()).or_insert(hash);
        }
    }

    fn annotation_id(&self) -> String {
        format!(
            "rein-{}-{}",
            self.task,
            self.annotations.fetch_add(1, Ordering::SeqCst) + 1
        )
    }

    /// The `applyEdit` payload for replacing `old` by `new` in one
    /// document: minimal hunks, tied to `version`, annotated for approval.
    fn text_edit(
        &self,
        uri: &Uri,
        version: Option<i32>,
        old: &str,
        new: &str,
        note: &Note<'_>,
    ) -> Value {
        let caps = self.session.caps();
        let rope = Rope::from_str(old);
        let encoding = self.session.encoding();
        let annotation = self.annotation_id();
        let position = |byte: usize| {
            let p = char_to_position(&rope, rope.byte_to_char(byte), encoding);
            json!({"line": p.line, "character": p.character})
        };
        let edits: Vec<Value> = patch::line_hunks(old, new)
            .iter()
            .map(|h| {
                let mut e = json!({"range": {"start": position(h.start), "end": position(h.end)}, "newText": h.new_text});
                if caps.change_annotations {
                    e["annotationId"] = json!(annotation);
                }
                e
            })
            .collect();
        let mut edit = if caps.document_changes {
            json!({"documentChanges": [{"textDocument": {"uri": uri.as_str(), "version": version}, "edits": edits}]})
        } else {
            // Without versioned edits, the confirmation after the edit is
            // what catches one applied to text that changed meanwhile.
            json!({"changes": {uri.as_str(): edits}})
        };
        if caps.change_annotations {
            edit["changeAnnotations"] = json!({annotation: note.annotation()});
        }
        edit
    }

    /// Sends an `applyEdit` and waits (bounded) for the user's answer. An
    /// edit nobody waits for any more (timed out, or the task cancelled) is
    /// withdrawn with `$/cancelRequest`.
    async fn apply(
        &self,
        edit: Value,
        label: &str,
        shown_for: Option<&str>,
    ) -> Result<ApplyAnswer, String> {
        let params = json!({"edit": edit, "label": label});
        // The editor shows it to the user first (its own preview): the
        // task waits for them meanwhile, and says so.
        let _waiting = shown_for.and_then(|path| self.waiting(path));
        let timeout = self.session.approval_timeout();
        match client_requests::withdrawable(&self.client, APPLY_EDIT, params, timeout).await {
            Ok(answer) => {
                // The editor has answered and may have applied the edit;
                // Rein has not recorded it yet.
                rein_core::failpoint::hit("apply_edit");
                serde_json::from_value(answer)
                    .map_err(|e| format!("the editor's answer cannot be read: {e}"))
            }
            Err(Unanswered::Error(e)) => Err(format!("the editor could not apply it: {e}")),
            Err(Unanswered::Gone) => Err("the editor went away before answering".into()),
            Err(Unanswered::Timeout) => Err(format!(
                "the editor did not answer within {} s",
                timeout.as_secs_f64()
            )),
        }
    }

    /// After `applied: true`: waits until the editor shows `expected` for
    /// `path` (in its buffer, or on disk for a client that edits files
    /// directly). Returns the version seen.
    async fn confirm(&self, path: &str, expected: ContentHash) -> Option<ReadVersion> {
        let (session, abs, fs) = (&self.session, &self.abs(path), &self.fs);
        // The disk is polled now and then for clients that write files
        // themselves (no notification says so).
        let poll = Some(Duration::from_millis(200));
        let timeout = session.confirm_timeout();
        session
            .wait_for(timeout, poll, move || async move {
                if let Some((_, snap)) = session.open_document(abs) {
                    (snap.content_hash() == expected).then(|| ReadVersion {
                        buffer_version: Some(snap.version()),
                        hash: expected,
                    })
                } else {
                    let bytes = read_disk(fs, path).await?;
                    (ContentHash::of_bytes(&bytes) == expected).then_some(ReadVersion {
                        buffer_version: None,
                        hash: expected,
                    })
                }
            })
            .await
    }

    /// The editor's open documents inside the workspace, by
    /// workspace-relative path.
    fn open_documents(&self) -> Vec<(String, String, Snapshot)> {
        self.session
            .docs
            .uris()
            .into_iter()
            .filter_map(|uri| {
                let parsed: Uri = uri.parse().ok()?;
                let path = self.session.relative_path(&parsed)?;
                let snap = self.session.docs.snapshot(&uri)?;
                Some((path, uri.to_string(), snap))
            })
            .collect()
    }

    /// After the editor saved `path`: whether the disk holds what its
    /// buffer shows now. Not necessarily the text before the save: a
    /// format-on-save (VS Code runs it on an extension's save too) changes
    /// it, and the tests are then about the formatted text, as the user's
    /// own save would have made it. Its `didChange` may trail the answer a
    /// little, so this waits (bounded) for the buffer to catch up.
    async fn saved_as_shown(&self, path: &str, before_save: ContentHash) -> bool {
        let (session, abs, fs) = (&self.session, &self.abs(path), &self.fs);
        session
            .wait_for(session.confirm_timeout(), None, move || async move {
                let on_disk = ContentHash::of_bytes(&read_disk(fs, path).await?);
                // A buffer closed meanwhile: what it held when asked to save.
                let shown = session
                    .open_document(abs)
                    .map_or(before_save, |(_, snap)| snap.content_hash());
                (on_disk == shown).then_some(())
            })
            .await
            .is_some()
    }

    /// Asks the user about a change before it is sent, for a client that
    /// would apply it without showing it ([`edit_approval`]).
    async fn ask_first(&self, proposal: &Proposal<'_>) -> Verdict {
        let seq = self.annotations.fetch_add(1, Ordering::SeqCst) + 1;
        let _waiting = self.waiting(proposal.path);
        edit_approval::ask(
            &self.client,
            &self.session,
            &self.root,
            &self.task,
            seq,
            proposal,
        )
        .await
    }

    /// One review in the editor ([`review`]): `original` is the text shown
    /// as it is now and its hash (`None`: a new file); the task shows as
    /// waiting for the user meanwhile.
    async fn review(
        &self,
        shown: &Shown<'_>,
        original: Option<(&str, ContentHash)>,
        proposed: &str,
    ) -> Reviewed {
        let proposal = review::Proposal {
            review_id: self.annotation_id(),
            task_id: &self.task.0,
            uri: shown.uri.as_str().to_owned(),
            path: shown.path,
            label: shown.label,
            summary: shown.summary,
            reason: shown.reason,
            original: original.map(|(text, _)| text),
            proposed,
        };
        let _waiting = self.waiting(shown.path);
        let hash = original.map(|(_, hash)| hash);
        review::review(
            &self.client,
            &self.session,
            &self.abs(shown.path),
            hash,
            &proposal,
        )
        .await
    }

    /// Puts an edit to the user in the editor's own review
    /// ([`review`]), fitted to the text as it is now. If the file changes
    /// while the user looks, the review is withdrawn and the edit fitted
    /// and shown again (a few times at most: then the model reads anew).
    async fn review_edit(
        &self,
        request: &EditRequest,
    ) -> Result<Result<Accepted, EditOutcome>, WorkspaceError> {
        const MAX_REVIEWS: usize = 3;
        let path = request.path.as_str();
        let uri = self.uri_of(path)?;
        for _ in 0..MAX_REVIEWS {
            let current = self.current(path).await?;
            let Fitted {
                applied,
                rebased_from,
            } = match request.fit(&current.text, &current.version, path) {
                Ok(fitted) => fitted,
                Err(unfit) => return unfit.answer().map(Err),
            };
            let shown = Shown {
                path,
                uri: &uri,
                label: &request.label,
                summary: &request.description,
                reason: &request.reason,
            };
            let original = Some((current.text.as_str(), current.version.hash));
            match self.review(&shown, original, &applied.text).await {
                Reviewed::Accept {
                    text,
                    left_out,
                    edited,
                } => {
                    return Ok(Ok(Accepted {
                        current,
                        text,
                        rebased_from,
                        left_out,
                        edited,
                    }));
                }
                Reviewed::Reject(reason) => return Ok(Err(EditOutcome::Rejected { reason })),
                Reviewed::NoAnswer(waited) => return Ok(Err(EditOutcome::NoAnswer { waited })),
                Reviewed::Superseded => {
                    tracing::info!(path, "the file changed during the review; shown again");
                }
            }
        }
        let now = self.current(path).await?;
        Ok(Err(EditOutcome::Stale {
            current: now.version,
        }))
    }

    /// A frozen file ([`doubt`]) whose state is now known is thawed; one
    /// still in doubt is an error for the model.
    async fn settle(&self, path: &str) -> Result<(), WorkspaceError> {
        let abs = self.abs(path);
        let Some(doubt) = self.session.doubts.get(&abs) else {
            return Ok(());
        };
        let disk = read_disk(&self.fs, path)
            .await
            .map(|b| ContentHash::of_bytes(&b));
        match doubt.settle(self.is_open(path), disk) {
            Settled::Unknown => Err(WorkspaceError::Denied(doubt::frozen_message(path))),
            Settled::Synced | Settled::DiskChanged => {
                tracing::info!(path, "a file in doubt is known again");
                self.session.doubts.clear(&abs);
                Ok(())
            }
        }
    }

    /// The editor said it applied an edit that never showed. In a shared
    /// buffer that buffer is still the truth; in one the editor does not
    /// share, the change may sit there unsaved, so the file is frozen and
    /// the user is asked to save it.
    async fn in_doubt(&self, path: &str, before: Before, expected: ContentHash) -> EditOutcome {
        let Before::Unsynced(disk_before) = before else {
            return EditOutcome::Unknown {
                detail: "the editor said it applied the edit, but its buffer never showed the expected text".into(),
            };
        };
        if self.is_open(path) {
            // It started sharing the file meanwhile, and shows otherwise.
            return EditOutcome::Unknown {
                detail: "the editor said it applied the edit, but its buffer shows other text"
                    .into(),
            };
        }
        let abs = self.abs(path);
        self.session.doubts.freeze(
            abs.clone(),
            Doubt {
                disk_before,
                expected,
            },
        );
        let answer = saving::ask_about_doubt(&self.client, &self.session, path).await;
        let disk = read_disk(&self.fs, path)
            .await
            .map(|b| ContentHash::of_bytes(&b));
        if disk == Some(expected) {
            self.session.doubts.clear(&abs);
            return EditOutcome::Applied {
                version: ReadVersion {
                    buffer_version: None,
                    hash: expected,
                },
                rebased_from: None,
            };
        }
        match answer {
            // The user answered: the disk copy is the file's text now
            // (saved, or the change is not in the editor).
            Some(said) => {
                self.session.doubts.clear(&abs);
                EditOutcome::Unknown {
                    detail: format!(
                        "the editor does not share {path} with Rein; the user says: {said}; read it again"
                    ),
                }
            }
            None => EditOutcome::Unknown {
                detail: doubt::frozen_message(path),
            },
        }
    }

    fn is_open(&self, path: &str) -> bool {
        self.session.open_document(&self.abs(path)).is_some()
    }

    /// Takes on the files an earlier process edited for this task (a
    /// resumed task): their buffers are flushed before tests run, as if
    /// this process had made those edits.
    pub fn adopt_edited(&self, paths: &[String]) {
        for path in paths {
            self.mark_edited(path);
        }
    }

    fn mark_edited(&self, path: &str) {
        if let Ok(mut e) = self.edited.lock() {
            e.insert(path.to_owned());
        }
    }

    /// Writes a buffer's text to disk, atomically, only if the disk still
    /// holds what Rein (or the editor's last save) knew was there. A file
    /// Rein did not edit (`ours` false) is written only when its disk copy
    /// is the editor's last save: else the disk may hold a change the
    /// editor has not seen (a checkout), which its own save would warn of.
    async fn write_through(
        &self,
        path: &str,
        text: &str,
        open_uri: &str,
        ours: bool,
    ) -> Result<(), WorkspaceError> {
        let on_disk = read_disk(&self.fs, path)
            .await
            .map(|b| ContentHash::of_bytes(&b));
        let seen = self
            .disk_seen
            .lock()
            .ok()
            .and_then(|s| s.get(path).copied());
        let saved = self
            .session
            .saved
            .read()
            .ok()
            .and_then(|s| s.get(open_uri).copied());
        let opened = self
            .session
            .opened
            .read()
            .ok()
            .and_then(|s| s.get(open_uri).copied());
        // The disk may be overwritten while it holds what Rein last saw
        // there, what the editor last saved, or what the editor opened:
        // anything else is a change the editor has not seen (a checkout).
        let known = match on_disk {
            None => true,
            Some(hash) => {
                Some(hash) == seen
                    || Some(hash) == saved
                    || Some(hash) == opened
                    || (ours && seen.is_none())
            }
        };
        if !known && !ours {
            return Err(WorkspaceError::Denied(format!(
                "{path} has unsaved changes in the editor, and its file on disk changed since the editor opened it, so Rein will not write the buffer over it: ask the user to save or reload {path} in the editor, then run the tests again"
            )));
        }
        if !known {
            return Err(WorkspaceError::Denied(format!(
                "{path} changed on disk outside the editor since Rein last saw it, so Rein will not overwrite it with the buffer; save or reload {path} in the editor first"
            )));
        }
        write_atomically(&self.fs, path, text).await?;
        if let Ok(mut s) = self.disk_seen.lock() {
            s.insert(path.to_owned(), ContentHash::of_str(text));
        }
        Ok(())
    }
}

#[async_trait]
impl Workspace for LspWorkspace {
    fn root(&self) -> &Path {
        &self.root
    }

    async fn read_file(&self, path: &str) -> Result<FileRead, WorkspaceError> {
        self.settle(path).await?;
        let current = self.current(path).await?;
        Ok(FileRead {
            path: path.to_owned(),
            text: current.text,
            version: current.version,
        })
    }

    async fn exists(&self, path: &str) -> bool {
        self.session.open_document(&self.abs(path)).is_some() || self.disk.exists(path).await
    }

    async fn list_files(
        &self,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<Listing, WorkspaceError> {
        self.disk.list_files(dir, glob, limit).await
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

    async fn edit_file(&self, request: EditRequest) -> Result<EditOutcome, WorkspaceError> {
        let path = request.path.as_str();
        self.settle(path).await?;
        let caps = self.session.caps();
        let reviewing = request.needs_confirmation && caps.reviews_edits;
        let asked_first = request.needs_confirmation && !reviewing && !caps.shows_confirmations();
        let Accepted {
            current,
            text: proposed,
            rebased_from,
            left_out,
            edited,
        } = if reviewing {
            match self.review_edit(&request).await? {
                Ok(accepted) => accepted,
                Err(outcome) => return Ok(outcome),
            }
        } else {
            let current = self.current(path).await?;
            let Fitted {
                applied,
                rebased_from,
            } = match request.fit(&current.text, &current.version, path) {
                Ok(fitted) => fitted,
                Err(unfit) => return unfit.answer(),
            };
            if asked_first {
                let proposal = Proposal {
                    path,
                    old: Some(&current.text),
                    new: &applied.text,
                    description: why(&request.reason, &request.description),
                };
                match self.ask_first(&proposal).await {
                    Verdict::Apply => {}
                    Verdict::Reject(reason) => return Ok(EditOutcome::Rejected { reason }),
                    Verdict::NoAnswer(waited) => return Ok(EditOutcome::NoAnswer { waited }),
                }
                // The user approved a change to the text as it was: if it
                // moved on meanwhile, the model reads it again and proposes
                // anew.
                let now = self.current(path).await?;
                if now.version.hash != current.version.hash {
                    return Ok(EditOutcome::Stale {
                        current: now.version,
                    });
                }
            }
            Accepted {
                current,
                text: applied.text,
                rebased_from,
                left_out: None,
                edited: None,
            }
        };
        let decided = asked_first || reviewing;
        let expected = ContentHash::of_str(&proposed);
        let uri = self.uri_of(path)?;
        let note = Note {
            label: &request.label,
            description: why(&request.reason, &request.description),
            // Reviewed already: the editor must not ask a second time.
            confirm: request.needs_confirmation && !reviewing,
        };
        let payload = self.text_edit(
            &uri,
            current.version.buffer_version,
            &current.text,
            &proposed,
            &note,
        );
        let before = if self.is_open(path) {
            Before::Synced
        } else {
            Before::Unsynced(Some(current.version.hash))
        };
        let shown_for = (note.confirm && caps.shows_confirmations()).then_some(path);
        let ApplyAnswer {
            response,
            kept,
            text,
        } = match self.apply(payload, &request.label, shown_for).await {
            Ok(answer) => answer,
            Err(detail) => return Ok(EditOutcome::Unknown { detail }),
        };
        if !response.applied {
            // A client refuses a versioned edit when the buffer moved on
            // while the user looked at it: that is staleness, not a no.
            if let Ok(now) = self.current(path).await
                && now.version.hash != current.version.hash
            {
                return Ok(EditOutcome::Stale {
                    current: now.version,
                });
            }
            if decided {
                // The user said Apply and the editor refused (Kate takes a
                // server's edit only right after a code action): the user
                // must hear why nothing happened.
                saving::tell(
                    &self.client,
                    MessageType::WARNING,
                    format!(
                        "Your editor refused Rein's edit to {} after you approved it{}.",
                        inert::line(path),
                        response
                            .failure_reason
                            .as_deref()
                            .map(|r| format!(" ({})", inert::line(r)))
                            .unwrap_or_default()
                    ),
                )
                .await;
                let reason = response
                    .failure_reason
                    .unwrap_or_else(|| "the editor refused it after the user approved it".into());
                return Ok(EditOutcome::Rejected { reason });
            }
            let reason = response.failure_reason.unwrap_or_default();
            return Ok(EditOutcome::Rejected { reason });
        }
        // The user changed what was applied in the editor's own preview
        // (an edit sent without asking is applied whole, so only one the
        // editor confirmed counts): they edited the proposal, and the
        // buffer should hold their text and the model hears what they
        // changed; or they kept only some of its text edits, and the model
        // hears what was left out.
        let user_text = text.filter(|text| note.confirm && *text != proposed);
        let (expected, left_out, edited) = if let Some(text) = user_text {
            match review::user_changes(path, &proposed, &text) {
                Ok(changes) => (ContentHash::of_str(&text), None, Some(changes)),
                Err(detail) => return Ok(EditOutcome::Unknown { detail }),
            }
        } else {
            match kept.filter(|_| note.confirm) {
                None => (expected, left_out, edited),
                Some(kept) => match review::kept_text(&current.text, &proposed, &kept) {
                    review::Kept::All => (expected, left_out, edited),
                    review::Kept::Some { text, left_out } => {
                        (ContentHash::of_str(&text), Some(left_out), edited)
                    }
                    // "Applied, keeping nothing" is a slip of the editor's:
                    // it should have said not applied. Nothing was meant to
                    // land.
                    review::Kept::None => {
                        return Ok(EditOutcome::Rejected {
                            reason: "the user kept none of the changes".into(),
                        });
                    }
                },
            }
        };
        self.mark_edited(path);
        match self.confirm(path, expected).await {
            Some(version) => Ok(match (edited, left_out) {
                (Some(changes), _) => EditOutcome::AppliedAsEdited { version, changes },
                (None, Some(left_out)) => EditOutcome::AppliedInPart { version, left_out },
                (None, None) => EditOutcome::Applied {
                    version,
                    rebased_from,
                },
            }),
            None => Ok(self.in_doubt(path, before, expected).await),
        }
    }

    async fn create_file(&self, request: CreateRequest) -> Result<EditOutcome, WorkspaceError> {
        let path = request.path.as_str();
        self.settle(path).await?;
        if self.is_open(path) {
            return Err(WorkspaceError::AlreadyExists {
                path: path.to_owned(),
            });
        }
        // The editor creates the file, by name: a folder on the way that is
        // a link out of the workspace is refused here first (one swapped in
        // after this is the editor's to follow).
        match self.fs.symlink_metadata(path) {
            Ok(_) => {
                return Err(WorkspaceError::AlreadyExists {
                    path: path.to_owned(),
                });
            }
            Err(e) => {
                if let Some(refused) = rein_fsroot::refusal(&e) {
                    let refused = refused.with_verb(rein_fsroot::Verb::Write);
                    return Err(WorkspaceError::Denied(refused.to_string()));
                }
            }
        }
        let caps = self.session.caps();
        if !(caps.document_changes && caps.create_files) {
            return Err(WorkspaceError::Denied(format!(
                "this editor cannot create files through the language server (no workspaceEdit.resourceOperations create support), so {path} was not created; ask the user to create it"
            )));
        }
        let uri = self.uri_of(path)?;
        let reviewing = request.needs_confirmation && caps.reviews_edits;
        let mut content = request.content.clone();
        let mut user_changes = None;
        if reviewing {
            let shown = Shown {
                path,
                uri: &uri,
                label: &request.label,
                summary: &request.description,
                reason: &request.reason,
            };
            match self.review(&shown, None, &request.content).await {
                // The content as the user left it (their edits, if any).
                Reviewed::Accept { text, edited, .. } => {
                    content = text;
                    user_changes = edited;
                }
                Reviewed::Reject(reason) => return Ok(EditOutcome::Rejected { reason }),
                Reviewed::NoAnswer(waited) => return Ok(EditOutcome::NoAnswer { waited }),
                Reviewed::Superseded => {
                    return Err(WorkspaceError::AlreadyExists {
                        path: path.to_owned(),
                    });
                }
            }
        } else if request.needs_confirmation && !caps.shows_confirmations() {
            let proposal = Proposal {
                path,
                old: None,
                new: &request.content,
                description: why(&request.reason, &request.description),
            };
            match self.ask_first(&proposal).await {
                Verdict::Apply => {}
                Verdict::Reject(reason) => return Ok(EditOutcome::Rejected { reason }),
                Verdict::NoAnswer(waited) => return Ok(EditOutcome::NoAnswer { waited }),
            }
        }
        let annotation = self.annotation_id();
        let with_annotation = |mut v: Value| {
            if caps.change_annotations {
                v["annotationId"] = json!(annotation);
            }
            v
        };
        let mut edit = json!({"documentChanges": [
            with_annotation(json!({"kind": "create", "uri": uri.as_str(), "options": {"overwrite": false, "ignoreIfExists": false}})),
            {"textDocument": {"uri": uri.as_str(), "version": null}, "edits": [
                with_annotation(json!({"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "newText": content}))
            ]}
        ]});
        if caps.change_annotations {
            let note = Note {
                label: &request.label,
                description: why(&request.reason, &request.description),
                confirm: request.needs_confirmation && !reviewing,
            };
            edit["changeAnnotations"] = json!({annotation.clone(): note.annotation()});
        }
        let shown_for = (request.needs_confirmation && !reviewing && caps.shows_confirmations())
            .then_some(path);
        let (response, text) = match self.apply(edit, &request.label, shown_for).await {
            Ok(answer) => (answer.response, answer.text),
            Err(detail) => return Ok(EditOutcome::Unknown { detail }),
        };
        if !response.applied {
            let reason = response.failure_reason.unwrap_or_default();
            return Ok(EditOutcome::Rejected { reason });
        }
        // The content as the user left it in the editor's own preview
        // (`reinText`), for a creation the editor confirmed.
        let confirmed_here = request.needs_confirmation && !reviewing;
        if let Some(text) = text.filter(|text| confirmed_here && *text != content) {
            match review::user_changes(path, &content, &text) {
                Ok(changes) => {
                    content = text;
                    user_changes = Some(changes);
                }
                Err(detail) => return Ok(EditOutcome::Unknown { detail }),
            }
        }
        self.mark_edited(path);
        let expected = ContentHash::of_str(&content);
        match self.confirm(path, expected).await {
            Some(version) => Ok(match user_changes {
                Some(changes) => EditOutcome::AppliedAsEdited { version, changes },
                None => EditOutcome::Applied {
                    version,
                    rebased_from: None,
                },
            }),
            None => Ok(self.in_doubt(path, Before::Unsynced(None), expected).await),
        }
    }

    /// A file the editor has open is not removed behind its buffer (the
    /// buffer would write it back, or hold what the user typed): the
    /// editor removes it (a `DeleteFile` in `applyEdit`, when it can),
    /// while its buffer still holds what the undo expects, and it counts
    /// once the file is gone. One that is not open is removed on disk, if
    /// it still holds that.
    async fn remove_file(
        &self,
        path: &str,
        expected: &ReadVersion,
    ) -> Result<EditOutcome, WorkspaceError> {
        if !self.is_open(path) {
            return self.disk.remove_file(path, expected).await;
        }
        let caps = self.session.caps();
        if !(caps.document_changes && caps.delete_files) {
            return Err(WorkspaceError::Denied(format!(
                "{path} is open in the editor, which cannot delete files for Rein; delete it yourself"
            )));
        }
        let now = self.current(path).await?;
        if now.version.hash != expected.hash {
            return Ok(EditOutcome::Stale {
                current: now.version,
            });
        }
        let uri = self.uri_of(path)?;
        let annotation = self.annotation_id();
        let mut delete =
            json!({"kind": "delete", "uri": uri.as_str(), "options": {"ignoreIfNotExists": true}});
        let mut edit = json!({"documentChanges": []});
        if caps.change_annotations {
            let note = Note {
                label: "Rein: undo the task's changes",
                description: "remove the file the task created",
                confirm: false,
            };
            delete["annotationId"] = json!(annotation);
            edit["changeAnnotations"] = json!({annotation: note.annotation()});
        }
        edit["documentChanges"] = json!([delete]);
        let label = "Rein: undo the task's changes";
        let response = match self.apply(edit, label, None).await {
            Ok(answer) => answer.response,
            Err(detail) => return Ok(EditOutcome::Unknown { detail }),
        };
        if !response.applied {
            let reason = response.failure_reason.unwrap_or_default();
            return Ok(EditOutcome::Rejected { reason });
        }
        // Gone from the disk: the editor deleted it (its buffer may close
        // a little later).
        let (session, fs) = (&self.session, &self.fs);
        let gone = session
            .wait_for(
                session.confirm_timeout(),
                Some(Duration::from_millis(100)),
                move || async move { gone_from_disk(fs, path).await.then_some(()) },
            )
            .await;
        Ok(match gone {
            Some(()) => EditOutcome::Applied {
                version: ReadVersion::of_disk(""),
                rebased_from: None,
            },
            None => EditOutcome::Unknown {
                detail: format!("the editor said it deleted {path}, but it is still there"),
            },
        })
    }

    async fn flush_to_disk(&self) -> Result<(), WorkspaceError> {
        self.settle_all().await?;
        let edited: BTreeSet<String> = self.edited.lock().map(|e| e.clone()).unwrap_or_default();
        // Every buffer of the workspace whose text is not on disk: those
        // Rein edited, and the user's own unsaved changes too. Tests and
        // commands read the disk, while Rein (and the model) read the
        // buffers: a verdict on a saved copy the user has since changed
        // would not be about the text they see. (VS Code saves every
        // editor before a test run for the same reason.)
        let mut pending = Vec::new();
        for (path, uri, snap) in self.open_documents() {
            let on_disk = read_disk(&self.fs, &path)
                .await
                .map(|b| ContentHash::of_bytes(&b));
            if on_disk != Some(snap.content_hash()) {
                pending.push((path, uri, snap));
            }
        }
        if pending.is_empty() {
            return Ok(());
        }
        let theirs: Vec<&str> = pending
            .iter()
            .map(|(path, ..)| path.as_str())
            .filter(|path| !edited.contains(*path))
            .collect();
        if !theirs.is_empty() {
            tracing::info!(task = %self.task, files = ?theirs, "saving the user's unsaved buffers before running commands");
        }
        if self.session.caps().save_documents {
            return self.save_through_editor(&pending).await;
        }
        let names: Vec<String> = pending.iter().map(|(path, ..)| path.clone()).collect();
        match self.ask_to_save(&names).await {
            SaveAnswer::Saved => Ok(()),
            SaveAnswer::Declined(reason) => Err(WorkspaceError::Denied(format!(
                "{} not saved ({reason}), so the tests would not run on the text the user sees; ask the user to save {}, or go on without running commands",
                names.join(", "),
                if names.len() == 1 { "it" } else { "them" }
            ))),
            SaveAnswer::Write => {
                let mut written = Vec::new();
                for path in &names {
                    // The buffer as it is now: the user may have typed
                    // while the question was open.
                    let Some((uri, snap)) = self.session.open_document(&self.abs(path)) else {
                        continue;
                    };
                    if let Err(e) = self
                        .write_through(path, &snap.text(), &uri, edited.contains(path))
                        .await
                    {
                        saving::tell(
                            &self.client,
                            MessageType::WARNING,
                            format!("Rein did not write {}: {e}", inert::line(path)),
                        )
                        .await;
                        return Err(e);
                    }
                    written.push(path.clone());
                }
                if !written.is_empty() {
                    saving::tell_written(&self.client, &written).await;
                }
                Ok(())
            }
        }
    }
}

impl LspWorkspace {
    /// Every frozen file of this workspace must be known before commands
    /// run: tests on a disk copy that may lack Rein's change prove nothing.
    async fn settle_all(&self) -> Result<(), WorkspaceError> {
        for abs in self.session.doubts.paths() {
            let Ok(relative) = abs.strip_prefix(&self.root) else {
                continue;
            };
            let path = relative.to_string_lossy().replace('\\', "/");
            if self.settle(&path).await.is_err() {
                return Err(WorkspaceError::Denied(format!(
                    "{path} may hold an unsaved change of Rein's in the editor (it does not share that file with Rein), so the tests would not run on the text the user sees; ask the user to save {path}, then run them again"
                )));
            }
        }
        Ok(())
    }

    /// `rein/saveDocuments`, then a check that each file holds its buffer.
    async fn save_through_editor(
        &self,
        pending: &[(String, String, Snapshot)],
    ) -> Result<(), WorkspaceError> {
        let uris: Vec<Uri> = pending
            .iter()
            .filter_map(|(_, uri, _)| uri.parse().ok())
            .collect();
        let client = self.client.clone();
        let save = async move {
            client
                .send_request::<SaveDocuments>(SaveDocumentsParams { uris })
                .await
        };
        client_requests::spawn(
            SAVE_DOCUMENTS,
            self.session.options.client_request_timeout,
            save,
        )
        .await
        .ok()
        .flatten();
        for (path, _, snap) in pending {
            if !self.saved_as_shown(path, snap.content_hash()).await {
                return Err(WorkspaceError::Io {
                    path: path.clone(),
                    reason: "the editor was asked to save it but the file on disk still differs from the buffer".into(),
                });
            }
        }
        Ok(())
    }

    /// A client that cannot be asked to save: the user is asked, and the
    /// question ends as soon as the user has saved every file (the editor's
    /// `didSave`), or with the user's answer.
    async fn ask_to_save(&self, paths: &[String]) -> SaveAnswer {
        if self.session.write_buffers_always.load(Ordering::SeqCst) {
            return SaveAnswer::Write;
        }
        let question = saving::ask_to_save(&self.client, &self.session, paths);
        let saved = self
            .session
            .wait_for(self.session.approval_timeout(), None, || async {
                for path in paths {
                    if !self.on_disk_as_shown(path).await {
                        return None;
                    }
                }
                Some(())
            });
        tokio::select! {
            Some(()) = saved => SaveAnswer::Saved,
            answer = question => answer,
        }
    }

    /// The file on disk holds what its buffer shows (or it is no longer
    /// open: nothing left to save).
    async fn on_disk_as_shown(&self, path: &str) -> bool {
        let abs = self.abs(path);
        let Some((_, snap)) = self.session.open_document(&abs) else {
            return true;
        };
        read_disk(&self.fs, path)
            .await
            .is_some_and(|bytes| ContentHash::of_bytes(&bytes) == snap.content_hash())
    }
}

/// `workspace/applyEdit`, sent with the edit as built (raw JSON): the typed
/// `WorkspaceEdit` would read an `AnnotatedTextEdit` as a plain `TextEdit`
/// and drop its `annotationId` (an untagged union), losing the confirmation.
const APPLY_EDIT: &str = "workspace/applyEdit";

/// `rein/saveDocuments` as a typed request.
enum SaveDocuments {}

impl tower_lsp_server::ls_types::request::Request for SaveDocuments {
    type Params = SaveDocumentsParams;
    type Result = Value;
    const METHOD: &'static str = SAVE_DOCUMENTS;
}

/// The file at `path` (workspace-relative) replaced atomically, its
/// permissions kept, beneath the workspace's handle in one step
/// ([`rein_fsroot::Root::replace`]: a unique temporary file made in the
/// parent folder's handle, fsynced, renamed, the folder fsynced), off the
/// async threads. A link out of the workspace is `Denied`.
async fn write_atomically(fs: &Root, path: &str, text: &str) -> Result<(), WorkspaceError> {
    let (fs, rel, text) = (fs.clone(), path.to_owned(), text.to_owned());
    let written = tokio::task::spawn_blocking(move || fs.replace(&rel, text.as_bytes(), None))
        .await
        .map_err(std::io::Error::other)
        .and_then(|written| written);
    written.map_err(|e| match rein_fsroot::refusal(&e) {
        Some(refused) => WorkspaceError::Denied(refused.to_string()),
        None => WorkspaceError::Io {
            path: path.to_owned(),
            reason: e.to_string(),
        },
    })
}

/// The bytes of `path` (workspace-relative) on disk, read beneath the
/// workspace's handle; `None` if there is no such file (or it cannot be
/// read, or a link leads out).
/// Whether `path` is no longer on disk (not found; any other answer is
/// not "gone").
async fn gone_from_disk(fs: &Root, path: &str) -> bool {
    let (fs, rel) = (fs.clone(), path.to_owned());
    tokio::task::spawn_blocking(move || {
        fs.symlink_metadata(&rel)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    })
    .await
    .unwrap_or(false)
}

async fn read_disk(fs: &Root, path: &str) -> Option<Vec<u8>> {
    let (fs, rel) = (fs.clone(), path.to_owned());
    tokio::task::spawn_blocking(move || fs.read(&rel).ok())
        .await
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_apply_answer_reads_as_lsp_with_reins_kept_edits_when_sent() {
        let plain: ApplyAnswer =
            serde_json::from_value(json!({"applied": false, "failureReason": "no"})).unwrap();
        assert!(!plain.response.applied);
        assert_eq!(plain.response.failure_reason.as_deref(), Some("no"));
        assert_eq!(plain.kept, None);
        assert_eq!(plain.text, None);
        let kept: ApplyAnswer =
            serde_json::from_value(json!({"applied": true, "reinKept": [1]})).unwrap();
        assert!(kept.response.applied);
        assert_eq!(kept.kept, Some(vec![1]));
        let edited: ApplyAnswer =
            serde_json::from_value(json!({"applied": true, "reinText": "a\nmine\n"})).unwrap();
        assert_eq!(edited.text.as_deref(), Some("a\nmine\n"));
        assert!(
            serde_json::from_value::<ApplyAnswer>(json!({"applied": true, "reinText": 3})).is_err()
        );
        // A malformed extension is an unreadable answer, never a guess.
        assert!(
            serde_json::from_value::<ApplyAnswer>(json!({"applied": true, "reinKept": [-1]}))
                .is_err()
        );
    }
}
