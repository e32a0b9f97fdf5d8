//! One checker run through the task's [`Exec`] (in the sandbox, like every
//! command): kind [`CommandKind::Check`], its standard output kept whole
//! as its report ([`ReportSpec::Stdout`]), then read by its format.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::checker::Checker;
use super::diagnostic::Reported;
use super::parse::{self, Output};
use crate::budget::{CommandLimit, LimitedBy, TimeBudget};
use crate::exec::{CommandKind, CommandResult, CommandSpec, Exec, PrivateReport, ReportSpec};

/// Where and within what a checker runs.
pub struct RunAt<'a> {
    pub root: &'a Path,
    pub exec: &'a dyn Exec,
    /// Where its log goes.
    pub log_path: PathBuf,
    pub cancel: &'a CancellationToken,
    /// The check's own limit, and the task's time left.
    pub timeout: Duration,
    pub time: TimeBudget,
}

/// What a run showed.
pub struct Ran {
    pub result: CommandResult,
    /// The diagnostics of a finished check, or why it is not one.
    pub reported: Result<Vec<Reported>, String>,
}

/// Runs `checker` once. `Err`: it could not start (why, in words).
pub async fn run(checker: &Checker, at: RunAt<'_>) -> Result<Ran, String> {
    let limit = CommandLimit::new(None, at.timeout, at.time.left());
    if limit.by == LimitedBy::TimeBudget && limit.timeout.is_zero() {
        return Err(format!(
            "the time budget ({}) ran out before Rein could run `{}`",
            at.time.label(),
            checker.shown
        ));
    }
    let cwd = if checker.dir.is_empty() {
        at.root.to_path_buf()
    } else {
        at.root.join(&checker.dir)
    };
    let spec = CommandSpec {
        command: checker.command.clone(),
        cwd,
        timeout: limit.timeout,
        log_path: at.log_path,
        kind: CommandKind::Check,
        network: false,
        sandbox_mode: None,
        report: Some(ReportSpec::Stdout),
        layer: None,
    };
    let result = at
        .exec
        .run(spec, at.cancel.clone())
        .await
        .map_err(|e| format!("`{}` could not be run: {e}", checker.shown))?;
    let reported = read(checker, &result, at.root, limit.by);
    Ok(Ran { result, reported })
}

fn read(
    checker: &Checker,
    result: &CommandResult,
    root: &Path,
    by: LimitedBy,
) -> Result<Vec<Reported>, String> {
    let why = |what: String| format!("`{}` gave no report: {what}", checker.shown);
    if result.timed_out {
        return Err(why(if by == LimitedBy::TimeBudget {
            "it was killed when the task's time ran out".to_owned()
        } else {
            "it timed out".to_owned()
        }));
    }
    if result.cancelled {
        return Err(why("it was cancelled".to_owned()));
    }
    // 127: the shell found no such program (uninstalled since, or not
    // visible inside the sandbox).
    if result.exit_code == Some(127) {
        return Err(why(format!(
            "the program was not found where it ran ({})",
            result.tail.last().map(String::as_str).unwrap_or("exit 127")
        )));
    }
    let stdout = match result.private_report.as_deref() {
        Some(PrivateReport::Text(text)) => text.as_str(),
        Some(PrivateReport::Unreadable(reason)) => return Err(why(reason.clone())),
        Some(PrivateReport::Missing) | None => "",
    };
    parse::read(
        checker.format,
        Output {
            stdout,
            exit_code: result.exit_code,
            root,
            dir: &checker.dir,
        },
    )
    .map_err(why)
}
