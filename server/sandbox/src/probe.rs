//! What this machine can confine, found by trying it in a throwaway
//! process (`rein sandbox-exec --probe`): namespaces and Landlock change
//! the process that uses them, so Rein never probes in its own.

use serde::{Deserialize, Serialize};

use crate::{files, limits, namespace};

/// What the probe found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Support {
    /// The Landlock ABI the kernel enforces; 0: none (an old kernel, Landlock
    /// not enabled at boot, WSL1, not Linux).
    pub landlock_abi: u32,
    /// Why a network of the command's own cannot be made (user namespaces
    /// refused, e.g. by Ubuntu's AppArmor restriction); `None`: it can.
    pub namespaces_missing: Option<String>,
    /// Running as root, the process limit needs a `pids` cgroup (the kernel
    /// exempts root from `RLIMIT_NPROC`); `false`: none can be made.
    #[serde(default = "yes")]
    pub process_limit: bool,
}

fn yes() -> bool {
    true
}

impl Support {
    /// What is missing, in words; empty when everything is there.
    pub fn missing(&self) -> Vec<String> {
        let mut missing = Vec::new();
        if self.landlock_abi == 0 {
            missing.push(
                "file confinement (this kernel has no Landlock: Linux 5.13+ with Landlock enabled is needed)"
                    .to_owned(),
            );
        }
        if !self.process_limit {
            missing.push(
                "a process limit (running as root, only a pids cgroup can bind processes, and none is writable here)"
                    .to_owned(),
            );
        }
        if let Some(why) = &self.namespaces_missing {
            missing.push(format!(
                "network confinement (user namespaces are not allowed here: {why})"
            ));
        }
        missing
    }
}

/// Tries a network namespace, then Landlock, in this process.
pub fn probe() -> Support {
    let process_limit = !nix::unistd::geteuid().is_root() || limits::pids_cgroup_available();
    let namespaces_missing = namespace::enter_loopback_only()
        .err()
        .map(|e| e.to_string());
    Support {
        landlock_abi: files::probe_abi(),
        namespaces_missing,
        process_limit,
    }
}
