//! `run_tests` and `run_command`: processes, run against a disk that holds
//! exactly the buffers Rein edited, reported as exit code, duration,
//! failing tests and the tail of the log with the log's path.

use std::fmt::Write;
use std::time::Duration;

use super::{ToolCx, ToolOutput};
use crate::budget::{CommandLimit, LimitedBy};
use crate::context::history::ResultMeta;
use crate::exec::SandboxMode;
use crate::exec::{CommandKind, CommandResult, CommandSpec};
use crate::testtarget::TestTarget;

pub async fn run_tests(cx: &ToolCx<'_>, target: Option<&TestTarget>) -> ToolOutput {
    let Some(test_command) = cx.test_command else {
        return ToolOutput::error(
            "No test command was detected for this project (no Cargo.toml, pytest/unittest tests, package.json test script or go.mod found). Set `test_command` in .rein/config.toml, or use run_command.",
        );
    };
    let command = test_command.for_target(target);
    let run = Run {
        tool: "run_tests",
        requested: None,
        ceiling: cx.budgets.test_timeout,
        kind: CommandKind::Test,
        network: false,
        sandbox_mode: None,
    };
    run.go(cx, command).await
}

/// `network`: the user allowed it the network (else loopback only);
/// `sandbox_mode`: a `[[sandbox.rules]]` mode for it.
pub async fn run_command(
    cx: &ToolCx<'_>,
    command: &str,
    timeout_s: Option<u64>,
    network: bool,
    sandbox_mode: Option<SandboxMode>,
) -> ToolOutput {
    let run = Run {
        tool: "run_command",
        requested: timeout_s.map(Duration::from_secs),
        ceiling: cx.budgets.command_timeout.max(Duration::from_secs(1)),
        kind: CommandKind::Other,
        network,
        sandbox_mode,
    };
    // A command may have written files: it changes the project.
    let mut out = run.go(cx, command.to_owned()).await;
    out.changed_project = true;
    out
}

/// One command run and what bounds its time.
struct Run {
    tool: &'static str,
    /// The model's `timeout_s`.
    requested: Option<Duration>,
    /// The configured ceiling for this tool.
    ceiling: Duration,
    kind: CommandKind,
    network: bool,
    sandbox_mode: Option<SandboxMode>,
}

