//! An MCP tool's output within its token cap (`max_output_tokens`, 25,000
//! by default): over it, the whole output is saved among the task's
//! artifacts and the model gets its head, its tail and where the rest is.

use rein_core::tools::call::{Artifact, Call};
use rein_models::tokens::count_text;

/// `text` if it fits `max_tokens`, else its head and tail with a pointer.
pub async fn cap(text: String, max_tokens: u64, call: &Call<'_, '_>) -> String {
    let Some(tokens) = over(&text, max_tokens) else {
        return text;
    };
    let name = format!("mcp-{}-full.txt", crate::names::artifact_safe(call.id()));
    let where_ = match call.save_artifact(&name, Artifact::Text(&text)).await {
        Ok(rel) => {
            format!("the whole output is in {rel}; read it with read_file and start_line/end_line")
        }
        Err(e) => format!("the whole output could not be saved ({e})"),
    };
    cut(&text, &tokens, max_tokens, &where_)
}

/// `None` when `text` fits `max_tokens`; else its size in words. Counting
/// tokens is slow on megabytes (two minutes for 20 MB in a debug build),
/// so a text far over the cap is only measured in bytes.
fn over(text: &str, max_tokens: u64) -> Option<String> {
    let bytes = text.len() as u64;
    // A token is at least one byte.
    if bytes <= max_tokens {
        return None;
    }
    if bytes > max_tokens.saturating_mul(16) {
        return Some(format!("{bytes} bytes"));
    }
    let tokens = count_text(text);
    (tokens > max_tokens).then(|| format!("{tokens} tokens"))
}

/// Head and tail, each within half of `max_tokens`, cut at character
/// boundaries.
fn cut(text: &str, size: &str, max_tokens: u64, where_: &str) -> String {
    let half = max_tokens / 2;
    let fit = |chars: &mut dyn FnMut(usize) -> String| {
        let mut keep = usize::try_from(half).unwrap_or(usize::MAX);
        loop {
            let part = chars(keep);
            if keep == 0 || count_text(&part) <= half {
                return part;
            }
            keep /= 2;
        }
    };
    let head = fit(&mut |n| text.chars().take(n).collect());
    let total = text.chars().count();
    let tail = fit(&mut |n| text.chars().skip(total.saturating_sub(n)).collect());
    format!(
        "{head}\n[… the MCP tool returned {size}, over its cap of {max_tokens} tokens; {where_}]\n{tail}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_output_keeps_its_head_and_tail_within_the_cap() {
        let text = format!("HEAD{}TAIL", "é".repeat(1024 * 1024));
        let size = over(&text, 1_000).unwrap();
        assert_eq!(size, "2097160 bytes");
        let shown = cut(&text, &size, 1_000, "see x");
        assert!(shown.starts_with("HEAD"));
        assert!(shown.ends_with("TAIL"));
        assert!(count_text(&shown) <= 1_100, "{}", count_text(&shown));
        assert!(shown.contains("over its cap of 1000 tokens; see x"));
        assert_eq!(over("short", 1_000), None);
        assert_eq!(over(&"word ".repeat(400), 200).unwrap(), "401 tokens");
    }
}
