//! The pump against each attack on the transport: what comes out, one line
//! per frame (`error <code>: <message>` for a malformed-frame request, else
//! the body), and what it held.

use expect_test::{Expect, expect};

use super::*;

const GOOD: &str = r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#;

fn frame(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

async fn run(input: &[u8], limits: FrameLimits) -> (String, PumpStats) {
    let mut out = Vec::new();
    let stats = pump(input, &mut out, limits).await.unwrap();
    (describe(&out), stats)
}

async fn check(input: impl AsRef<[u8]>, expected: Expect) {
    let (out, _) = run(input.as_ref(), FrameLimits::default()).await;
    expected.assert_eq(&out);
}

/// The pump's output, strictly decoded: anything but exact frames fails.
fn describe(mut out: &[u8]) -> String {
    let mut lines = String::new();
    while !out.is_empty() {
        let text = std::str::from_utf8(out).unwrap();
        let rest = text.strip_prefix("Content-Length: ").unwrap();
        let (len, rest) = rest.split_once("\r\n\r\n").unwrap();
        let len: usize = len.parse().unwrap();
        let body = &rest[..len];
        let value: serde_json::Value = serde_json::from_str(body).unwrap();
        if value["method"] == MALFORMED_FRAME {
            assert_eq!(value["id"], serde_json::Value::Null, "{body}");
            let params = &value["params"];
            lines += &format!(
                "error {}: {}\n",
                params["code"],
                params["message"].as_str().unwrap()
            );
        } else {
            lines += body;
            lines.push('\n');
        }
        out = &rest.as_bytes()[len..];
    }
    lines
}

#[tokio::test]
async fn good_frames_pass_through_and_headers_are_normalized() {
    let input = b"content-length: 40\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":1}   \n\r\nContent-Length:30\n\n{\"jsonrpc\":\"2.0\",\"method\":\"y\"}";
    let mut out = Vec::new();
    pump(&input[..], &mut out, FrameLimits::default())
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":1}   \
         Content-Length: 30\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"y\"}"
    );
}

