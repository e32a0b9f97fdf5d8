//! An MCP tool's result as the model reads it: text as is, structured
//! content as JSON, images, audio and binary resources saved as files and
//! described, resource links named. Read from the result's JSON (the
//! protocol's shape), so a field this build does not know is skipped,
//! never a failure.
//!
//! Structured content that repeats the content (servers are asked to send
//! both, and many wrap the same text: the filesystem server's
//! `{"content": text}`, FastMCP's `{"result": text}`) is left out: the
//! model would pay for it twice, and the output cap would count it twice.

use base64::Engine;
use serde_json::Value;

/// One piece of a result.
#[derive(Debug, PartialEq)]
pub enum Piece {
    Text(String),
    /// Bytes to save as a file, and how to describe it once saved.
    File {
        bytes: Vec<u8>,
        extension: &'static str,
        what: String,
    },
}

/// The pieces of a `tools/call` result, in order; `is_error` as the server
/// said.
#[derive(Debug, PartialEq)]
pub struct Rendered {
    pub pieces: Vec<Piece>,
    pub is_error: bool,
}

/// Reads a `CallToolResult` (as JSON).
pub fn render(result: &Value) -> Rendered {
    let mut pieces = Vec::new();
    let content = result["content"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut texts = Vec::new();
    for block in content {
        match block["type"].as_str() {
            Some("text") => {
                let text = block["text"].as_str().unwrap_or_default().to_owned();
                texts.push(text.clone());
                pieces.push(Piece::Text(text));
            }
            Some(kind @ ("image" | "audio")) => {
                let mime = block["mimeType"]
                    .as_str()
                    .unwrap_or("application/octet-stream");
                pieces.push(binary(
                    block["data"].as_str(),
                    mime,
                    &format!("{kind} ({mime})"),
                ));
            }
            Some("resource") => {
                let resource = &block["resource"];
                let uri = resource["uri"].as_str().unwrap_or("?");
                let mime = resource["mimeType"].as_str();
                if let Some(text) = resource["text"].as_str() {
                    let head = match mime {
                        Some(mime) => format!("[resource {uri} ({mime})]"),
                        None => format!("[resource {uri}]"),
                    };
                    pieces.push(Piece::Text(format!("{head}\n{text}")));
                } else {
                    let mime = mime.unwrap_or("application/octet-stream");
                    pieces.push(binary(
                        resource["blob"].as_str(),
                        mime,
                        &format!("resource {uri} ({mime})"),
                    ));
                }
            }
            Some("resource_link") => {
                let uri = block["uri"].as_str().unwrap_or("?");
                let mut line = format!("[resource link: {uri}");
                if let Some(name) = block["name"].as_str() {
                    line.push_str(&format!(" — {name}"));
                }
                if let Some(description) = block["description"].as_str() {
                    line.push_str(&format!(": {description}"));
                }
                line.push(']');
                pieces.push(Piece::Text(line));
            }
            other => pieces.push(Piece::Text(format!(
                "[a content block of type {} that Rein does not read]",
                other.map_or_else(|| "(none)".to_owned(), |t| format!("`{t}`"))
            ))),
        }
    }
    // Structured content, unless the content already says exactly it
    // (servers should send both; the model needs it once).
    if let Some(structured) = result.get("structuredContent")
        && !repeats(structured, &result["content"], &texts)
    {
        let json = serde_json::to_string_pretty(structured).unwrap_or_default();
        pieces.push(Piece::Text(format!(
            "structured result:\n```json\n{json}\n```"
        )));
    }
    if pieces.is_empty() {
        pieces.push(Piece::Text("(the tool returned no content)".to_owned()));
    }
    Rendered {
        pieces,
        is_error: result["isError"].as_bool().unwrap_or(false),
    }
}

/// Whether `structured` carries the same data as the result's `content`
/// (whose text blocks are `texts`): it is, or wraps in an object of one
/// field, the content itself, a text block's text or all of them joined,
/// or the JSON one of those texts holds.
fn repeats(structured: &Value, content: &Value, texts: &[String]) -> bool {
    let joined = texts.join("\n");
    let same = |value: &Value| {
        if value == content && !content.is_null() {
            return true;
        }
        if let Value::String(text) = value {
            return *text == joined || texts.contains(text);
        }
        std::iter::once(&joined)
            .chain(texts)
            .filter_map(|text| serde_json::from_str::<Value>(text).ok())
            .any(|json| json == *value)
    };
    if same(structured) {
        return true;
    }
    match structured {
        Value::Object(fields) if fields.len() == 1 => fields.values().all(same),
        _ => false,
    }
}

fn binary(data: Option<&str>, mime: &str, what: &str) -> Piece {
    match data.map(|d| base64::engine::general_purpose::STANDARD.decode(d.trim())) {
        Some(Ok(bytes)) => Piece::File {
            bytes,
            extension: extension(mime),
            what: what.to_owned(),
        },
        Some(Err(_)) => Piece::Text(format!("[{what}: its data is not valid base64]")),
        None => Piece::Text(format!("[{what}: no data]")),
    }
}

/// A file extension for a MIME type: the common ones, else `.bin`.
fn extension(mime: &str) -> &'static str {
    match mime.split(';').next().unwrap_or_default().trim() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/mpeg" => "mp3",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "text/plain" => "txt",
        _ => "bin",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_of_content_reads_as_text_or_a_file() {
        let result = json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "iVBORw0=", "mimeType": "image/png"},
                {"type": "audio", "data": "not base64!", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "inside"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAE="}},
                {"type": "resource_link", "uri": "test://static/1", "name": "one", "description": "the first"},
                {"type": "hologram"}
            ],
            "structuredContent": {"sum": 3},
            "isError": false
        });
        let rendered = render(&result);
        expect_test::expect![[r#"
            Rendered {
                pieces: [
                    Text(
                        "hello",
                    ),
                    File {
                        bytes: [
                            137,
                            80,
                            78,
                            71,
                            13,
                        ],
                        extension: "png",
                        what: "image (image/png)",
                    },
                    Text(
                        "[audio (audio/wav): its data is not valid base64]",
                    ),
                    Text(
                        "[resource file:///a.txt (text/plain)]\ninside",
                    ),
                    File {
                        bytes: [
                            0,
                            1,
                        ],
                        extension: "bin",
                        what: "resource file:///b.bin (application/octet-stream)",
                    },
                    Text(
                        "[resource link: test://static/1 — one: the first]",
                    ),
                    Text(
                        "[a content block of type `hologram` that Rein does not read]",
                    ),
                    Text(
                        "structured result:\n```json\n{\n  \"sum\": 3\n}\n```",
                    ),
                ],
                is_error: false,
            }
        "#]]
        .assert_debug_eq(&rendered);
    }

    /// Issue 37 E: text plus a `structuredContent` repeating it (the
    /// filesystem server and FastMCP do so for every call) reached the
    /// model twice: a 528 kB file counted as 1,080,051 bytes. One copy is
    /// sent when both carry the same data; different data is kept.
    #[test]
    fn structured_content_that_repeats_the_content_is_left_out() {
        let file = "def total(items):\n    return 0\n".repeat(3);
        let once = |result: Value| render(&result).pieces;
        // server-filesystem's read_text_file, list_directory, edit_file…
        assert_eq!(
            once(
                json!({"content": [{"type": "text", "text": file}], "structuredContent": {"content": file}})
            ),
            [Piece::Text(file.clone())]
        );
        // FastMCP: a tool's return value wrapped as `result`.
        assert_eq!(
            once(
                json!({"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": 42}})
            ),
            [Piece::Text("42".into())]
        );
        assert_eq!(
            once(
                json!({"content": [{"type": "text", "text": "[1, 2]"}], "structuredContent": {"result": [1, 2]}})
            ),
            [Piece::Text("[1, 2]".into())]
        );
        // Several text blocks, repeated as one string.
        assert_eq!(
            once(json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "structuredContent": {"content": "a\nb"}})).len(),
            2
        );
        // server-filesystem's read_media_file repeats the content array.
        let image = json!({"type": "image", "data": "iVBORw0=", "mimeType": "image/png"});
        assert_eq!(
            once(json!({"content": [image], "structuredContent": {"content": [image]}})).len(),
            1
        );
        // Other data is the model's to read.
        let kept = once(
            json!({"content": [{"type": "text", "text": "done"}], "structuredContent": {"content": "other", "extra": 1}}),
        );
        assert_eq!(kept.len(), 2, "{kept:?}");
        let kept = once(
            json!({"content": [{"type": "text", "text": "done"}], "structuredContent": {"temperature": 22}}),
        );
        assert_eq!(kept.len(), 2, "{kept:?}");
    }

    #[test]
    fn structured_content_already_in_a_text_block_is_said_once() {
        let rendered = render(&json!({
            "content": [{"type": "text", "text": "{\"sum\": 3}"}],
            "structuredContent": {"sum": 3},
        }));
        assert_eq!(rendered.pieces, [Piece::Text("{\"sum\": 3}".into())]);
        let empty = render(&json!({"isError": true}));
        assert!(empty.is_error);
        assert_eq!(
            empty.pieces,
            [Piece::Text("(the tool returned no content)".into())]
        );
    }
}
