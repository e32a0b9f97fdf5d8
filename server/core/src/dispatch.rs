//! One tool call, from the model's request to the result it gets back:
//! arguments validated → paths resolved → loop guard → permission
//! (deny > ask > allow; a human asked where the policy says so) → the tool
//! → result notes. Every step that says no still produces a result the
//! model can act on; nothing here ever leaves a call unanswered. Every
//! result is redacted before the model (or the task's history) sees it.

use std::borrow::Cow;
use std::sync::Mutex;

use rein_models::{BadToolCall, REDACTED, Redactor, ToolCall};
use serde::Deserialize;
use serde_json::Value;

use crate::context::history::ResultMeta;
use crate::edit;
use crate::guard::{Before, Fingerprint, LoopGuard};
use crate::paths;
use crate::permissions::{Action, Decision, TaskApprovals};
use crate::ports::{ApprovalDecision, CommandApproval, ProgressSink, TaskEvent};
use crate::task::{TaskKind, TaskState};
use crate::testfind;
use crate::testtarget::TestTarget;
use crate::tools::schema::validate;
use crate::tools::spec::{self, ToolName};
use crate::tools::{self, ToolCx, ToolOutput};

/// What the dispatcher needs beyond the tools' context.
pub struct Dispatcher<'a> {
    pub cx: ToolCx<'a>,
    pub progress: &'a dyn ProgressSink,
    /// What every result passes through.
    pub redactor: &'a Redactor,
    pub approvals: &'a Mutex<TaskApprovals>,
    pub guard: &'a Mutex<LoopGuard>,
    /// Whether edits may change the target test itself (fix-test).
    pub allow_test_edits: bool,
    /// Reports a state passed through inside a call (`waiting_user`).
    pub status: &'a (dyn Fn(TaskState, Option<String>) + Sync),
}

/// A dispatched call's result.
#[derive(Debug)]
pub struct Dispatched {
    pub output: ToolOutput,
    /// A note to attach (the loop guard's), if any.
    pub notice: Option<&'static str>,
    /// The result told the model something it had not seen (a refusal by
    /// the loop guard never does).
    pub new_information: bool,
    /// An `ask_user` question that got no answer: the task must wait.
    pub waiting_for: Option<String>,
}

#[derive(Deserialize)]
struct PathArgs {
    #[serde(default)]
    path: String,
    start_line: Option<usize>,
    end_line: Option<usize>,
    glob: Option<String>,
    pattern: Option<String>,
}

#[derive(Deserialize)]
struct EditCall {
    path: String,
    old_text: String,
    new_text: String,
    #[serde(default)]
    replace_all: bool,
}

#[derive(Deserialize)]
struct CreateArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
struct TestArgs {
    target: Option<String>,
}

#[derive(Deserialize)]
struct CommandArgs {
    command: String,
    timeout_s: Option<u64>,
    #[serde(default)]
    network: bool,
}

#[derive(Deserialize)]
struct AskArgs {
    question: String,
}

