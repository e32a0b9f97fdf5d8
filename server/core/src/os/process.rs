//! [`ProcessExec`]: runs the shell commands behind `run_tests` and
//! `run_command`.
//!
//! Each command runs as `sh -c <command>` in its own process group, so a
//! timeout or a cancellation can kill everything it started (a test
//! runner's workers, a server it forked), not just the shell. Its
//! environment is the host's minus anything that looks like a secret: the
//! model chooses the commands, and tool output goes back to the model.
//!
//! Output is streamed to the log file as it arrives, stdout and stderr
//! interleaved line by line; memory holds only the last [`TAIL_LINES`]
//! lines and the failing tests, whatever the command prints. Every secret
//! is redacted from the output as it arrives, before the log, the tail
//! and the failures see it.
//!
//! A timeout or a cancellation kills the whole group (SIGTERM, then SIGKILL
//! after [`KILL_GRACE`]). When the shell exits by itself, processes it left
//! behind are killed only if they still hold its output open
//! [`DRAIN_AFTER_EXIT`] later (a hung test worker, `server &`): otherwise
//! the call would wait for them forever. One that redirected its output
//! (`server >log 2>&1 &`) was detached on purpose and is left alone. Either
//! way the call returns within a bounded time after the command ends, even
//! if a process that left the group (`setsid`) keeps the pipes open.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use rein_models::{Redactor, StreamRedactor};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::junit;
use super::layer::LayerDir;
use super::private_run::{self, RunDir};
use crate::exec::{
    CommandKind, CommandResult, CommandSpec, Confinement, Exec, ExecError, Launcher, Layer,
    PrivateReport, RUN_DIR_VAR, ReportSpec, TAIL_LINES,
};
use crate::testing::failures::{FailureScanner, strip_ansi};
use crate::testing::passes::Passes;
use crate::testing::tally::Tally;

/// How long a killed command's processes get between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

/// A line kept in the tail is cut to this many characters (the log has it
/// whole): one minified file or base64 blob must not fill the model's view.
pub const MAX_LINE_CHARS: usize = 2_000;

/// After the shell exits, how long processes it left behind may keep its
/// output open before reading stops.
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);

/// After the group was killed, how long to wait for the pipes to close
/// (a process that escaped the group may still hold them).
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(500);

/// After SIGKILL, how long to wait for the shell to be reaped.
const REAP_AFTER_KILL: Duration = Duration::from_secs(1);

/// How often to look whether killed processes are gone.
const POLL: Duration = Duration::from_millis(20);

/// Bytes read from a pipe at once.
const READ_CHUNK: usize = 64 * 1024;

/// A line longer than this is passed on in pieces, so a command printing
/// gigabytes without a newline holds no more than this per pipe. Shorter
/// lines reach the log whole, never mixed with the other pipe's output.
const MAX_LINE_PIECE: usize = 64 * 1024;

/// Pieces in flight between the pipe readers and the log writer. Bounded,
/// so a slow disk slows the command (its pipe fills) rather than growing
/// our memory.
const CHANNEL_DEPTH: usize = 16;

/// Enough bytes to hold [`MAX_LINE_CHARS`] characters of any UTF-8.
const LINE_HEAD_BYTES: usize = MAX_LINE_CHARS * 4;

/// Runs commands with `sh -c` on this machine: the host's [`Exec`].
#[derive(Clone)]
pub struct ProcessExec {
    shell: PathBuf,
    env: BaseEnv,
    kill_grace: Duration,
    /// What starts the shell and confines it (`rein sandbox-exec`); `None`:
    /// the shell runs directly.
    launcher: Option<Arc<dyn Launcher>>,
    /// `None`: the secrets of the base environment and the key shapes.
    redactor: Option<Redactor>,
}

/// Where a command's environment comes from, before scrubbing.
#[derive(Clone)]
enum BaseEnv {
    /// This process's environment, read (never changed) at each run.
    Inherit,
    /// A fixed set, for tests and embedders.
    Given(Vec<(OsString, OsString)>),
}

impl Default for ProcessExec {
    fn default() -> Self {
        Self::new()
    }
}

/// Never prints the environment: it may hold the very secrets the scrub
/// removes.
impl fmt::Debug for ProcessExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env = match &self.env {
            BaseEnv::Inherit => "inherited".to_owned(),
            BaseEnv::Given(vars) => format!("{} given variables", vars.len()),
        };
        f.debug_struct("ProcessExec")
            .field("shell", &self.shell)
            .field("env", &env)
            .field("kill_grace", &self.kill_grace)
            .field("launcher", &self.launcher)
            .field("redactor", &self.redactor)
            .finish()
    }
}

impl ProcessExec {
    /// Runs commands with `/bin/sh`, in this process's environment (scrubbed).
    pub fn new() -> Self {
        Self {
            // An absolute path: the scrubbed environment may have no PATH.
            shell: PathBuf::from("/bin/sh"),
            env: BaseEnv::Inherit,
            kill_grace: KILL_GRACE,
            launcher: None,
            redactor: None,
        }
    }

    /// Starts every command through `launcher`: how the sandbox is
    /// applied.
    pub fn with_launcher(mut self, launcher: Arc<dyn Launcher>) -> Self {
        self.launcher = Some(launcher);
        self
    }

    /// Uses `vars` instead of this process's environment as the base that
    /// is scrubbed and passed to commands.
    pub fn with_env<K, V>(mut self, vars: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        let vars = vars.into_iter().map(|(k, v)| (k.into(), v.into()));
        self.env = BaseEnv::Given(vars.collect());
        self
    }

    /// Runs commands with another POSIX shell (called as `<shell> -c`).
    pub fn with_shell(mut self, shell: impl Into<PathBuf>) -> Self {
        self.shell = shell.into();
        self
    }

