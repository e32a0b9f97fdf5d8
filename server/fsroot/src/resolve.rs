//! Resolving a path beneath a folder handle and opening what it names, in
//! one step: the kernel's `openat2(RESOLVE_BENEATH)`, or a walk.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;

use rustix::fs::{
    AtFlags, CWD, FileType, Mode, OFlags, ResolveFlags, fstat, openat, openat2, readlinkat, statat,
};
use rustix::io::Errno;

use crate::path::{self, Parts};
use crate::refused::Reason;

/// Which symbolic links a root follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// Those that stay beneath the root (a workspace's own links); an
    /// absolute one, one climbing out and magic links are refused.
    Within,
    /// None (Rein's own folders: a link there was planted).
    Refuse,
}

/// How paths are resolved. Both are race-free; they differ in speed only
/// (and `Kernel` needs Linux ≥ 5.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolver {
    /// `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS` (and
    /// `RESOLVE_NO_SYMLINKS` under [`Links::Refuse`]); when it refuses, the
    /// walk resolves again to name the link (or finds it changed back).
    Kernel,
    /// One component at a time, each opened `O_NOFOLLOW` relative to the
    /// folder before it; links read with `readlinkat` and followed by
    /// hand under the same rules.
    Walk,
}

impl Resolver {
    /// `Kernel` where this kernel has `openat2`, else `Walk`.
    pub fn best() -> Resolver {
        static KERNEL: OnceLock<bool> = OnceLock::new();
        let kernel = *KERNEL.get_or_init(|| {
            let probe = openat2(
                CWD,
                ".",
                OFlags::PATH | OFlags::CLOEXEC,
                Mode::empty(),
                ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
            );
            // No such call (< 5.6), or a seccomp filter that hides it; any
            // other answer (a deleted working directory) means it is there.
            !matches!(probe, Err(Errno::NOSYS | Errno::PERM | Errno::INVAL))
        });
        if kernel {
            Resolver::Kernel
        } else {
            Resolver::Walk
        }
    }
}

/// As Linux's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// How often the walk opens a component again that changed between a
/// link and a folder (or file) under it, before giving up.
const MAX_RETRIES: usize = 16;

/// `openat2` says `EAGAIN` when a rename elsewhere raced a `..` in the
/// path; after this many tries the walk takes over.
const KERNEL_TRIES: usize = 4;

/// Why a resolution failed.
#[derive(Debug)]
pub(crate) enum Fail {
    Os(Errno),
    /// `at`: the link's components from the root (empty: the caller's
    /// own path is to blame).
    Refused {
        at: Parts,
        reason: Reason,
    },
}

impl From<Errno> for Fail {
    fn from(e: Errno) -> Self {
        Fail::Os(e)
    }
}

/// What to open at the end of a path.
#[derive(Clone, Copy)]
pub(crate) struct Open {
    pub(crate) flags: OFlags,
    pub(crate) mode: Mode,
    /// Whether a link as the last component is followed (under the
    /// root's [`Links`]); if not, it is refused.
    pub(crate) follow_last: bool,
}

impl Open {
    /// A folder, as a handle for `*at` calls.
    pub(crate) fn dir() -> Open {
        Open {
            flags: OFlags::PATH | OFlags::DIRECTORY,
            mode: Mode::empty(),
            follow_last: true,
        }
    }
}

/// Opens `parts` beneath `root`.
pub(crate) fn resolve(
    root: BorrowedFd<'_>,
    parts: &[OsString],
    open: Open,
    links: Links,
    resolver: Resolver,
) -> Result<OwnedFd, Fail> {
    if resolver == Resolver::Kernel {
        let mut how = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        if links == Links::Refuse {
            how |= ResolveFlags::NO_SYMLINKS;
        }
        let mut flags = open.flags | OFlags::CLOEXEC;
        if !open.follow_last {
            flags |= OFlags::NOFOLLOW;
        }
        let path = path::join(parts);
        for _ in 0..KERNEL_TRIES {
            match openat2(root, &path, flags, open.mode, how) {
                Ok(fd) => return Ok(fd),
                Err(Errno::AGAIN) => continue,
                // A link refused, or a loop: the walk says which.
                Err(Errno::XDEV | Errno::LOOP) => break,
                Err(e) => return Err(Fail::Os(e)),
            }
        }
    }
    walk(root, parts, open, links)
}

