//! `read_file`, `list_files` and `search`: looking, never changing.

use std::fmt::Write;

use super::{ToolCx, ToolOutput};
use crate::context::history::ResultMeta;
use crate::permissions::{Action, Decision};

/// Lines returned by one read when no range is given.
pub const READ_LINES: usize = 2_000;
/// Longer lines are cut (minified files would flood the context).
const MAX_LINE_CHARS: usize = 2_000;
const LIST_LIMIT: usize = 500;
const SEARCH_LIMIT: usize = 200;

pub async fn read_file(
    cx: &ToolCx<'_>,
    path: &str,
    start: Option<usize>,
    end: Option<usize>,
) -> ToolOutput {
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

pub async fn list_files(cx: &ToolCx<'_>, path: &str, glob: Option<&str>) -> ToolOutput {
    let listing = match cx.workspace.list_files(path, glob, LIST_LIMIT).await {
        Ok(listing) => listing,
        Err(e) => return ToolOutput::error(e.to_string()),
    };
    // Files the model may not read are not shown either.
    let visible: Vec<&String> = listing
        .paths
        .iter()
        .filter(|p| cx.policy.check(&Action::ReadFile { path: p }).decision != Decision::Deny)
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

pub async fn search(cx: &ToolCx<'_>, pattern: &str, path: &str, glob: Option<&str>) -> ToolOutput {
    let found = match cx.workspace.search(pattern, path, glob, SEARCH_LIMIT).await {
        Ok(found) => found,
        Err(e) => return ToolOutput::error(e.to_string()),
    };
    let hits: Vec<_> = found
        .hits
        .iter()
        .filter(|h| {
            cx.policy
                .check(&Action::ReadFile { path: &h.path })
                .decision
                != Decision::Deny
        })
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