impl Dispatcher<'_> {
    fn event(&self, event: TaskEvent) {
        self.progress.event(&self.cx.task.id, &event);
    }

    /// Runs one call; its result holds no secret.
    pub async fn dispatch(&self, call: &Result<ToolCall, BadToolCall>) -> Dispatched {
        let mut dispatched = self.dispatch_unredacted(call).await;
        redact_output(self.redactor, &mut dispatched.output);
        dispatched
    }

    async fn dispatch_unredacted(&self, call: &Result<ToolCall, BadToolCall>) -> Dispatched {
        let call = match call {
            Ok(call) => call,
            Err(bad) => return plain(ToolOutput::error(bad.message_for_model())),
        };
        let Some(tool) = ToolName::parse(&call.name) else {
            return plain(ToolOutput::error(format!(
                "There is no tool named {:?}. The tools are: {}.",
                call.name,
                spec::names().join(", ")
            )));
        };
        let problems = validate(&call.arguments, &tool.spec().input_schema);
        if !problems.is_empty() {
            return plain(ToolOutput::error(format!(
                "Invalid arguments for {}: {}. Call it again with arguments that match its schema.",
                tool.as_str(),
                problems.join("; ")
            )));
        }
        if let Before::Refuse(message) = self.guard_before(tool, &call.arguments) {
            self.event(TaskEvent::Guard {
                call_id: Some(call.id.clone()),
                guard: "repeat".into(),
                message: message.clone(),
            });
            return Dispatched {
                output: ToolOutput::error(message),
                notice: None,
                new_information: false,
                waiting_for: None,
            };
        }
        let output = self.run(tool, call).await.unwrap_or_else(ToolOutput::error);
        if output.changed_project
            && let Ok(mut guard) = self.guard.lock()
        {
            guard.project_changed();
        }
        let fingerprint = Fingerprint::of(tool, &output);
        let (new_information, notice) = match self.guard.lock() {
            Ok(mut guard) => {
                let new = guard.is_new(tool.as_str(), fingerprint);
                (
                    new,
                    guard.after(tool.as_str(), &call.arguments, fingerprint),
                )
            }
            Err(_) => (true, None),
        };
        if let Some(message) = notice {
            self.event(TaskEvent::Guard {
                call_id: Some(call.id.clone()),
                guard: "repeat".into(),
                message: message.into(),
            });
        }
        let new_information = new_information || output.changed_project;
        let waiting_for = output.unanswered.clone();
        Dispatched {
            output,
            notice,
            new_information,
            waiting_for,
        }
    }

    fn guard_before(&self, tool: ToolName, arguments: &Value) -> Before {
        self.guard
            .lock()
            .map(|mut g| g.before(tool.as_str(), arguments))
            .unwrap_or(Before::Run)
    }

    /// `Err` carries an early "no": the error result's text.
    async fn run(&self, tool: ToolName, call: &ToolCall) -> Result<ToolOutput, String> {
        let cx = &self.cx;
        let args = call.arguments.clone();
        let parse_error =
            |e: serde_json::Error| format!("Invalid arguments for {}: {e}", tool.as_str());
        Ok(match tool {
            ToolName::ReadFile | ToolName::ListFiles | ToolName::Search => {
                let a: PathArgs = serde_json::from_value(args).map_err(parse_error)?;
                let path = self.resolve(&a.path)?;
                let action = match tool {
                    ToolName::ReadFile => Action::ReadFile { path: &path },
                    ToolName::ListFiles => Action::ListFiles { path: &path },
                    _ => Action::Search { path: &path },
                };
                self.permit(&call.id, &action).await?;
                match tool {
                    ToolName::ReadFile => {
                        tools::read_file(cx, &path, a.start_line, a.end_line).await
                    }
                    ToolName::ListFiles => tools::list_files(cx, &path, a.glob.as_deref()).await,
                    _ => {
                        tools::search(
                            cx,
                            a.pattern.as_deref().unwrap_or_default(),
                            &path,
                            a.glob.as_deref(),
                        )
                        .await
                    }
                }
            }
            ToolName::EditFile => {
                let a: EditCall = serde_json::from_value(args).map_err(parse_error)?;
                let path = self.resolve(&a.path)?;
                self.refuse_hidden_secret(&path, &a.old_text).await?;
                // A built-in deny, so before the rules (deny > ask > allow).
                self.protect_test(&call.id, &path, &a).await?;
                let confirm = self
                    .permit(&call.id, &Action::EditFile { path: &path })
                    .await?
                    == Decision::Ask;
                let edit = tools::EditArgs {
                    path: &path,
                    old_text: &a.old_text,
                    new_text: &a.new_text,
                    replace_all: a.replace_all,
                };
                tools::edit_file(cx, edit, confirm).await
            }
            ToolName::CreateFile => {
                let a: CreateArgs = serde_json::from_value(args).map_err(parse_error)?;
                let path = self.resolve(&a.path)?;
                let confirm = self
                    .permit(&call.id, &Action::CreateFile { path: &path })
                    .await?
                    == Decision::Ask;
                tools::create_file(cx, &path, &a.content, confirm).await
            }
            ToolName::RunTests => {
                let a: TestArgs = serde_json::from_value(args).map_err(parse_error)?;
                // Checked once, here: what the rules see, what the user
                // approves and what the runner gets are the same target.
                let target = match a.target.as_deref() {
                    Some(raw) => TestTarget::check(raw, cx.workspace)
                        .await
                        .map_err(|e| e.to_string())?,
                    None => None,
                };
                let shown = target.as_ref().map(ToString::to_string);
                let command = cx.test_command.map(|t| t.for_target(target.as_ref()));
                self.permit_run(
                    &call.id,
                    &Action::RunTests {
                        target: shown.as_deref(),
                    },
                    command,
                    false,
                    None,
                )
                .await?;
                self.event(TaskEvent::Activity {
                    text: "running tests".into(),
                });
                tools::run_tests(cx, target.as_ref()).await
            }
            ToolName::RunCommand => {
                let a: CommandArgs = serde_json::from_value(args).map_err(parse_error)?;
                let mode = cx.policy.sandbox_mode_for(&a.command);
                self.permit_run(
                    &call.id,
                    &Action::RunCommand {
                        command: &a.command,
                    },
                    None,
                    a.network,
                    mode,
                )
                .await?;
                self.event(TaskEvent::Activity {
                    text: format!("running `{}`", short(&a.command)),
                });
                tools::run_command(cx, &a.command, a.timeout_s, a.network, mode).await
            }
            ToolName::AskUser => {
                let a: AskArgs = serde_json::from_value(args).map_err(parse_error)?;
                self.permit(&call.id, &Action::AskUser).await?;
                self.event(TaskEvent::Question {
                    call_id: call.id.clone(),
                    question: a.question.clone(),
                });
                (self.status)(TaskState::WaitingUser, Some(a.question.clone()));
                match cx.approver.ask_user(&cx.task.id, &a.question).await {
                    Some(answer) => {
                        (self.status)(TaskState::Running, None);
                        self.event(TaskEvent::Answer {
                            call_id: call.id.clone(),
                            answer: answer.clone(),
                        });
                        ToolOutput::ok(
                            format!("The user answered: {answer}"),
                            crate::context::history::ResultMeta::Plain,
                        )
                    }
                    None => ToolOutput::error(format!(
                        "No answer yet: the task is waiting for the user to answer \"{}\".",
                        a.question
                    ))
                    .unanswered(&a.question),
                }
            }
        })
    }

    fn resolve(&self, input: &str) -> Result<String, String> {
        let input = if input.is_empty() { "." } else { input };
        paths::resolve(self.cx.workspace.root(), input).map_err(|e| e.to_string())
    }

    /// Checks the policy (and asks the user when it says so for commands).
    /// `Ok` with the decision that let the call through; `Err` with the
    /// result to return when it may not run.
    async fn permit(&self, call_id: &str, action: &Action<'_>) -> Result<Decision, String> {
        self.permit_run(call_id, action, None, false, None).await
    }

    /// [`Self::permit`] for a command or a test run: with the command line
    /// the user is asked about when it is not the action's own text (the
    /// tests' command), whether it asks for the network, and the sandbox
    /// it would run in ([`permissions::sandbox`]).
    async fn permit_run(
        &self,
        call_id: &str,
        action: &Action<'_>,
        command: Option<String>,
        network: bool,
        sandbox_mode: Option<crate::sandbox_config::SandboxMode>,
    ) -> Result<Decision, String> {
        let tool = action.tool();
        // The task's own artifacts (spilled outputs, logs) are readable
        // even though `.rein/` is otherwise off limits.
        if let Action::ReadFile { path } = action
            && path.starts_with(&format!("{}/", self.cx.artifacts.rel))
        {
            return Ok(Decision::Allow);
        }
        let verdict = crate::permissions::sandbox::with_sandbox(
            self.cx.policy.check(action),
            action,
            network,
            sandbox_mode,
            &self.cx.exec.confinement(),
            self.cx.policy.sandbox_auto_approve(),
        );
        self.event(TaskEvent::Permission {
            call_id: call_id.to_owned(),
            tool: tool.to_owned(),
            decision: verdict.decision,
            rule: verdict.rule.clone(),
        });
        match verdict.decision {
            Decision::Allow => Ok(Decision::Allow),
            Decision::Deny => Err(format!(
                "Denied by rule {}: {}",
                verdict.rule, verdict.reason
            )),
            // Edits are approved in the editor when they are proposed.
            Decision::Ask
                if matches!(action, Action::EditFile { .. } | Action::CreateFile { .. }) =>
            {
                Ok(Decision::Ask)
            }
            Decision::Ask => {
                if self
                    .approvals
                    .lock()
                    .map(|a| a.covers(action))
                    .unwrap_or(false)
                {
                    return Ok(Decision::Allow);
                }
                let command = command.unwrap_or_else(|| match action {
                    Action::RunCommand { command } => (*command).to_owned(),
                    Action::RunTests { .. } => "the tests".to_owned(),
                    other => other.tool().to_owned(),
                });
                self.event(TaskEvent::Activity {
                    text: "waiting for approval".into(),
                });
                let request = CommandApproval {
                    task: self.cx.task.id.clone(),
                    tool,
                    command: command.clone(),
                    cwd: self.cx.workspace.root().to_path_buf(),
                    rule: verdict.rule.clone(),
                    network,
                };
                let decision = self.cx.approver.approve_command(&request).await;
                self.event(TaskEvent::Approval {
                    call_id: call_id.to_owned(),
                    tool: tool.to_owned(),
                    decision,
                });
                match decision {
                    ApprovalDecision::AllowOnce => Ok(Decision::Allow),
                    ApprovalDecision::AllowForTask => {
                        if let Ok(mut approvals) = self.approvals.lock() {
                            approvals.remember(action);
                        }
                        Ok(Decision::Allow)
                    }
                    ApprovalDecision::Deny => Err(format!(
                        "The user did not allow running `{command}`. Do not retry it; find another way or explain what you need."
                    )),
                }
            }
        }
    }

    /// The model saw [`REDACTED`] where the file holds a secret: an
    /// `old_text` copied from that line cannot match, and "not found"
    /// would only make it try again. (A file may hold the marker itself:
    /// then the edit goes on.)
    async fn refuse_hidden_secret(&self, path: &str, old_text: &str) -> Result<(), String> {
        if !old_text.contains(REDACTED) {
            return Ok(());
        }
        match self.cx.workspace.read_file(path).await {
            Ok(file) if !file.text.contains(old_text) => Err(format!(
                "old_text contains {REDACTED}, which stands for a secret Rein hides from you; pick old_text that does not include that line (and do not write {REDACTED} into the file)."
            )),
            _ => Ok(()),
        }
    }

    /// In a fix-test task, an edit may not change the target test itself —
    /// its assertions, but also its inputs, decorators or name: a test made
    /// to pass by weakening it (`qty=3` → `qty=30`, `@skip`) is not fixed.
    /// The rest of the file (imports, helpers) stays editable.
    async fn protect_test(&self, call_id: &str, path: &str, edit: &EditCall) -> Result<(), String> {
        let TaskKind::FixTest {
            path: test_path,
            name,
        } = &self.cx.task.kind
        else {
            return Ok(());
        };
        if self.allow_test_edits || path != test_path {
            return Ok(());
        }
        let Some(lang) = testfind::lang_for_path(path) else {
            return Ok(());
        };
        let Ok(current) = self.cx.workspace.read_file(path).await else {
            return Ok(());
        };
        // An edit that does not apply is reported by the workspace itself.
        let Ok(applied) = edit::apply(
            &current.text,
            &edit.old_text,
            &edit.new_text,
            edit.replace_all,
        ) else {
            return Ok(());
        };
        let before = testfind::test_lines(&current.text, lang, name);
        if before.is_some() && before != testfind::test_lines(&applied.text, lang, name) {
            let message = format!(
                "Denied by rule built-in deny: the target test: this edit changes, removes or renames `{name}` in {path} (its assertions, inputs or decorators). The task is to make the test pass as written: fix the code under test. If the test itself is wrong, say so and stop: the user can allow test edits."
            );
            self.event(TaskEvent::Permission {
                call_id: call_id.to_owned(),
                tool: "edit_file".into(),
                decision: Decision::Deny,
                rule: TEST_RULE.into(),
            });
            return Err(message);
        }
        Ok(())
    }
}

