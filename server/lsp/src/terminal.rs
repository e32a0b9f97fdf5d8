//! The terminal as `rein run`'s human: the progress of a task as lines on
//! stderr ([`TerminalProgress`]), proposed edits as unified diffs with a
//! yes/no question ([`TerminalConfirm`]), commands and questions put to the
//! user ([`TerminalApprover`]), all over one [`Terminal`]: stderr for what
//! Rein says, stdin for the answers, read line by line (a pipe works as
//! well as a keyboard). stdout is not touched here: it carries the result.
//!
//! Everything written goes through [`inert`]: commands, paths, diffs and
//! the model's words are untrusted, and a terminal must show them, not
//! obey them. Rein's own colours come only from [`paint_diff`], which
//! escapes the diff before it colours it ([`Styled`]).

pub use rein_core::inert;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use rein_core::host::disk::ConfirmChange;
use rein_core::permissions::Decision;
use rein_core::ports::{
    ApprovalDecision, Approver, CommandApproval, Evidence, ProgressSink, TaskEvent,
};
use rein_core::task::{TaskId, TaskState};
use rein_core::workspace::{
    CreateRequest, EditOutcome, EditRequest, FileRead, Listing, SearchResult, Workspace,
    WorkspaceError,
};
use similar::TextDiff;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};

/// Where Rein talks to the user and reads the answers.
pub struct Terminal {
    out: Mutex<Box<dyn Write + Send>>,
    input: tokio::sync::Mutex<Box<dyn AsyncBufRead + Send + Unpin>>,
    /// Write each answer after its prompt: when stdin is not a keyboard,
    /// nothing else shows what was answered.
    echo_answers: bool,
    /// Colour diffs.
    color: bool,
}

impl Terminal {
    /// stderr and stdin; colour only when stderr is a terminal and
    /// `NO_COLOR` is not set.
    pub fn stdio() -> Arc<Self> {
        let color = std::io::stderr().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        Arc::new(Self::new(
            Box::new(std::io::stderr()),
            Box::new(BufReader::new(tokio::io::stdin())),
            !std::io::stdin().is_terminal(),
            color,
        ))
    }

    pub fn new(
        out: Box<dyn Write + Send>,
        input: Box<dyn AsyncBufRead + Send + Unpin>,
        echo_answers: bool,
        color: bool,
    ) -> Self {
        Self {
            out: Mutex::new(out),
            input: tokio::sync::Mutex::new(input),
            echo_answers,
            color,
        }
    }

    pub fn color(&self) -> bool {
        self.color
    }

    /// Writes `text` with every character a terminal would act on shown
    /// escaped ([`inert::block`]); line breaks and tabs stay.
    pub fn write(&self, text: &str) {
        self.write_raw(&inert::block(text));
    }

    /// Writes a diff coloured by Rein (its content already escaped).
    pub fn write_styled(&self, text: &Styled) {
        self.write_raw(text.as_str());
    }

    /// A failed write to stderr is not worth stopping a task for.
    fn write_raw(&self, text: &str) {
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// Writes `text` and a newline.
    pub fn line(&self, text: &str) {
        self.write(&format!("{text}\n"));
    }

    /// Shows `prompt` and reads one line. `None` at the end of the input
    /// (or if it cannot be read); the line without its line ending else.
    pub async fn ask(&self, prompt: &str) -> Option<String> {
        // One question at a time: its prompt, then its answer.
        let mut input = self.input.lock().await;
        self.write(prompt);
        let mut line = String::new();
        match input.read_line(&mut line).await {
            Ok(0) | Err(_) => {
                self.line(if self.echo_answers {
                    "(no answer: end of input)"
                } else {
                    ""
                });
                None
            }
            Ok(_) => {
                let answer = line.trim_end_matches(['\n', '\r']).to_owned();
                if self.echo_answers {
                    self.line(&answer);
                }
                Some(answer)
            }
        }
    }
}

// ---------------------------------------------------------------- diffs

/// A unified diff of `path` from `old` (`None`: the file did not exist) to
/// `new`, with three lines of context; empty when nothing changed. The
/// path is escaped ([`inert::line`]): a line break in it would fake the
/// diff's next line.
pub fn unified_diff(path: &str, old: Option<&str>, new: &str) -> String {
    let before = old.unwrap_or("");
    if old.is_some() && before == new {
        return String::new();
    }
    let path = inert::line(path);
    let from = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_owned()
    };
    TextDiff::from_lines(before, new)
        .unified_diff()
        .context_radius(3)
        .header(&from, &format!("b/{path}"))
        .to_string()
}

