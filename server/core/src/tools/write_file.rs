//! `write_file`: a file the model has read, written whole — the edit
//! format small models handle (Aider's "whole" format): no `old_text` to
//! quote exactly. Applied as an `edit_file` of the file's whole text as
//! the model read it, so approval, the stale-edit rule, the test's
//! protection and the journal are the same.

use async_trait::async_trait;
use rein_models::REDACTED;
use schemars::JsonSchema;
use serde::Deserialize;

use super::call::Call;
use super::registry::{Described, Effect, PredictedEdit, ProposedChange, TypedTool};
use super::{ToolOutput, edit_file, files};
use crate::permissions::{Action, Decision, RuleTarget, Subject};

pub struct WriteFile;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The file to rewrite, relative to the project root.
    #[schemars(length(min = 1))]
    path: String,
    /// The whole new content of the file.
    content: String,
}

/// The permission action of writing `path` (resolved).
pub fn action(path: &str) -> Action<'_> {
    Action {
        tool: WriteFile::NAME,
        subject: Subject::Write {
            path,
            verb: "rewriting",
        },
    }
}

#[async_trait]
impl TypedTool for WriteFile {
    type Input = Input;
    const NAME: &'static str = "write_file";
    const DESCRIPTION: &'static str = "Replace the whole content of a file you have read with new content (the complete file, every line, not only the changed part). Simpler than edit_file for a small file or when many lines change. The change is shown to the user, who may approve or reject it. If the file changed since you read it, it is refused and you must read it again. Does not create files (use create_file).";
    const EFFECT: Effect = Effect::EditsWorkspace;
    const RULE_TARGET: RuleTarget = RuleTarget::Path;

    fn describe(input: &Input) -> Described {
        Described {
            title: format!("rewriting {}", input.path),
            detail: format!(
                "{} ({} lines, whole file)",
                input.path,
                input.content.lines().count()
            ),
        }
    }

    fn predicted_edit(input: &Input, current: Option<&str>) -> Option<PredictedEdit> {
        Some(PredictedEdit {
            path: input.path.clone(),
            after: current.map(|_| input.content.clone()),
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
        let cx = call.cx();
        let Some(read) = cx.reads.get(&path) else {
            // edit_file says why (not read, or not there).
            return Ok(files::edit_file(cx, edit_args(&path, "", &input.content), false).await);
        };
        let current = cx
            .workspace
            .read_file(&path)
            .await
            .map_err(|e| format!("cannot read {path}: {e}"))?;
        // The text as the model read it is the only text it may replace:
        // what the user typed since is not the model's to overwrite.
        if current.version.hash != read.hash {
            return Err(format!(
                "{path} changed since you read it (someone is editing it). Read it again with read_file, then write it."
            ));
        }
        // The model saw a marker where the file holds a secret: whatever it
        // writes back whole (the marker, or nothing) destroys that secret.
        if !call.shown_as_is(&current.text) {
            return Err(format!(
                "{path} holds a secret Rein hides from you ({REDACTED}); rewriting the whole file would destroy it. Change the file with edit_file, leaving that line alone."
            ));
        }
        if current.text.is_empty() {
            return Err(format!(
                "{path} is empty: there is no text for write_file to replace (it rewrites what you read). Use create_file for content in a new file."
            ));
        }
        let whole = edit_file::Input::whole(&path, &current.text, &input.content);
        edit_file::protect_test(call, &path, &whole).await?;
        let confirm = call.permit(&action(&path)).await? == Decision::Ask;
        Ok(files::edit_file(cx, edit_args(&path, &current.text, &input.content), confirm).await)
    }
}

fn edit_args<'a>(path: &'a str, old_text: &'a str, new_text: &'a str) -> files::EditArgs<'a> {
    files::EditArgs {
        path,
        old_text,
        new_text,
        replace_all: false,
    }
}
