//! [`DiskWorkspace`]: the [`Workspace`] of the headless CLI, and of the LSP
//! server for files the editor does not have open. Files are read from and
//! written to the disk directly.
//!
//! - **Paths** are workspace-relative with `/`. The caller has checked them;
//!   as a second line of defence, absolute paths and `..` are refused, and so
//!   is a path that leaves the workspace through a symlink ([`WorkspaceError::Denied`]).
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
//! - **Writes** are atomic (a temporary file in the same directory, fsync,
//!   rename; the file keeps its permissions) and never clobber a change made
//!   by someone else: right before the rename the file is read and hashed
//!   again, and if it no longer holds the text the edit was computed from,
//!   nothing is written and the outcome is `Stale`. (The window left between
//!   that check and the rename is a few system calls wide; closing it would
//!   take locks that editors do not honour.)
//!
//! Everything that blocks runs in [`tokio::task::spawn_blocking`].

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
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
use rein_text::ContentHash;

use super::atomic::{Committed, write_via_temp};
use crate::edit::MatchError;
use crate::workspace::{
    CreateRequest, EditOutcome, EditRequest, FileRead, Fitted, Listing, ReadVersion, SearchHit,
    SearchResult, Workspace, WorkspaceError,
};

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
        let ignore_base = root
            .ancestors()
            .find(|dir| dir.join(".git").exists())
            .unwrap_or(&root)
            .to_path_buf();
        Ok(Self {
            root,
            ignore_base,
            confirm: None,
            read_limit: DEFAULT_READ_LIMIT,
        })
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

/// Refuses `abs` when the deepest part of it that exists resolves (through
/// symlinks) outside the workspace.
fn check_inside(root: &Path, abs: &Path, shown: &str) -> Result<(), WorkspaceError> {
    for probe in abs.ancestors() {
        if let Ok(real) = probe.canonicalize() {
            if real.starts_with(root) {
                return Ok(());
            }
            return Err(WorkspaceError::Denied(format!(
                "{shown} resolves outside the workspace (through a symlink)"
            )));
        }
    }
    Ok(())
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

/// Where and how walks happen.
#[derive(Clone)]
struct WalkContext {
    root: PathBuf,
    ignore_base: PathBuf,
}

/// The `.ignore` / `.gitignore` files of the directories above a walk's
/// starting directory (from the ignore base down), which a walk that starts
/// below them would not read, plus the repository's `.git/info/exclude`.
struct AncestorIgnores(Vec<Gitignore>);

impl AncestorIgnores {
    fn new(ignore_base: &Path, dir: &Path) -> Self {
        let mut dirs: Vec<&Path> = dir
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(ignore_base))
            .collect();
        if dirs.is_empty() {
            // The walk starts at the ignore base: it reads everything itself.
            return Self(Vec::new());
        }
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        let mut matchers = Vec::new();
        // Precedence as in `ignore`: any `.ignore` beats any `.gitignore`,
        // which beats `.git/info/exclude`; deeper files first.
        for name in [".ignore", ".gitignore"] {
            for d in &dirs {
                let file = d.join(name);
                if file.is_file() {
                    let mut builder = GitignoreBuilder::new(d);
                    if let Some(e) = builder.add(&file) {
                        tracing::debug!("{}: {e}", file.display());
                    }
                    match builder.build() {
                        Ok(gi) => matchers.push(gi),
                        Err(e) => tracing::debug!("{}: {e}", file.display()),
                    }
                }
            }
        }
        let exclude = ignore_base.join(".git/info/exclude");
        if exclude.is_file() {
            let mut builder = GitignoreBuilder::new(ignore_base);
            let _ = builder.add(&exclude);
            if let Ok(gi) = builder.build() {
                matchers.push(gi);
            }
        }
        Self(matchers)
    }

    fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        for gi in &self.0 {
            match gi.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }
}

/// What `visit` tells the walk.
enum Next {
    Continue,
    Stop,
}

