//! Which of a checker's diagnostics is the one the editor showed, and
//! whether it is still there after the task's edits: matched by file,
//! code and message, its line followed through the edits (the text
//! before and after, diffed into hunks: a line before a hunk moves by the
//! lines the hunks above it added, a line inside one becomes the hunk's
//! new lines).

use std::collections::BTreeMap;

use super::diagnostic::{Diagnostic, Reported, Severity};

/// The checker's report of `diagnostic` among `reported`, from a run on
/// the text the editor showed it for: the same file, then by preference
/// the same message and code on its lines, the same message and code
/// elsewhere in the file (nearest first), the same code on its lines,
/// the same message with no code to compare.
pub fn find<'a>(diagnostic: &Diagnostic, reported: &'a [Reported]) -> Option<&'a Reported> {
    let first = diagnostic.range.start.line.saturating_add(1);
    let last = diagnostic.range.end.line.saturating_add(1).max(first);
    let in_file: Vec<&Reported> = reported
        .iter()
        .filter(|r| r.path == diagnostic.path)
        .collect();
    let on_lines = |r: &Reported| r.line >= first && r.line <= last;
    let code = |r: &Reported| code_match(diagnostic.code.as_deref(), r.code.as_deref());
    let message = |r: &Reported| same_message(&diagnostic.message, &r.message);
    let tiers: [&dyn Fn(&Reported) -> bool; 4] = [
        &|r| message(r) && code(r) != Some(false) && on_lines(r),
        &|r| message(r) && code(r) == Some(true),
        &|r| code(r) == Some(true) && on_lines(r),
        &|r| message(r) && code(r).is_none(),
    ];
    tiers.iter().find_map(|tier| {
        in_file
            .iter()
            .filter(|r| tier(r))
            .min_by_key(|r| r.line.abs_diff(first))
            .copied()
    })
}

/// Whether two codes are the same (`Some`), or there is nothing to
/// compare (`None`). TypeScript's `TS2322` is the editor's `2322`.
fn code_match(a: Option<&str>, b: Option<&str>) -> Option<bool> {
    let norm = |c: &str| {
        let c = c.trim().to_ascii_lowercase();
        match c.strip_prefix("ts") {
            Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => n.to_owned(),
            _ => c,
        }
    };
    Some(norm(a?) == norm(b?))
}

/// The same message: the first lines equal but for spacing, or one the
/// start of the other (an editor's server may add or drop a tail).
pub fn same_message(a: &str, b: &str) -> bool {
    let (a, b) = (headline(a), headline(b));
    a == b || (a.len().min(b.len()) >= 20 && (a.starts_with(&b) || b.starts_with(&a)))
}

fn headline(message: &str) -> String {
    message
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// What counts as the same diagnostic wherever it is in its file.
pub fn key(r: &Reported) -> String {
    let code = r.code.as_deref().unwrap_or("");
    format!("{}\u{0}{code}\u{0}{}", r.path, headline(&r.message))
}

/// How many of each [`key`] a run reported, at `worst` severity or worse.
pub fn tally(reported: &[Reported], worst: Severity) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for r in reported.iter().filter(|r| r.severity <= worst) {
        *counts.entry(key(r)).or_insert(0) += 1;
    }
    counts
}

/// Old lines to new ones, through the hunks that turn one text into the
/// other.
#[derive(Clone, Debug)]
pub struct LineMap {
    /// (old start, old end (exclusive), new start, new end), 0-based.
    hunks: Vec<(u32, u32, u32, u32)>,
}

impl LineMap {
    pub fn new(old: &str, new: &str) -> Self {
        let mut hunks = Vec::new();
        let mut delta: i64 = 0;
        for hunk in rein_text::patch::line_hunks(old, new) {
            let start = lines_in(&old[..hunk.start.min(old.len())]);
            let end = lines_in(&old[..hunk.end.min(old.len())]);
            let added = lines_in(&hunk.new_text)
                + u32::from(!hunk.new_text.is_empty() && !hunk.new_text.ends_with('\n'));
            let new_start = (i64::from(start) + delta).max(0) as u32;
            hunks.push((start, end, new_start, new_start + added));
            delta += i64::from(added) - i64::from(end - start);
        }
        Self { hunks }
    }

    /// Where 1-based `line` is now: the lines it may be on (1-based,
    /// inclusive): one line if untouched, the hunk's lines if edited.
    pub fn map(&self, line: u32) -> (u32, u32) {
        let old = line.saturating_sub(1);
        let mut delta: i64 = 0;
        for &(start, end, new_start, new_end) in &self.hunks {
            if old < start {
                break;
            }
            // A pure insertion (start == end) only moves the lines after.
            if start < end && old < end {
                // Replaced (or deleted: the place where it was).
                return (new_start + 1, new_end.max(new_start + 1));
            }
            delta = i64::from(new_end) - i64::from(end);
        }
        let now = (i64::from(old) + delta).max(0) as u32 + 1;
        (now, now)
    }
}

fn lines_in(text: &str) -> u32 {
    text.bytes().filter(|b| *b == b'\n').count() as u32
}

/// The checker still reports `target`: a diagnostic with its file, code
/// and message on the lines its line became, or as many of them in the
/// file as before (it moved, or another took its place).
pub fn still_there<'a>(
    target: &Reported,
    before: usize,
    now: &'a [Reported],
    lines: Option<&LineMap>,
) -> Option<&'a Reported> {
    let same: Vec<&Reported> = now.iter().filter(|r| key(r) == key(target)).collect();
    let (first, last) = match lines {
        Some(map) => map.map(target.line),
        None => (target.line, target.line),
    };
    same.iter()
        .find(|r| r.line >= first && r.line <= last)
        .or_else(|| same.first().filter(|_| same.len() >= before.max(1)))
        .copied()
}

