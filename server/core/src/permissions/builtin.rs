//! The built-in denies of [`Policy::with_builtins`](super::Policy::with_builtins):
//! what Rein never does, whatever the user's rules say, each with a reason
//! that tells the model what to do instead.
//!
//! Names are compared ASCII case-insensitively (`.GIT/config` is `.git/config`
//! on a case-insensitive file system).

use super::command::{SHELLS, Unit};

/// A built-in deny that matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Builtin {
    /// Shown after `built-in deny: ` (`.git/**`, `curl`, `rm -rf`).
    pub label: &'static str,
    /// A sentence for the model.
    pub reason: String,
}

/// Every built-in deny, as `(label, what it covers)`, for documentation and
/// `rein doctor`.
pub const BUILTIN_DENIES: &[(&str, &str)] = &[
    (
        ".git/**",
        "Git's database (any `.git` directory, and `.git` itself)",
    ),
    (".rein/**", "Rein's own state"),
    (".ssh/**", "SSH keys and configuration"),
    (".aws/**", "AWS credentials"),
    (".env", "environment files with secrets"),
    (
        ".env.*",
        "except `.env.example`, `.env.sample`, `.env.template` (also `.env.*.example`, …)",
    ),
    (
        ".envrc",
        "direnv's environment file (it exports secrets like `.env`)",
    ),
    ("*.pem", "keys and certificates"),
    ("*.key", "private keys"),
    ("id_rsa*", "SSH private keys (not the `.pub` public keys)"),
    ("id_dsa*", "SSH private keys (not the `.pub` public keys)"),
    ("id_ecdsa*", "SSH private keys (not the `.pub` public keys)"),
    (
        "id_ed25519*",
        "SSH private keys (not the `.pub` public keys)",
    ),
    (".netrc", "login credentials"),
    (".pgpass", "PostgreSQL passwords"),
    (".git-credentials", "Git's stored passwords and tokens"),
    (".docker/config.json", "registry credentials"),
    (".npmrc", "registry tokens"),
    (".pypirc", "registry tokens"),
    ("credentials.json", "credentials"),
    ("secrets.*", "secrets files"),
    (
        "network",
        "curl, wget, ssh, scp, sftp, rsync, nc, ncat, netcat, telnet, ftp; git push, fetch, pull, clone, ls-remote; \
         redirections to /dev/tcp/… and /dev/udp/…",
    ),
    (
        "rm -rf",
        "rm with both a recursive and a force flag, in any spelling",
    ),
    ("git reset --hard", "discards uncommitted work"),
    ("git clean -f", "deletes untracked files"),
    (
        "git checkout -- .",
        "discards uncommitted work (also `git checkout .`)",
    ),
    (
        "git restore .",
        "discards uncommitted work (unless only `--staged`)",
    ),
    ("sudo", "sudo, su, doas, pkexec"),
    ("mkfs", "mkfs*, dd, shutdown, reboot, halt, poweroff"),
    ("chmod -R", "recursive chmod, chown, chgrp"),
    ("kill -9 -1", "kill with pid -1 (every process of the user)"),
    (
        "fork bomb",
        "a function piping into itself in the background",
    ),
    (
        "| sh",
        "code piped (or redirected: `sh <<EOF`) into a shell or interpreter (sh, bash, zsh, …, python, perl, ruby, node)",
    ),
];

/// The built-in deny for a workspace-relative path (a file, or the
/// directory searched or listed), if any.
pub(crate) fn check_path(path: &str) -> Option<Builtin> {
    let components: Vec<String> = path
        .split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    for component in &components {
        let (label, reason) = match component.as_str() {
            ".git" => (
                ".git/**",
                format!(
                    "`{path}` is Git's own database (`.git`): reading or changing it directly can corrupt the repository; \
                     use `run_command` with `git status`, `git diff` or `git log` instead"
                ),
            ),
            ".rein" => (
                ".rein/**",
                format!(
                    "`{path}` is Rein's own state (`.rein`), not part of the task; leave it alone"
                ),
            ),
            ".ssh" => (".ssh/**", credentials(path, ".ssh")),
            ".aws" => (".aws/**", credentials(path, ".aws")),
            _ => continue,
        };
        return Some(Builtin { label, reason });
    }
    let name = components.last()?;
    let in_docker = components.len() >= 2 && components[components.len() - 2] == ".docker";
    let label = if in_docker && name == "config.json" {
        ".docker/config.json"
    } else {
        secret_file(name)?
    };
    Some(Builtin {
        label,
        reason: format!(
            "`{path}` looks like a secret file (`{label}`), which Rein never reads or changes; \
             if the task needs a value from it, ask the user (an example file such as `.env.example` is fine)"
        ),
    })
}

