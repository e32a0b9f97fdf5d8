//! What `rein demo` prints: the messages an editor would show, as plain
//! lines on stdout (coloured only on a terminal without `NO_COLOR`).
//!
//! Every function here returns lines instead of printing them, so the
//! wording is tested without a terminal.

use rein_core::task::TaskState;
use std::io::{IsTerminal, Write};

use serde_json::Value;
use similar::TextDiff;

/// stdout, and whether to colour it.
#[derive(Clone, Copy, Debug)]
pub struct Out {
    color: bool,
}

#[derive(Clone, Copy, Debug)]
pub enum Style {
    Bold,
    Dim,
    Green,
    Red,
    Yellow,
    Cyan,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Self::Bold => "1",
            Self::Dim => "2",
            Self::Green => "32",
            Self::Red => "31",
            Self::Yellow => "33",
            Self::Cyan => "36",
        }
    }
}

impl Out {
    /// Colour only when stdout is a terminal and `NO_COLOR` is unset (or
    /// empty, as <https://no-color.org> says).
    pub fn stdout() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            color: std::io::stdout().is_terminal() && !no_color,
        }
    }

    #[cfg(test)]
    pub fn plain() -> Self {
        Self { color: false }
    }

    pub fn paint(&self, style: Style, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("\x1b[{}m{text}\x1b[0m", style.code())
        } else {
            text.to_owned()
        }
    }

    /// Writes one line. A closed stdout (`rein demo | head`) is not worth a
    /// panic, which is what `println!` would do.
    pub fn line(&self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{text}");
        let _ = stdout.flush();
    }

    pub fn lines(&self, lines: &[String]) {
        for line in lines {
            self.line(line);
        }
    }
}

/// A status's state, if it names one.
fn state_of(status: &Value) -> Option<TaskState> {
    status["state"].as_str()?.parse().ok()
}

/// The states after which a task does nothing more on its own.
pub fn is_final_state(state: &str) -> bool {
    state.parse::<TaskState>().is_ok_and(TaskState::is_end)
}

/// Whether a `rein/taskStatus` waits for the answer to a question: the
/// one wait that stops the demo, which has no one to answer. A review of
/// an edit or an approval of a command (`waitingFor.kind`) the demo's
/// editor gives at once.
pub fn waits_for_answer(status: &Value) -> bool {
    state_of(status) == Some(TaskState::WaitingUser)
        && !matches!(
            status["waitingFor"]["kind"].as_str(),
            Some("review" | "approval")
        )
}

/// Turns the server's messages into what an editor shows, remembering
/// just enough to not repeat itself.
pub struct Viewer {
    out: Out,
    /// The action the editor picks in `window/showMessageRequest`.
    choice: Option<String>,
    last_progress: String,
    last_state: String,
}

impl Viewer {
    pub fn new(out: Out, choice: Option<String>) -> Self {
        Self {
            out,
            choice,
            last_progress: String::new(),
            last_state: String::new(),
        }
    }

    /// The lines for one message from the server. Edits are shown by the
    /// caller, which holds the buffers (see [`edit_proposal`]).
    pub fn show(&mut self, message: &Value) -> Vec<String> {
        let o = self.out;
        let params = &message["params"];
        match message["method"].as_str().unwrap_or_default() {
            "$/progress" => {
                let value = &params["value"];
                let text = str_of(&value["message"]);
                let line = match value["kind"].as_str() {
                    Some("begin") => {
                        format!("⟳ {} · {text}", str_of(&value["title"]))
                    }
                    Some("report") if text.is_empty() || text == self.last_progress => {
                        return Vec::new();
                    }
                    Some("report") => format!("⟳ {text}"),
                    Some("end") => format!("■ {text}"),
                    _ => return Vec::new(),
                };
                self.last_progress = text.to_owned();
                vec![o.paint(Style::Cyan, &line)]
            }
            "rein/taskStatus" => {
                let state = str_of(&params["state"]);
                if state == self.last_state || is_final_state(state) {
                    // The final status is the summary's business.
                    return Vec::new();
                }
                let waiting = state_of(params) == Some(TaskState::WaitingUser);
                if waiting && !waits_for_answer(params) {
                    // Answered at once: the edit or the approval is shown.
                    return Vec::new();
                }
                self.last_state = state.to_owned();
                let mut line = format!("· task {state}");
                if waiting && let Some(reason) = params["reason"].as_str() {
                    line.push_str(&format!(": {reason}"));
                }
                vec![o.paint(Style::Dim, &line)]
            }
            "window/showMessageRequest" => {
                let actions: Vec<&str> = params["actions"]
                    .as_array()
                    .map(|a| a.iter().map(|a| str_of(&a["title"])).collect())
                    .unwrap_or_default();
                let answer = match &self.choice {
                    Some(choice) => format!("→ {choice} (the demo approves every command)"),
                    None => "→ dismissed".to_owned(),
                };
                vec![
                    o.paint(Style::Yellow, &format!("? {}", str_of(&params["message"]))),
                    format!("    [{}]", actions.join("] [")),
                    o.paint(Style::Green, &format!("    {answer}")),
                ]
            }
            "window/showMessage" => {
                let (mark, style) = match params["type"].as_u64() {
                    Some(1) => ("✘", Style::Red),
                    Some(2) => ("!", Style::Yellow),
                    _ => ("ℹ", Style::Bold),
                };
                vec![o.paint(style, &format!("{mark} {}", str_of(&params["message"])))]
            }
            "rein/saveDocuments" => {
                let files: Vec<String> = params["uris"]
                    .as_array()
                    .map(|u| u.iter().map(|u| file_name(str_of(u))).collect())
                    .unwrap_or_default();
                vec![o.paint(
                    Style::Dim,
                    &format!("· editor saved {} (rein/saveDocuments)", files.join(", ")),
                )]
            }
            "rein/verification" => verification(o, params),
            _ => Vec::new(),
        }
    }
}

