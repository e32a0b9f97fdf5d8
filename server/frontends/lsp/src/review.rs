//! The editor's own review of a proposed change: `rein/reviewEdit`, for a
//! client that declares `experimental.rein.reviewsEdits` (our VS Code
//! extension). The client shows the real diff (the text as it is now →
//! the proposal), the model's reason next to it, and Accept / Reject, per
//! hunk too; Rein applies what was accepted afterwards, as an edit that
//! needs no further confirmation.
//!
//! A review is a request, so it can be withdrawn: whatever stops Rein
//! waiting for it (the task cancelled or ended, the approval timeout, the
//! file changed under it) drops the request, which sends `$/cancelRequest`,
//! and the client closes the review. An answer that comes after that is
//! read by nobody: a late Accept changes nothing.

use std::path::Path;

use rein_text::{ContentHash, patch};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower_lsp_server::Client;

use crate::client_requests::{self, Unanswered};
use crate::questions;
use crate::session::Session;

pub const REVIEW_EDIT: &str = "rein/reviewEdit";

/// `rein/reviewEdit` params.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReviewParams {
    pub task_id: String,
    /// Unique in the session: the client's handle on this review.
    pub review_id: String,
    pub uri: String,
    /// Workspace-relative.
    pub path: String,
    /// The task, shortly ("Rein: fix test_total").
    pub label: String,
    /// What the change is ("change cart.py: 1 line changed").
    pub summary: String,
    /// Why, in the model's words (untrusted text, may be empty).
    pub reason: String,
    /// The text as it is now (`None`: the file is new).
    pub original: Option<String>,
    pub proposed: String,
    /// The changes, in order; an answer keeps some of them by index.
    pub hunks: Vec<ReviewHunk>,
}

/// One changed region. Lines are 0-based.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReviewHunk {
    /// Where it starts in the original text, and how many lines it replaces.
    pub original_start: usize,
    pub original_lines: usize,
    /// Where it starts in the proposed text, and how many lines it has.
    pub proposed_start: usize,
    pub proposed_lines: usize,
}

/// The client's answer.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReviewAnswer {
    pub decision: Decision,
    /// With `accept`: the hunks kept, by index (absent: all of them).
    #[serde(default)]
    pub hunks: Option<Vec<usize>>,
    /// With `reject`: what the user said about it, if anything.
    #[serde(default)]
    pub comment: Option<String>,
    /// With `accept`: the text as the user left it, when they edited the
    /// proposal before accepting (then `hunks` is not read).
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Decision {
    Accept,
    Reject,
}

/// What became of a review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reviewed {
    /// Apply `text`; `left_out` describes the hunks the user dropped;
    /// `edited`, what the user changed in the proposal before accepting
    /// it (a unified diff from the proposal to `text`), for the model.
    Accept {
        text: String,
        left_out: Option<String>,
        edited: Option<String>,
    },
    /// Not to be applied; why, for the model.
    Reject(String),
    /// Nobody answered within the approval timeout (this long): not
    /// applied, and not a rejection either.
    NoAnswer(std::time::Duration),
    /// The file changed while the user looked: the proposal no longer
    /// says what it would do, so it was withdrawn.
    Superseded,
}

/// A proposal as the review shows it. `original: None` is a new file.
pub struct Proposal<'a> {
    pub review_id: String,
    pub task_id: &'a str,
    pub uri: String,
    pub path: &'a str,
    pub label: &'a str,
    pub summary: &'a str,
    pub reason: &'a str,
    pub original: Option<&'a str>,
    pub proposed: &'a str,
}

impl Proposal<'_> {
    pub fn params(&self) -> ReviewParams {
        ReviewParams {
            task_id: self.task_id.to_owned(),
            review_id: self.review_id.clone(),
            uri: self.uri.clone(),
            path: self.path.to_owned(),
            label: self.label.to_owned(),
            summary: self.summary.to_owned(),
            reason: self.reason.to_owned(),
            original: self.original.map(str::to_owned),
            proposed: self.proposed.to_owned(),
            hunks: hunks(self.original.unwrap_or_default(), self.proposed),
        }
    }
}

