//! `search`: a regular expression over the project, without the files the
//! model may not read.

use std::fmt::Write;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::call::Call;
use super::registry::{Described, Effect, ToolKind, TypedTool};
use super::{ToolCx, ToolOutput, read_file};
use crate::context::history::ResultMeta;
use crate::permissions::{Action, Decision, RuleTarget, Subject};

const SEARCH_LIMIT: usize = 200;

pub struct Search;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// A regular expression.
    #[schemars(length(min = 1))]
    pattern: String,
    /// Directory to search (default: the root).
    #[serde(default)]
    path: String,
    /// Only files matching this glob, e.g. "**/*.rs".
    #[schemars(length(min = 1))]
    glob: Option<String>,
}

/// The permission action of searching `path` (resolved; `""` is the root).
pub fn action(path: &str) -> Action<'_> {
    Action {
        tool: Search::NAME,
        subject: Subject::Read {
            path,
            verb: "searching",
        },
    }
}

#[async_trait]
impl TypedTool for Search {
    type Input = Input;
    const NAME: &'static str = "search";
    const DESCRIPTION: &'static str = "Search the project's files for a regular expression (Rust regex syntax), skipping what .gitignore ignores. Use it to find definitions, usages and error messages. Returns matching lines as path:line: text, at most 200. Narrow with path (a directory) and glob (e.g. \"**/*.rs\"). Does not read whole files (use read_file).";
    const EFFECT: Effect = Effect::ReadOnly;
    const KIND: Option<ToolKind> = Some(ToolKind::Search);
    const RULE_TARGET: RuleTarget = RuleTarget::Path;

    fn describe(input: &Input) -> Described {
        let mut detail = format!("{:?}", input.pattern);
        if !input.path.is_empty() {
            let _ = write!(detail, " in {}", input.path);
        }
        if let Some(glob) = &input.glob {
            let _ = write!(detail, " ({glob})");
        }
        let pattern: String = input.pattern.chars().take(40).collect();
        Described {
            title: format!(
                "searching for {}",
                pattern.lines().next().unwrap_or_default()
            ),
            detail,
        }
    }

    async fn run(&self, input: Input, call: &Call<'_, '_>) -> Result<ToolOutput, String> {
        let path = call.resolve(&input.path)?;
        call.permit(&action(&path)).await?;
        Ok(search(call.cx(), &input.pattern, &path, input.glob.as_deref()).await)
    }
}

async fn search(cx: &ToolCx<'_>, pattern: &str, path: &str, glob: Option<&str>) -> ToolOutput {
    let found = match cx.workspace.search(pattern, path, glob, SEARCH_LIMIT).await {
        Ok(found) => found,
        Err(e) => return ToolOutput::error(e.to_string()),
    };
    let hits: Vec<_> = found
        .hits
        .iter()
        .filter(|h| cx.policy.check(&read_file::action(&h.path)).decision != Decision::Deny)
        .collect();
    if hits.is_empty() {
        return ToolOutput::ok(format!("No matches for {pattern:?}."), ResultMeta::Plain);
    }
    let mut out: String = hits
        .iter()
        .map(|h| format!("{}:{}: {}\n", h.path, h.line, h.text))
        .collect();
    if found.truncated > 0 {
        let _ = write!(
            out,
            "[{} more matches not shown: narrow the pattern, path or glob]",
            found.truncated
        );
    }
    ToolOutput::ok(out, ResultMeta::Plain)
}
