//! Splits the client's bytes into frames, as they arrive, and finds the next
//! frame after a bad one.
//!
//! A frame is served only if its header block is well formed and its body,
//! exactly `Content-Length` bytes, is a message the transport accepts.
//! Anything else is answered with one error, then resynchronized: the
//! input is scanned for the next `Content-Length` text (in any case), and a
//! header is read from there. The scan starts at the earliest byte where a
//! real frame can start, so that a good frame after garbage is never lost:
//! - a header line that turns out to be garbage: its second byte (frames
//!   follow each other without a line break, so one may start mid-line);
//! - a second, different `Content-Length`: that line (the first one may be
//!   a frame cut short);
//! - a header block over the limit: its latest `Content-Length` line
//!   (header look-alikes may have run into a good frame's header);
//! - a body that cannot be what its header claims: the byte that broke
//!   it, or the start of the string open then (a header holds a line
//!   break, which no JSON string may; outside strings its first byte
//!   breaks the JSON). This is how a `Content-Length` too long (bytes
//!   after the value), too short (a value still open) or a body too deep
//!   is found early, without waiting for bytes the header only claims.
//!
//! A body that is one JSON value of exactly the claimed length is trusted
//! to end there, even if the transport rejects it, so text inside it is
//! never taken for a frame.
//!
//! Memory: nothing is reserved for what a header claims. Between pushes the
//! deframer holds the body received so far (at most `max_message_bytes`),
//! the header block being read (at most `max_header_bytes`), or, while
//! resyncing, the last few bytes in case they begin the marker.
//!
//! Offsets are positions in the whole input, so they survive compaction.

use serde::de::IgnoredAny;
use tower_lsp_server::jsonrpc::ErrorCode;

use super::header::{self, Line, MARKER};
use super::json_scan::{Fault, JsonScan};
use super::transport::{self, PARSER_MAX_DEPTH};
use super::{FrameLimits, MalformedFrame, malformed};

/// What the client sent, frame by frame.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// The body of a well-formed frame, exactly as received.
    Message(&'a [u8]),
    /// Bytes that were not a well-formed frame, and why.
    Malformed(MalformedFrame),
}

#[derive(Debug)]
pub struct Deframer {
    limits: FrameLimits,
    buf: Vec<u8>,
    /// Input offset of `buf[0]`.
    base: usize,
    state: State,
    /// The largest the buffer's allocation has been.
    peak_capacity: usize,
}

#[derive(Debug)]
enum State {
    Header(Header),
    Body(Body),
    /// Discarding input up to the next marker, from this offset.
    Resync(usize),
}

#[derive(Debug)]
struct Header {
    /// Start of the block's first non-blank line, once there is one.
    block: Option<usize>,
    line_start: usize,
    /// The next byte to read.
    at: usize,
    line: Line,
    length: Option<u64>,
    /// How many bytes before `at` match the start of the marker.
    matched: usize,
    /// Start of the block's latest line that begins with the marker.
    last_marker: Option<usize>,
}

#[derive(Debug)]
struct Body {
    start: usize,
    len: usize,
    scan: JsonScan,
}

/// The outcome of one step of the state machine.
enum Step {
    NeedMore,
    /// On to this state, with nothing to report.
    Go(State),
    Bad(MalformedFrame, State),
    Message {
        start: usize,
        end: usize,
    },
}

impl Deframer {
    pub fn new(limits: FrameLimits) -> Self {
        Self {
            limits,
            buf: Vec::new(),
            base: 0,
            state: State::Header(Header::at(0)),
            peak_capacity: 0,
        }
    }

    /// Adds input. Call [`Deframer::next_event`] until it returns `None`
    /// before pushing more, so that consumed bytes can be dropped.
    pub fn push(&mut self, input: &[u8]) {
        let live = self.live_from() - self.base;
        self.buf.drain(..live);
        self.base += live;
        // A big message's buffer is given back once it is consumed.
        let needed = self.buf.len() + input.len();
        if self.buf.capacity() > (4 * needed).max(64 * 1024) {
            self.buf.shrink_to((2 * needed).max(64 * 1024));
        }
        self.buf.extend_from_slice(input);
        self.peak_capacity = self.peak_capacity.max(self.buf.capacity());
    }

