//! One tool call, from the model's request to the result it gets back:
//! the tool looked up in the registry → arguments validated against its
//! schema → loop guard → the tool, which resolves its paths and asks for
//! permission through [`Call`] (deny > ask > allow; a human asked where
//! the policy says so) → result notes. Every step that says no still produces a result the
//! model can act on; nothing here ever leaves a call unanswered. Every
//! result is redacted before the model (or the task's history) sees it.

use std::borrow::Cow;
use std::sync::Mutex;

use rein_models::{BadToolCall, Redactor, ToolCall};
use serde_json::Value;

use crate::context::history::ResultMeta;
use crate::guard::{Before, Fingerprint, LoopGuard};
use crate::paths;
use crate::permissions::{Action, Decision, Subject, TaskApprovals};
use crate::ports::{ApprovalDecision, CommandApproval, ProgressSink, TaskEvent};
use crate::task::TaskState;
use crate::tools::call::Call;
use crate::tools::schema::validate;
use crate::tools::{Registry, ToolCx, ToolOutput};

/// What the dispatcher needs beyond the tools' context.
pub struct Dispatcher<'a> {
    pub cx: ToolCx<'a>,
    /// The tools the model may call.
    pub tools: &'a Registry,
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

impl Dispatcher<'_> {
    pub(crate) fn event(&self, event: TaskEvent) {
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
        let Some(tool) = self.tools.get(&call.name) else {
            return plain(ToolOutput::error(format!(
                "There is no tool named {:?}. The tools are: {}.",
                call.name,
                self.tools.names().join(", ")
            )));
        };
        let problems = validate(&call.arguments, &tool.input_schema());
        if !problems.is_empty() {
            return plain(ToolOutput::error(format!(
                "Invalid arguments for {}: {}. Call it again with arguments that match its schema.",
                tool.name(),
                problems.join("; ")
            )));
        }
        let name = tool.name();
        if let Before::Refuse(message) = self.guard_before(name, &call.arguments) {
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
        let running = Call {
            id: &call.id,
            dispatcher: self,
        };
        let output = tool
            .run(&call.arguments, &running)
            .await
            .unwrap_or_else(ToolOutput::error);
        if output.changed_project
            && let Ok(mut guard) = self.guard.lock()
        {
            guard.project_changed();
        }
        let fingerprint = Fingerprint::of(&output);
        let (new_information, notice) = match self.guard.lock() {
            Ok(mut guard) => {
                let new = guard.is_new(name, fingerprint);
                (new, guard.after(name, &call.arguments, fingerprint))
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

    fn guard_before(&self, tool: &str, arguments: &Value) -> Before {
        self.guard
            .lock()
            .map(|mut g| g.before(tool, arguments))
            .unwrap_or(Before::Run)
    }

    pub(crate) fn resolve(&self, input: &str) -> Result<String, String> {
        let input = if input.is_empty() { "." } else { input };
        paths::resolve(self.cx.workspace.root(), input).map_err(|e| e.to_string())
    }

    /// Checks the policy, and asks the user when it says so (except for a
    /// proposed edit, which the editor asks about): with the command line
    /// the user is asked about when it is not the action's own text (the
    /// tests' command), whether it asks for the network, and the sandbox
    /// it would run in ([`crate::permissions::sandbox`]). `Ok` with the
    /// decision that let the call through; `Err` with the result to return
    /// when it may not run.
    pub(crate) async fn permit_run(
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
        if let Subject::Read { path, .. } = action.subject
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
            Decision::Ask if action.is_proposed_edit() => Ok(Decision::Ask),
            Decision::Ask => {
                if self
                    .approvals
                    .lock()
                    .map(|a| a.covers(action))
                    .unwrap_or(false)
                {
                    return Ok(Decision::Allow);
                }
                let command = command.unwrap_or_else(|| match action.subject {
                    Subject::Command { command } => command.to_owned(),
                    Subject::Tests { .. } => "the tests".to_owned(),
                    _ => action.tool.to_owned(),
                });
                self.event(TaskEvent::Activity {
                    text: "waiting for approval".into(),
                });
                let request = CommandApproval {
                    task: self.cx.task.id.clone(),
                    tool: tool.to_owned(),
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
