//! What an ACP prompt asks for, as a Rein task: "fix the failing test
//! PATH::NAME" is a fix-test task (with the verifier's verdict); anything
//! else is an instruction, with the context the client embedded in the
//! prompt (files the user attached) quoted after it.

use rein_core::os::disk::DiskWorkspace;
use rein_core::task::{TaskId, TaskSpec};

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

/// Embedded text beyond this is cut: the prompt is not the place for a
/// whole repository (the model reads files itself).
const EMBEDDED_LIMIT: usize = 64 * 1024;

/// The task a prompt asks for; an instruction is read with `earlier`, how
/// the session's earlier prompts ended (a follow-up: "now rename it").
pub async fn task_spec(
    disk: &DiskWorkspace,
    prompt: &[ContentBlock],
    earlier: Option<String>,
) -> Result<TaskSpec, String> {
    let text = prompt_text(prompt);
    if let Some(target) = fix_test_target(&text) {
        let (path, name) = rein_app::find_test::find_test(disk, &target).await?;
        return Ok(TaskSpec::fix_test(TaskId::generate(), &path, &name));
    }
    let text = text.trim();
    if text.is_empty() {
        return Err("the prompt is empty: say what to do".into());
    }
    let text = match earlier {
        Some(earlier) => format!("{text}\n\n{earlier}"),
        None => text.to_owned(),
    };
    Ok(TaskSpec::instruction(TaskId::generate(), &text))
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