/// Puts `proposal` to the user and waits (bounded by the approval
/// timeout) for the answer, or until the file at `abs` no longer holds
/// `original_hash`.
pub async fn review(
    client: &Client,
    session: &Session,
    abs: &Path,
    original_hash: Option<ContentHash>,
    proposal: &Proposal<'_>,
) -> Reviewed {
    let params = proposal.params();
    let json = match serde_json::to_value(&params) {
        Ok(json) => json,
        Err(e) => return Reviewed::Reject(format!("the review could not be sent: {e}")),
    };
    let timeout = session.approval_timeout();
    let request = client_requests::withdrawable(client, REVIEW_EDIT, json, timeout);
    // A file not shared with the editor changes on disk only: looked at
    // now and then.
    let poll = Some(std::time::Duration::from_millis(500));
    let moved = session.wait_for(timeout, poll, || async move {
        (current_hash(session, abs).await != original_hash).then_some(())
    });
    tokio::select! {
        answer = request => read_answer(answer, &params, timeout),
        Some(()) = moved => Reviewed::Superseded,
    }
}

/// The text of `abs` as the user has it now: the buffer, else the disk.
async fn current_hash(session: &Session, abs: &Path) -> Option<ContentHash> {
    if let Some((_, snap)) = session.open_document(abs) {
        return Some(snap.content_hash());
    }
    let bytes = tokio::fs::read(abs).await.ok()?;
    Some(ContentHash::of_bytes(&bytes))
}

fn read_answer(
    answer: Result<Value, Unanswered>,
    params: &ReviewParams,
    timeout: std::time::Duration,
) -> Reviewed {
    let value = match answer {
        Ok(value) => value,
        Err(Unanswered::Timeout) => return Reviewed::NoAnswer(timeout),
        Err(why) => return Reviewed::Reject(questions::unanswered(&why, timeout)),
    };
    let answer: ReviewAnswer = match serde_json::from_value(value) {
        Ok(answer) => answer,
        Err(e) => {
            tracing::warn!(error = %e, "unreadable answer to rein/reviewEdit");
            return Reviewed::Reject(format!("the editor's answer could not be read ({e})"));
        }
    };
    match answer.decision {
        Decision::Reject => Reviewed::Reject(
            answer
                .comment
                .map(|c| rein_core::inert::line(c.trim()).into_owned())
                .filter(|c| !c.is_empty())
                .map(|c| format!("the user said: {c}"))
                .unwrap_or_default(),
        ),
        Decision::Accept => match answer.text {
            Some(text) if text != params.proposed => as_edited(params, text),
            _ => keep(params, answer.hunks.as_deref()),
        },
    }
}

/// The longest text a user's edited proposal may be: the file is theirs,
/// but an answer this large is a client's slip, not an edit.
const MAX_EDITED_TEXT: usize = 16 * 1024 * 1024;
/// The longest diff of the user's changes the model reads at once.
const MAX_EDITED_DIFF: usize = 8000;

/// The proposal as the user left it: applied as it is, and the model told
/// exactly what they changed (a unified diff from its proposal).
fn as_edited(params: &ReviewParams, text: String) -> Reviewed {
    match user_changes(&params.path, &params.proposed, &text) {
        Ok(diff) => Reviewed::Accept {
            text,
            left_out: None,
            edited: Some(diff),
        },
        Err(why) => Reviewed::Reject(why),
    }
}

