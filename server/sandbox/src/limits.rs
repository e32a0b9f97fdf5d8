//! Resource limits, set in the command's process before it runs, so a
//! fork bomb, a runaway file or a memory hog stops at a bound the user
//! chose instead of at the machine's.

use nix::sys::resource::{Resource, getrlimit, setrlimit};

use crate::SandboxError;
use crate::policy::Limits;

/// Applies `limits`: each only ever lowers what the process already has.
pub fn apply(limits: &Limits) -> Result<(), SandboxError> {
    for (resource, value, name) in [
        (Resource::RLIMIT_NPROC, limits.processes, "processes"),
        (Resource::RLIMIT_FSIZE, limits.file_bytes, "file size"),
        (Resource::RLIMIT_AS, limits.memory_bytes, "memory"),
    ] {
        let Some(value) = value else { continue };
        let (_, hard) = getrlimit(resource).map_err(|e| SandboxError::Apply {
            step: "limits",
            reason: format!("reading the {name} limit: {e}"),
        })?;
        let value = value.min(hard);
        setrlimit(resource, value, value).map_err(|e| SandboxError::Apply {
            step: "limits",
            reason: format!("the {name} limit: {e}"),
        })?;
    }
    Ok(())
}

/// Root's processes are not bound by `RLIMIT_NPROC` (the kernel exempts
/// them), so a command run as root joins a `pids` cgroup `name` with
/// `pids.max` (made if missing): cgroup v1's `pids` hierarchy, else a v2
/// hierarchy that delegates `pids`. `Ok(false)`: none is writable here.
/// A task's commands share one cgroup: made once, removed by
/// [`remove_pids_cgroup`] when the task ends (removing a cgroup waits for
/// the kernel, which made it the slowest step when done per command).
pub fn enter_pids_cgroup(name: &str, max: u64) -> Result<bool, SandboxError> {
    let Some(base) = pids_hierarchy() else {
        return Ok(false);
    };
    let dir = base.join(valid_name(name)?);
    let fail = |what: &str, e: std::io::Error| SandboxError::Apply {
        step: "process limit",
        reason: format!("{what} {}: {e}", dir.display()),
    };
    match std::fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(fail("creating", e)),
    }
    std::fs::write(dir.join("pids.max"), max.to_string()).map_err(|e| fail("limiting", e))?;
    std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string())
        .map_err(|e| fail("joining", e))?;
    Ok(true)
}

/// Removes the cgroup `name` (once its processes are gone: a cgroup that
/// still has some is left, and is removed by a later
/// [`remove_stale_cgroups`]).
pub fn remove_pids_cgroup(name: &str) {
    if let (Some(base), Ok(name)) = (pids_hierarchy(), valid_name(name)) {
        let _ = std::fs::remove_dir(base.join(name));
    }
}

/// Removes the empty cgroups of tasks that ended without removing theirs
/// (a crash): once per task, not per command.
pub fn remove_stale_cgroups() {
    let Some(base) = pids_hierarchy() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(&base) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with("rein-") {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// A cgroup name Rein made: `rein-` and then letters, digits and dashes, so
/// a policy cannot point a command at another cgroup.
fn valid_name(name: &str) -> Result<&str, SandboxError> {
    let ok = name.starts_with("rein-")
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if ok {
        Ok(name)
    } else {
        Err(SandboxError::BadPolicy(format!("cgroup name {name:?}")))
    }
}

/// Whether a `pids` cgroup can be made here (for the probe): made and
/// removed at once.
pub fn pids_cgroup_available() -> bool {
    let Some(base) = pids_hierarchy() else {
        return false;
    };
    let dir = base.join(format!("rein-probe-{}", std::process::id()));
    let made = std::fs::create_dir(&dir).is_ok() && dir.join("pids.max").exists();
    let _ = std::fs::remove_dir(&dir);
    made
}

/// A cgroup directory where a child with `pids.max` can be made.
fn pids_hierarchy() -> Option<std::path::PathBuf> {
    let v1 = std::path::Path::new("/sys/fs/cgroup/pids");
    if v1.join("cgroup.procs").exists() {
        return Some(v1.to_path_buf());
    }
    ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .into_iter()
        .map(std::path::Path::new)
        .find(|dir| {
            std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                .is_ok_and(|c| c.split_whitespace().any(|w| w == "pids"))
        })
        .map(std::path::Path::to_path_buf)
}
