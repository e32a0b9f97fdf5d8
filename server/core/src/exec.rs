//! The `Exec` trait: running a shell command for `run_tests` and
//! `run_command`, and what the harness needs back from it.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// How many output lines the model sees from a command.
pub const TAIL_LINES: usize = 50;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandKind {
    /// The project's test command (failing tests are extracted).
    Test,
    /// Any other command.
    Other,
    /// A checker run by the verifier (`cargo check`, `pyright`, `tsc`…):
    /// no failing tests are looked for; with [`ReportSpec::Stdout`] its
    /// standard output is kept whole as its report.
    Check,
}

/// A command to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandSpec {
    /// Run with `sh -c`.
    pub command: String,
    /// Inside the workspace.
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// Where the full output (stdout and stderr interleaved) is written.
    pub log_path: PathBuf,
    pub kind: CommandKind,
    /// The user allowed this command the network (else a sandboxed
    /// command has loopback only).
    pub network: bool,
    /// A `[[sandbox.rules]]` mode for this command instead of the
    /// workspace's.
    pub sandbox_mode: Option<SandboxMode>,
    /// Where the run reports its tests besides its output, read after it
    /// ends.
    pub report: Option<ReportSpec>,
    /// Files the command sees in place of the workspace's, in a private
    /// layer gone with it (a candidate fix checked without touching the
    /// workspace); `None` for every ordinary command.
    pub layer: Option<Layer>,
}

/// Files laid over the workspace for one command ([`CommandSpec::layer`]):
/// the command sees the workspace with them in it, reads and writes there
/// as usual, and nothing it does reaches the real workspace. Only an
/// executor whose [`Exec::lays_files`] says so honours one; any other
/// refuses the command rather than run it on the real workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layer {
    /// As the loop gives them: (workspace-relative path, whole text). The
    /// executor writes them in a folder of their own first.
    Files(Vec<(String, String)>),
    /// That folder, laid out like the workspace: what a [`Launcher`] is
    /// given.
    Folder(PathBuf),
}

/// How a test run reports which tests passed, besides its output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReportSpec {
    /// JUnit XML files the command writes (a workspace-relative path or
    /// glob, the `test_report` setting).
    Junit(String),
    /// Rein's own reporter: `files` (name, text) are written to a
    /// directory made for this run alone, outside the workspace, whose
    /// path the command finds in `$REIN_RUN_DIR`, with a random token in
    /// its file [`TOKEN_FILE`]; after it ends, the file `report` of that
    /// directory is read back ([`CommandResult::private_report`]) — it
    /// counts only if its first line is the token — and the directory is
    /// removed.
    Private {
        files: Vec<(String, String)>,
        report: String,
    },
    /// The command's standard output is its report (a checker's JSON):
    /// kept whole, once redacted, up to the same bound as a private
    /// report, besides the log (where it is interleaved with stderr).
    /// Read back as [`CommandResult::private_report`]; only for
    /// [`CommandKind::Check`].
    Stdout,
}

/// The environment variable holding a [`ReportSpec::Private`] run's
/// directory.
pub const RUN_DIR_VAR: &str = "REIN_RUN_DIR";

/// The file of a [`ReportSpec::Private`] run's directory holding its
/// token: the reporter reads it and deletes it before any code under test
/// runs, and writes it as the first line of its report, so a report the
/// code under test writes in its place does not count.
pub const TOKEN_FILE: &str = "token";

/// What a [`ReportSpec::Private`] run left in its report file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrivateReport {
    /// Nothing: the process ended before the reporter wrote it.
    Missing,
    Text(String),
    /// There, but not a regular file Rein could read (why).
    Unreadable(String),
}

/// How much commands may write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum SandboxMode {
    /// No confinement (the user's choice). Least strict.
    Off,
    #[default]
    WorkspaceWrite,
    /// Nothing but the command's temporary directory. Most strict.
    ReadOnly,
}

impl SandboxMode {
    pub fn name(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "off" => Some(SandboxMode::Off),
            "workspace-write" => Some(SandboxMode::WorkspaceWrite),
            "read-only" => Some(SandboxMode::ReadOnly),
            _ => None,
        }
    }
}

