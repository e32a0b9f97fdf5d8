//! Reading the texts that branch conditions look at out of a request, for
//! either wire format.

use serde_json::Value;

use super::WireFormat;
use super::scenario::Condition;

/// The texts of one request that conditions can match.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct RequestTexts {
    pub(crate) last_tool_result: Option<String>,
    pub(crate) last_user_text: Option<String>,
    pub(crate) system: String,
}

impl RequestTexts {
    pub(crate) fn of(format: WireFormat, body: &Value) -> Self {
        let messages = body
            .get("messages")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        match format {
            WireFormat::Anthropic => anthropic(body, messages),
            WireFormat::OpenAi => openai(messages),
        }
    }

    pub(crate) fn matches(&self, condition: &Condition) -> bool {
        match condition {
            Condition::LastToolResultContains(needle) => self
                .last_tool_result
                .as_ref()
                .is_some_and(|text| text.contains(needle.as_str())),
            Condition::LastUserTextContains(needle) => self
                .last_user_text
                .as_ref()
                .is_some_and(|text| text.contains(needle.as_str())),
            Condition::SystemContains(needle) => self.system.contains(needle.as_str()),
        }
    }
}

fn anthropic(body: &Value, messages: &[Value]) -> RequestTexts {
    let blocks_of = |message: &Value| match message.get("content") {
        Some(Value::Array(blocks)) => blocks.clone(),
        Some(Value::String(text)) => vec![serde_json::json!({"type": "text", "text": text})],
        _ => Vec::new(),
    };
    let user_messages = messages.iter().filter(|m| role(m) == Some("user"));
    let last_tool_result = user_messages
        .clone()
        .flat_map(blocks_of)
        .rfind(|block| block_type(block) == Some("tool_result"))
        .map(|block| content_text(block.get("content")));
    let last_user_text = user_messages
        .filter_map(|message| {
            let texts: Vec<String> = blocks_of(message)
                .iter()
                .filter(|block| block_type(block) == Some("text"))
                .filter_map(|block| {
                    block
                        .get("text")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        })
        .next_back();
    RequestTexts {
        last_tool_result,
        last_user_text,
        system: content_text(body.get("system")),
    }
}

fn openai(messages: &[Value]) -> RequestTexts {
    RequestTexts {
        last_tool_result: texts_of(messages, &["tool"]).last(),
        last_user_text: texts_of(messages, &["user"])
            .filter(|text| !text.is_empty())
            .last(),
        system: texts_of(messages, &["system", "developer"])
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// The content texts of the messages with one of `roles`, in order.
fn texts_of<'a>(messages: &'a [Value], roles: &'a [&str]) -> impl Iterator<Item = String> + 'a {
    messages
        .iter()
        .filter(move |message| role(message).is_some_and(|r| roles.contains(&r)))
        .map(|message| content_text(message.get("content")))
}

fn role(message: &Value) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

/// A string, or the text parts of an array of blocks joined by newlines.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|part| block_type(part) == Some("text"))
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn anthropic_texts_skip_tool_result_only_user_messages() {
        let body = json!({
            "system": [{"type": "text", "text": "You are Rein."}],
            "messages": [
                {"role": "user", "content": "fix the cart"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "run", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                    "content": [{"type": "text", "text": "1 FAILED"}]}]},
            ]
        });
        let texts = RequestTexts::of(WireFormat::Anthropic, &body);
        assert_eq!(
            texts,
            RequestTexts {
                last_tool_result: Some("1 FAILED".into()),
                last_user_text: Some("fix the cart".into()),
                system: "You are Rein.".into(),
            }
        );
    }

    #[test]
    fn openai_texts_come_from_roles() {
        let body = json!({"messages": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": null, "tool_calls": []},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ]});
        let texts = RequestTexts::of(WireFormat::OpenAi, &body);
        assert!(texts.matches(&Condition::SystemContains("brief".into())));
        assert!(texts.matches(&Condition::LastUserTextContains("hi".into())));
        assert!(texts.matches(&Condition::LastToolResultContains("ok".into())));
        assert!(!texts.matches(&Condition::LastToolResultContains("FAILED".into())));
    }
}
