//! Relative paths as lists of components.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path};

/// A path beneath a root, as components. A caller's path never holds
/// `..` ([`parse`]); one made by following a link may.
pub(crate) type Parts = Vec<OsString>;

/// What is wrong with a caller's path.
pub(crate) struct NotBeneath;

/// The components of a caller's path: relative, without `..` (`.` and
/// empty components dropped).
pub(crate) fn parse(path: &Path) -> Result<Parts, NotBeneath> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_owned()),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(NotBeneath);
            }
        }
    }
    Ok(parts)
}

/// The components of a link's target (`..` kept; empty and `.` dropped).
pub(crate) fn target_parts(target: &[u8]) -> Parts {
    target
        .split(|b| *b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .map(|c| OsString::from_vec(c.to_vec()))
        .collect()
}

/// `a/b/c`, for messages and for `openat2` (`.` for no components).
pub(crate) fn join(parts: &[OsString]) -> OsString {
    if parts.is_empty() {
        return OsString::from(".");
    }
    let mut out = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(part.as_bytes());
    }
    OsString::from_vec(out)
}

/// How a path is named in messages: the root's prefix (`.rein/`), then
/// the components.
pub(crate) fn shown(prefix: &str, parts: &[OsString]) -> String {
    let mut text = prefix.to_owned();
    if !parts.is_empty() {
        text.push_str(&join(parts).to_string_lossy());
    }
    let text = text.trim_end_matches('/');
    if text.is_empty() {
        ".".into()
    } else {
        text.to_owned()
    }
}

pub(crate) fn is_dots(part: &OsStr) -> bool {
    part == ".." || part == "."
}