fn credentials(path: &str, dir: &str) -> String {
    format!(
        "`{path}` holds credentials (`{dir}`), which Rein never reads or changes; \
         if the task needs them, tell the user what to do"
    )
}

/// The pattern a (lower-case) file name matches, if it is a secret file.
fn secret_file(name: &str) -> Option<&'static str> {
    if name == ".env" {
        return Some(".env");
    }
    if let Some(rest) = name.strip_prefix(".env.") {
        let example = ["example", "sample", "template"]
            .iter()
            .any(|kind| rest == *kind || rest.ends_with(&format!(".{kind}")));
        return (!example).then_some(".env.*");
    }
    let exact = [
        ".envrc",
        ".netrc",
        ".pgpass",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        "credentials.json",
    ];
    if let Some(hit) = exact.iter().find(|e| name == **e) {
        return Some(hit);
    }
    if name.ends_with(".pem") {
        return Some("*.pem");
    }
    if name.ends_with(".key") {
        return Some("*.key");
    }
    // SSH private keys by their key type (`id_rsa`, `id_ed25519_sk`,
    // `id_rsa_work`), not any `id_*` (`id_test.go` is code); a public key
    // (`.pub`) is no secret.
    if !name.ends_with(".pub") {
        let keys = [
            ("id_rsa", "id_rsa*"),
            ("id_dsa", "id_dsa*"),
            ("id_ecdsa", "id_ecdsa*"),
            ("id_ed25519", "id_ed25519*"),
        ];
        if let Some((_, label)) = keys.iter().find(|(prefix, _)| name.starts_with(prefix)) {
            return Some(label);
        }
    }
    if name.starts_with("secrets.") {
        return Some("secrets.*");
    }
    None
}

const NETWORK: &[&str] = &[
    "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp",
];

/// Interpreters that run a program read from standard input when given no
/// script, and the options that give them one instead.
const INTERPRETERS: &[(&str, &str)] = &[
    ("python", "cm"),
    ("python3", "cm"),
    ("perl", "eE"),
    ("ruby", "e"),
    ("node", "ep"),
];

/// The built-in deny for one simple command, if any.
pub(crate) fn check_command(unit: &Unit) -> Option<Builtin> {
    if !unit.sockets.is_empty() {
        return Some(Builtin {
            label: "/dev/tcp",
            reason: network(&unit.text()),
        });
    }
    let argv = unit.argv();
    let name = unit.program_name()?.to_ascii_lowercase();
    let args = &argv[1..];
    let cmd = unit.text();
    let deny = |label: &'static str, reason: String| Some(Builtin { label, reason });

    if let Some(&net) = NETWORK.iter().find(|n| **n == name) {
        return deny(net, network(&cmd));
    }
    match name.as_str() {
        "git" => return check_git(&cmd, args),
        "rm" => {
            let (mut recursive, mut force) = (false, false);
            for arg in args.iter().take_while(|a| *a != "--") {
                if let Some(long) = arg.strip_prefix("--") {
                    recursive |= long == "recursive";
                    force |= long == "force";
                } else if let Some(short) = arg.strip_prefix('-') {
                    recursive |= short.contains(['r', 'R']);
                    force |= short.contains('f');
                }
            }
            if recursive && force {
                return deny(
                    "rm -rf",
                    format!(
                        "`{cmd}` deletes recursively without asking, which cannot be undone; \
                         delete specific files with `rm` (the user is asked), or tell the user what to remove"
                    ),
                );
            }
        }
        "sudo" | "su" | "doas" | "pkexec" => {
            return deny(
                "sudo",
                format!(
                    "`{cmd}` runs as another user, which is denied; \
                     tell the user which command needs privileges and why"
                ),
            );
        }
        "dd" | "shutdown" | "reboot" | "halt" | "poweroff" => return deny("mkfs", system(&cmd)),
        n if n.starts_with("mkfs") => return deny("mkfs", system(&cmd)),
        "chmod" | "chown" | "chgrp" => {
            let recursive = args.iter().take_while(|a| *a != "--").any(|a| {
                a == "--recursive"
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('R'))
            });
            if recursive {
                return deny(
                    "chmod -R",
                    format!(
                        "`{cmd}` changes permissions or ownership of a whole tree; \
                         change specific files instead, or ask the user"
                    ),
                );
            }
        }
        "kill" if kills_everything(args) => {
            return deny(
                "kill -9 -1",
                format!(
                    "`{cmd}` kills every process of the user (the editor too); \
                     kill a specific process id instead"
                ),
            );
        }
        _ => {}
    }
    if unit.piped_into && reads_program_from_stdin(&name, args) {
        return deny(
            "| sh",
            format!(
                "`{cmd}` runs code piped or redirected into `{name}` that the policy cannot check; \
                 write the script to a file with `create_file` (the user sees it), then run that file"
            ),
        );
    }
    None
}

