//! Walking the workspace: ignore files (those of the directories between
//! the repository root and the walked one too), hidden files, order, the
//! `limit`, globs.

use super::*;

/// Where and how walks happen.
#[derive(Clone)]
pub(super) struct WalkContext {
    pub(super) root: PathBuf,
    /// The handle files are opened beneath.
    pub(super) fs: Root,
    pub(super) ignore_base: PathBuf,
}

/// The `.ignore` / `.gitignore` files of the directories above a walk's
/// starting directory (from the ignore base down), which a walk that starts
/// below them would not read, plus the repository's `.git/info/exclude`.
pub(super) struct AncestorIgnores(Vec<Gitignore>);

impl AncestorIgnores {
    pub(super) fn new(ignore_base: &Path, dir: &Path) -> Self {
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

    pub(super) fn ignores(&self, path: &Path, is_dir: bool) -> bool {
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
pub(super) enum Next {
    Continue,
    Stop,
}

impl WalkContext {
    /// Visits the files under `dir` (absolute, inside the root), in
    /// parallel and in no particular order, with their workspace-relative
    /// paths. `make` builds one visitor per walking thread.
    pub(super) fn walk_files<M, V>(&self, dir: &Path, make: M)
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
                let Some(rel) = self.file_in(&entry) else {
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
    pub(super) fn walk_root(&self, dir: &str) -> Result<(PathBuf, String), WorkspaceError> {
        let RelPath { rel, shown } = relative(dir)?;
        if rel.components().any(|c| c.as_os_str() == ".git") {
            return Err(WorkspaceError::Denied(format!(
                "{shown}: the .git directory is never listed or searched"
            )));
        }
        match self.fs.metadata(&rel) {
            Ok(_) => Ok((self.root.join(&rel), shown)),
            Err(e) => Err(fs_error(&shown, &e)),
        }
    }

    /// The workspace-relative path of `entry` if it is a file, or a
    /// symlink to a file inside the workspace (broken symlinks and
    /// symlinks to directories are skipped).
    fn file_in(&self, entry: &DirEntry) -> Option<String> {
        let file_type = entry.file_type()?;
        let rel = entry.path().strip_prefix(&self.root).ok().map(rel_string)?;
        let is_file = file_type.is_file()
            || (file_type.is_symlink() && self.fs.metadata(&rel).is_ok_and(|m| m.is_file()));
        is_file.then_some(rel)
    }

    /// Up to [`MAX_SUGGESTIONS`] existing files whose path is close to
    /// `wanted`, best first: the same file name in another directory, the
    /// same name in another case, the same stem (`cart` → `cart.py`), then
    /// near misses (`carts.py` → `cart.py`). Near misses are not offered
    /// when the name itself exists elsewhere.
    pub(super) fn suggest(&self, wanted: &str) -> Vec<String> {
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
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) fn next_unless(stop: bool) -> Next {
    if stop { Next::Stop } else { Next::Continue }
}

/// A file name without its last extension (`cart.py` → `cart`; `.env`
/// stays).
pub(super) fn stem(name: &str) -> &str {
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

/// A glob over workspace-relative paths; one without `/` matches the file
/// name.
pub(super) struct PathGlob {
    pub(super) matcher: GlobMatcher,
    pub(super) whole_path: bool,
}

impl PathGlob {
    pub(super) fn new(glob: &str) -> Result<Self, WorkspaceError> {
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

    pub(super) fn matches(&self, rel: &str) -> bool {
        if self.whole_path {
            self.matcher.is_match(rel)
        } else {
            self.matcher.is_match(rel.rsplit('/').next().unwrap_or(rel))
        }
    }
}

pub(super) fn optional_glob(glob: Option<&str>) -> Result<Option<PathGlob>, WorkspaceError> {
    glob.filter(|g| !g.is_empty())
        .map(PathGlob::new)
        .transpose()
}
