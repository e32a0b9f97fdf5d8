//! What a running tool may use: its context, and the checks every call
//! passes through (paths resolved inside the workspace, the permission
//! gate with the user's approval where the policy asks, events). A tool
//! never decides policy itself: it names its [`Action`] and asks.

use std::sync::Mutex;

use crate::exec::SandboxMode;
use crate::paths;
use crate::permissions::{Action, Decision, Subject, TaskApprovals};
use crate::ports::{ApprovalDecision, CallShown, CommandApproval, ProgressSink, TaskEvent};
use crate::task::TaskState;

use super::ToolCx;

/// The text of a result for a call that never ran: the task was
/// cancelled first.
pub const CANCELLED: &str = "cancelled: the task was cancelled before this call ran.";

/// What [`Call::save_artifact`] writes.
pub enum Artifact<'b> {
    Text(&'b str),
    Bytes(&'b [u8]),
}

/// One call in progress (the dispatcher makes one per call).
pub struct Call<'d, 'a> {
    pub(crate) id: &'d str,
    pub(crate) cx: &'d ToolCx<'a>,
    pub(crate) progress: &'d dyn ProgressSink,
    /// The user's "allow for this task" answers.
    pub(crate) approvals: &'d Mutex<TaskApprovals>,
    /// Reports a state passed through inside a call (`waiting_user`).
    pub(crate) status: &'d (dyn Fn(TaskState, Option<String>) + Sync),
    pub(crate) allow_test_edits: bool,
    /// What the model never sees (a tool may need to know that it did not).
    pub(crate) redactor: &'d rein_models::Redactor,
}

impl<'a> Call<'_, 'a> {
    /// The model's id for this call.
    pub fn id(&self) -> &str {
        self.id
    }

    pub fn cx(&self) -> &ToolCx<'a> {
        self.cx
    }

    /// A path as the model wrote it, resolved inside the workspace
    /// (`""` is the root); `Err` says why it cannot be used.
    pub fn resolve(&self, input: &str) -> Result<String, String> {
        let input = if input.is_empty() { "." } else { input };
        paths::resolve(self.cx.workspace.root(), input).map_err(|e| e.to_string())
    }

    /// Checks the policy for `action`, asking the user where it says so
    /// (except for proposed edits, which the editor asks about). `Ok` with
    /// the decision that let the call through; `Err` with the result the
    /// model gets when it may not run.
    pub async fn permit(&self, action: &Action<'_>) -> Result<Decision, String> {
        self.permit_run(action, None, false, None, None).await
    }

    /// [`Self::permit`] for a call whose arguments the user should see when
    /// asked (an MCP tool's: nothing else says what it will do).
    pub async fn permit_call(
        &self,
        action: &Action<'_>,
        shown: CallShown,
    ) -> Result<Decision, String> {
        self.permit_run(action, None, false, None, Some(shown))
            .await
    }

    /// [`Self::permit`] for an action that runs a process: `shown`, the
    /// command line the user is asked about when it is not the action's
    /// own text; `network`, whether it asks for the network; `mode`, the
    /// sandbox a `[[sandbox.rules]]` entry gives it.
    pub async fn permit_process(
        &self,
        action: &Action<'_>,
        shown: Option<String>,
        network: bool,
        mode: Option<SandboxMode>,
    ) -> Result<Decision, String> {
        self.permit_run(action, shown, network, mode, None).await
    }

    /// Saves `content` among the task's artifacts as `name` (one path
    /// component) and returns the workspace-relative path the model can
    /// read; text is redacted on the way.
    pub async fn save_artifact(&self, name: &str, content: Artifact<'_>) -> Result<String, String> {
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return Err(format!("not an artifact name: {name:?}"));
        }
        let rel = format!("{}/{name}", self.cx.artifacts.rel);
        match content {
            Artifact::Text(text) => self.cx.artifact_store.write(&rel, text).await?,
            Artifact::Bytes(bytes) => self.cx.artifact_store.write_bytes(&rel, bytes).await?,
        }
        Ok(rel)
    }

    pub fn event(&self, event: TaskEvent) {
        self.progress.event(&self.cx.task.id, &event);
    }

    /// Reports a state the task passes through inside this call
    /// (`waiting_user` while a question waits).
    pub fn status(&self, state: TaskState, reason: Option<String>) {
        (self.status)(state, reason);
    }

    /// Whether edits may change a fix-test task's target test.
    /// Whether the model saw `text` as it is (nothing in it is redacted).
    pub fn shown_as_is(&self, text: &str) -> bool {
        *self.redactor.redact(text) == *text
    }

    pub fn allow_test_edits(&self) -> bool {
        self.allow_test_edits
    }

    /// Checks the policy, and asks the user when it says so (except for a
    /// proposed edit, which the editor asks about): with the command line
    /// the user is asked about when it is not the action's own text (the
    /// tests' command), whether it asks for the network, and the sandbox
    /// it would run in ([`crate::permissions::sandbox`]). `Ok` with the
    /// decision that let the call through; `Err` with the result to return
    /// when it may not run.
    async fn permit_run(
        &self,
        action: &Action<'_>,
        command: Option<String>,
        network: bool,
        sandbox_mode: Option<SandboxMode>,
        call: Option<CallShown>,
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
            call_id: self.id.to_owned(),
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
                    text: crate::ports::APPROVAL_WAIT.into(),
                });
                let request = CommandApproval {
                    task: self.cx.task.id.clone(),
                    tool: tool.to_owned(),
                    command: command.clone(),
                    cwd: self.cx.workspace.root().to_path_buf(),
                    rule: verdict.rule.clone(),
                    network,
                    sandbox_mode,
                    call,
                };
                let decision = self.cx.approver.approve_command(&request).await;
                self.event(TaskEvent::Approval {
                    call_id: self.id.to_owned(),
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
                    // The user stopped the task while it asked (or
                    // just after allowing): not the user's no to this
                    // command, which never ran.
                    ApprovalDecision::Deny if self.cx.cancel.is_cancelled() => {
                        Err(CANCELLED.to_owned())
                    }
                    ApprovalDecision::Deny => Err(format!(
                        "The user did not allow running `{command}`. Do not retry it; find another way or explain what you need."
                    )),
                }
            }
        }
    }
}