/// A deleted file, as a unified diff.
pub fn deletion_diff(path: &str, old: &str) -> String {
    TextDiff::from_lines(old, "")
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{}", inert::line(path)), "/dev/null")
        .to_string()
}

/// Text for the terminal with Rein's own colours: its untrusted content
/// was escaped before they were added. Only [`paint_diff`] makes one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Styled(String);

impl Styled {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// `diff` with each line's content escaped ([`inert::line`]), then, when
/// `color` is set, ANSI colours (headers bold, hunks cyan, removals red,
/// additions green). Line endings (`\n`, `\r\n`) stay as they are; a
/// line ending in a lone `\r` (similar ends lines there too) shows it
/// (`\\r`) and gets a line break of its own, so the next line cannot be
/// drawn over it.
pub fn paint_diff(diff: &str, color: bool) -> Styled {
    let mut out = String::with_capacity(diff.len() + diff.len() / 4);
    let mut rest = diff;
    while !rest.is_empty() {
        let (line, shown_end, end, next) = match rest.find(['\n', '\r']) {
            None => (rest, "", "", ""),
            Some(i) if rest[i..].starts_with("\r\n") => (&rest[..i], "", "\r\n", &rest[i + 2..]),
            Some(i) if rest[i..].starts_with('\n') => (&rest[..i], "", "\n", &rest[i + 1..]),
            Some(i) => (&rest[..i], "\\r", "\n", &rest[i + 1..]),
        };
        rest = next;
        let body = format!("{}{shown_end}", inert::line(line));
        let code = if !color {
            ""
        } else if body.starts_with("+++") || body.starts_with("---") {
            "1"
        } else if body.starts_with("@@") {
            "36"
        } else if body.starts_with('+') {
            "32"
        } else if body.starts_with('-') {
            "31"
        } else if body.starts_with('\\') {
            "2"
        } else {
            ""
        };
        if code.is_empty() {
            out.push_str(&body);
            out.push_str(end);
        } else {
            out.push_str(&format!("\x1b[{code}m{body}\x1b[0m{end}"));
        }
    }
    Styled(out)
}

/// A line that says `what` holds characters shown escaped, naming them;
/// `None` when it holds none. It may not do what it seems to: the prompt
/// must say so plainly, not only show backslashes.
fn hidden_warning(what: &str, text: &str) -> Option<String> {
    let escapes = inert::escapes(text);
    (!escapes.is_empty()).then(|| {
        format!(
            "  ! this {what} contains control or invisible characters ({}), shown escaped: it may not do what it seems to",
            escapes.join(", ")
        )
    })
}

/// Ends `text` with a newline if it has none (a diff of a file without a
/// final newline ends with similar's `\ No newline at end of file` line).
fn with_final_newline(text: String) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text
    } else {
        text + "\n"
    }
}

// ------------------------------------------------------------ approvals

/// Edits that need confirmation, on the terminal: the diff, then
/// `Apply this edit to cart.py? [y/N]`. With `--yes` the diff is shown and
/// the edit approved without asking.
pub struct TerminalConfirm {
    pub terminal: Arc<Terminal>,
    pub yes: bool,
}

