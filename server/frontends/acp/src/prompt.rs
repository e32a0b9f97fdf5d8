//! What an ACP prompt asks for, as a Rein task: "fix the failing test
//! PATH::NAME" is a fix-test task (with the verifier's verdict); "fix the
//! error at FILE:LINE[:MESSAGE]" a fix-diagnostic task (the diagnostic
//! found in the project's checker's report, which judges it); anything
//! else is an instruction, with the context the client embedded in the
//! prompt (files the user attached) quoted after it.

use rein_app::fix_error::ErrorTarget;
use rein_core::os::disk::DiskWorkspace;
use rein_core::task::{TaskId, TaskSpec};

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

/// Embedded text beyond this is cut: the prompt is not the place for a
/// whole repository (the model reads files itself).
const EMBEDDED_LIMIT: usize = 64 * 1024;

/// What a prompt asks for.
pub enum Asked {
    Task(TaskSpec),
    /// A diagnostic by place: found by the checker once the task's
    /// settings are known.
    FixError(ErrorTarget),
}

/// The task a prompt asks for; an instruction is read with `earlier`, how
/// the session's earlier prompts ended (a follow-up: "now rename it").
pub async fn task_spec(
    disk: &DiskWorkspace,
    prompt: &[ContentBlock],
    earlier: Option<String>,
) -> Result<Asked, String> {
    let text = prompt_text(prompt);
    if let Some(target) = fix_test_target(&text) {
        let (path, name) = rein_app::find_test::find_test(disk, &target).await?;
        return Ok(Asked::Task(TaskSpec::fix_test(
            TaskId::generate(),
            &path,
            &name,
        )));
    }
    if let Some(target) = fix_error_target(&text) {
        return target.map(Asked::FixError);
    }
    let text = text.trim();
    if text.is_empty() {
        return Err("the prompt is empty: say what to do".into());
    }
    let text = match earlier {
        Some(earlier) => format!("{text}\n\n{earlier}"),
        None => text.to_owned(),
    };
    Ok(Asked::Task(TaskSpec::instruction(
        TaskId::generate(),
        &text,
    )))
}

/// The prompt's words alone (what the user typed), as a session records
/// and replays them; attached files are the workspace's, not the record's.
pub fn prompt_words(prompt: &[ContentBlock]) -> String {
    let words: Vec<&str> = prompt
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect();
    words.join("\n")
}

/// The prompt's words, then each embedded resource as a fenced block
/// named by its URI, and each linked resource by name.
pub fn prompt_text(prompt: &[ContentBlock]) -> String {
    let mut words = Vec::new();
    let mut context = Vec::new();
    for block in prompt {
        match block {
            ContentBlock::Text(text) => words.push(text.text.clone()),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(file) => {
                    let mut text = file.text.clone();
                    if text.len() > EMBEDDED_LIMIT {
                        let mut cut = EMBEDDED_LIMIT;
                        while !text.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        text.truncate(cut);
                        text.push_str("\n… (cut: read the file for the rest)");
                    }
                    context.push(format!(
                        "The user attached {}:\n```\n{}\n```",
                        file.uri, text
                    ));
                }
                EmbeddedResourceResource::BlobResourceContents(blob) => {
                    context.push(format!(
                        "The user attached {} (binary, not shown).",
                        blob.uri
                    ));
                }
                _ => {}
            },
            ContentBlock::ResourceLink(link) => {
                context.push(format!("The user points to {} ({}).", link.name, link.uri));
            }
            // Images and audio: Rein's prompt capabilities do not offer them.
            _ => {}
        }
    }
    let mut out = words.join("\n");
    for part in context {
        out.push_str("\n\n");
        out.push_str(&part);
    }
    out
}

