//! Server-sent events as both providers frame them, and the ways we cut text
//! so that clients have to reassemble it.

use serde::Serialize;

/// `event: <name>\ndata: <json>\n\n`, as Anthropic sends every event.
pub(crate) fn named_event(name: &str, data: &impl Serialize) -> String {
    format!("event: {name}\ndata: {}\n\n", to_json(data))
}

/// `data: <json>\n\n`, as OpenAI sends every chunk.
pub(crate) fn data_event(data: &impl Serialize) -> String {
    format!("data: {}\n\n", to_json(data))
}

/// Serializing our own wire structs cannot fail (string keys, no maps with
/// non-string keys); an empty object keeps the stream well-formed if it ever
/// did.
pub(crate) fn to_json(data: &impl Serialize) -> String {
    serde_json::to_string(data).unwrap_or_else(|_| "{}".to_string())
}

/// Splits `text` into pieces of at most `chars` characters (0 counts as 1).
/// Splitting by characters, not bytes, keeps every piece valid UTF-8 inside
/// its JSON string; byte-level splits happen in [`split_point`].
pub(crate) fn chunk_chars(text: &str, chars: usize) -> Vec<&str> {
    let chars = chars.max(1);
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut count = 0;
    for (offset, _) in text.char_indices() {
        if count == chars {
            pieces.push(&text[start..offset]);
            start = offset;
            count = 0;
        }
        count += 1;
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// Where to split the bytes of the `index`-th event into two chunked-encoding
/// writes, so client SSE parsers must join partial reads. Odd events split
/// inside their first multi-byte UTF-8 character when they have one, to
/// catch decoders that convert each read to a string; the others split in
/// the middle. Never at 0 or at the end: an empty chunk would end the body.
pub(crate) fn split_point(event: &[u8], index: usize) -> Option<usize> {
    if event.len() < 2 {
        return None;
    }
    let inside_multibyte = event
        .iter()
        .position(|byte| *byte >= 0xC0)
        .map(|lead| lead + 1);
    let point = match inside_multibyte {
        Some(point) if index % 2 == 1 => point,
        _ => event.len() / 2,
    };
    (point > 0 && point < event.len()).then_some(point)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_by_characters_not_bytes() {
        assert_eq!(chunk_chars("héllo wörld", 4), ["héll", "o wö", "rld"]);
        assert_eq!(chunk_chars("abc", 0), ["a", "b", "c"]);
        assert!(chunk_chars("", 4).is_empty());
    }

    #[test]
    fn odd_events_split_inside_a_multibyte_character() {
        let event = "data: é\n\n".as_bytes();
        let point = split_point(event, 1).unwrap();
        assert!(std::str::from_utf8(&event[..point]).is_err());
        assert_eq!(split_point(event, 0), Some(event.len() / 2));
        assert_eq!(split_point(b"x", 0), None);
    }
}
