//! Rein's own files, opened beneath a folder in one step.
//!
//! A [`Root`] is a handle on a folder (the workspace, `.rein/`, a report
//! folder). Every path given to it is relative, and every read, write,
//! creation, rename or removal resolves that path *from the handle* and
//! acts on what it found in the same system call, never by name after a
//! check: nothing in between can swap a folder for a symbolic link and
//! make Rein write elsewhere (issue 32: a leftover process swapping `d`
//! for a link to `~/.config/rein` while the model calls
//! `create_file d/config.toml`).
//!
//! - **Resolution** ([`Resolver`]): `openat2(RESOLVE_BENEATH |
//!   RESOLVE_NO_MAGICLINKS)` where the kernel has it (Linux ≥ 5.6); else,
//!   and to name the culprit when the kernel refuses, a walk one
//!   component at a time, each opened `O_NOFOLLOW` relative to the last
//!   (race-free too), which follows only the links it may.
//! - **Links** ([`Links`]): in a workspace, a symbolic link is followed
//!   while it stays beneath the root (a relative target, `..` never
//!   climbing above it); an absolute one, one climbing out, and the
//!   kernel's magic links (`/proc/self/root`) are refused
//!   ([`Refused`]). Rein's own folders follow none.
//! - **Changing a name** (rename, removal, folder or file creation): the
//!   parent folder is opened beneath the root, then the last component is
//!   acted on relative to that handle, never following it.
//! - **Writes** are atomic: a temporary file created in the parent handle
//!   (`O_CREAT | O_EXCL | O_NOFOLLOW`), written, fsynced, renamed over the
//!   name, the folder fsynced. A file that is an in-workspace link is
//!   replaced at its target, the link kept.
//!
//! Errors are [`std::io::Error`]s; a refusal carries a [`Refused`] (see
//! [`refusal`]) whose text tells the model which part of the path is the
//! link and that Rein does not go through it. Linux only, no `unsafe`
//! (`rustix` wraps the system calls).

mod path;
mod refused;
mod resolve;
mod root;
mod write;

pub use refused::{Reason, Refused, Verb, refusal};
pub use resolve::{Links, Resolver};
pub use root::Root;
pub use write::Committed;