impl WalkContext {
    /// Visits the files under `dir` (absolute, inside the root), in
    /// parallel and in no particular order, with their workspace-relative
    /// paths. `make` builds one visitor per walking thread.
    fn walk_files<M, V>(&self, dir: &Path, make: M)
    where
        M: Fn() -> V,
        V: FnMut(&Path, &str) -> Next + Send,
    {
        let ancestors = AncestorIgnores::new(&self.ignore_base, dir);
        let mut builder = WalkBuilder::new(dir);
        builder
            .standard_filters(true)
            .hidden(true)
            .parents(false)
            .require_git(false)
            .follow_links(false)
            .current_dir(&self.root)
            .filter_entry(move |entry| {
                if entry.file_name() == ".git" {
                    return false;
                }
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                !ancestors.ignores(entry.path(), is_dir)
            });
        let root = &self.root;
        builder.build_parallel().run(|| {
            let mut visit = make();
            Box::new(move |entry| {
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(e) => {
                        tracing::debug!("walking: {e}");
                        return WalkState::Continue;
                    }
                };
                let Some(rel) = file_in(root, &entry) else {
                    return WalkState::Continue;
                };
                match visit(entry.path(), &rel) {
                    Next::Continue => WalkState::Continue,
                    Next::Stop => WalkState::Quit,
                }
            })
        });
    }

    /// Resolves the `dir` argument of `list_files`/`search`.
    fn walk_root(&self, dir: &str) -> Result<(PathBuf, String), WorkspaceError> {
        let RelPath { rel, shown } = relative(dir)?;
        if rel.components().any(|c| c.as_os_str() == ".git") {
            return Err(WorkspaceError::Denied(format!(
                "{shown}: the .git directory is never listed or searched"
            )));
        }
        let abs = self.root.join(&rel);
        check_inside(&self.root, &abs, &shown)?;
        match fs::metadata(&abs) {
            Ok(_) => Ok((abs, shown)),
            Err(e) if is_not_found(&e) => Err(WorkspaceError::NotFound {
                path: shown,
                suggestions: Vec::new(),
            }),
            Err(e) => Err(io_error(&shown, &e)),
        }
    }

    /// Up to [`MAX_SUGGESTIONS`] existing files whose path is close to
    /// `wanted`, best first: the same file name in another directory, the
    /// same name in another case, the same stem (`cart` → `cart.py`), then
    /// near misses (`carts.py` → `cart.py`). Near misses are not offered
    /// when the name itself exists elsewhere.
    fn suggest(&self, wanted: &str) -> Vec<String> {
        let wanted_lc = wanted.to_lowercase();
        let name = wanted.rsplit('/').next().unwrap_or(wanted);
        let name_lc = name.to_lowercase();
        let stem_lc = stem(&name_lc);
        // (tier, similarity, path)
        let scored: Mutex<Vec<(u8, f64, String)>> = Mutex::new(Vec::new());
        let seen = AtomicUsize::new(0);
        self.walk_files(&self.root, || {
            |_: &Path, rel: &str| {
                let n = seen.fetch_add(1, Ordering::Relaxed) + 1;
                let cname = rel.rsplit('/').next().unwrap_or(rel);
                let cname_lc = cname.to_lowercase();
                let name_sim = strsim::normalized_levenshtein(&name_lc, &cname_lc);
                let path_sim = strsim::normalized_levenshtein(&wanted_lc, &rel.to_lowercase());
                let tier = if cname == name {
                    4
                } else if cname_lc == name_lc {
                    3
                } else if !stem_lc.is_empty() && stem(&cname_lc) == stem_lc {
                    2
                } else if name_sim.max(path_sim) >= 0.7 {
                    1
                } else {
                    0
                };
                if tier > 0 {
                    lock(&scored).push((tier, (name_sim + path_sim) / 2.0, rel.to_string()));
                }
                next_unless(n >= SUGGESTION_WALK_LIMIT)
            }
        });
        let mut scored = scored.into_inner().unwrap_or_else(PoisonError::into_inner);
        scored.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(b.1.total_cmp(&a.1))
                .then_with(|| a.2.cmp(&b.2))
        });
        let floor = scored.first().map_or(0, |best| best.0.min(2));
        scored
            .into_iter()
            .filter(|s| s.0 >= floor)
            .take(MAX_SUGGESTIONS)
            .map(|s| s.2)
            .collect()
    }
}

/// Locks, ignoring poisoning (the data stay consistent: every critical
/// section here only pushes or inserts).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn next_unless(stop: bool) -> Next {
    if stop { Next::Stop } else { Next::Continue }
}

/// The workspace-relative path of `entry` if it is a file, or a symlink to
/// a file inside the workspace (broken symlinks and symlinks to directories
/// are skipped).
fn file_in(root: &Path, entry: &DirEntry) -> Option<String> {
    let file_type = entry.file_type()?;
    let path = entry.path();
    let is_file = file_type.is_file()
        || (file_type.is_symlink()
            && fs::metadata(path).is_ok_and(|m| m.is_file())
            && path.canonicalize().is_ok_and(|p| p.starts_with(root)));
    if !is_file {
        return None;
    }
    path.strip_prefix(root).ok().map(rel_string)
}

