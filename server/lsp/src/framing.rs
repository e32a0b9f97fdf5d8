//! A guard in front of the transport's reader.
//!
//! tower-lsp-server reads frames with tokio's `FramedRead`, which ends the
//! stream after the first frame it cannot decode: one malformed message
//! from a client, an extension or a proxy, and the server stops reading,
//! taking every open buffer's state with it. This pump re-frames the input
//! and replaces each frame the transport would choke on by a request for
//! [`MALFORMED_FRAME`], which the server answers with the JSON-RPC error
//! the client should have received (id `null`, as JSON-RPC specifies).
//!
//! Well-formed frames pass through byte for byte, in order.

use std::io;

use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
};
use tower_lsp_server::jsonrpc;

/// The internal method a malformed frame is replaced by.
pub const MALFORMED_FRAME: &str = "rein/internal/malformedFrame";

/// Frames larger than this are skipped, not buffered: no editor sends one,
/// and allocating whatever a broken header claims would be an easy crash.
const MAX_FRAME_BYTES: usize = 512 * 1024 * 1024;

/// The params of a [`MALFORMED_FRAME`] request.
#[derive(Debug, Serialize, Deserialize)]
pub struct MalformedFrame {
    pub code: i64,
    pub message: String,
}

/// Copies frames from `input` to `output` until `input` ends.
pub async fn pump<R, W>(input: R, mut output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut body = Vec::new();
    while let Some(frame) = read_frame(&mut input, &mut body).await? {
        match frame {
            Frame::Body => match check_message(&body) {
                Ok(()) => write_frame(&mut output, &body).await?,
                Err(bad) => write_malformed(&mut output, bad).await?,
            },
            Frame::Bad(bad) => write_malformed(&mut output, bad).await?,
        }
    }
    output.shutdown().await
}

enum Frame {
    /// A complete frame; its body is in the caller's buffer.
    Body,
    /// A frame that could not be read as one.
    Bad(MalformedFrame),
}

fn malformed(code: jsonrpc::ErrorCode, message: String) -> MalformedFrame {
    MalformedFrame {
        code: code.code(),
        message,
    }
}

/// Reads one frame into `body`. `None` at a clean end of input.
async fn read_frame<R: AsyncBufRead + Unpin>(
    input: &mut R,
    body: &mut Vec<u8>,
) -> io::Result<Option<Frame>> {
    let mut length: Option<Result<usize, String>> = None;
    let mut line = Vec::new();
    let mut saw_header = false;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).await? == 0 {
            return Ok(if saw_header {
                Some(Frame::Bad(malformed(
                    jsonrpc::ErrorCode::ParseError,
                    "Parse error: input ended inside a frame header".into(),
                )))
            } else {
                None
            });
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if saw_header {
                break;
            }
            continue; // Stray blank lines between frames are harmless.
        }
        saw_header = true;
        if let Some((name, value)) = text.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| value.trim().to_owned()),
            );
        }
    }
    let length = match length {
        Some(Ok(n)) => n,
        Some(Err(bad)) => {
            // Without a length we cannot know where the body ends; the next
            // header line we meet will resynchronize us.
            return Ok(Some(Frame::Bad(malformed(
                jsonrpc::ErrorCode::ParseError,
                format!("Parse error: invalid Content-Length {bad:?}"),
            ))));
        }
        None => {
            return Ok(Some(Frame::Bad(malformed(
                jsonrpc::ErrorCode::ParseError,
                "Parse error: frame without a Content-Length header".into(),
            ))));
        }
    };
    if length > MAX_FRAME_BYTES {
        tokio::io::copy(&mut input.take(length as u64), &mut tokio::io::sink()).await?;
        return Ok(Some(Frame::Bad(malformed(
            jsonrpc::ErrorCode::InvalidRequest,
            format!(
                "Invalid request: a {length}-byte message is larger than the {MAX_FRAME_BYTES}-byte limit"
            ),
        ))));
    }
    body.clear();
    body.resize(length, 0);
    input.read_exact(body).await?;
    Ok(Some(Frame::Body))
}

/// Accepts exactly what the transport's decoder accepts: a JSON-RPC 2.0
/// request, notification or response.
fn check_message(body: &[u8]) -> Result<(), MalformedFrame> {
    let error = match serde_json::from_slice::<jsonrpc::Request>(body) {
        Ok(_) => return Ok(()),
        Err(e) => e,
    };
    if serde_json::from_slice::<jsonrpc::Response>(body).is_ok() {
        return Ok(());
    }
    Err(if error.is_data() {
        malformed(
            jsonrpc::ErrorCode::InvalidRequest,
            format!(
                "Invalid request: not a JSON-RPC 2.0 request, notification or response ({error})"
            ),
        )
    } else {
        malformed(
            jsonrpc::ErrorCode::ParseError,
            format!("Parse error: {error}"),
        )
    })
}

async fn write_frame<W: AsyncWrite + Unpin>(output: &mut W, body: &[u8]) -> io::Result<()> {
    output
        .write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes())
        .await?;
    output.write_all(body).await
}

async fn write_malformed<W: AsyncWrite + Unpin>(
    output: &mut W,
    bad: MalformedFrame,
) -> io::Result<()> {
    tracing::warn!(code = bad.code, message = %bad.message, "malformed message from the client");
    let request = json!({"jsonrpc": "2.0", "id": null, "method": MALFORMED_FRAME, "params": bad});
    write_frame(output, request.to_string().as_bytes()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(input: &[u8]) -> String {
        let mut out = Vec::new();
        pump(input, &mut out).await.unwrap();
        String::from_utf8(out).unwrap()
    }

    #[tokio::test]
    async fn good_frames_pass_through_and_headers_are_normalized() {
        let input = b"content-length: 40\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":1}   ";
        assert_eq!(
            run(input).await,
            "Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":1}   "
        );
    }

    #[tokio::test]
    async fn bad_bodies_and_headers_become_malformed_frame_requests() {
        let good = "{\"jsonrpc\":\"2.0\",\"method\":\"ok\"}";
        let input = format!(
            "Content-Length: 9\r\n\r\n{{not json\
             Content-Length: 2\r\n\r\n{{}}\
             Content-Length: zz\r\n\r\n\
             Content-Length: {}\r\n\r\n{good}",
            good.len()
        );
        let out = run(input.as_bytes()).await;
        let frames: Vec<&str> = out.split("Content-Length: ").skip(1).collect();
        assert_eq!(frames.len(), 4, "{out}");
        assert!(
            frames[0].contains(MALFORMED_FRAME) && frames[0].contains("-32700"),
            "{}",
            frames[0]
        );
        assert!(frames[1].contains("-32600"), "{}", frames[1]);
        assert!(
            frames[2].contains("invalid Content-Length"),
            "{}",
            frames[2]
        );
        assert!(frames[3].ends_with(good), "{}", frames[3]);
    }

    #[tokio::test]
    async fn oversized_frames_are_skipped_not_allocated() {
        let input = format!("Content-Length: {}\r\n\r\n", MAX_FRAME_BYTES + 1);
        // The input ends before the claimed body: the skip stops at EOF.
        let out = run(input.as_bytes()).await;
        assert!(out.contains("larger than"), "{out}");
    }
}