    /// Changes the time between SIGTERM and SIGKILL (default [`KILL_GRACE`]).
    pub fn with_kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    /// Redacts output with `redactor` (built from the same environment and
    /// the configured key) instead of the base environment's secrets.
    pub fn with_redactor(mut self, redactor: Redactor) -> Self {
        self.redactor = Some(redactor);
        self
    }

    fn redactor(&self) -> Redactor {
        self.redactor
            .clone()
            .unwrap_or_else(|| Redactor::new(utf8_vars(self.base_env()), None))
    }

    fn base_env(&self) -> Vec<(OsString, OsString)> {
        match &self.env {
            BaseEnv::Inherit => std::env::vars_os().collect(),
            BaseEnv::Given(vars) => vars.clone(),
        }
    }

    /// The variables a command gets on top of the scrubbed base: the
    /// launcher's (its private `TMPDIR`).
    fn extra_env(&self) -> Vec<(OsString, OsString)> {
        self.launcher.as_ref().map(|l| l.env()).unwrap_or_default()
    }

    fn spawn(&self, spec: &CommandSpec, run_dir: Option<&RunDir>) -> Result<Child, ExecError> {
        let spawn_error = |reason: String| ExecError::Spawn {
            command: spec.command.clone(),
            reason,
        };
        // Checked first: spawning in a missing directory fails with the
        // same "No such file or directory" as a missing shell.
        if !spec.cwd.is_dir() {
            let cwd = spec.cwd.display();
            return Err(spawn_error(format!(
                "the working directory {cwd} does not exist"
            )));
        }
        let prefix = self
            .launcher
            .as_ref()
            .map(|l| l.prefix(spec))
            .unwrap_or_default();
        let mut command = match prefix.split_first() {
            Some((launcher, leading)) => {
                let mut command = Command::new(launcher);
                command.args(leading).arg(&self.shell);
                command
            }
            None => Command::new(&self.shell),
        };
        let run_dir =
            run_dir.map(|d| (OsString::from(RUN_DIR_VAR), d.path().as_os_str().to_owned()));
        command
            .arg("-c")
            .arg(&spec.command)
            .current_dir(&spec.cwd)
            .env_clear()
            .envs(child_env(self.base_env()))
            .envs(self.extra_env())
            .envs(run_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        command.spawn().map_err(|e| {
            let shell = self.shell.display();
            spawn_error(match e.kind() {
                io::ErrorKind::NotFound => format!("the shell {shell} was not found"),
                _ => format!("{shell}: {e}"),
            })
        })
    }
}

#[async_trait]
impl Exec for ProcessExec {
    async fn run(
        &self,
        spec: CommandSpec,
        cancel: CancellationToken,
    ) -> Result<CommandResult, ExecError> {
        let started = Instant::now();
        let log = open_log(&spec.log_path).await?;
        if cancel.is_cancelled() {
            return Ok(cancelled_before_start(&spec, started));
        }
        // The reports there before the run, to read only what it writes.
        let report = match (&spec.report, spec.kind) {
            (Some(ReportSpec::Junit(pattern)), CommandKind::Test) => {
                let (root, pattern) = (spec.cwd.clone(), pattern.clone());
                tokio::task::spawn_blocking(move || {
                    let before = junit::snapshot(&root, &pattern);
                    (root, pattern, before)
                })
                .await
                .ok()
            }
            _ => None,
        };
        // Rein's own reporter: its directory, made for this run alone.
        let run_dir = match (&spec.report, spec.kind) {
            (Some(ReportSpec::Private { files, report }), CommandKind::Test) => {
                let parent = private_run::temp_parent(
                    &[child_env(self.base_env()), self.extra_env()].concat(),
                );
                let made = RunDir::make(&parent, files, report).map_err(|e| ExecError::Spawn {
                    command: spec.command.clone(),
                    reason: format!(
                        "could not prepare Rein's test reporter in {}: {e}",
                        parent.display()
                    ),
                })?;
                Some(made)
            }
            _ => None,
        };
        // A candidate's files: in a folder of their own, laid over the
        // workspace by the launcher, and kept until the command is over.
        let layer = match &spec.layer {
            None => None,
            Some(_) if !self.lays_files() => {
                return Err(ExecError::Spawn {
                    command: spec.command.clone(),
                    reason: "no private layer here to lay a candidate's files over the workspace (it needs Rein's sandbox with overlays), and it never runs on the real workspace instead".into(),
                });
            }
            Some(Layer::Folder(_)) => None,
            Some(Layer::Files(files)) => {
                let made =
                    LayerDir::make(&std::env::temp_dir(), files).map_err(|e| ExecError::Spawn {
                        command: spec.command.clone(),
                        reason: format!("could not lay out the candidate's files: {e}"),
                    })?;
                Some(made)
            }
        };
        let mut child = match &layer {
            Some(folder) => {
                let laid = CommandSpec {
                    layer: Some(Layer::Folder(folder.path().to_path_buf())),
                    ..spec.clone()
                };
                self.spawn(&laid, run_dir.as_ref())?
            }
            None => self.spawn(&spec, run_dir.as_ref())?,
        };
        let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
        let readers = Readers::start(&mut child, &tx);
        let mut running = Running::new(child, readers);
        tracing::debug!(cwd = %spec.cwd.display(), group = ?running.group, "command started");
        if spec.kind == CommandKind::Test {
            crate::failpoint::hit("run_tests");
        }

        let log_failed = CancellationToken::new();
        let scanner = (spec.kind == CommandKind::Test).then(FailureScanner::new);
        let mut sink = Sink::new(log, scanner, &self.redactor());
        if spec.report == Some(ReportSpec::Stdout) && spec.kind == CommandKind::Check {
            sink.capture_stdout();
        }
        let sink = tokio::task::spawn_blocking({
            let log_failed = log_failed.clone();
            move || sink.run(rx, &log_failed)
        });

        let end = tokio::select! {
            status = running.child.wait() => End::Exited(status.ok()),
            () = tokio::time::sleep(spec.timeout) => End::TimedOut,
            () = cancel.cancelled() => End::Cancelled,
            () = log_failed.cancelled() => End::LogFailed,
        };
        let (status, notes) = running.stop(&end, &cancel, self.kill_grace).await;
        for note in notes.into_iter().chain(end.note(&spec)) {
            let _ = tx.send(Piece::note(note)).await;
        }
        // The sink ends when the last sender is gone.
        drop(tx);
        let mut output = match sink.await {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => return Err(log_error(&spec.log_path, &e)),
            Err(e) => return Err(log_error(&spec.log_path, &io::Error::other(e))),
        };
        let stdout = output.stdout.take();
        let mut result = end.result(status, output, spec.log_path, started.elapsed());
        if let Some((root, pattern, before)) = report {
            let reports =
                tokio::task::spawn_blocking(move || junit::collect(&root, &pattern, &before))
                    .await
                    .unwrap_or_default();
            add_reports(&mut result, &reports);
        }
        if let Some(run_dir) = run_dir {
            let read = tokio::task::spawn_blocking(move || run_dir.read_report())
                .await
                .unwrap_or_else(|e| PrivateReport::Unreadable(e.to_string()));
            result.private_report = Some(Box::new(read));
        }
        drop(layer);
        if let Some(stdout) = stdout {
            result.private_report = Some(Box::new(stdout));
        }
        Ok(result)
    }