/// The walk: a stack of folder handles, each opened `O_NOFOLLOW` from the
/// one below it (`..` pops, and may not pop the root); a link met on the
/// way is read and its target's components put in front of the rest.
fn walk(
    root: BorrowedFd<'_>,
    parts: &[OsString],
    open: Open,
    links: Links,
) -> Result<OwnedFd, Fail> {
    let mut queue: VecDeque<OsString> = parts.iter().cloned().collect();
    // Each folder entered, with its name (for messages).
    let mut stack: Vec<(OwnedFd, OsString)> = Vec::new();
    let mut followed = 0;
    let mut retries = 0;
    // The last link followed: a `..` climbing out is its doing.
    let mut via: Parts = Vec::new();
    loop {
        let cur = stack.last().map_or(root, |(fd, _)| fd.as_fd());
        let Some(part) = queue.pop_front() else {
            // The path ends at a folder (`a/..`, or no component at all).
            return Ok(openat(cur, ".", open.flags | OFlags::CLOEXEC, open.mode)?);
        };
        if part == "." {
            continue;
        }
        if part == ".." {
            if stack.pop().is_none() {
                return Err(Fail::Refused {
                    at: via,
                    reason: Reason::LinkOutside,
                });
            }
            continue;
        }
        let last = queue.is_empty();
        let flags = if last {
            open.flags | OFlags::NOFOLLOW | OFlags::CLOEXEC
        } else {
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
        };
        let mode = if last { open.mode } else { Mode::empty() };
        let failure = match openat(cur, &part, flags, mode) {
            // `O_PATH | O_NOFOLLOW` opens a link itself.
            Ok(fd) if flags.contains(OFlags::PATH) && is_link(&fd) => Errno::LOOP,
            Ok(fd) if last => return Ok(fd),
            Ok(fd) => {
                stack.push((fd, part));
                continue;
            }
            Err(e) => e,
        };
        if !matches!(failure, Errno::LOOP | Errno::NOTDIR) {
            return Err(Fail::Os(failure));
        }
        let mut at: Parts = stack.iter().map(|(_, name)| name.clone()).collect();
        at.push(part.clone());
        let Ok(target) = readlinkat(cur, &part, Vec::new()) else {
            // No link now. A folder or a link again, or a last component
            // that was a link when opened: it is being swapped; open it
            // again. Else (a file where a folder should be) the error
            // stands.
            let swapping = statat(cur, &part, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
                matches!(
                    FileType::from_raw_mode(st.st_mode),
                    FileType::Directory | FileType::Symlink
                )
            });
            if !(swapping || failure == Errno::LOOP) {
                return Err(Fail::Os(failure));
            }
            retries += 1;
            if retries > MAX_RETRIES {
                return Err(Fail::Refused {
                    at,
                    reason: Reason::Changing,
                });
            }
            queue.push_front(part);
            continue;
        };
        if links == Links::Refuse || (last && !open.follow_last) {
            return Err(Fail::Refused {
                at,
                reason: Reason::Link,
            });
        }
        let target = target.as_bytes();
        if target.first().is_none_or(|b| *b == b'/') {
            return Err(Fail::Refused {
                at,
                reason: Reason::LinkOutside,
            });
        }
        followed += 1;
        if followed > MAX_LINKS {
            return Err(Fail::Os(Errno::LOOP));
        }
        via = at;
        // (A target of `.` adds nothing: the walk then ends at `cur`.)
        for part in path::target_parts(target).into_iter().rev() {
            queue.push_front(part);
        }
    }
}

fn is_link(fd: &OwnedFd) -> bool {
    fstat(fd).is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
}