/// What the checker reports now in `files` at `worst` severity or worse
/// that it did not before: more of a key than the baseline counted.
pub fn new_problems<'a>(
    before: &BTreeMap<String, usize>,
    now: &'a [Reported],
    files: &[String],
    worst: Severity,
) -> Vec<&'a Reported> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    now.iter()
        .filter(|r| r.severity <= worst && files.contains(&r.path))
        .filter(|r| {
            let k = key(r);
            let n = seen.entry(k.clone()).or_insert(0);
            *n += 1;
            *n > before.get(&k).copied().unwrap_or(0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::diagnostic::{Position, Range};

    fn reported(path: &str, line: u32, code: Option<&str>, message: &str) -> Reported {
        Reported {
            path: path.into(),
            line,
            column: 1,
            end_line: line,
            severity: Severity::Error,
            code: code.map(Into::into),
            message: message.into(),
        }
    }

    fn editor(line: u32, code: Option<&str>, message: &str) -> Diagnostic {
        Diagnostic {
            path: "app.py".into(),
            range: Range {
                start: Position {
                    line: line - 1,
                    character: 4,
                },
                end: Position {
                    line: line - 1,
                    character: 9,
                },
            },
            severity: Severity::Error,
            source: Some("Pylance".into()),
            code: code.map(Into::into),
            message: message.into(),
        }
    }

    const ARG: &str = "Argument of type \"Literal[3]\" cannot be assigned to parameter \"name\"";

    #[test]
    fn the_editors_diagnostic_is_found_by_message_code_and_line() {
        let run = vec![
            reported("app.py", 3, Some("reportArgumentType"), ARG),
            reported("app.py", 7, Some("reportArgumentType"), ARG),
            reported("other.py", 7, Some("reportArgumentType"), ARG),
            reported(
                "app.py",
                7,
                Some("reportAssignmentType"),
                "Type \"str\" is not assignable",
            ),
        ];
        // TS-style codes, the chain's tail, and a line the editor moved.
        let found = |d: &Diagnostic| find(d, &run).map(|r| (r.line, r.code.clone()));
        let code = Some("reportArgumentType");
        assert_eq!(
            found(&editor(7, code, ARG)),
            Some((7, code.map(Into::into)))
        );
        let chained = format!("{ARG}\n  \"Literal[3]\" is not assignable to \"str\"");
        assert_eq!(found(&editor(3, code, &chained)).map(|f| f.0), Some(3));
        assert_eq!(
            found(&editor(6, code, ARG)).map(|f| f.0),
            Some(7),
            "nearest"
        );
        assert_eq!(
            found(&editor(
                7,
                Some("reportAssignmentType"),
                "a message from an older server"
            ))
            .map(|f| f.0),
            Some(7),
            "same code on the line"
        );
        assert_eq!(found(&editor(7, Some("reportCallIssue"), "other")), None);
        assert_eq!(code_match(Some("TS2322"), Some("2322")), Some(true));
    }

    #[test]
    fn lines_follow_the_edits() {
        let old = "a\nb\nc\nd\ne\n";
        let new = "a\nnew 1\nnew 2\nb\nC!\nd\ne\n";
        let map = LineMap::new(old, new);
        assert_eq!(map.map(1), (1, 1));
        assert_eq!(map.map(2), (4, 4), "moved down by two inserted lines");
        assert_eq!(map.map(3), (5, 5), "replaced: the new line");
        assert_eq!(map.map(5), (7, 7));
        let deleted = LineMap::new(old, "a\nd\ne\n");
        assert_eq!(deleted.map(2), (2, 2), "deleted: where it was");
        assert_eq!(deleted.map(4), (2, 2));
    }

    #[test]
    fn a_diagnostic_is_still_there_where_its_line_went_or_as_often() {
        let target = reported("app.py", 2, Some("arg-type"), "Argument 1");
        let map = LineMap::new("a\nb\n", "x\ny\na\nb\n");
        let moved = vec![reported("app.py", 4, Some("arg-type"), "Argument 1")];
        assert!(still_there(&target, 1, &moved, Some(&map)).is_some());
        // Elsewhere, but as many as before: it moved with its code.
        let elsewhere = vec![reported("app.py", 1, Some("arg-type"), "Argument 1")];
        assert!(still_there(&target, 1, &elsewhere, Some(&map)).is_some());
        // Two before, one left at another line: the target's is gone.
        assert!(still_there(&target, 2, &elsewhere, Some(&map)).is_none());
        assert!(still_there(&target, 1, &[], Some(&map)).is_none());
    }

    #[test]
    fn new_problems_are_those_beyond_the_baseline_in_the_files_given() {
        let before = tally(
            &[
                reported("a.py", 1, Some("x"), "old"),
                reported("b.py", 1, Some("x"), "old"),
            ],
            Severity::Error,
        );
        let now = vec![
            reported("a.py", 9, Some("x"), "old"),
            reported("a.py", 10, Some("x"), "old"),
            reported("a.py", 11, Some("y"), "new"),
            reported("c.py", 1, Some("y"), "new"),
        ];
        let new: Vec<String> = new_problems(&before, &now, &["a.py".into()], Severity::Error)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(new, ["a.py:10: error [x]: old", "a.py:11: error [y]: new"]);
    }
}
