//! Approval where the editor cannot give it. A client without
//! `changeAnnotationSupport` (or one that declares it and ignores
//! `needsConfirmation`, as Sublime LSP does) applies a
//! `workspace/applyEdit` to an open file without showing it to the user,
//! and answers `applied: true` whatever the user thinks of it. So unless
//! the client declares `experimental.rein.confirmsEdits`, Rein asks first,
//! with `window/showMessageRequest` ("Apply" / "Show diff" / "Reject"), and
//! sends the edit only after "Apply": no edit is ever applied that the user
//! did not accept in some form.

use std::path::{Path, PathBuf};

use rein_core::inert;
use rein_core::task::TaskId;
use serde_json::json;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::Uri;

use crate::client_requests;
use crate::questions;
use crate::session::Session;
use rein_app::format::{paint_diff, unified_diff};

pub const APPLY: &str = "Apply";
pub const SHOW_DIFF: &str = "Show diff";
pub const REJECT: &str = "Reject";

/// How often "Show diff" may be chosen before the question is taken as
/// unanswered (a client that answers it in a loop must not hang the task).
const MAX_ASKS: usize = 5;

/// A change Rein wants to make.
pub struct Proposal<'a> {
    pub path: &'a str,
    /// `None`: a new file.
    pub old: Option<&'a str>,
    pub new: &'a str,
    /// The model's sentence about it.
    pub description: &'a str,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Apply,
    /// Not to be applied; why, for the model.
    Reject(String),
    /// Nobody answered within the approval timeout (this long): not
    /// applied, and not a rejection either.
    NoAnswer(std::time::Duration),
}

/// Asks the user about `proposal` and waits (bounded by the approval
/// timeout) for the answer. `seq` makes the diff file's name unique.
pub async fn ask(
    client: &Client,
    session: &Session,
    root: &Path,
    task: &TaskId,
    seq: u32,
    proposal: &Proposal<'_>,
) -> Verdict {
    let diff = unified_diff(proposal.path, proposal.old, proposal.new);
    let can_show = session.caps().show_document;
    let mut shown: Option<PathBuf> = None;
    let mut verdict = Verdict::Reject("the user did not decide".into());
    for _ in 0..MAX_ASKS {
        let mut message = question(proposal, &diff);
        if !can_show {
            // Nowhere else to see it: the change itself, in short.
            message.push_str(&preview(&diff));
        }
        if let Some(file) = &shown {
            message.push_str(&format!(" (The diff is in {}.)", file.display()));
        }
        let mut actions = vec![APPLY];
        if can_show {
            actions.push(SHOW_DIFF);
        }
        actions.push(REJECT);
        let (answer, timeout) = questions::ask(client, session, message, &actions).await;
        verdict = match answer {
            Ok(Some(APPLY)) => Verdict::Apply,
            Ok(Some(REJECT)) => Verdict::Reject(String::new()),
            Ok(Some(SHOW_DIFF)) => {
                match show(client, session, root, task, seq, &diff).await {
                    Ok(file) => shown = Some(file),
                    Err(reason) => {
                        tracing::warn!(%reason, "could not show a proposed edit's diff");
                    }
                }
                continue;
            }
            Ok(_) => Verdict::Reject("the user dismissed the question".into()),
            Err(crate::client_requests::Unanswered::Timeout) => Verdict::NoAnswer(timeout),
            Err(why) => Verdict::Reject(questions::unanswered(&why, timeout)),
        };
        break;
    }
    if let Some(file) = shown {
        remove_diff(root, &file);
    }
    verdict
}

/// "Rein wants to change cart.py (+1 −1): Fix the total." — one line: the
/// path and the model's sentence are shown inert.
fn question(proposal: &Proposal<'_>, diff: &str) -> String {
    let (added, removed) = counts(diff);
    let path = inert::line(proposal.path);
    let head = match proposal.old {
        Some(_) => format!("Rein wants to change {path} (+{added} −{removed})"),
        None => format!("Rein wants to create {path} (+{added})"),
    };
    let description = inert::line(proposal.description.trim());
    if description.is_empty() {
        format!("{head}.")
    } else {
        format!("{head}: {description}")
    }
}

/// The first changed lines of a diff, inert, after a line break (for a
/// client that cannot open the diff).
fn preview(diff: &str) -> String {
    const LINES: usize = 12;
    let painted = paint_diff(diff, false);
    let changed: Vec<&str> = painted
        .as_str()
        .lines()
        .filter(|l| !l.starts_with("+++") && !l.starts_with("---") && !l.starts_with("@@"))
        .filter(|l| l.starts_with('+') || l.starts_with('-'))
        .collect();
    let mut out = String::new();
    for line in changed.iter().take(LINES) {
        out.push('\n');
        out.push_str(line);
    }
    if changed.len() > LINES {
        out.push_str(&format!("\n… {} more changed lines", changed.len() - LINES));
    }
    out
}

