//! The policy Rein gives a workspace's commands: what a test run needs,
//! and nothing that holds a secret or would run later outside the sandbox.
//!
//! - **Read**: the system (`/usr`, `/etc`, …, minus `/etc/shadow` and
//!   host keys), the workspace, the toolchains in the home directory
//!   (`~/.cargo`, `~/.rustup`, `~/.pyenv`, `~/.nvm`, …, and wherever `PATH`
//!   points), `~/.gitconfig`. Not the rest of the home directory: `~/.ssh`,
//!   `~/.aws`, `~/.netrc`, Rein's own config and state stay out of reach.
//! - **Write**: the workspace (not its `.rein/`, `.git` — the whole of it,
//!   and a submodule's or worktree's `.git` file —, `.vscode/`, `.envrc`:
//!   those would act later, outside the sandbox), a private temporary
//!   directory (`TMPDIR`); never `~/.cargo/bin` or shell start-up files.
//! - **Write, privately**: the package caches a test run fills (`~/.cache`,
//!   `~/.npm`, `~/.cargo/registry`, and the build and cache folders the
//!   user's environment names): the command sees its writes, which are
//!   gone with it — code in a cache runs later outside the sandbox.
//! - **Nothing else exists**: a root of its own, with a private `/tmp`,
//!   `/var/tmp` and `/dev/shm` ([`crate::view`]), so no socket of the
//!   user's other programs can be reached; a PID namespace of its own
//!   ([`crate::init`]), so nothing it starts outlives it.
//! - **Network**: loopback only, unless the command was allowed it.
//! - **Limits**: processes and file size.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::policy::{FileAccess, Limits, Network, Policy};

/// How much a workspace's commands may do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Write the workspace (and the temporary directory, the caches).
    #[default]
    WorkspaceWrite,
    /// Write nothing but the temporary directory.
    ReadOnly,
    /// No file or network confinement (the user's choice); commands still
    /// lose the capabilities that read other processes.
    Off,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::WorkspaceWrite => "workspace-write",
            Mode::ReadOnly => "read-only",
            Mode::Off => "off",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "workspace-write" => Some(Mode::WorkspaceWrite),
            "read-only" => Some(Mode::ReadOnly),
            "off" => Some(Mode::Off),
            _ => None,
        }
    }
}

/// What a workspace's policy is made from.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    pub workspace: PathBuf,
    /// The command's private temporary directory (its `TMPDIR`).
    pub tmp: PathBuf,
    pub home: Option<PathBuf>,
    /// `PATH`: its directories (and the toolchains they are in) are read.
    pub path: Option<std::ffi::OsString>,
    pub mode: Mode,
    /// The user allowed this command the network.
    pub network: bool,
    pub extra_read: Vec<PathBuf>,
    pub extra_write: Vec<PathBuf>,
    /// Out of reach even where a root above is granted.
    pub deny_read: Vec<PathBuf>,
    /// Read-only even in the workspace, beyond [`WORKSPACE_READ_ONLY`]
    /// (a submodule's `.git` file: [`git_metadata`]).
    pub protected: Vec<PathBuf>,
    /// Build and cache folders the user's environment names
    /// (`CARGO_TARGET_DIR`, `GOCACHE`, …: [`ENV_WRITE`]): written privately.
    pub caches: Vec<PathBuf>,
    /// A folder laid out like the workspace whose files the command sees
    /// in it: the workspace is then a private layer (a candidate fix
    /// checked without touching the workspace; its writes are discarded).
    pub scratch: Option<PathBuf>,
    pub limits: Limits,
}

/// The processes (and threads) a command may have; a test suite's workers
/// and a compiler's threads fit, a fork bomb stops.
pub const DEFAULT_PROCESSES: u64 = 2048;
/// The largest file a command may write.
pub const DEFAULT_FILE_BYTES: u64 = 4 << 30;

const SYSTEM_READ: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix",
    "/snap", "/gnu", "/proc", "/sys", "/dev",
];

/// Secrets of the system, even though `/etc` is readable.
const SYSTEM_DENY: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/sudoers",
    "/etc/sudoers.d",
];