impl Run {
    async fn go(self, cx: &ToolCx<'_>, command: String) -> ToolOutput {
        if let Err(e) = cx.workspace.flush_to_disk().await {
            return ToolOutput::error(format!(
                "Could not save the edited files to disk before running the command, so it was not run: {e}"
            ));
        }
        // Measured once the disk is ready: the command gets what is left.
        let limit = CommandLimit::new(self.requested, self.ceiling, cx.time.left());
        if limit.by == LimitedBy::TimeBudget && limit.timeout.is_zero() {
            let reason = format!(
                "the time budget ({}) ran out before `{}` could run",
                cx.time.label(),
                short(&command)
            );
            return ToolOutput {
                out_of_time: Some(reason.clone()),
                ..ToolOutput::error(format!("Not run: {reason}."))
            };
        }
        let (log_path, log_rel) = cx.next_log();
        let spec = CommandSpec {
            command: command.clone(),
            cwd: cx.workspace.root().to_path_buf(),
            timeout: limit.timeout,
            log_path,
            kind: self.kind,
            network: self.network,
            sandbox_mode: self.sandbox_mode,
            report: None,
            layer: None,
        };
        let result = match cx.exec.run(spec, cx.cancel.clone()).await {
            Ok(result) => result,
            Err(e) => return ToolOutput::error(e.to_string()),
        };
        // Killed at the end of the task's time: the task ends with it.
        let out_of_time = (result.timed_out && limit.by == LimitedBy::TimeBudget).then(|| {
            format!(
                "the time budget ({}) ran out while `{}` was running; it was killed",
                cx.time.label(),
                short(&command)
            )
        });
        let note = [
            limit.note(self.tool, &cx.time),
            confinement_note(cx, &result),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();
        let note = (!note.is_empty()).then(|| note.join("\n"));
        let content = format_command_result(&command, &result, &log_rel, note.as_deref());
        let summary = summarize(&command, &result, &log_rel);
        let is_error = !result.succeeded();
        let meta = ResultMeta::Command {
            kind: self.kind,
            command,
            result,
            summary,
        };
        ToolOutput {
            content,
            is_error,
            meta,
            changed_project: false,
            out_of_time,
            unanswered: None,
            rejected: false,
        }
    }
}

/// What the model should know of the sandbox a command ran in: when it
/// failed inside one (an error may be the sandbox's refusal), and on every
/// run where the machine could not provide all of it.
fn confinement_note(cx: &ToolCx<'_>, result: &CommandResult) -> Option<String> {
    match cx.exec.confinement() {
        crate::exec::Confinement::Full { description } if !result.succeeded() => Some(format!(
            "It ran in Rein's sandbox ({description}): writes outside the project and $TMPDIR are refused and the network is loopback only; if it failed for that, say so (or ask for network: true)."
        )),
        crate::exec::Confinement::Degraded { missing, .. } => Some(format!(
            "Rein's sandbox is incomplete on this machine ({}): the user approved running it anyway.",
            missing.join("; ")
        )),
        _ => None,
    }
}

/// A command as a reason quotes it: its first line, at most 80 characters.
fn short(command: &str) -> String {
    let first = command.lines().next().unwrap_or_default();
    if first.chars().count() > 80 || command.lines().nth(1).is_some() {
        format!("{}…", first.chars().take(80).collect::<String>())
    } else {
        first.to_owned()
    }
}

/// The full report the model sees for a run; `limit`, a note on the time
/// limit when it was not the one asked for.
pub fn format_command_result(
    command: &str,
    result: &CommandResult,
    log_rel: &str,
    limit: Option<&str>,
) -> String {
    let mut out = format!("$ {command}\n{}\n", outcome(result));
    if let Some(limit) = limit {
        let _ = writeln!(out, "{limit}");
    }
    if !result.failures.is_empty() {
        let _ = writeln!(out, "failing tests ({}):", result.failures.len());
        for f in &result.failures {
            let _ = writeln!(out, "  {f}");
        }
    }
    if result.tail.is_empty() {
        out.push_str("(no output)\n");
    } else {
        let shown = result.tail.len() as u64;
        if result.total_lines > shown {
            let _ = writeln!(out, "last {shown} lines of {}:", result.total_lines);
        } else {
            out.push_str("output:\n");
        }
        for line in &result.tail {
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = write!(out, "full log: {log_rel} ({} lines)", result.total_lines);
    out
}

/// What an old run shrinks to once a newer one exists.
fn summarize(command: &str, result: &CommandResult, log_rel: &str) -> String {
    let failures = match result.failures.len() {
        0 => String::new(),
        n if n <= 5 => format!("; failing: {}", result.failures.join(", ")),
        n => format!("; {n} failing, first: {}", result.failures[..3].join(", ")),
    };
    format!("$ {command}: {}{failures}; log {log_rel}", outcome(result))
}

fn outcome(result: &CommandResult) -> String {
    let secs = result.duration.as_secs_f64();
    if result.cancelled {
        format!("cancelled after {secs:.1}s")
    } else if result.timed_out {
        format!("killed after {secs:.1}s: it exceeded its time limit")
    } else {
        // SIGXFSZ (25): the sandbox's file size limit; a shell reports a
        // child it killed as 128 + 25.
        const SIGXFSZ: i32 = 25;
        let limit = " (a file grew past the file size limit)";
        match (result.exit_code, result.signal) {
            (Some(code), _) if code == 128 + SIGXFSZ => {
                format!("exit code {code} after {secs:.1}s{limit}")
            }
            (Some(code), _) => format!("exit code {code} after {secs:.1}s"),
            (None, Some(SIGXFSZ)) => format!("ended by SIGXFSZ after {secs:.1}s{limit}"),
            (None, Some(signal)) => format!("ended by signal {signal} after {secs:.1}s"),
            (None, None) => format!("ended by a signal after {secs:.1}s"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_complete_and_old_runs_summarize() {
        let result = CommandResult {
            exit_code: Some(1),
            duration: Duration::from_millis(2_340),
            tail: vec![
                "FAILED tests/test_cart.py::test_total - assert 3 == 30".into(),
                "1 failed, 4 passed".into(),
            ],
            failures: vec!["tests/test_cart.py::test_total".into()],
            total_lines: 120,
            ..CommandResult::default()
        };
        expect_test::expect![[r#"
            $ python3 -m pytest -q
            exit code 1 after 2.3s
            failing tests (1):
              tests/test_cart.py::test_total
            last 2 lines of 120:
            FAILED tests/test_cart.py::test_total - assert 3 == 30
            1 failed, 4 passed
            full log: .rein/artifacts/t-1/run-1.log (120 lines)"#]]
        .assert_eq(&format_command_result(
            "python3 -m pytest -q",
            &result,
            ".rein/artifacts/t-1/run-1.log",
            None,
        ));
        assert_eq!(
            summarize("python3 -m pytest -q", &result, "run-1.log"),
            "$ python3 -m pytest -q: exit code 1 after 2.3s; failing: tests/test_cart.py::test_total; log run-1.log"
        );
        let killed = CommandResult {
            timed_out: true,
            duration: Duration::from_secs(120),
            ..CommandResult::default()
        };
        expect_test::expect![[r#"
            $ sleep 999
            killed after 120.0s: it exceeded its time limit
            time limit: 2 min (you asked for 60 min; run_command runs at most 2 min here)
            (no output)
            full log: x (0 lines)"#]]
        .assert_eq(&format_command_result(
            "sleep 999",
            &killed,
            "x",
            Some("time limit: 2 min (you asked for 60 min; run_command runs at most 2 min here)"),
        ));
    }
}
