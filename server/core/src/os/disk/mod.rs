//! [`DiskWorkspace`]: the [`Workspace`] of the headless CLI, and of the LSP
//! server for files the editor does not have open. Files are read from and
//! written to the disk directly.
//!
//! - **Paths** are workspace-relative with `/`. The caller has checked them;
//!   as a second line of defence, absolute paths and `..` are refused.
//! - **Every file is opened beneath the workspace in one step**
//!   ([`rein_fsroot::Root`]): read, created, replaced, searched, or its
//!   folders made, the path is resolved from a handle on the workspace
//!   root by the same system call that opens it, so nothing swapped in
//!   meanwhile (a folder replaced by a link to `~/.config`) can send a
//!   write or a read elsewhere. A symbolic link is followed while it stays
//!   inside; one that leaves is refused ([`WorkspaceError::Denied`],
//!   naming the link).
//! - **Walking** (listing, searching, "did you mean") respects `.gitignore`
//!   (also outside a git repository), `.ignore`, `.git/info/exclude` and the
//!   global git excludes, including those of directories between the git
//!   repository root (or, outside git, the workspace root) and the listed
//!   directory. Ignore files above that are not read. Hidden files and
//!   directories are skipped, but a hidden directory named explicitly is
//!   walked; `.git` is never walked. Symlinks are not followed: a symlink to
//!   a file inside the workspace is listed like a file, broken ones and
//!   symlinks to directories are skipped.
//! - **Order**: walks run in parallel; results are sorted component by
//!   component (`a/b.py` before `a.py`), search hits by path, then line.
//!   Only the first `limit` are kept in memory; `truncated` is an exact
//!   count of the others (a search reads every file it walks).
//! - **Writes** are atomic (a temporary file made in the parent folder's
//!   handle, fsync, rename; the file keeps its permissions) and never
//!   clobber a change made by someone else: right before the rename the
//!   file is read and hashed again, and if it no longer holds the text the
//!   edit was computed from, nothing is written and the outcome is `Stale`.
//!   (The window left between that check and the rename is a few system
//!   calls wide; closing it would take locks that editors do not honour.)
//!   Listing walks by path (it only names files); every file it reports or
//!   searches is then opened as above.
//!
//! Everything that blocks runs in [`tokio::task::spawn_blocking`].

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{DirEntry, Match, WalkBuilder, WalkState};
/// How the workspace resolves paths (see [`DiskWorkspace::with_resolver`]).
pub use rein_fsroot::Resolver;
use rein_fsroot::{Committed, Links, Root, refusal};
use rein_text::ContentHash;

use crate::edit::MatchError;
use crate::workspace::{
    CreateRequest, EditOutcome, EditRequest, FileRead, Fitted, Listing, ReadVersion, SearchHit,
    SearchResult, Workspace, WorkspaceError,
};

mod files;
mod search;
mod walk;

use files::*;
use search::*;
use walk::*;

/// How large a file [`Workspace::read_file`] returns by default: 8 MiB.
pub const DEFAULT_READ_LIMIT: u64 = 8 * 1024 * 1024;

/// A search hit's line is cut after this many characters (and `…` added).
pub const MAX_HIT_CHARS: usize = 500;

/// Files larger than this are not edited, whatever the read limit.
const EDIT_LIMIT: u64 = 64 * 1024 * 1024;

/// A NUL byte in this many first bytes makes a file binary.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// "Did you mean" looks at no more files than this.
const SUGGESTION_WALK_LIMIT: usize = 50_000;

/// How many "did you mean" suggestions at most.
const MAX_SUGGESTIONS: usize = 3;

/// Asks the user whether a change may be made.
#[async_trait]
pub trait ConfirmChange: Send + Sync {
    /// Shows the change (the CLI prints a unified diff) and asks. `old` is
    /// `None` for a new file.
    async fn confirm(&self, path: &str, old: Option<&str>, new: &str, description: &str) -> bool;
}

/// A workspace on disk.
pub struct DiskWorkspace {
    root: PathBuf,
    /// The handle every file is opened beneath.
    fs: Root,
    /// Where ignore files start to count: the git repository root when the
    /// workspace is inside one, else the workspace root.
    ignore_base: PathBuf,
    confirm: Option<Arc<dyn ConfirmChange>>,
    read_limit: u64,
}

impl std::fmt::Debug for DiskWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskWorkspace")
            .field("root", &self.root)
            .field("resolver", &self.fs.resolver())
            .field("ignore_base", &self.ignore_base)
            .field("confirm", &self.confirm.is_some())
            .field("read_limit", &self.read_limit)
            .finish()
    }
}

