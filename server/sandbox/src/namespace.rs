//! Namespaces of the command's own: user and mount namespaces (and with
//! them a root of its own, [`crate::view`]), a PID namespace (the next
//! child is the namespace's init, [`crate::init`]), and a network with only
//! loopback up.
//!
//! The user namespace is what lets an unprivileged process make the others;
//! the command keeps its own uid and gid inside (an identity map), so files
//! keep their owners. A process there has no capability over anything
//! outside it: it cannot read another process's memory or environment,
//! whatever its uid. The network namespace starts with `lo` down and no
//! other interface: `localhost` works once `lo` is up, nothing else is
//! reachable. In the mount namespace a fresh `tmpfs` hides `/run`, where
//! the sockets of the machine's daemons (Docker's among them) live: a
//! socket file is reachable whatever the network.

use std::os::fd::AsRawFd;
use std::path::Path;

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::socket::{
    AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, recv, sendto, socket,
};

use crate::SandboxError;

/// What to set up in the namespaces.
#[derive(Clone, Debug, Default)]
pub struct Setup<'a> {
    /// A network of its own, loopback only, and `/run` hidden.
    pub loopback_only: bool,
    /// Paths made read-only mounts (they must exist).
    pub read_only: &'a [std::path::PathBuf],
    /// Paths hidden: an empty read-only directory or file mounted over
    /// each (they must exist). Cheaper than carving them out of Landlock's
    /// rules, which takes a rule per sibling.
    pub hidden: &'a [std::path::PathBuf],
    /// A root of its own, made by these steps ([`crate::view::plan`], which
    /// then also holds the read-only and hidden paths).
    pub root: Option<&'a [crate::view::Step]>,
    /// A PID namespace (and an IPC namespace) for this process's children:
    /// the next one it starts is their init.
    pub own_processes: bool,
}

/// Moves this process into new user, network and mount namespaces with
/// loopback up and `/run` hidden.
pub fn enter_loopback_only() -> Result<(), SandboxError> {
    enter(&Setup {
        loopback_only: true,
        ..Setup::default()
    })
}

/// Moves this process into new user and mount namespaces (and a network
/// namespace for `loopback_only`), as `setup` says.
pub fn enter(setup: &Setup<'_>) -> Result<(), SandboxError> {
    let fail = |step: &'static str| {
        move |e: nix::Error| SandboxError::Apply {
            step,
            reason: e.to_string(),
        }
    };
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid();
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS;
    if setup.loopback_only {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    if setup.own_processes {
        flags |= CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWIPC;
    }
    unshare(flags).map_err(fail("namespaces"))?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| SandboxError::Apply {
            step: "user namespace maps",
            reason: format!("{file}: {e}"),
        })
    };
    // `setgroups` must be denied before an unprivileged gid map is written.
    write("/proc/self/setgroups", "deny".to_owned())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    if setup.loopback_only {
        loopback_up()?;
    }
    // Our mounts must not propagate back to the machine's namespace.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(fail("private mounts"))?;
    if let Some(steps) = setup.root {
        return crate::view::build(steps);
    }
    for path in setup.read_only {
        read_only_mount(path)?;
    }
    for path in setup.hidden {
        hide(path)?;
    }
    if setup.loopback_only && Path::new("/run").is_dir() {
        mount(
            Some("tmpfs"),
            "/run",
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some("mode=0755,size=1m"),
        )
        .map_err(fail("hiding /run"))?;
    }
    Ok(())
}

