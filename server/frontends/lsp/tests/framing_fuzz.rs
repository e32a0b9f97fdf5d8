//! The framing pump against random and mangled input: valid frames
//! interleaved with garbage, truncated frames, bit flips, bogus lengths,
//! bodies without headers, messages nested too deep, endless headers.
//!
//! Invariants, for every input:
//! 1. The deframer never panics and always comes back for more input.
//! 2. How the input is split into reads changes nothing.
//! 3. Every valid frame comes out, body byte for byte, in order, provided
//!    the junk around it contains no `Content-Length` text (in any case)
//!    except at its very first byte (a mangled frame keeps its own header):
//!    that text is all a resync can go by, so no protocol can tell it from
//!    a frame's start. With no junk at all, exactly the valid frames come
//!    out, and no error.
//! 4. Every body passed on parses as a JSON-RPC message no deeper than the
//!    limit, and the whole output is well-formed frames.
//! 5. The deframer never holds more than one message or one header block.
//! 6. Junk that cannot be a frame (a body without a header, a message
//!    nested too deep, an endless header) is answered with an error.
//!
//! CI runs 100,000 cases from a fixed seed. For a longer run (maintainers,
//! before a release), in release mode and outside nextest's timeout:
//!
//! ```text
//! REIN_FRAMING_CASES=20000000 REIN_FRAMING_SEED=$RANDOM \
//!   cargo test --release -p rein --test framing_fuzz -- --nocapture
//! ```
//!
//! A failure prints the seed of its case; rerun it alone with
//! `REIN_FRAMING_SEED=<seed> REIN_FRAMING_CASES=1`.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rein_lsp::framing::{
    Deframer, Event, FrameLimits, MalformedFrame, frame_header, malformed_request, pump,
};
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc;

const DEFAULT_CASES: u64 = 100_000;
const DEFAULT_SEED: u64 = 0x005e_edf4_a3e5;
/// Decode the whole output again (slow in a debug build) on one case in
/// this many, and run the async pump itself on one in `PUMP_EVERY`.
const REDECODE_EVERY: u64 = 8;
const PUMP_EVERY: u64 = 64;

/// What the protocol has to go by after a bad frame.
const MARKER: &[u8] = b"content-length";

#[test]
fn the_pump_survives_random_and_mangled_frames() {
    let cases = env_u64("REIN_FRAMING_CASES").unwrap_or(DEFAULT_CASES);
    let seed = env_u64("REIN_FRAMING_SEED").unwrap_or(DEFAULT_SEED);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let started = Instant::now();
    let mut frames = 0usize;
    for case in 0..cases {
        let case_seed = seed.wrapping_add(case);
        let mut rng = SmallRng::seed_from_u64(case_seed);
        let limits = LIMITS[rng.random_range(0..LIMITS.len())];
        let input = Input::generate(&mut rng, limits);
        frames += input.valid.len();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check(&input, limits, &mut rng, case % REDECODE_EVERY == 0);
            if case % PUMP_EVERY == 0 {
                check_pump(&runtime, &input, limits);
            }
        }));
        if result.is_err() {
            panic!(
                "case {case} failed: rerun with REIN_FRAMING_SEED={case_seed} REIN_FRAMING_CASES=1\n\
                 limits: {limits:?}\ninput: {:?}",
                String::from_utf8_lossy(&input.bytes)
            );
        }
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{cases} cases ({frames} valid frames) in {secs:.1} s: {:.0} cases/s",
        cases as f64 / secs
    );
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.parse().ok()
}

/// Small limits, so every limit is hit often.
const LIMITS: [FrameLimits; 2] = [
    FrameLimits {
        max_message_bytes: 2048,
        max_header_bytes: 128,
        max_depth: 8,
    },
    FrameLimits {
        max_message_bytes: 8192,
        max_header_bytes: 256,
        max_depth: 100,
    },
];

/// What came out of the deframer, owned.
#[derive(Debug, PartialEq)]
enum Out {
    Message(Vec<u8>),
    Malformed(MalformedFrame),
}