fn str_of(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// The last path component of a URI, for short mentions.
fn file_name(uri: &str) -> String {
    uri.rsplit('/').next().unwrap_or(uri).to_owned()
}

/// `rein/verification {passed, detail, evidence}`: the verdict and what it
/// rests on.
pub fn verification(o: Out, params: &Value) -> Vec<String> {
    let passed = params["passed"].as_bool().unwrap_or(false);
    let detail = str_of(&params["detail"]);
    let mut lines = vec![if passed {
        o.paint(Style::Green, &format!("✔ verification passed: {detail}"))
    } else {
        o.paint(Style::Red, &format!("✘ verification failed: {detail}"))
    }];
    for evidence in params["evidence"].as_array().into_iter().flatten() {
        lines.push(format!("    evidence  {}", str_of(&evidence["check"])));
        lines.push(format!("      command   {}", str_of(&evidence["command"])));
        let exit = match evidence["exitCode"].as_i64() {
            Some(code) => format!("exit code {code}"),
            None => "no exit code (killed or timed out)".to_owned(),
        };
        let ms = evidence["durationMs"].as_u64().unwrap_or(0);
        lines.push(format!("      result    {exit} in {}", duration(ms)));
        let log = &evidence["logPath"];
        if let Some(log) = log.as_str().filter(|l| !l.is_empty()) {
            lines.push(format!("      log       {log}"));
        }
        for file in evidence["files"].as_array().into_iter().flatten() {
            let path = str_of(&file["path"]);
            lines.push(format!(
                "      file      {path} @ {}",
                short_hash(str_of(&file["contentHash"]))
            ));
        }
        for failure in evidence["failures"].as_array().into_iter().flatten() {
            lines.push(format!("      failing   {}", str_of(failure)));
        }
    }
    lines
}

fn duration(ms: u64) -> String {
    if ms >= 10_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{ms} ms")
    }
}

/// The first 12 hex digits of a content hash: plenty to tell versions
/// apart by eye.
pub fn short_hash(hash: &str) -> String {
    match hash.get(..12) {
        Some(head) if hash.len() > 12 => format!("{head}…"),
        _ => hash.to_owned(),
    }
}

/// One file of a proposed edit, with its text before and after.
pub struct FileChange {
    pub path: String,
    pub before: String,
    pub after: String,
    pub created: bool,
}

/// A `workspace/applyEdit` as the editor shows it: the file, the change
/// annotation's label and description, and the change as a unified diff.
pub fn edit_proposal(o: Out, params: &Value, files: &[FileChange]) -> Vec<String> {
    let edit = &params["edit"];
    let annotations = &edit["changeAnnotations"];
    let mut notes: Vec<(&str, &str)> = Vec::new();
    if let Some(map) = annotations.as_object() {
        for note in map.values() {
            let pair = (str_of(&note["label"]), str_of(&note["description"]));
            if !notes.contains(&pair) {
                notes.push(pair);
            }
        }
    }
    let names: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let mut lines = vec![o.paint(
        Style::Bold,
        &format!(
            "✎ workspace/applyEdit: Rein proposes a change to {}",
            names.join(", ")
        ),
    )];
    if notes.is_empty()
        && let Some(label) = params["label"].as_str()
    {
        notes.push((label, ""));
    }
    for (label, description) in &notes {
        if !label.is_empty() {
            lines.push(format!("    label        {label}"));
        }
        for (n, text) in description
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
        {
            let key = if n == 0 { "description" } else { "" };
            lines.push(format!("    {key:<12} {text}"));
        }
    }
    for file in files {
        if file.created {
            lines.push(format!("    (new file {})", file.path));
        }
        lines.extend(diff(o, &file.path, &file.before, &file.after));
    }
    lines
}

/// A unified diff, indented, with the usual colours.
pub fn diff(o: Out, path: &str, before: &str, after: &str) -> Vec<String> {
    let diff = TextDiff::from_lines(before, after);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    text.lines()
        .map(|line| {
            let style = if line.starts_with("+++") || line.starts_with("---") {
                Style::Bold
            } else if line.starts_with("@@") {
                Style::Cyan
            } else if line.starts_with('+') {
                Style::Green
            } else if line.starts_with('-') {
                Style::Red
            } else {
                return format!("    {line}");
            };
            format!("    {}", o.paint(style, line))
        })
        .collect()
}

