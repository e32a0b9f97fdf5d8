//! Just enough HTTP/1.1 for model clients: keep-alive, bodies by
//! `Content-Length` or chunked, responses whole or chunked, and the low-level
//! control the faults need (half a body, a reset). Written by hand because a
//! framework would hide exactly the misbehaviour we want to produce.

use std::collections::BTreeMap;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest request head accepted; beyond it: 431.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Largest request body accepted; beyond it: 413.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// Longest chunk-size or trailer line in a chunked body.
const MAX_LINE_BYTES: usize = 8 * 1024;

/// One parsed request.
#[derive(Debug)]
pub(crate) struct HttpRequest {
    pub(crate) method: String,
    /// The request target as sent, query included.
    pub(crate) target: String,
    /// Lowercase names; repeated headers joined with ", " as RFC 9110 allows.
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) body: Vec<u8>,
    /// Whether the client asked to close after this exchange.
    pub(crate) wants_close: bool,
}

impl HttpRequest {
    /// The target without its query string, for routing.
    pub(crate) fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }
}

/// Why a request could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpError {
    #[error("connection error: {0}")]
    Io(#[from] std::io::Error),
    #[error("the connection closed in the middle of a request")]
    Truncated,
    /// Answered with this status, then the connection is closed.
    #[error("{message}")]
    Bad { status: u16, message: String },
}

fn bad(status: u16, message: impl Into<String>) -> HttpError {
    HttpError::Bad {
        status,
        message: message.into(),
    }
}

/// A client connection with its unread bytes (keep-alive clients may send the
/// next request before we have answered the last).
pub(crate) struct Connection {
    stream: TcpStream,
    buffer: Vec<u8>,
}

impl Connection {
    pub(crate) fn new(stream: TcpStream) -> Self {
        // Each chunk goes out as its own segment, so split SSE events really
        // arrive in pieces.
        let _ = stream.set_nodelay(true);
        Self {
            stream,
            buffer: Vec::new(),
        }
    }

    /// The next request, or `None` when the client closed between requests.
    pub(crate) async fn read_request(&mut self) -> Result<Option<HttpRequest>, HttpError> {
        let head_end = loop {
            if let Some(end) = find(&self.buffer, b"\r\n\r\n") {
                break end;
            }
            if self.buffer.len() > MAX_HEAD_BYTES {
                return Err(bad(431, "request header fields too large"));
            }
            if self.fill().await? == 0 {
                return if self.buffer.is_empty() {
                    Ok(None)
                } else {
                    Err(HttpError::Truncated)
                };
            }
        };
        let head = self.take(head_end + 4);
        let head = String::from_utf8(head).map_err(|_| bad(400, "request head is not UTF-8"))?;
        let (method, target, version, headers) = parse_head(&head)?;
        if headers
            .get("expect")
            .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
        {
            self.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
        }
        let body = self.read_body(&headers).await?;
        let connection = headers.get("connection").map(|v| v.to_ascii_lowercase());
        let wants_close = match version {
            "HTTP/1.0" => connection.as_deref() != Some("keep-alive"),
            _ => connection.as_deref() == Some("close"),
        };
        Ok(Some(HttpRequest {
            method: method.to_string(),
            target: target.to_string(),
            headers,
            body,
            wants_close,
        }))
    }

    async fn read_body(
        &mut self,
        headers: &BTreeMap<String, String>,
    ) -> Result<Vec<u8>, HttpError> {
        let chunked = headers
            .get("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        if chunked {
            return self.read_chunked_body().await;
        }
        let Some(length) = headers.get("content-length") else {
            return Ok(Vec::new());
        };
        let length: usize = length
            .trim()
            .parse()
            .map_err(|_| bad(400, format!("invalid content-length: {length:?}")))?;
        if length > MAX_BODY_BYTES {
            return Err(bad(413, "request body too large"));
        }
        self.read_exact(length).await
    }

