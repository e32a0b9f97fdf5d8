//! `list_files`: where code lives, without the files the model may not read.

use std::fmt::Write;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::call::Call;
use super::registry::{Described, Effect, TypedTool};
use super::{ToolCx, ToolOutput, read_file};
use crate::context::history::ResultMeta;
use crate::permissions::{Action, Decision, RuleTarget, Subject};

const LIST_LIMIT: usize = 500;

pub struct ListFiles;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Directory to list, relative to the project root (default: the root).
    #[serde(default)]
    path: String,
    /// Only paths matching this glob, e.g. "**/*.py".
    #[schemars(length(min = 1))]
    glob: Option<String>,
}

/// The permission action of listing `path` (resolved; `""` is the root).
pub fn action(path: &str) -> Action<'_> {
    Action {
        tool: ListFiles::NAME,
        subject: Subject::Read {
            path,
            verb: "listing",
        },
    }
}

#[async_trait]
impl TypedTool for ListFiles {
    type Input = Input;
    const NAME: &'static str = "list_files";
    const DESCRIPTION: &'static str = "List the files under a directory of the project (default: the root), recursively, skipping what .gitignore ignores. Use it to find where code lives. Returns relative paths, one per line, at most 500. Use glob to filter, e.g. \"**/*.py\" or \"tests/**\". Does not show file contents.";
    const EFFECT: Effect = Effect::ReadOnly;
    const RULE_TARGET: RuleTarget = RuleTarget::Path;

    fn describe(input: &Input) -> Described {
        let path = if input.path.is_empty() {
            "."
        } else {
            &input.path
        };
        Described {
            title: "listing files".into(),
            detail: match &input.glob {
                Some(glob) => format!("{path} {glob}"),
                None => path.to_owned(),
            },
        }
    }

    async fn run(&self, input: Input, call: &Call<'_, '_>) -> Result<ToolOutput, String> {
        let path = call.resolve(&input.path)?;
        call.permit(&action(&path)).await?;
        Ok(list(call.cx(), &path, input.glob.as_deref()).await)
    }
}

async fn list(cx: &ToolCx<'_>, path: &str, glob: Option<&str>) -> ToolOutput {
    let listing = match cx.workspace.list_files(path, glob, LIST_LIMIT).await {
        Ok(listing) => listing,
        Err(e) => return ToolOutput::error(e.to_string()),
    };
    // Files the model may not read are not shown either.
    let visible: Vec<&String> = listing
        .paths
        .iter()
        .filter(|p| cx.policy.check(&read_file::action(p)).decision != Decision::Deny)
        .collect();
    if visible.is_empty() {
        let place = if path.is_empty() {
            "the project".to_owned()
        } else {
            path.to_owned()
        };
        let filter = glob.map(|g| format!(" matching {g}")).unwrap_or_default();
        return ToolOutput::ok(format!("No files{filter} in {place}."), ResultMeta::Plain);
    }
    let mut out: String = visible.iter().map(|p| format!("{p}\n")).collect();
    if listing.truncated > 0 {
        let _ = write!(
            out,
            "[{} more not shown: narrow with path or glob]",
            listing.truncated
        );
    }
    ToolOutput::ok(out, ResultMeta::Plain)
}
