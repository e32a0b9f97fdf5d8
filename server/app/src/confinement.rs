//! The sandbox every command of a task runs in: the `rein-sandbox` policy
//! for the workspace, built from the task's `[sandbox]` settings and what
//! this machine supports (probed once per process, in a throwaway
//! `rein sandbox-exec --probe`), started through `rein sandbox-exec`.
//!
//! A part this machine cannot provide is left out of the policy — and the
//! confinement says so ([`Confinement::Degraded`]), which makes every
//! command ask: nothing runs unconfined while Rein claims a sandbox.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rein_core::exec::{CommandSpec, Confinement, Launcher, Layer};
use rein_core::sandbox_config::{SandboxConfig, SandboxMode};
use rein_sandbox::defaults::{Inputs, Mode};
use rein_sandbox::{Limits, Network, Policy, Support};

/// Starts commands through `rein sandbox-exec` with the workspace's policy.
#[derive(Debug)]
pub struct SandboxLauncher {
    rein: PathBuf,
    inputs: Inputs,
    support: Support,
    confinement: Confinement,
    /// The commands' private temporary directory, removed with the task.
    tmp: tempfile::TempDir,
}

impl SandboxLauncher {
    /// The launcher for the commands of `workspace` under `config`, in
    /// this process's environment.
    pub fn new(rein: &Path, workspace: &Path, config: &SandboxConfig) -> Result<Self, String> {
        Self::with_env(rein, workspace, config, &|name| std::env::var_os(name))
    }

    /// [`Self::new`] with the environment given (`HOME`, `PATH`, the XDG
    /// and build-directory variables), for tests.
    pub fn with_env(
        rein: &Path,
        workspace: &Path,
        config: &SandboxConfig,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> Result<Self, String> {
        let tmp = tempfile::Builder::new()
            .prefix("rein-commands-")
            .tempdir()
            .map_err(|e| format!("cannot make the commands' temporary directory: {e}"))?;
        let support = support(rein).clone();
        let home = env("HOME").map(PathBuf::from);
        let xdg = |variable: &str, fallback: &str| {
            env(variable)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .or_else(|| home.as_ref().map(|h| h.join(fallback)))
                .map(|base| base.join("rein"))
        };
        let mut deny_read = config.deny_read.clone();
        // Rein's own configuration (it may hold the key) and state.
        deny_read.extend(xdg("XDG_CONFIG_HOME", ".config"));
        deny_read.extend(xdg("XDG_STATE_HOME", ".local/state"));
        let inputs = Inputs {
            workspace: workspace.to_path_buf(),
            tmp: tmp.path().to_path_buf(),
            home: home.clone(),
            path: env("PATH"),
            mode: mode(config.mode),
            network: false,
            extra_read: config.readable_roots.clone(),
            extra_write: config.writable_roots.clone(),
            deny_read,
            protected: rein_sandbox::defaults::git_metadata(workspace),
            caches: env_build_dirs(env),
            scratch: None,
            limits: Limits {
                processes: config.max_processes,
                file_bytes: config.max_file_bytes,
                memory_bytes: config.max_memory_bytes,
                cgroup: Some(cgroup_name()),
            },
        };
        rein_sandbox::limits::remove_stale_cgroups();
        let confinement = confinement(config, &support);
        Ok(Self {
            rein: rein.to_path_buf(),
            inputs,
            support,
            confinement,
            tmp,
        })
    }

    /// The policy for one command: the workspace's (or a
    /// `[[sandbox.rules]]` mode's), with the network if the user allowed
    /// it, and without what this machine cannot do.
    pub fn policy(&self, network: bool, rule_mode: Option<SandboxMode>) -> Policy {
        self.policy_reading(network, rule_mode, &[], None)
    }

    /// [`Self::policy`] that may also read `readable`, and sees the files
    /// of `scratch` over the workspace (a candidate's layer).
    fn policy_reading(
        &self,
        network: bool,
        rule_mode: Option<SandboxMode>,
        readable: &[PathBuf],
        scratch: Option<&Path>,
    ) -> Policy {
        let mut inputs = Inputs {
            network,
            mode: rule_mode.map_or(self.inputs.mode, mode),
            scratch: scratch.map(Path::to_path_buf),
            ..self.inputs.clone()
        };
        inputs.extra_read.extend(readable.iter().cloned());
        let mut policy = rein_sandbox::defaults::policy(&inputs);
        if self.support.landlock_abi == 0 {
            policy.files = None;
        }
        if self.support.namespaces_missing.is_some() {
            policy.network = Network::Host;
            policy.namespaces = false;
        }
        if self.support.root_missing.is_some() || !policy.namespaces {
            policy.own_root = false;
        }
        if self.support.processes_missing.is_some() || !policy.namespaces {
            policy.own_processes = false;
        }
        if !self.support.private_layers
            && let Some(files) = policy.files.as_mut()
        {
            // No private layer here: the caches are read-only instead.
            let private = std::mem::take(&mut files.private_write);
            files.read.extend(private);
        }
        if !self.support.process_limit {
            policy.limits.processes = None;
        }
        policy
    }
}

impl Drop for SandboxLauncher {
    fn drop(&mut self) {
        if let Some(name) = &self.inputs.limits.cgroup {
            rein_sandbox::limits::remove_pids_cgroup(name);
        }
    }
}

fn mode(mode: SandboxMode) -> Mode {
    match mode {
        SandboxMode::Off => Mode::Off,
        SandboxMode::WorkspaceWrite => Mode::WorkspaceWrite,
        SandboxMode::ReadOnly => Mode::ReadOnly,
    }
}

/// A cgroup name for one task's commands: this process and a counter.
fn cgroup_name() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("rein-{}-{n}", std::process::id())
}

