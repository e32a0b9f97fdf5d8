//! [`TerminalProgress`]: a task's events as a log on the terminal, under
//! a status line per step.

use std::sync::{Arc, Mutex, PoisonError};

use rein_core::inert;
use rein_core::permissions::Decision;
use rein_core::ports::{ApprovalDecision, Evidence, ProgressSink, TaskEvent};
use rein_core::task::{TaskId, TaskState};

use super::io::Terminal;
use rein_app::format::{fmt_duration_ms, fmt_tokens};

/// A task's progress as lines on the terminal: a status line per step
/// (`turn 2/20 · running tests · 3.1k tok · $0.01`), the model's text,
/// each tool call and its one-line result, denials and approvals,
/// questions, and the verification with its evidence.
pub struct TerminalProgress {
    terminal: Arc<Terminal>,
    state: Mutex<Line>,
}

/// What the status line shows.
#[derive(Default)]
struct Line {
    turn: u32,
    max_turns: u32,
    tokens: u64,
    cost: f64,
    unpriced_calls: u32,
    /// The model's text of the turn, shown under the turn's first step.
    pending_text: Option<String>,
    /// The last status line, so a step is not announced twice.
    last: String,
    /// The last verification: passed, and its evidence.
    verification: Option<(bool, Vec<Evidence>)>,
}

impl Line {
    fn status(&self, activity: &str) -> String {
        format!(
            "turn {}/{} · {activity} · {} · {}",
            self.turn.max(1),
            self.max_turns,
            fmt_tokens(self.tokens),
            rein_app::format::cost(self.cost, self.unpriced_calls)
        )
    }
}

