//! The command's PID namespace and its init.
//!
//! `rein sandbox-exec` (the *supervisor*, started by Rein's executor in the
//! command's process group) makes the namespaces, then starts itself again
//! as the first process of the new PID namespace (the *init*, PID 1 there),
//! which confines itself and starts the command. When the command ends, the
//! init ends, and the kernel kills every process left in the namespace:
//! nothing the command started (`setsid`, `nohup`, a double fork) outlives
//! it. Inside, PIDs name only the namespace's processes, so the command's
//! signals reach nothing of the user's. The init writes how the command
//! ended to a pipe; the supervisor ends the same way (the same exit code,
//! or killed by the same signal), so Rein reads the command's status as
//! before.
//!
//! No `fork` without `exec` (which would need `unsafe`): both stages are
//! the `rein` binary, started through `std::process::Command`. The init
//! must mount `/proc` for its namespace, so the supervisor hands it
//! `CAP_SYS_ADMIN` (and `CAP_SETPCAP`, to drop capabilities) across `exec`
//! through the ambient set, which a user that is not root in the
//! namespace would otherwise lose; the init drops them before the command
//! starts.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use caps::{CapSet, Capability};
use nix::mount::{MsFlags, mount};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, sigprocmask};
use nix::sys::wait::{WaitStatus, waitpid};

use crate::{Policy, SUBCOMMAND, SandboxError};

/// How the command ended, as the init tells the supervisor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Killed(i32),
}

impl Ended {
    fn to_line(self) -> String {
        match self {
            Ended::Exited(code) => format!("exit {code}\n"),
            Ended::Killed(signal) => format!("signal {signal}\n"),
        }
    }

    fn parse(line: &str) -> Option<Self> {
        let (word, number) = line.trim().split_once(' ')?;
        let number = number.parse().ok()?;
        match word {
            "exit" => Some(Ended::Exited(number)),
            "signal" => Some(Ended::Killed(number)),
            _ => None,
        }
    }
}

/// The supervisor's part, once the namespaces are made: starts the init
/// with `command`, waits for it, and ends as the command ended. Returns
/// only if the init could not be started.
pub fn supervise(policy: &Policy, command: &[OsString]) -> SandboxError {
    let fail = |step: &'static str| {
        move |e: &dyn std::fmt::Display| SandboxError::Apply {
            step,
            reason: e.to_string(),
        }
    };
    let (reader, writer) = match nix::unistd::pipe() {
        Ok(pipe) => pipe,
        Err(e) => return fail("the init's pipe")(&e),
    };
    // Only the writing end goes to the init.
    if let Err(e) = nix::fcntl::fcntl(
        &reader,
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
    ) {
        return fail("the init's pipe")(&e);
    }
    if let Err(e) = keep_across_exec(&[Capability::CAP_SYS_ADMIN, Capability::CAP_SETPCAP]) {
        return e;
    }
    // Rein's executor signals the whole process group, the command
    // included: this process waits for the command's end rather than
    // ending first (which would kill the namespace at once).
    let blocked = waited_signals();
    let _ = sigprocmask(SigmaskHow::SIG_BLOCK, Some(&blocked), None);
    let child = std::process::Command::new("/proc/self/exe")
        .arg(SUBCOMMAND)
        .arg("--policy")
        .arg(policy.to_arg())
        .arg("--init-status-fd")
        .arg(writer.as_raw_fd().to_string())
        .arg("--")
        .args(command)
        .spawn();
    drop(writer);
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return fail("starting the init")(&e),
    };
    let status = child.wait();
    let mut said = String::new();
    let _ = std::fs::File::from(reader).read_to_string(&mut said);
    let ended = Ended::parse(&said).or_else(|| {
        // The init said nothing: it ended (or was killed) itself.
        let status = status.ok()?;
        status
            .code()
            .map(Ended::Exited)
            .or_else(|| status.signal().map(Ended::Killed))
    });
    end_as(ended.unwrap_or(Ended::Exited(126)), &blocked)
}

