//! An incremental parser for `text/event-stream` (the WHATWG server-sent
//! events format): bytes in, whole events out, whatever the chunking. A
//! chunk may end anywhere, inside a line, a `\r\n` pair or a UTF-8
//! character.

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if the event had one.
    pub event: Option<String>,
    /// The `data:` lines joined by `\n`.
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: Option<String>,
    data: String,
    has_data: bool,
    /// The last chunk ended with '\r': a '\n' starting the next one
    /// belongs to it.
    skip_lf: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk; returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let chunk = match (self.skip_lf, chunk.first()) {
            (true, Some(b'\n')) => &chunk[1..],
            _ => chunk,
        };
        if !chunk.is_empty() {
            self.skip_lf = false;
        }
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.buf[start..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        {
            let end = start + offset;
            let terminator = match (self.buf[end], self.buf.get(end + 1)) {
                (b'\r', Some(b'\n')) => 2,
                (b'\r', None) => {
                    // Maybe the first half of "\r\n": the line is complete
                    // either way; skip a '\n' if the next chunk starts with one.
                    self.skip_lf = true;
                    1
                }
                _ => 1,
            };
            let line = String::from_utf8_lossy(&self.buf[start..end]).into_owned();
            start = end + terminator;
            if let Some(event) = self.line(&line) {
                events.push(event);
            }
        }
        self.buf.drain(..start);
        events
    }

    /// Bytes received that did not make a complete event: at the end of a
    /// stream, a sign that it was cut off.
    pub fn has_partial_event(&self) -> bool {
        !self.buf.is_empty() || self.has_data || self.event.is_some()
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None; // A comment, e.g. a keep-alive.
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {} // `id`, `retry` and unknown fields mean nothing to us.
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
        }
    }

    const STREAM: &str = "event: message_start\r\ndata: {\"a\":\"é😀\"}\r\n\r\n: keep-alive\n\ndata: line one\ndata:line two\n\nevent: ping\rdata: {}\r\r";

    #[test]
    fn parses_all_line_endings_comments_and_multiline_data() {
        let events = SseParser::new().feed(STREAM.as_bytes());
        assert_eq!(
            events,
            vec![
                ev(Some("message_start"), "{\"a\":\"é😀\"}"),
                ev(None, "line one\nline two"),
                ev(Some("ping"), "{}"),
            ]
        );
    }

    #[test]
    fn any_chunking_gives_the_same_events() {
        let bytes = STREAM.as_bytes();
        let whole = SseParser::new().feed(bytes);
        for size in 1..bytes.len() {
            let mut parser = SseParser::new();
            let events: Vec<SseEvent> = bytes.chunks(size).flat_map(|c| parser.feed(c)).collect();
            assert_eq!(events, whole, "chunk size {size}");
            assert!(!parser.has_partial_event());
        }
    }

    #[test]
    fn a_cut_stream_leaves_a_partial_event() {
        let mut parser = SseParser::new();
        assert!(
            parser
                .feed(b"event: content_block_delta\ndata: {\"ty")
                .is_empty()
        );
        assert!(parser.has_partial_event());
    }
}
