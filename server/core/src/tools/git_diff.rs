//! `git_diff`: what changed since the last commit — the task's edits so
//! far and the user's uncommitted work — as a unified diff, without the
//! files the model may not read.
//!
//! Git runs through the executor like any command, so it is confined by
//! the sandbox: a repository's own Git configuration can run programs
//! (filters, fsmonitor), and a cloned repository is untrusted. The flags
//! turn off what can be turned off: external diff drivers, text
//! conversion, fsmonitor, the pager, and index refreshes (which write).

use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::call::Call;
use super::registry::{Described, Effect, TypedTool};
use super::{ToolCx, ToolOutput, read_file};
use crate::context::history::ResultMeta;
use crate::exec::{CommandKind, CommandSpec};
use crate::permissions::{Action, Decision, Subject};
use crate::testing::command::quote;

/// Git answers in well under a second; a hung one is cut short.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Separates the diff from the list of untracked files in the output.
const UNTRACKED: &str = "@@rein: untracked files@@";
/// What the command prints when there is nothing to compare with.
const NO_COMMIT: &str = "rein: no commit yet";
const NO_REPOSITORY: &str = "rein: not a git repository";

pub struct GitDiff;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Only changes under this file or directory, relative to the project root (default: the whole project).
    #[serde(default)]
    path: String,
}

#[async_trait]
impl TypedTool for GitDiff {
    type Input = Input;
    const NAME: &'static str = "git_diff";
    const DESCRIPTION: &'static str = "Show what changed in the project since its last commit: git diff of the files against HEAD, which includes your edits in this task so far and any change the user has not committed, followed by the new files Git does not track yet. Use it to review everything you changed before you finish, or to see what the user was working on. Narrow it with path (a file or directory). Files you may not read are left out. Returns a unified diff. Needs a Git repository with at least one commit; does not show committed history.";
    const EFFECT: Effect = Effect::ReadOnly;

    fn describe(input: &Input) -> Described {
        let path = if input.path.is_empty() {
            "."
        } else {
            &input.path
        };
        Described {
            title: "reviewing the changes".into(),
            detail: path.to_owned(),
        }
    }

    async fn run(&self, input: Input, call: &Call<'_, '_>) -> Result<ToolOutput, String> {
        let path = call.resolve(&input.path)?;
        call.permit_process(
            &Action {
                tool: Self::NAME,
                subject: Subject::Call {
                    effect: Self::EFFECT,
                    runs_process: true,
                },
            },
            Some(command(&path)),
            false,
            None,
        )
        .await?;
        run(call.cx(), &path).await
    }
}

/// The command line: whether there is a commit to compare with, then the
/// diff against HEAD, then the untracked files. Rein's own directory (the
/// command's log is there) is never part of it.
fn command(path: &str) -> String {
    let git = "git --no-pager --no-optional-locks -c core.fsmonitor=false -c core.quotePath=false";
    let target = if path.is_empty() { "." } else { path };
    let spec = format!(" -- {} ':(exclude).rein'", quote(target));
    format!(
        "{{ {git} rev-parse --verify -q HEAD >/dev/null 2>&1 || {{ {git} rev-parse --git-dir >/dev/null 2>&1 && echo '{NO_COMMIT}' || echo '{NO_REPOSITORY}'; exit 3; }}; }} && {git} diff --no-ext-diff --no-textconv --no-color --no-renames HEAD{spec} && printf '%s\\n' '{UNTRACKED}' && {git} ls-files --others --exclude-standard{spec}"
    )
}

async fn run(cx: &ToolCx<'_>, path: &str) -> Result<ToolOutput, String> {
    // Git reads the disk: the task's edits must be there first.
    cx.workspace.flush_to_disk().await.map_err(|e| {
        format!(
            "Could not save the edited files to disk, so there is nothing reliable to compare: {e}"
        )
    })?;
    let timeout = TIMEOUT.min(cx.time.left());
    if timeout.is_zero() {
        return Err("Not run: the task's time budget has run out.".into());
    }
    let (log_path, log_rel) = cx.next_log();
    let spec = CommandSpec {
        command: command(path),
        cwd: cx.workspace.root().to_path_buf(),
        timeout,
        log_path,
        kind: CommandKind::Other,
        network: false,
        sandbox_mode: None,
        report: None,
        layer: None,
    };
    let result = cx
        .exec
        .run(spec, cx.cancel.clone())
        .await
        .map_err(|e| e.to_string())?;
    if !result.succeeded() {
        let last = result.tail.last().map(String::as_str).unwrap_or_default();
        return Err(match last {
            NO_REPOSITORY => {
                "This project is not a Git repository: there is no commit to compare with.".into()
            }
            NO_COMMIT => {
                "This repository has no commit yet: there is nothing to compare with.".into()
            }
            _ => format!(
                "git diff failed ({}):\n{}\n(full log: {log_rel})",
                outcome(&result),
                result.tail.join("\n")
            ),
        });
    }
    // The whole output, not the tail the executor keeps.
    let output = cx
        .workspace
        .read_file(&log_rel)
        .await
        .map_err(|e| format!("git diff ran, but its output could not be read ({e})"))?
        .text;
    let readable = |p: &str| cx.policy.check(&read_file::action(p)).decision != Decision::Deny;
    Ok(ToolOutput::ok(shown(&output, readable), ResultMeta::Plain))
}