/// Mounts an empty, read-only, inaccessible directory (a directory) or
/// `/dev/null` (a file) over `path`.
fn hide(path: &Path) -> Result<(), SandboxError> {
    let fail = |e: nix::Error| SandboxError::Apply {
        step: "hidden paths",
        reason: format!("{}: {e}", path.display()),
    };
    if path.is_dir() {
        mount(
            Some("tmpfs"),
            path,
            Some("tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some("mode=0000,size=4k"),
        )
        .map_err(fail)
    } else {
        bind_read_only(Path::new("/dev/null"), path, MsFlags::empty()).map_err(fail)
    }
}

/// Makes `path` a read-only bind mount of itself.
fn read_only_mount(path: &Path) -> Result<(), SandboxError> {
    crate::view::read_only(path).map_err(|e| SandboxError::Apply {
        step: "read-only paths",
        reason: format!("{}: {e}", path.display()),
    })
}

/// Binds `source` over `target` (with `flags`, e.g. recursively), then
/// remounts it read-only: a bind mount takes `MS_RDONLY` only on remount.
fn bind_read_only(source: &Path, target: &Path, flags: MsFlags) -> Result<(), nix::Error> {
    mount(
        Some(source),
        target,
        None::<&str>,
        MsFlags::MS_BIND | flags,
        None::<&str>,
    )?;
    mount(
        None::<&str>,
        target,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY,
        None::<&str>,
    )
}

/// `ip link set lo up`, by one netlink request (`RTM_NEWLINK` with
/// `IFF_UP` on the loopback interface), checked by its acknowledgement.
fn loopback_up() -> Result<(), SandboxError> {
    let fail = |e: nix::Error| SandboxError::Apply {
        step: "loopback",
        reason: e.to_string(),
    };
    let index = nix::net::if_::if_nametoindex("lo").map_err(fail)?;
    let socket = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkRoute,
    )
    .map_err(fail)?;
    let request = link_up_request(index);
    sendto(
        socket.as_raw_fd(),
        &request,
        &NetlinkAddr::new(0, 0),
        MsgFlags::empty(),
    )
    .map_err(fail)?;
    let mut answer = [0u8; 256];
    let n = recv(socket.as_raw_fd(), &mut answer, MsgFlags::empty()).map_err(fail)?;
    match ack_error(&answer[..n]) {
        Some(0) => Ok(()),
        Some(errno) => Err(SandboxError::Apply {
            step: "loopback",
            reason: nix::Error::from_raw(-errno).to_string(),
        }),
        None => Err(SandboxError::Apply {
            step: "loopback",
            reason: "the kernel's answer was not an acknowledgement".to_owned(),
        }),
    }
}

const RTM_NEWLINK: u16 = 16;
const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const IFF_UP: u32 = 1;

/// `struct nlmsghdr` + `struct ifinfomsg`, in the machine's byte order.
fn link_up_request(index: u32) -> Vec<u8> {
    let mut m = Vec::with_capacity(32);
    m.extend_from_slice(&32u32.to_ne_bytes()); // nlmsg_len
    m.extend_from_slice(&RTM_NEWLINK.to_ne_bytes()); // nlmsg_type
    m.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes()); // nlmsg_flags
    m.extend_from_slice(&1u32.to_ne_bytes()); // nlmsg_seq
    m.extend_from_slice(&0u32.to_ne_bytes()); // nlmsg_pid
    m.push(0); // ifi_family: AF_UNSPEC
    m.push(0); // padding
    m.extend_from_slice(&0u16.to_ne_bytes()); // ifi_type
    m.extend_from_slice(&index.to_ne_bytes()); // ifi_index
    m.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_flags
    m.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_change
    m
}

/// The `error` of an `NLMSG_ERROR` acknowledgement (0: success).
fn ack_error(answer: &[u8]) -> Option<i32> {
    let kind = u16::from_ne_bytes(answer.get(4..6)?.try_into().ok()?);
    if kind != NLMSG_ERROR {
        return None;
    }
    Some(i32::from_ne_bytes(answer.get(16..20)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_request_is_a_whole_netlink_message() {
        let m = link_up_request(1);
        assert_eq!(m.len(), 32);
        assert_eq!(u32::from_ne_bytes(m[0..4].try_into().unwrap()), 32);
        assert_eq!(u32::from_ne_bytes(m[20..24].try_into().unwrap()), 1);
        let mut ack = vec![0u8; 36];
        ack[4..6].copy_from_slice(&NLMSG_ERROR.to_ne_bytes());
        assert_eq!(ack_error(&ack), Some(0));
        ack[16..20].copy_from_slice(&(-1i32).to_ne_bytes());
        assert_eq!(ack_error(&ack), Some(-1));
        assert_eq!(ack_error(&[0u8; 3]), None);
    }
}