#[tokio::test]
async fn bad_bodies_and_headers_become_malformed_frame_requests() {
    let good = r#"{"jsonrpc":"2.0","method":"ok"}"#;
    let input = format!(
        "Content-Length: 9\r\n\r\n{{not json{}Content-Length: zz\r\n\r\n{}{}",
        frame("{}"),
        frame(r#"{"jsonrpc":"2.0","method":"é\ud800"}"#),
        frame(good),
    );
    check(
        input,
        expect![[r#"
            error -32700: Parse error: key must be a string at line 1 column 2
            error -32600: Invalid request: not a JSON-RPC 2.0 request, notification or response (missing field `jsonrpc` at line 1 column 2)
            error -32700: Parse error: invalid Content-Length "zz"
            error -32700: Parse error: unexpected end of hex escape at line 1 column 36
            {"jsonrpc":"2.0","method":"ok"}
        "#]],
    )
    .await;
}

#[tokio::test]
async fn a_100k_deep_array_in_a_response_does_not_end_the_session() {
    // The transport's parser fails on it (recursion limit) and ends the
    // session; `jsonrpc::Request` alone skips the unknown `result` field
    // without a depth limit, so checking that type was not enough.
    let deep = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#, nested(100_000));
    check(
        frame(&deep) + &frame(GOOD),
        expect![[r#"
            error -32700: Parse error: the message nests deeper than 100 arrays and objects
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
        "#]],
    )
    .await;
}

#[tokio::test]
async fn a_100k_deep_unknown_field_in_a_request_does_not_end_the_session() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"shutdown","junk":{}}}"#,
        nested(100_000)
    );
    check(
        frame(&deep) + &frame(GOOD),
        expect![[r#"
            error -32700: Parse error: the message nests deeper than 100 arrays and objects
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
        "#]],
    )
    .await;
}

#[tokio::test]
async fn a_message_nested_to_the_limit_passes_and_one_level_deeper_does_not() {
    // The outer object is the first level.
    let at_limit = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#, nested(99));
    let too_deep = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#, nested(100));
    let (out, _) = run(
        (frame(&at_limit) + &frame(&too_deep)).as_bytes(),
        FrameLimits::default(),
    )
    .await;
    assert_eq!(
        out,
        format!(
            "{at_limit}\nerror -32700: Parse error: the message nests deeper than 100 arrays and objects\n"
        )
    );
}

#[tokio::test]
async fn the_depth_limit_never_exceeds_what_the_parser_takes() {
    let limits = FrameLimits {
        max_depth: 1000,
        ..FrameLimits::default()
    };
    let at_parser_limit = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#, nested(126));
    let too_deep = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#, nested(127));
    let (out, _) = run(
        (frame(&at_parser_limit) + &frame(&too_deep)).as_bytes(),
        limits,
    )
    .await;
    assert_eq!(
        out,
        format!(
            "{at_parser_limit}\nerror -32700: Parse error: the message nests deeper than 127 arrays and objects\n"
        )
    );
}

#[tokio::test]
async fn a_duplicated_content_length_is_answered_and_the_next_frame_is_served() {
    let body = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
    check(
        format!(
            "Content-Length: {0}\r\nContent-Length: {0}\r\n\r\n{body}\
             Content-Length: {0}\r\nContent-Length: 12\r\n\r\n{body}{1}",
            body.len(),
            frame(GOOD)
        ),
        expect![[r#"
            {"jsonrpc":"2.0","method":"initialized","params":{}}
            error -32700: Parse error: conflicting Content-Length headers (52, then 12); reading a new frame from the second
            error -32700: Parse error: the message is incomplete at its Content-Length (12)
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
        "#]],
    )
    .await;
}

#[tokio::test]
async fn a_too_long_content_length_is_answered_and_the_next_frame_is_served() {
    // The claim swallows the start of the next frame's header.
    check(
        format!(
            "Content-Length: {}\r\n\r\n{GOOD}{}",
            GOOD.len() + 10,
            frame(GOOD)
        ),
        expect![[r#"
            error -32700: Parse error: the message ends before byte 44 but Content-Length says 54
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
        "#]],
    )
    .await;
}

#[tokio::test]
async fn a_too_short_content_length_is_answered_and_the_next_frame_is_served() {
    check(
        format!("Content-Length: 30\r\n\r\n{GOOD}{}", frame(GOOD)),
        expect![[r#"
            error -32700: Parse error: the message is incomplete at its Content-Length (30)
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
        "#]],
    )
    .await;
}

#[tokio::test]
async fn a_body_cut_short_inside_a_string_does_not_hide_the_next_frame() {
    // The next header lands "inside" the open string: its line break breaks
    // the string (claim 80), or the claim ends first (claim 50).
    let cut = r#"{"jsonrpc":"2.0","method":"x","params":"abc"#;
    check(
        format!(
            "Content-Length: 80\r\n\r\n{cut}{}Content-Length: 50\r\n\r\n{cut}{}",
            frame(GOOD),
            frame(GOOD)
        ),
        expect![[r#"
            error -32700: Parse error: control character (\u0000-\u001F) found while parsing a string at line 1 column 61
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
            error -32700: Parse error: the message is incomplete at its Content-Length (50)
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
        "#]],
    )
    .await;
}

#[tokio::test]
async fn a_body_without_a_header_is_answered_and_the_next_frame_is_served() {
    check(
        format!("{GOOD}{}", frame(GOOD)),
        expect![[r#"
            error -32700: Parse error: expected a frame header, found "{"
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
        "#]],
    )
    .await;
}

#[tokio::test]
async fn garbage_between_frames_is_answered_and_every_frame_is_served() {
    let input = [
        frame(GOOD).into_bytes(),
        b"hello: world\r\n\r\n".to_vec(),
        frame(GOOD).into_bytes(),
        b"\x00\xff}{ garbage".to_vec(),
        frame(GOOD).into_bytes(),
        b"\r\n\r\n".to_vec(),
        frame(GOOD).into_bytes(),
        b"Content-Length: 5\r\n".to_vec(),
        frame(GOOD).into_bytes(),
    ]
    .concat();
    check(
        input,
        expect![[r#"
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
            error -32700: Parse error: a frame header without Content-Length
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
            error -32700: Parse error: expected a frame header, found "\0"
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
            error -32700: Parse error: conflicting Content-Length headers (5, then 44); reading a new frame from the second
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
        "#]],
    )
    .await;
}

#[tokio::test]
async fn content_length_text_inside_a_message_is_not_a_frame_boundary() {
    let body = r#"{"jsonrpc":"2.0","method":"x","params":"Content-Length: 2\r\n\r\n{}"}"#;
    check(
        frame(body),
        expect![[r#"
            {"jsonrpc":"2.0","method":"x","params":"Content-Length: 2\r\n\r\n{}"}
        "#]],
    )
    .await;
}

#[tokio::test]
async fn a_500mb_content_length_claim_allocates_nothing() {
    let input = format!(
        "Content-Length: 524288000\r\n\r\n{{\"jsonrpc\":\"2.0\"{}",
        frame(GOOD)
    );
    let (out, stats) = run(input.as_bytes(), FrameLimits::default()).await;
    expect![[r#"
        error -32600: Invalid request: a 524288000-byte message is larger than the 67108864-byte limit
        {"jsonrpc":"2.0","id":2,"method":"shutdown"}
    "#]]
    .assert_eq(&out);
    assert!(stats.peak_buffer <= 2 * READ_CHUNK, "{stats:?}");
}

#[tokio::test]
async fn a_claim_within_the_limit_reserves_only_what_arrives() {
    let input = "Content-Length: 60000000\r\n\r\n{\"jsonrpc\":";
    let (out, stats) = run(input.as_bytes(), FrameLimits::default()).await;
    expect![[r#"
        error -32700: Parse error: input ended after 11 of the 60000000 bytes of a message
    "#]]
    .assert_eq(&out);
    assert!(stats.peak_buffer <= 2 * READ_CHUNK, "{stats:?}");
}

#[tokio::test]
async fn an_endless_header_line_is_cut_at_8k() {
    let mut input = vec![b'a'; 4 * 1024 * 1024];
    input.extend_from_slice(frame(GOOD).as_bytes());
    let (out, stats) = run(&input, FrameLimits::default()).await;
    expect![[r#"
        error -32700: Parse error: a frame header longer than 8192 bytes
        {"jsonrpc":"2.0","id":2,"method":"shutdown"}
    "#]]
    .assert_eq(&out);
    assert!(stats.peak_buffer <= 2 * READ_CHUNK, "{stats:?}");
}

#[tokio::test]
async fn a_flood_of_content_length_lines_is_answered_once_per_8k() {
    // Each overflow goes on from the latest `Content-Length` line, so the
    // block is not read again once per line (nor answered once per line).
    let flood = "Content-Length: 5\r\n".repeat(2000);
    check(
        flood + &frame(GOOD),
        expect![[r#"
            error -32700: Parse error: a frame header longer than 8192 bytes
            error -32700: Parse error: a frame header longer than 8192 bytes
            error -32700: Parse error: a frame header longer than 8192 bytes
            error -32700: Parse error: a frame header longer than 8192 bytes
            error -32700: Parse error: conflicting Content-Length headers (5, then 44); reading a new frame from the second
            {"jsonrpc":"2.0","id":2,"method":"shutdown"}
        "#]],
    )
    .await;
}

#[test]
fn an_endless_header_line_is_answered_before_its_end_arrives() {
    let mut deframer = Deframer::new(FrameLimits::default());
    let kib = [b'a'; 1024];
    for _ in 0..8 {
        deframer.push(&kib);
        assert_eq!(deframer.next_event(), None);
    }
    deframer.push(&kib);
    let Some(Event::Malformed(bad)) = deframer.next_event() else {
        panic!("the 9th KiB of a header line is not answered");
    };
    assert!(bad.message.contains("longer than 8192"), "{bad:?}");
    for _ in 0..100 {
        deframer.push(&kib);
        assert_eq!(deframer.next_event(), None);
        assert!(deframer.buffered() < MARKER_LEN, "{}", deframer.buffered());
    }
}

const MARKER_LEN: usize = header::MARKER.len();

#[tokio::test]
async fn input_ending_inside_a_frame_is_answered() {
    check(
        "Content-Length: 5\r\n",
        expect![[r#"
            error -32700: Parse error: input ended inside a frame header
        "#]],
    )
    .await;
    check("\r\n\r\n", expect![""]).await;
}
