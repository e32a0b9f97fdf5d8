//! `edit_file` and `create_file`: changes, always through the workspace
//! (where the editor shows them for approval), always based on the version
//! the model last read.

use std::fmt::Write;

use super::no_answer::{self, Proposed};
use super::{ToolCx, ToolOutput};
use crate::context::history::ResultMeta;
use crate::workspace::{CreateRequest, EditOutcome, EditRequest, WorkspaceError};

/// Lines of context shown around an applied edit.
const SNIPPET_CONTEXT: usize = 3;

pub struct EditArgs<'a> {
    pub path: &'a str,
    pub old_text: &'a str,
    pub new_text: &'a str,
    pub replace_all: bool,
}

/// The change annotation's label: names the task, shortly (editors show
/// it as a heading and group the task's edits under it).
fn label(cx: &ToolCx<'_>) -> String {
    match &cx.task.kind {
        crate::task::TaskKind::FixTest { name, .. } => format!("Rein: fix {name}"),
        crate::task::TaskKind::FixDiagnostic { diagnostic } => {
            format!("Rein: fix {}", diagnostic.place())
        }
        crate::task::TaskKind::Instruction => {
            format!("Rein: {}", cut_at_word(cx.task.goal.trim(), 50))
        }
    }
}

/// Why an edit of a file that is not there failed, with the file the
/// model most likely meant: the same path without leading folders (a
/// model that saw `/tmp/x/project/gcd.py` in a traceback writes
/// `project/gcd.py`).
async fn no_such_file(cx: &ToolCx<'_>, path: &str) -> String {
    let mut rest = path;
    while let Some((_, shorter)) = rest.split_once('/') {
        rest = shorter;
        if !rest.is_empty() && cx.workspace.exists(rest).await {
            return format!(
                "There is no file {path} in the project. Did you mean {rest}? Paths are relative to the project's root."
            );
        }
    }
    format!(
        "There is no file {path} in the project (paths are relative to the project's root); to make a new file use create_file."
    )
}

pub async fn edit_file(
    cx: &ToolCx<'_>,
    args: EditArgs<'_>,
    needs_confirmation: bool,
) -> ToolOutput {
    let path = args.path;
    let Some(base) = cx.reads.get(path) else {
        if !cx.workspace.exists(path).await {
            return ToolOutput::error(no_such_file(cx, path).await);
        }
        return ToolOutput::error(format!(
            "Read {path} with read_file before editing it: edit_file applies to the version you last read."
        ));
    };
    let description = describe_edit(path, args.old_text, args.new_text, args.replace_all);
    let request = EditRequest {
        label: label(cx),
        description: description.clone(),
        reason: reason(cx.reason),
        path: path.to_owned(),
        base: base.clone(),
        old_text: args.old_text.to_owned(),
        new_text: args.new_text.to_owned(),
        replace_all: args.replace_all,
        needs_confirmation,
    };
    match cx.workspace.edit_file(request).await {
        Ok(EditOutcome::Applied {
            version,
            rebased_from,
        }) => {
            let mut out = format!("Edited {path} ({} → {}).", base.label(), version.label());
            if let Some(from) = rebased_from {
                let _ = write!(
                    out,
                    " The file had changed since you read it ({}); your edit still applied cleanly and was rebased onto the current text.",
                    from.label()
                );
            }
            edited(cx, path, args.new_text, version, out).await
        }
        Ok(EditOutcome::AppliedAsEdited { version, changes }) => {
            let out = format!(
                "Edited {path} ({} → {}) as the user changed it: they edited your proposal before accepting it. What they changed, from your proposal to what the file holds now:\n{changes}\nBuild on their version; do not undo their changes unless they ask.",
                base.label(),
                version.label()
            );
            edited(cx, path, args.new_text, version, out).await
        }
        Ok(EditOutcome::AppliedInPart { version, left_out }) => {
            let out = format!(
                "Edited {path} in part ({} → {}): the user kept some of your changes and left out {left_out}. Do not propose what they left out again unless they ask.",
                base.label(),
                version.label()
            );
            edited(cx, path, args.new_text, version, out).await
        }
        Ok(EditOutcome::Rejected { reason }) => ToolOutput::error(format!(
            "The user rejected this edit to {path}{}. Do not propose the same change again; take another approach or ask the user what they want.",
            because(&reason)
        ))
        .rejected(),
        Ok(EditOutcome::NoAnswer { waited }) => {
            no_answer::review_unanswered(path, Proposed::Edit, waited)
        }
        Ok(EditOutcome::Stale { current }) => {
            cx.reads.forget(path);
            ToolOutput::error(format!(
                "{path} changed since you read it ({} → {}) and your old_text no longer matches exactly once; read it again.",
                base.label(),
                current.label()
            ))
        }
        Ok(EditOutcome::Unknown { detail }) => {
            cx.reads.forget(path);
            ToolOutput::error(format!(
                "It is not known whether this edit to {path} was applied ({detail}). Read {path} again before anything else."
            ))
            .changed()
        }
        Err(e) => ToolOutput::error(workspace_error(e)),
    }
}

