//! A three-way merge of lines: the changes from `base` to `ours` and from
//! `base` to `theirs`, both applied to `base`. Undo calls it with the
//! task's result as `base`, the file now as `ours` and the file before the
//! task as `theirs`: the task's own edits are taken back, what the user
//! typed since is kept.
//!
//! Written on `similar` (already the workspace's diff) rather than taken
//! from `diffy::merge`, which answers a conflict only with a text full of
//! markers: undo must report each conflicting region and leave the file
//! untouched, so it needs the regions themselves.

use similar::{Algorithm, DiffOp};

/// One side's change: base lines `start..end` replaced by `lines`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Change<'a> {
    start: usize,
    end: usize,
    lines: Vec<&'a str>,
}

/// A region both sides changed differently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clash {
    /// 1-based line in `ours` where the region starts.
    pub ours_line: usize,
    /// The region as it is in `base`, `ours` and `theirs`.
    pub base: String,
    pub ours: String,
    pub theirs: String,
}

/// `base` with both sides' changes, or the regions where they clash.
pub fn merge3(base: &str, ours: &str, theirs: &str) -> Result<String, Vec<Clash>> {
    let base_lines: Vec<&str> = base.split_inclusive('\n').collect();
    let ours_changes = changes(base, ours);
    let theirs_changes = changes(base, theirs);

    // Every change, tagged by side, in base order.
    let mut all: Vec<(Side, &Change<'_>)> = ours_changes
        .iter()
        .map(|c| (Side::Ours, c))
        .chain(theirs_changes.iter().map(|c| (Side::Theirs, c)))
        .collect();
    all.sort_by_key(|(side, c)| (c.start, c.end, *side));

    let mut out = String::with_capacity(base.len().max(ours.len()));
    let mut clashes = Vec::new();
    let mut cursor = 0;
    // How many lines `ours` has more than `base` before the cursor.
    let mut ours_shift: isize = 0;
    let mut i = 0;
    while let Some((_, first)) = all.get(i) {
        // A group: the changes that touch one another.
        let (mut start, mut end) = (first.start, first.end);
        let mut j = i + 1;
        while let Some((_, next)) = all.get(j) {
            if !touch((start, end), (next.start, next.end)) {
                break;
            }
            start = start.min(next.start);
            end = end.max(next.end);
            j += 1;
        }
        let group = all.get(i..j).unwrap_or_default();
        push_lines(&mut out, base_lines.get(cursor..start));
        let ours_region = side_region(&base_lines, group, Side::Ours, start, end);
        let theirs_region = side_region(&base_lines, group, Side::Theirs, start, end);
        let ours_touched = group.iter().any(|(s, _)| *s == Side::Ours);
        let theirs_touched = group.iter().any(|(s, _)| *s == Side::Theirs);
        let taken = if ours_touched && theirs_touched && ours_region != theirs_region {
            let ours_line = (start as isize + ours_shift).max(0) as usize + 1;
            clashes.push(Clash {
                ours_line,
                base: base_lines.get(start..end).unwrap_or_default().concat(),
                ours: ours_region.concat(),
                theirs: theirs_region.concat(),
            });
            &ours_region
        } else if theirs_touched {
            &theirs_region
        } else {
            &ours_region
        };
        out.extend(taken.iter().copied());
        ours_shift += ours_region.len() as isize - (end - start) as isize;
        cursor = end;
        i = j;
    }
    push_lines(&mut out, base_lines.get(cursor..));
    if clashes.is_empty() {
        Ok(out)
    } else {
        Err(clashes)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Side {
    Ours,
    Theirs,
}

fn push_lines(out: &mut String, lines: Option<&[&str]>) {
    for line in lines.unwrap_or_default() {
        out.push_str(line);
    }
}

/// Whether two base ranges are one region. Overlapping lines are; so is an
/// insertion strictly inside the other range, or two insertions at the
/// same place (their order is not knowable). An insertion at the edge of
/// the other's range is not: it goes before or after it, and a line typed
/// next to a line the task changed stays (the case undo is for).
fn touch(a: (usize, usize), b: (usize, usize)) -> bool {
    let empty = |r: (usize, usize)| r.0 == r.1;
    match (empty(a), empty(b)) {
        (false, false) => a.0 < b.1 && b.0 < a.1,
        (true, false) => b.0 < a.0 && a.0 < b.1,
        (false, true) => a.0 < b.0 && b.0 < a.1,
        (true, true) => a.0 == b.0,
    }
}

/// Base lines `start..end` with `side`'s changes among `group` applied.
fn side_region<'a>(
    base: &[&'a str],
    group: &[(Side, &Change<'a>)],
    side: Side,
    start: usize,
    end: usize,
) -> Vec<&'a str> {
    let mut region = Vec::new();
    let mut at = start;
    for (_, change) in group.iter().filter(|(s, _)| *s == side) {
        region.extend(base.get(at..change.start).unwrap_or_default());
        region.extend(change.lines.iter().copied());
        at = change.end;
    }
    region.extend(base.get(at..end).unwrap_or_default());
    region
}

/// The changes that turn `old` into `new`, by lines (endings kept), in
/// order, never adjacent (consecutive edits are one change). Positions are
/// counted from the ops' lengths, in order: `similar` can report an op's
/// `old_index` off by the ops before it when lines repeat (a delete then
/// an insert around an equal line: regression test
/// `with_one_side_unchanged_the_merge_is_the_other_side_exactly`).
fn changes<'a>(old: &str, new: &'a str) -> Vec<Change<'a>> {
    let new_lines: Vec<&'a str> = new.split_inclusive('\n').collect();
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let ops = similar::capture_diff_slices(Algorithm::Patience, &old_lines, &new_lines);
    let mut out: Vec<Change<'a>> = Vec::new();
    // (old start, old end, new start, new end) of the change being built.
    let mut pending: Option<(usize, usize, usize, usize)> = None;
    let (mut old_at, mut new_at) = (0, 0);
    for op in &ops {
        let (old_len, new_len) = match *op {
            DiffOp::Equal { len, .. } => {
                if let Some((os, oe, ns, ne)) = pending.take() {
                    out.push(Change {
                        start: os,
                        end: oe,
                        lines: new_lines.get(ns..ne).unwrap_or_default().to_vec(),
                    });
                }
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
    if let Some((os, oe, ns, ne)) = pending {
        out.push(Change {
            start: os,
            end: oe,
            lines: new_lines.get(ns..ne).unwrap_or_default().to_vec(),
        });
    }
    out
}
