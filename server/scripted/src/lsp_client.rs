//! A minimal LSP client for tests: raw `Content-Length` frames, whole JSON
//! messages, no LSP types. A background task reads every frame the server
//! writes, so the server never blocks on a full pipe while the test is busy
//! writing (thousands of `didChange` back to back, say).

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("i/o error talking to the server: {0}")]
    Io(#[from] std::io::Error),
    #[error("timed out after {timeout:?} waiting for {what}")]
    Timeout { what: String, timeout: Duration },
    #[error("the server closed its output while we waited for {what}")]
    Closed { what: String },
}

/// Frames one JSON message as the LSP base protocol does.
pub fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

pub struct LspClient<W> {
    writer: W,
    incoming: mpsc::UnboundedReceiver<Result<Value, String>>,
    /// Messages received but not yet asked for, in arrival order.
    stash: VecDeque<Value>,
    next_id: i64,
    timeout: Duration,
}

impl<W: AsyncWrite + Unpin> LspClient<W> {
    /// Starts reading `reader` in the background. Must be called inside a
    /// tokio runtime.
    pub fn new<R: AsyncRead + Unpin + Send + 'static>(reader: R, writer: W) -> Self {
        let (tx, incoming) = mpsc::unbounded_channel();
        tokio::spawn(read_frames(BufReader::new(reader), tx));
        Self {
            writer,
            incoming,
            stash: VecDeque::new(),
            next_id: 1,
            timeout: Duration::from_secs(30),
        }
    }

    /// How long `recv`-style calls wait before failing the test.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Writes raw bytes: for malformed frames.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        self.writer.write_all(bytes).await?;
        self.writer.flush().await?;
        Ok(())
    }

    pub async fn send(&mut self, message: &Value) -> Result<(), ClientError> {
        self.send_raw(&frame(message)).await
    }

    pub async fn notify(&mut self, method: &str, params: Value) -> Result<(), ClientError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    /// Sends a request and returns its id without waiting for the answer.
    pub async fn send_request(&mut self, method: &str, params: Value) -> Result<i64, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        Ok(id)
    }

    /// Sends a request and waits for the whole response message (result or
    /// error). Anything else that arrives meanwhile is stashed.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = self.send_request(method, params).await?;
        self.response(id).await
    }

    /// Waits for the response to request `id`.
    pub async fn response(&mut self, id: i64) -> Result<Value, ClientError> {
        self.wait_for(&format!("the response to request {id}"), |m| {
            m.get("method").is_none() && m.get("id") == Some(&json!(id))
        })
        .await
    }

    /// Answers a request the server sent us.
    pub async fn respond(&mut self, id: &Value, result: Value) -> Result<(), ClientError> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await
    }

    /// Waits for the next message from the server that is a request or
    /// notification with this method.
    pub async fn expect_method(&mut self, method: &str) -> Result<Value, ClientError> {
        self.wait_for(&format!("a {method} message"), |m| {
            m.get("method") == Some(&json!(method))
        })
        .await
    }

    /// The next message of any kind, stashed ones first.
    pub async fn recv(&mut self) -> Result<Value, ClientError> {
        self.wait_for("any message", |_| true).await
    }

    /// Messages received so far and not yet consumed, without waiting.
    pub fn drain_stash(&mut self) -> Vec<Value> {
        while let Ok(Ok(message)) = self.incoming.try_recv() {
            self.stash.push_back(message);
        }
        self.stash.drain(..).collect()
    }

    async fn wait_for(
        &mut self,
        what: &str,
        matches: impl Fn(&Value) -> bool,
    ) -> Result<Value, ClientError> {
        if let Some(i) = self.stash.iter().position(&matches) {
            return Ok(self.stash.remove(i).unwrap_or_default());
        }
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            let next = tokio::time::timeout_at(deadline, self.incoming.recv()).await;
            match next {
                Err(_) => {
                    return Err(ClientError::Timeout {
                        what: what.to_owned(),
                        timeout: self.timeout,
                    });
                }
                Ok(None) => {
                    return Err(ClientError::Closed {
                        what: what.to_owned(),
                    });
                }
                Ok(Some(Err(reason))) => {
                    return Err(ClientError::Closed {
                        what: format!("{what} ({reason})"),
                    });
                }
                Ok(Some(Ok(message))) if matches(&message) => return Ok(message),
                Ok(Some(Ok(message))) => self.stash.push_back(message),
            }
        }
    }
}

/// Reads frames until the stream ends. A malformed frame from the server
/// ends the stream with a reason: the server must never write one.
async fn read_frames<R: AsyncRead + Unpin>(
    mut reader: BufReader<R>,
    tx: mpsc::UnboundedSender<Result<Value, String>>,
) {
    loop {
        match read_frame(&mut reader).await {
            Ok(Some(message)) => {
                if tx.send(Ok(message)).is_err() {
                    return;
                }
            }
            Ok(None) => return,
            Err(reason) => {
                let _ = tx.send(Err(reason));
                return;
            }
        }
    }
}

async fn read_frame<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> Result<Option<Value>, String> {
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        let n = reader
            .read_line(&mut line)
            .await
            .map_err(|e| e.to_string())?;
        if n == 0 {
            return if length.is_none() {
                Ok(None)
            } else {
                Err("eof inside headers".into())
            };
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        match header.split_once(':') {
            Some((name, value)) if name.eq_ignore_ascii_case("content-length") => {
                length = Some(
                    value
                        .trim()
                        .parse::<usize>()
                        .map_err(|e| format!("bad length: {e}"))?,
                );
            }
            Some(_) => {}
            None => return Err(format!("not a header line: {header:?}")),
        }
    }
    let length = length.ok_or("frame without Content-Length")?;
    let mut body = vec![0; length];
    reader
        .read_exact(&mut body)
        .await
        .map_err(|e| e.to_string())?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| format!("body is not JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn round_trips_frames_and_stashes_out_of_order_messages() {
        let (client_end, server_end) = tokio::io::duplex(1024);
        let (client_read, client_write) = tokio::io::split(client_end);
        let (server_read, mut server_write) = tokio::io::split(server_end);
        let mut client = LspClient::new(client_read, client_write);

        let id = client.send_request("ping", json!({})).await.unwrap();
        let mut server_reader = BufReader::new(server_read);
        let got = read_frame(&mut server_reader).await.unwrap().unwrap();
        assert_eq!(
            got,
            json!({"jsonrpc": "2.0", "id": id, "method": "ping", "params": {}})
        );

        let note =
            json!({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"message": "é😀"}});
        server_write.write_all(&frame(&note)).await.unwrap();
        server_write
            .write_all(&frame(&json!({"jsonrpc": "2.0", "id": id, "result": 1})))
            .await
            .unwrap();
        assert_eq!(client.response(id).await.unwrap()["result"], 1);
        assert_eq!(
            client.expect_method("window/logMessage").await.unwrap(),
            note
        );
    }

    #[tokio::test]
    async fn times_out_instead_of_hanging() {
        let (client_end, _server_end) = tokio::io::duplex(64);
        let (r, w) = tokio::io::split(client_end);
        let mut client = LspClient::new(r, w).with_timeout(Duration::from_millis(50));
        let err = client.recv().await.unwrap_err();
        assert!(matches!(err, ClientError::Timeout { .. }), "{err}");
    }
}