impl TerminalProgress {
    pub fn new(terminal: Arc<Terminal>) -> Self {
        Self {
            terminal,
            state: Mutex::new(Line::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Line> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The last status line, with the state the task ended in; prints the
    /// model's last words if no step showed them.
    pub fn finish(&self, state: TaskState) {
        let mut line = self.lock();
        let mut out = String::new();
        let status = line.status(state.as_str());
        push_line(&mut out, &status);
        if let Some(text) = line.pending_text.take() {
            push_text(&mut out, &text);
        }
        line.last = status;
        self.terminal.write(&out);
    }

    /// Whether the last check of a claim passed, and its evidence.
    pub fn last_verification(&self) -> Option<(bool, Vec<Evidence>)> {
        self.lock().verification.clone()
    }

    fn render(&self, event: &TaskEvent) -> String {
        let mut line = self.lock();
        let mut out = String::new();
        match event {
            // `rein run` prints its own header before the task starts.
            TaskEvent::Started { .. } => {}
            TaskEvent::Status(status) => {
                line.turn = status.turn;
                line.max_turns = status.max_turns;
                line.tokens = status.input_tokens.saturating_add(status.output_tokens);
                line.cost = status.cost_usd;
                line.unpriced_calls = status.unpriced_calls;
                if status.state == TaskState::Verifying {
                    step(&mut line, &mut out, "verifying");
                }
            }
            TaskEvent::Activity { text } => {
                // The prompt that follows says it better.
                if text != rein_core::ports::APPROVAL_WAIT {
                    step(&mut line, &mut out, text);
                }
            }
            TaskEvent::ModelRetry {
                attempt,
                delay_ms,
                reason,
            } => step(
                &mut line,
                &mut out,
                &format!(
                    "retrying the model in {} (attempt {attempt}: {reason})",
                    fmt_duration_ms(*delay_ms)
                ),
            ),
            TaskEvent::Text { text, .. } => line.pending_text = Some(text.clone()),
            TaskEvent::ToolCall {
                tool,
                title,
                detail,
                ..
            } => {
                step(&mut line, &mut out, title);
                push_line(&mut out, &format!("  → {}", call_line(tool, detail)));
            }
            TaskEvent::Permission {
                tool,
                decision: Decision::Deny,
                rule,
                ..
            } => push_line(&mut out, &format!("  ✗ denied: {tool} ({rule})")),
            TaskEvent::Approval { decision, .. } => push_line(
                &mut out,
                match decision {
                    ApprovalDecision::AllowOnce => "  ✓ allowed once",
                    ApprovalDecision::AllowForTask => "  ✓ allowed for the rest of this task",
                    ApprovalDecision::Deny => "  ✗ not allowed",
                },
            ),
            TaskEvent::ToolResult {
                is_error,
                summary,
                duration_ms,
                ..
            } => push_line(
                &mut out,
                &format!(
                    "  ← {} ({}): {summary}",
                    if *is_error { "error" } else { "ok" },
                    fmt_duration_ms(*duration_ms)
                ),
            ),
            TaskEvent::Guard { guard, message, .. } => push_line(
                &mut out,
                &format!("  ! {guard}: {}", first_line(message, 200)),
            ),
            TaskEvent::Compaction {
                summarized_items,
                tokens_before,
                tokens_after,
                archive,
                ..
            } => push_line(
                &mut out,
                &format!(
                    "  compacted {summarized_items} items: {} → {} (archived in {archive})",
                    fmt_tokens(*tokens_before),
                    fmt_tokens(*tokens_after)
                ),
            ),
            TaskEvent::Question { question, .. } => {
                push_line(&mut out, "  ? Rein asks:");
                for q in question.lines() {
                    push_line(&mut out, &format!("    {q}"));
                }
            }
            TaskEvent::Answer { answer, .. } => {
                push_line(&mut out, &format!("  answer: {}", first_line(answer, 200)));
            }
            TaskEvent::Verification {
                passed,
                detail,
                evidence,
                ..
            } => {
                let (mark, what) = if *passed {
                    ("✓", "verified")
                } else {
                    ("✗", "not verified")
                };
                let mut lines = detail.lines();
                push_line(
                    &mut out,
                    &format!("  {mark} {what}: {}", lines.next().unwrap_or_default()),
                );
                for rest in lines.take(8) {
                    push_line(&mut out, &format!("    {rest}"));
                }
                for e in evidence {
                    push_line(&mut out, &format!("    evidence: {}", evidence_line(e)));
                }
                line.verification = Some((*passed, evidence.clone()));
            }
            // The search with the verifier: each candidate in a line.
            TaskEvent::Candidate {
                number,
                of,
                temperature,
                outcome,
                detail,
                ..
            } => push_line(
                &mut out,
                &format!(
                    "  ~ candidate {number} of {of} (temperature {temperature}): {}: {}",
                    outcome.name().replace('_', " "),
                    first_line(detail, 160)
                ),
            ),
            TaskEvent::Permission { .. }
            | TaskEvent::ModelCall { .. }
            | TaskEvent::Context { .. }
            // The terminal shows each turn's text whole, and the changes
            // as they happen.
            | TaskEvent::TextDelta { .. }
            | TaskEvent::ProgressNote { .. }
            // The test runs print their own summary lines.
            | TaskEvent::TestOutcomes { .. } => {}
        }
        out
    }
}

impl ProgressSink for TerminalProgress {
    fn event(&self, _task: &TaskId, event: &TaskEvent) {
        let out = self.render(event);
        if !out.is_empty() {
            self.terminal.write(&out);
        }
    }
}

/// A status line for a new step (unless it is the one shown last), then
/// the model's text of the turn if not shown yet.
fn step(line: &mut Line, out: &mut String, activity: &str) {
    let status = line.status(&inert::line(activity));
    if status != line.last {
        push_line(out, &status);
        line.last = status;
    }
    if let Some(text) = line.pending_text.take() {
        push_text(out, &text);
    }
}

/// One line of the log: whatever it holds stays on it ([`inert::line`]).
fn push_line(out: &mut String, line: &str) {
    out.push_str(&inert::line(line));
    out.push('\n');
}

/// The model's text, each line marked.
fn push_text(out: &mut String, text: &str) {
    for l in text.trim().lines() {
        push_line(out, format!("  │ {l}").trim_end());
    }
}

fn first_line(text: &str, max_chars: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > max_chars {
        format!("{}…", line.chars().take(max_chars).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// All of `text` on one line (escaped, line breaks too), at most
/// `max_chars`: a command's later lines are part of what it does.
fn one_line(text: &str, max_chars: usize) -> String {
    let shown = inert::line(text.trim());
    if shown.chars().count() > max_chars {
        format!("{}…", shown.chars().take(max_chars).collect::<String>())
    } else {
        shown.into_owned()
    }
}

/// A call with its main argument, on one line.
fn call_line(tool: &str, detail: &str) -> String {
    if detail.is_empty() {
        tool.to_owned()
    } else {
        format!("{tool} {}", one_line(detail, 200))
    }
}

/// One check's evidence on one line.
fn evidence_line(e: &Evidence) -> String {
    let exit = e
        .exit_code
        .map_or_else(|| "no exit code".to_owned(), |c| format!("exit {c}"));
    format!(
        "`{}` · {exit} · {} · log {}",
        e.command,
        fmt_duration_ms(e.duration_ms),
        e.log_path
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use rein_core::ports::TaskStatus;

    use super::*;
    use crate::terminal::test_support::terminal;

    /// A call as the agent reports it, described by the built-in tools.
    fn tool_call(call_id: &str, tool: &str, arguments: serde_json::Value) -> TaskEvent {
        let described = rein_core::tools::builtin().describe(tool, &arguments);
        TaskEvent::ToolCall {
            turn: 1,
            call_id: call_id.into(),
            tool: tool.into(),
            arguments,
            title: described.title,
            detail: described.detail,
            kind: rein_core::tools::builtin().kind(tool),
        }
    }

    /// The model's words, tool results and questions reach the log
    /// escaped, each on its own line.
    #[test]
    fn the_progress_shows_the_models_escape_sequences_escaped() {
        let (t, out) = terminal("");
        let p = TerminalProgress::new(t);
        let task = TaskId("t".into());
        for event in [
            status(TaskState::Running, 1, 0),
            TaskEvent::Text {
                turn: 1,
                text: "All good.\x1b[1A\x1b[2K\rnothing to see".into(),
            },
            tool_call(
                "c1",
                "run_command",
                serde_json::json!({"command": "true\nrm -rf x"}),
            ),
            TaskEvent::ToolResult {
                call_id: "c1".into(),
                tool: "run_command".into(),
                is_error: false,
                summary: "exit 0\nstate:  succeeded\x07".into(),
                duration_ms: 10,
                output_bytes: 20,
            },
            TaskEvent::Question {
                call_id: "c2".into(),
                question: "Proceed?\u{202e}".into(),
            },
        ] {
            p.event(&task, &event);
        }
        assert_eq!(
            out.text(),
            "turn 1/20 · running `true\\nrm -rf x` · 0 tok · $0.01\n\
             \x20 │ All good.\\x1b[1A\\x1b[2K\\rnothing to see\n\
             \x20 → run_command `true\\nrm -rf x`\n\
             \x20 ← ok (0.01s): exit 0\\nstate:  succeeded\\x07\n\
             \x20 ? Rein asks:\n\
             \x20   Proceed?\\u{202e}\n"
        );
    }

    fn status(state: TaskState, turn: u32, tokens: u64) -> TaskEvent {
        TaskEvent::Status(TaskStatus {
            task_id: TaskId("t".into()),
            state,
            reason: None,
            turn,
            max_turns: 20,
            input_tokens: tokens,
            output_tokens: 0,
            cost_usd: 0.0123,
            unpriced_calls: 0,
            cause: None,
        })
    }

    #[test]
    fn progress_reads_as_a_log() {
        let (t, out) = terminal("");
        let p = TerminalProgress::new(t);
        let task = TaskId("t".into());
        for event in [
            status(TaskState::Running, 0, 0),
            status(TaskState::Running, 1, 3_100),
            TaskEvent::Text {
                turn: 1,
                text: "Let me run it.\nThen read.".into(),
            },
            tool_call(
                "c1",
                "run_tests",
                serde_json::json!({"target": "tests/t.py::T::test_a"}),
            ),
            TaskEvent::Activity {
                text: "running tests".into(),
            },
            TaskEvent::ToolResult {
                call_id: "c1".into(),
                tool: "run_tests".into(),
                is_error: true,
                summary: "exit 1: 1 failing".into(),
                duration_ms: 310,
                output_bytes: 20,
            },
            TaskEvent::Permission {
                call_id: "c2".into(),
                tool: "edit_file".into(),
                decision: Decision::Deny,
                rule: "built-in deny: the target test".into(),
            },
            status(TaskState::Verifying, 2, 4_000),
            TaskEvent::Verification {
                turn: 2,
                passed: true,
                detail: "fixed: `T.test_a` passes".into(),
                evidence: vec![Evidence {
                    check: "test_passes".into(),
                    command: "python3 -m unittest t".into(),
                    exit_code: Some(0),
                    duration_ms: 80,
                    files: Vec::new(),
                    log_path: "/w/.rein/v.log".into(),
                    failures: Vec::new(),
                    sandbox: String::new(),
                }],
            },
        ] {
            p.event(&task, &event);
        }
        p.finish(TaskState::Succeeded);
        assert_eq!(
            out.text(),
            "turn 1/20 · running tests · 3.1k tok · $0.01\n\
             \x20 │ Let me run it.\n\
             \x20 │ Then read.\n\
             \x20 → run_tests tests/t.py::T::test_a\n\
             \x20 ← error (0.31s): exit 1: 1 failing\n\
             \x20 ✗ denied: edit_file (built-in deny: the target test)\n\
             turn 2/20 · verifying · 4.0k tok · $0.01\n\
             \x20 ✓ verified: fixed: `T.test_a` passes\n\
             \x20   evidence: `python3 -m unittest t` · exit 0 · 0.08s · log /w/.rein/v.log\n\
             turn 2/20 · succeeded · 4.0k tok · $0.01\n"
        );
    }
}