/// What the user changed in a proposal before accepting it, for the
/// model: the unified diff from `proposed` to `text`, cut at
/// `MAX_EDITED_DIFF` bytes. Refused (why, for the model) when `text` is
/// larger than Rein takes. Shared by `rein/reviewEdit` and the
/// `workspace/applyEdit` answer's `reinText` (Rein's Neovim plugin).
pub fn user_changes(path: &str, proposed: &str, text: &str) -> Result<String, String> {
    if text.len() > MAX_EDITED_TEXT {
        return Err(format!(
            "the editor sent an edited proposal of {} bytes, more than Rein takes ({MAX_EDITED_TEXT})",
            text.len()
        ));
    }
    let mut diff = rein_app::format::diff::unified_diff(path, Some(proposed), text);
    if diff.len() > MAX_EDITED_DIFF {
        // On a character boundary (the user's text may be any UTF-8).
        let cut = (0..=MAX_EDITED_DIFF)
            .rev()
            .find(|&i| diff.is_char_boundary(i))
            .unwrap_or(0);
        diff.truncate(cut);
        diff.push_str("\n… (the rest of the diff is left out: read the file)\n");
    }
    Ok(diff)
}

/// The text with only the kept hunks applied. Keeping none is a
/// rejection; indices out of range are ignored (a client's slip must not
/// apply what the user did not see).
fn keep(params: &ReviewParams, kept: Option<&[usize]>) -> Reviewed {
    let Some(kept) = kept else {
        return Reviewed::Accept {
            text: params.proposed.clone(),
            left_out: None,
            edited: None,
        };
    };
    let original = params.original.as_deref().unwrap_or_default();
    match kept_text(original, &params.proposed, kept) {
        Kept::None => Reviewed::Reject("the user kept none of the changes".into()),
        Kept::All => Reviewed::Accept {
            text: params.proposed.clone(),
            left_out: None,
            edited: None,
        },
        Kept::Some { text, left_out } => Reviewed::Accept {
            text,
            left_out: Some(left_out),
            edited: None,
        },
    }
}

/// What keeping some of the changes from `original` to `proposed` makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kept {
    /// No change kept (a rejection, never an empty edit).
    None,
    /// Every change kept: the proposal as it is.
    All,
    /// `text`, with the others left out (`left_out` says which, for the
    /// model).
    Some { text: String, left_out: String },
}

/// The text with only the `kept` changes (by index, in the order of
/// [`patch::line_hunks`], which is also the order of the text edits Rein
/// sends) applied. Indices out of range are ignored.
pub fn kept_text(original: &str, proposed: &str, kept: &[usize]) -> Kept {
    let all = patch::line_hunks(original, proposed);
    let keep_hunk = |i: usize| kept.contains(&i);
    if !(0..all.len()).any(keep_hunk) {
        return Kept::None;
    }
    if (0..all.len()).all(keep_hunk) {
        return Kept::All;
    }
    let described = hunks(original, proposed);
    let mut text = String::with_capacity(proposed.len());
    let mut at = 0;
    let mut dropped = Vec::new();
    for (i, hunk) in all.iter().enumerate() {
        text.push_str(original.get(at..hunk.start).unwrap_or_default());
        if keep_hunk(i) {
            text.push_str(&hunk.new_text);
        } else {
            text.push_str(original.get(hunk.start..hunk.end).unwrap_or_default());
            if let Some(h) = described.get(i) {
                dropped.push(describe(h));
            }
        }
        at = hunk.end;
    }
    text.push_str(original.get(at..).unwrap_or_default());
    Kept::Some {
        text,
        left_out: format!(
            "{} of your {} changes ({})",
            dropped.len(),
            all.len(),
            dropped.join(", ")
        ),
    }
}

/// "the change at line 12" / "the change at lines 12–14" (1-based, as the
/// model reads them).
fn describe(hunk: &ReviewHunk) -> String {
    let first = hunk.original_start + 1;
    match hunk.original_lines {
        0 => format!("the lines added after line {}", hunk.original_start),
        1 => format!("the change at line {first}"),
        n => format!("the change at lines {first}–{}", first + n - 1),
    }
}