/// The result of an applied edit: `out`, then the changed region as it
/// reads now.
async fn edited(
    cx: &ToolCx<'_>,
    path: &str,
    new_text: &str,
    version: crate::workspace::ReadVersion,
    mut out: String,
) -> ToolOutput {
    cx.reads.set(path, version.clone());
    out.push_str(&snippet(cx, path, new_text).await);
    ToolOutput::ok(
        out,
        ResultMeta::Edited {
            path: path.to_owned(),
            version,
        },
    )
    .changed()
}

/// A rejection's reason, when there is one to give: " (reason)".
fn because(reason: &str) -> String {
    let reason = reason.trim();
    if reason.is_empty() {
        String::new()
    } else {
        format!(" ({reason})")
    }
}

pub async fn create_file(
    cx: &ToolCx<'_>,
    path: &str,
    content: &str,
    needs_confirmation: bool,
) -> ToolOutput {
    let lines = content.lines().count();
    let request = CreateRequest {
        label: label(cx),
        description: format!("create {path} ({lines} lines)"),
        reason: reason(cx.reason),
        path: path.to_owned(),
        content: content.to_owned(),
        needs_confirmation,
    };
    match cx.workspace.create_file(request).await {
        // A new file has one hunk: kept in part is not a thing it can be.
        Ok(EditOutcome::AppliedAsEdited { version, changes }) => {
            cx.reads.set(path, version.clone());
            ToolOutput::ok(
                format!(
                    "Created {path} ({}) as the user changed it: they edited your proposed content before accepting it. What they changed, from your proposal to what the file holds now:\n{changes}\nBuild on their version.",
                    version.label()
                ),
                ResultMeta::Edited {
                    path: path.to_owned(),
                    version,
                },
            )
            .changed()
        }
        Ok(EditOutcome::Applied { version, .. } | EditOutcome::AppliedInPart { version, .. }) => {
            cx.reads.set(path, version.clone());
            ToolOutput::ok(
                format!("Created {path} ({lines} lines, {}).", version.label()),
                ResultMeta::Edited {
                    path: path.to_owned(),
                    version,
                },
            )
            .changed()
        }
        Ok(EditOutcome::Rejected { reason }) => ToolOutput::error(format!(
            "The user rejected creating {path}{}.",
            because(&reason)
        ))
        .rejected(),
        Ok(EditOutcome::NoAnswer { waited }) => {
            no_answer::review_unanswered(path, Proposed::Creation, waited)
        }
        Ok(EditOutcome::Stale { current }) => ToolOutput::error(format!(
            "{path} appeared while the file was being created ({}); read it and edit it instead.",
            current.label()
        )),
        Ok(EditOutcome::Unknown { detail }) => ToolOutput::error(format!(
            "It is not known whether {path} was created ({detail}). Read it before anything else."
        ))
        .changed(),
        Err(WorkspaceError::AlreadyExists { path }) => ToolOutput::error(format!(
            "{path} already exists: read it and use edit_file to change it."
        )),
        Err(e) => ToolOutput::error(workspace_error(e)),
    }
}