    /// The next frame or error that the input pushed so far holds.
    pub fn next_event(&mut self) -> Option<Event<'_>> {
        loop {
            match self.step() {
                Step::NeedMore => return None,
                Step::Go(next) => self.state = next,
                Step::Bad(bad, next) => {
                    self.state = next;
                    return Some(Event::Malformed(bad));
                }
                Step::Message { start, end } => {
                    self.state = State::Header(Header::at(end));
                    return Some(Event::Message(
                        &self.buf[start - self.base..end - self.base],
                    ));
                }
            }
        }
    }

    /// At the end of input (once `next_event` returned `None`): the error
    /// for a frame left unfinished, if one was.
    pub fn finish(&mut self) -> Option<MalformedFrame> {
        let end = self.end();
        let state = std::mem::replace(&mut self.state, State::Resync(end));
        match state {
            State::Header(h) if h.block.is_some() || h.at > h.line_start => Some(malformed(
                ErrorCode::ParseError,
                "Parse error: input ended inside a frame header".into(),
            )),
            State::Body(body) => Some(malformed(
                ErrorCode::ParseError,
                format!(
                    "Parse error: input ended after {} of the {} bytes of a message",
                    end - body.start,
                    body.len
                ),
            )),
            State::Header(_) | State::Resync(_) => None,
        }
    }

    /// Bytes held now (not yet consumed).
    pub fn buffered(&self) -> usize {
        self.end() - self.live_from()
    }

    /// The most memory the buffer has taken.
    pub fn peak_capacity(&self) -> usize {
        self.peak_capacity
    }

    fn end(&self) -> usize {
        self.base + self.buf.len()
    }

    /// The first offset still needed.
    fn live_from(&self) -> usize {
        match &self.state {
            State::Header(h) => h.block.unwrap_or(h.line_start),
            State::Body(body) => body.start,
            State::Resync(from) => *from,
        }
    }

    fn step(&mut self) -> Step {
        let (buf, base) = (&self.buf[..], self.base);
        match &mut self.state {
            State::Header(h) => h.step(buf, base, &self.limits),
            State::Body(body) => body.step(buf, base),
            State::Resync(from) => match header::find_marker(&buf[*from - base..]) {
                Some(found) => Step::Go(State::Header(Header::at(*from + found))),
                None => {
                    // Keep what may be the start of a marker.
                    let end = base + buf.len();
                    *from = (*from).max(end.saturating_sub(MARKER.len() - 1));
                    Step::NeedMore
                }
            },
        }
    }
}

impl Header {
    fn at(offset: usize) -> Self {
        Self {
            block: None,
            line_start: offset,
            at: offset,
            line: Line::Start,
            length: None,
            matched: 0,
            last_marker: None,
        }
    }

    fn step(&mut self, buf: &[u8], base: usize, limits: &FrameLimits) -> Step {
        let end = base + buf.len();
        while self.at < end {
            if let Some(block) = self.block
                && self.at - block >= limits.max_header_bytes
            {
                return self.too_long(block, limits);
            }
            let b = buf[self.at - base];
            match header::step(self.line, b) {
                header::Step::Continue(line) => {
                    if self.line == Line::Start && line == Line::Name {
                        self.block.get_or_insert(self.line_start);
                    }
                    self.line = line;
                    self.matched = header::match_marker(self.matched, b);
                    if self.matched == MARKER.len() {
                        self.matched = 0;
                        let start = self.at + 1 - MARKER.len();
                        if start > self.line_start {
                            // Garbage, then a frame on the same line.
                            let seen = &buf[self.line_start - base..=self.at - base];
                            return self.garbage(seen);
                        }
                        self.last_marker = Some(start);
                    }
                    self.at += 1;
                }
                header::Step::Garbage => {
                    let seen = &buf[self.line_start - base..=self.at - base];
                    return self.garbage(seen);
                }
                header::Step::Blank => {
                    self.at += 1;
                    if self.block.is_none() {
                        // Stray blank lines between frames are harmless.
                        self.line_start = self.at;
                        self.line = Line::Start;
                        continue;
                    }
                    return match self.length {
                        Some(len) => Step::Go(State::Body(Body {
                            start: self.at,
                            // At most `max_message_bytes`, checked below.
                            len: usize::try_from(len).unwrap_or(usize::MAX),
                            scan: JsonScan::new(limits.max_depth.min(PARSER_MAX_DEPTH)),
                        })),
                        None => Step::Bad(
                            malformed(
                                ErrorCode::ParseError,
                                "Parse error: a frame header without Content-Length".into(),
                            ),
                            State::Resync(self.at),
                        ),
                    };
                }
                header::Step::End => {
                    let mut line = &buf[self.line_start - base..self.at - base];
                    if self.line == Line::ValueCr {
                        line = &line[..line.len() - 1];
                    }
                    if let Some(bad) = self.header_line(line, limits) {
                        return bad;
                    }
                    self.at += 1;
                    self.line_start = self.at;
                    self.line = Line::Start;
                    self.matched = 0;
                }
            }
        }
        Step::NeedMore
    }