impl Launcher for SandboxLauncher {
    fn prefix(&self, spec: &CommandSpec) -> Vec<OsString> {
        // A candidate's layer: in the workspace's own mode (never a rule's
        // `off`, which would run it on the real workspace).
        let scratch = match &spec.layer {
            Some(Layer::Folder(folder)) => Some(folder.as_path()),
            _ => None,
        };
        let rule_mode = spec.sandbox_mode.filter(|_| scratch.is_none());
        rein_sandbox::wrapper(
            &self.rein,
            &self.policy_reading(spec.network, rule_mode, &[], scratch),
        )
    }

    fn env(&self) -> Vec<(OsString, OsString)> {
        let tmp = self.tmp.path().as_os_str().to_owned();
        ["TMPDIR", "TMP", "TEMP"]
            .into_iter()
            .map(|name| (OsString::from(name), tmp.clone()))
            .collect()
    }

    fn confinement(&self) -> Confinement {
        self.confinement.clone()
    }

    fn server_prefix(&self, spec: &CommandSpec, readable: &[PathBuf]) -> Vec<OsString> {
        rein_sandbox::wrapper(
            &self.rein,
            &self.policy_reading(spec.network, spec.sandbox_mode, readable, None),
        )
    }

    fn private_layers(&self) -> bool {
        let s = &self.support;
        self.inputs.mode != Mode::Off
            && s.private_layers
            && s.landlock_abi > 0
            && s.namespaces_missing.is_none()
            && s.root_missing.is_none()
    }
}

/// Where the user's environment sends builds and caches
/// (`CARGO_TARGET_DIR`, `GOCACHE`, …): their own choice, so commands may
/// write there. Only absolute paths; made if missing, since a rule needs
/// the path to exist.
fn env_build_dirs(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    rein_sandbox::defaults::ENV_WRITE
        .iter()
        .filter_map(|name| env(name))
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .inspect(|p| {
            let _ = std::fs::create_dir_all(p);
        })
        .collect()
}

/// What this machine supports, probed once per process. A probe that
/// cannot run is "nothing supported": every command then asks.
pub fn support(rein: &Path) -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(|| probe(rein))
}