/// A file name without its last extension (`cart.py` → `cart`; `.env`
/// stays).
fn stem(name: &str) -> &str {
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

/// A glob over workspace-relative paths; one without `/` matches the file
/// name.
struct PathGlob {
    matcher: GlobMatcher,
    whole_path: bool,
}

impl PathGlob {
    fn new(glob: &str) -> Result<Self, WorkspaceError> {
        let trimmed = glob.trim_start_matches("./").trim_start_matches('/');
        let matcher = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .build()
            .map_err(|e| WorkspaceError::BadPattern {
                pattern: glob.to_string(),
                reason: e.kind().to_string(),
            })?
            .compile_matcher();
        Ok(Self {
            matcher,
            whole_path: trimmed.contains('/'),
        })
    }

    fn matches(&self, rel: &str) -> bool {
        if self.whole_path {
            self.matcher.is_match(rel)
        } else {
            self.matcher.is_match(rel.rsplit('/').next().unwrap_or(rel))
        }
    }
}

fn optional_glob(glob: Option<&str>) -> Result<Option<PathGlob>, WorkspaceError> {
    glob.filter(|g| !g.is_empty())
        .map(PathGlob::new)
        .transpose()
}

/// Reads a file as text, up to `limit` bytes. Returns the path actually
/// read (symlinks resolved) and the text.
fn read_text(
    ctx: &WalkContext,
    path: &RelPath,
    limit: u64,
) -> Result<(PathBuf, String), WorkspaceError> {
    let shown = &path.shown;
    let abs = ctx.root.join(&path.rel);
    check_inside(&ctx.root, &abs, shown)?;
    let meta = match fs::metadata(&abs) {
        Ok(meta) => meta,
        Err(e) if is_not_found(&e) => {
            return Err(WorkspaceError::NotFound {
                path: shown.clone(),
                suggestions: ctx.suggest(shown),
            });
        }
        Err(e) => return Err(io_error(shown, &e)),
    };
    if meta.is_dir() {
        return Err(WorkspaceError::IsADirectory {
            path: shown.clone(),
        });
    }
    if !meta.is_file() {
        return Err(WorkspaceError::Io {
            path: shown.clone(),
            reason: "not a regular file (a device, socket or pipe)".into(),
        });
    }
    let too_large = |size| WorkspaceError::TooLarge {
        path: shown.clone(),
        size,
        limit,
    };
    if meta.len() > limit {
        return Err(too_large(meta.len()));
    }
    let real = abs.canonicalize().map_err(|e| io_error(shown, &e))?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    File::open(&real)
        .and_then(|f| f.take(limit.saturating_add(1)).read_to_end(&mut bytes))
        .map_err(|e| io_error(shown, &e))?;
    if bytes.len() as u64 > limit {
        // It grew since the metadata was read.
        return Err(too_large(bytes.len() as u64));
    }
    let text = into_text(bytes).ok_or_else(|| WorkspaceError::NotText {
        path: shown.clone(),
    })?;
    Ok((real, text))
}

/// The text of `bytes`, unless they look binary (NUL early on) or are not
/// UTF-8.
fn into_text(bytes: Vec<u8>) -> Option<String> {
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// What committing a write found: written, or the file no longer holds
/// the text the change was computed from.
type Commit = Committed<ReadVersion>;

/// Replaces the file at `real` with `new_text`, unless it no longer hashes
/// to `expected`.
fn replace_if_unchanged(
    real: &Path,
    shown: &str,
    expected: ContentHash,
    new_text: &str,
) -> Result<Commit, WorkspaceError> {
    let perms = fs::metadata(real)
        .map_err(|e| io_error(shown, &e))?
        .permissions();
    let commit = |tmp: &Path| -> io::Result<Commit> {
        let now = fs::read(real)?;
        let hash = ContentHash::of_bytes(&now);
        if hash != expected {
            return Ok(Committed::Declined(ReadVersion {
                buffer_version: None,
                hash,
            }));
        }
        fs::rename(tmp, real)?;
        Ok(Committed::Written)
    };
    write_via_temp(real, new_text.as_bytes(), Some(perms), commit).map_err(|e| {
        if is_not_found(&e) {
            // Deleted while we worked: do not bring it back.
            WorkspaceError::NotFound {
                path: shown.to_string(),
                suggestions: Vec::new(),
            }
        } else {
            io_error(shown, &e)
        }
    })
}

/// Creates `abs` with `content`, never replacing anything that exists.
fn create_new(abs: &Path, shown: &str, content: &str) -> Result<(), WorkspaceError> {
    if let Some(parent) = abs.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error(shown, &e))?;
    }
    let commit = |tmp: &Path| -> io::Result<Commit> {
        // A hard link fails if `abs` exists: atomic and no clobbering.
        match fs::hard_link(tmp, abs) {
            Ok(()) => Ok(Committed::Written),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(e),
            Err(e) => {
                // No hard links here (some file systems): check, then rename.
                tracing::debug!("hard link {}: {e}; renaming instead", abs.display());
                if fs::symlink_metadata(abs).is_ok() {
                    return Err(io::ErrorKind::AlreadyExists.into());
                }
                fs::rename(tmp, abs)?;
                Ok(Committed::Written)
            }
        }
    };
    match write_via_temp(abs, content.as_bytes(), None, commit) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(WorkspaceError::AlreadyExists {
            path: shown.to_string(),
        }),
        Err(e) => Err(io_error(shown, &e)),
    }
}