    fn confinement(&self) -> Confinement {
        self.launcher
            .as_ref()
            .map_or(Confinement::Unmanaged, |l| l.confinement())
    }

    fn lays_files(&self) -> bool {
        self.launcher.as_ref().is_some_and(|l| l.private_layers())
    }
}

/// Why the wait for the command ended.
enum End {
    /// The shell exited (`None`: its status could not be read).
    Exited(Option<ExitStatus>),
    TimedOut,
    Cancelled,
    /// The log could not be written: the command is stopped, its output
    /// would be lost.
    LogFailed,
}

impl End {
    /// A line for the log and the tail saying why the output stops here.
    fn note(&self, spec: &CommandSpec) -> Option<String> {
        match self {
            End::Exited(_) | End::LogFailed => None,
            End::TimedOut => Some(format!(
                "timed out after {} s; the command and its child processes were killed",
                spec.timeout.as_secs_f32()
            )),
            End::Cancelled => {
                Some("cancelled; the command and its child processes were killed".to_owned())
            }
        }
    }

    fn result(
        self,
        status: Option<ExitStatus>,
        output: SinkOutput,
        log_path: PathBuf,
        duration: Duration,
    ) -> CommandResult {
        let killed = !matches!(self, End::Exited(_));
        CommandResult {
            // A killed command's status is our signal, not its verdict.
            exit_code: if killed {
                None
            } else {
                status.and_then(|s| s.code())
            },
            signal: if killed {
                None
            } else {
                status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s))
            },
            timed_out: matches!(self, End::TimedOut),
            cancelled: matches!(self, End::Cancelled),
            duration,
            tail: output.tail.into(),
            failures: output.failures,
            tally: output.tally,
            passes: output.passes,
            private_report: None,
            log_path,
            total_lines: output.total_lines,
            total_bytes: output.total_bytes,
        }
    }
}

/// What the JUnit reports say, added to what the output said: the cases
/// they name as passed, their counts, and a line in the tail saying which
/// reports were read (or could not be).
fn add_reports(result: &mut CommandResult, reports: &junit::Reports) {
    let (mut passed, mut failed, mut skipped) = (0u32, 0u32, 0u32);
    for case in &reports.cases {
        match case.outcome {
            junit::CaseOutcome::Passed => {
                passed = passed.saturating_add(1);
                result.passes.report_case(&case.class, &case.name);
            }
            junit::CaseOutcome::Failed => failed = failed.saturating_add(1),
            junit::CaseOutcome::Skipped => skipped = skipped.saturating_add(1),
        }
    }
    if !reports.files.is_empty() {
        result.tally.report(passed, failed, skipped);
        result.tail.push(format!(
            "[rein: read {} ({passed} passed, {failed} failed, {skipped} skipped)]",
            reports.files.join(", ")
        ));
    }
    for why in &reports.unreadable {
        result
            .tail
            .push(format!("[rein: a test report could not be read: {why}]"));
    }
}

fn cancelled_before_start(spec: &CommandSpec, started: Instant) -> CommandResult {
    CommandResult {
        cancelled: true,
        duration: started.elapsed(),
        log_path: spec.log_path.clone(),
        ..CommandResult::default()
    }
}

// ---------------------------------------------------------------------------
// The environment.

pub use rein_models::is_secret_name;

/// The redactor of this process: the values of its secret-named variables
/// ([`is_secret_name`]), `extra` values (the configured API key) and the
/// key shapes. What every sink of a task is given.
pub fn process_redactor(extra: impl IntoIterator<Item = String>) -> Redactor {
    Redactor::new(utf8_vars(std::env::vars_os()), extra)
}

