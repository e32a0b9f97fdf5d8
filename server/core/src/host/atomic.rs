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
    // Only a file this call created is removed afterwards: a name already
    // taken (`create_new` refuses it) belongs to someone else.
    let mut created = false;
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        created = true;
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
    if created && tmp.exists() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Replaces `dest` with `bytes`, atomically: a crash leaves the old file
/// or the new one, never a mix, and the new one is on disk when this
/// returns. `perms: None` keeps `dest`'s own (or the default for a new
/// file). The one way Rein replaces a file.
pub fn replace(dest: &Path, bytes: &[u8], perms: Option<fs::Permissions>) -> io::Result<()> {
    let perms = perms.or_else(|| fs::metadata(dest).ok().map(|m| m.permissions()));
    write_via_temp(dest, bytes, perms, |tmp| {
        fs::rename(tmp, dest)?;
        Ok(Committed::<()>::Written)
    })
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replacing_keeps_the_files_permissions_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.sh");
        fs::write(&file, "old").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o750)).unwrap();
        replace(&file, b"new", None).unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o750
        );
        assert_eq!(names(dir.path()), ["run.sh"]);
    }

    #[test]
    fn a_temporary_name_already_taken_is_never_written_through_nor_removed() {
        // A file (or a link planted there) with the name a temporary file
        // would have: `create_new` refuses it, so nothing is written through
        // it, and the next name is used on the next try.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        fs::write(&file, "old").unwrap();
        let next = TEMP_COUNTER.load(Ordering::Relaxed);
        let taken = dir
            .path()
            .join(format!(".a.txt.rein-{}-{next}.tmp", std::process::id()));
        fs::write(&taken, "someone else's").unwrap();
        let first = replace(&file, b"new", None);
        if first.is_err() {
            assert_eq!(fs::read_to_string(&file).unwrap(), "old");
            replace(&file, b"new", None).unwrap();
        }
        assert_eq!(fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(fs::read_to_string(&taken).unwrap(), "someone else's");
    }
}