/// The fork bomb deny.
pub(crate) fn fork_bomb() -> Builtin {
    Builtin {
        label: "fork bomb",
        reason: "the command defines a fork bomb, which would freeze the machine; it is never run"
            .into(),
    }
}

fn network(cmd: &str) -> String {
    format!(
        "`{cmd}` needs the network, and network access is denied: Rein works offline on your files; \
         tell the user what to download or fetch, and continue once they have"
    )
}

fn system(cmd: &str) -> String {
    format!(
        "`{cmd}` can destroy data on disks or stop the machine, so it is never run; \
         tell the user if it is really needed"
    )
}

fn check_git(cmd: &str, args: &[String]) -> Option<Builtin> {
    let at = git_subcommand(args)?;
    let sub = args[at].as_str();
    let rest = &args[at + 1..];
    let discard = |label: &'static str| {
        Some(Builtin {
            label,
            reason: format!(
                "`{cmd}` throws away uncommitted work, possibly the user's; \
                 undo your own changes with `edit_file` instead, or ask the user"
            ),
        })
    };
    let everything = |a: &String| matches!(a.as_str(), "." | "./" | ":/" | "*" | ":(top)");
    match sub {
        "push" | "fetch" | "pull" | "clone" | "ls-remote" => Some(Builtin {
            label: match sub {
                "push" => "git push",
                "fetch" => "git fetch",
                "pull" => "git pull",
                "clone" => "git clone",
                _ => "git ls-remote",
            },
            reason: format!(
                "`{cmd}` talks to a remote, and network access is denied: Rein works offline on your files; \
                 tell the user to run `git {sub}` themselves"
            ),
        }),
        "reset" if rest.iter().any(|a| a == "--hard") => discard("git reset --hard"),
        "clean"
            if rest.iter().any(|a| {
                a == "--force" || (a.starts_with('-') && !a.starts_with("--") && a.contains('f'))
            }) =>
        {
            discard("git clean -f")
        }
        "checkout" if rest.iter().any(everything) => discard("git checkout -- ."),
        "restore" if rest.iter().any(everything) => {
            let staged = rest.iter().any(|a| a == "--staged" || a == "-S");
            let worktree = rest.iter().any(|a| a == "--worktree" || a == "-W");
            if staged && !worktree {
                None
            } else {
                discard("git restore .")
            }
        }
        _ => None,
    }
}

/// The index of git's subcommand in its arguments, after global options.
fn git_subcommand(args: &[String]) -> Option<usize> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env" => i += 2,
            a if a.starts_with('-') => i += 1,
            _ => return Some(i),
        }
    }
    None
}

/// `kill … -1`: a pid of -1 is every process the user may signal. The
/// first option-like argument is the signal (`kill -1 1234` sends SIGHUP).
fn kills_everything(args: &[String]) -> bool {
    let mut options_done = false;
    let mut signal_given = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if !options_done {
            match arg.as_str() {
                "--" => {
                    options_done = true;
                    continue;
                }
                "-s" | "-n" | "--signal" => {
                    signal_given = true;
                    i += 1;
                    continue;
                }
                "-l" | "-L" | "--list" | "--table" => return false,
                a if a.starts_with('-') && !signal_given => {
                    signal_given = true;
                    continue;
                }
                _ => options_done = true,
            }
        }
        if arg == "-1" {
            return true;
        }
    }
    false
}