/// Collects one file's first matching lines and counts them all; notices
/// binary files.
struct FileSink {
    hits: Vec<(u64, String)>,
    count: usize,
    binary: bool,
    /// How many hits to keep (more cannot be among the first `limit`).
    keep: usize,
}

impl Sink for FileSink {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        // Every line is read, even past `keep`: a NUL further on still makes
        // the file binary, and its hits must then be dropped.
        self.count += 1;
        if self.hits.len() >= self.keep {
            return Ok(true);
        }
        let mut line = m.bytes();
        line = line.strip_suffix(b"\n").unwrap_or(line);
        line = line.strip_suffix(b"\r").unwrap_or(line);
        let text = String::from_utf8_lossy(line);
        let text = match text.char_indices().nth(MAX_HIT_CHARS) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text.into_owned(),
        };
        self.hits.push((m.line_number().unwrap_or(0), text));
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

fn build_matcher(pattern: &str) -> Result<RegexMatcher, WorkspaceError> {
    RegexMatcherBuilder::new()
        .crlf(true)
        .ban_byte(Some(0))
        .build(pattern)
        .map_err(|e| {
            // The regex error quotes the pattern as grep-regex rewrote it
            // (`(?:fn ()`), which would confuse; keep its last line, the
            // reason ("error: unclosed group").
            let full = e.to_string();
            let reason = full
                .lines()
                .rev()
                .find_map(|l| l.trim().strip_prefix("error: "))
                .unwrap_or(&full)
                .to_string();
            WorkspaceError::BadPattern {
                pattern: pattern.to_string(),
                reason,
            }
        })
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
            let (_, text) = read_text(&ctx, &rel, limit)?;
            Ok(FileRead {
                version: ReadVersion::of_disk(&text),
                path: rel.shown,
                text,
            })
        })
        .await
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
                let (matcher, glob, found) = (&matcher, &glob, &found);
                move |path: &Path, rel: &str| {
                    if !glob.as_ref().is_none_or(|g| g.matches(rel)) {
                        return Next::Continue;
                    }
                    let mut sink = FileSink {
                        hits: Vec::new(),
                        count: 0,
                        binary: false,
                        keep: limit,
                    };
                    if let Err(e) = searcher.search_path(matcher, path, &mut sink) {
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
        let (real, current) = blocking(&shown, move || read_text(&ctx, &rel, limit)).await?;
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
        let commit = blocking(&shown.clone(), move || {
            replace_if_unchanged(&real, &shown, current_hash, &new_text)
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
        let root = self.root.clone();
        let abs = root.join(&rel);
        {
            let (abs, shown) = (abs.clone(), shown.clone());
            blocking(&shown.clone(), move || {
                check_inside(&root, &abs, &shown)?;
                if fs::symlink_metadata(&abs).is_ok() {
                    return Err(WorkspaceError::AlreadyExists { path: shown });
                }
                // A file where a parent directory should be.
                if let Some(blocker) = abs
                    .ancestors()
                    .skip(1)
                    .find(|a| fs::symlink_metadata(a).is_ok())
                    .filter(|a| !a.is_dir())
                {
                    let blocker = blocker.strip_prefix(&root).map(rel_string);
                    return Err(WorkspaceError::Io {
                        path: shown,
                        reason: format!(
                            "{} is a file, not a directory",
                            blocker.unwrap_or_default()
                        ),
                    });
                }
                Ok(())
            })
            .await?;
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
        blocking(&shown.clone(), move || create_new(&abs, &shown, &content)).await?;
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