/// The variables whose name and value are UTF-8 (a secret that is not
/// cannot be searched for in text anyway).
fn utf8_vars(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> impl Iterator<Item = (String, String)> {
    vars.into_iter()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
}

/// The variables of `vars` whose names are not secrets ([`is_secret_name`]),
/// in their order. A name that is not UTF-8 is judged by its lossy form.
pub fn scrub_env<K, V>(vars: impl IntoIterator<Item = (K, V)>) -> Vec<(K, V)>
where
    K: AsRef<OsStr>,
{
    vars.into_iter()
        .filter(|(name, _)| !is_secret_name(&name.as_ref().to_string_lossy()))
        .collect()
}

/// A command's whole environment: `base` scrubbed of secrets, with
/// `NO_COLOR=1` and `TERM=dumb` so the log has no escape codes.
pub fn child_env(
    base: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let forced = [("NO_COLOR", "1"), ("TERM", "dumb")];
    let mut env: Vec<_> = scrub_env(base)
        .into_iter()
        .filter(|(name, _)| !forced.iter().any(|(f, _)| name == f))
        .collect();
    env.extend(
        forced
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    env
}

// ---------------------------------------------------------------------------
// Killing the process group.

/// A started command: the shell, its process group and the pipe readers.
struct Running {
    /// First: fields drop in order, and the guard must act while the
    /// unreaped shell still holds the group's id.
    guard: KillOnDrop,
    child: Child,
    group: Option<Pid>,
    readers: Readers,
}

/// Kills the group if the run is dropped midway (its caller gave up): the
/// shell alone would be killed by `kill_on_drop`, its children would not.
/// Disarmed (`None`) once the run is over and the shell reaped: from then
/// on the id may be reused once the group empties.
struct KillOnDrop(Option<Pid>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(group) = self.0 {
            let _ = killpg(group, Signal::SIGKILL);
        }
    }
}

impl Running {
    fn new(child: Child, readers: Readers) -> Self {
        // With `process_group(0)` the group's id is the shell's pid.
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        Self {
            guard: KillOnDrop(group),
            child,
            group,
            readers,
        }
    }

    /// Once the wait is over: kills the group if the command was stopped,
    /// and stops reading its output within a bounded time whatever happens.
    /// Returns the shell's status and lines to add to the log.
    async fn stop(
        &mut self,
        end: &End,
        cancel: &CancellationToken,
        grace: Duration,
    ) -> (Option<ExitStatus>, Vec<String>) {
        let mut notes = Vec::new();
        let status = match end {
            End::Exited(status) => {
                let drained = tokio::select! {
                    drained = self.readers.wait(DRAIN_AFTER_EXIT) => drained,
                    () = cancel.cancelled() => false,
                };
                if !drained && self.group.is_some_and(group_exists) {
                    // Processes it left behind still write to our pipes:
                    // they are part of the command, which is over.
                    self.terminate(grace).await;
                    notes.push(
                        "the command exited but processes it started kept its output open; \
                         they were stopped"
                            .to_owned(),
                    );
                }
                *status
            }
            _ => self.terminate(grace).await,
        };
        if !self.readers.wait(DRAIN_AFTER_KILL).await {
            // Something outside the group holds the pipes (it called
            // setsid): stop reading rather than wait for it.
            self.readers.abort();
            notes.push("output still open after the command ended; stopped reading".to_owned());
        }
        if status.is_some() {
            self.guard.0 = None;
        }
        (status, notes)
    }

    /// SIGTERM to the whole group, then SIGKILL to whatever is left after
    /// the grace. Returns the shell's status, if it could be reaped.
    async fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        let Some(group) = self.group else {
            let _ = self.child.kill().await;
            return self.child.try_wait().ok().flatten();
        };
        signal(group, Signal::SIGTERM);
        let mut status = None;
        let done = self.wait_until_gone(group, &mut status, grace).await;
        // Dead processes nobody reaps stay zombies in the group (PID 1 in
        // some containers never reaps), so "the group still exists" is not
        // proof of life: once the shell is reaped and the pipes are
        // closed, this SIGKILL only reaches processes that ignored SIGTERM.
        if !done || group_exists(group) {
            signal(group, Signal::SIGKILL);
            self.wait_until_gone(group, &mut status, REAP_AFTER_KILL)
                .await;
        }
        status
    }

    /// Waits until the shell is reaped and either the group is gone or the
    /// pipes are closed. False when `limit` passed first.
    async fn wait_until_gone(
        &mut self,
        group: Pid,
        status: &mut Option<ExitStatus>,
        limit: Duration,
    ) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if status.is_none() {
                *status = self.child.try_wait().ok().flatten();
            }
            if status.is_some() && (self.readers.all_finished() || !group_exists(group)) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

fn signal(group: Pid, signal: Signal) {
    match killpg(group, signal) {
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(e) => {
            tracing::warn!(%group, ?signal, error = %e, "could not signal the command's process group")
        }
    }
}

fn group_exists(group: Pid) -> bool {
    // EPERM means a member exists (it changed user); only ESRCH means none.
    !matches!(killpg(group, None), Err(Errno::ESRCH))
}

// ---------------------------------------------------------------------------
// Reading the pipes.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    Stdout = 0,
    Stderr = 1,
}

/// What the readers send the log writer.
#[derive(Debug)]
enum Piece {
    /// Output from one pipe: whole lines, except when a line is longer than
    /// [`MAX_LINE_PIECE`] or the pipe ended without a final newline.
    Output {
        stream: Stream,
        bytes: Vec<u8>,
        end: bool,
    },
    /// A line of our own, for the log and the tail (not counted as output).
    Note(String),
}

impl Piece {
    fn note(text: String) -> Self {
        Piece::Note(format!("[rein] {text}"))
    }
}

/// The two tasks reading the command's stdout and stderr. A handle is
/// dropped once its task is seen finished (a finished handle must not be
/// polled again).
struct Readers(Vec<JoinHandle<()>>);

