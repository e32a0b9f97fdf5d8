//! The command line (DESIGN.md §2). Parsing only; `main.rs` dispatches.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "rein",
    version,
    about = "A coding agent that lives in your editor"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the language server on stdio (this is what editors start).
    Lsp,
    /// Run as an Agent Client Protocol agent on stdio (what Zed, JetBrains
    /// and the agent panels of Neovim and Emacs start).
    Acp,
    /// Run a task without an editor: edits go to disk after approval.
    Run(RunArgs),
    /// Fix a failing test in a sample project, end to end, and show each step.
    Demo,
    /// Show the timeline of a task.
    Trace(TraceArgs),
    /// Run a suite of fix-the-failing-test tasks and judge each by Rein's
    /// verdict and held-out tests; compare two runs.
    Eval(EvalArgs),
    /// Check the configuration, the provider (reachable? the model there?),
    /// the test command and the task state of a workspace.
    Doctor(DoctorArgs),
    /// Trust a workspace's own settings (`.rein/config.toml`) as they are
    /// now, after showing what they grant; `--revoke` to stop trusting them.
    Trust(TrustArgs),
    /// Internal: how Rein runs every command — applies the sandbox policy to
    /// this process, then becomes the command.
    #[command(name = "sandbox-exec", hide = true)]
    SandboxExec(SandboxExecArgs),
}

#[derive(Debug, Args)]
pub struct SandboxExecArgs {
    /// The policy, as JSON.
    #[arg(long, required_unless_present = "probe")]
    pub policy: Option<String>,
    /// Print what this machine can confine (JSON) instead of running.
    #[arg(long)]
    pub probe: bool,
    /// Run as the init of the command's PID namespace, telling how the
    /// command ended through this descriptor (started by `sandbox-exec`
    /// itself, never by hand).
    #[arg(long, value_name = "FD", hide = true)]
    pub init_status_fd: Option<i32>,
    /// The program and its arguments.
    #[arg(last = true, required_unless_present = "probe")]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The project (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Do not trust the settings (they may then only tighten).
    #[arg(long)]
    pub revoke: bool,
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("task").required(true).args(["fix_test", "instruction"]))]
pub struct RunArgs {
    /// The project to work in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Approve every proposed edit and command without asking.
    #[arg(long)]
    pub yes: bool,
    /// Use the workspace's own settings (`.rein/config.toml`) for this run
    /// even though you have not trusted them (e.g. in CI). Without it, an
    /// untrusted file may only tighten: deny rules, lower budgets.
    #[arg(long)]
    pub trust_workspace: bool,
    /// The test to fix, as `PATH::NAME` (e.g. `tests/test_cart.py::test_total`).
    #[arg(long, value_name = "PATH::NAME")]
    pub fix_test: Option<String>,
    /// What to do, in plain words.
    pub instruction: Option<String>,
    /// Also write the result as JSON to this file (for programs, e.g.
    /// `rein eval`): state, reason, spend, changed files, evidence.
    #[arg(long, value_name = "FILE")]
    pub result_json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(subcommand)]
    pub command: EvalCommand,
}

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Run the tasks of a suite (e.g. eval/suites/quixbugs), each in a fresh
    /// copy, with the configured provider; writes report.json, report.md and
    /// report.html.
    Run(EvalRunArgs),
    /// What changed between two runs (their report.json or folders).
    Compare(EvalCompareArgs),
}

#[derive(Debug, Args)]
pub struct EvalRunArgs {
    /// The suite's folder (with suite.toml and tasks/).
    pub suite: PathBuf,
    /// Where the copies, logs and reports go (default:
    /// eval-results/<suite>-<time>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// How many tasks run at once.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// A Rein config.toml for every task (budgets, model settings, rules).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Only this task (repeat for more).
    #[arg(long, value_name = "ID")]
    pub task: Vec<String>,
    /// Only the tasks of this split (e.g. dev, holdout).
    #[arg(long, value_name = "NAME")]
    pub split: Option<String>,
    /// A task still running after this many seconds is interrupted.
    #[arg(long, value_name = "SECS", default_value_t = 1800)]
    pub task_timeout: u64,
    /// The time limit of each task's check.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub check_timeout: u64,
    /// A name for this run in reports and comparisons.
    #[arg(long)]
    pub label: Option<String>,
}

#[derive(Debug, Args)]
pub struct EvalCompareArgs {
    /// The run before the change.
    pub a: PathBuf,
    /// The run after it.
    pub b: PathBuf,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The project to check (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    /// The task's id, as `rein run` and the editor show it (a part of it
    /// that names one task will do).
    pub task_id: String,
    /// The project whose `.rein/` holds the trace (default: the current
    /// directory, or the nearest folder above it that has a `.rein/`).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Write a self-contained HTML report to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Show everything: the model's whole text, the diffs, every argument,
    /// permission and activity.
    #[arg(short, long)]
    pub verbose: bool,
}

impl Command {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Lsp => "lsp",
            Self::Acp => "acp",
            Self::Run(_) => "run",
            Self::Demo => "demo",
            Self::Trace(_) => "trace",
            Self::Eval(_) => "eval",
            Self::Doctor(_) => "doctor",
            Self::Trust(_) => "trust",
            Self::SandboxExec(_) => "sandbox-exec",
        }
    }
}