/// What confines the commands an [`Exec`] runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "level", rename_all = "snake_case")]
pub enum Confinement {
    /// Nothing was configured (tests, dry runs, embedders): the permission
    /// rules alone decide, as they always did.
    #[default]
    Unmanaged,
    /// The user turned the sandbox off.
    Off,
    /// Files, network and processes are confined by the kernel.
    Full { description: String },
    /// A sandbox was wanted and this machine cannot provide all of it:
    /// every command is asked about, and `missing` says why.
    Degraded {
        description: String,
        missing: Vec<String>,
    },
}

impl Confinement {
    /// One line for evidence, a result or `rein doctor`.
    pub fn describe(&self) -> String {
        match self {
            Confinement::Unmanaged => "none configured".to_owned(),
            Confinement::Off => "off (your setting)".to_owned(),
            Confinement::Full { description } => description.clone(),
            Confinement::Degraded {
                description,
                missing,
            } => format!("{description}; missing: {}", missing.join("; ")),
        }
    }

    pub fn is_full(&self) -> bool {
        matches!(self, Confinement::Full { .. })
    }
}

/// How a command's process is started: what runs before the shell (the
/// sandbox's launcher, `rein sandbox-exec --policy … --`), what it adds to
/// the environment (a private `TMPDIR`), and what that confines.
pub trait Launcher: Send + Sync + fmt::Debug {
    /// The program and leading arguments that then run the shell.
    fn prefix(&self, spec: &CommandSpec) -> Vec<OsString>;
    /// Variables set for every command (after the secrets are scrubbed).
    fn env(&self) -> Vec<(OsString, OsString)> {
        Vec::new()
    }
    fn confinement(&self) -> Confinement;
    /// [`Launcher::prefix`] for a long-running server's process (an MCP
    /// server), which may also read `readable` (where its own files are).
    fn server_prefix(&self, spec: &CommandSpec, readable: &[PathBuf]) -> Vec<OsString> {
        let _ = readable;
        self.prefix(spec)
    }
    /// Whether [`Launcher::prefix`] lays a [`Layer::Folder`] over the
    /// workspace in a private layer (the sandbox on, with a root of the
    /// command's own and overlays on this machine). `false` by default.
    fn private_layers(&self) -> bool {
        false
    }
}

/// What a command did. The full output is in `log_path`; only a bounded
/// amount is held here, however much the command printed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandResult {
    /// `None` when killed (timeout, cancel) or ended by a signal.
    pub exit_code: Option<i32>,
    /// The signal that ended it by itself (not Rein's kill), if one did.
    #[serde(default)]
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration: Duration,
    /// The last [`TAIL_LINES`] lines of output.
    pub tail: Vec<String>,
    /// Failing tests found in the output (test commands), in order, deduplicated.
    pub failures: Vec<String>,
    /// The runner's own counts of passed and skipped tests (test commands),
    /// for the verifier; not kept in the task's history.
    #[serde(skip)]
    pub tally: crate::testing::tally::Tally,
    /// The tests the runner named as passed (test commands), for the
    /// verifier; not kept in the task's history.
    #[serde(skip)]
    pub passes: crate::testing::passes::Passes,
    /// What Rein's own reporter wrote ([`ReportSpec::Private`] runs), or
    /// the whole standard output ([`ReportSpec::Stdout`] runs), for the
    /// verifier; not kept in the task's history. Boxed: a result
    /// is kept in every command's history entry.
    #[serde(skip)]
    pub private_report: Option<Box<PrivateReport>>,
    pub log_path: PathBuf,
    pub total_lines: u64,
    pub total_bytes: u64,
}

impl CommandResult {
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.cancelled
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    #[error("could not start `{command}`: {reason}")]
    Spawn { command: String, reason: String },
    #[error("could not write the command log {path}: {reason}")]
    Log { path: String, reason: String },
}

/// Runs commands. The host implementation (`crate::os::process`) runs
/// each in its own process group, kills the whole group on timeout or
/// cancellation, scrubs API keys from the environment and spills the
/// output to the log file.
#[async_trait]
pub trait Exec: Send + Sync {
    async fn run(
        &self,
        spec: CommandSpec,
        cancel: CancellationToken,
    ) -> Result<CommandResult, ExecError>;

    /// What confines the commands it runs.
    fn confinement(&self) -> Confinement {
        Confinement::Unmanaged
    }

    /// Whether it honours [`CommandSpec::layer`]: `false` by default, and
    /// then a command with a layer is refused, never run on the real
    /// workspace.
    fn lays_files(&self) -> bool {
        false
    }
}
