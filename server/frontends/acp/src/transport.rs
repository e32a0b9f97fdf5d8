//! A guard in front of the SDK's transport, as `framing.rs` is for LSP: the
//! connection survives any bytes from the client, and messages are served
//! in the order they came.
//!
//! The SDK reads stdin with `lines()`, which ends the connection at the
//! first line that is not UTF-8, and holds a line whole however long it
//! is. Here the client's bytes are split into bounded lines
//! ([`super::lines`]); a line that is not UTF-8 or not JSON is answered
//! with a parse error (-32700, id `null`, as JSON-RPC specifies), one over
//! the limit with an invalid-request error (-32600), and the connection
//! goes on. Every other line reaches the SDK byte for byte.
//!
//! Order: the SDK checks a request against the protocol's state as soon as
//! it reads it, and `initialize` completes only when its answer is written.
//! A client that sends `session/new` right after `initialize`, without
//! waiting for the answer (CodeCompanion does), was refused "ACP
//! initialization must complete…". So after an `initialize` request the
//! next message is passed on only once that request's answer is out: a
//! request that arrives after `initialize` is served after it.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;

use futures::{Sink, Stream};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::watch;

use super::lines::{Line, LineLimits, LineSplitter};

/// How much is read from the client at once.
const READ_CHUNK: usize = 64 * 1024;

/// JSON-RPC's error codes for what the pump answers itself.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// The SDK's transport on this process's stdin and stdout.
pub fn stdio(
    limits: LineLimits,
) -> agent_client_protocol::Lines<
    impl Sink<String, Error = io::Error> + Send + 'static,
    impl Stream<Item = io::Result<String>> + Send + 'static,
> {
    let (outgoing, incoming) = guarded(tokio::io::stdin(), tokio::io::stdout(), limits);
    agent_client_protocol::Lines::new(outgoing, incoming)
}

/// The lines for the SDK to write (each is written whole, then a line
/// break, then flushed) and the client's lines for it to read, guarded.
pub fn guarded<R, W>(
    input: R,
    output: W,
    limits: LineLimits,
) -> (
    impl Sink<String, Error = io::Error> + Send + 'static,
    impl Stream<Item = io::Result<String>> + Send + 'static,
)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let writer = Arc::new(Writer {
        out: tokio::sync::Mutex::new(output),
        gate: InitGate::new(),
    });
    let outgoing = Box::pin(futures::sink::unfold(
        Arc::clone(&writer),
        async |writer, line: String| {
            writer.write_line(&line).await?;
            Ok::<_, io::Error>(writer)
        },
    ));
    let reader = Reader {
        input,
        splitter: LineSplitter::new(limits),
        ready: VecDeque::new(),
        chunk: vec![0; READ_CHUNK],
        ended: false,
        writer,
    };
    let incoming = Box::pin(futures::stream::unfold(reader, async |mut reader| {
        let item = reader.next().await?;
        Some((item, reader))
    }));
    (outgoing, incoming)
}

/// Writes the agent's lines, one at a time, and notices the answer to a
/// pending `initialize`.
struct Writer<W> {
    out: tokio::sync::Mutex<W>,
    gate: InitGate,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    async fn write_line(&self, line: &str) -> io::Result<()> {
        let written = {
            let mut out = self.out.lock().await;
            let mut write = async || {
                out.write_all(line.as_bytes()).await?;
                out.write_all(b"\n").await?;
                out.flush().await
            };
            write().await
        };
        match &written {
            Ok(()) => self.gate.saw(line),
            // Nothing will be answered any more: nobody waits for it.
            Err(_) => self.gate.open(),
        }
        written
    }

    /// An error response of the pump's own (id `null`: the request's id
    /// could not be read).
    async fn reply_error(&self, code: i64, message: String) -> io::Result<()> {
        tracing::warn!(code, %message, "a bad line from the ACP client");
        let reply = json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": code, "message": message},
        });
        self.write_line(&reply.to_string()).await
    }
}

