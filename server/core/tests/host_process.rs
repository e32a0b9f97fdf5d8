//! `ProcessExec` against real processes: exit codes, the log and the tail,
//! huge and odd output, timeouts and cancellation killing the whole process
//! group, the environment, errors, and failures from a real unittest run.
//!
//! Timeouts here are hang guards, never assertions about speed.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use rein_core::exec::TAIL_LINES;
use rein_core::os::process::ProcessExec;
use rein_core::os::testcmd;
use rein_core::testing::command::Runner;
use rein_core::testtarget::TestTarget;
use rein_core::{CommandKind, CommandResult, CommandSpec, Exec, ExecError};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// Longer than any test should take: reaching it means a hang.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// How long a killed process may take to be seen dead: generous, and far
/// shorter than [`LONG_SLEEP`], so a process that was not killed cannot
/// pass by ending on its own.
const DEATH_GUARD: Duration = Duration::from_secs(15);

/// Commands that must be killed sleep this long (seconds).
const LONG_SLEEP: &str = "600";

struct Setup {
    dir: TempDir,
}

impl Setup {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn spec(&self, command: &str) -> CommandSpec {
        CommandSpec {
            command: command.to_owned(),
            cwd: self.path().to_path_buf(),
            timeout: HANG_GUARD,
            log_path: self.path().join(".rein/artifacts/task/command.log"),
            kind: CommandKind::Other,
            network: false,
            sandbox_mode: None,
            report: None,
            layer: None,
        }
    }

    async fn run(&self, command: &str) -> CommandResult {
        run_spec(&ProcessExec::new(), self.spec(command))
            .await
            .unwrap()
    }

    fn log(&self, result: &CommandResult) -> Vec<u8> {
        std::fs::read(&result.log_path).unwrap()
    }

    /// The pid a command wrote to `name`, once it exists.
    /// Runs `command`, cancels it once it has written the pid in
    /// `pid_file` (so the cancel lands while it runs, not before), and
    /// returns that pid and the result.
    async fn cancel_once_written(
        &self,
        exec: ProcessExec,
        command: &str,
        pid_file: &str,
    ) -> (i32, rein_core::exec::CommandResult) {
        let cancel = CancellationToken::new();
        let run = tokio::spawn({
            let spec = self.spec(command);
            let cancel = cancel.clone();
            async move { exec.run(spec, cancel).await }
        });
        let pid = self.pid_in(pid_file).await;
        cancel.cancel();
        let result = tokio::time::timeout(HANG_GUARD, run)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        (pid, result)
    }

