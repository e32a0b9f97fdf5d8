//! `run_command`: a shell command in the sandbox, after the user's
//! approval where the policy asks for it (see `command.rs` for how a run
//! is bounded and reported).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::call::Call;
use super::registry::{Described, Effect, OnCrash, TypedTool};
use super::{ToolOutput, command};
use crate::inert;
use crate::permissions::{Action, RuleTarget, Subject};
use crate::ports::TaskEvent;

pub struct RunCommand;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The shell command (run with sh -c).
    #[schemars(length(min = 1))]
    command: String,
    /// Seconds before the command is killed; at most the configured limit (default 120) and the task's time left.
    #[schemars(range(min = 1, max = 3600))]
    timeout_s: Option<u64>,
    /// true if the command needs the network (installing packages, fetching): the user is asked, and it runs with the network. Otherwise it has loopback (localhost) only.
    #[serde(default)]
    network: bool,
}

/// The permission action of running `command`.
pub fn action(command: &str) -> Action<'_> {
    Action {
        tool: RunCommand::NAME,
        subject: Subject::Command { command },
    }
}

#[async_trait]
impl TypedTool for RunCommand {
    type Input = Input;
    const NAME: &'static str = "run_command";
    const DESCRIPTION: &'static str = "Run a shell command in the project root, e.g. a build or a linter. It runs in Rein's sandbox: it may write only the project and $TMPDIR (not .rein/, .git/hooks or .git/config), cannot read the home directory's secrets, and has loopback (localhost) only unless you set network: true (the user is then asked). The user is asked before most commands run; destructive commands (rm -rf, git push, …) are denied. Your edits are saved to disk first. Returns the exit code, the duration and the last 50 lines of output, with the path of the full log. It is killed at its time limit: timeout_s if you give one, but never more than the configured limit (120 s unless configured) nor the time left in the task's budget; the result says when the limit was not the one you asked for. Prefer run_tests for tests and read_file/search over cat/grep.";
    const EFFECT: Effect = Effect::SideEffects;
    const RULE_TARGET: RuleTarget = RuleTarget::Command;

    fn on_crash(&self) -> OnCrash {
        OnCrash::InDoubt("the command was interrupted; what it did is unknown")
    }

    fn describe(input: &Input) -> Described {
        Described {
            title: format!("running `{}`", one_line(&input.command, 40)),
            detail: format!("`{}`", one_line(&input.command, 160)),
        }
    }

    async fn run(&self, input: Input, call: &Call<'_, '_>) -> Result<ToolOutput, String> {
        let cx = call.cx();
        let mode = cx.policy.sandbox_mode_for(&input.command);
        call.permit_process(&action(&input.command), None, input.network, mode)
            .await?;
        call.event(TaskEvent::Activity {
            text: format!("running `{}`", first_line(&input.command, 60)),
        });
        Ok(command::run_command(cx, &input.command, input.timeout_s, input.network, mode).await)
    }
}

/// A command on one line (its later lines escaped, as they are part of
/// what it does), at most `max` characters.
fn one_line(command: &str, max: usize) -> String {
    let shown = inert::line(command.trim());
    if shown.chars().count() > max {
        format!("{}…", shown.chars().take(max).collect::<String>())
    } else {
        shown.into_owned()
    }
}

/// The first line of a command, at most `max` characters.
fn first_line(command: &str, max: usize) -> String {
    let first = command.lines().next().unwrap_or_default();
    if first.chars().count() > max {
        format!("{}…", first.chars().take(max).collect::<String>())
    } else {
        first.to_owned()
    }
}
