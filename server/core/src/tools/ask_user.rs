//! `ask_user`: a question the task waits on; no answer stops the task,
//! waiting for one.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::ToolOutput;
use super::call::Call;
use super::registry::{Described, Effect, OnCrash, ToolKind, TypedTool};
use crate::context::history::ResultMeta;
use crate::permissions::{Action, Subject};
use crate::ports::TaskEvent;
use crate::task::TaskState;

pub struct AskUser;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The question, with the options if there are any.
    #[schemars(length(min = 1))]
    question: String,
}

/// The permission action of asking the user.
pub fn action() -> Action<'static> {
    Action {
        tool: AskUser::NAME,
        subject: Subject::Question,
    }
}

#[async_trait]
impl TypedTool for AskUser {
    type Input = Input;
    const NAME: &'static str = "ask_user";
    const DESCRIPTION: &'static str = "Ask the user a question when you cannot go on without their decision or knowledge (e.g. which of two behaviours is intended). The task waits for the answer, which comes back as this call's result. Do not ask for permission to edit or run commands: those are approved separately.";
    // It changes nothing, but it waits on a person: never batched with
    // other calls.
    const EFFECT: Effect = Effect::SideEffects;
    const KIND: Option<ToolKind> = Some(ToolKind::Ask);

    /// An interrupted question is simply asked again.
    fn on_crash(&self) -> OnCrash {
        OnCrash::NotRun
    }

    fn describe(input: &Input) -> Described {
        let question = input.question.trim();
        let first = question.lines().next().unwrap_or_default();
        let mut detail: String = first.chars().take(160).collect();
        if detail.len() < question.len() {
            detail.push_str(" …");
        }
        Described {
            title: "asking you a question".into(),
            detail,
        }
    }

    async fn run(&self, input: Input, call: &Call<'_, '_>) -> Result<ToolOutput, String> {
        let cx = call.cx();
        call.permit(&action()).await?;
        call.event(TaskEvent::Question {
            call_id: call.id().to_owned(),
            question: input.question.clone(),
        });
        call.status(TaskState::WaitingUser, Some(input.question.clone()));
        Ok(
            match cx.approver.ask_user(&cx.task.id, &input.question).await {
                Some(answer) => {
                    call.status(TaskState::Running, None);
                    call.event(TaskEvent::Answer {
                        call_id: call.id().to_owned(),
                        answer: answer.clone(),
                    });
                    ToolOutput::ok(format!("The user answered: {answer}"), ResultMeta::Plain)
                }
                None => ToolOutput::error(format!(
                    "No answer yet: the task is waiting for the user to answer \"{}\".",
                    input.question
                ))
                .unanswered(super::Waiting {
                    cause: rein_protocol::StopCause::WaitingForUser,
                    reason: format!("waiting for the user's answer to: {}", input.question),
                }),
            },
        )
    }
}