    async fn pid_in(&self, name: &str) -> i32 {
        let path = self.path().join(name);
        let read = async {
            loop {
                if let Ok(text) = std::fs::read_to_string(&path)
                    && let Ok(pid) = text.trim().parse()
                {
                    return pid;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(HANG_GUARD, read).await.unwrap()
    }
}

async fn run_spec(exec: &ProcessExec, spec: CommandSpec) -> Result<CommandResult, ExecError> {
    let run = exec.run(spec, CancellationToken::new());
    tokio::time::timeout(HANG_GUARD, run).await.unwrap()
}

/// Alive means running: a zombie is dead (PID 1 of some containers never
/// reaps the orphans it inherits, so they stay zombies).
fn is_alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next());
    !matches!(state, Some('Z' | 'X'))
}

/// Asserts that `pid` dies (within [`DEATH_GUARD`]); kills it either way,
/// so a failing test leaves nothing behind.
async fn assert_dies(pid: i32, what: &str) {
    let wait = async {
        while is_alive(pid) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    let died = tokio::time::timeout(DEATH_GUARD, wait).await.is_ok();
    kill(pid);
    assert!(died, "{what} (pid {pid}) is still alive");
}

/// `command` with `{sleep}` replaced by [`LONG_SLEEP`].
fn long(command: &str) -> String {
    command.replace("{sleep}", LONG_SLEEP)
}

fn kill(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
}

#[tokio::test]
async fn exit_codes_are_reported() {
    let setup = Setup::new();
    let ok = setup.run("true").await;
    assert_eq!(ok.exit_code, Some(0));
    assert!(ok.succeeded());
    let failed = setup.run("echo nope; exit 3").await;
    assert_eq!(failed.exit_code, Some(3));
    assert!(!failed.succeeded());
    assert_eq!(failed.tail, ["nope"]);
    assert!(!failed.timed_out && !failed.cancelled);
}

#[tokio::test]
async fn a_command_killed_by_a_signal_has_no_exit_code() {
    let setup = Setup::new();
    let result = setup.run("kill -9 $$").await;
    assert_eq!(result.exit_code, None);
    assert!(!result.timed_out && !result.cancelled && !result.succeeded());
}

#[tokio::test]
async fn stdin_is_empty_and_the_cwd_is_the_spec_cwd() {
    let setup = Setup::new();
    let result = setup.run("cat; pwd").await;
    assert_eq!(result.exit_code, Some(0));
    let cwd = std::fs::canonicalize(setup.path()).unwrap();
    assert_eq!(result.tail, [cwd.display().to_string()]);
}

#[tokio::test]
async fn stdout_and_stderr_are_interleaved_in_arrival_order() {
    let setup = Setup::new();
    // The pauses only order the writes; nothing here measures time.
    let result = setup
        .run("echo out 1; sleep 0.2; echo err 1 >&2; sleep 0.2; echo out 2; sleep 0.2; echo err 2 >&2")
        .await;
    assert_eq!(
        String::from_utf8(setup.log(&result)).unwrap(),
        "out 1\nerr 1\nout 2\nerr 2\n"
    );
    assert_eq!(result.tail, ["out 1", "err 1", "out 2", "err 2"]);
    assert_eq!(result.total_lines, 4);
    assert_eq!(result.total_bytes, 24);
}

#[tokio::test]
async fn lines_from_both_pipes_are_never_mixed() {
    let setup = Setup::new();
    // Both pipes at full speed: reads split lines anywhere, so only the
    // line alignment keeps them whole in the log.
    let command = "long=$(printf 'x%.0s' $(seq 1 5000)); \
         for i in $(seq 1 300); do echo \"out $i $long\"; done & \
         for i in $(seq 1 300); do echo \"err $i $long\" >&2; done; wait";
    let result = setup.run(command).await;
    let log = String::from_utf8(setup.log(&result)).unwrap();
    let long = "x".repeat(5000);
    let (mut out, mut err) = (0, 0);
    for line in log.lines() {
        let (stream, rest) = line.split_once(' ').unwrap();
        let (n, tail) = rest.split_once(' ').unwrap();
        assert_eq!(tail, long, "a line was cut or mixed");
        let counter = if stream == "out" { &mut out } else { &mut err };
        *counter += 1;
        assert_eq!(n.parse::<i32>().unwrap(), *counter, "{stream} out of order");
    }
    assert_eq!((out, err), (300, 300));
    assert_eq!(result.total_lines, 600);
}

#[tokio::test]
async fn the_tail_is_the_last_lines() {
    let setup = Setup::new();
    let result = setup.run("seq 1 200").await;
    let expected: Vec<String> = (151..=200).map(|i| i.to_string()).collect();
    assert_eq!(result.tail.len(), TAIL_LINES);
    assert_eq!(result.tail, expected);
    assert_eq!(result.total_lines, 200);
    let log = String::from_utf8(setup.log(&result)).unwrap();
    assert_eq!(log.lines().count(), 200);
}

#[tokio::test]
async fn huge_output_goes_to_the_log_not_to_memory() {
    let setup = Setup::new();
    let result = setup.run("yes line | head -c 50000000").await;
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(result.total_bytes, 50_000_000);
    assert_eq!(result.total_lines, 10_000_000);
    assert_eq!(
        std::fs::metadata(&result.log_path).unwrap().len(),
        50_000_000
    );
    assert_eq!(result.tail, vec!["line"; TAIL_LINES]);
}

#[tokio::test]
async fn a_huge_line_is_cut_in_the_tail_and_whole_in_the_log() {
    let setup = Setup::new();
    let result = setup.run("head -c 5000000 /dev/zero | tr '\\0' x").await;
    assert_eq!(result.total_bytes, 5_000_000);
    assert_eq!(result.total_lines, 1);
    let [line] = result.tail.as_slice() else {
        panic!("one line expected: {:?}", result.tail.len());
    };
    assert!(line.starts_with(&"x".repeat(2_000)));
    assert!(
        line.ends_with("… [line cut: 5000000 bytes in the log]"),
        "{}",
        &line[1990..]
    );
    // The log ends the unterminated line, so it is one byte longer.
    let log = setup.log(&result);
    assert_eq!(log.len(), 5_000_001);
    assert!(log[..5_000_000].iter().all(|&b| b == b'x'));
}

#[tokio::test]
async fn a_last_line_without_newline_is_kept() {
    let setup = Setup::new();
    let result = setup.run("printf 'a\\nb'").await;
    assert_eq!(result.tail, ["a", "b"]);
    assert_eq!(result.total_lines, 2);
    assert_eq!(result.total_bytes, 3);
    assert_eq!(setup.log(&result), b"a\nb\n");
}

#[tokio::test]
async fn invalid_utf8_is_shown_lossily_and_logged_as_is() {
    let setup = Setup::new();
    let result = setup.run("printf 'bad \\377 byte\\r\\n'").await;
    assert_eq!(result.tail, ["bad \u{fffd} byte"]);
    assert_eq!(setup.log(&result), b"bad \xff byte\r\n");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_group() {
    let setup = Setup::new();
    let mut spec = setup.spec(&long(
        "echo started; sleep {sleep} & echo $! > grandchild.pid; sleep {sleep}",
    ));
    spec.timeout = Duration::from_secs(1);
    let result = run_spec(&ProcessExec::new(), spec).await.unwrap();
    assert!(result.timed_out);
    assert!(!result.cancelled);
    assert_eq!(result.exit_code, None);
    assert_eq!(result.tail[0], "started");
    let note = result.tail.last().unwrap();
    assert!(note.starts_with("[rein] timed out after 1 s"), "{note}");
    let grandchild = setup.pid_in("grandchild.pid").await;
    assert_dies(grandchild, "the grandchild, after the timeout,").await;
}

/// Stopped (cancelled) once it does ignore SIGTERM: it writes its pid
/// after setting the trap. A short timeout instead could fire before the
/// trap is set, and a SIGTERM would kill it with nothing proved.
#[tokio::test]
async fn processes_ignoring_sigterm_get_sigkill() {
    let setup = Setup::new();
    let command =
        "sh -c 'trap \"\" TERM; echo $$ > stubborn.pid; while :; do sleep 1; done' & wait";
    let exec = ProcessExec::new().with_kill_grace(Duration::from_millis(200));
    let (stubborn, result) = setup
        .cancel_once_written(exec, command, "stubborn.pid")
        .await;
    assert!(result.cancelled);
    assert_dies(stubborn, "a process ignoring SIGTERM").await;
}

#[tokio::test]
async fn cancellation_kills_the_whole_group_and_returns() {
    let setup = Setup::new();
    let command = long("sleep {sleep} & echo $! > grandchild.pid; sleep {sleep}");
    let (grandchild, result) = setup
        .cancel_once_written(ProcessExec::new(), &command, "grandchild.pid")
        .await;
    assert!(result.cancelled);
    assert!(!result.timed_out);
    assert_eq!(result.exit_code, None);
    assert!(result.tail.last().unwrap().starts_with("[rein] cancelled"));
    assert_dies(grandchild, "the grandchild, after cancellation,").await;
}

#[tokio::test]
async fn an_already_cancelled_run_starts_nothing() {
    let setup = Setup::new();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let spec = setup.spec("touch started");
    let result = ProcessExec::new().run(spec, cancel).await.unwrap();
    assert!(result.cancelled);
    assert!(!setup.path().join("started").exists());
    assert!(result.log_path.exists());
}

#[tokio::test]
async fn dropping_the_run_kills_the_group() {
    let setup = Setup::new();
    let spec = setup.spec(&long(
        "sleep {sleep} & echo $! > grandchild.pid; sleep {sleep}",
    ));
    let run =
        tokio::spawn(async move { ProcessExec::new().run(spec, CancellationToken::new()).await });
    let grandchild = setup.pid_in("grandchild.pid").await;
    run.abort();
    let _ = run.await;
    assert_dies(grandchild, "the grandchild of a dropped run").await;
}

#[tokio::test]
async fn leftovers_holding_the_output_do_not_hang_the_call() {
    let setup = Setup::new();
    let result = setup
        .run(&long("sleep {sleep} & echo $! > leftover.pid; echo done"))
        .await;
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(result.tail[0], "done");
    assert!(result.tail.last().unwrap().contains("kept its output open"));
    let leftover = setup.pid_in("leftover.pid").await;
    assert_dies(leftover, "a leftover holding the output").await;
}

#[tokio::test]
async fn detached_leftovers_are_left_alone() {
    let setup = Setup::new();
    let command = long("sleep {sleep} >/dev/null 2>&1 & echo $! > detached.pid; echo done");
    let result = setup.run(&command).await;
    assert_eq!(result.tail, ["done"]);
    let detached = setup.pid_in("detached.pid").await;
    let alive = is_alive(detached);
    kill(detached);
    assert!(alive, "a process that redirected its output was killed");
}

/// Stopped (cancelled) once the process has escaped its group with the
/// pipes: a short timeout instead could fire before it did, and prove
/// nothing.
#[tokio::test]
async fn an_escaped_process_holding_the_pipes_does_not_hang_the_call() {
    let setup = Setup::new();
    let has_setsid = std::process::Command::new("sh")
        .args(["-c", "command -v setsid"])
        .output()
        .is_ok_and(|o| o.status.success());
    // util-linux is everywhere this runs: without it, fail rather than pass
    // having checked nothing.
    assert!(
        has_setsid,
        "setsid (util-linux) is needed to escape a group"
    );
    let command = long("setsid sh -c 'echo $$ > escaped.pid; exec sleep {sleep}' & sleep {sleep}");
    let (escaped, result) = setup
        .cancel_once_written(ProcessExec::new(), &command, "escaped.pid")
        .await;
    kill(escaped);
    assert!(result.cancelled);
    assert!(
        result.tail.iter().any(|l| l.contains("stopped reading")),
        "{:?}",
        result.tail
    );
}

#[tokio::test]
async fn commands_see_no_colour_and_no_secrets() {
    let setup = Setup::new();
    // Given, not set in this process: tests never change its environment.
    let path = std::env::var("PATH").unwrap_or_default();
    let exec = ProcessExec::new().with_env([
        ("PATH", path.as_str()),
        ("FOO_API_KEY", "sk-fake-foo"),
        ("ANTHROPIC_API_KEY", "sk-ant-fake"),
        ("GITHUB_TOKEN", "ghp_fake"),
        ("KEEP_ME", "kept"),
        ("TERM", "xterm-256color"),
    ]);
    let result = run_spec(&exec, setup.spec("env")).await.unwrap();
    let env = String::from_utf8(setup.log(&result)).unwrap();
    let mut lines: Vec<&str> = env.lines().filter(|l| !l.starts_with("PWD=")).collect();
    lines.retain(|l| !l.starts_with("PATH=") && !l.starts_with("SHLVL=") && !l.starts_with("_="));
    lines.sort_unstable();
    assert_eq!(lines, ["KEEP_ME=kept", "NO_COLOR=1", "TERM=dumb"]);
}

/// The attack: a script holding the key (a value of the server's own
/// environment, or the configured key) prints it; the model reads the
/// tail and anyone can read the spilled log. Neither holds it, nor any
/// key-shaped token, even on a line longer than a pipe read.
#[tokio::test]
async fn command_output_with_the_key_is_redacted_in_the_spilled_log() {
    const ENV_KEY: &str = "env-secret-6a5b4c3d2e1f";
    const CONFIG_KEY: &str = "config-key-0f1e2d3c4b5a";
    const SHAPED: &str = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";
    let setup = Setup::new();
    std::fs::write(
        setup.path().join("leak.sh"),
        format!(
            "echo \"env: {ENV_KEY}\"\necho \"config: {CONFIG_KEY}\" >&2\necho \"token={SHAPED}\"\n\
             head -c 200000 /dev/zero | tr '\\0' x\necho \"{ENV_KEY} at the end of a long line\"\n"
        ),
    )
    .unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    let env = [("PATH", path.as_str()), ("DEPLOY_API_KEY", ENV_KEY)];
    // Without a redactor: the secrets of its own base environment.
    let exec = ProcessExec::new().with_env(env);
    let result = run_spec(&exec, setup.spec("sh leak.sh")).await.unwrap();
    let log = String::from_utf8(setup.log(&result)).unwrap();
    assert!(
        !log.contains(ENV_KEY) && !log.contains(SHAPED),
        "{log:.300}"
    );
    assert!(log.contains(CONFIG_KEY), "not told of the configured key");
    // With the task's redactor: the configured key too.
    let redactor = rein_models::Redactor::new(
        env.map(|(k, v)| (k.to_owned(), v.to_owned())),
        [CONFIG_KEY.to_owned()],
    );
    let exec = ProcessExec::new().with_env(env).with_redactor(redactor);
    let result = run_spec(&exec, setup.spec("sh leak.sh")).await.unwrap();
    let log = String::from_utf8(setup.log(&result)).unwrap();
    for secret in [ENV_KEY, CONFIG_KEY, SHAPED] {
        assert!(!log.contains(secret), "{secret} in the log");
        assert!(
            !result.tail.iter().any(|l| l.contains(secret)),
            "{secret} in the tail"
        );
    }
    assert_eq!(log.matches("<redacted>").count(), 4, "{log:.300}");
    assert!(log.contains("<redacted> at the end of a long line\n"));
    assert_eq!(result.exit_code, Some(0));
}

#[tokio::test]
async fn the_inherited_environment_has_no_colour() {
    let setup = Setup::new();
    let result = setup.run("env").await;
    let env = String::from_utf8(setup.log(&result)).unwrap();
    assert!(env.lines().any(|l| l == "NO_COLOR=1"), "{env}");
    assert!(env.lines().any(|l| l == "TERM=dumb"), "{env}");
}

#[tokio::test]
async fn a_missing_shell_is_a_spawn_error() {
    let setup = Setup::new();
    let exec = ProcessExec::new().with_shell("/nonexistent/sh");
    let err = run_spec(&exec, setup.spec("true")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "could not start `true`: the shell /nonexistent/sh was not found"
    );
}

#[tokio::test]
async fn a_missing_working_directory_is_a_spawn_error() {
    let setup = Setup::new();
    let mut spec = setup.spec("true");
    spec.cwd = setup.path().join("gone");
    let err = run_spec(&ProcessExec::new(), spec).await.unwrap_err();
    let ExecError::Spawn { reason, .. } = err else {
        panic!("a spawn error expected: {err:?}");
    };
    assert!(
        reason.contains("working directory") && reason.contains("gone"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_log_that_cannot_be_created_is_a_log_error() {
    let setup = Setup::new();
    std::fs::write(setup.path().join("file"), "").unwrap();
    let mut spec = setup.spec("touch started");
    spec.log_path = setup.path().join("file/command.log");
    let err = run_spec(&ProcessExec::new(), spec).await.unwrap_err();
    let ExecError::Log { path, .. } = err else {
        panic!("a log error expected: {err:?}");
    };
    assert!(path.ends_with("file/command.log"), "{path}");
    assert!(
        !setup.path().join("started").exists(),
        "the command ran without a log"
    );
}

#[tokio::test]
async fn a_log_that_fills_up_stops_the_command() {
    let setup = Setup::new();
    if !Path::new("/dev/full").exists() {
        return;
    }
    let mut spec = setup.spec("echo $$ > shell.pid; exec yes");
    spec.log_path = PathBuf::from("/dev/full");
    let err = run_spec(&ProcessExec::new(), spec).await.unwrap_err();
    assert!(matches!(err, ExecError::Log { .. }), "{err:?}");
    let shell = setup.pid_in("shell.pid").await;
    assert_dies(shell, "a command whose log is full").await;
}

#[tokio::test]
async fn failures_come_from_a_real_unittest_run() {
    let setup = Setup::new();
    std::fs::create_dir(setup.path().join("tests")).unwrap();
    std::fs::write(setup.path().join("tests/__init__.py"), "").unwrap();
    std::fs::write(
        setup.path().join("tests/test_cart.py"),
        "import unittest\n\n\
         class TestCart(unittest.TestCase):\n    \
             def test_total(self):\n        self.assertEqual(3, 30)\n\n    \
             def test_empty(self):\n        self.assertEqual(0, 0)\n\n    \
             def test_broken(self):\n        raise KeyError('price')\n",
    )
    .unwrap();
    let command = testcmd::detect(setup.path()).unwrap();
    assert_eq!(command.runner, Runner::Unittest);

    let mut spec = setup.spec(&command.for_target(None));
    spec.kind = CommandKind::Test;
    let result = run_spec(&ProcessExec::new(), spec).await.unwrap();
    assert_eq!(result.exit_code, Some(1));
    assert_eq!(
        result.failures,
        [
            "tests.test_cart.TestCart.test_broken",
            "tests.test_cart.TestCart.test_total"
        ]
    );
    assert!(
        result
            .tail
            .iter()
            .any(|l| l.starts_with("FAILED (failures=1, errors=1)"))
    );

    // The same test again, targeted the way the failure list names it.
    let target = TestTarget::parse("tests/test_cart.py::TestCart::test_total").unwrap();
    let mut spec = setup.spec(&command.for_target(target.as_ref()));
    spec.kind = CommandKind::Test;
    let result = run_spec(&ProcessExec::new(), spec).await.unwrap();
    assert_eq!(result.failures, ["tests.test_cart.TestCart.test_total"]);
    assert!(result.tail.iter().any(|l| l.starts_with("Ran 1 test ")));
}

#[tokio::test]
async fn other_commands_are_not_scanned_for_failures() {
    let setup = Setup::new();
    let result = setup.run("echo '--- FAIL: TestTotal (0.00s)'").await;
    assert_eq!(result.failures, Vec::<String>::new());
}

/// A run with Rein's own reporter: its files are in a directory made for
/// it alone under the command's `TMPDIR` (outside the workspace), named by
/// `$REIN_RUN_DIR`, with a token; what the run leaves in the report file
/// after that token comes back, and the directory is gone after. A run
/// that writes none has none.
#[tokio::test]
async fn a_private_run_gets_its_own_directory_and_its_report_back() {
    use rein_core::exec::{PrivateReport, ReportSpec};
    let setup = Setup::new();
    let tmp = tempfile::tempdir().unwrap();
    let exec = ProcessExec::new().with_env([
        ("PATH", std::env::var_os("PATH").unwrap_or_default()),
        ("TMPDIR", tmp.path().as_os_str().to_owned()),
    ]);
    let private = |command: &str| CommandSpec {
        kind: CommandKind::Test,
        report: Some(ReportSpec::Private {
            files: vec![("given.txt".into(), "from rein".into())],
            report: "report.json".into(),
        }),
        ..setup.spec(command)
    };
    let result = run_spec(
        &exec,
        private(
            "d=\"$REIN_RUN_DIR\"; { cat \"$d/token\"; echo; cat \"$d/given.txt\"; } > \"$d/report.json\"; echo \"$d\"",
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        result.private_report.as_deref(),
        Some(&PrivateReport::Text("from rein".into()))
    );
    let dir = PathBuf::from(result.tail.last().unwrap());
    assert_eq!(dir.parent(), Some(tmp.path()));
    assert!(!dir.starts_with(setup.path()));
    assert!(!dir.exists(), "the run's directory is removed");

    let none = run_spec(&exec, private("echo 'Ran 1 test in 0.001s'; echo OK"))
        .await
        .unwrap();
    assert_eq!(
        none.private_report.as_deref(),
        Some(&PrivateReport::Missing)
    );
    // Other runs have no report of Rein's.
    let plain = run_spec(&exec, setup.spec("true")).await.unwrap();
    assert_eq!(plain.private_report, None);
}