/// Toolchains and their configuration in the home directory.
const HOME_READ: &[&str] = &[
    ".cargo",
    ".rustup",
    ".pyenv",
    ".nvm",
    ".npm",
    ".cache",
    ".local/bin",
    ".local/lib",
    "go",
    ".m2",
    ".gradle",
    ".deno",
    ".bun",
    ".volta",
    ".yarn",
    ".rbenv",
    ".sdkman",
    ".conda",
    "miniconda3",
    "anaconda3",
    ".pixi",
    ".julia",
    ".ghcup",
    ".cabal",
    ".opam",
    ".elan",
    ".stack",
    ".virtualenvs",
    ".local/share/virtualenvs",
    ".local/pipx",
    ".gitconfig",
    ".config/git",
];

/// Caches a test run may fill, in a private layer.
const HOME_CACHES: &[&str] = &[
    ".cache",
    ".npm",
    ".cargo/registry",
    ".cargo/git",
    "go/pkg/mod",
];

/// Variables of the user's environment naming where builds and caches go
/// (`CARGO_TARGET_DIR=~/.cargo-target`): those places are written too, in
/// a private layer (a build script in a shared target folder runs later,
/// outside the sandbox).
pub const ENV_WRITE: &[&str] = &[
    "CARGO_TARGET_DIR",
    "GOCACHE",
    "GOMODCACHE",
    "npm_config_cache",
    "NPM_CONFIG_CACHE",
    "PIP_CACHE_DIR",
    "UV_CACHE_DIR",
    "XDG_CACHE_HOME",
    "PYTHONPYCACHEPREFIX",
];

/// Single files a tool writes in a place that is otherwise read-only.
const HOME_WRITE_FILES: &[&str] = &[".cargo/.package-cache"];

/// Secrets in the home directory: out of reach even if a root above them
/// is granted (a user's `extra_read` of the whole home, say).
pub const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".config/gcloud",
    ".config/gh",
    ".password-store",
    ".vault-token",
    ".cargo/credentials",
    ".cargo/credentials.toml",
];

/// In the workspace, what would act later outside the sandbox: Rein's own
/// state (a forged task), git's metadata (hooks, `core.fsmonitor`, a
/// `commondir` elsewhere: run by the user's next git command — the whole
/// folder, a mount, so it cannot be renamed and replaced either), editor
/// and shell settings that run code.
pub const WORKSPACE_READ_ONLY: &[&str] = &[
    ".rein",
    ".git",
    ".vscode",
    ".idea",
    ".envrc",
    ".nvim.lua",
    ".nvimrc",
    ".exrc",
];

/// Devices every program may need.
const DEVICE_FILES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
];
const DEVICE_DIRS: &[&str] = &["/dev/pts", "/dev/shm"];

/// The policy for a command of the workspace described by `inputs`.
pub fn policy(inputs: &Inputs) -> Policy {
    let network = if inputs.network {
        Network::Host
    } else {
        Network::Loopback
    };
    if inputs.mode == Mode::Off {
        return Policy {
            no_new_privs: false,
            no_process_inspection: true,
            files: None,
            network: Network::Host,
            limits: inputs.limits.clone(),
            namespaces: false,
            own_root: false,
            own_processes: false,
        };
    }
    let home = inputs.home.as_deref();
    let in_home = |list: &[&str]| -> Vec<PathBuf> {
        home.map(|h| list.iter().map(|p| h.join(p)).collect())
            .unwrap_or_default()
    };

    let mut read: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
    if network == Network::Host {
        // DNS resolution reads `/etc/resolv.conf`, often a link into /run:
        // its folder, not the whole of /run (daemons' sockets).
        read.extend(resolver_folder());
    }
    read.extend(in_home(HOME_READ));
    read.extend(path_roots(inputs.path.as_deref(), home));
    read.push(inputs.workspace.clone());
    read.extend(inputs.extra_read.iter().cloned());

    let mut write: Vec<PathBuf> = vec![inputs.tmp.clone()];
    write.extend(DEVICE_DIRS.iter().map(PathBuf::from));
    let mut private_write = in_home(HOME_CACHES);
    private_write.extend(inputs.caches.iter().cloned());
    let mut seeds = Vec::new();
    if let Some(scratch) = &inputs.scratch {
        private_write.push(inputs.workspace.clone());
        seeds.push(crate::policy::Seed {
            target: inputs.workspace.clone(),
            from: scratch.clone(),
        });
    } else if inputs.mode == Mode::WorkspaceWrite {
        write.push(inputs.workspace.clone());
    }
    write.extend(inputs.extra_write.iter().cloned());

    let mut files: Vec<PathBuf> = DEVICE_FILES.iter().map(PathBuf::from).collect();
    files.extend(in_home(HOME_WRITE_FILES));

    let mut deny: Vec<PathBuf> = SYSTEM_DENY.iter().map(PathBuf::from).collect();
    deny.extend(in_home(HOME_SECRETS));
    deny.extend(inputs.deny_read.iter().cloned());

    let read_only = WORKSPACE_READ_ONLY
        .iter()
        .map(|p| inputs.workspace.join(p))
        .chain(inputs.protected.iter().cloned())
        .collect();

    Policy {
        no_new_privs: true,
        no_process_inspection: true,
        files: Some(FileAccess {
            read,
            write,
            files,
            deny,
            read_only,
            private_write,
            seeds,
        }),
        network,
        limits: inputs.limits.clone(),
        namespaces: true,
        own_root: true,
        own_processes: true,
    }
}