#[async_trait]
impl ConfirmChange for TerminalConfirm {
    async fn confirm(&self, path: &str, old: Option<&str>, new: &str, description: &str) -> bool {
        let t = &self.terminal;
        t.line(&format!("  proposed: {}", inert::line(description)));
        let diff = with_final_newline(unified_diff(path, old, new));
        t.write_styled(&paint_diff(&diff, t.color()));
        // The diff's lines are raw until painted; its header has the path
        // escaped already, so the path is looked at as given.
        if let Some(warning) = hidden_warning("edit", &format!("{path}\n{diff}")) {
            t.line(&warning);
        }
        let path = inert::line(path);
        let question = match old {
            Some(_) => format!("Apply this edit to {path}? [y/N] "),
            None => format!("Create {path}? [y/N] "),
        };
        if self.yes {
            t.line(&format!("{question}y (--yes)"));
            return true;
        }
        let answer = t.ask(&question).await;
        is_yes(answer.as_deref())
    }
}

fn is_yes(answer: Option<&str>) -> bool {
    matches!(
        answer.map(|a| a.trim().to_ascii_lowercase()).as_deref(),
        Some("y" | "yes")
    )
}

/// Commands the policy asks about and the model's questions, on the
/// terminal. With `--yes` every command the policy asks about is allowed
/// (denies never reach here) and questions get no answer, so the task
/// stops waiting for one.
pub struct TerminalApprover {
    pub terminal: Arc<Terminal>,
    pub yes: bool,
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn approve_command(&self, request: &CommandApproval) -> ApprovalDecision {
        let t = &self.terminal;
        // On one line, escaped: the command is what is approved, so every
        // character of it must show.
        let command = inert::line(&request.command);
        t.line(&format!(
            "  rein wants to run `{command}` in {} ({})",
            inert::line(&request.cwd.display().to_string()),
            inert::line(&request.rule)
        ));
        if let Some(warning) = hidden_warning("command", &request.command) {
            t.line(&warning);
        }
        if request.network {
            t.line("  ! this command wants the network (commands have loopback only otherwise)");
        }
        let question = format!("Run `{command}`? [y]es once / [a]ll this task / [N]o ");
        if self.yes {
            t.line(&format!("{question}y (--yes)"));
            return ApprovalDecision::AllowOnce;
        }
        let answer = t.ask(&question).await;
        command_decision(answer.as_deref())
    }

    /// The question itself was shown with the `Question` event.
    async fn ask_user(&self, _task: &TaskId, _question: &str) -> Option<String> {
        if self.yes {
            self.terminal
                .line("  (--yes: no answer is given; the task will wait for one)");
            return None;
        }
        let answer = self
            .terminal
            .ask("Your answer (an empty line: no answer): ")
            .await?;
        let answer = answer.trim();
        (!answer.is_empty()).then(|| answer.to_owned())
    }
}

fn command_decision(answer: Option<&str>) -> ApprovalDecision {
    match answer.map(|a| a.trim().to_ascii_lowercase()).as_deref() {
        Some("y" | "yes") => ApprovalDecision::AllowOnce,
        Some("a" | "all") => ApprovalDecision::AllowForTask,
        _ => ApprovalDecision::Deny,
    }
}

// -------------------------------------------------------------- progress

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
            crate::lsp_progress::cost(self.cost, self.unpriced_calls)
        )
    }
}

/// `950 tok`, `3.1k tok`, `1.2M tok`.
pub fn fmt_tokens(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M tok", n as f64 / 1_000_000.0)
    } else if n >= 1_000 {
        format!("{:.1}k tok", n as f64 / 1_000.0)
    } else {
        format!("{n} tok")
    }
}

