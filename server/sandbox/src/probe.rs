//! What this machine can confine, found by trying it in a throwaway
//! process (`rein sandbox-exec --probe`): namespaces and Landlock change
//! the process that uses them, so Rein never probes in its own.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::policy::{FileAccess, Policy};
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
    /// Why a root of its own cannot be made for a command (sockets outside
    /// the workspace then stay reachable); `None`: it can.
    #[serde(default = "not_probed")]
    pub root_missing: Option<String>,
    /// Why a PID namespace cannot be made (processes may then outlive
    /// their command); `None`: it can.
    #[serde(default = "not_probed")]
    pub processes_missing: Option<String>,
    /// Whether package caches can be written in a private layer (overlayfs
    /// in a user namespace); otherwise they are read-only to commands.
    #[serde(default)]
    pub private_layers: bool,
}

fn not_probed() -> Option<String> {
    Some("not probed".to_owned())
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
        if self.namespaces_missing.is_none() {
            if let Some(why) = &self.root_missing {
                missing.push(format!(
                    "a root of the command's own, so Unix sockets outside the workspace stay reachable ({why})"
                ));
            }
            if let Some(why) = &self.processes_missing {
                missing.push(format!(
                    "a PID namespace, so processes a command starts may outlive it ({why})"
                ));
            }
        }
        missing
    }
}

/// Tries a root and a PID namespace of a command's own in trial commands
/// (children), then a network namespace and Landlock in this process.
pub fn probe() -> Support {
    let process_limit = !nix::unistd::geteuid().is_root() || limits::pids_cgroup_available();
    let trials = trials();
    let namespaces_missing = namespace::enter_loopback_only()
        .err()
        .map(|e| e.to_string());
    let landlock_abi = files::probe_abi();
    let (root_missing, processes_missing, private_layers) = match trials {
        Ok(found) => found,
        Err(why) => (Some(why.clone()), Some(why), false),
    };
    Support {
        landlock_abi,
        namespaces_missing,
        process_limit,
        root_missing,
        processes_missing,
        private_layers,
    }
}

/// What a trial of each part found: (root, processes, private layers).
type Found = (Option<String>, Option<String>, bool);

/// Runs `sh` under a policy with a root and a PID namespace of its own,
/// then, if that fails, under each alone, and checks what it saw: a
/// folder it must not, its own PID, and its write to a private layer.
fn trials() -> Result<Found, String> {
    let scratch = Scratch::new()?;
    let (outside, private, work) = (
        scratch.0.join("outside"),
        scratch.0.join("cache"),
        scratch.0.join("work"),
    );
    for dir in [&outside, &private, &work] {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    let run = |own_root: bool, own_processes: bool| -> Result<String, String> {
        let mut read: Vec<PathBuf> = [
            "/usr", "/bin", "/lib", "/lib64", "/lib32", "/etc", "/proc", "/dev",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        read.push(work.clone());
        let policy = Policy {
            files: own_root.then(|| FileAccess {
                read,
                write: vec![work.clone()],
                private_write: vec![private.clone()],
                ..FileAccess::default()
            }),
            namespaces: true,
            own_root,
            own_processes,
            ..Policy::default()
        };
        let script = format!(
            "echo \"pid $$\"; [ -e '{}' ] && echo outside-seen; echo x > '{}/written' && echo layer-written",
            outside.display(),
            private.display()
        );
        let out = std::process::Command::new("/proc/self/exe")
            .arg(crate::SUBCOMMAND)
            .arg("--policy")
            .arg(policy.to_arg())
            .arg("--")
            .args(["/bin/sh", "-c", &script])
            .current_dir(&work)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            Ok(said)
        } else {
            let why = String::from_utf8_lossy(&out.stderr);
            let why = why.trim().trim_start_matches("rein sandbox-exec: ");
            Err(if why.is_empty() {
                format!("the trial command failed ({})", out.status)
            } else {
                why.to_owned()
            })
        }
    };
    let judge_root = |said: &str| {
        if said.contains("outside-seen") {
            Some("a trial command saw a folder outside its root".to_owned())
        } else {
            None
        }
    };
    let judge_pids = |said: &str| {
        if said.lines().any(|l| l == "pid 2") {
            None
        } else {
            Some("a trial command did not run as the second process of its namespace".to_owned())
        }
    };
    let layered = |said: &str| said.contains("layer-written") && !private.join("written").exists();
    match run(true, true) {
        Ok(said) => Ok((judge_root(&said), judge_pids(&said), layered(&said))),
        Err(_) => {
            let (root, layers) = match run(true, false) {
                Ok(said) => (judge_root(&said), layered(&said)),
                Err(why) => (Some(why), false),
            };
            let pids = match run(false, true) {
                Ok(said) => judge_pids(&said),
                Err(why) => Some(why),
            };
            Ok((root, pids, layers))
        }
    }
}

/// A folder for the trials, removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self, String> {
        let base = std::env::temp_dir().join(format!("rein-probe-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).map_err(|e| e.to_string())?;
        let canonical = std::fs::canonicalize(&base).map_err(|e| e.to_string())?;
        Ok(Self(canonical))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(Path::new(&self.0));
    }
}
