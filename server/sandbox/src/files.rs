//! File confinement with Landlock: the command may reach only the
//! hierarchies a [`FileAccess`] lists.
//!
//! Landlock only ever adds access (a rule on a directory covers all of it),
//! so a path to keep out of a granted hierarchy — `~/.ssh` under a granted
//! home, `.rein/` under a writable workspace — is taken out by granting the
//! hierarchy's other entries one by one instead ([`subtract`]).

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope,
};

use crate::SandboxError;
use crate::policy::FileAccess;

/// The newest Landlock ABI Rein asks for; older kernels get what they
/// support of it (best effort), and [`apply`] says how much was enforced.
const ABI_WANTED: ABI = ABI::V6;

/// How far a directory is expanded to take a path out of it: deeper
/// exclusions are refused rather than walked without end.
const MAX_SUBTRACT_DEPTH: usize = 8;

/// What the kernel enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enforced {
    Fully,
    /// An older Landlock: some rights (truncate, device ioctls, refer) are
    /// not confined.
    Partially,
}

/// Applies `access` to this thread (and what it executes).
/// `mounted`: the read-only and denied paths are already read-only and
/// hidden mounts (namespaces), so the roots need not be carved around them
/// — which costs a rule per sibling, and takes the right to create files
/// in a write root itself.
pub fn apply(access: &FileAccess, mounted: bool) -> Result<Enforced, SandboxError> {
    let fail = |step: &'static str| {
        move |e: landlock::RulesetError| SandboxError::Apply {
            step,
            reason: e.to_string(),
        }
    };
    let abi = ABI_WANTED;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let file = AccessFs::from_file(abi);

    let deny = if mounted {
        Vec::new()
    } else {
        existing(&access.deny)
    };
    let mut exclude = deny.clone();
    if !mounted {
        exclude.extend(existing(&access.read_only));
    }
    // A private layer is written like a write root; that the machine never
    // sees it is the mount's doing (see [`crate::view`]).
    let mut write = access.write.clone();
    write.extend(access.private_write.iter().cloned());
    let writable = subtract(&existing(&write), &exclude)?;
    let readable = subtract(&existing(&access.read), &deny)?;
    // What is read-only below a write root stays readable (unless denied).
    let read_only = subtract(&existing(&access.read_only), &deny)?;

    let mut ruleset = Ruleset::default()
        // Never fail because the kernel is older: the status says what held.
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(fail("handled rights"))?
        // Signals and abstract Unix sockets only within the command's own
        // processes (Landlock ABI 6); a PID and a network namespace of its
        // own do the same where the machine has them.
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(fail("scopes"))?
        .create()
        .map_err(fail("creating the ruleset"))?;
    for (paths, rights) in [
        (&readable, read),
        (&read_only, read),
        (&writable, all),
        (&existing(&access.files), file),
    ] {
        for path in paths {
            let fd = PathFd::new(path).map_err(|e| SandboxError::Apply {
                step: "opening a path",
                reason: format!("{}: {e}", path.display()),
            })?;
            // A file below a directory rule takes only file rights.
            let rights = if path.is_dir() { rights } else { rights & file };
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, rights))
                .map_err(fail("adding a rule"))?;
        }
    }
    let status = ruleset
        .restrict_self()
        .map_err(fail("restricting the process"))?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(Enforced::Fully),
        RulesetStatus::PartiallyEnforced => Ok(Enforced::Partially),
        RulesetStatus::NotEnforced => Err(SandboxError::Apply {
            step: "landlock",
            reason: "this kernel does not enforce Landlock".to_owned(),
        }),
    }
}

/// Restricts this process with an empty ruleset and reports the Landlock
/// ABI the kernel enforced (0: none). Only for a throwaway probe process:
/// afterwards it can reach no file.
pub fn probe_abi() -> u32 {
    let restricted = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(ABI_WANTED))
        .and_then(|r| r.create())
        .and_then(|r| r.restrict_self());
    match restricted {
        Ok(status) if status.ruleset != RulesetStatus::NotEnforced => match status.landlock {
            landlock::LandlockStatus::Available { effective_abi, .. } => effective_abi as u32,
            _ => 0,
        },
        _ => 0,
    }
}

/// The paths of `paths` that exist, canonical (public: what can be
/// mounted read-only).
pub fn existing_paths(paths: &[PathBuf]) -> Vec<PathBuf> {
    existing(paths)
}

/// The paths of `paths` that exist, canonical (a rule is tied to what a
/// path resolves to, and exclusions are compared after resolution).
fn existing(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = paths
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `roots` without `excluded`: a root that is excluded, or lies below an
/// excluded path, goes; a root with an excluded path below it is replaced
/// by its entries, recursively along the way to that path.
pub fn subtract(roots: &[PathBuf], excluded: &[PathBuf]) -> Result<Vec<PathBuf>, SandboxError> {
    let mut out = Vec::new();
    for root in roots {
        subtract_one(root, excluded, 0, &mut out)?;
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn subtract_one(
    root: &Path,
    excluded: &[PathBuf],
    depth: usize,
    out: &mut Vec<PathBuf>,
) -> Result<(), SandboxError> {
    if excluded.iter().any(|e| root.starts_with(e)) {
        return Ok(());
    }
    if !excluded.iter().any(|e| e.starts_with(root)) {
        out.push(root.to_path_buf());
        return Ok(());
    }
    if depth >= MAX_SUBTRACT_DEPTH {
        return Err(SandboxError::Apply {
            step: "file rules",
            reason: format!(
                "cannot keep a path {MAX_SUBTRACT_DEPTH} levels below {} out of reach",
                root.display()
            ),
        });
    }
    let entries = std::fs::read_dir(root).map_err(|e| SandboxError::Apply {
        step: "file rules",
        reason: format!("{}: {e}", root.display()),
    })?;
    for entry in entries.flatten() {
        let path = entry.path();
        // A symlink below is granted as what it points to only if that is
        // not excluded either.
        let resolved = std::fs::canonicalize(&path).unwrap_or(path);
        subtract_one(&resolved, excluded, depth + 1, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_denied_path_is_carved_out_of_the_root_above_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in [
            "home/.ssh",
            "home/.cargo/bin",
            "home/.cargo/registry",
            "home/src",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("home/.netrc"), "x").unwrap();
        let home = root.join("home");
        let kept = subtract(
            std::slice::from_ref(&home),
            &[
                home.join(".ssh"),
                home.join(".cargo/bin"),
                home.join(".netrc"),
            ],
        )
        .unwrap();
        let shown: Vec<String> = kept
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        assert_eq!(shown, ["home/.cargo/registry", "home/src"]);
        // A root that is itself excluded, or below an exclusion, goes whole.
        assert!(
            subtract(&[home.join(".ssh")], std::slice::from_ref(&home))
                .unwrap()
                .is_empty()
        );
        // Nothing excluded below: the root stays whole.
        assert_eq!(subtract(std::slice::from_ref(&home), &[]).unwrap(), [home]);
    }
}
