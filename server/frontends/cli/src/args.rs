//! The arguments of `rein run` and `rein trust` (the binary's parser
//! takes them from here).

use std::path::PathBuf;

use clap::Args;

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
#[command(group = clap::ArgGroup::new("task").required(true).args(["fix_test", "fix_error", "instruction"]))]
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
    /// The error or warning to fix, as `FILE:LINE[:MESSAGE]` (e.g.
    /// `app.py:7` or `src/lib.rs:12:mismatched types`): found in the report
    /// of the project's checker (mypy, pyright, cargo check, tsc…), which
    /// must no longer report it at the end.
    #[arg(long, value_name = "FILE:LINE[:MESSAGE]")]
    pub fix_error: Option<String>,
    /// What to do, in plain words.
    pub instruction: Option<String>,
    /// Also write the result as JSON to this file (for programs, e.g.
    /// `rein eval`): state, reason, spend, changed files, evidence.
    #[arg(long, value_name = "FILE")]
    pub result_json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The task whose changes to take back (as `rein run` printed it);
    /// default: the workspace's latest task.
    #[arg(value_name = "TASK_ID")]
    pub task: Option<String>,
    /// The project (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}
