//! `rein-sandbox`: the confinement Rein applies to every command it runs,
//! inside the command's own process, before `exec` — by the kernel, not by
//! the prompt.
//!
//! The executor (`rein_core::os::process::ProcessExec`) starts
//! `rein sandbox-exec --policy <json> -- <program> <args…>` instead of the
//! program: that process (the same binary) applies the [`Policy`] to itself
//! and then becomes the program. So the confinement is Rein's own code, not
//! a tool that may be missing, and no `pre_exec` hook (which would need
//! `unsafe`) is involved. A policy that cannot be applied is refused: the
//! command does not run unconfined (`rein sandbox-exec` exits 126 and says
//! why on stderr, for the model to read).
//!
//! In order, after, for root only, a `pids` cgroup (the kernel exempts
//! root from `RLIMIT_NPROC`):
//! 1. **Namespaces** ([`namespace`], [`enter`]): new user and mount
//!    namespaces with a root of the command's own ([`view`]: only what the
//!    policy lists exists — no Unix socket outside it can be named; the
//!    paths to keep read-only are read-only mounts), new PID and IPC
//!    namespaces, and for [`Network::Loopback`] a network namespace with
//!    loopback only.
//! 2. **The init** ([`init`]): this process starts the binary again as
//!    the PID namespace's first process and waits for it; that process
//!    mounts the namespace's `/proc` and does the rest, then starts the
//!    command and reaps until it ends — taking every process left with
//!    it. This process ends as the command did.
//! 3. **Limits** ([`limits`]): processes, file size, memory.
//! 4. **Capabilities** ([`caps`]): those that inspect other processes.
//! 5. **`no_new_privs`**: no privilege from setuid binaries.
//! 6. **Files** ([`files`]): Landlock, last, since it would refuse the
//!    mounts the steps before need.
//!
//! Steps 3–6 are [`confine`]; without a PID namespace of its own (a
//! machine that refuses it) this process does them and `exec`s the
//! command itself.
//!
//! [`probe`] tells what this machine supports, from a throwaway process.
//! [`defaults`] builds the policy Rein gives a workspace's commands.
//!
//! Must never: read configuration, talk to the editor or a model, or print
//! anything on success (the command's output is the model's to read).

pub mod caps;
pub mod defaults;
pub mod files;
pub mod init;
pub mod limits;
pub mod namespace;
pub mod policy;
pub mod probe;
pub mod view;

use std::ffi::{OsStr, OsString};
use std::path::Path;

pub use policy::{FileAccess, Limits, Network, Policy, Seed};
pub use probe::Support;

/// The hidden subcommand of `rein` that applies a policy and execs.
pub const SUBCOMMAND: &str = "sandbox-exec";

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the sandbox policy is not valid: {0}")]
    BadPolicy(String),
    #[error("no command to run")]
    NoCommand,
    #[error("cannot confine the command ({step}): {reason}")]
    Apply { step: &'static str, reason: String },
    #[error("cannot run {program}: {source}")]
    Exec {
        program: String,
        source: std::io::Error,
    },
}

impl SandboxError {
    /// The exit status a shell would give: 127 for a program that is not
    /// there, 126 for anything else that kept it from running.
    pub fn exit_code(&self) -> u8 {
        match self {
            SandboxError::Exec { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                127
            }
            _ => 126,
        }
    }
}

/// The words that run a command under `policy` with `rein` (this binary):
/// put them before the program and its arguments.
pub fn wrapper(rein: &Path, policy: &Policy) -> Vec<OsString> {
    vec![
        rein.as_os_str().to_owned(),
        OsString::from(SUBCOMMAND),
        OsString::from("--policy"),
        OsString::from(policy.to_arg()),
        OsString::from("--"),
    ]
}

/// Applies `policy` to this process, then becomes `command` — or, with a
/// PID namespace of its own, supervises it ([`init`]). Returns only if it
/// could not.
pub fn exec(policy: &Policy, command: &[OsString]) -> SandboxError {
    let Some((program, args)) = command.split_first() else {
        return SandboxError::NoCommand;
    };
    if let Err(error) = enter(policy) {
        return error;
    }
    if policy.own_processes && policy.needs_namespace() {
        return init::supervise(policy, command);
    }
    if let Err(error) = confine(policy) {
        return error;
    }
    use std::os::unix::process::CommandExt;
    let source = std::process::Command::new(program).args(args).exec();
    SandboxError::Exec {
        program: OsStr::to_string_lossy(program).into_owned(),
        source,
    }
}