/// The folder `/etc/resolv.conf` is in once its links are followed, when
/// that is not `/etc` (systemd-resolved: `/run/systemd/resolve`).
fn resolver_folder() -> Option<PathBuf> {
    let resolved = std::fs::canonicalize("/etc/resolv.conf").ok()?;
    let folder = resolved.parent()?.to_path_buf();
    (folder != Path::new("/etc")).then_some(folder)
}

/// The git metadata of `workspace` beyond its own `.git` folder: the
/// `.git` files of its submodules (from `.gitmodules`) and, when the
/// workspace is a linked worktree or a submodule itself, its `.git` file.
/// A `.git` file names the git folder the user's git commands use.
pub fn git_metadata(workspace: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let own = workspace.join(".git");
    if own.is_file() {
        out.push(own);
    }
    let Ok(modules) = std::fs::read_to_string(workspace.join(".gitmodules")) else {
        return out;
    };
    for line in modules.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim() != "path" {
            continue;
        }
        let relative = Path::new(value.trim());
        // Only paths inside the workspace: `..` or an absolute path in a
        // repository's file names nothing of ours.
        if relative.is_absolute()
            || relative
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            continue;
        }
        let file = workspace.join(relative).join(".git");
        if file.exists() {
            out.push(file);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The directories of `PATH` and the toolchains they belong to: a `bin`
/// or `shims` directory runs what is beside it (`~/.pyenv/shims` →
/// `~/.pyenv`, `/opt/node/bin` → `/opt/node`); in the home directory, the
/// top folder it is in (`~/.nvm/versions/node/v20/bin` → `~/.nvm`). Never
/// a home directory itself, nor `/`.
fn path_roots(path: Option<&OsStr>, home: Option<&Path>) -> Vec<PathBuf> {
    let Some(path) = path else {
        return Vec::new();
    };
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .filter_map(|dir| match home.and_then(|h| dir.strip_prefix(h).ok()) {
            None => Some(toolchain_root(&dir)),
            Some(inside) => {
                let mut parts = inside.components();
                let first = parts.next()?.as_os_str().to_owned();
                let root = home?.join(&first);
                // `~/.local` and `~/.config` also hold keyrings and
                // secrets: only the folder below them that is on PATH.
                if first == ".local" || first == ".config" {
                    let second = parts.next()?;
                    Some(root.join(second.as_os_str()))
                } else {
                    Some(root)
                }
            }
        })
        .collect()
}

/// `dir`'s toolchain: its parent for a `bin` or `shims` directory, unless
/// that parent is `/` or looks like a home directory (`/root`,
/// `/home/<user>`).
fn toolchain_root(dir: &Path) -> PathBuf {
    let named = |n: &str| dir.file_name().is_some_and(|f| f == n);
    let Some(parent) = dir.parent().filter(|_| named("bin") || named("shims")) else {
        return dir.to_path_buf();
    };
    let home_like = parent == Path::new("/")
        || parent == Path::new("/root")
        || parent.parent() == Some(Path::new("/home"));
    if home_like {
        dir.to_path_buf()
    } else {
        parent.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Inputs {
        Inputs {
            workspace: "/w".into(),
            tmp: "/tmp/rein-1".into(),
            home: Some("/home/u".into()),
            path: Some("/home/u/.pyenv/shims:/usr/bin:/home/u/.local/bin:/home/u".into()),
            ..Inputs::default()
        }
    }

    #[test]
    fn path_entries_in_home_grant_their_toolchain_not_the_home() {
        let roots = path_roots(
            Some(OsStr::new(
                "/home/u/.pyenv/shims:/usr/bin:/home/u/.local/bin:/home/u/.nvm/versions/node/v20/bin:/home/u:/opt/node/bin:/root/.pyenv/shims:/root/bin:/bin:/home/v/bin",
            )),
            Some(Path::new("/home/u")),
        );
        assert_eq!(
            roots,
            [
                PathBuf::from("/home/u/.pyenv"),
                "/usr".into(),
                "/home/u/.local/bin".into(),
                "/home/u/.nvm".into(),
                "/opt/node".into(),
                "/root/.pyenv".into(),
                "/root/bin".into(),
                "/bin".into(),
                "/home/v/bin".into(),
            ]
        );
    }

    #[test]
    fn the_workspace_policy_keeps_secrets_and_later_actions_out() {
        let policy = policy(&inputs());
        let files = policy.files.unwrap();
        assert_eq!(policy.network, Network::Loopback);
        assert!(files.write.contains(&PathBuf::from("/w")));
        assert!(!files.read.contains(&PathBuf::from("/home/u")));
        assert!(files.deny.contains(&PathBuf::from("/home/u/.ssh")));
        assert!(files.read_only.contains(&PathBuf::from("/w/.git")));
        assert!(
            files
                .private_write
                .contains(&PathBuf::from("/home/u/.cargo/registry")),
            "caches are written privately"
        );
        assert!(!files.write.iter().any(|p| p.starts_with("/home/u")));
        assert!(policy.own_root && policy.own_processes);
        assert!(!files.write.iter().any(|p| p.ends_with(".cargo/bin")));
        assert!(
            !files.read.contains(&PathBuf::from("/run")),
            "no daemons' sockets"
        );
    }

    #[test]
    fn a_submodules_git_file_is_protected_and_paths_leaving_the_workspace_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path();
        for d in ["vendor/lib", "lib2", "outside"] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        std::fs::write(
            w.join("vendor/lib/.git"),
            "gitdir: ../../.git/modules/lib\n",
        )
        .unwrap();
        std::fs::write(w.join("lib2/.git"), "gitdir: ../.git/modules/lib2\n").unwrap();
        std::fs::write(w.join("outside/.git"), "gitdir: x\n").unwrap();
        std::fs::write(
            w.join(".gitmodules"),
            "[submodule \"lib\"]\n\tpath = vendor/lib\n[submodule \"b\"]\n  path=lib2\n[submodule \"c\"]\n\tpath = ../outside\n\tpath = /etc\n\tpath = missing\n",
        )
        .unwrap();
        assert_eq!(
            git_metadata(w),
            [w.join("lib2/.git"), w.join("vendor/lib/.git")]
        );
        // A linked worktree: its own `.git` is a file.
        let tree = w.join("vendor/lib");
        assert_eq!(git_metadata(&tree), [tree.join(".git")]);
    }

    #[test]
    fn modes_and_network() {
        let read_only = policy(&Inputs {
            mode: Mode::ReadOnly,
            ..inputs()
        });
        assert!(
            !read_only
                .files
                .unwrap()
                .write
                .contains(&PathBuf::from("/w"))
        );
        let networked = policy(&Inputs {
            network: true,
            ..inputs()
        });
        assert_eq!(networked.network, Network::Host);
        let off = policy(&Inputs {
            mode: Mode::Off,
            ..inputs()
        });
        assert_eq!((off.files, off.network), (None, Network::Host));
        assert!(off.no_process_inspection);
    }
}
