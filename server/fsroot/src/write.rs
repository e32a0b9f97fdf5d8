//! Changing things beneath a [`Root`]: folders, atomic replacement and
//! creation, appending, renaming, removing. Each opens the parent folder
//! beneath the root, then acts on the last component relative to that
//! handle without following it.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{
    AtFlags, Mode, OFlags, RenameFlags, fsync, linkat, openat, readlinkat, renameat, renameat_with,
    unlinkat,
};
use rustix::io::Errno;

use crate::path::{self, Parts};
use crate::refused::{Reason, Verb};
use crate::resolve::Links;
use crate::root::Root;

/// What a conditional write did.
#[derive(Debug, PartialEq, Eq)]
pub enum Committed<T> {
    Written,
    /// The check declined, for the reason in `T`; nothing was written.
    Declined(T),
}

/// As Linux's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// New files: `0o666` less the umask, as `std::fs` makes them.
const FILE_MODE: u32 = 0o666;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Root {
    /// Makes the folder `rel` and its parents, as needed.
    pub fn create_dir_all(&self, rel: impl AsRef<Path>) -> io::Result<()> {
        let parts = self.parts(rel.as_ref(), Verb::Write)?;
        self.make_dirs(&parts, Verb::Write, &parts).map(drop)
    }

    /// Replaces the file at `rel` with `bytes`, atomically: a crash leaves
    /// the old file or the new one, and the new one is on disk when this
    /// returns. `mode: None` keeps the file's own permissions (a new file
    /// gets `0o666` less the umask). Folders are made as needed. A link
    /// inside the workspace is replaced at its target, the link kept.
    pub fn replace(
        &self,
        rel: impl AsRef<Path>,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> io::Result<()> {
        let parts = self.parts(rel.as_ref(), Verb::Write)?;
        let (dir, name) = self.target(&parts, true)?;
        let mode = mode.or_else(|| existing_mode(&dir, &name));
        self.via_temp(&dir, &name, bytes, mode, |dir, tmp, moved| {
            renameat(dir, tmp, dir, &name)?;
            *moved = true;
            Ok(Committed::<()>::Written)
        })
        .map(drop)
    }

    /// Replaces the existing file at `rel` with `bytes`, atomically and
    /// keeping its permissions, unless `check`, given what the file holds
    /// right before the rename, declines. A file gone meanwhile is
    /// `NotFound` (never made again).
    pub fn replace_if<T>(
        &self,
        rel: impl AsRef<Path>,
        bytes: &[u8],
        check: impl FnOnce(&[u8]) -> Option<T>,
    ) -> io::Result<Committed<T>> {
        let parts = self.parts(rel.as_ref(), Verb::Write)?;
        let (dir, name) = self.target(&parts, false)?;
        // `O_NONBLOCK`: a FIFO swapped in must not hang the open.
        let reading = OFlags::RDONLY | OFlags::NONBLOCK;
        let current = self.open_last(&dir, &name, &parts, reading, Mode::empty())?;
        let current = File::from(current);
        let meta = current.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::other(format!(
                "{} is not a regular file",
                self.shown(&parts)
            )));
        }
        let mode = Some(meta.permissions().mode());
        drop(current);
        self.via_temp(&dir, &name, bytes, mode, |dir, tmp, moved| {
            let mut now = Vec::new();
            File::from(self.open_last(dir, &name, &parts, reading, Mode::empty())?)
                .read_to_end(&mut now)?;
            if let Some(reason) = check(&now) {
                return Ok(Committed::Declined(reason));
            }
            renameat(dir, tmp, dir, &name)?;
            *moved = true;
            Ok(Committed::Written)
        })
    }

    /// Creates the file `rel` with `bytes`, never replacing anything that
    /// is there (`AlreadyExists`, a link included). Folders are made as
    /// needed. `mode: None` is `0o666` less the umask.
    pub fn create_new(
        &self,
        rel: impl AsRef<Path>,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> io::Result<()> {
        let parts = self.parts(rel.as_ref(), Verb::Write)?;
        let (dir, name) = self.parent(&parts, true, Verb::Write)?;
        self.via_temp(&dir, &name, bytes, mode, |dir, tmp, moved| {
            match renameat_with(dir, tmp, dir, &name, RenameFlags::NOREPLACE) {
                Ok(()) => {
                    *moved = true;
                    return Ok(Committed::<()>::Written);
                }
                Err(Errno::INVAL | Errno::NOSYS | Errno::NOTSUP) => {}
                Err(e) => return Err(e.into()),
            }
            // No `RENAME_NOREPLACE` on this file system: a hard link fails
            // on an existing name just as well.
            match linkat(dir, tmp, dir, &name, AtFlags::empty()) {
                Ok(()) => return Ok(Committed::Written),
                Err(Errno::PERM | Errno::NOTSUP | Errno::MLINK) => {}
                Err(e) => return Err(e.into()),
            }
            // Nor hard links: made in place, `O_EXCL` (not crash-atomic).
            let mut file = File::from(openat(
                dir,
                &name,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(mode.unwrap_or(FILE_MODE)),
            )?);
            file.write_all(bytes)?;
            file.sync_all()?;
            Ok(Committed::Written)
        })
        .map(drop)
    }

    /// The file `rel` open for appending, made if missing (with its
    /// folders). A link there is refused, wherever it points.
    pub fn append(&self, rel: impl AsRef<Path>) -> io::Result<File> {
        let parts = self.parts(rel.as_ref(), Verb::Write)?;
        let (dir, name) = self.parent(&parts, true, Verb::Write)?;
        let fd = self.open_last(
            &dir,
            &name,
            &parts,
            OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE,
            Mode::from_raw_mode(FILE_MODE),
        )?;
        Ok(File::from(fd))
    }

    /// The file `rel` open for writing, made if missing (with its folders)
    /// or emptied. A link there is refused, wherever it points.
    pub fn create(&self, rel: impl AsRef<Path>) -> io::Result<File> {
        let parts = self.parts(rel.as_ref(), Verb::Write)?;
        let (dir, name) = self.parent(&parts, true, Verb::Write)?;
        let fd = self.open_last(
            &dir,
            &name,
            &parts,
            OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC,
            Mode::from_raw_mode(FILE_MODE),
        )?;
        Ok(File::from(fd))
    }

    /// Renames `from` to `to` (replacing it); neither last component is
    /// followed.
    pub fn rename(&self, from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
        let from = self.parts(from.as_ref(), Verb::Write)?;
        let to = self.parts(to.as_ref(), Verb::Write)?;
        let (from_dir, from_name) = self.parent(&from, false, Verb::Write)?;
        let (to_dir, to_name) = self.parent(&to, false, Verb::Write)?;
        Ok(renameat(&from_dir, &from_name, &to_dir, &to_name)?)
    }

    /// Removes the file (or link) `rel`; a link's target is untouched.
    pub fn remove_file(&self, rel: impl AsRef<Path>) -> io::Result<()> {
        let parts = self.parts(rel.as_ref(), Verb::Write)?;
        let (dir, name) = self.parent(&parts, false, Verb::Write)?;
        Ok(unlinkat(&dir, &name, AtFlags::empty())?)
    }

    /// Opens `name` in `dir` without following it; a link there is a
    /// refusal naming `parts`.
    fn open_last(
        &self,
        dir: &OwnedFd,
        name: &OsStr,
        parts: &[OsString],
        flags: OFlags,
        mode: Mode,
    ) -> io::Result<OwnedFd> {
        match openat(dir, name, flags | OFlags::NOFOLLOW | OFlags::CLOEXEC, mode) {
            Err(Errno::LOOP) => Err(self.refused(self.shown(parts), Reason::Link, Verb::Write)),
            other => Ok(other?),
        }
    }

    /// The folder and name a write to `parts` lands on: the parent
    /// opened beneath the root; a last component that is a link inside
    /// the workspace is followed (to its target's folder and name), one
    /// leaving it refused. Under [`Links::Refuse`], any link is refused.
    fn target(&self, parts: &[OsString], create: bool) -> io::Result<(OwnedFd, OsString)> {
        let mut at: Parts = parts.to_vec();
        // The link whose target `at` came from: a `..` in it climbing out
        // is its doing.
        let mut link: Parts = parts.to_vec();
        for _ in 0..=MAX_LINKS {
            let (dir, name) = self.parent_blaming(&at, create, Verb::Write, &link)?;
            let Ok(target) = readlinkat(&dir, &name, Vec::new()) else {
                return Ok((dir, name));
            };
            if self.links() == Links::Refuse {
                return Err(self.refused(self.shown(&at), Reason::Link, Verb::Write));
            }
            let target = target.as_bytes();
            if target.first().is_none_or(|b| *b == b'/') {
                return Err(self.refused(self.shown(&at), Reason::LinkOutside, Verb::Write));
            }
            link = at.clone();
            at.pop();
            at.extend(path::target_parts(target));
        }
        Err(Errno::LOOP.into())
    }

    /// Writes `bytes` to a new temporary file in `dir` (`mode`, fsynced),
    /// then lets `commit` move it into place, then fsyncs `dir`. The
    /// temporary file is removed unless `commit` consumed it.
    fn via_temp<T>(
        &self,
        dir: &OwnedFd,
        name: &OsStr,
        bytes: &[u8],
        mode: Option<u32>,
        commit: impl FnOnce(&OwnedFd, &OsStr, &mut bool) -> io::Result<Committed<T>>,
    ) -> io::Result<Committed<T>> {
        let tmp = temp_name(name);
        // `O_EXCL` and `O_NOFOLLOW`: a name someone else took (a planted
        // link included) is never written through, nor removed after.
        let fd = openat(
            dir,
            &tmp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(FILE_MODE),
        )?;
        // Set by `commit` once it renamed the file away: the name is then
        // no longer ours (someone may have taken it since).
        let mut moved = false;
        let written = (|| {
            let mut file = File::from(fd);
            file.write_all(bytes)?;
            if let Some(mode) = mode {
                file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            }
            file.sync_all()?;
            drop(file);
            commit(dir, &tmp, &mut moved)
        })();
        if !moved {
            let _ = unlinkat(dir, &tmp, AtFlags::empty());
        }
        if let Ok(Committed::Written) = written {
            sync_dir(dir);
        }
        written
    }
}

fn temp_name(name: &OsStr) -> OsString {
    let mut tmp = b".".to_vec();
    tmp.extend_from_slice(name.as_bytes());
    tmp.extend_from_slice(
        format!(
            ".rein-{}-{}.tmp",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        )
        .as_bytes(),
    );
    OsString::from(OsStr::from_bytes(&tmp))
}

/// The permissions of `name` in `dir` if it is a file there.
fn existing_mode(dir: &OwnedFd, name: &OsStr) -> Option<u32> {
    let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    Some(stat.st_mode & 0o7777)
}

/// Makes a rename in `dir` durable; not fatal if the file system cannot
/// sync a folder.
fn sync_dir(dir: &OwnedFd) {
    if let Ok(fd) = openat(
        dir.as_fd(),
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        let _ = fsync(&fd);
    }
}
