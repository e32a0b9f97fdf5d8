//! Token counts before sending, so the context manager can budget.
//!
//! Counts use OpenAI's `o200k_base` encoding. For OpenAI models that is the
//! real tokenizer; for Anthropic and local models it is an estimate (their
//! tokenizers are not public or differ), typically within 10–20%. After a
//! call, the provider's reported usage is the truth.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

use crate::types::{ModelRequest, Part};

/// Per-message framing the providers add around content (role markers).
const MESSAGE_OVERHEAD: u64 = 4;

fn bpe() -> Option<&'static CoreBPE> {
    static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();
    BPE.get_or_init(|| match tiktoken_rs::o200k_base() {
        Ok(bpe) => Some(bpe),
        Err(error) => {
            tracing::warn!(%error, "tokenizer unavailable; estimating tokens as bytes / 4");
            None
        }
    })
    .as_ref()
}

/// Tokens in `text`.
pub fn count_text(text: &str) -> u64 {
    match bpe() {
        Some(bpe) => bpe.encode_ordinary(text).len() as u64,
        None => text.len().div_ceil(4) as u64,
    }
}

/// Tokens in one part of a message.
pub fn count_part(part: &Part) -> u64 {
    match part {
        Part::Text { text } | Part::Thinking { text, .. } => count_text(text),
        Part::ToolCall(call) => count_text(&call.name) + count_text(&call.arguments.to_string()),
        Part::ToolResult(result) => count_text(&result.content) + 2,
    }
}

/// An estimate of the input tokens of a whole request: system, tools and
/// messages.
pub fn estimate_request(request: &ModelRequest) -> u64 {
    let system: u64 = request.system.iter().map(|s| count_text(s)).sum();
    let tools: u64 = request
        .tools
        .iter()
        .map(|t| {
            count_text(&t.name)
                + count_text(&t.description)
                + count_text(&t.input_schema.to_string())
        })
        .sum();
    let messages: u64 = request
        .messages
        .iter()
        .map(|m| MESSAGE_OVERHEAD + m.parts.iter().map(count_part).sum::<u64>())
        .sum();
    system + tools + messages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_real_tokens() {
        // o200k_base: "hello world" is two tokens.
        assert_eq!(count_text("hello world"), 2);
        assert_eq!(count_text(""), 0);
        let long =
            "fn total(items: &[Item]) -> u64 { items.iter().map(|i| i.price).sum() }\n".repeat(100);
        let n = count_text(&long);
        assert!((1_000..3_000).contains(&n), "{n}");
    }
}