impl Readers {
    fn start(child: &mut Child, tx: &mpsc::Sender<Piece>) -> Self {
        let mut tasks = Vec::with_capacity(2);
        if let Some(out) = child.stdout.take() {
            tasks.push(tokio::spawn(read_pipe(out, Stream::Stdout, tx.clone())));
        }
        if let Some(err) = child.stderr.take() {
            tasks.push(tokio::spawn(read_pipe(err, Stream::Stderr, tx.clone())));
        }
        Self(tasks)
    }

    fn all_finished(&self) -> bool {
        self.0.iter().all(JoinHandle::is_finished)
    }

    /// Waits up to `limit` for both pipes to close. True when they did.
    async fn wait(&mut self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while let Some(task) = self.0.last_mut() {
            if tokio::time::timeout_at(deadline, task).await.is_err() {
                return false;
            }
            self.0.pop();
        }
        true
    }

    /// Stops reading: the pipes are closed on our side.
    fn abort(&mut self) {
        for task in self.0.drain(..) {
            task.abort();
        }
    }
}

/// Reads one pipe to its end, passing its output on in line-aligned pieces.
async fn read_pipe<R: AsyncRead + Unpin>(mut pipe: R, stream: Stream, tx: mpsc::Sender<Piece>) {
    let mut buf = vec![0; READ_CHUNK];
    let mut lines = LineAligner::default();
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::debug!(?stream, error = %e, "reading command output failed");
                break;
            }
        };
        if let Some(bytes) = lines.push(&buf[..n]) {
            let piece = Piece::Output {
                stream,
                bytes,
                end: false,
            };
            if tx.send(piece).await.is_err() {
                return; // The log writer stopped: nobody reads anymore.
            }
        }
    }
    let piece = Piece::Output {
        stream,
        bytes: lines.finish(),
        end: true,
    };
    let _ = tx.send(piece).await;
}

/// Cuts a byte stream into pieces that end at a line end, so lines from
/// stdout and stderr are never mixed in the log, while holding at most
/// about [`MAX_LINE_PIECE`] bytes of an unfinished line.
#[derive(Debug, Default)]
struct LineAligner {
    pending: Vec<u8>,
}

impl LineAligner {
    /// Adds bytes read; returns what can be passed on now.
    fn push(&mut self, bytes: &[u8]) -> Option<Vec<u8>> {
        self.pending.extend_from_slice(bytes);
        match self.pending.iter().rposition(|&b| b == b'\n') {
            Some(last) => {
                let rest = self.pending.split_off(last + 1);
                Some(std::mem::replace(&mut self.pending, rest))
            }
            None if self.pending.len() >= MAX_LINE_PIECE => Some(std::mem::take(&mut self.pending)),
            None => None,
        }
    }

    /// What is left when the pipe ends: a last line without a newline.
    fn finish(self) -> Vec<u8> {
        self.pending
    }
}

// ---------------------------------------------------------------------------
// Writing the log, keeping the tail.

/// What is kept in memory of a command's output.
#[derive(Debug, Default)]
struct SinkOutput {
    tail: VecDeque<String>,
    failures: Vec<String>,
    tally: Tally,
    passes: Passes,
    total_lines: u64,
    total_bytes: u64,
    /// The whole standard output, when it is the run's report
    /// ([`ReportSpec::Stdout`]).
    stdout: Option<PrivateReport>,
}

/// Writes the output to the log and keeps the tail and the failures.
/// Synchronous (it runs on a blocking thread), so it is tested with a `Vec`.
struct Sink<W: Write> {
    log: W,
    /// One per pipe: each has its own unfinished line.
    redact: [StreamRedactor; 2],
    scanner: Option<FailureScanner>,
    /// Kept with the scanner (test commands only).
    tally: Tally,
    passes: Passes,
    /// The start of each pipe's unfinished line, and its full length.
    partial: [Option<PartialLine>; 2],
    out: SinkOutput,
    /// Standard output kept whole (redacted), when it is the report;
    /// `None` inside once it grew past [`private_run::MAX_REPORT_BYTES`].
    stdout: Option<Option<Vec<u8>>>,
}

#[derive(Debug, Default)]
struct PartialLine {
    head: Vec<u8>,
    len: u64,
}

impl<W: Write> Sink<W> {
    fn new(log: W, scanner: Option<FailureScanner>, redactor: &Redactor) -> Self {
        Self {
            log,
            redact: [redactor.stream(), redactor.stream()],
            scanner,
            tally: Tally::default(),
            passes: Passes::default(),
            partial: [None, None],
            out: SinkOutput::default(),
            stdout: None,
        }
    }

    /// Keeps the standard output whole, as the run's report.
    fn capture_stdout(&mut self) {
        self.stdout = Some(Some(Vec::new()));
    }

    /// Takes pieces until every sender is gone. On a write error, cancels
    /// `failed` (so the command is stopped) and returns the error.
    fn run(
        mut self,
        mut rx: mpsc::Receiver<Piece>,
        failed: &CancellationToken,
    ) -> io::Result<SinkOutput> {
        while let Some(piece) = rx.blocking_recv() {
            if let Err(e) = self.take(piece) {
                failed.cancel();
                return Err(e);
            }
        }
        self.finish()
    }

    fn take(&mut self, piece: Piece) -> io::Result<()> {
        match piece {
            Piece::Output { stream, bytes, end } => self.output(stream, &bytes, end),
            Piece::Note(note) => {
                self.flush_partials()?;
                writeln!(self.log, "{note}")?;
                self.keep(note);
                Ok(())
            }
        }
    }

    fn output(&mut self, stream: Stream, bytes: &[u8], end: bool) -> io::Result<()> {
        let redact = &mut self.redact[stream as usize];
        let mut clean = redact.push(bytes);
        if end {
            let held = redact.finish();
            if !held.is_empty() {
                clean.to_mut().extend_from_slice(&held);
            }
        }
        self.clean_output(stream, &clean, end)
    }