/// Holds the client's next message while an `initialize` waits for its
/// answer.
struct InitGate {
    /// The id of the `initialize` request not answered yet.
    waiting: watch::Sender<Option<Value>>,
}

/// Just enough of a message to see what it is.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    id: Value,
    #[serde(default)]
    method: Option<String>,
}

impl InitGate {
    fn new() -> Self {
        Self {
            waiting: watch::Sender::new(None),
        }
    }

    fn hold_for(&self, id: Value) {
        self.waiting.send_replace(Some(id));
    }

    /// `line` was written to the client: if it answers the pending
    /// `initialize`, the gate opens.
    fn saw(&self, line: &str) {
        if self.waiting.borrow().is_none() {
            return;
        }
        let Ok(head) = serde_json::from_str::<Head>(line) else {
            return;
        };
        if head.method.is_none() {
            self.waiting.send_if_modified(|waiting| match waiting {
                Some(id) if *id == head.id => {
                    *waiting = None;
                    true
                }
                _ => false,
            });
        }
    }

    fn open(&self) {
        self.waiting.send_replace(None);
    }

    async fn wait(&self) {
        let mut waiting = self.waiting.subscribe();
        // The sender lives as long as `self`: this cannot fail.
        let _ = waiting.wait_for(Option::is_none).await;
    }
}

/// Reads the client's lines, answers the bad ones itself, and yields the
/// others in order.
struct Reader<R, W> {
    input: R,
    splitter: LineSplitter,
    /// Lines read but not yet given to the SDK.
    ready: VecDeque<Line>,
    chunk: Vec<u8>,
    ended: bool,
    writer: Arc<Writer<W>>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Reader<R, W> {
    async fn next(&mut self) -> Option<io::Result<String>> {
        loop {
            // A message after `initialize` waits for `initialize`'s answer.
            self.writer.gate.wait().await;
            if let Some(line) = self.ready.pop_front() {
                let limit = self.splitter.limits().max_line_bytes;
                match check(&self.writer, limit, line).await {
                    Ok(Some(text)) => return Some(Ok(text)),
                    Ok(None) => continue,
                    Err(error) => return Some(Err(error)),
                }
            }
            if self.ended {
                return None;
            }
            match self.input.read(&mut self.chunk).await {
                Ok(0) => {
                    self.ended = true;
                    self.ready.extend(self.splitter.finish());
                }
                Ok(read) => self.ready.extend(self.splitter.push(&self.chunk[..read])),
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

/// The line for the SDK, or `None` when it was answered here (or is
/// blank); `Err` only if the answer could not be written.
async fn check<W: AsyncWrite + Unpin>(
    writer: &Writer<W>,
    limit: usize,
    line: Line,
) -> io::Result<Option<String>> {
    let bytes = match line {
        Line::Whole(bytes) => bytes,
        Line::TooLong { bytes } => {
            let message = format!(
                "Invalid request: a line of {bytes} bytes is longer than the {}-byte limit; it was discarded",
                limit
            );
            writer.reply_error(INVALID_REQUEST, message).await?;
            return Ok(None);
        }
    };
    // Blank lines between messages are no messages.
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let message = format!(
                "Parse error: the line is not UTF-8 (an invalid byte at offset {})",
                error.utf8_error().valid_up_to()
            );
            writer.reply_error(PARSE_ERROR, message).await?;
            return Ok(None);
        }
    };
    match serde_json::from_str::<Head>(&text) {
        Ok(head) => {
            if head.method.as_deref() == Some("initialize") && !head.id.is_null() {
                writer.gate.hold_for(head.id);
            }
            Ok(Some(text))
        }
        // Not JSON (serde's message names a position, never the text).
        Err(error) if !error.is_data() => {
            writer
                .reply_error(PARSE_ERROR, format!("Parse error: {error}"))
                .await?;
            Ok(None)
        }
        // JSON, but no JSON-RPC message: the SDK answers as JSON-RPC says.
        Err(_) => Ok(Some(text)),
    }
}

#[cfg(test)]
mod tests;