    /// The block reached the limit. Header look-alikes may have run into a
    /// frame's own header, so the block's latest line that begins with the
    /// marker may start a good frame, or else the marker being read. Going
    /// on from the latest such line, not the first, keeps a block of many
    /// `Content-Length` lines from being read again once per line.
    fn too_long(&self, block: usize, limits: &FrameLimits) -> Step {
        let partial = self.at - self.matched;
        let from = match self.last_marker {
            Some(line) if line > block => line,
            _ if self.matched > 0 && partial > block => partial,
            _ => self.at,
        };
        Step::Bad(
            malformed(
                ErrorCode::ParseError,
                format!(
                    "Parse error: a frame header longer than {} bytes",
                    limits.max_header_bytes
                ),
            ),
            State::Resync(from),
        )
    }

    fn garbage(&self, seen: &[u8]) -> Step {
        Step::Bad(
            malformed(
                ErrorCode::ParseError,
                format!(
                    "Parse error: expected a frame header, found {}",
                    header::excerpt(seen)
                ),
            ),
            State::Resync(self.line_start + 1),
        )
    }

    /// Takes in one complete header line; `Some` if it ends the frame.
    fn header_line(&mut self, line: &[u8], limits: &FrameLimits) -> Option<Step> {
        let bad = |message: String, from: usize| {
            Some(Step::Bad(
                malformed(ErrorCode::ParseError, message),
                State::Resync(from),
            ))
        };
        let length = match header::content_length(line)? {
            Ok(length) => length,
            Err(value) => {
                return bad(
                    format!("Parse error: invalid Content-Length {value:?}"),
                    self.line_start + 1,
                );
            }
        };
        if length > limits.max_message_bytes as u64 {
            return Some(Step::Bad(
                malformed(
                    ErrorCode::InvalidRequest,
                    format!(
                        "Invalid request: a {length}-byte message is larger than the {}-byte limit",
                        limits.max_message_bytes
                    ),
                ),
                State::Resync(self.line_start + 1),
            ));
        }
        match self.length {
            Some(earlier) if earlier != length => bad(
                format!(
                    "Parse error: conflicting Content-Length headers ({earlier}, then {length}); \
                     reading a new frame from the second"
                ),
                // Not the block's first line: the resync makes progress.
                self.line_start,
            ),
            _ => {
                self.length = Some(length);
                None
            }
        }
    }
}

impl Body {
    fn step(&mut self, buf: &[u8], base: usize) -> Step {
        let available = (base + buf.len()).min(self.start + self.len);
        let from = self.start + self.scan.pos();
        let scanned = match self.scan.feed(&buf[from - base..available - base]) {
            Ok(()) if self.scan.pos() < self.len => return Step::NeedMore,
            Ok(()) => self.scan.finish(),
            Err(failure) => Err(failure),
        };
        let end = self.start + self.len;
        match scanned {
            Ok(()) => match transport::check(&buf[self.start - base..end - base]) {
                Ok(()) => Step::Message {
                    start: self.start,
                    end,
                },
                Err(bad) => Step::Bad(bad, State::Header(Header::at(end))),
            },
            Err(failure) => {
                let message = match failure.fault {
                    Fault::Syntax => {
                        // serde_json says what was expected; its parse of
                        // this prefix fails no later than the scan did.
                        let seen = &buf[self.start - base..=self.start + failure.at - base];
                        match serde_json::from_slice::<IgnoredAny>(seen) {
                            Err(error) => format!("Parse error: {error}"),
                            Ok(_) => format!(
                                "Parse error: the message is not valid JSON (byte {} of {})",
                                failure.at, self.len
                            ),
                        }
                    }
                    Fault::TooDeep => format!(
                        "Parse error: the message nests deeper than {} arrays and objects",
                        self.scan.max_depth()
                    ),
                    Fault::TrailingData => format!(
                        "Parse error: the message ends before byte {} but Content-Length says {}",
                        failure.at, self.len
                    ),
                    Fault::Incomplete => format!(
                        "Parse error: the message is incomplete at its Content-Length ({})",
                        self.len
                    ),
                };
                Step::Bad(
                    malformed(ErrorCode::ParseError, message),
                    State::Resync(self.start + failure.resync_from),
                )
            }
        }
    }
}
