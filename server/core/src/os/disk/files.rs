//! Reading a file as text (bounded, binary refused) and writing one
//! without clobbering a change made by someone else, each opened beneath
//! the workspace's handle in one step.

use super::*;

/// Reads a file as text, up to `limit` bytes.
pub(super) fn read_text(
    ctx: &WalkContext,
    path: &RelPath,
    limit: u64,
) -> Result<String, WorkspaceError> {
    let shown = &path.shown;
    let file = match ctx.fs.open_file(&path.rel) {
        Ok(file) => file,
        Err(e) if is_not_found(&e) => {
            return Err(WorkspaceError::NotFound {
                path: shown.clone(),
                suggestions: ctx.suggest(shown),
            });
        }
        Err(e) => return Err(fs_error(shown, &e)),
    };
    // What was opened, not what the name held a moment before.
    let meta = file.metadata().map_err(|e| io_error(shown, &e))?;
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
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(shown, &e))?;
    if bytes.len() as u64 > limit {
        // It grew since it was opened.
        return Err(too_large(bytes.len() as u64));
    }
    into_text(bytes).ok_or_else(|| WorkspaceError::NotText {
        path: shown.clone(),
    })
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

/// Replaces the file at `rel` with `new_text`, unless it no longer hashes
/// to `expected`. A file that is a link inside the workspace is replaced
/// at its target.
pub(super) fn replace_if_unchanged(
    fs: &Root,
    rel: &Path,
    shown: &str,
    expected: ContentHash,
    new_text: &str,
) -> Result<Commit, WorkspaceError> {
    fs.replace_if(rel, new_text.as_bytes(), |now| {
        let hash = ContentHash::of_bytes(now);
        (hash != expected).then_some(ReadVersion {
            buffer_version: None,
            hash,
        })
    })
    // Deleted while we worked: `NotFound`, never brought back.
    .map_err(|e| fs_error(shown, &e))
}

/// Whether `rel` can be created: nothing there (not even a link), and no
/// file where one of its folders should be.
pub(super) fn creatable(fs: &Root, rel: &Path, shown: &str) -> Result<(), WorkspaceError> {
    match fs.symlink_metadata(rel) {
        Ok(_) => {
            return Err(WorkspaceError::AlreadyExists {
                path: shown.to_string(),
            });
        }
        Err(e) if refusal(&e).is_some() => return Err(for_writing(shown, &e)),
        Err(_) => {}
    }
    let mut folder = PathBuf::new();
    for part in rel.parent().into_iter().flat_map(Path::components) {
        folder.push(part);
        match fs.metadata(&folder) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(WorkspaceError::Io {
                    path: shown.to_string(),
                    reason: format!("{} is a file, not a directory", rel_string(&folder)),
                });
            }
            Err(e) if refusal(&e).is_some() => return Err(for_writing(shown, &e)),
            // Missing from here on: made when the file is.
            Err(_) => break,
        }
    }
    Ok(())
}

/// A refusal met while checking before a write, told as one of writing.
fn for_writing(shown: &str, e: &io::Error) -> WorkspaceError {
    match refusal(e) {
        Some(refused) => {
            WorkspaceError::Denied(refused.with_verb(rein_fsroot::Verb::Write).to_string())
        }
        None => fs_error(shown, e),
    }
}

/// Creates `rel` with `content`, never replacing anything that exists.
pub(super) fn create_new(
    fs: &Root,
    rel: &Path,
    shown: &str,
    content: &str,
) -> Result<(), WorkspaceError> {
    match fs.create_new(rel, content.as_bytes(), None) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(WorkspaceError::AlreadyExists {
            path: shown.to_string(),
        }),
        Err(e) => Err(match refusal(&e) {
            Some(_) => fs_error(shown, &e),
            None => io_error(shown, &e),
        }),
    }
}
