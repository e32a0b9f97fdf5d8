//! The model's commands in the agent panel's terminal (`client_terminal =
//! true`, and a client that offers `terminal/*`): the user watches them
//! run in the editor. What that gives up, and why it is a setting: the
//! client runs the command as the user, so Rein's sandbox (files, network,
//! processes) and its scrubbed environment do not apply — the command sees
//! whatever the editor's environment holds. So every such command is put
//! to the user (no auto-approval inside a sandbox that is not there), and
//! the permission says where it runs. The tests — the model's `run_tests`
//! and the verifier's checks — still run in Rein's sandbox: a verdict is
//! only ever Rein's own run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, KillTerminalRequest, ReleaseTerminalRequest, SessionNotification,
    SessionUpdate, Terminal, TerminalId, TerminalOutputRequest, ToolCallContent, ToolCallUpdate,
    ToolCallUpdateFields, WaitForTerminalExitRequest,
};
use async_trait::async_trait;
use rein_core::exec::{
    CommandKind, CommandResult, CommandSpec, Confinement, Exec, ExecError, TAIL_LINES,
};
use tokio_util::sync::CancellationToken;

use super::approve::CurrentCall;

/// The most output the panel keeps for Rein to read back (the log and
/// the model get at most this).
const OUTPUT_LIMIT: u64 = 1 << 20;

/// Runs the model's commands in the client's terminal, the rest through
/// `inner` (Rein's sandbox).
pub struct ClientTerminal {
    pub inner: Arc<dyn Exec>,
    pub cx: ConnectionTo<Client>,
    pub session_id: String,
    /// The tool call the command belongs to: the panel shows the terminal
    /// in it.
    pub call: Arc<CurrentCall>,
}

/// What the panel's terminal said went wrong, as the executor's error.
fn failed(command: &str, e: impl std::fmt::Display) -> ExecError {
    ExecError::Spawn {
        command: command.to_owned(),
        reason: format!("the editor's terminal: {e}"),
    }
}

impl ClientTerminal {
    async fn finish(&self, id: &TerminalId, kill: bool) {
        if kill {
            let kill = KillTerminalRequest::new(self.session_id.clone(), id.clone());
            if let Err(e) = self.cx.send_request(kill).block_task().await {
                tracing::warn!(error = %e, "terminal/kill failed");
            }
        }
    }

    async fn release(&self, id: &TerminalId) {
        let release = ReleaseTerminalRequest::new(self.session_id.clone(), id.clone());
        if let Err(e) = self.cx.send_request(release).block_task().await {
            tracing::debug!(error = %e, "terminal/release failed");
        }
    }
}

#[async_trait]
impl Exec for ClientTerminal {
    async fn run(
        &self,
        spec: CommandSpec,
        cancel: CancellationToken,
    ) -> Result<CommandResult, ExecError> {
        if spec.kind == CommandKind::Test {
            return self.inner.run(spec, cancel).await;
        }
        let started = Instant::now();
        let create = CreateTerminalRequest::new(self.session_id.clone(), "sh")
            .args(vec!["-c".to_owned(), spec.command.clone()])
            .cwd(spec.cwd.clone())
            .output_byte_limit(OUTPUT_LIMIT);
        let id = tokio::select! {
            () = cancel.cancelled() => {
                write_log(&spec, "")?;
                return Ok(stopped(&spec, started, false, true));
            }
            created = self.cx.send_request(create).block_task() => {
                created.map_err(|e| failed(&spec.command, e))?.terminal_id
            }
        };
        let show = ToolCallUpdate::new(
            self.call.get(),
            ToolCallUpdateFields::new()
                .content(vec![ToolCallContent::Terminal(Terminal::new(id.clone()))]),
        );
        let shown =
            SessionNotification::new(self.session_id.clone(), SessionUpdate::ToolCallUpdate(show));
        if let Err(e) = self.cx.send_notification(shown) {
            tracing::debug!(error = %e, "the terminal was not shown in its call");
        }
        let wait = WaitForTerminalExitRequest::new(self.session_id.clone(), id.clone());
        let (exit, timed_out, cancelled) = tokio::select! {
            () = cancel.cancelled() => (None, false, true),
            () = tokio::time::sleep(spec.timeout) => (None, true, false),
            exited = self.cx.send_request(wait).block_task() => match exited {
                Ok(exited) => (Some(exited.exit_status), false, false),
                Err(e) => {
                    self.release(&id).await;
                    return Err(failed(&spec.command, e));
                }
            },
        };
        self.finish(&id, exit.is_none()).await;
        let read = TerminalOutputRequest::new(self.session_id.clone(), id.clone());
        let output = match self.cx.send_request(read).block_task().await {
            Ok(read) => {
                let mut output = read.output;
                if read.truncated {
                    output.insert_str(0, "(the start of the output was cut by the editor)\n");
                }
                output
            }
            Err(e) => format!("(the editor did not give the output back: {e})\n"),
        };
        self.release(&id).await;
        write_log(&spec, &output)?;
        let mut result = stopped(&spec, started, timed_out, cancelled);
        result.exit_code = exit
            .as_ref()
            .and_then(|e| e.exit_code)
            .and_then(|c| i32::try_from(c).ok());
        result.tail = tail(&output);
        result.total_lines = output.lines().count() as u64;
        result.total_bytes = output.len() as u64;
        Ok(result)
    }

    /// The model's commands are not confined: nothing runs unasked on the
    /// strength of a sandbox.
    fn confinement(&self) -> Confinement {
        Confinement::Off
    }
}

/// A result with no exit code yet: how long it ran, and whether Rein
/// stopped it.
fn stopped(
    spec: &CommandSpec,
    started: Instant,
    timed_out: bool,
    cancelled: bool,
) -> CommandResult {
    CommandResult {
        exit_code: None,
        signal: None,
        timed_out,
        cancelled,
        duration: started.elapsed().max(Duration::from_millis(1)),
        tail: Vec::new(),
        failures: Vec::new(),
        tally: Default::default(),
        passes: Default::default(),
        private_report: None,
        log_path: spec.log_path.clone(),
        total_lines: 0,
        total_bytes: 0,
    }
}

fn tail(output: &str) -> Vec<String> {
    let lines: Vec<&str> = output.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..]
        .iter()
        .map(|l| (*l).to_owned())
        .collect()
}

fn write_log(spec: &CommandSpec, output: &str) -> Result<(), ExecError> {
    let fail = |e: std::io::Error| ExecError::Log {
        path: spec.log_path.display().to_string(),
        reason: e.to_string(),
    };
    if let Some(dir) = spec.log_path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    std::fs::write(&spec.log_path, output).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_the_last_lines() {
        let output: String = (1..=80).map(|i| format!("line {i}\n")).collect();
        let last = tail(&output);
        assert_eq!(last.len(), TAIL_LINES);
        assert_eq!(last.last().map(String::as_str), Some("line 80"));
        assert!(tail("").is_empty());
    }
}