/// Redacts what the model gets of a result: its text, and what the
/// context keeps of a command once newer runs exist (summary, tail,
/// failing tests), whichever `Exec` produced it.
fn redact_output(redactor: &Redactor, output: &mut ToolOutput) {
    redact_in_place(redactor, &mut output.content);
    if let ResultMeta::Command {
        command,
        result,
        summary,
        ..
    } = &mut output.meta
    {
        redact_in_place(redactor, command);
        redact_in_place(redactor, summary);
        for line in result.tail.iter_mut().chain(&mut result.failures) {
            redact_in_place(redactor, line);
        }
    }
}

fn redact_in_place(redactor: &Redactor, text: &mut String) {
    if let Cow::Owned(clean) = redactor.redact(text) {
        *text = clean;
    }
}

/// The built-in rule that keeps a fix-test task off its own test.
const TEST_RULE: &str = "built-in deny: the target test";

/// An early answer (bad call, bad arguments): worth telling the model,
/// but not progress.
fn plain(output: ToolOutput) -> Dispatched {
    Dispatched {
        output,
        notice: None,
        new_information: false,
        waiting_for: None,
    }
}

fn short(command: &str) -> String {
    let first = command.lines().next().unwrap_or_default();
    if first.chars().count() > 60 {
        format!("{}…", first.chars().take(60).collect::<String>())
    } else {
        first.to_owned()
    }
}
