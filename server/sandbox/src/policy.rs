//! What a command's process may do, as data: built by Rein for each
//! command, carried to `rein sandbox-exec` as one JSON argument, applied
//! there by [`crate::apply`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::SandboxError;

/// Everything that confines one command.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// No privilege gained through setuid/setgid binaries or file
    /// capabilities (`sudo`, `su`).
    pub no_new_privs: bool,
    /// The capabilities that let a root process read another process's
    /// memory are dropped.
    pub no_process_inspection: bool,
    /// The files the command may read and write (Landlock); `None`: not
    /// confined.
    pub files: Option<FileAccess>,
    pub network: Network,
    pub limits: Limits,
    /// Run in user and mount namespaces of its own (where the machine
    /// allows them): read-only paths below a write root are then
    /// read-only mounts, so the root itself stays writable.
    pub namespaces: bool,
    /// With `namespaces` and `files`: a root of its own in which only what
    /// `files` lists exists, with a private `/tmp`, `/var/tmp` and
    /// `/dev/shm` and a minimal `/dev` (see [`crate::view`]). Landlock does
    /// not govern connecting to a Unix socket; this is what keeps the
    /// sockets of the user's other programs out of reach.
    pub own_root: bool,
    /// With `namespaces`: a PID namespace whose first process is the
    /// sandbox's own init ([`crate::init`]). No process the command starts
    /// outlives it, and its signals reach only its own processes.
    pub own_processes: bool,
}

/// File access by hierarchy. Everything not listed is out of reach: read
/// roots may be read and executed, write roots also written, created,
/// renamed and removed, single files (devices, lock files) read and written (no directory
/// rights). `deny` is taken out of the roots above it (see
/// [`crate::files::subtract`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileAccess {
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    pub files: Vec<PathBuf>,
    /// Out of reach even below a read or write root.
    pub deny: Vec<PathBuf>,
    /// Readable but not writable even below a write root (Rein's state,
    /// git's metadata: what would run later, outside the sandbox).
    pub read_only: Vec<PathBuf>,
    /// Writable to the command through a private layer (an overlay whose
    /// upper layer is gone with the command's namespaces): it sees its own
    /// writes, the machine never does. Package caches, whose code runs
    /// later outside the sandbox. Without `own_root`: read-only.
    pub private_write: Vec<PathBuf>,
    /// Files laid over a private layer before the command starts: the
    /// command sees the folder with them in it, the machine never does (a
    /// candidate fix checked against the workspace without touching it).
    pub seeds: Vec<Seed>,
}

/// A folder whose files are laid over a private layer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Seed {
    /// The folder under the layer (one of `private_write`).
    pub target: PathBuf,
    /// A folder laid out like `target`: its files replace (or add to)
    /// `target`'s, in the layer.
    pub from: PathBuf,
}

/// Where the command's network goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    /// The machine's network (the user allowed it for this command).
    #[default]
    Host,
    /// A network of its own with only loopback up: `localhost` works
    /// (tests that bind a port pass), nothing else is reachable.
    Loopback,
}

/// Resource limits (`setrlimit`), each `None` for the inherited limit.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Processes and threads of the command's user (inside its user
    /// namespace, only its own): a fork bomb stops there.
    pub processes: Option<u64>,
    /// The largest file it may write (SIGXFSZ beyond).
    pub file_bytes: Option<u64>,
    /// Its address space.
    pub memory_bytes: Option<u64>,
    /// For root (exempt from `RLIMIT_NPROC`): the `pids` cgroup the command
    /// joins, shared by the commands of one task so that it is made and
    /// removed once ([`crate::limits::remove_pids_cgroup`]).
    pub cgroup: Option<String>,
}

impl Policy {
    pub fn to_arg(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }

    pub fn from_arg(arg: &str) -> Result<Self, SandboxError> {
        serde_json::from_str(arg).map_err(|e| SandboxError::BadPolicy(e.to_string()))
    }

    /// Whether applying it needs user namespaces.
    pub fn needs_namespace(&self) -> bool {
        self.namespaces || self.network == Network::Loopback
    }
}