/// `0.42s`, `12.3s`, `2m 05s`.
pub fn fmt_duration_ms(ms: u64) -> String {
    if ms < 10_000 {
        format!("{:.2}s", ms as f64 / 1000.0)
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m {:02}s", ms / 60_000, (ms % 60_000) / 1000)
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
                if text != "waiting for approval" {
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
            TaskEvent::Permission { .. }
            | TaskEvent::ModelCall { .. }
            | TaskEvent::Context { .. }
            // The terminal shows each turn's text whole.
            | TaskEvent::TextDelta { .. } => {}
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

// ------------------------------------------------- what the task changed

/// What a file held before the task first changed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Before {
    Text(String),
    /// The task created it.
    Absent,
    /// It could not be read (too large, not text).
    Unknown,
}

/// A [`Workspace`] that remembers what each file held before the task's
/// first change to it, so the end of the task can show every change as a
/// diff. Everything else is the inner workspace's.
pub struct TrackedWorkspace<W> {
    inner: W,
    before: Mutex<BTreeMap<String, Before>>,
}

impl<W: Workspace> TrackedWorkspace<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            before: Mutex::new(BTreeMap::new()),
        }
    }

    /// Every file the task changed (workspace-relative) and what it held
    /// before.
    pub fn changed(&self) -> BTreeMap<String, Before> {
        self.before
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn tracked(&self, path: &str) -> bool {
        self.before
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(path)
    }

    fn remember(&self, path: String, before: Before) {
        self.before
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(path)
            .or_insert(before);
    }
}

fn applied(outcome: &Result<EditOutcome, WorkspaceError>) -> bool {
    // `Unknown` may have changed the file: show whatever it holds now.
    matches!(
        outcome,
        Ok(EditOutcome::Applied { .. } | EditOutcome::Unknown { .. })
    )
}

#[async_trait]
impl<W: Workspace> Workspace for TrackedWorkspace<W> {
    fn root(&self) -> &std::path::Path {
        self.inner.root()
    }

    async fn read_file(&self, path: &str) -> Result<FileRead, WorkspaceError> {
        self.inner.read_file(path).await
    }