    /// `output` once redacted: to the log, the tail and the scanner.
    fn clean_output(&mut self, stream: Stream, bytes: &[u8], end: bool) -> io::Result<()> {
        self.log.write_all(bytes)?;
        if stream == Stream::Stdout
            && let Some(kept) = &mut self.stdout
        {
            let fits = kept
                .as_ref()
                .is_some_and(|k| (k.len() + bytes.len()) as u64 <= private_run::MAX_REPORT_BYTES);
            match kept {
                Some(k) if fits => k.extend_from_slice(bytes),
                _ => *kept = None,
            }
        }
        self.out.total_bytes += bytes.len() as u64;
        // Only the last lines of a piece can end up in the tail: the others
        // are not turned into strings unless failures are looked for.
        let complete = bytes.iter().filter(|&&b| b == b'\n').count();
        let mut rest = bytes;
        let mut index = 0;
        while let Some(at) = rest.iter().position(|&b| b == b'\n') {
            let in_tail = complete - index <= TAIL_LINES;
            self.end_line(stream, &rest[..at], in_tail);
            rest = &rest[at + 1..];
            index += 1;
        }
        if !rest.is_empty() {
            self.extend_partial(stream, rest);
        }
        if end && self.partial[stream as usize].is_some() {
            // The log is line-oriented: the other pipe's next line must
            // not be glued to this one.
            self.log.write_all(b"\n")?;
            self.end_line(stream, &[], true);
        }
        Ok(())
    }

    fn extend_partial(&mut self, stream: Stream, bytes: &[u8]) {
        let partial = self.partial[stream as usize].get_or_insert_with(PartialLine::default);
        let room = LINE_HEAD_BYTES.saturating_sub(partial.head.len());
        partial
            .head
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
        partial.len += bytes.len() as u64;
    }

    /// A line is complete: `last` is its end (all of it, if no earlier piece
    /// of it was kept in `partial`).
    fn end_line(&mut self, stream: Stream, last: &[u8], in_tail: bool) {
        self.out.total_lines += 1;
        let partial = self.partial[stream as usize].take();
        if !in_tail && self.scanner.is_none() {
            return;
        }
        let text = match partial {
            None => display_line(&last[..last.len().min(LINE_HEAD_BYTES)], last.len() as u64),
            Some(mut partial) => {
                let room = LINE_HEAD_BYTES.saturating_sub(partial.head.len());
                partial
                    .head
                    .extend_from_slice(&last[..last.len().min(room)]);
                display_line(&partial.head, partial.len + last.len() as u64)
            }
        };
        if let Some(scanner) = &mut self.scanner {
            scanner.line(&text);
            self.tally.line(&text);
            self.passes.line(&text);
        }
        if in_tail {
            self.keep(text);
        }
    }

    fn keep(&mut self, line: String) {
        if self.out.tail.len() == TAIL_LINES {
            self.out.tail.pop_front();
        }
        self.out.tail.push_back(line);
    }

    /// Ends unfinished lines (a note must not land inside one).
    fn flush_partials(&mut self) -> io::Result<()> {
        for stream in [Stream::Stdout, Stream::Stderr] {
            let i = stream as usize;
            if self.partial[i].is_some() || self.redact[i].pending() > 0 {
                self.output(stream, &[], true)?;
            }
        }
        Ok(())
    }

    fn finish(mut self) -> io::Result<SinkOutput> {
        self.flush_partials()?;
        self.log.flush()?;
        if let Some(scanner) = self.scanner.take() {
            if scanner.omitted() > 0 {
                tracing::debug!(omitted = scanner.omitted(), "more failing tests than kept");
            }
            self.out.failures = scanner.into_failures();
            self.out.tally = self.tally;
            self.out.passes = std::mem::take(&mut self.passes);
        }
        self.out.stdout = self.stdout.take().map(|kept| match kept {
            Some(bytes) => match String::from_utf8(bytes) {
                Ok(text) => PrivateReport::Text(text),
                Err(_) => PrivateReport::Unreadable("standard output: not UTF-8".to_owned()),
            },
            None => PrivateReport::Unreadable(format!(
                "standard output: larger than {} MiB",
                private_run::MAX_REPORT_BYTES / 1024 / 1024
            )),
        });
        Ok(self.out)
    }
}

/// A line as the model sees it: lossy UTF-8, no escape codes, only what a
/// terminal would show after a carriage return, cut to [`MAX_LINE_CHARS`]
/// with a mark saying so. `head` is the start of a line `len` bytes long.
fn display_line(head: &[u8], len: u64) -> String {
    let text = String::from_utf8_lossy(head);
    let text = text.strip_suffix('\r').unwrap_or(&text);
    let text = text.rsplit('\r').next().unwrap_or(text);
    let text = strip_ansi(text);
    let cut_at = text.char_indices().nth(MAX_LINE_CHARS).map(|(i, _)| i);
    match cut_at {
        None if (head.len() as u64) == len => text.into_owned(),
        _ => {
            let kept = &text[..cut_at.unwrap_or(text.len())];
            format!("{kept}… [line cut: {len} bytes in the log]")
        }
    }
}

// ---------------------------------------------------------------------------
// The log file.

/// The command's log, made (or emptied). Under a workspace's `.rein/` (a
/// task's logs always are) it is opened beneath that folder in one step,
/// never through a link (`rein_store::state_dir`).
async fn open_log(path: &Path) -> Result<std::fs::File, ExecError> {
    let owned = path.to_owned();
    let opened = tokio::task::spawn_blocking(move || match in_state_dir(&owned) {
        Some((workspace, rel)) => rein_store::state_dir(&workspace)?.create(rel),
        None => {
            if let Some(parent) = owned.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::File::create(&owned)
        }
    })
    .await
    .map_err(io::Error::other)
    .and_then(|opened| opened);
    opened.map_err(|e| log_error(path, &e))
}