fn probe(rein: &Path) -> Support {
    // What Rein does on a machine without part of the sandbox, shown on
    // one that has it (tests, `rein doctor` demonstrations). Claiming more
    // than the machine has only makes commands fail to start.
    if let Some(given) = std::env::var_os("REIN_SANDBOX_PROBE")
        && let Ok(support) = serde_json::from_str::<Support>(&given.to_string_lossy())
    {
        return support;
    }
    let unknown = |why: String| Support {
        landlock_abi: 0,
        namespaces_missing: Some(why.clone()),
        process_limit: false,
        root_missing: Some(why.clone()),
        processes_missing: Some(why),
        private_layers: false,
    };
    let output = std::process::Command::new(rein)
        .args([rein_sandbox::SUBCOMMAND, "--probe"])
        .stdin(std::process::Stdio::null())
        .output();
    match output {
        Ok(out) if out.status.success() => serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| unknown(format!("the sandbox probe's answer: {e}"))),
        Ok(out) => unknown(format!(
            "the sandbox probe failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => unknown(format!("the sandbox probe could not run: {e}")),
    }
}

/// Which Unix sockets a command can still connect to (Landlock does not
/// govern that; the command's own root does), in words, for `rein doctor`.
pub fn reachable_sockets(config: &SandboxConfig, support: &Support) -> String {
    if config.mode == SandboxMode::Off {
        return "sockets: every Unix socket your user can reach (sandbox off)".to_owned();
    }
    if support.namespaces_missing.is_some()
        || support.root_missing.is_some()
        || support.landlock_abi == 0
    {
        return "sockets: every Unix socket file your user can reach (no root of the command's own here: tmux, ssh-agent, editor and daemon sockets included)".to_owned();
    }
    "sockets: only those in the workspace, the readable toolchain and system folders (/usr, /etc, …) and the roots you allowed (sandbox.readable_roots, writable_roots); none in /tmp, /var, /run, /dev/shm or the rest of your home; abstract sockets: none (a network of its own)".to_owned()
}

/// What confines the commands under `config` on a machine with `support`.
pub fn confinement(config: &SandboxConfig, support: &Support) -> Confinement {
    if config.mode == SandboxMode::Off {
        return Confinement::Off;
    }
    let mut parts = vec![format!("{}", config.mode.name())];
    if support.landlock_abi > 0 {
        parts.push(format!(
            "files confined by Landlock (ABI {})",
            support.landlock_abi
        ));
    }
    if support.namespaces_missing.is_none() {
        parts.push("network loopback only (a namespace of its own)".to_owned());
        if support.root_missing.is_none() && support.landlock_abi > 0 {
            parts.push(
                "a root of its own (no socket outside the workspace, a private /tmp and /dev/shm)"
                    .to_owned(),
            );
        }
        if support.processes_missing.is_none() {
            parts.push("its own processes only (none outlives it)".to_owned());
        }
    }
    if config.mode != SandboxMode::Off {
        parts.push(
            if support.private_layers && support.root_missing.is_none() {
                "package caches written privately"
            } else {
                "package caches read-only"
            }
            .to_owned(),
        );
    }
    parts.push("no new privileges".to_owned());
    if let Some(n) = config.max_processes {
        parts.push(format!("at most {n} processes"));
    }
    if let Some(bytes) = config.max_file_bytes {
        parts.push(format!("files up to {} MiB", bytes >> 20));
    }
    if let Some(bytes) = config.max_memory_bytes {
        parts.push(format!("{} MiB of memory", bytes >> 20));
    }
    let description = parts.join(", ");
    let missing = support.missing();
    if missing.is_empty() {
        Confinement::Full { description }
    } else {
        Confinement::Degraded {
            description,
            missing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_without_landlock_or_namespaces_is_said_degraded() {
        let config = SandboxConfig::default();
        let full = Support {
            landlock_abi: 6,
            namespaces_missing: None,
            process_limit: true,
            root_missing: None,
            processes_missing: None,
            private_layers: true,
        };
        expect_test::expect![[r#"
            Full {
                description: "workspace-write, files confined by Landlock (ABI 6), network loopback only (a namespace of its own), a root of its own (no socket outside the workspace, a private /tmp and /dev/shm), its own processes only (none outlives it), package caches written privately, no new privileges, at most 2048 processes, files up to 4096 MiB",
            }
        "#]]
        .assert_debug_eq(&confinement(&config, &full));
        let bare = Support {
            landlock_abi: 0,
            namespaces_missing: Some("EPERM".into()),
            process_limit: false,
            root_missing: Some("EPERM".into()),
            processes_missing: Some("EPERM".into()),
            private_layers: false,
        };
        let Confinement::Degraded { missing, .. } = confinement(&config, &bare) else {
            panic!("not degraded");
        };
        assert_eq!(missing.len(), 3, "{missing:?}");
        let off = SandboxConfig {
            mode: SandboxMode::Off,
            ..SandboxConfig::default()
        };
        assert_eq!(confinement(&off, &bare), Confinement::Off);
    }
}
