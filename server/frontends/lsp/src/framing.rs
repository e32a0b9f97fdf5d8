//! A guard in front of the transport's reader: the session survives any
//! bytes from the client.
//!
//! tower-lsp-server reads frames with tokio's `FramedRead`, which ends the
//! stream after the first frame it cannot decode: one malformed message
//! from a client, an extension or a proxy, and the server stops reading,
//! taking every open buffer's state with it. The pump re-frames the input
//! ([`Deframer`]), passes every well-formed frame on byte for byte and in
//! order, and replaces everything else by a request for [`MALFORMED_FRAME`],
//! which the server answers with the JSON-RPC error the client should have
//! received (id `null`, as JSON-RPC specifies). It then resynchronizes on
//! the next frame. What one frame may make the server hold is bounded by
//! [`FrameLimits`]; nothing is allocated for what a header merely claims.

mod deframer;
mod header;
mod json_scan;
#[cfg(test)]
mod tests;
mod transport;

use std::io;

use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tower_lsp_server::jsonrpc;

pub use deframer::{Deframer, Event};

/// The internal method a malformed frame is replaced by.
pub const MALFORMED_FRAME: &str = "rein/internal/malformedFrame";

/// How much the pump reads from the client at once.
const READ_CHUNK: usize = 64 * 1024;

/// Bounds on what one frame from the client can make the server hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameLimits {
    /// The largest `Content-Length` served. A larger claim is answered with
    /// an error and skipped as it arrives, never buffered.
    pub max_message_bytes: usize,
    /// The largest header block (all header lines of one frame).
    pub max_header_bytes: usize,
    /// How deeply arrays and objects may nest in a message. At most 127:
    /// the transport's JSON parser fails at 128.
    pub max_depth: usize,
}

impl Default for FrameLimits {
    fn default() -> Self {
        Self {
            // A `didOpen` of a 50 MB file, with room for JSON escapes.
            max_message_bytes: 64 * 1024 * 1024,
            max_header_bytes: 8 * 1024,
            // Below the parser's 127, with a margin for code that walks a
            // message recursively (serde's, when params are typed).
            max_depth: 100,
        }
    }
}

/// The params of a [`MALFORMED_FRAME`] request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MalformedFrame {
    pub code: i64,
    pub message: String,
}

fn malformed(code: jsonrpc::ErrorCode, message: String) -> MalformedFrame {
    MalformedFrame {
        code: code.code(),
        message,
    }
}

/// What a pump run held at most, for tests and logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PumpStats {
    /// The largest allocation of the deframer's buffer.
    pub peak_buffer: usize,
}

/// Copies frames from `input` to `output` until `input` ends.
pub async fn pump<R, W>(mut input: R, mut output: W, limits: FrameLimits) -> io::Result<PumpStats>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut deframer = Deframer::new(limits);
    let mut chunk = vec![0; READ_CHUNK];
    loop {
        let read = input.read(&mut chunk).await?;
        if read == 0 {
            break;
        }
        deframer.push(&chunk[..read]);
        while let Some(event) = deframer.next_event() {
            match event {
                Event::Message(body) => write_frame(&mut output, body).await?,
                Event::Malformed(bad) => write_malformed(&mut output, &bad).await?,
            }
        }
    }
    if let Some(bad) = deframer.finish() {
        write_malformed(&mut output, &bad).await?;
    }
    output.shutdown().await?;
    Ok(PumpStats {
        peak_buffer: deframer.peak_capacity(),
    })
}

/// The header the pump writes before a body of `len` bytes.
pub fn frame_header(len: usize) -> String {
    format!("Content-Length: {len}\r\n\r\n")
}

/// The body of the request a malformed frame is replaced by.
pub fn malformed_request(bad: &MalformedFrame) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": null, "method": MALFORMED_FRAME, "params": bad})
        .to_string()
        .into_bytes()
}

async fn write_frame<W: AsyncWrite + Unpin>(output: &mut W, body: &[u8]) -> io::Result<()> {
    output
        .write_all(frame_header(body.len()).as_bytes())
        .await?;
    output.write_all(body).await
}

async fn write_malformed<W: AsyncWrite + Unpin>(
    output: &mut W,
    bad: &MalformedFrame,
) -> io::Result<()> {
    tracing::warn!(code = bad.code, message = %bad.message, "malformed message from the client");
    write_frame(output, &malformed_request(bad)).await
}