/// `(<workspace>, <rel>)` for a path `<workspace>/.rein/<rel>`.
fn in_state_dir(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let parts: Vec<_> = path.components().collect();
    let at = parts
        .iter()
        .position(|c| c.as_os_str() == rein_store::STATE_DIR)?;
    let rel: PathBuf = parts[at + 1..].iter().collect();
    if rel.as_os_str().is_empty() {
        return None;
    }
    let workspace: PathBuf = parts[..at].iter().collect();
    let workspace = if workspace.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        workspace
    };
    Some((workspace, rel))
}

fn log_error(path: &Path, e: &io::Error) -> ExecError {
    ExecError::Log {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use rein_models::REDACTED;

    /// A command's log under `.rein/` goes through the state folder's
    /// handle: a link planted there (a repository may ship one) is refused.
    #[tokio::test]
    async fn a_command_log_is_opened_beneath_rein() {
        let path = |p: &str| PathBuf::from(p);
        assert_eq!(
            in_state_dir(&path("/w/.rein/artifacts/t-1/run-1.log")),
            Some((path("/w"), path("artifacts/t-1/run-1.log")))
        );
        assert_eq!(
            in_state_dir(&path(".rein/artifacts/x.log")),
            Some((path("."), path("artifacts/x.log")))
        );
        assert_eq!(in_state_dir(&path("/tmp/run.log")), None);
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".rein")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(".rein/artifacts")).unwrap();
        let error = open_log(&dir.path().join(".rein/artifacts/t-1/run-1.log"))
            .await
            .unwrap_err();
        assert!(error.to_string().contains("is a symbolic link"), "{error}");
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
        open_log(&dir.path().join(".rein/logs/run-2.log"))
            .await
            .unwrap();
        assert!(dir.path().join(".rein/logs/run-2.log").is_file());
    }

    #[test]
    fn scrub_keeps_everything_else_in_order() {
        let vars = [
            ("PATH", "/usr/bin"),
            ("ANTHROPIC_API_KEY", "sk-ant-xxx"),
            ("HOME", "/home/me"),
            ("GITHUB_TOKEN", "ghp_xxx"),
            ("LANG", "C.UTF-8"),
        ];
        assert_eq!(
            scrub_env(vars),
            [
                ("PATH", "/usr/bin"),
                ("HOME", "/home/me"),
                ("LANG", "C.UTF-8")
            ]
        );
    }

    #[test]
    fn child_env_forces_plain_output() {
        let base = [
            ("TERM", "xterm-256color"),
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "sk-x"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let env = child_env(base);
        let env: Vec<_> = env
            .iter()
            .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
            .collect();
        assert_eq!(env, ["PATH=/bin", "NO_COLOR=1", "TERM=dumb"]);
    }

    #[test]
    fn non_utf8_names_are_judged_too() {
        use std::os::unix::ffi::OsStrExt;
        let secret = OsStr::from_bytes(b"X\xff_TOKEN").to_owned();
        let plain = OsStr::from_bytes(b"X\xff").to_owned();
        let kept = scrub_env([(secret, "a"), (plain.clone(), "b")]);
        assert_eq!(kept, [(plain, "b")]);
    }

    #[test]
    fn debug_never_shows_the_environment() {
        let exec = ProcessExec::new().with_env([("ANTHROPIC_API_KEY", "sk-ant-visible")]);
        let debug = format!("{exec:?}");
        assert!(!debug.contains("sk-ant-visible"), "{debug}");
    }

    #[test]
    fn aligner_passes_whole_lines_and_bounds_long_ones() {
        let mut lines = LineAligner::default();
        assert_eq!(lines.push(b"ab"), None);
        assert_eq!(lines.push(b"c\nde"), Some(b"abc\n".to_vec()));
        assert_eq!(lines.push(b"f\ng\n"), Some(b"def\ng\n".to_vec()));
        let long = vec![b'x'; MAX_LINE_PIECE];
        assert_eq!(lines.push(&long).map(|p| p.len()), Some(MAX_LINE_PIECE));
        assert_eq!(lines.push(b"tail"), None);
        assert_eq!(lines.finish(), b"tail");
    }

    fn sink_with(pieces: Vec<Piece>, scan: bool) -> (String, SinkOutput) {
        redacting_sink_with(pieces, scan, &Redactor::default())
    }

    fn redacting_sink_with(
        pieces: Vec<Piece>,
        scan: bool,
        redactor: &Redactor,
    ) -> (String, SinkOutput) {
        let mut sink = Sink::new(Vec::new(), scan.then(FailureScanner::new), redactor);
        for piece in pieces {
            sink.take(piece).unwrap();
        }
        let log = std::mem::take(&mut sink.log);
        let out = sink.finish().unwrap();
        (String::from_utf8_lossy(&log).into_owned(), out)
    }

    fn out(stream: Stream, text: &[u8], end: bool) -> Piece {
        Piece::Output {
            stream,
            bytes: text.to_vec(),
            end,
        }
    }

    #[test]
    fn sink_keeps_the_last_lines_and_counts_everything() {
        let text: String = (1..=120).map(|i| format!("line {i}\n")).collect();
        let (log, output) = sink_with(vec![out(Stream::Stdout, text.as_bytes(), true)], false);
        assert_eq!(log, text);
        assert_eq!(output.total_lines, 120);
        assert_eq!(output.total_bytes, text.len() as u64);
        assert_eq!(output.tail.len(), TAIL_LINES);
        assert_eq!(output.tail.front().map(String::as_str), Some("line 71"));
        assert_eq!(output.tail.back().map(String::as_str), Some("line 120"));
    }

    #[test]
    fn sink_joins_pieces_of_a_line_and_ends_an_unterminated_one() {
        let pieces = vec![
            out(Stream::Stdout, b"hel", false),
            out(Stream::Stderr, b"err\n", false),
            out(Stream::Stdout, b"lo\nno newline", false),
            out(Stream::Stdout, b"", true),
            out(Stream::Stderr, b"", true),
        ];
        let (log, output) = sink_with(pieces, false);
        // A short unfinished line waits for its end (the redactor holds it
        // back), so the other pipe's line is not glued into it.
        assert_eq!(log, "err\nhello\nno newline\n");
        assert_eq!(output.tail, ["err", "hello", "no newline"]);
        assert_eq!(output.total_lines, 3);
        assert_eq!(output.total_bytes, 20);
    }

    /// A checker's report is its standard output alone, whole and
    /// redacted: stderr's progress lines and Rein's notes stay in the log.
    #[test]
    fn sink_keeps_stdout_whole_as_the_report_when_asked() {
        let redactor = Redactor::new(
            [("API_KEY".to_owned(), "s3cr3t-value-1".to_owned())],
            Vec::<String>::new(),
        );
        let mut sink = Sink::new(Vec::new(), None, &redactor);
        sink.capture_stdout();
        let pieces = vec![
            out(Stream::Stdout, b"{\"a\": ", false),
            out(Stream::Stderr, b"Checking x\n", false),
            out(Stream::Stdout, b"\"s3cr3t-value-1\"}\n[1,", false),
            Piece::note("a note".into()),
            out(Stream::Stdout, b"2]", true),
            out(Stream::Stderr, b"", true),
        ];
        for piece in pieces {
            sink.take(piece).unwrap();
        }
        let output = sink.finish().unwrap();
        let Some(PrivateReport::Text(report)) = output.stdout else {
            panic!("no report: {:?}", output.stdout);
        };
        assert_eq!(report, "{\"a\": \"<redacted>\"}\n[1,2]");
        // Without asking, nothing is kept.
        let (_, output) = sink_with(vec![out(Stream::Stdout, b"x\n", true)], false);
        assert_eq!(output.stdout, None);
    }

    #[test]
    fn sink_scans_test_output_and_writes_notes() {
        let pieces = vec![
            out(Stream::Stdout, b"--- FAIL: TestTotal (0.00s)\n", false),
            out(Stream::Stdout, b"partial", false),
            Piece::note("timed out".into()),
        ];
        let (log, output) = sink_with(pieces, true);
        assert_eq!(
            log,
            "--- FAIL: TestTotal (0.00s)\npartial\n[rein] timed out\n"
        );
        assert_eq!(output.failures, ["TestTotal"]);
        assert_eq!(output.total_lines, 2);
    }

    /// The key in a line longer than a pipe piece, cut across two pieces;
    /// in a private key printed over many lines; in a failing test's name
    /// and in the tail: the log and what the model gets never hold it.
    #[test]
    fn a_key_cut_across_pieces_of_a_long_line_is_redacted_in_the_log_and_the_tail() {
        const KEY: &str = "planted-secret-4f3e2d1c0b";
        let redactor = Redactor::new([], [KEY.to_owned()]);
        let long = format!(
            "{}{KEY}{}\n",
            "a".repeat(MAX_LINE_PIECE - 10),
            "b".repeat(100)
        );
        let (first, second) = long.as_bytes().split_at(MAX_LINE_PIECE);
        let pieces = vec![
            out(Stream::Stdout, first, false),
            out(Stream::Stderr, b"FAIL: test_login (tests.test_auth.planted-secret-4f3e2d1c0b)\n", false),
            out(Stream::Stdout, second, false),
            out(
                Stream::Stdout,
                b"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAr2ZJ+9xq\n-----END RSA PRIVATE KEY-----\n",
                false,
            ),
            out(Stream::Stdout, b"key=planted-sec", false),
            out(Stream::Stdout, b"ret-4f3e2d1c0b", true),
            out(Stream::Stderr, b"", true),
        ];
        let (log, output) = redacting_sink_with(pieces, true, &redactor);
        assert!(
            !log.contains("4f3e2d1c0b") && !log.contains("MIIE"),
            "{log}"
        );
        assert_eq!(log.matches(REDACTED).count(), 4, "{log}");
        assert!(
            log.ends_with("-----END RSA PRIVATE KEY-----\nkey=<redacted>\n"),
            "{log}"
        );
        let tail = Vec::from(output.tail).join("\n");
        assert!(
            !tail.contains("4f3e2d1c0b") && !tail.contains("MIIE"),
            "{tail}"
        );
        assert!(!output.failures.concat().contains("4f3e2d1c0b"));
        assert_eq!(output.total_lines, 6);
    }

    #[test]
    fn display_cuts_long_lines_and_cleans_terminal_codes() {
        assert_eq!(display_line(b"plain\r", 6), "plain");
        assert_eq!(display_line(b"10%\r50%\r100%", 12), "100%");
        assert_eq!(display_line(b"\x1b[31mred\x1b[0m", 12), "red");
        assert_eq!(display_line(b"bad \xff byte", 10), "bad \u{fffd} byte");
        let long = "é".repeat(MAX_LINE_CHARS + 10);
        let shown = display_line(long.as_bytes(), long.len() as u64);
        assert!(shown.starts_with(&"é".repeat(MAX_LINE_CHARS)));
        assert!(shown.ends_with(&format!("… [line cut: {} bytes in the log]", long.len())));
        // A head shorter than the line: cut even if the head itself is short.
        assert_eq!(
            display_line(b"abc", 10_000),
            "abc… [line cut: 10000 bytes in the log]"
        );
    }
}
