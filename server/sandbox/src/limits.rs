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
    // An empty cgroup may be removed by another Rein between its making
    // and our joining (a stale one of a process that just ended, or a
    // task's own at its end): make it again.
    let mut attempts = 0;
    loop {
        attempts += 1;
        let tried = std::fs::create_dir(&dir)
            .or_else(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    Ok(())
                } else {
                    Err(("creating", e))
                }
            })
            .and_then(|()| {
                std::fs::write(dir.join("pids.max"), max.to_string()).map_err(|e| ("limiting", e))
            })
            .and_then(|()| {
                std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string())
                    .map_err(|e| ("joining", e))
            });
        match tried {
            Ok(()) => return Ok(true),
            Err((_, e)) if e.kind() == std::io::ErrorKind::NotFound && attempts < 5 => continue,
            Err((what, e)) => return Err(fail(what, e)),
        }
    }
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
/// (a crash): once per task, not per command. Only those of Rein
/// processes that are gone (`rein-<pid>-<n>`): a live one's may be about
/// to be joined.
pub fn remove_stale_cgroups() {
    let Some(base) = pids_hierarchy() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(&base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if owner_is_gone(&name) {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Whether `name` is a Rein cgroup (`rein-<pid>-<n>`, a probe's
/// `rein-probe-<pid>`) whose process is gone.
fn owner_is_gone(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("rein-") else {
        return false;
    };
    let rest = rest.strip_prefix("probe-").unwrap_or(rest);
    let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
        return false;
    };
    !std::path::Path::new("/proc").join(pid.to_string()).exists()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_cgroups_of_rein_processes_that_are_gone_are_stale() {
        let me = std::process::id();
        assert!(!owner_is_gone(&format!("rein-{me}-0")));
        assert!(owner_is_gone("rein-4294967295-3"));
        assert!(owner_is_gone("rein-probe-4294967295"));
        assert!(!owner_is_gone(&format!("rein-probe-{me}")));
        for other in ["rein-command", "system.slice", "rein-"] {
            assert!(!owner_is_gone(other), "{other}");
        }
    }
}