/// Feeds `chunks` one after the other, draining events after each.
fn deframe<'a>(limits: FrameLimits, chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Out> {
    let mut deframer = Deframer::new(limits);
    let mut out = Vec::new();
    let mut pushed = 0;
    for chunk in chunks {
        deframer.push(chunk);
        pushed += chunk.len();
        while let Some(event) = deframer.next_event() {
            out.push(match event {
                Event::Message(body) => Out::Message(body.to_vec()),
                Event::Malformed(bad) => Out::Malformed(bad),
            });
            // Every event consumes at least one byte: no endless loop.
            assert!(out.len() <= pushed, "more events than bytes");
        }
        let held = deframer.buffered();
        let most = limits.max_message_bytes.max(limits.max_header_bytes);
        assert!(held <= most, "holds {held} bytes, limits {limits:?}");
    }
    out.extend(deframer.finish().map(Out::Malformed));
    out
}

fn encode(out: &[Out]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for event in out {
        let body = match event {
            Out::Message(body) => body.clone(),
            Out::Malformed(bad) => malformed_request(bad),
        };
        bytes.extend_from_slice(frame_header(body.len()).as_bytes());
        bytes.extend_from_slice(&body);
    }
    bytes
}

fn check(input: &Input, limits: FrameLimits, rng: &mut SmallRng, redecode: bool) {
    let whole = deframe(limits, [&input.bytes[..]]);

    // 2. Reads of random sizes, often tiny.
    let mut chunks = Vec::new();
    let mut rest = &input.bytes[..];
    while !rest.is_empty() {
        let max = if rng.random_bool(0.5) { 8 } else { rest.len() };
        let (chunk, tail) = rest.split_at(rng.random_range(1..=max.min(rest.len())));
        chunks.push(chunk);
        rest = tail;
    }
    assert_eq!(
        deframe(limits, chunks),
        whole,
        "chunking changed the output"
    );

    let messages: Vec<&[u8]> = whole
        .iter()
        .filter_map(|out| match out {
            Out::Message(body) => Some(&body[..]),
            Out::Malformed(_) => None,
        })
        .collect();
    let errors = whole.len() - messages.len();

    // 3. The valid frames, in order.
    let mut found = messages.iter();
    for (i, valid) in input.valid.iter().enumerate() {
        assert!(
            found.any(|body| body == valid),
            "valid frame {i} lost: {:?}\nout: {whole:?}",
            String::from_utf8_lossy(valid)
        );
    }
    if input.junk == 0 {
        assert_eq!(messages, input.valid, "extra messages from valid input");
        assert_eq!(errors, 0, "errors from valid input: {whole:?}");
    }

    // 4. What is passed on is a message, and the output is frames only.
    for body in &messages {
        let value: Value = serde_json::from_slice(body).unwrap();
        assert!(depth(&value) <= limits.max_depth, "too deep passed");
        let text = std::str::from_utf8(body).unwrap();
        assert!(
            serde_json::from_str::<jsonrpc::Request>(text).is_ok()
                || serde_json::from_str::<jsonrpc::Response>(text).is_ok()
        );
    }
    if redecode {
        let again = deframe(FrameLimits::default(), [&encode(&whole)[..]]);
        let expected: Vec<Out> = whole
            .iter()
            .map(|out| match out {
                Out::Message(body) => Out::Message(body.clone()),
                Out::Malformed(bad) => Out::Message(malformed_request(bad)),
            })
            .collect();
        assert_eq!(again, expected, "the output is not well-formed frames");
    }

    // 6.
    if input.must_error {
        assert!(errors > 0, "junk passed without an error: {whole:?}");
    }
}

