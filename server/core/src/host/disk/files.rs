//! Reading a file as text (bounded, binary refused) and writing one
//! without clobbering a change made by someone else.

use super::*;

/// Reads a file as text, up to `limit` bytes. Returns the path actually
/// read (symlinks resolved) and the text.
pub(super) fn read_text(
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
pub(super) fn into_text(bytes: Vec<u8>) -> Option<String> {
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
pub(super) fn replace_if_unchanged(
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
pub(super) fn create_new(abs: &Path, shown: &str, content: &str) -> Result<(), WorkspaceError> {
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
