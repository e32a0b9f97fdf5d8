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
                start: offsets[os],
                end: offsets[oe],
                new_text: new_lines[ns..ne].concat(),
            });
        }
    };
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { .. } => flush(&mut pending, &mut hunks),
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => extend(
                &mut pending,
                old_index,
                old_index + old_len,
                new_index,
                new_index,
            ),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => extend(
                &mut pending,
                old_index,
                old_index,
                new_index,
                new_index + new_len,
            ),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => extend(
                &mut pending,
                old_index,
                old_index + old_len,
                new_index,
                new_index + new_len,
            ),
        }
    }
    flush(&mut pending, &mut hunks);
    hunks
}

/// Adjacent changes become one hunk.
fn extend(
    pending: &mut Option<(usize, usize, usize, usize)>,
    os: usize,
    oe: usize,
    ns: usize,
    ne: usize,
) {
    *pending = Some(match *pending {
        Some((pos, _, pns, _)) => (pos, oe, pns, ne),
        None => (os, oe, ns, ne),
    });
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
}
