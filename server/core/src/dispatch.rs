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
use crate::exec::CommandKind;
use crate::guard::{Before, Fingerprint, LoopGuard};
use crate::permissions::TaskApprovals;
use crate::ports::{ProgressSink, TaskEvent};
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
    /// Something put to the user (an `ask_user` question, a review) got
    /// no answer: the task must wait, for this reason.
    pub waiting_for: Option<crate::tools::Waiting>,
}

impl Dispatcher<'_> {
    fn event(&self, event: TaskEvent) {
        self.progress.event(&self.cx.task.id, &event);
    }

    /// Runs one call; its result holds no secret.
    pub async fn dispatch(&self, call: &Result<ToolCall, BadToolCall>) -> Dispatched {
        let mut dispatched = self.dispatch_unredacted(call).await;
        redact_output(self.redactor, &mut dispatched.output);
        // A test run's failed and passed tests, for the editor's marks.
        if let ResultMeta::Command {
            kind: CommandKind::Test,
            result,
            ..
        } = &dispatched.output.meta
            && let Some(outcomes) = crate::testing::outcomes::of_run(result)
        {
            self.event(outcomes);
        }
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
            cx: &self.cx,
            progress: self.progress,
            approvals: self.approvals,
            status: self.status,
            allow_test_edits: self.allow_test_edits,
            redactor: self.redactor,
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

#[cfg(test)]
mod tests;
