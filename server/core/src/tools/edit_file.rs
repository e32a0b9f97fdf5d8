//! `edit_file`: a replacement in a file the model has read, proposed to
//! the user through the workspace (see `files.rs` for how it is applied).

use async_trait::async_trait;
use rein_models::REDACTED;
use schemars::JsonSchema;
use serde::Deserialize;

use super::call::Call;
use super::registry::{Described, Effect, PredictedEdit, ProposedChange, TypedTool};
use super::{ToolOutput, files};
use crate::edit;
use crate::permissions::{Action, Decision, RuleTarget, Subject};
use crate::ports::TaskEvent;
use crate::task::TaskKind;
use crate::testfind;

pub struct EditFile;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The file to edit, relative to the project root.
    #[schemars(length(min = 1))]
    path: String,
    /// The exact text to replace, as it is in the file now.
    #[schemars(length(min = 1))]
    old_text: String,
    /// The replacement text.
    new_text: String,
    /// Replace every occurrence instead of exactly one (default false).
    #[serde(default)]
    replace_all: bool,
}

impl Input {
    /// The whole of `old_text` replaced by `new_text` (`write_file`).
    pub(super) fn whole(path: &str, old_text: &str, new_text: &str) -> Self {
        Self {
            path: path.to_owned(),
            old_text: old_text.to_owned(),
            new_text: new_text.to_owned(),
            replace_all: false,
        }
    }
}

/// The permission action of editing `path` (resolved).
pub fn action(path: &str) -> Action<'_> {
    Action {
        tool: EditFile::NAME,
        subject: Subject::Write {
            path,
            verb: "editing",
        },
    }
}

/// The built-in rule that keeps a fix-test task off its own test.
const TEST_RULE: &str = "built-in deny: the target test";

#[async_trait]
impl TypedTool for EditFile {
    type Input = Input;
    const NAME: &'static str = "edit_file";
    const DESCRIPTION: &'static str = "Replace text in a file you have read. old_text must match the current file exactly, including indentation and line breaks, and exactly once (add surrounding lines to make it unique), unless replace_all is true. Keep edits small and focused; make several calls for changes in several places. The edit is shown to the user, who may approve or reject it. Returns the new version and the changed lines. If the file changed since you read it, the edit is refused and you must read it again. Does not create files (use create_file).";
    const EFFECT: Effect = Effect::EditsWorkspace;
    const RULE_TARGET: RuleTarget = RuleTarget::Path;

    fn describe(input: &Input) -> Described {
        let plural = |n: usize| if n == 1 { "line" } else { "lines" };
        let (o, n) = (
            input.old_text.lines().count(),
            input.new_text.lines().count(),
        );
        let every = if input.replace_all {
            ", every occurrence"
        } else {
            ""
        };
        Described {
            title: format!("editing {}", input.path),
            detail: format!(
                "{} ({o} {} → {n} {}{every})",
                input.path,
                plural(o),
                plural(n)
            ),
        }
    }

    fn predicted_edit(input: &Input, current: Option<&str>) -> Option<PredictedEdit> {
        let after = current.and_then(|text| {
            edit::apply(text, &input.old_text, &input.new_text, input.replace_all)
                .ok()
                .map(|a| a.text)
        });
        Some(PredictedEdit {
            path: input.path.clone(),
            after,
        })
    }

    fn proposed_change(input: &Input) -> Option<ProposedChange> {
        Some(ProposedChange {
            path: input.path.clone(),
            old_text: Some(input.old_text.clone()),
            new_text: input.new_text.clone(),
            replace_all: input.replace_all,
        })
    }

    async fn run(&self, input: Input, call: &Call<'_, '_>) -> Result<ToolOutput, String> {
        let path = call.resolve(&input.path)?;
        refuse_hidden_secret(call, &path, &input.old_text).await?;
        // A built-in deny, so before the rules (deny > ask > allow).
        protect_test(call, &path, &input).await?;
        let confirm = call.permit(&action(&path)).await? == Decision::Ask;
        let edit = files::EditArgs {
            path: &path,
            old_text: &input.old_text,
            new_text: &input.new_text,
            replace_all: input.replace_all,
        };
        Ok(files::edit_file(call.cx(), edit, confirm).await)
    }
}

/// The model saw [`REDACTED`] where the file holds a secret: an
/// `old_text` copied from that line cannot match, and "not found"
/// would only make it try again. (A file may hold the marker itself:
/// then the edit goes on.)
async fn refuse_hidden_secret(
    call: &Call<'_, '_>,
    path: &str,
    old_text: &str,
) -> Result<(), String> {
    if !old_text.contains(REDACTED) {
        return Ok(());
    }
    match call.cx().workspace.read_file(path).await {
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
pub(super) async fn protect_test(
    call: &Call<'_, '_>,
    path: &str,
    edit: &Input,
) -> Result<(), String> {
    let cx = call.cx();
    let TaskKind::FixTest {
        path: test_path,
        name,
    } = &cx.task.kind
    else {
        return Ok(());
    };
    if call.allow_test_edits() || path != test_path {
        return Ok(());
    }
    let Some(lang) = testfind::lang_for_path(path) else {
        return Ok(());
    };
    let Ok(current) = cx.workspace.read_file(path).await else {
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
        call.event(TaskEvent::Permission {
            call_id: call.id().to_owned(),
            tool: EditFile::NAME.into(),
            decision: Decision::Deny,
            rule: TEST_RULE.into(),
        });
        return Err(message);
    }
    Ok(())
}
