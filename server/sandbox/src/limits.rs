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
/// them), so a command run as root gets a `pids` cgroup of its own with
/// `pids.max`: cgroup v1's `pids` hierarchy, else a v2 hierarchy that
/// delegates `pids`. `Ok(false)`: none is writable here.
pub fn enter_pids_cgroup(max: u64) -> Result<bool, SandboxError> {
    let Some(base) = pids_hierarchy() else {
        return Ok(false);
    };
    clean_stale(&base);
    let dir = base.join(format!("rein-{}", std::process::id()));
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

/// Removes the cgroups earlier commands left (empty ones only: removing a
/// cgroup that still has processes fails, and is left alone).
fn clean_stale(base: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with("rein-") {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}
