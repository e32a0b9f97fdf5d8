//! `create_file`: a new file, proposed to the user through the workspace
//! (see `files.rs` for how it is created).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::call::Call;
use super::registry::{Described, Effect, PredictedEdit, ProposedChange, TypedTool};
use super::{ToolOutput, files};
use crate::permissions::{Action, Decision, RuleTarget, Subject};

pub struct CreateFile;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The new file, relative to the project root.
    #[schemars(length(min = 1))]
    path: String,
    /// The whole content of the file.
    content: String,
}

/// The permission action of creating `path` (resolved).
pub fn action(path: &str) -> Action<'_> {
    Action {
        tool: CreateFile::NAME,
        subject: Subject::Write {
            path,
            verb: "creating",
        },
    }
}

#[async_trait]
impl TypedTool for CreateFile {
    type Input = Input;
    const NAME: &'static str = "create_file";
    const DESCRIPTION: &'static str = "Create a new file with the given content (parent directories are created). Refused if the file already exists: use edit_file to change existing files. The new file is shown to the user for approval.";
    const EFFECT: Effect = Effect::EditsWorkspace;
    const RULE_TARGET: RuleTarget = RuleTarget::Path;

    fn describe(input: &Input) -> Described {
        let n = input.content.lines().count();
        let lines = if n == 1 { "line" } else { "lines" };
        Described {
            title: format!("creating {}", input.path),
            detail: format!("{} (new, {n} {lines})", input.path),
        }
    }

    fn predicted_edit(input: &Input, _current: Option<&str>) -> Option<PredictedEdit> {
        Some(PredictedEdit {
            path: input.path.clone(),
            after: Some(input.content.clone()),
        })
    }

    fn proposed_change(input: &Input) -> Option<ProposedChange> {
        Some(ProposedChange {
            path: input.path.clone(),
            old_text: None,
            new_text: input.content.clone(),
            replace_all: false,
        })
    }

    async fn run(&self, input: Input, call: &Call<'_, '_>) -> Result<ToolOutput, String> {
        let path = call.resolve(&input.path)?;
        let confirm = call.permit(&action(&path)).await? == Decision::Ask;
        Ok(files::create_file(call.cx(), &path, &input.content, confirm).await)
    }
}
