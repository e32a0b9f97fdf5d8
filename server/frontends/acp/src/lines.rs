//! The client's bytes as lines, each bounded as it arrives: ACP frames are
//! newline-delimited JSON, and a line longer than [`LineLimits`] allows is
//! counted and dropped as it streams, never held whole (one 300 MiB line
//! once made `rein acp` hold 954 MB before it failed).

/// What one line from the client may make Rein hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineLimits {
    /// The longest line served, in bytes (without its line break). A longer
    /// one is answered with an error and dropped as it arrives.
    pub max_line_bytes: usize,
}

impl Default for LineLimits {
    fn default() -> Self {
        Self {
            // As LSP's largest message (`framing::FrameLimits`): a prompt
            // embedding a 50 MB file, or the client serving one, with room
            // for JSON escapes.
            max_line_bytes: 64 * 1024 * 1024,
        }
    }
}

/// A line, or what was dropped instead.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// The bytes of a line, without its `\n` (nor a `\r` before it).
    Whole(Vec<u8>),
    /// A line over the limit, dropped; how long it was.
    TooLong { bytes: u64 },
}

/// Splits bytes into lines as they arrive.
#[derive(Debug)]
pub struct LineSplitter {
    limits: LineLimits,
    /// The line being received (never over the limit).
    line: Vec<u8>,
    /// `Some(length so far)` while dropping a line over the limit.
    dropping: Option<u64>,
    /// The largest allocation the line buffer has had.
    peak_capacity: usize,
}

impl LineSplitter {
    pub fn new(limits: LineLimits) -> Self {
        Self {
            limits,
            line: Vec::new(),
            dropping: None,
            peak_capacity: 0,
        }
    }

    /// Takes `input`; the lines it completes, in order.
    pub fn push(&mut self, mut input: &[u8]) -> Vec<Line> {
        let mut lines = Vec::new();
        while !input.is_empty() {
            let (part, rest, ended) = match input.iter().position(|&b| b == b'\n') {
                Some(at) => (&input[..at], &input[at + 1..], true),
                None => (input, &[][..], false),
            };
            input = rest;
            self.take(part);
            if ended {
                lines.push(self.end_line());
            }
        }
        lines
    }

    /// The input ended: the last line, if it had no line break.
    pub fn finish(&mut self) -> Option<Line> {
        (self.dropping.is_some() || !self.line.is_empty()).then(|| self.end_line())
    }

    pub fn limits(&self) -> LineLimits {
        self.limits
    }

    /// The largest the line buffer's allocation has been.
    #[cfg(test)]
    pub fn peak_capacity(&self) -> usize {
        self.peak_capacity
    }

    fn take(&mut self, part: &[u8]) {
        if let Some(dropped) = &mut self.dropping {
            *dropped += part.len() as u64;
            return;
        }
        if self.line.len() + part.len() > self.limits.max_line_bytes {
            self.dropping = Some((self.line.len() + part.len()) as u64);
            // Let the memory go now: the rest may take long to arrive.
            self.line = Vec::new();
            return;
        }
        self.line.extend_from_slice(part);
        self.peak_capacity = self.peak_capacity.max(self.line.capacity());
    }

    fn end_line(&mut self) -> Line {
        if let Some(bytes) = self.dropping.take() {
            return Line::TooLong { bytes };
        }
        let mut line = std::mem::take(&mut self.line);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Line::Whole(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splitter(max: usize) -> LineSplitter {
        LineSplitter::new(LineLimits {
            max_line_bytes: max,
        })
    }

    fn whole(text: &str) -> Line {
        Line::Whole(text.as_bytes().to_vec())
    }

    #[test]
    fn lines_split_anywhere_come_out_whole() {
        let mut s = splitter(100);
        let mut lines = s.push(b"{\"a\":1}\n{\"b\"");
        lines.extend(s.push(b":2}\r\n\n{\"c\":3}"));
        lines.extend(s.finish());
        assert_eq!(
            lines,
            [
                whole("{\"a\":1}"),
                whole("{\"b\":2}"),
                whole(""),
                whole("{\"c\":3}")
            ]
        );
        assert_eq!(s.finish(), None);
    }

    /// A line over the limit is counted as it streams and never held: the
    /// buffer stays within the limit however long the line.
    #[test]
    fn a_line_over_the_limit_is_dropped_as_it_streams() {
        let mut s = splitter(64);
        let mut lines = s.push(b"{\"ok\":1}\n");
        let chunk = [b'x'; 1000];
        for _ in 0..1000 {
            lines.extend(s.push(&chunk));
        }
        lines.extend(s.push(b"yy\n{\"ok\":2}\n"));
        assert_eq!(
            lines,
            [
                whole("{\"ok\":1}"),
                Line::TooLong { bytes: 1_000_002 },
                whole("{\"ok\":2}")
            ]
        );
        assert!(s.peak_capacity() <= 128, "{}", s.peak_capacity());
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_served() {
        let mut s = splitter(4);
        assert_eq!(
            s.push(b"abcd\nabcde\n"),
            [whole("abcd"), Line::TooLong { bytes: 5 }]
        );
        // Cut off by the end of input while being dropped.
        assert_eq!(s.push(b"abcdef"), []);
        assert_eq!(s.finish(), Some(Line::TooLong { bytes: 6 }));
    }
}