impl DiskWorkspace {
    /// A workspace rooted at `root`, which must be an existing directory;
    /// its canonical path is kept.
    pub fn new(root: impl Into<PathBuf>) -> Result<Self, WorkspaceError> {
        let given = root.into();
        let shown = given.display().to_string();
        let root = given.canonicalize().map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                WorkspaceError::NotFound {
                    path: shown.clone(),
                    suggestions: Vec::new(),
                }
            } else {
                io_error(&shown, &e)
            }
        })?;
        if !root.is_dir() {
            return Err(WorkspaceError::Io {
                path: shown,
                reason: "the workspace root must be a directory".into(),
            });
        }
        let fs = Root::open(&root, Links::Within).map_err(|e| io_error(&shown, &e))?;
        let ignore_base = root
            .ancestors()
            .find(|dir| dir.join(".git").exists())
            .unwrap_or(&root)
            .to_path_buf();
        Ok(Self {
            root,
            fs,
            ignore_base,
            confirm: None,
            read_limit: DEFAULT_READ_LIMIT,
        })
    }

    /// Resolves paths with `resolver` (the tests of kernels without
    /// `openat2` use [`Resolver::Walk`]; the default is the best there is).
    pub fn with_resolver(mut self, resolver: Resolver) -> Self {
        self.fs = self.fs.with_resolver(resolver);
        self
    }

    /// Asks `confirm` before a change that needs confirmation. Without one,
    /// such changes are applied (the CLI's `--yes`).
    pub fn with_confirm(mut self, confirm: Arc<dyn ConfirmChange>) -> Self {
        self.confirm = Some(confirm);
        self
    }

    /// The largest file `read_file` returns, in bytes (default 8 MiB).
    pub fn with_read_limit(mut self, bytes: u64) -> Self {
        self.read_limit = bytes;
        self
    }

    fn walk_context(&self) -> WalkContext {
        WalkContext {
            root: self.root.clone(),
            fs: self.fs.clone(),
            ignore_base: self.ignore_base.clone(),
        }
    }
}

/// A checked workspace-relative path.
struct RelPath {
    rel: PathBuf,
    /// Normalized, `/`-separated, for messages and results.
    shown: String,
}

/// Turns a workspace-relative path into a relative `PathBuf`, refusing
/// absolute paths and `..`.
fn relative(path: &str) -> Result<RelPath, WorkspaceError> {
    let mut rel = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => rel.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(WorkspaceError::Denied(format!(
                    "{path}: `..` is not allowed in workspace paths"
                )));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(WorkspaceError::Denied(format!(
                    "{path}: absolute paths are not allowed; use a path relative to the \
                     workspace root"
                )));
            }
        }
    }
    let shown = if rel.as_os_str().is_empty() {
        ".".to_string()
    } else {
        rel_string(&rel)
    };
    Ok(RelPath { rel, shown })
}

fn rel_string(rel: &Path) -> String {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

fn io_error(path: &str, e: &io::Error) -> WorkspaceError {
    WorkspaceError::Io {
        path: path.to_string(),
        reason: e.to_string(),
    }
}

fn is_not_found(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// An error of the workspace's handle: a refusal (a link leading out) is
/// `Denied`, in its own words; a missing file `NotFound`.
fn fs_error(path: &str, e: &io::Error) -> WorkspaceError {
    if let Some(refused) = refusal(e) {
        return WorkspaceError::Denied(refused.to_string());
    }
    if is_not_found(e) {
        return WorkspaceError::NotFound {
            path: path.to_string(),
            suggestions: Vec::new(),
        };
    }
    io_error(path, e)
}

/// Runs blocking work off the async runtime.
async fn blocking<T, F>(path: &str, work: F) -> Result<T, WorkspaceError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, WorkspaceError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| WorkspaceError::Io {
            path: path.to_string(),
            reason: format!("internal error: {e}"),
        })?
}

#[async_trait]
impl Workspace for DiskWorkspace {
    fn root(&self) -> &Path {
        &self.root
    }

    async fn read_file(&self, path: &str) -> Result<FileRead, WorkspaceError> {
        let rel = relative(path)?;
        let ctx = self.walk_context();
        let limit = self.read_limit;
        blocking(path, move || {
            let text = read_text(&ctx, &rel, limit)?;
            Ok(FileRead {
                version: ReadVersion::of_disk(&text),
                path: rel.shown,
                text,
            })
        })
        .await
    }

    async fn exists(&self, path: &str) -> bool {
        let Ok(rel) = relative(path) else {
            return false;
        };
        let fs = self.fs.clone();
        blocking(path, move || {
            Ok(fs.metadata(&rel.rel).is_ok_and(|m| m.is_file()))
        })
        .await
        .unwrap_or(false)
    }