    async fn list_files(
        &self,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<Listing, WorkspaceError> {
        self.inner.list_files(dir, glob, limit).await
    }

    async fn search(
        &self,
        pattern: &str,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<SearchResult, WorkspaceError> {
        self.inner.search(pattern, dir, glob, limit).await
    }

    async fn edit_file(&self, edit: EditRequest) -> Result<EditOutcome, WorkspaceError> {
        let path = edit.path.clone();
        let before = if self.tracked(&path) {
            None
        } else {
            Some(match self.inner.read_file(&path).await {
                Ok(file) => Before::Text(file.text),
                Err(WorkspaceError::NotFound { .. }) => Before::Absent,
                Err(_) => Before::Unknown,
            })
        };
        let outcome = self.inner.edit_file(edit).await;
        if applied(&outcome)
            && let Some(before) = before
        {
            self.remember(path, before);
        }
        outcome
    }

    async fn create_file(&self, create: CreateRequest) -> Result<EditOutcome, WorkspaceError> {
        let path = create.path.clone();
        let outcome = self.inner.create_file(create).await;
        if applied(&outcome) {
            self.remember(path, Before::Absent);
        }
        outcome
    }

    async fn flush_to_disk(&self) -> Result<(), WorkspaceError> {
        self.inner.flush_to_disk().await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use pretty_assertions::assert_eq;
    use rein_core::ports::TaskStatus;

    use super::*;

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
        }
    }

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn terminal(input: &'static str) -> (Arc<Terminal>, Shared) {
        let out = Shared::default();
        let t = Terminal::new(
            Box::new(out.clone()),
            Box::new(BufReader::new(input.as_bytes())),
            true,
            false,
        );
        (Arc::new(t), out)
    }

    #[test]
    fn diffs_are_unified_and_coloured_only_on_request() {
        let old = "a\nb\nc\n";
        let new = "a\nB\nc\n";
        let diff = unified_diff("x.py", Some(old), new);
        assert_eq!(
            diff,
            "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!(paint_diff(&diff, false).as_str(), diff);
        let painted = paint_diff(&diff, true).0;
        assert!(painted.contains("\x1b[31m-b\x1b[0m\n"), "{painted:?}");
        assert!(painted.contains("\x1b[32m+B\x1b[0m\n"), "{painted:?}");
        assert!(painted.contains("\x1b[36m@@ -1,3 +1,3 @@\x1b[0m\n"));
        assert_eq!(unified_diff("x.py", Some(old), old), "");
        assert_eq!(
            unified_diff("n.py", None, "hi\n"),
            "--- /dev/null\n+++ b/n.py\n@@ -0,0 +1 @@\n+hi\n"
        );
        assert!(deletion_diff("d.py", "x\n").contains("+++ /dev/null"));
    }

    /// An added line that erases itself (`ESC[2K\r`) and draws the line a
    /// reviewer hopes for: its content is escaped before Rein colours it,
    /// the line similar ends at the `\r` gets a line break of its own, and
    /// a line break in a path cannot fake a header.
    #[test]
    fn a_diff_line_with_escape_sequences_is_escaped_before_it_is_coloured() {
        let diff = unified_diff(
            "x.py\n+++ b/fake.py",
            Some("a\r\nb\r\n"),
            "a\r\nb # \x1b[2K\r+fixed\r\n",
        );
        let painted = paint_diff(&diff, true);
        // ␛ is Rein's ESC, ␍ a CR of a CRLF line ending.
        let shown = painted.as_str().replace('\x1b', "␛").replace('\r', "␍");
        expect_test::expect![[r#"
            ␛[1m--- a/x.py\n+++ b/fake.py␛[0m
            ␛[1m+++ b/x.py\n+++ b/fake.py␛[0m
            ␛[36m@@ -1,2 +1,3 @@␛[0m
             a␍
            ␛[31m-b␛[0m␍
            ␛[32m+b # \x1b[2K\r␛[0m
            ␛[32m++fixed␛[0m␍
        "#]]
        .assert_eq(&shown);
        assert_eq!(
            paint_diff(&diff, false).as_str(),
            "--- a/x.py\\n+++ b/fake.py\n+++ b/x.py\\n+++ b/fake.py\n@@ -1,2 +1,3 @@\n a\r\n-b\r\n+b # \\x1b[2K\\r\n++fixed\r\n"
        );
    }

    /// The question about an edit names what its diff hides, and shows it.
    #[tokio::test]
    async fn an_edit_with_hidden_characters_is_flagged_in_its_question() {
        let (t, out) = terminal("");
        let confirm = TerminalConfirm {
            terminal: Arc::clone(&t),
            yes: false,
        };
        let new = "total = 1 # \x1b[2K\rtotal = 2\n";
        assert!(
            !confirm
                .confirm("c.py", Some("total = 0\n"), new, "edit c.py")
                .await
        );
        assert_eq!(
            out.text(),
            "  proposed: edit c.py\n\
             --- a/c.py\n\
             +++ b/c.py\n\
             @@ -1 +1,2 @@\n\
             -total = 0\n\
             +total = 1 # \\x1b[2K\\r\n\
             +total = 2\n\
             \x20 ! this edit contains control or invisible characters (\\x1b, \\r), shown escaped: it may not do what it seems to\n\
             Apply this edit to c.py? [y/N] (no answer: end of input)\n"
        );
        let (t, out) = terminal("");
        let confirm = TerminalConfirm {
            terminal: t,
            yes: false,
        };
        assert!(
            !confirm
                .confirm("c.py", Some("a\tb\r\n"), "a\tc\r\n", "edit c.py")
                .await
        );
        assert!(!out.text().contains("! this edit"), "{}", out.text());
    }

    /// `touch pwned #ESC[2K\r python3 -m unittest` read `python3 -m
    /// unittest` on a terminal; it is shown escaped, on one line, and the
    /// prompt says it contains such characters. A plain command is not
    /// flagged.
    #[tokio::test]
    async fn a_command_with_hidden_characters_is_shown_escaped_and_flagged() {
        let (t, out) = terminal("n\nn\n");
        let approver = TerminalApprover {
            terminal: t,
            yes: false,
        };
        let request = |command: &str| CommandApproval {
            task: TaskId("t".into()),
            tool: "run_command".into(),
            command: command.into(),
            cwd: "/w".into(),
            rule: "default: commands ask".into(),
            network: false,
        };
        let hidden = request("touch pwned #\x1b[2K\r\u{202e} python3 -m unittest\nls");
        assert_eq!(
            approver.approve_command(&hidden).await,
            ApprovalDecision::Deny
        );
        assert_eq!(
            out.text(),
            "  rein wants to run `touch pwned #\\x1b[2K\\r\\u{202e} python3 -m unittest\\nls` in /w (default: commands ask)\n\
             \x20 ! this command contains control or invisible characters (\\x1b, \\r, \\u{202e}), shown escaped: it may not do what it seems to\n\
             Run `touch pwned #\\x1b[2K\\r\\u{202e} python3 -m unittest\\nls`? [y]es once / [a]ll this task / [N]o n\n"
        );
        assert_eq!(
            approver
                .approve_command(&request("python3 -m unittest"))
                .await,
            ApprovalDecision::Deny
        );
        assert_eq!(
            out.text().matches("! this command").count(),
            1,
            "{}",
            out.text()
        );
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

    #[tokio::test]
    async fn answers_are_read_line_by_line_and_end_of_input_is_no() {
        let (t, out) = terminal("y\n\nyes\n");
        let confirm = TerminalConfirm {
            terminal: Arc::clone(&t),
            yes: false,
        };
        assert!(
            confirm
                .confirm("c.py", Some("1\n"), "2\n", "edit c.py")
                .await
        );
        assert!(
            !confirm
                .confirm("c.py", Some("1\n"), "2\n", "edit c.py")
                .await
        );
        assert!(confirm.confirm("n.py", None, "2\n", "create n.py").await);
        assert!(
            !confirm
                .confirm("c.py", Some("1\n"), "2\n", "edit c.py")
                .await
        );
        let text = out.text();
        assert!(
            text.contains("Apply this edit to c.py? [y/N] y\n"),
            "{text}"
        );
        assert!(text.contains("Create n.py? [y/N] yes\n"), "{text}");
        assert!(text.contains("(no answer: end of input)"), "{text}");
        assert!(text.contains("-1\n+2\n"), "{text}");
    }

    #[tokio::test]
    async fn commands_and_questions() {
        let (t, out) = terminal("a\nn\nsum the prices\n\n");
        let approver = TerminalApprover {
            terminal: Arc::clone(&t),
            yes: false,
        };
        let request = CommandApproval {
            task: TaskId("t".into()),
            tool: "run_command".into(),
            command: "make lint".into(),
            cwd: "/w".into(),
            rule: "default: commands ask".into(),
            network: false,
        };
        assert_eq!(
            approver.approve_command(&request).await,
            ApprovalDecision::AllowForTask
        );
        assert_eq!(
            approver.approve_command(&request).await,
            ApprovalDecision::Deny
        );
        let task = TaskId("t".into());
        assert_eq!(
            approver.ask_user(&task, "how?").await.as_deref(),
            Some("sum the prices")
        );
        assert_eq!(approver.ask_user(&task, "how?").await, None);
        assert_eq!(approver.ask_user(&task, "how?").await, None);
        let text = out.text();
        assert!(
            text.contains("Run `make lint`? [y]es once / [a]ll this task / [N]o a\n"),
            "{text}"
        );

        let yes = TerminalApprover {
            terminal: t,
            yes: true,
        };
        assert_eq!(
            yes.approve_command(&request).await,
            ApprovalDecision::AllowOnce
        );
        assert_eq!(yes.ask_user(&task, "how?").await, None);
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

    #[test]
    fn numbers_read_well() {
        assert_eq!(fmt_tokens(950), "950 tok");
        assert_eq!(fmt_tokens(12_400), "12.4k tok");
        assert_eq!(fmt_tokens(2_500_000), "2.5M tok");
        assert_eq!(fmt_duration_ms(420), "0.42s");
        assert_eq!(fmt_duration_ms(12_340), "12.3s");
        assert_eq!(fmt_duration_ms(125_000), "2m 05s");
    }
}