fn outcome(result: &crate::exec::CommandResult) -> String {
    match (result.timed_out, result.exit_code) {
        (true, _) => "it took too long and was stopped".into(),
        (false, Some(code)) => format!("exit code {code}"),
        (false, None) => "ended by a signal".into(),
    }
}

/// The diff and the untracked files, without the files `readable` says the
/// model may not read (nor any whose name Git had to quote, which cannot
/// be checked reliably).
fn shown(output: &str, readable: impl Fn(&str) -> bool) -> String {
    let (diff, untracked) = output.split_once(UNTRACKED).unwrap_or((output, ""));
    let mut out = String::new();
    let mut hidden = 0;
    let mut keep = true;
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            keep = section_path(rest).is_some_and(&readable);
            if !keep {
                hidden += 1;
            }
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    let new_files: Vec<&str> = untracked
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .filter(|p| {
            let ok = !p.starts_with('"') && readable(p);
            if !ok {
                hidden += 1;
            }
            ok
        })
        .collect();
    if out.trim().is_empty() && new_files.is_empty() && hidden == 0 {
        return "No changes since the last commit.".into();
    }
    if !new_files.is_empty() {
        out.push_str("New files not tracked by Git (read them with read_file):\n");
        for file in new_files {
            out.push_str(&format!("  {file}\n"));
        }
    }
    if hidden > 0 {
        out.push_str(&format!(
            "[{hidden} changed file(s) not shown: you may not read them]\n"
        ));
    }
    out
}

/// The path of a `diff --git a/X b/X` section (no renames: both halves are
/// the same path, which may itself contain " b/"); `None` when Git quoted
/// it.
fn section_path(rest: &str) -> Option<&str> {
    let rest = rest.strip_prefix("a/")?;
    let len = rest.len().checked_sub(3)?;
    if len % 2 != 0 {
        return None;
    }
    let (path, tail) = rest.split_at_checked(len / 2)?;
    (tail.strip_prefix(" b/")? == path).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/src/cart.py b/src/cart.py\nindex 1..2 100644\n--- a/src/cart.py\n+++ b/src/cart.py\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-KEY=1\n+KEY=2\ndiff --git \"a/we\\tird\" \"b/we\\tird\"\n+x\n@@rein: untracked files@@\nnotes/new.md\nsecrets/id_rsa\n";

    #[test]
    fn git_diff_never_shows_a_file_the_model_may_not_read() {
        let readable = |p: &str| !p.ends_with(".env") && !p.starts_with("secrets/");
        expect_test::expect![[r#"
            diff --git a/src/cart.py b/src/cart.py
            index 1..2 100644
            --- a/src/cart.py
            +++ b/src/cart.py
            @@ -1 +1 @@
            -a
            +b
            New files not tracked by Git (read them with read_file):
              notes/new.md
            [3 changed file(s) not shown: you may not read them]
        "#]]
        .assert_eq(&shown(DIFF, readable));
    }

    #[test]
    fn section_paths_are_read_even_with_b_slash_inside() {
        assert_eq!(section_path("a/x b/y b/x b/y"), Some("x b/y"));
        assert_eq!(section_path("a/src/a.rs b/src/a.rs"), Some("src/a.rs"));
        assert_eq!(section_path("a/x b/y"), None);
        assert_eq!(section_path("\"a/x\" \"b/x\""), None);
        assert_eq!(section_path("a/é b/é"), Some("é"));
    }

    #[test]
    fn no_changes_say_so() {
        assert_eq!(
            shown(&format!("{UNTRACKED}\n"), |_| true),
            "No changes since the last commit."
        );
    }

    #[test]
    fn the_path_is_quoted_for_the_shell() {
        expect_test::expect![[r#"{ git --no-pager --no-optional-locks -c core.fsmonitor=false -c core.quotePath=false rev-parse --verify -q HEAD >/dev/null 2>&1 || { git --no-pager --no-optional-locks -c core.fsmonitor=false -c core.quotePath=false rev-parse --git-dir >/dev/null 2>&1 && echo 'rein: no commit yet' || echo 'rein: not a git repository'; exit 3; }; } && git --no-pager --no-optional-locks -c core.fsmonitor=false -c core.quotePath=false diff --no-ext-diff --no-textconv --no-color --no-renames HEAD -- 'a b;rm -rf x' ':(exclude).rein' && printf '%s\n' '@@rein: untracked files@@' && git --no-pager --no-optional-locks -c core.fsmonitor=false -c core.quotePath=false ls-files --others --exclude-standard -- 'a b;rm -rf x' ':(exclude).rein'"#]]
        .assert_eq(&command("a b;rm -rf x"));
    }
}
