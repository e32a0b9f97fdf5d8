//! `run_tests`: the project's test command, on a checked target (see
//! `command.rs` for how a run is reported).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::call::Call;
use super::registry::{Described, Effect, OnCrash, TypedTool};
use super::{ToolOutput, command};
use crate::permissions::{Action, RuleTarget, Subject};
use crate::ports::TaskEvent;
use crate::testtarget::TestTarget;

pub struct RunTests;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// A test id: a file or directory relative to the project root, optionally with ::test_name, or a test name. Never runner options. Default: the whole suite.
    #[schemars(length(min = 1))]
    target: Option<String>,
}

/// The permission action of running the tests on `target`.
pub fn action(target: Option<&str>) -> Action<'_> {
    Action {
        tool: RunTests::NAME,
        subject: Subject::Tests { target },
    }
}

#[async_trait]
impl TypedTool for RunTests {
    type Input = Input;
    const NAME: &'static str = "run_tests";
    const DESCRIPTION: &'static str = "Run the project's tests (the test command is detected: cargo, pytest or unittest, vitest/jest/npm, go; or configured). target narrows the run to a test id: a test file or directory relative to the project root (tests/test_cart.py, tests/), optionally followed by ::test_name (tests/test_cart.py::TestCart::test_total, tests/cart.rs::total, pkg/cart/cart_test.go::TestTotal, src/cart.test.ts::Cart > total), or a test name alone (cart::tests::total, TestTotal). The path must exist inside the project. A target is never passed as runner options: one that starts with - (e.g. -k, --basetemp) is refused; use run_command for options. Your edits are saved to disk first. Returns the exit code, the duration, the failing tests and the last 50 lines of output, with the path of the full log (read it with read_file for more). Use it to see the failure before changing code, and after every change to check it. It is stopped at the configured time limit, or when the task's time budget runs out.";
    // Tests run the project's code, which may write anything it can.
    const EFFECT: Effect = Effect::SideEffects;
    const RULE_TARGET: RuleTarget = RuleTarget::Target;

    /// A test run cut short is only a run to do again.
    fn on_crash(&self) -> OnCrash {
        OnCrash::Rerunnable("the test run was interrupted before it finished")
    }

    fn describe(input: &Input) -> Described {
        Described {
            title: "running tests".into(),
            detail: input
                .target
                .clone()
                .unwrap_or_else(|| "(the test suite)".into()),
        }
    }

    async fn run(&self, input: Input, call: &Call<'_, '_>) -> Result<ToolOutput, String> {
        let cx = call.cx();
        // Checked once, here: what the rules see, what the user approves
        // and what the runner gets are the same target.
        let target = match input.target.as_deref() {
            Some(raw) => TestTarget::check(raw, cx.workspace)
                .await
                .map_err(|e| e.to_string())?,
            None => None,
        };
        let shown = target.as_ref().map(ToString::to_string);
        let command_line = cx.test_command.map(|t| t.for_target(target.as_ref()));
        call.permit_process(&action(shown.as_deref()), command_line, false, None)
            .await?;
        call.event(TaskEvent::Activity {
            text: "running tests".into(),
        });
        Ok(command::run_tests(cx, target.as_ref()).await)
    }
}