/// Applies `policy` to this process (and so to what it execs), in one
/// step: [`enter`], then [`confine`]. The process must be single-threaded:
/// most of these act on the calling thread.
pub fn apply(policy: &Policy) -> Result<(), SandboxError> {
    enter(policy)?;
    confine(policy)
}

/// The first half of a policy: the process limit's cgroup (for root) and
/// the namespaces, with the command's own root.
pub fn enter(policy: &Policy) -> Result<(), SandboxError> {
    // Root is exempt from `RLIMIT_NPROC`: a cgroup bounds its processes,
    // joined while still root of the machine (before the namespaces).
    if let Some(max) = policy.limits.processes
        && nix::unistd::geteuid().is_root()
        && !limits::enter_pids_cgroup(
            policy.limits.cgroup.as_deref().unwrap_or("rein-command"),
            max,
        )?
    {
        return Err(SandboxError::Apply {
            step: "process limit",
            reason: "running as root, processes can only be limited by a pids cgroup, and none is writable here".to_owned(),
        });
    }
    if !policy.needs_namespace() {
        return Ok(());
    }
    let existing = |get: fn(&FileAccess) -> &Vec<std::path::PathBuf>| {
        policy
            .files
            .as_ref()
            .map(|f| files::existing_paths(get(f)))
            .unwrap_or_default()
    };
    let (read_only, hidden) = (existing(|f| &f.read_only), existing(|f| &f.deny));
    let root = match &policy.files {
        Some(files) if policy.own_root => Some(view::plan(files)),
        _ => None,
    };
    namespace::enter(&namespace::Setup {
        loopback_only: policy.network == Network::Loopback,
        read_only: &read_only,
        hidden: &hidden,
        root: root.as_deref(),
        own_processes: policy.own_processes,
    })
}

/// The second half, in the process that starts the command: limits,
/// capabilities, `no_new_privs`, and Landlock last (it would refuse the
/// mounts and the writes to `/proc/self/*_map` the first half needs).
pub fn confine(policy: &Policy) -> Result<(), SandboxError> {
    limits::apply(&policy.limits)?;
    if policy.no_process_inspection {
        caps::drop_inspection()?;
    }
    if policy.no_new_privs || policy.files.is_some() {
        nix::sys::prctl::set_no_new_privs().map_err(|e| SandboxError::Apply {
            step: "no_new_privs",
            reason: e.to_string(),
        })?;
    }
    if let Some(files) = &policy.files {
        let files = if policy.own_root {
            // The private scratch folders of its own root.
            let mut files = files.clone();
            files
                .write
                .extend(view::SCRATCH.iter().map(std::path::PathBuf::from));
            files
        } else {
            // No private layer without a root of its own: read-only.
            let mut files = files.clone();
            let private = std::mem::take(&mut files.private_write);
            files.read.extend(private);
            files
        };
        files::apply(&files, policy.needs_namespace())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_travels_as_one_argument_and_unknown_fields_are_refused() {
        let policy = Policy {
            no_new_privs: true,
            no_process_inspection: true,
            files: Some(FileAccess {
                read: vec!["/usr".into()],
                write: vec!["/work".into()],
                ..FileAccess::default()
            }),
            network: Network::Loopback,
            limits: Limits {
                processes: Some(64),
                ..Limits::default()
            },
            namespaces: true,
            own_root: true,
            own_processes: true,
        };
        assert_eq!(Policy::from_arg(&policy.to_arg()).unwrap(), policy);
        assert!(matches!(
            Policy::from_arg(r#"{"no_new_privs": true, "allow_everything": true}"#),
            Err(SandboxError::BadPolicy(_))
        ));
        let words = wrapper(Path::new("/usr/bin/rein"), &policy);
        assert_eq!(words[1], "sandbox-exec");
        assert_eq!(words.last().map(|w| w.as_os_str()), Some(OsStr::new("--")));
    }

    #[test]
    fn no_command_is_an_error_not_a_panic() {
        assert!(matches!(
            exec(&Policy::default(), &[]),
            SandboxError::NoCommand
        ));
    }

    #[test]
    fn a_missing_program_exits_127() {
        let error = exec(
            &Policy::default(),
            &[OsString::from("/nonexistent/rein-test-program")],
        );
        assert_eq!(error.exit_code(), 127, "{error}");
    }
}
