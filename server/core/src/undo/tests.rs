use expect_test::{Expect, expect};

use super::*;

fn text(s: &str) -> Recorded {
    Recorded::Text(s.to_owned())
}

fn file(path: &str, before: Recorded, after: Recorded) -> ChangedFile {
    ChangedFile {
        path: path.to_owned(),
        before,
        after,
    }
}

fn check(change: ChangedFile, now: Option<&str>, expect: Expect) {
    expect.assert_debug_eq(&plan_file(&change, now));
}

#[test]
fn a_line_typed_after_the_task_is_kept() {
    // The task changed line 2; the user then typed a line at the end.
    check(
        file("cart.py", text("a\nb\nc\n"), text("a\nB\nc\n")),
        Some("a\nB\nc\nd\n"),
        expect![[r#"
            Restore {
                text: "a\nb\nc\nd\n",
            }
        "#]],
    );
}

#[test]
fn a_line_typed_right_below_a_changed_line_is_kept() {
    check(
        file("cart.py", text("a\nb\nc\n"), text("a\nB\nc\n")),
        Some("a\nB\ntyped\nc\n"),
        expect![[r#"
            Restore {
                text: "a\nb\ntyped\nc\n",
            }
        "#]],
    );
}

#[test]
fn a_conflict_when_the_user_edited_the_lines_the_task_changed() {
    check(
        file("cart.py", text("a\nb\nc\n"), text("a\nB\nc\n")),
        Some("a\nBee\nc\nd\n"),
        expect![[r#"
            Conflict {
                clashes: [
                    Clash {
                        ours_line: 2,
                        base: "B\n",
                        ours: "Bee\n",
                        theirs: "b\n",
                    },
                ],
            }
        "#]],
    );
}

#[test]
fn edits_across_the_file_are_all_taken_back() {
    check(
        file(
            "m.py",
            text("1\n2\n3\n4\n5\n6\n"),
            text("1\nX\n3\n4\nY\n6\n"),
        ),
        Some("0\n1\nX\n3\n4\nY\n6\n7\n"),
        expect![[r#"
            Restore {
                text: "0\n1\n2\n3\n4\n5\n6\n7\n",
            }
        "#]],
    );
}

#[test]
fn a_file_as_it_was_is_left_alone() {
    check(
        file("a.py", text("x\n"), text("y\n")),
        Some("x\n"),
        expect![[r#"
            AsBefore
        "#]],
    );
}

#[test]
fn a_file_the_task_created_and_nobody_touched_is_removed() {
    check(
        file("new.py", Recorded::Absent, text("new\n")),
        Some("new\n"),
        expect![[r#"
            Remove
        "#]],
    );
    check(
        file("new.py", Recorded::Absent, text("new\n")),
        None,
        expect![[r#"
            AsBefore
        "#]],
    );
}

#[test]
fn a_file_the_task_created_and_the_user_edited_is_a_conflict_not_a_deletion() {
    check(
        file("new.py", Recorded::Absent, text("new\n")),
        Some("new\nmine\n"),
        expect![[r#"
            Conflict {
                clashes: [
                    Clash {
                        ours_line: 1,
                        base: "new\n",
                        ours: "new\nmine\n",
                        theirs: "",
                    },
                ],
            }
        "#]],
    );
}

#[test]
fn a_file_deleted_since_or_too_large_is_not_undone() {
    check(
        file("a.py", text("x\n"), text("y\n")),
        None,
        expect![[r#"
            Cannot {
                reason: "it was deleted since the task; not recreated",
            }
        "#]],
    );
    check(
        file("big.py", Recorded::TooLarge, text("y\n")),
        Some("y\n"),
        expect![[r#"
            Cannot {
                reason: "too large: Rein keeps files up to 1 MiB to undo them",
            }
        "#]],
    );
}

#[test]
fn a_file_that_held_a_secret_is_not_undone() {
    check(
        file(".env", Recorded::Secret, text("KEY=x\n")),
        Some("KEY=x\n"),
        expect![[r#"
            Cannot {
                reason: "it holds a secret (an API key), which Rein keeps nowhere; undo it by hand",
            }
        "#]],
    );
}

#[test]
fn hostile_paths_in_the_record_are_refused() {
    let refused: Vec<String> = [
        "",
        "/etc/passwd",
        "../outside.py",
        "a/../../b",
        "./a.py",
        "a//b",
        ".git/config",
        "sub/.git/hooks/pre-commit",
        ".rein/config.toml",
        "a\0b",
    ]
    .iter()
    .map(
        |path| match plan_file(&file(path, text("x\n"), text("y\n")), Some("y\n")) {
            FileUndo::Cannot { reason } => reason,
            other => format!("NOT REFUSED: {other:?}"),
        },
    )
    .collect();
    expect![[r#"
        [
            "refused: the recorded path \"\" is empty",
            "refused: the recorded path \"/etc/passwd\" is absolute",
            "refused: the recorded path \"../outside.py\" is not a plain path inside the workspace",
            "refused: the recorded path \"a/../../b\" is not a plain path inside the workspace",
            "refused: the recorded path \"./a.py\" is not a plain path inside the workspace",
            "refused: the recorded path \"a//b\" is not a plain path inside the workspace",
            "refused: the recorded path \".git/config\" is inside .git or .rein",
            "refused: the recorded path \"sub/.git/hooks/pre-commit\" is inside .git or .rein",
            "refused: the recorded path \".rein/config.toml\" is inside .git or .rein",
            "refused: the recorded path \"a\\0b\" contains a NUL byte",
        ]
    "#]]
    .assert_debug_eq(&refused);
}

#[test]
fn merge_cases() {
    // (base, ours, theirs) → merged, or the clashes' lines in ours.
    let cases = [
        ("both sides change nothing", "a\n", "a\n", "a\n"),
        (
            "the same change on both sides",
            "a\nb\n",
            "a\nc\n",
            "a\nc\n",
        ),
        (
            "line endings kept",
            "a\r\nb\r\n",
            "a\r\nb\r\nz\r\n",
            "a\r\nB\r\n",
        ),
        (
            "a line added after an unterminated last line the other side changed clashes",
            "a\nb",
            "a\nb\nc",
            "a\nB",
        ),
        (
            "two insertions at one place clash",
            "a\n",
            "a\nx\n",
            "a\ny\n",
        ),
        (
            "an insertion inside a changed block clashes",
            "a\nb\nc\nd\n",
            "a\nb\nnew\nc\nd\n",
            "a\nB\nC\nd\n",
        ),
        ("empty base", "", "x\n", ""),
    ];
    let rendered: Vec<String> = cases
        .iter()
        .map(
            |(name, base, ours, theirs)| match merge::merge3(base, ours, theirs) {
                Ok(text) => format!("{name}: {text:?}"),
                Err(clashes) => format!(
                    "{name}: clash at {:?}",
                    clashes.iter().map(|c| c.ours_line).collect::<Vec<_>>()
                ),
            },
        )
        .collect();
    expect![[r#"
        [
            "both sides change nothing: \"a\\n\"",
            "the same change on both sides: \"a\\nc\\n\"",
            "line endings kept: \"a\\r\\nB\\r\\nz\\r\\n\"",
            "a line added after an unterminated last line the other side changed clashes: clash at [2]",
            "two insertions at one place clash: clash at [2]",
            "an insertion inside a changed block clashes: clash at [2]",
            "empty base: \"x\\n\"",
        ]
    "#]]
    .assert_debug_eq(&rendered);
}

/// Random texts of a few distinct lines (a fixed generator: the same
/// cases every run).
fn texts(seed: u64, count: usize) -> Vec<String> {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    (0..count)
        .map(|_| {
            let lines = next() % 8;
            let mut text: String = (0..lines)
                .map(|_| ["a\n", "b\n", "c\n", "\n", "d\r\n", "e"][next() % 6])
                .collect();
            if next() % 4 == 0 {
                text.push_str("end");
            }
            text
        })
        .collect()
}

/// Nothing typed since the task: undo gives back exactly the text before
/// it. The task changed nothing: undo leaves the text as it is now.
#[test]
fn with_one_side_unchanged_the_merge_is_the_other_side_exactly() {
    let all = texts(35, 60);
    for base in &all {
        for other in all.iter().take(20) {
            assert_eq!(
                merge::merge3(base, base, other).as_deref(),
                Ok(other.as_str()),
                "ours unchanged: base {base:?}, theirs {other:?}"
            );
            assert_eq!(
                merge::merge3(base, other, base).as_deref(),
                Ok(other.as_str()),
                "theirs unchanged: base {base:?}, ours {other:?}"
            );
        }
    }
}