/// Lines added and removed in a unified diff.
fn counts(diff: &str) -> (usize, usize) {
    diff.lines()
        .filter(|l| !l.starts_with("+++") && !l.starts_with("---"))
        .fold((0, 0), |(a, r), line| match line.as_bytes().first() {
            Some(b'+') => (a + 1, r),
            Some(b'-') => (a, r + 1),
            _ => (a, r),
        })
}

/// Writes the diff to `.rein/diffs/` and asks the editor to open it.
async fn show(
    client: &Client,
    session: &Session,
    root: &Path,
    task: &TaskId,
    seq: u32,
    diff: &str,
) -> Result<PathBuf, String> {
    let file = write_diff(root, task, seq, diff)?;
    let uri = Uri::from_file_path(&file).ok_or("the diff's path is not a file URI")?;
    let params = json!({"uri": uri.as_str(), "takeFocus": true});
    client_requests::withdrawable(
        client,
        "window/showDocument",
        params,
        session.options.client_request_timeout,
    )
    .await
    .map_err(|e| format!("the editor did not open it: {e:?}"))?;
    Ok(file)
}

/// The diff, its content escaped line by line (it is the model's text, and
/// the user reads it to decide), in `.rein/diffs/<task>-<seq>.diff`
/// (never through a link a repository planted there).
fn write_diff(root: &Path, task: &TaskId, seq: u32, diff: &str) -> Result<PathBuf, String> {
    let name: String = format!("{task}-{seq}.diff")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    // Written beneath `.rein/` in one step.
    rein_store::state_dir(root)
        .and_then(|state| {
            state.replace(
                format!("diffs/{name}"),
                paint_diff(diff, false).as_str().as_bytes(),
                None,
            )
        })
        .map_err(|e| e.to_string())?;
    Ok(root.join(rein_store::STATE_DIR).join("diffs").join(name))
}

/// Removes a diff [`write_diff`] wrote, beneath `.rein/` (never through a
/// link swapped in since).
fn remove_diff(root: &Path, file: &Path) {
    let state = root.join(rein_store::STATE_DIR);
    if let Ok(rel) = file.strip_prefix(&state)
        && let Err(error) = rein_store::state_dir(root).and_then(|dir| dir.remove_file(rel))
    {
        tracing::debug!(%error, "removing a shown diff");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_names_the_change_and_shows_model_text_inert() {
        let old = "def total(items):\n    return 0\n";
        let new = "def total(items):\n    return sum(items)\n";
        let proposal = Proposal {
            path: "cart.py",
            old: Some(old),
            new,
            description: "Sum the items.\u{202e}gnp.",
        };
        let diff = unified_diff("cart.py", Some(old), new);
        expect_test::expect![[
            r#"Rein wants to change cart.py (+1 −1): Sum the items.\u{202e}gnp."#
        ]]
        .assert_eq(&question(&proposal, &diff));
        let created = Proposal {
            path: "notes\n.txt",
            old: None,
            new: "a\nb\n",
            description: "",
        };
        let diff = unified_diff(created.path, None, created.new);
        expect_test::expect![[r#"Rein wants to create notes\n.txt (+2)."#]]
            .assert_eq(&question(&created, &diff));
    }

    #[test]
    fn without_a_diff_view_the_question_shows_the_change() {
        let old: String = (0..20).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 3\n", "line three\u{1b}[2J\n");
        let diff = unified_diff("a.txt", Some(&old), &new);
        expect_test::expect![[r#"

            -line 3
            +line three\x1b[2J"#]]
        .assert_eq(&preview(&diff));
        let all = unified_diff("b.txt", None, &old);
        assert!(preview(&all).ends_with("\n… 8 more changed lines"));
    }

    #[test]
    fn a_diff_folder_planted_as_a_symlink_is_not_followed() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join(".rein")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), root.path().join(".rein/diffs")).unwrap();
        let error = write_diff(root.path(), &TaskId("t1".into()), 1, "-a\n+b\n").unwrap_err();
        assert!(error.contains("is a symbolic link"), "{error}");
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_diff_file_is_written_escaped_under_rein_diffs() {
        let root = tempfile::tempdir().unwrap();
        let diff = unified_diff("a.py", Some("x\n"), "y\u{1b}[2J\n");
        let file = write_diff(root.path(), &TaskId("t/../1".into()), 2, &diff).unwrap();
        assert_eq!(file, root.path().join(".rein/diffs/t_.._1-2.diff"));
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("+y\\x1b[2J"), "{text}");
    }
}