    async fn list_files(
        &self,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<Listing, WorkspaceError> {
        let ctx = self.walk_context();
        let dir = dir.to_string();
        let glob = glob.map(str::to_string);
        blocking(&dir.clone(), move || {
            let (abs, _) = ctx.walk_root(&dir)?;
            let glob = optional_glob(glob.as_deref())?;
            // The `limit` first paths (in component order) and a count.
            let found: Mutex<(BTreeSet<PathBuf>, usize)> = Mutex::new((BTreeSet::new(), 0));
            ctx.walk_files(&abs, || {
                |_: &Path, rel: &str| {
                    if glob.as_ref().is_none_or(|g| g.matches(rel)) {
                        let mut found = lock(&found);
                        found.1 += 1;
                        found.0.insert(PathBuf::from(rel));
                        if found.0.len() > limit {
                            found.0.pop_last();
                        }
                    }
                    Next::Continue
                }
            });
            let (paths, total) = found.into_inner().unwrap_or_else(PoisonError::into_inner);
            let paths: Vec<String> = paths.iter().map(|p| rel_string(p)).collect();
            Ok(Listing {
                truncated: total - paths.len(),
                paths,
            })
        })
        .await
    }

    async fn search(
        &self,
        pattern: &str,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<SearchResult, WorkspaceError> {
        let ctx = self.walk_context();
        let (pattern, dir) = (pattern.to_string(), dir.to_string());
        let glob = glob.map(str::to_string);
        blocking(&dir.clone(), move || {
            let matcher = build_matcher(&pattern)?;
            let (abs, _) = ctx.walk_root(&dir)?;
            let glob = optional_glob(glob.as_deref())?;
            // The `limit` first hits by (path in component order, line),
            // and a count of all hits.
            let found: Mutex<(BTreeMap<(PathBuf, u64), String>, usize)> =
                Mutex::new((BTreeMap::new(), 0));
            ctx.walk_files(&abs, || {
                let mut searcher = SearcherBuilder::new()
                    .line_number(true)
                    .line_terminator(LineTerminator::crlf())
                    .binary_detection(BinaryDetection::quit(0))
                    .build();
                let (matcher, glob, found, fs) = (&matcher, &glob, &found, &ctx.fs);
                move |_: &Path, rel: &str| {
                    if !glob.as_ref().is_none_or(|g| g.matches(rel)) {
                        return Next::Continue;
                    }
                    let mut sink = FileSink {
                        hits: Vec::new(),
                        count: 0,
                        binary: false,
                        keep: limit,
                    };
                    // Opened beneath the root: the walk only named it.
                    let file = match fs.open_file(rel) {
                        Ok(file) if file.metadata().is_ok_and(|m| m.is_file()) => file,
                        Ok(_) => return Next::Continue,
                        Err(e) => {
                            tracing::debug!("searching {rel}: {e}");
                            return Next::Continue;
                        }
                    };
                    if let Err(e) = searcher.search_file(matcher, &file, &mut sink) {
                        tracing::debug!("searching {rel}: {e}");
                        return Next::Continue;
                    }
                    if sink.binary || sink.count == 0 {
                        return Next::Continue;
                    }
                    let mut found = lock(found);
                    found.1 += sink.count;
                    for (line, text) in sink.hits {
                        found.0.insert((PathBuf::from(rel), line), text);
                        if found.0.len() > limit {
                            found.0.pop_last();
                        }
                    }
                    Next::Continue
                }
            });
            let (hits, total) = found.into_inner().unwrap_or_else(PoisonError::into_inner);
            let hits: Vec<SearchHit> = hits
                .into_iter()
                .map(|((path, line), text)| SearchHit {
                    path: rel_string(&path),
                    line,
                    text,
                })
                .collect();
            Ok(SearchResult {
                truncated: total - hits.len(),
                hits,
            })
        })
        .await
    }

    async fn edit_file(&self, edit: EditRequest) -> Result<EditOutcome, WorkspaceError> {
        let rel = relative(&edit.path)?;
        let shown = rel.shown.clone();
        // Errors in the request itself, whatever the file holds.
        if edit.old_text.is_empty() {
            return Err(WorkspaceError::NoMatch(MatchError::Empty.message(&shown)));
        }
        if edit.old_text == edit.new_text {
            return Err(WorkspaceError::NoMatch(
                MatchError::NoChange.message(&shown),
            ));
        }

        let ctx = self.walk_context();
        let limit = self.read_limit.max(EDIT_LIMIT);
        let target = rel.rel.clone();
        let current = blocking(&shown, move || read_text(&ctx, &rel, limit)).await?;
        let now = ReadVersion::of_disk(&current);
        let current_hash = now.hash;
        let Fitted {
            applied,
            rebased_from,
        } = match edit.fit(&current, &now, &shown) {
            Ok(fitted) => fitted,
            Err(unfit) => return unfit.answer(),
        };
        if let Some(note) = applied.note(&shown) {
            tracing::debug!("{note}");
        }

        if edit.needs_confirmation
            && let Some(confirm) = &self.confirm
            && !confirm
                .confirm(&shown, Some(&current), &applied.text, &edit.description)
                .await
        {
            return Ok(EditOutcome::Rejected {
                reason: String::new(),
            });
        }

        let version = ReadVersion::of_disk(&applied.text);
        let new_text = applied.text;
        let fs = self.fs.clone();
        let commit = blocking(&shown.clone(), move || {
            replace_if_unchanged(&fs, &target, &shown, current_hash, &new_text)
        })
        .await?;
        Ok(match commit {
            Committed::Written => EditOutcome::Applied {
                version,
                rebased_from,
            },
            Committed::Declined(current) => EditOutcome::Stale { current },
        })
    }

    async fn create_file(&self, create: CreateRequest) -> Result<EditOutcome, WorkspaceError> {
        let RelPath { rel, shown } = relative(&create.path)?;
        {
            // Checked before the user is asked (`create_new` checks again,
            // in one step, when it writes).
            let (fs, rel, shown) = (self.fs.clone(), rel.clone(), shown.clone());
            blocking(&shown.clone(), move || creatable(&fs, &rel, &shown)).await?;
        }

        if create.needs_confirmation
            && let Some(confirm) = &self.confirm
            && !confirm
                .confirm(&shown, None, &create.content, &create.description)
                .await
        {
            return Ok(EditOutcome::Rejected {
                reason: String::new(),
            });
        }

        let version = ReadVersion::of_disk(&create.content);
        let content = create.content;
        let fs = self.fs.clone();
        blocking(&shown.clone(), move || {
            create_new(&fs, &rel, &shown, &content)
        })
        .await?;
        Ok(EditOutcome::Applied {
            version,
            rebased_from: None,
        })
    }

    /// Nothing to do: every change is written to the disk (atomically and
    /// fsynced) before `edit_file`/`create_file` return, so the disk never
    /// lags behind.
    async fn flush_to_disk(&self) -> Result<(), WorkspaceError> {
        Ok(())
    }

    /// The file is read and compared, then unlinked beneath the root (a
    /// change landing between the two is lost with the file: the window
    /// is one system call, and only undo removes files).
    async fn remove_file(
        &self,
        path: &str,
        expected: &ReadVersion,
    ) -> Result<EditOutcome, WorkspaceError> {
        let rel = relative(path)?;
        let shown = rel.shown.clone();
        let target = rel.rel.clone();
        let ctx = self.walk_context();
        let limit = self.read_limit.max(EDIT_LIMIT);
        let current = blocking(&shown, move || read_text(&ctx, &rel, limit)).await?;
        let now = ReadVersion::of_disk(&current);
        if now.hash != expected.hash {
            return Ok(EditOutcome::Stale { current: now });
        }
        let fs = self.fs.clone();
        blocking(&shown.clone(), move || {
            fs.remove_file(&target).map_err(|e| fs_error(&shown, &e))
        })
        .await?;
        Ok(EditOutcome::Applied {
            version: ReadVersion::of_disk(""),
            rebased_from: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_refuses_escapes() {
        assert!(matches!(
            relative("/etc/passwd"),
            Err(WorkspaceError::Denied(_))
        ));
        assert!(matches!(
            relative("a/../../b"),
            Err(WorkspaceError::Denied(_))
        ));
        assert_eq!(
            relative("./a//b/").map(|r| r.shown).ok(),
            Some("a/b".into())
        );
        assert_eq!(relative("").map(|r| r.shown).ok(), Some(".".into()));
    }

    #[test]
    fn stems() {
        assert_eq!(stem("cart.py"), "cart");
        assert_eq!(stem(".env"), ".env");
        assert_eq!(stem("a.tar.gz"), "a.tar");
    }

    #[test]
    fn globs_without_a_slash_match_the_file_name() {
        let g = PathGlob::new("*.py").unwrap();
        assert!(g.matches("a/b/c.py"));
        let g = PathGlob::new("src/*.py").unwrap();
        assert!(g.matches("src/c.py"));
        assert!(!g.matches("src/x/c.py"));
        let g = PathGlob::new("**/*.py").unwrap();
        assert!(g.matches("c.py"));
        assert!(g.matches("x/y/c.py"));
    }
}
