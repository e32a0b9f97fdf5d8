//! Minimal hunks between two texts: what an editor is asked to change so
//! that only the lines that differ are touched (a whole-file replacement
//! would move the user's cursor, fold state and undo history, and hide
//! what changed in the approval preview).

use similar::{Algorithm, DiffOp, TextDiff};

/// Replace `old[start..end]` (byte offsets of whole lines in the old text)
/// by `new_text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    pub start: usize,
    pub end: usize,
    pub new_text: String,
}

/// The hunks that turn `old` into `new`, in order, non-overlapping.
pub fn line_hunks(old: &str, new: &str) -> Vec<Hunk> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Patience)
        .diff_lines(old, new);
    let old_lines = diff.old_slices();
    let new_lines = diff.new_slices();
    // Byte offset where each old line starts (plus the end).
    let mut offsets = Vec::with_capacity(old_lines.len() + 1);
    let mut at = 0;
    for line in old_lines {
        offsets.push(at);
        at += line.len();
    }
    offsets.push(at);

    let mut hunks: Vec<Hunk> = Vec::new();
    let mut pending: Option<(usize, usize, usize, usize)> = None; // old start/end, new start/end
    let flush = |pending: &mut Option<(usize, usize, usize, usize)>, hunks: &mut Vec<Hunk>| {
        if let Some((os, oe, ns, ne)) = pending.take() {
            hunks.push(Hunk {
                start: offsets.get(os).copied().unwrap_or(at),
                end: offsets.get(oe).copied().unwrap_or(at),
                new_text: new_lines.get(ns..ne).unwrap_or_default().concat(),
            });
        }
    };
    // Positions are counted from the ops' lengths, in order: `similar` can
    // report an op's `old_index` off by the ops before it when lines
    // repeat (a delete, an equal line, an insert: the test's case), and a
    // hunk placed there would make the editor's text wrong.
    let (mut old_at, mut new_at) = (0, 0);
    for op in diff.ops() {
        let (old_len, new_len) = match *op {
            DiffOp::Equal { len, .. } => {
                flush(&mut pending, &mut hunks);
                old_at += len;
                new_at += len;
                continue;
            }
            DiffOp::Delete { old_len, .. } => (old_len, 0),
            DiffOp::Insert { new_len, .. } => (0, new_len),
            DiffOp::Replace {
                old_len, new_len, ..
            } => (old_len, new_len),
        };
        let (os, ns) = pending.map_or((old_at, new_at), |(os, _, ns, _)| (os, ns));
        old_at += old_len;
        new_at += new_len;
        pending = Some((os, old_at, ns, new_at));
    }
    flush(&mut pending, &mut hunks);
    hunks
}

/// Applies hunks to `old` (for checking, and for clients that want text).
pub fn apply(old: &str, hunks: &[Hunk]) -> String {
    let mut out = String::with_capacity(old.len());
    let mut at = 0;
    for h in hunks {
        out.push_str(&old[at..h.start]);
        out.push_str(&h.new_text);
        at = h.end;
    }
    out.push_str(&old[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(old: &str, new: &str, expected_hunks: usize) {
        let hunks = line_hunks(old, new);
        assert_eq!(apply(old, &hunks), new, "{old:?} → {new:?}: {hunks:?}");
        assert_eq!(hunks.len(), expected_hunks, "{hunks:?}");
    }

    #[test]
    fn only_changed_lines_are_touched() {
        let old = "a\nb\nc\nd\ne\n";
        check(old, "a\nB\nc\nd\ne\n", 1);
        check(old, "a\nB\nc\nD\ne\n", 2);
        check(old, "a\nb\nc\nd\ne\nf\n", 1);
        check(old, "b\nc\nd\ne\n", 1);
        check("", "new file\n", 1);
        check("x", "x\n", 1);
        check("same\r\nlines\r\n", "same\r\nLINES\r\n", 1);
        check("no newline at end", "no newline at the end", 1);
        check(old, old, 0);
        // Repeated lines: `similar` reports an op's `old_index` off here.
        check("d\r\na\nd\r\n", "a\n\nc\na\n\nd\r\ne", 3);
        let hunks = line_hunks(old, "a\nB\nc\nd\ne\n");
        assert_eq!(
            hunks,
            vec![Hunk {
                start: 2,
                end: 4,
                new_text: "B\n".into()
            }]
        );
    }

    /// The hunks rebuild the new text exactly, for generated texts full of
    /// repeated lines (where `similar`'s reported indices went wrong).
    #[test]
    fn hunks_rebuild_the_new_text_exactly() {
        let mut state: u64 = 36;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        let texts: Vec<String> = (0..80)
            .map(|_| {
                let lines = next() % 9;
                (0..lines)
                    .map(|_| ["a\n", "b\n", "\n", "d\r\n", "e"][next() % 5])
                    .collect()
            })
            .collect();
        for old in &texts {
            for new in &texts {
                let hunks = line_hunks(old, new);
                assert_eq!(apply(old, &hunks), *new, "{old:?} → {new:?}: {hunks:?}");
            }
        }
    }
}
