//! Writing a file Rein keeps in a folder of its own outside any workspace
//! (the user's state folder), by path: the folder (named by the user's
//! environment, so trusted) is opened, then the file is replaced or
//! created relative to it through [`rein_fsroot`] — atomically, and never
//! through a symbolic link. Files beneath a workspace are written through
//! the workspace's own handle instead (`disk/`, `rein_store::state_dir`).

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use rein_fsroot::{Links, Root};

/// The folder of `dest` as a root that follows no link, and the file's name.
fn folder_of(dest: &Path) -> io::Result<(Root, &std::ffi::OsStr)> {
    let name = dest.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", dest.display()),
        )
    })?;
    let dir = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok((Root::open(dir, Links::Refuse)?, name))
}

/// Replaces `dest` with `bytes`, atomically: a crash leaves the old file
/// or the new one, never a mix, and the new one is on disk when this
/// returns. `perms: None` keeps `dest`'s own (or the default for a new
/// file).
pub fn replace(dest: &Path, bytes: &[u8], perms: Option<fs::Permissions>) -> io::Result<()> {
    let (dir, name) = folder_of(dest)?;
    dir.replace(name, bytes, perms.map(|p| p.mode()))
}

/// Creates `dest` with `bytes` unless something is there already
/// (`Ok(false)`): two processes creating it at once agree on whichever
/// came first.
pub fn create_new(dest: &Path, bytes: &[u8], perms: Option<fs::Permissions>) -> io::Result<bool> {
    let (dir, name) = folder_of(dest)?;
    match dir.create_new(name, bytes, perms.map(|p| p.mode())) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
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
    fn a_link_in_the_folder_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("bashrc");
        fs::write(&target, "mine").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("trust.json")).unwrap();
        let error = replace(&dir.path().join("trust.json"), b"{}", None).unwrap_err();
        assert!(error.to_string().contains("is a symbolic link"), "{error}");
        assert!(!create_new(&dir.path().join("trust.json"), b"{}", None).unwrap());
        assert_eq!(fs::read_to_string(&target).unwrap(), "mine");
    }
}
