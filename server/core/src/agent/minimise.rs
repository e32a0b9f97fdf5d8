//! A passing candidate made as small as its check allows, before it is
//! proposed: each region it changed is undone alone, and stays undone if
//! the check (the target test, the test file, the documented examples)
//! still passes. Seen with a 1.5B model on QuixBugs' find_in_sorted: the
//! first candidate changed two lines, the real fix and a wrong one
//! (`len(arr)` → `len(arr) - 1`); the target test and the docstring's
//! example passed, a case nobody had written failed, and Rein said
//! "fixed". What is proposed is now what the test needs, and the user
//! reviews less.

use rein_text::patch::{Hunk, apply, line_hunks};

use super::replies::{calls_of, without_writes_of};
use super::search::Reading;
use super::*;
use crate::ports::CandidateCheck;
use crate::tools::TypedTool as _;
use crate::tools::write_file::WriteFile;

/// The most checks one minimisation makes: each is a run of the tests.
const MAX_CHECKS: usize = 4;

/// How much of a left-out line the trace shows.
const SHOWN_CHARS: usize = 80;

/// A passing candidate with the changes its check did not need left out.
#[derive(Debug)]
pub(super) struct Smaller {
    /// (path, text) of each file the smaller candidate changes.
    pub files: Vec<(String, String)>,
    /// Files the candidate changed and the smaller one does not.
    pub untouched: Vec<String>,
    /// Each change left out, as "path line N: `text`".
    pub left_out: Vec<String>,
}

/// One file of the candidate: its text now, and the regions the
/// candidate changes in it, each kept or left out.
struct Changed {
    path: String,
    /// `None`: a file the candidate creates (kept whole).
    before: Option<String>,
    after: String,
    hunks: Vec<Hunk>,
    kept: Vec<bool>,
    /// The check at which each region was last undone (0: never).
    tried: Vec<usize>,
}

impl Changed {
    fn text(&self) -> String {
        match &self.before {
            Some(before) => {
                let kept: Vec<Hunk> = self
                    .hunks
                    .iter()
                    .zip(&self.kept)
                    .filter(|(_, k)| **k)
                    .map(|(h, _)| h.clone())
                    .collect();
                apply(before, &kept)
            }
            None => self.after.clone(),
        }
    }

    fn changes_anything(&self) -> bool {
        self.before.is_none() || self.kept.iter().any(|k| *k)
    }
}

impl Agent {
    /// `files` (a candidate that passed its check) without the changes
    /// the check does not need; `None` when every change is needed, or
    /// there is only one, or the smaller one could not be written (no
    /// `write_file` among the task's tools).
    pub(super) async fn smallest_passing(
        &self,
        files: &[(String, String)],
    ) -> Result<Option<Smaller>, Stop> {
        if self.config.tools.get(WriteFile::NAME).is_none() {
            return Ok(None);
        }
        let changed = self.changed(files).await;
        if regions(&changed) < 2 {
            return Ok(None);
        }
        self.without_unneeded(changed).await
    }

    /// The files a reply writes whole, checked in the private layer before
    /// they reach the workspace, and made as small as the check allows if
    /// it passes. Only a write of two regions or more is checked first
    /// (one region has nothing to leave out), so a one-line fix costs no
    /// extra run. Seen with a 1.5B model on QuixBugs' lcs_length: the
    /// first file it wrote fixed the line and rewrote the return around a
    /// new list; the target test passed, a case nobody had written failed,
    /// and Rein said "fixed" — this was the ordinary path, where no
    /// candidate is checked before it is proposed.
    pub(super) async fn written_made_smaller(
        &self,
        reply: &ModelReply,
    ) -> Result<Option<Smaller>, Stop> {
        // Where no private layer exists the write could only be checked
        // on the live text, which is the verifier's run after it.
        if self.config.tools.get(WriteFile::NAME).is_none()
            || !self.ports.exec.lays_files()
            || self.tracker.time_budget().is_over()
        {
            return Ok(None);
        }
        let calls: Vec<ToolCall> = calls_of(reply).into_iter().flatten().collect();
        let Reading::Files(files) = self.changes_of(&calls).await else {
            return Ok(None);
        };
        let changed = self.changed(&files).await;
        if regions(&changed) < 2 {
            return Ok(None);
        }
        self.event(TaskEvent::Activity {
            text: "checking the fix before proposing it".into(),
        });
        let passed = matches!(
            self.check_candidate(&files).await?,
            Some(CandidateCheck { passed: true, .. })
        );
        if !passed {
            return Ok(None);
        }
        self.without_unneeded(changed).await
    }

