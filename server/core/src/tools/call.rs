//! What a running tool may use of the dispatcher: its context, and the
//! checks every call passes through (paths, permissions, events). A tool
//! never decides policy itself: it names its [`Action`] and asks.

use crate::dispatch::Dispatcher;
use crate::permissions::{Action, Decision};
use crate::ports::TaskEvent;
use crate::sandbox_config::SandboxMode;
use crate::task::TaskState;

use super::ToolCx;

/// One call in progress.
pub struct Call<'d, 'a> {
    pub(crate) id: &'d str,
    pub(crate) dispatcher: &'d Dispatcher<'a>,
}

impl<'a> Call<'_, 'a> {
    /// The model's id for this call.
    pub fn id(&self) -> &str {
        self.id
    }

    pub fn cx(&self) -> &ToolCx<'a> {
        &self.dispatcher.cx
    }

    /// A path as the model wrote it, resolved inside the workspace
    /// (`""` is the root); `Err` says why it cannot be used.
    pub fn resolve(&self, input: &str) -> Result<String, String> {
        self.dispatcher.resolve(input)
    }

    /// Checks the policy for `action`, asking the user where it says so
    /// (except for proposed edits, which the editor asks about). `Ok` with
    /// the decision that let the call through; `Err` with the result the
    /// model gets when it may not run.
    pub async fn permit(&self, action: &Action<'_>) -> Result<Decision, String> {
        self.dispatcher
            .permit_run(self.id, action, None, false, None)
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
        self.dispatcher
            .permit_run(self.id, action, shown, network, mode)
            .await
    }

    pub fn event(&self, event: TaskEvent) {
        self.dispatcher.event(event);
    }

    /// Reports a state the task passes through inside this call
    /// (`waiting_user` while a question waits).
    pub fn status(&self, state: TaskState, reason: Option<String>) {
        (self.dispatcher.status)(state, reason);
    }

    /// Whether edits may change a fix-test task's target test.
    pub fn allow_test_edits(&self) -> bool {
        self.dispatcher.allow_test_edits
    }
}