/// `PATH::NAME` when the prompt's first line asks to fix a (failing) test:
/// "Fix the failing test tests/test_cart.py::TestCart.test_total".
pub fn fix_test_target(text: &str) -> Option<String> {
    let first = text.lines().find(|l| !l.trim().is_empty())?.trim();
    let lower = first.to_lowercase();
    let rest = [
        "fix the failing test ",
        "fix failing test ",
        "fix the test ",
        "fix test ",
    ]
    .iter()
    .find_map(|lead| lower.starts_with(lead).then(|| &first[lead.len()..]))?;
    let target = rest
        .split_whitespace()
        .next()?
        .trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | '.' | ','));
    target.contains("::").then(|| target.to_owned())
}

/// `FILE:LINE[:MESSAGE]` when the prompt's first line asks to fix an error
/// or a warning at a place: "Fix the error at app.py:7", "fix the warning
/// `src/lib.rs:12:unused variable`". `Some(Err)`: it asks, but the place
/// is not one (said back to the user).
pub fn fix_error_target(text: &str) -> Option<Result<ErrorTarget, String>> {
    let first = text.lines().find(|l| !l.trim().is_empty())?.trim();
    let lower = first.to_lowercase();
    let rest = [
        "fix the error at ",
        "fix the error in ",
        "fix the error ",
        "fix error at ",
        "fix error ",
        "fix the warning at ",
        "fix the warning in ",
        "fix the warning ",
        "fix warning at ",
        "fix warning ",
    ]
    .iter()
    .find_map(|lead| lower.starts_with(lead).then(|| &first[lead.len()..]))?;
    let clean = |t: &str| {
        t.trim()
            .trim_start_matches(['`', '"', '\''])
            .trim_end_matches(['`', '"', '\'', '.', ','])
            .to_owned()
    };
    let whole = clean(rest);
    // "app.py:7 please": the place is the first word.
    let word = clean(rest.split_whitespace().next().unwrap_or_default());
    // A place has a line: "the error in my code" is an instruction.
    if !word.contains(':') {
        return None;
    }
    Some(ErrorTarget::parse(&whole).or_else(|_| ErrorTarget::parse(&word)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ResourceLink, TextContent, TextResourceContents,
    };

    #[test]
    fn a_fix_test_prompt_names_its_target() {
        let cases = [
            (
                "Fix the failing test tests/test_cart.py::TestCart.test_total",
                Some("tests/test_cart.py::TestCart.test_total"),
            ),
            (
                "fix test `tests/test_cart.py::test_total`.\nIt broke today.",
                Some("tests/test_cart.py::test_total"),
            ),
            ("Fix the failing test test_total", None),
            ("Please fix the failing test a.py::b", None),
            ("Explain tests/test_cart.py::test_total", None),
        ];
        for (prompt, target) in cases {
            assert_eq!(fix_test_target(prompt).as_deref(), target, "{prompt}");
        }
    }

    #[test]
    fn a_fix_error_prompt_names_its_place() {
        let cases = [
            ("Fix the error at app.py:7", Some(Ok("app.py:7"))),
            (
                "fix the warning `src/lib.rs:12:unused variable`.",
                Some(Ok("src/lib.rs:12:unused variable")),
            ),
            (
                "Fix the error at app.py:7 please\nthanks",
                Some(Ok("app.py:7")),
            ),
            ("Fix the error in app.py:seven", Some(Err(()))),
            ("Fix the error in my code", None),
            ("Explain the error at app.py:7", None),
        ];
        for (prompt, expected) in cases {
            let got = fix_error_target(prompt).map(|r| r.map(|t| t.to_string()).map_err(|_| ()));
            assert_eq!(got, expected.map(|r| r.map(str::to_owned)), "{prompt}");
        }
    }

    #[test]
    fn embedded_context_follows_the_words() {
        let prompt = vec![
            ContentBlock::Text(TextContent::new("Rename total to sum_total.")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "def total(items): ...",
                    "file:///p/cart.py",
                )),
            )),
            ContentBlock::ResourceLink(ResourceLink::new("README.md", "file:///p/README.md")),
        ];
        assert_eq!(
            prompt_text(&prompt),
            "Rename total to sum_total.\n\nThe user attached file:///p/cart.py:\n```\ndef total(items): ...\n```\n\nThe user points to README.md (file:///p/README.md)."
        );
    }
}
