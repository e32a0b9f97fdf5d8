//! The command line (DESIGN.md §2). Parsing only; `main.rs` dispatches.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
pub use rein_cli::args::{RunArgs, TrustArgs, UndoArgs};

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
    /// Take back a task's changes: every file it changed as before the
    /// task, keeping what you changed since (a conflict is shown, never
    /// overwritten).
    Undo(UndoArgs),
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
