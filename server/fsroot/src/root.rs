//! [`Root`]: a folder handle, and reading beneath it.

use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{CWD, Dir, Mode, OFlags, mkdirat, openat};
use rustix::io::Errno;

use crate::path::{self, Parts};
use crate::refused::{Reason, Refused, Verb};
use crate::resolve::{Fail, Links, Open, Resolver, resolve};

/// A folder every path is resolved beneath (see the crate's docs).
/// Cheap to clone: clones share the handle.
#[derive(Clone)]
pub struct Root {
    fd: Arc<OwnedFd>,
    path: PathBuf,
    /// How the root is named in messages (`.rein/` for Rein's state
    /// folder, nothing for a workspace).
    prefix: String,
    links: Links,
    resolver: Resolver,
    hint: Option<&'static str>,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Root")
            .field("path", &self.path)
            .field("links", &self.links)
            .field("resolver", &self.resolver)
            .finish()
    }
}

impl Root {
    /// The folder at `path` as a root. `path` itself is trusted (the user
    /// named it, or Rein chose it) and followed as it is; only what lies
    /// beneath is resolved under the rules.
    pub fn open(path: impl AsRef<Path>, links: Links) -> io::Result<Root> {
        let path = path.as_ref();
        let fd = openat(
            CWD,
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Root {
            fd: Arc::new(fd),
            path: path.to_owned(),
            prefix: String::new(),
            links,
            resolver: Resolver::best(),
            hint: None,
        })
    }

    /// Resolves with `resolver` from now on (tests of the walk use
    /// `Resolver::Walk`; `Kernel` on a kernel without `openat2` stays a walk).
    pub fn with_resolver(mut self, resolver: Resolver) -> Root {
        self.resolver = match resolver {
            Resolver::Kernel => Resolver::best(),
            Resolver::Walk => Resolver::Walk,
        };
        self
    }

    /// Adds what the user can do to every refusal's message.
    pub fn with_hint(mut self, hint: &'static str) -> Root {
        self.hint = Some(hint);
        self
    }

    /// The path the root was opened at (for messages: the handle, not
    /// this path, is what is used).
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn links(&self) -> Links {
        self.links
    }