/// The async pump writes exactly the encoded events.
fn check_pump(runtime: &tokio::runtime::Runtime, input: &Input, limits: FrameLimits) {
    let mut written = Vec::new();
    runtime
        .block_on(pump(&input.bytes[..], &mut written, limits))
        .unwrap();
    assert_eq!(written, encode(&deframe(limits, [&input.bytes[..]])));
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn has_marker(bytes: &[u8]) -> bool {
    bytes.iter().enumerate().any(|(i, &b)| {
        b | 0x20 == b'c'
            && bytes
                .get(i..i + MARKER.len())
                .is_some_and(|window| window.eq_ignore_ascii_case(MARKER))
    })
}

/// One generated input and what it must produce.
struct Input {
    bytes: Vec<u8>,
    /// Bodies of the valid frames in it, in order.
    valid: Vec<Vec<u8>>,
    /// How many junk segments it has.
    junk: usize,
    /// Whether some junk cannot pass without an error.
    must_error: bool,
}

impl Input {
    fn generate(rng: &mut SmallRng, limits: FrameLimits) -> Self {
        let mut input = Input {
            bytes: Vec::new(),
            valid: Vec::new(),
            junk: 0,
            must_error: false,
        };
        let all_valid = rng.random_bool(0.1);
        for _ in 0..rng.random_range(1..=8) {
            if all_valid || rng.random_bool(0.5) {
                let (frame, body) = valid_frame(rng, limits);
                input.bytes.extend_from_slice(&frame);
                input.valid.push(body);
            } else {
                let (junk, must_error) = loop {
                    let (junk, must_error) = junk(rng, limits);
                    // A resync can only go by this text (invariant 3).
                    if junk.len() < 2 || !has_marker(&junk[1..]) {
                        break (junk, must_error);
                    }
                };
                input.bytes.extend_from_slice(&junk);
                input.junk += 1;
                input.must_error |= must_error;
            }
        }
        input
    }
}

/// A frame the transport accepts, and its body.
fn valid_frame(rng: &mut SmallRng, limits: FrameLimits) -> (Vec<u8>, Vec<u8>) {
    loop {
        let mut body = message(rng, limits).into_bytes();
        if rng.random_bool(0.1) {
            body.extend_from_slice(b" \r\n\t");
        }
        if body.len() > limits.max_message_bytes || has_marker(&body) {
            continue;
        }
        let len = body.len();
        let header = match rng.random_range(0..10) {
            0 => format!("content-length:{len}\r\n\r\n"),
            1 => format!("Content-Length: {len}\n\n"),
            2 => format!(
                "Content-Length: {len}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
            ),
            3 => {
                format!("Content-Type: application/vscode-jsonrpc\r\nContent-Length: {len}\r\n\r\n")
            }
            4 => format!("Content-Length: {len}\r\nContent-Length: {len}\r\n\r\n"),
            _ => frame_header(len),
        };
        let mut frame = header.into_bytes();
        frame.extend_from_slice(&body);
        return (frame, body);
    }
}

/// A JSON-RPC message no deeper than the limit.
fn message(rng: &mut SmallRng, limits: FrameLimits) -> String {
    // The outer object is one level.
    let room = limits.max_depth - 1;
    let payload = if rng.random_bool(0.05) {
        // Exactly at the limit.
        nested(room, json!("end"))
    } else {
        value(rng, room.min(4))
    };
    let id = if rng.random_bool(0.5) {
        json!(rng.random_range(0..1000))
    } else {
        json!(text(rng))
    };
    let message = match rng.random_range(0..4) {
        0 => json!({"jsonrpc": "2.0", "id": id, "method": text(rng), "params": payload}),
        1 => json!({"jsonrpc": "2.0", "method": text(rng), "params": payload}),
        2 => json!({"jsonrpc": "2.0", "id": id, "result": payload}),
        _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": text(rng)}}),
    };
    if rng.random_bool(0.2) {
        serde_json::to_string_pretty(&message).unwrap()
    } else {
        message.to_string()
    }
}

fn nested(depth: usize, inner: Value) -> Value {
    (0..depth).fold(inner, |value, _| Value::Array(vec![value]))
}

fn value(rng: &mut SmallRng, depth: usize) -> Value {
    match rng.random_range(0..if depth == 0 { 4 } else { 6 }) {
        0 => json!(text(rng)),
        1 => json!(rng.random::<i32>()),
        2 => json!(rng.random::<f64>() * 1e6),
        3 => [json!(null), json!(true), json!(false)][rng.random_range(0..3)].clone(),
        4 => Value::Array(
            (0..rng.random_range(0..4))
                .map(|_| value(rng, depth - 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.random_range(0..4))
                .map(|_| (text(rng), value(rng, depth - 1)))
                .collect(),
        ),
    }
}

/// Text with what JSON must escape, non-ASCII, and header look-alikes.
fn text(rng: &mut SmallRng) -> String {
    const PIECES: &[&str] = &[
        "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{1}", "\u{7f}", "é", "😀",
        "\u{2028}", ":", "{", "}", "[", "]", ",", "Content-", "Length", "\r\n\r\n",
    ];
    (0..rng.random_range(0..12))
        .map(|_| PIECES[rng.random_range(0..PIECES.len())])
        .collect()
}

/// Bytes that are not one valid frame, and whether they must be answered
/// with an error wherever they stand.
fn junk(rng: &mut SmallRng, limits: FrameLimits) -> (Vec<u8>, bool) {
    let kind = rng.random_range(0..13);
    let (frame, body) = match kind {
        0 | 1 | 2 | 7 | 8 | 12 => Default::default(),
        _ => valid_frame(rng, limits),
    };
    match kind {
        // Random bytes.
        0 => (
            (0..rng.random_range(0..40)).map(|_| rng.random()).collect(),
            false,
        ),
        // Random text made of what frames are made of.
        1 => {
            const BYTES: &[u8] = b"ab:; \r\n{}[]\",\\0123456789";
            let bytes = (0..rng.random_range(0..40))
                .map(|_| BYTES[rng.random_range(0..BYTES.len())])
                .collect();
            (bytes, false)
        }
        // Header look-alikes and blank lines.
        2 => {
            const LINES: &[&[u8]] = &[
                b"X-Foo: bar\r\n",
                b"\r\n",
                b"\n",
                b"Content-Type: text/plain\r\n",
                b": x\r\n",
                b"\r",
            ];
            let bytes = (0..rng.random_range(1..4))
                .flat_map(|_| LINES[rng.random_range(0..LINES.len())].iter().copied())
                .collect();
            (bytes, false)
        }
        // A frame cut short.
        3 => {
            let cut = rng.random_range(0..frame.len());
            (frame[..cut].to_vec(), false)
        }
        // A frame with flipped bits.
        4 => {
            let mut frame = frame;
            for _ in 0..rng.random_range(1..=3) {
                let at = rng.random_range(0..frame.len());
                frame[at] ^= 1 << rng.random_range(0..8);
            }
            (frame, false)
        }
        // A frame with a bogus length.
        5 => {
            let len = body.len();
            let claim = match rng.random_range(0..7) {
                0 => (len + rng.random_range(1..20)).to_string(),
                1 => len.saturating_sub(rng.random_range(1..20)).to_string(),
                2 => "0".into(),
                3 => (limits.max_message_bytes + 1).to_string(),
                4 => "524288000".into(),
                5 => "99999999999999999999999".into(),
                _ => ["abc", "-5", "", "+7", "1 2"][rng.random_range(0..5)].into(),
            };
            let mut bytes = format!("Content-Length: {claim}\r\n\r\n").into_bytes();
            bytes.extend_from_slice(&body);
            (bytes, false)
        }
        // A body without a header.
        6 => (body, true),
        // A message nested deeper than the limit.
        7 => {
            let depth = limits.max_depth + rng.random_range(0..50);
            let deep = format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{}{}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let mut bytes = frame_header(deep.len()).into_bytes();
            bytes.extend_from_slice(deep.as_bytes());
            (bytes, true)
        }
        // A header block that never ends.
        8 => {
            let pad = "a".repeat(limits.max_header_bytes + rng.random_range(0..20));
            (format!("X-Pad: {pad}\r\n").into_bytes(), true)
        }
        // A header line that leaves the next frame's header a few bytes
        // short of the limit.
        12 => {
            let pad = "a".repeat(limits.max_header_bytes - 9 - rng.random_range(0..16));
            (format!("X-Pad: {pad}\r\n").into_bytes(), false)
        }
        // A header without the blank line after it.
        9 => {
            let mut bytes = format!("Content-Length: {}\r\n", body.len()).into_bytes();
            bytes.extend_from_slice(&body);
            (bytes, false)
        }
        // A frame with a range of bytes cut out or repeated.
        10 => {
            let from = rng.random_range(0..frame.len());
            let to = rng.random_range(from..=frame.len());
            let mut bytes = frame[..from].to_vec();
            if rng.random_bool(0.5) {
                bytes.extend_from_slice(&frame[from..to]);
                bytes.extend_from_slice(&frame[from..to]);
            }
            bytes.extend_from_slice(&frame[to..]);
            (bytes, false)
        }
        // A header cut short in front of its body.
        _ => {
            let header_len = frame.len() - body.len();
            let cut = rng.random_range(0..header_len);
            let mut bytes = frame[..cut].to_vec();
            bytes.extend_from_slice(&body);
            (bytes, false)
        }
    }
}
