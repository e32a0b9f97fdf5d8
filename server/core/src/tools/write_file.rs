//! `write_file`: a file the model has read, written whole — the edit
//! format small models handle (Aider's "whole" format): no `old_text` to
//! quote exactly. Applied as an `edit_file` of the file's whole text as
//! the model read it, so approval, the stale-edit rule, the test's
//! protection and the journal are the same.

use async_trait::async_trait;
use rein_models::REDACTED;
use schemars::JsonSchema;
use serde::Deserialize;

use super::call::Call;
use super::registry::{Described, Effect, PredictedEdit, ProposedChange, TypedTool};
use super::{ToolOutput, edit_file, files};
use crate::permissions::{Action, Decision, RuleTarget, Subject};

pub struct WriteFile;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The file to rewrite, relative to the project root.
    #[schemars(length(min = 1))]
    path: String,
    /// The whole new content of the file.
    content: String,
}

/// The permission action of writing `path` (resolved).
pub fn action(path: &str) -> Action<'_> {
    Action {
        tool: WriteFile::NAME,
        subject: Subject::Write {
            path,
            verb: "rewriting",
        },
    }
}

#[async_trait]
impl TypedTool for WriteFile {
    type Input = Input;
    const NAME: &'static str = "write_file";
    const DESCRIPTION: &'static str = "Replace the whole content of a file you have read with new content (the complete file, every line, not only the changed part). Simpler than edit_file for a small file or when many lines change. The change is shown to the user, who may approve or reject it. If the file changed since you read it, it is refused and you must read it again. Does not create files (use create_file).";
    const EFFECT: Effect = Effect::EditsWorkspace;
    const RULE_TARGET: RuleTarget = RuleTarget::Path;

    fn describe(input: &Input) -> Described {
        Described {
            title: format!("rewriting {}", input.path),
            detail: format!(
                "{} ({} lines, whole file)",
                input.path,
                input.content.lines().count()
            ),
        }
    }

    fn predicted_edit(input: &Input, current: Option<&str>) -> Option<PredictedEdit> {
        Some(PredictedEdit {
            path: input.path.clone(),
            after: current.map(|_| input.content.clone()),
        })
    }

    fn proposed_change(input: &Input) -> Option<ProposedChange> {
        Some(ProposedChange {
            path: input.path.clone(),
            old_text: None,
            new_text: input.content.clone(),
            replace_all: false,
        })
    }

    async fn run(&self, input: Input, call: &Call<'_, '_>) -> Result<ToolOutput, String> {
        let path = call.resolve(&input.path)?;
        let cx = call.cx();
        let Some(read) = cx.reads.get(&path) else {
            // edit_file says why (not read, or not there).
            return Ok(files::edit_file(cx, edit_args(&path, "", &input.content), false).await);
        };
        let current = cx
            .workspace
            .read_file(&path)
            .await
            .map_err(|e| format!("cannot read {path}: {e}"))?;
        // The text as the model read it is the only text it may replace:
        // what the user typed since is not the model's to overwrite.
        if current.version.hash != read.hash {
            return Err(format!(
                "{path} changed since you read it (someone is editing it). Read it again with read_file, then write it."
            ));
        }
        // The model saw a marker where the file holds a secret: whatever it
        // writes back whole (the marker, or nothing) destroys that secret.
        if !call.shown_as_is(&current.text) {
            return Err(format!(
                "{path} holds a secret Rein hides from you ({REDACTED}); rewriting the whole file would destroy it. Change the file with edit_file, leaving that line alone."
            ));
        }
        if current.text.is_empty() {
            return Err(format!(
                "{path} is empty: there is no text for write_file to replace (it rewrites what you read). Use create_file for content in a new file."
            ));
        }
        if let Some(why) = not_whole(&path, &current.text, &input.content) {
            return Err(why);
        }
        let whole = edit_file::Input::whole(&path, &current.text, &input.content);
        edit_file::protect_test(call, &path, &whole).await?;
        let confirm = call.permit(&action(&path)).await? == Decision::Ask;
        Ok(files::edit_file(cx, edit_args(&path, &current.text, &input.content), confirm).await)
    }
}

/// Files over this many lines are not rewritten with less than half of
/// their lines: that is a part written as the whole.
const SHRINK_GUARD_LINES: usize = 60;