    pub fn resolver(&self) -> Resolver {
        self.resolver
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// `rel` as components, or a refusal if it is absolute or has `..`.
    pub(crate) fn parts(&self, rel: &Path, verb: Verb) -> io::Result<Parts> {
        path::parse(rel).map_err(|path::NotBeneath| {
            self.refused(
                format!("{}{}", self.prefix, rel.display()),
                Reason::NotBeneath,
                verb,
            )
        })
    }

    pub(crate) fn refused(&self, path: String, reason: Reason, verb: Verb) -> io::Error {
        Refused {
            path,
            reason,
            verb,
            hint: self.hint,
        }
        .into_io()
    }

    /// A failed resolution as an error; a refusal that names no link
    /// blames `given`.
    pub(crate) fn fail(&self, fail: Fail, given: &[OsString], verb: Verb) -> io::Error {
        match fail {
            Fail::Os(e) => e.into(),
            Fail::Refused { at, reason } => {
                let at = if at.is_empty() { given } else { &at[..] };
                self.refused(path::shown(&self.prefix, at), reason, verb)
            }
        }
    }

    /// How a path beneath the root is named in messages.
    pub(crate) fn shown(&self, parts: &[OsString]) -> String {
        path::shown(&self.prefix, parts)
    }

    /// Opens `parts` beneath the root.
    pub(crate) fn open_parts(
        &self,
        parts: &[OsString],
        open: Open,
        verb: Verb,
    ) -> io::Result<OwnedFd> {
        self.open_blaming(parts, open, verb, parts)
    }

    /// Opens `parts` beneath the root; a refusal that names no link names
    /// `blame` (the link whose target `parts` came from).
    pub(crate) fn open_blaming(
        &self,
        parts: &[OsString],
        open: Open,
        verb: Verb,
        blame: &[OsString],
    ) -> io::Result<OwnedFd> {
        resolve(self.fd(), parts, open, self.links, self.resolver)
            .map_err(|fail| self.fail(fail, blame, verb))
    }

    /// The folder holding the last component of `parts`, opened beneath
    /// the root (made with its parents if `create`), and that component.
    pub(crate) fn parent(
        &self,
        parts: &[OsString],
        create: bool,
        verb: Verb,
    ) -> io::Result<(OwnedFd, OsString)> {
        self.parent_blaming(parts, create, verb, parts)
    }

    pub(crate) fn parent_blaming(
        &self,
        parts: &[OsString],
        create: bool,
        verb: Verb,
        blame: &[OsString],
    ) -> io::Result<(OwnedFd, OsString)> {
        let Some((name, dirs)) = parts.split_last() else {
            return Err(Errno::ISDIR.into());
        };
        if path::is_dots(name) {
            return Err(Errno::ISDIR.into());
        }
        let dir = if create {
            self.make_dirs(dirs, verb, blame)?
        } else {
            self.open_blaming(dirs, Open::dir(), verb, blame)?
        };
        Ok((dir, name.clone()))
    }

    /// The folder `parts`, made with its parents as needed: each missing
    /// one is made relative to its parent's handle (`mkdirat`), then the
    /// path is resolved again beneath the root.
    pub(crate) fn make_dirs(
        &self,
        parts: &[OsString],
        verb: Verb,
        blame: &[OsString],
    ) -> io::Result<OwnedFd> {
        match self.open_blaming(parts, Open::dir(), verb, blame) {
            Err(e) if is(&e, Errno::NOENT) => {}
            other => return other,
        }
        let mut dir = self.open_parts(&[], Open::dir(), verb)?;
        for i in 1..=parts.len() {
            let prefix = &parts[..i];
            dir = match self.open_blaming(prefix, Open::dir(), verb, blame) {
                Ok(fd) => fd,
                Err(e) if is(&e, Errno::NOENT) => {
                    match mkdirat(&dir, &parts[i - 1], Mode::from_raw_mode(DIR_MODE)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                    self.open_blaming(prefix, Open::dir(), verb, blame)?
                }
                Err(e) if is(&e, Errno::NOTDIR) => {
                    return Err(io::Error::new(
                        io::ErrorKind::NotADirectory,
                        format!("{} is a file, not a folder", self.shown(prefix)),
                    ));
                }
                Err(e) => return Err(e),
            };
        }
        Ok(dir)
    }

    /// A folder beneath, as a root of its own that follows the same links
    /// (made with its parents if `create`).
    pub fn dir(&self, rel: impl AsRef<Path>, create: bool) -> io::Result<Root> {
        let rel = rel.as_ref();
        let verb = if create { Verb::Write } else { Verb::Read };
        let parts = self.parts(rel, verb)?;
        let fd = if create {
            self.make_dirs(&parts, verb, &parts)?
        } else {
            self.open_parts(&parts, Open::dir(), verb)?
        };
        Ok(Root {
            fd: Arc::new(fd),
            path: self.path.join(rel),
            prefix: format!("{}/", self.shown(&parts)),
            links: self.links,
            resolver: self.resolver,
            hint: self.hint,
        })
    }

    /// The file at `rel`, open for reading (links followed as the root
    /// allows). Whatever it is (a folder, a pipe) is the caller's to check
    /// on the handle.
    pub fn open_file(&self, rel: impl AsRef<Path>) -> io::Result<File> {
        let parts = self.parts(rel.as_ref(), Verb::Read)?;
        // `O_NONBLOCK`: opening a FIFO must not hang; reads of a regular
        // file ignore it.
        let open = Open {
            flags: OFlags::RDONLY | OFlags::NONBLOCK,
            mode: Mode::empty(),
            follow_last: true,
        };
        let fd = self.open_parts(&parts, open, Verb::Read)?;
        let file = File::from(fd);
        clear_nonblock(&file);
        Ok(file)
    }

    /// The whole file at `rel`.
    pub fn read(&self, rel: impl AsRef<Path>) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.open_file(rel)?.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// The whole file at `rel`, as UTF-8.
    pub fn read_to_string(&self, rel: impl AsRef<Path>) -> io::Result<String> {
        let mut text = String::new();
        self.open_file(rel)?.read_to_string(&mut text)?;
        Ok(text)
    }

    /// What `rel` is (links followed as the root allows).
    pub fn metadata(&self, rel: impl AsRef<Path>) -> io::Result<Metadata> {
        let parts = self.parts(rel.as_ref(), Verb::Read)?;
        let open = Open {
            flags: OFlags::PATH,
            mode: Mode::empty(),
            follow_last: true,
        };
        File::from(self.open_parts(&parts, open, Verb::Read)?).metadata()
    }

    /// What `rel` itself is: a link is not followed (its folder is
    /// resolved as the root allows).
    pub fn symlink_metadata(&self, rel: impl AsRef<Path>) -> io::Result<Metadata> {
        let parts = self.parts(rel.as_ref(), Verb::Read)?;
        if parts.is_empty() {
            return File::from(self.fd.try_clone()?).metadata();
        }
        let (dir, name) = self.parent(&parts, false, Verb::Read)?;
        let fd = openat(
            &dir,
            &name,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        File::from(fd).metadata()
    }

    /// The names in the folder at `rel`, in no particular order.
    pub fn read_dir(&self, rel: impl AsRef<Path>) -> io::Result<Vec<OsString>> {
        let parts = self.parts(rel.as_ref(), Verb::Read)?;
        let open = Open {
            flags: OFlags::RDONLY | OFlags::DIRECTORY,
            mode: Mode::empty(),
            follow_last: true,
        };
        let mut dir = Dir::new(self.open_parts(&parts, open, Verb::Read)?)?;
        let mut names = Vec::new();
        while let Some(entry) = dir.read() {
            let name = entry?.file_name().to_bytes().to_vec();
            if name != b"." && name != b".." {
                names.push(OsString::from(std::ffi::OsStr::from_bytes(&name)));
            }
        }
        Ok(names)
    }
}

/// New folders: `0o777` less the umask, as `std::fs` makes them.
const DIR_MODE: u32 = 0o777;

fn is(e: &io::Error, errno: Errno) -> bool {
    e.raw_os_error() == Some(errno.raw_os_error())
}

/// Back to blocking reads once open (a FIFO opened non-blocking would
/// otherwise read as empty).
fn clear_nonblock(file: &File) {
    if let Ok(flags) = rustix::fs::fcntl_getfl(file) {
        let _ = rustix::fs::fcntl_setfl(file, flags - OFlags::NONBLOCK);
    }
}