/// The last `n` lines of a log, for when the server died.
pub fn tail(text: &str, n: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("    | {l}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn show(viewer: &mut Viewer, method: &str, params: Value) -> Vec<String> {
        viewer.show(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    #[test]
    fn progress_becomes_status_lines_without_repeats() {
        let mut v = Viewer::new(Out::plain(), Some("Allow once".into()));
        let begin = json!({"token": "rein/t", "value": {"kind": "begin", "title": "Rein", "message": "Fix the test"}});
        assert_eq!(show(&mut v, "$/progress", begin), ["⟳ Rein · Fix the test"]);
        let report = json!({"token": "rein/t", "value": {"kind": "report", "message": "turn 3/20 · running tests · 12.4k tok · $0.00"}});
        assert_eq!(
            show(&mut v, "$/progress", report.clone()),
            ["⟳ turn 3/20 · running tests · 12.4k tok · $0.00"]
        );
        assert!(show(&mut v, "$/progress", report).is_empty());
        let end = json!({"token": "rein/t", "value": {"kind": "end", "message": "fixed"}});
        assert_eq!(show(&mut v, "$/progress", end), ["■ fixed"]);
    }

    #[test]
    fn state_changes_are_shown_once_and_the_final_one_is_left_to_the_summary() {
        let mut v = Viewer::new(Out::plain(), None);
        let status =
            |state: &str| json!({"taskId": "t", "state": state, "turn": 1, "maxTurns": 20});
        assert_eq!(
            show(&mut v, "rein/taskStatus", status("running")),
            ["· task running"]
        );
        assert!(show(&mut v, "rein/taskStatus", status("running")).is_empty());
        // A review the demo's editor gives at once is not news.
        let mut review = status("waiting_user");
        review["waitingFor"] = json!({"kind": "review", "detail": "cart.py"});
        assert!(!waits_for_answer(&review));
        assert!(show(&mut v, "rein/taskStatus", review).is_empty());
        assert!(show(&mut v, "rein/taskStatus", status("running")).is_empty());
        let mut question = status("waiting_user");
        question["reason"] = json!("Which total?");
        assert!(waits_for_answer(&question));
        assert_eq!(
            show(&mut v, "rein/taskStatus", question),
            ["· task waiting_user: Which total?"]
        );
        assert!(show(&mut v, "rein/taskStatus", status("succeeded")).is_empty());
    }

    #[test]
    fn approvals_show_the_question_and_the_answer() {
        let mut v = Viewer::new(Out::plain(), Some("Allow once".into()));
        let lines = show(
            &mut v,
            "window/showMessageRequest",
            json!({"type": 2, "message": "Rein wants to run `make`", "actions": [{"title": "Allow once"}, {"title": "Deny"}]}),
        );
        assert_eq!(
            lines,
            [
                "? Rein wants to run `make`",
                "    [Allow once] [Deny]",
                "    → Allow once (the demo approves every command)"
            ]
        );
    }

    #[test]
    fn verification_shows_the_evidence_with_short_hashes() {
        let params = json!({
            "taskId": "t", "passed": true, "detail": "the target test passes",
            "evidence": [{
                "check": "target test", "command": "python3 -m unittest tests.test_cart",
                "exitCode": 0, "durationMs": 84,
                "files": [{"path": "cart.py", "contentHash": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}],
                "logPath": ".rein/artifacts/t/verify-1.log", "failures": []
            }]
        });
        assert_eq!(
            verification(Out::plain(), &params),
            [
                "✔ verification passed: the target test passes",
                "    evidence  target test",
                "      command   python3 -m unittest tests.test_cart",
                "      result    exit code 0 in 84 ms",
                "      log       .rein/artifacts/t/verify-1.log",
                "      file      cart.py @ 0123456789ab…",
            ]
        );
    }

    #[test]
    fn an_edit_is_a_labelled_unified_diff() {
        let params = json!({"label": "edit", "edit": {
            "documentChanges": [],
            "changeAnnotations": {"rein-1": {"label": "Edit cart.py", "description": "Sum price × qty", "needsConfirmation": true}}
        }});
        let files = [FileChange {
            path: "cart.py".into(),
            before: "a\nb\nc\n".into(),
            after: "a\nB\nc\n".into(),
            created: false,
        }];
        assert_eq!(
            edit_proposal(Out::plain(), &params, &files),
            [
                "✎ workspace/applyEdit: Rein proposes a change to cart.py",
                "    label        Edit cart.py",
                "    description  Sum price × qty",
                "    --- a/cart.py",
                "    +++ b/cart.py",
                "    @@ -1,3 +1,3 @@",
                "     a",
                "    -b",
                "    +B",
                "     c",
            ]
        );
    }

    #[test]
    fn colour_is_only_added_when_asked() {
        let o = Out { color: true };
        assert_eq!(o.paint(Style::Green, "ok"), "\x1b[32mok\x1b[0m");
        assert_eq!(Out::plain().paint(Style::Green, "ok"), "ok");
        assert_eq!(tail("1\n2\n3\n", 2), ["    | 2", "    | 3"]);
        assert_eq!(short_hash("abc"), "abc");
    }
}
