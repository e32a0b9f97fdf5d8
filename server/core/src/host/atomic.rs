//! Writing a file so that a crash leaves either the old or the new content,
//! never a mix: a temporary file in the same directory, fsynced, then moved
//! into place by the caller's commit step (a rename, a link, or nothing if
//! the file changed meanwhile), then the directory fsynced.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// What the commit step did.
pub(crate) enum Committed<T> {
    Written,
    /// It chose not to move the file into place, for the reason in `T`.
    Declined(T),
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to a new temporary file next to `dest` (with `perms`,
/// fsynced), then lets `commit` move it into place. The temporary file is
/// removed whatever happens.
pub(crate) fn write_via_temp<T>(
    dest: &Path,
    bytes: &[u8],
    perms: Option<fs::Permissions>,
    commit: impl FnOnce(&Path) -> io::Result<Committed<T>>,
) -> io::Result<Committed<T>> {
    let dir = dest.parent().unwrap_or(Path::new("."));
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.rein-{}-{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        if let Some(perms) = perms {
            file.set_permissions(perms)?;
        }
        file.sync_all()?;
        drop(file);
        let done = commit(&tmp)?;
        if let Committed::Written = done {
            // Make the rename itself durable; not fatal if the platform
            // cannot sync a directory.
            if let Err(e) = File::open(dir).and_then(|d| d.sync_all()) {
                tracing::debug!("fsync {}: {e}", dir.display());
            }
        }
        Ok(done)
    })();
    if tmp.exists() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Replaces `dest` with `bytes`, atomically.
pub(crate) fn replace(dest: &Path, bytes: &[u8], perms: Option<fs::Permissions>) -> io::Result<()> {
    write_via_temp(dest, bytes, perms, |tmp| {
        fs::rename(tmp, dest)?;
        Ok(Committed::<()>::Written)
    })
    .map(|_| ())
}