/// The changed regions between two texts, by line.
pub fn hunks(original: &str, proposed: &str) -> Vec<ReviewHunk> {
    let mut out = Vec::new();
    // Lines of proposed minus lines of original before the current point.
    let mut shift: isize = 0;
    for hunk in patch::line_hunks(original, proposed) {
        let before = original.get(..hunk.start).unwrap_or_default();
        let original_start = before.matches('\n').count();
        let original_lines = original
            .get(hunk.start..hunk.end)
            .map_or(0, |t| t.lines().count());
        let proposed_lines = hunk.new_text.lines().count();
        let proposed_start = original_start.saturating_add_signed(shift);
        shift += proposed_lines as isize - original_lines as isize;
        out.push(ReviewHunk {
            original_start,
            original_lines,
            proposed_start,
            proposed_lines,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(original: &str, proposed: &str) -> ReviewParams {
        Proposal {
            review_id: "r1".into(),
            task_id: "t1",
            uri: "file:///w/cart.py".into(),
            path: "cart.py",
            label: "Rein: fix test_total",
            summary: "change cart.py: 2 lines changed",
            reason: "total() ignores the prices.",
            original: Some(original),
            proposed,
        }
        .params()
    }

    const ORIGINAL: &str = "a\nb\nc\nd\ne\nf\n";
    const PROPOSED: &str = "a\nB\nc\nd\ne\nF1\nF2\n";

    #[test]
    fn hunks_name_lines_on_both_sides() {
        let p = params(ORIGINAL, PROPOSED);
        expect_test::expect![[r#"
            [
                ReviewHunk {
                    original_start: 1,
                    original_lines: 1,
                    proposed_start: 1,
                    proposed_lines: 1,
                },
                ReviewHunk {
                    original_start: 5,
                    original_lines: 1,
                    proposed_start: 5,
                    proposed_lines: 2,
                },
            ]
        "#]]
        .assert_debug_eq(&p.hunks);
    }

    #[test]
    fn accepting_some_hunks_applies_only_those() {
        let p = params(ORIGINAL, PROPOSED);
        let answer = |v: Value| read_answer(Ok(v), &p, std::time::Duration::from_secs(1));
        assert_eq!(
            answer(json!({"decision": "accept"})),
            Reviewed::Accept {
                text: PROPOSED.into(),
                left_out: None,
                edited: None
            }
        );
        assert_eq!(
            answer(json!({"decision": "accept", "hunks": [1]})),
            Reviewed::Accept {
                text: "a\nb\nc\nd\ne\nF1\nF2\n".into(),
                left_out: Some("1 of your 2 changes (the change at line 2)".into()),
                edited: None
            }
        );
        assert_eq!(
            answer(json!({"decision": "accept", "hunks": [0, 1, 7]})),
            Reviewed::Accept {
                text: PROPOSED.into(),
                left_out: None,
                edited: None
            }
        );
    }

    #[test]
    fn keeping_some_edits_in_the_editors_own_preview_makes_that_text() {
        // What an editor that applies the text edits itself (Neovim's
        // preview, `reinKept`) reports: the same hunks, the same text.
        assert_eq!(
            kept_text(ORIGINAL, PROPOSED, &[0]),
            Kept::Some {
                text: "a\nB\nc\nd\ne\nf\n".into(),
                left_out: "1 of your 2 changes (the change at line 6)".into()
            }
        );
        assert_eq!(kept_text(ORIGINAL, PROPOSED, &[1, 0]), Kept::All);
        assert_eq!(kept_text(ORIGINAL, PROPOSED, &[]), Kept::None);
        assert_eq!(kept_text(ORIGINAL, PROPOSED, &[2, usize::MAX]), Kept::None);
    }

    #[test]
    fn a_proposal_the_user_edited_is_applied_as_left_and_the_model_sees_the_diff() {
        let p = params(ORIGINAL, PROPOSED);
        let answer = |v: Value| read_answer(Ok(v), &p, std::time::Duration::from_secs(1));
        let Reviewed::Accept {
            text,
            left_out: None,
            edited: Some(diff),
        } = answer(
            json!({"decision": "accept", "text": "a\nB\nc\nd\ne\nF1\nmine\n", "hunks": [0]}),
        )
        else {
            panic!("not an accept of the edited text")
        };
        assert_eq!(text, "a\nB\nc\nd\ne\nF1\nmine\n");
        assert!(diff.contains("-F2\n+mine\n"), "{diff}");
        assert!(diff.starts_with("--- a/cart.py\n+++ b/cart.py\n"), "{diff}");
        // The proposal left as it was is a plain accept.
        assert_eq!(
            answer(json!({"decision": "accept", "text": PROPOSED})),
            Reviewed::Accept {
                text: PROPOSED.into(),
                left_out: None,
                edited: None
            }
        );
        // A huge diff reaches the model cut.
        let big = format!("{}\n", "z".repeat(20_000));
        let Reviewed::Accept {
            edited: Some(diff), ..
        } = answer(json!({"decision": "accept", "text": big}))
        else {
            panic!("not an accept")
        };
        assert!(
            diff.len() < 8100 && diff.ends_with("read the file)\n"),
            "{}",
            diff.len()
        );
    }

    #[test]
    fn apply_with_nothing_kept_is_a_rejection_not_an_empty_edit() {
        let p = params(ORIGINAL, PROPOSED);
        let answer = |v: Value| read_answer(Ok(v), &p, std::time::Duration::from_secs(1));
        assert_eq!(
            answer(json!({"decision": "accept", "hunks": []})),
            Reviewed::Reject("the user kept none of the changes".into())
        );
        // Indices the review never offered keep nothing either.
        assert_eq!(
            answer(json!({"decision": "accept", "hunks": [5, 9]})),
            Reviewed::Reject("the user kept none of the changes".into())
        );
    }

    #[test]
    fn a_rejection_carries_the_users_words_inert() {
        let p = params(ORIGINAL, PROPOSED);
        let answer = |v: Value| read_answer(Ok(v), &p, std::time::Duration::from_secs(1));
        assert_eq!(
            answer(json!({"decision": "reject", "comment": " use Decimal\u{1b}[2J "})),
            Reviewed::Reject("the user said: use Decimal\\x1b[2J".into())
        );
        assert_eq!(
            answer(json!({"decision": "reject"})),
            Reviewed::Reject(String::new())
        );
    }

    #[test]
    fn a_review_timeout_is_no_answer_not_a_rejection() {
        let p = params(ORIGINAL, PROPOSED);
        let waited = std::time::Duration::from_secs(600);
        assert_eq!(
            read_answer(Err(Unanswered::Timeout), &p, waited),
            Reviewed::NoAnswer(waited)
        );
        // The editor going away is still no review at all.
        assert!(matches!(
            read_answer(Err(Unanswered::Gone), &p, waited),
            Reviewed::Reject(_)
        ));
    }

    #[test]
    fn an_unreadable_answer_applies_nothing() {
        let p = params(ORIGINAL, PROPOSED);
        let answer = |v: Value| read_answer(Ok(v), &p, std::time::Duration::from_secs(1));
        for bad in [
            json!(null),
            json!({"decision": "apply"}),
            json!({"decision": "accept", "hunks": "all"}),
            json!({"decision": "accept", "hunks": [-1]}),
        ] {
            assert!(
                matches!(answer(bad.clone()), Reviewed::Reject(r) if r.starts_with("the editor's answer could not be read")),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_new_file_is_one_hunk_from_nothing() {
        let p = Proposal {
            review_id: "r2".into(),
            task_id: "t1",
            uri: "file:///w/new.py".into(),
            path: "new.py",
            label: "Rein: fix test_total",
            summary: "create new.py (2 lines)",
            reason: "",
            original: None,
            proposed: "x\ny\n",
        }
        .params();
        assert_eq!(
            p.hunks,
            vec![ReviewHunk {
                original_start: 0,
                original_lines: 0,
                proposed_start: 0,
                proposed_lines: 2
            }]
        );
        let wire = serde_json::to_value(&p).unwrap();
        assert_eq!(wire["original"], Value::Null);
        assert_eq!(wire["reviewId"], "r2");
    }
}
