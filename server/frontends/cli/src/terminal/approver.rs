//! The yes/no questions of `rein run`: edits to confirm with their diff
//! ([`TerminalConfirm`]), commands to approve and the model's questions
//! ([`TerminalApprover`]).

use std::sync::Arc;

use async_trait::async_trait;
use rein_core::inert;
use rein_core::os::disk::ConfirmChange;
use rein_core::ports::{ApprovalDecision, Approver, CallShown, CommandApproval};
use rein_core::task::TaskId;

use super::io::Terminal;
use rein_app::format::{paint_diff, unified_diff};

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
        if let Some(call) = &request.call {
            return self.approve_call(request, call).await;
        }
        let t = &self.terminal;
        // On one line, escaped: the command is what is approved, so every
        // character of it must show.
        let command = inert::line(&request.command);
        t.line(&format!(
            "  rein wants to run `{command}` in {} ({})",
            inert::line(&request.cwd.display().to_string()),
            inert::line(&request.why_asked())
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

/// The most of a call's arguments a question shows (the trace has them all).
const ARGUMENTS_SHOWN: usize = 2_000;

impl TerminalApprover {
    /// A tool's call (an MCP tool): its arguments are what is approved.
    async fn approve_call(&self, request: &CommandApproval, call: &CallShown) -> ApprovalDecision {
        let t = &self.terminal;
        let tool = inert::line(&request.command);
        t.line(&format!(
            "  rein wants to call `{tool}` ({})",
            inert::line(&request.why_asked())
        ));
        let arguments = call.arguments.to_string();
        let count = arguments.chars().count();
        let shown = if count > ARGUMENTS_SHOWN {
            let head: String = arguments.chars().take(ARGUMENTS_SHOWN).collect();
            format!("{head} … ({} more characters)", count - ARGUMENTS_SHOWN)
        } else {
            arguments
        };
        t.line(&format!("  with {}", inert::line(&shown)));
        if let Some(warning) = hidden_warning("call", &shown) {
            t.line(&warning);
        }
        let question = format!("Call `{tool}`? [y]es once / [a]ll this task / [N]o ");
        if self.yes {
            t.line(&format!("{question}y (--yes)"));
            return ApprovalDecision::AllowOnce;
        }
        let answer = t.ask(&question).await;
        command_decision(answer.as_deref())
    }
}

fn command_decision(answer: Option<&str>) -> ApprovalDecision {
    match answer.map(|a| a.trim().to_ascii_lowercase()).as_deref() {
        Some("y" | "yes") => ApprovalDecision::AllowOnce,
        Some("a" | "all") => ApprovalDecision::AllowForTask,
        _ => ApprovalDecision::Deny,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::terminal::test_support::terminal;

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
            sandbox_mode: None,
            call: None,
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

    /// An MCP call is asked about with its arguments (that is what runs),
    /// and a tool that says it only reads is not told "tools with effects
    /// ask" (issue 37 C).
    #[tokio::test]
    async fn an_mcp_call_is_asked_about_with_its_arguments() {
        let (t, out) = terminal("y\nn\n");
        let approver = TerminalApprover {
            terminal: t,
            yes: false,
        };
        let request = |declared, arguments: serde_json::Value| CommandApproval {
            task: TaskId("t".into()),
            tool: "mcp__everything__get-sum".into(),
            command: "mcp__everything__get-sum".into(),
            cwd: "/w".into(),
            rule: "default: tools with effects ask".into(),
            network: false,
            sandbox_mode: None,
            call: Some(CallShown {
                arguments,
                declared,
                kind: rein_core::tools::Effect::kind(declared),
            }),
        };
        use rein_core::tools::Effect;
        let sum = request(Effect::ReadOnly, serde_json::json!({"a": 17, "b": 25}));
        assert_eq!(
            approver.approve_command(&sum).await,
            ApprovalDecision::AllowOnce
        );
        let write = request(
            Effect::SideEffects,
            serde_json::json!({"path": "notes.txt", "content": "x\u{1b}[2K"}),
        );
        assert_eq!(
            approver.approve_command(&write).await,
            ApprovalDecision::Deny
        );
        assert_eq!(
            out.text(),
            "  rein wants to call `mcp__everything__get-sum` (default: MCP tools ask, even one that says it only reads (its server's word, which Rein cannot check))\n\
             \x20 with {\"a\":17,\"b\":25}\n\
             Call `mcp__everything__get-sum`? [y]es once / [a]ll this task / [N]o y\n\
             \x20 rein wants to call `mcp__everything__get-sum` (default: tools with effects ask)\n\
             \x20 with {\"path\":\"notes.txt\",\"content\":\"x\\u001b[2K\"}\n\
             Call `mcp__everything__get-sum`? [y]es once / [a]ll this task / [N]o n\n"
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
            sandbox_mode: None,
            call: None,
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
}
