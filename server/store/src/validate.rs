//! Cheap checks on what callers hand us, so that a bug shows up as an error
//! at the call that made it rather than as a record nobody can read back.

use std::path::{Component, Path};

use crate::error::StoreError;
use crate::op_values::FileHash;

fn invalid(field: &'static str, reason: impl Into<String>) -> StoreError {
    StoreError::Invalid {
        field,
        reason: reason.into(),
    }
}

/// The JSON columns hold the agent's records; they must at least parse.
pub(crate) fn json(field: &'static str, text: &str) -> Result<(), StoreError> {
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .map(|_| ())
        .map_err(|error| invalid(field, format!("not JSON ({error})")))
}

pub(crate) fn non_empty(field: &'static str, text: &str) -> Result<(), StoreError> {
    if text.is_empty() {
        Err(invalid(field, "empty"))
    } else {
        Ok(())
    }
}

/// A content hash is 64 lowercase hex digits (BLAKE3, as `rein-text`'s
/// `ContentHash::to_hex` writes it), or empty for "the file did not exist".
pub(crate) fn hashes(field: &'static str, files: &[FileHash]) -> Result<(), StoreError> {
    for file in files {
        non_empty(field, &file.path)?;
        let hash = &file.hash;
        let ok = hash.is_empty()
            || (hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
        if !ok {
            let reason = format!(
                "the hash of {:?} is {hash:?}; expected 64 lowercase hex digits, or \"\" for a file that does not exist",
                file.path
            );
            return Err(invalid(field, reason));
        }
    }
    Ok(())
}

/// An artifact's path is relative to `.rein/artifacts/<task>/` and stays
/// inside it.
pub(crate) fn rel_path(field: &'static str, path: &str) -> Result<(), StoreError> {
    non_empty(field, path)?;
    let inside = Path::new(path)
        .components()
        .all(|part| matches!(part, Component::Normal(_)));
    if inside && !path.contains('\\') {
        Ok(())
    } else {
        Err(invalid(
            field,
            format!(
                "{path:?} must be a relative path inside the task's artifact directory (no `..`, `.`, root or `\\`)"
            ),
        ))
    }
}