/// Why `content` is not a whole new version of `current`, if it is not:
/// it elides lines ("# ... rest unchanged"), or keeps too little of a long
/// file. Written as given, either would delete the code it left out.
pub(crate) fn not_whole(path: &str, current: &str, content: &str) -> Option<String> {
    let old: std::collections::HashSet<&str> = current.lines().map(str::trim).collect();
    let elision = content
        .lines()
        .map(str::trim)
        .filter(|line| !old.contains(line))
        .find(|line| is_elision(line));
    if let Some(line) = elision {
        return Some(format!(
            "write_file replaces the whole file, and your content leaves part of {path} out ({line:?}): that part would be deleted. Write every line of the file, or change part of it with edit_file."
        ));
    }
    // Asked for the function it changes, a model may write only a method:
    // indented throughout, it is part of a class, and as the whole file it
    // would delete everything around it.
    let indented = |text: &str| {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .all(|l| l.starts_with(char::is_whitespace))
    };
    if content.lines().any(|l| !l.trim().is_empty()) && indented(content) && !indented(current) {
        return Some(format!(
            "write_file replaces the whole file, and your content is indented throughout: it is a part of {path} (a method?), and everything around it would be deleted. Write the whole class or function it belongs to, from its unindented first line, or the whole file."
        ));
    }
    let (was, now) = (current.lines().count(), content.lines().count());
    if was > SHRINK_GUARD_LINES && now * 2 < was {
        return Some(format!(
            "write_file replaces the whole file: your content has {now} lines where {path} has {was}, so most of it would be deleted. Write every line of the file, or change part of it with edit_file."
        ));
    }
    None
}

/// "# ... rest of the code unchanged", "// … existing code …", "<rest of file>".
fn is_elision(line: &str) -> bool {
    let lower = line.to_lowercase();
    let dots = lower.contains("...") || lower.contains('…');
    let said = [
        "rest of",
        "existing code",
        "unchanged",
        "remains the same",
        "remain the same",
        "same as before",
        "omitted",
        "remaining code",
    ]
    .iter()
    .any(|w| lower.contains(w));
    // Without dots or brackets it may be a real comment ("keep the rest
    // of the list unchanged").
    said && (dots || (lower.starts_with('<') && lower.ends_with('>')))
}

fn edit_args<'a>(path: &'a str, old_text: &'a str, new_text: &'a str) -> files::EditArgs<'a> {
    files::EditArgs {
        path,
        old_text,
        new_text,
        replace_all: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asked for the function it changes, a model wrote only the method.
    #[test]
    fn a_method_written_alone_is_not_the_whole_file() {
        let current = "class Cart:\n    def total(self):\n        return 0\n";
        let method = "    def total(self):\n        return sum(self.items)\n";
        expect_test::expect!["write_file replaces the whole file, and your content is indented throughout: it is a part of cart.py (a method?), and everything around it would be deleted. Write the whole class or function it belongs to, from its unindented first line, or the whole file."]
            .assert_eq(&not_whole("cart.py", current, method).unwrap());
        // A file indented throughout is its own; the whole class is whole.
        assert_eq!(not_whole("a.txt", "  a\n  b\n", "  c\n"), None);
        assert_eq!(
            not_whole("cart.py", current, &format!("class Cart:\n{method}")),
            None
        );
        assert_eq!(not_whole("cart.py", current, ""), None);
    }

    #[test]
    fn a_file_written_with_parts_left_out_is_not_whole() {
        let current = "def a():\n    return 1\n\ndef b():\n    return 2\n";
        for elided in [
            "def a():\n    return 3\n\n# ... rest of the file unchanged ...\n",
            "def a():\n    return 3\n// … existing code …\n",
            "def a():\n    return 3\n<rest of file>\n",
            "def a():\n    return 3\n    # ... remaining code omitted\n",
        ] {
            assert!(not_whole("m.py", current, elided).is_some(), "{elided}");
        }
        assert_eq!(
            not_whole(
                "m.py",
                current,
                "def a():\n    return 3\n\ndef b():\n    return 2\n"
            ),
            None
        );
        // A line the file already had is the file's, not an elision.
        let with_comment = "# ... rest of setup is in conf.py\nx = 1\n";
        assert_eq!(
            not_whole(
                "m.py",
                with_comment,
                "# ... rest of setup is in conf.py\nx = 2\n"
            ),
            None
        );
        assert_eq!(
            not_whole(
                "m.py",
                current,
                "# keep the rest of the list unchanged\nx = 2\n"
            ),
            None
        );
        // Dropping a small file's docstring is a choice; dropping most of
        // a long file is a part written as the whole.
        assert_eq!(not_whole("m.py", current, "def a():\n    return 3\n"), None);
        let long = "x = 1\n".repeat(100);
        assert!(not_whole("m.py", &long, &"x = 2\n".repeat(40)).is_some());
        assert_eq!(not_whole("m.py", &long, &"x = 2\n".repeat(60)), None);
    }
}