    /// Each file of `files` with the regions it changes.
    async fn changed(&self, files: &[(String, String)]) -> Vec<Changed> {
        let mut changed = Vec::with_capacity(files.len());
        for (path, after) in files {
            let before = self
                .ports
                .workspace
                .read_file(path)
                .await
                .ok()
                .map(|f| f.text);
            let hunks = before
                .as_deref()
                .map(|b| line_hunks(b, after))
                .unwrap_or_default();
            changed.push(Changed {
                path: path.clone(),
                before,
                after: after.clone(),
                kept: vec![true; hunks.len()],
                tried: vec![0; hunks.len()],
                hunks,
            });
        }
        changed
    }

    /// `changed` (which passed its check) with each region the check
    /// still passes without left out. A second pass retries the regions
    /// the first kept once something was left out: a change may be needed
    /// only by another that is now gone (lcs_length: a list the rewritten
    /// return used).
    async fn without_unneeded(&self, mut changed: Vec<Changed>) -> Result<Option<Smaller>, Stop> {
        let mut left_out = Vec::new();
        let mut checks = 0;
        // The last check that left a region out: one that failed is
        // retried only if something was left out after it was tried.
        let mut last_left_out = 0;
        'passes: for pass in 0..2 {
            for f in 0..changed.len() {
                for h in 0..changed[f].hunks.len() {
                    if !changed[f].kept[h] || (pass == 1 && changed[f].tried[h] >= last_left_out) {
                        continue;
                    }
                    // At least one change stays: the candidate failed
                    // without any.
                    if checks == MAX_CHECKS
                        || regions(&changed) < 2
                        || self.tracker.time_budget().is_over()
                    {
                        break 'passes;
                    }
                    changed[f].kept[h] = false;
                    let trial: Vec<(String, String)> =
                        changed.iter().map(|c| (c.path.clone(), c.text())).collect();
                    checks += 1;
                    changed[f].tried[h] = checks;
                    let passed = matches!(
                        self.check_candidate(&trial).await?,
                        Some(CandidateCheck { passed: true, .. })
                    );
                    if passed {
                        last_left_out = checks;
                        left_out.push(described(&changed[f], h));
                    } else {
                        changed[f].kept[h] = true;
                    }
                }
            }
        }
        if left_out.is_empty() {
            return Ok(None);
        }
        // A file the candidate creates keeps its own call.
        let (files, untouched): (Vec<&Changed>, Vec<&Changed>) = changed
            .iter()
            .filter(|c| c.before.is_some())
            .partition(|c| c.changes_anything());
        Ok(Some(Smaller {
            files: files.iter().map(|c| (c.path.clone(), c.text())).collect(),
            untouched: untouched.iter().map(|c| c.path.clone()).collect(),
            left_out,
        }))
    }

    /// The passing candidate's writes replaced by the smaller one's: one
    /// `write_file` of each file it changes (shown to the model as a file
    /// it wrote, in the whole format), none of a file it leaves as it is.
    pub(super) fn write_smaller(&self, turn: u32, reply: &mut ModelReply, smaller: Smaller) {
        let mut paths: Vec<String> = smaller.files.iter().map(|(p, _)| p.clone()).collect();
        paths.extend(smaller.untouched.iter().cloned());
        without_writes_of(reply, &paths);
        let prefix = if self.config.whole_files() {
            FILE_CALL_PREFIX
        } else {
            ""
        };
        for (n, (path, content)) in smaller.files.into_iter().enumerate() {
            reply.parts.push(Part::ToolCall(ToolCall {
                id: format!("{prefix}smaller_{turn}_{}", n + 1),
                name: WriteFile::NAME.into(),
                arguments: serde_json::json!({ "path": path, "content": content }),
            }));
        }
        self.event(TaskEvent::Context {
            transformation: "candidate_made_smaller".into(),
            detail: format!(
                "left out {} change(s) the check did not need: {}",
                smaller.left_out.len(),
                smaller.left_out.join("; ")
            ),
        });
    }
}

/// How many regions `changed` still changes (a created file is one).
fn regions(changed: &[Changed]) -> usize {
    changed
        .iter()
        .map(|c| {
            if c.before.is_none() {
                1
            } else {
                c.kept.iter().filter(|k| **k).count()
            }
        })
        .sum()
}

/// A left-out change as the trace shows it: where, and its first line.
fn described(file: &Changed, hunk: usize) -> String {
    let Some(h) = file.hunks.get(hunk) else {
        return file.path.clone();
    };
    let line = file
        .before
        .as_deref()
        .and_then(|b| b.get(..h.start))
        .map_or(1, |b| b.matches('\n').count() + 1);
    let first = h.new_text.lines().next().unwrap_or("").trim();
    if first.is_empty() {
        return format!("{} line {line}: lines removed", file.path);
    }
    let shown: String = first.chars().take(SHOWN_CHARS).collect();
    let more = if first.chars().count() > SHOWN_CHARS {
        "…"
    } else {
        ""
    };
    format!("{} line {line}: `{shown}{more}`", file.path)
}
