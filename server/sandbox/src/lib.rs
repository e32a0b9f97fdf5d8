//! `rein-sandbox`: the confinement Rein applies to every command it runs,
//! inside the command's own process, before `exec`.
//!
//! The executor (`rein_core::host::process::ProcessExec`) starts
//! `rein sandbox-exec --policy <json> -- <program> <args…>` instead of the
//! program: that process (the same binary) applies the [`Policy`] to itself
//! and then becomes the program. So the confinement is Rein's own code, not
//! a tool that may be missing, and no `pre_exec` hook (which would need
//! `unsafe`) is involved. A policy that cannot be applied is refused: the
//! command does not run unconfined.
//!
//! What a policy does today:
//! - `no_new_privs`: the command and its children gain no privileges
//!   through setuid/setgid binaries or file capabilities (`sudo`, `su`).
//! - `no_process_inspection`: the command loses the capabilities that let a
//!   process read another's memory (`CAP_SYS_PTRACE`, but also — found by
//!   trying each one as root — `CAP_SYS_ADMIN` and `CAP_PERFMON`, and the
//!   ones that reach kernel memory: `CAP_BPF`, `CAP_SYS_RAWIO`,
//!   `CAP_SYS_MODULE`, `CAP_CHECKPOINT_RESTORE`). It has them only when run
//!   as root. Rein's own process is not dumpable, so a process without them
//!   cannot read Rein's memory or `/proc/<pid>/environ`, where the API key
//!   may be.
//!
//! Must never: read configuration, talk to the editor or a model, or print
//! anything on success (the command's output is the model's to read).

use std::ffi::{OsStr, OsString};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The hidden subcommand of `rein` that applies a policy and execs.
pub const SUBCOMMAND: &str = "sandbox-exec";

/// What to apply to a command's process before it runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    pub no_new_privs: bool,
    pub no_process_inspection: bool,
}

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

impl Policy {
    /// What every command gets.
    pub fn standard() -> Self {
        Self {
            no_new_privs: true,
            no_process_inspection: true,
        }
    }

    pub fn to_arg(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }

    pub fn from_arg(arg: &str) -> Result<Self, SandboxError> {
        serde_json::from_str(arg).map_err(|e| SandboxError::BadPolicy(e.to_string()))
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

/// Applies `policy` to this process, then becomes `command`. Returns only
/// if it could not.
pub fn exec(policy: &Policy, command: &[OsString]) -> SandboxError {
    let Some((program, args)) = command.split_first() else {
        return SandboxError::NoCommand;
    };
    if let Err(error) = apply(policy) {
        return error;
    }
    use std::os::unix::process::CommandExt;
    let source = std::process::Command::new(program).args(args).exec();
    SandboxError::Exec {
        program: OsStr::to_string_lossy(program).into_owned(),
        source,
    }
}

/// Applies `policy` to this process (and so to what it execs).
pub fn apply(policy: &Policy) -> Result<(), SandboxError> {
    if policy.no_process_inspection {
        for cap in INSPECTION_CAPS {
            drop_capability(cap)?;
        }
    }
    if policy.no_new_privs {
        nix::sys::prctl::set_no_new_privs().map_err(|e| SandboxError::Apply {
            step: "no_new_privs",
            reason: e.to_string(),
        })?;
    }
    Ok(())
}

/// The capabilities a root process could read Rein's memory with.
const INSPECTION_CAPS: [caps::Capability; 7] = [
    caps::Capability::CAP_SYS_PTRACE,
    caps::Capability::CAP_SYS_ADMIN,
    caps::Capability::CAP_PERFMON,
    caps::Capability::CAP_BPF,
    caps::Capability::CAP_SYS_RAWIO,
    caps::Capability::CAP_SYS_MODULE,
    caps::Capability::CAP_CHECKPOINT_RESTORE,
];

/// Removes `cap` from every set. The bounding set comes first (lowering it
/// needs `CAP_SETPCAP`, which a root process has); for root, `exec`
/// recomputes the permitted set from the bounding and inheritable sets, so
/// those two are what keep the program from getting it back. A capability
/// this kernel does not know is nobody's to use.
fn drop_capability(cap: caps::Capability) -> Result<(), SandboxError> {
    use caps::{CapSet, Capability};
    if !caps::runtime::thread_all_supported().contains(&cap) {
        return Ok(());
    }
    let fail = |step: &'static str| {
        move |e: caps::errors::CapsError| SandboxError::Apply {
            step,
            reason: e.to_string(),
        }
    };
    let in_bounding = caps::has_cap(None, CapSet::Bounding, cap).map_err(fail("reading"))?;
    if in_bounding {
        let can_lower = caps::has_cap(None, CapSet::Effective, Capability::CAP_SETPCAP)
            .map_err(fail("reading"))?;
        if can_lower {
            caps::drop(None, CapSet::Bounding, cap).map_err(fail("bounding set"))?;
        } else if caps::has_cap(None, CapSet::Permitted, cap).map_err(fail("reading"))? {
            // It holds the capability and cannot give up the right to
            // regain it: refuse rather than run unconfined.
            return Err(SandboxError::Apply {
                step: "bounding set",
                reason: format!("{cap} is permitted but CAP_SETPCAP is not"),
            });
        }
    }
    // Lowering these needs no privilege. Ambient first: it may only hold
    // what is permitted and inheritable.
    if caps::runtime::ambient_set_supported().is_ok() {
        caps::drop(None, CapSet::Ambient, cap).map_err(fail("ambient set"))?;
    }
    for (set, step) in [
        (CapSet::Inheritable, "inheritable set"),
        (CapSet::Effective, "effective set"),
        (CapSet::Permitted, "permitted set"),
    ] {
        caps::drop(None, set, cap).map_err(fail(step))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_travels_as_one_argument_and_unknown_fields_are_refused() {
        let policy = Policy::standard();
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