fn workspace_error(e: WorkspaceError) -> String {
    e.to_string()
}

/// A one-line description of an edit: the lines it really changes (not
/// the lines of context the model quoted around them).
fn describe_edit(path: &str, old: &str, new: &str, replace_all: bool) -> String {
    let (mut added, mut removed) = (0, 0);
    for hunk in rein_text::patch::line_hunks(old, new) {
        removed += old
            .get(hunk.start..hunk.end)
            .map_or(0, |t| t.lines().count());
        added += hunk.new_text.lines().count();
    }
    let every = if replace_all {
        " at every occurrence"
    } else {
        ""
    };
    let lines = |n: usize| if n == 1 { "line" } else { "lines" };
    match (added, removed) {
        (a, 0) => format!("change {path}: add {a} {}{every}", lines(a)),
        (0, r) => format!("change {path}: remove {r} {}{every}", lines(r)),
        (a, r) if a == r => format!("change {path}: {a} {} changed{every}", lines(a)),
        (a, r) => format!("change {path}: +{a} −{r} lines{every}"),
    }
}

/// The model's words before the call, as the "why" of a change: as one
/// paragraph, cut at a word with "…" past a few sentences' length.
fn reason(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    cut_at_word(&flat, 600)
}

/// `text` if it has at most `max_chars` characters; else cut at the last
/// word that fits, saying it was cut ("…").
fn cut_at_word(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max_chars).collect();
    let at_word = cut.rfind(' ').map_or(cut.as_str(), |at| &cut[..at]);
    format!("{at_word}…")
}

/// The changed region of the file as it is now, numbered, so the model
/// sees the result without reading the whole file again.
async fn snippet(cx: &ToolCx<'_>, path: &str, new_text: &str) -> String {
    let Ok(file) = cx.workspace.read_file(path).await else {
        return String::new();
    };
    cx.reads.set(path, file.version.clone());
    let lines: Vec<&str> = file.text.lines().collect();
    let needle = new_text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let Some(at) = (!needle.is_empty())
        .then(|| lines.iter().position(|l| l.contains(needle)))
        .flatten()
    else {
        return String::new();
    };
    let span = new_text.lines().count().max(1);
    let from = at.saturating_sub(SNIPPET_CONTEXT);
    let to = (at + span + SNIPPET_CONTEXT).min(lines.len());
    let mut out = format!("\nNow lines {}-{} read:\n", from + 1, to);
    for (i, line) in lines[from..to].iter().enumerate() {
        let _ = writeln!(out, "{:>6}\t{line}", from + i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_is_described_by_the_lines_it_changes_not_the_lines_quoted() {
        // The hover said "replace 4 line(s) with 4 line(s)" for this.
        let old = "def total(items):\n    # sum\n    return sum(q for _, q in items)\n\n";
        let new = "def total(items):\n    # sum\n    return sum(p * q for p, q in items)\n\n";
        expect_test::expect!["change cart.py: 1 line changed"]
            .assert_eq(&describe_edit("cart.py", old, new, false));
        expect_test::expect!["change a.py: add 2 lines at every occurrence"]
            .assert_eq(&describe_edit("a.py", "x\n", "x\ny\nz\n", true));
        expect_test::expect!["change a.py: remove 1 line"]
            .assert_eq(&describe_edit("a.py", "x\ny\n", "x\n", false));
        expect_test::expect!["change a.py: +3 −1 lines"].assert_eq(&describe_edit(
            "a.py",
            "x\ny\n",
            "x\na\nb\nc\n",
            false,
        ));
    }

    #[test]
    fn the_reason_is_one_bounded_paragraph() {
        expect_test::expect!["total() sums the quantities. Multiply by the price."].assert_eq(
            &reason("  total() sums\nthe quantities.\n\n Multiply by the price.\n"),
        );
        assert_eq!(reason(""), "");
        let long = "word ".repeat(500);
        let cut = reason(&long);
        assert!(cut.ends_with("word…"), "{cut}");
        assert!(cut.chars().count() <= 601);
    }
}
