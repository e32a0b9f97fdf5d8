//! `read_file`: a file's text as the model may base edits on, from the
//! editor's live buffer when the file is open.

use std::fmt::Write;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::call::Call;
use super::registry::{Described, Effect, TypedTool};
use super::{ToolCx, ToolOutput};
use crate::context::history::ResultMeta;
use crate::permissions::{Action, RuleTarget, Subject};

/// Lines returned by one read when no range is given.
pub const READ_LINES: usize = 2_000;
/// Longer lines are cut (minified files would flood the context).
const MAX_LINE_CHARS: usize = 2_000;

pub struct ReadFile;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The file, relative to the project root.
    #[schemars(length(min = 1))]
    path: String,
    /// First line to return (1-based, default 1).
    #[schemars(range(min = 1))]
    start_line: Option<usize>,
    /// Last line to return (inclusive, default start_line + 1999).
    #[schemars(range(min = 1))]
    end_line: Option<usize>,
}

/// The permission action of reading `path` (resolved): what rules about
/// reading match, and what the listing and search tools hide.
pub fn action(path: &str) -> Action<'_> {
    Action {
        tool: ReadFile::NAME,
        subject: Subject::Read {
            path,
            verb: "reading",
        },
    }
}

#[async_trait]
impl TypedTool for ReadFile {
    type Input = Input;
    const NAME: &'static str = "read_file";
    const DESCRIPTION: &'static str = "Read a text file of the project. Use it before editing a file (edit_file applies to the version you last read) and whenever you need the exact current text: the user may be editing too, so an earlier read can be stale. Returns the lines numbered from 1 and the version read (open files are read from the editor's live buffer). Reads up to 2000 lines at a time: use start_line/end_line for more. Does not list directories (use list_files) or search (use search). Paths are relative to the project root.";
    const EFFECT: Effect = Effect::ReadOnly;
    const RULE_TARGET: RuleTarget = RuleTarget::Path;

    fn describe(input: &Input) -> Described {
        let range = match (input.start_line, input.end_line) {
            (None, None) => String::new(),
            (start, end) => format!(
                ":{}-{}",
                start.map_or(String::new(), |n| n.to_string()),
                end.map_or(String::new(), |n| n.to_string())
            ),
        };
        Described {
            title: format!("reading {}", input.path),
            detail: format!("{}{range}", input.path),
        }
    }

    async fn run(&self, input: Input, call: &Call<'_, '_>) -> Result<ToolOutput, String> {
        let path = call.resolve(&input.path)?;
        call.permit(&action(&path)).await?;
        Ok(read(call.cx(), &path, input.start_line, input.end_line).await)
    }
}

async fn read(cx: &ToolCx<'_>, path: &str, start: Option<usize>, end: Option<usize>) -> ToolOutput {
    let file = match cx.workspace.read_file(path).await {
        Ok(file) => file,
        Err(e) => return ToolOutput::error(e.to_string()),
    };
    let lines: Vec<&str> = file.text.lines().collect();
    let total = lines.len();
    let start = start.unwrap_or(1);
    if total == 0 {
        cx.reads.set(path, file.version.clone());
        return ToolOutput::ok(
            format!("{path} ({}) is empty.", file.version.label()),
            ResultMeta::FileRead {
                path: path.to_owned(),
                version: file.version,
            },
        );
    }
    if start > total {
        return ToolOutput::error(format!(
            "start_line {start} is past the end of {path}, which has {total} lines."
        ));
    }
    let end = end.unwrap_or(start + READ_LINES - 1).min(total);
    if end < start {
        return ToolOutput::error(format!("end_line {end} is before start_line {start}."));
    }
    let mut out = format!(
        "{path} ({}), lines {start}-{end} of {total}:\n",
        file.version.label()
    );
    for (n, line) in lines[start - 1..end].iter().enumerate() {
        let shown: String = line.chars().take(MAX_LINE_CHARS).collect();
        let cut = if shown.len() < line.len() {
            " [… line cut]"
        } else {
            ""
        };
        let _ = writeln!(out, "{:>6}\t{shown}{cut}", start + n);
    }
    if end < total {
        let _ = write!(
            out,
            "[{} more lines: read with start_line={}]",
            total - end,
            end + 1
        );
    }
    cx.reads.set(path, file.version.clone());
    ToolOutput::ok(
        out,
        ResultMeta::FileRead {
            path: path.to_owned(),
            version: file.version,
        },
    )
}