    async fn read_chunked_body(&mut self) -> Result<Vec<u8>, HttpError> {
        let mut body = Vec::new();
        loop {
            let line = self.read_line().await?;
            let size_text = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size_text, 16)
                .map_err(|_| bad(400, format!("invalid chunk size: {size_text:?}")))?;
            if size == 0 {
                // Trailers, if any, end with an empty line.
                while !self.read_line().await?.is_empty() {}
                return Ok(body);
            }
            // Compared this way round, a hostile size cannot overflow.
            if size > MAX_BODY_BYTES - body.len() {
                return Err(bad(413, "request body too large"));
            }
            body.extend(self.read_exact(size).await?);
            if !self.read_line().await?.is_empty() {
                return Err(bad(400, "chunk data not followed by CRLF"));
            }
        }
    }

    async fn read_line(&mut self) -> Result<String, HttpError> {
        loop {
            if let Some(end) = find(&self.buffer, b"\r\n") {
                let line = self.take(end + 2);
                return String::from_utf8(line[..end].to_vec())
                    .map_err(|_| bad(400, "chunk line is not UTF-8"));
            }
            if self.buffer.len() > MAX_LINE_BYTES {
                return Err(bad(400, "chunk line too long"));
            }
            if self.fill().await? == 0 {
                return Err(HttpError::Truncated);
            }
        }
    }

    async fn read_exact(&mut self, length: usize) -> Result<Vec<u8>, HttpError> {
        while self.buffer.len() < length {
            if self.fill().await? == 0 {
                return Err(HttpError::Truncated);
            }
        }
        Ok(self.take(length))
    }

    async fn fill(&mut self) -> std::io::Result<usize> {
        let mut chunk = [0u8; 16 * 1024];
        let read = self.stream.read(&mut chunk).await?;
        self.buffer.extend_from_slice(&chunk[..read]);
        Ok(read)
    }

    fn take(&mut self, length: usize) -> Vec<u8> {
        let rest = self.buffer.split_off(length);
        std::mem::replace(&mut self.buffer, rest)
    }

    /// Writes and flushes.
    pub(crate) async fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes).await?;
        self.stream.flush().await
    }

    /// Writes one chunk of a chunked body; empty data is skipped because a
    /// zero-length chunk would end the body.
    pub(crate) async fn write_chunk(&mut self, data: &[u8]) -> std::io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let mut frame = format!("{:x}\r\n", data.len()).into_bytes();
        frame.extend_from_slice(data);
        frame.extend_from_slice(b"\r\n");
        self.write_all(&frame).await
    }

    /// Ends a chunked body.
    pub(crate) async fn finish_chunks(&mut self) -> std::io::Result<()> {
        self.write_all(b"0\r\n\r\n").await
    }

    /// Closes with SO_LINGER 0, so the kernel sends RST instead of FIN: the
    /// client sees "connection reset", not a clean end.
    pub(crate) fn reset(self) {
        let _ = self.stream.set_zero_linger();
        drop(self.stream);
    }
}

type Head<'a> = (&'a str, &'a str, &'a str, BTreeMap<String, String>);

fn parse_head(head: &str) -> Result<Head<'_>, HttpError> {
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(
            400,
            format!("malformed request line: {request_line:?}"),
        ));
    };
    if method.is_empty() || !target.starts_with('/') || !matches!(version, "HTTP/1.1" | "HTTP/1.0")
    {
        return Err(bad(
            400,
            format!("malformed request line: {request_line:?}"),
        ));
    }
    let mut headers: BTreeMap<String, String> = BTreeMap::new();
    for line in lines.filter(|line| !line.is_empty()) {
        let Some((name, value)) = line.split_once(':') else {
            return Err(bad(400, format!("malformed header line: {line:?}")));
        };
        if name.is_empty() || name.contains(|c: char| c.is_whitespace()) {
            return Err(bad(400, format!("malformed header name: {name:?}")));
        }
        let value = value.trim();
        headers
            .entry(name.to_ascii_lowercase())
            .and_modify(|existing| {
                existing.push_str(", ");
                existing.push_str(value);
            })
            .or_insert_with(|| value.to_string());
    }
    Ok((method, target, version, headers))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// A status line and headers, ready to be followed by a body.
pub(crate) fn response_head(status: u16, headers: &[(&str, String)]) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head.into_bytes()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        // Not in the IANA registry; it is what Anthropic's servers say.
        529 => "Site Overloaded",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_parsing_lowercases_names_and_joins_repeats() {
        let (method, target, _, headers) = parse_head(
            "POST /v1/messages?beta=true HTTP/1.1\r\nX-Api-Key: k\r\nanthropic-version: a\r\nAnthropic-Version: b\r\n\r\n",
        )
        .unwrap();
        assert_eq!((method, target), ("POST", "/v1/messages?beta=true"));
        assert_eq!(headers["x-api-key"], "k");
        assert_eq!(headers["anthropic-version"], "a, b");
    }

    #[test]
    fn malformed_heads_are_rejected_with_400() {
        for head in [
            "GET\r\n\r\n",
            "POST /x HTTP/2\r\n\r\n",
            "POST x HTTP/1.1\r\n\r\n",
            "POST /x HTTP/1.1\r\nno colon\r\n\r\n",
        ] {
            let Err(HttpError::Bad { status, .. }) = parse_head(head) else {
                panic!("accepted {head:?}");
            };
            assert_eq!(status, 400, "{head:?}");
        }
    }
}