/// `… | sh`: a shell or interpreter with no script and no `-c`, reading
/// the program from the pipe.
fn reads_program_from_stdin(name: &str, args: &[String]) -> bool {
    let program_options = if SHELLS.contains(&name) {
        "c"
    } else if let Some((_, options)) = INTERPRETERS.iter().find(|(n, _)| *n == name) {
        options
    } else {
        return false;
    };
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg == "-" || arg == "-s" {
            return true;
        }
        if arg == "--" {
            return args.get(i + 1).is_none_or(|a| a == "-");
        }
        if matches!(arg.as_str(), "-o" | "+o" | "-O" | "+O" | "-W" | "-X") {
            i += 2;
            continue;
        }
        if let Some(short) = arg.strip_prefix('-').filter(|s| !s.starts_with('-')) {
            if short.contains(|c| program_options.contains(c)) {
                return false;
            }
        } else if !arg.starts_with('-') && !arg.starts_with('+') {
            // A script file.
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for (name, want) in [
            (".env", Some(".env")),
            (".env.local", Some(".env.*")),
            (".env.production", Some(".env.*")),
            (".env.example", None),
            (".env.sample", None),
            (".env.template", None),
            (".env.local.example", None),
            (".envrc", Some(".envrc")),
            (".envrc.example", None),
            (".pgpass", Some(".pgpass")),
            (".git-credentials", Some(".git-credentials")),
            ("server.pem", Some("*.pem")),
            ("tls.key", Some("*.key")),
            ("keys.rs", None),
            ("id_rsa", Some("id_rsa*")),
            ("id_rsa.pub", None),
            ("id_dsa", Some("id_dsa*")),
            ("id_ed25519", Some("id_ed25519*")),
            ("id_ed25519.pub", None),
            ("id_test.go", None),
            ("identity.py", None),
            ("id_ecdsa_sk", Some("id_ecdsa*")),
            (".netrc", Some(".netrc")),
            (".npmrc", Some(".npmrc")),
            (".pypirc", Some(".pypirc")),
            ("credentials.json", Some("credentials.json")),
            ("secrets.yaml", Some("secrets.*")),
            ("secrets", None),
            ("my_secrets.yaml", None),
            ("main.rs", None),
        ] {
            assert_eq!(secret_file(name), want, "{name}");
        }
    }

    #[test]
    fn paths() {
        for (path, want) in [
            (".git", Some(".git/**")),
            (".git/config", Some(".git/**")),
            ("vendor/lib/.git/HEAD", Some(".git/**")),
            (".GIT/config", Some(".git/**")),
            (".gitignore", None),
            (".github/workflows/ci.yml", None),
            (".rein/tasks/1.json", Some(".rein/**")),
            ("home/.ssh/config", Some(".ssh/**")),
            (".aws/config", Some(".aws/**")),
            ("config/.env", Some(".env")),
            ("config/.ENV.local", Some(".env.*")),
            ("config/.env.example", None),
            (".docker/config.json", Some(".docker/config.json")),
            ("home/.DOCKER/config.json", Some(".docker/config.json")),
            ("docker/config.json", None),
            (".docker/daemon.json", None),
            ("src/main.rs", None),
            ("", None),
        ] {
            assert_eq!(check_path(path).map(|b| b.label), want, "{path}");
        }
    }

    #[test]
    fn kill_arguments() {
        let args = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert!(kills_everything(&args("-9 -1")));
        assert!(kills_everything(&args("-KILL -1")));
        assert!(kills_everything(&args("-s KILL -1")));
        assert!(kills_everything(&args("-- -1")));
        assert!(!kills_everything(&args("-1")));
        assert!(kills_everything(&args("1234 -1")));
        assert!(!kills_everything(&args("-1 1234")));
        assert!(!kills_everything(&args("-9 1234")));
    }
}