/// Ends this process as the command ended: the same exit code, or killed
/// by the same signal (without a core file of our own).
fn end_as(ended: Ended, blocked: &SigSet) -> ! {
    if let Ended::Killed(number) = ended
        && let Ok(signal) = Signal::try_from(number)
    {
        let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0);
        let _ = sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(blocked), None);
        let _ = nix::sys::signal::raise(signal);
        std::process::exit(128 + number);
    }
    match ended {
        Ended::Exited(code) => std::process::exit(code),
        Ended::Killed(number) => std::process::exit(128 + number),
    }
}

/// The signals the supervisor waits through.
fn waited_signals() -> SigSet {
    let mut set = SigSet::empty();
    for signal in [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        set.add(signal);
    }
    set
}

/// Puts `wanted` in the inheritable and ambient sets, so the next program
/// this process starts keeps them even if it is not root in its user
/// namespace.
fn keep_across_exec(wanted: &[Capability]) -> Result<(), SandboxError> {
    let fail = |e: caps::errors::CapsError| SandboxError::Apply {
        step: "the init's capabilities",
        reason: e.to_string(),
    };
    if caps::runtime::ambient_set_supported().is_err() {
        return Ok(());
    }
    for cap in wanted {
        caps::raise(None, CapSet::Inheritable, *cap).map_err(fail)?;
        caps::raise(None, CapSet::Ambient, *cap).map_err(fail)?;
    }
    Ok(())
}

/// The init's part (PID 1 of the command's namespace): mounts `/proc` for
/// it, confines itself, starts `command`, reaps every process until the
/// command ends, then tells the supervisor through `status_fd` how. Never
/// returns but with the error that kept the command from starting.
pub fn init(policy: &Policy, status_fd: i32, command: &[OsString]) -> SandboxError {
    let Some((program, args)) = command.split_first() else {
        return SandboxError::NoCommand;
    };
    // Before anything else: if the supervisor dies, so does the namespace.
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    // The command may not reach into this process (its descriptors, the
    // status pipe among them) through /proc/1.
    let _ = nix::sys::prctl::set_dumpable(false);
    // The pipe again, closed on exec, and the inherited descriptor closed:
    // the command must not be able to write a status of its own.
    let status = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/proc/self/fd/{status_fd}"));
    let _ = nix::unistd::close(status_fd);
    let mut status = match status {
        Ok(file) => file,
        Err(e) => {
            return SandboxError::Apply {
                step: "the init's pipe",
                reason: e.to_string(),
            };
        }
    };
    if let Err(e) = own_proc() {
        return e;
    }
    if let Err(e) = crate::confine(policy) {
        return e;
    }
    if let Err(e) = caps::clear(None, CapSet::Ambient) {
        return SandboxError::Apply {
            step: "the init's capabilities",
            reason: e.to_string(),
        };
    }
    let child = match std::process::Command::new(program).args(args).spawn() {
        Ok(child) => child,
        Err(source) => {
            return SandboxError::Exec {
                program: program.to_string_lossy().into_owned(),
                source,
            };
        }
    };
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    // Orphans are this process's to reap, until the command itself ends.
    let ended = loop {
        match waitpid(None, None) {
            Ok(WaitStatus::Exited(p, code)) if p == pid => break Ended::Exited(code),
            Ok(WaitStatus::Signaled(p, signal, _)) if p == pid => {
                break Ended::Killed(signal as i32);
            }
            Ok(_) | Err(nix::Error::EINTR) => continue,
            Err(_) => break Ended::Exited(126),
        }
    };
    let _ = status.write_all(ended.to_line().as_bytes());
    drop(status);
    // Ending PID 1 kills whatever is left in the namespace.
    std::process::exit(match ended {
        Ended::Exited(code) => code,
        Ended::Killed(signal) => 128 + signal,
    })
}

/// A `/proc` of this PID namespace over the machine's: the command sees
/// only its own processes.
fn own_proc() -> Result<(), SandboxError> {
    mount(
        Some("proc"),
        Path::new("/proc"),
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(|e| SandboxError::Apply {
        step: "the command's /proc",
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_says_how_the_command_ended() {
        for ended in [Ended::Exited(0), Ended::Exited(3), Ended::Killed(9)] {
            assert_eq!(Ended::parse(&ended.to_line()), Some(ended));
        }
        for garbage in ["", "exit", "exit x", "signal -", "crashed 3", "exit 1 2"] {
            assert_eq!(Ended::parse(garbage), None, "{garbage:?}");
        }
    }
}
