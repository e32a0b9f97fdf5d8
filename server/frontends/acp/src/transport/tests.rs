use futures::{FutureExt, SinkExt, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

use super::*;

const LIMIT: usize = 100;

/// The pump between a client (`to_agent`, `from_agent`) and the SDK's two
/// ends (`sdk_out`, `sdk_in`).
struct Pump<O, I> {
    to_agent: DuplexStream,
    from_agent: BufReader<DuplexStream>,
    sdk_out: O,
    sdk_in: I,
}

fn pump() -> Pump<
    impl Sink<String, Error = io::Error> + Unpin,
    impl Stream<Item = io::Result<String>> + Unpin,
> {
    let (to_agent, agent_in) = tokio::io::duplex(1 << 20);
    let (agent_out, from_agent) = tokio::io::duplex(1 << 20);
    let (sdk_out, sdk_in) = guarded(
        agent_in,
        agent_out,
        LineLimits {
            max_line_bytes: LIMIT,
        },
    );
    Pump {
        to_agent,
        from_agent: BufReader::new(from_agent),
        sdk_out,
        sdk_in,
    }
}

impl<O: Sink<String, Error = io::Error> + Unpin, I: Stream<Item = io::Result<String>> + Unpin>
    Pump<O, I>
{
    /// What the client wrote, to its end: the lines the SDK got.
    async fn sdk_reads_all(&mut self, input: &[u8]) -> Vec<String> {
        self.to_agent.write_all(input).await.unwrap();
        self.to_agent.shutdown().await.unwrap();
        let mut lines = Vec::new();
        while let Some(line) = self.sdk_in.next().await {
            lines.push(line.unwrap());
        }
        lines
    }

    /// The next line the client got.
    async fn client_reads(&mut self) -> Value {
        let mut line = String::new();
        self.from_agent.read_line(&mut line).await.unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

fn request(id: u32, method: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{}}}}"#)
}

/// Bytes that are no message get an error each, in order, with id `null`;
/// the lines around them reach the SDK untouched, and the connection goes
/// on to the end of input.
#[tokio::test]
async fn bad_lines_are_answered_and_the_connection_goes_on() {
    let mut p = pump();
    let good = request(1, "session/list");
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\xff\"}\n");
    input.extend_from_slice(format!("{good}\n\n  \r\n").as_bytes());
    input.extend_from_slice(b"{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\"\n");
    input.extend_from_slice(&[b'x'; 3 * LIMIT]);
    input.extend_from_slice(b"\n[1, 2]\n");
    input.extend_from_slice(request(2, "session/new").as_bytes());
    let sdk = p.sdk_reads_all(&input).await;
    assert_eq!(sdk, [good, "[1, 2]".into(), request(2, "session/new")]);
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.push(p.client_reads().await);
    }
    expect_test::expect![[r#"
        [
          {
            "jsonrpc": "2.0",
            "id": null,
            "error": {
              "code": -32700,
              "message": "Parse error: the line is not UTF-8 (an invalid byte at offset 35)"
            }
          },
          {
            "jsonrpc": "2.0",
            "id": null,
            "error": {
              "code": -32700,
              "message": "Parse error: EOF while parsing an object at line 1 column 36"
            }
          },
          {
            "jsonrpc": "2.0",
            "id": null,
            "error": {
              "code": -32600,
              "message": "Invalid request: a line of 300 bytes is longer than the 100-byte limit; it was discarded"
            }
          }
        ]"#]]
    .assert_eq(&serde_json::to_string_pretty(&answers).unwrap());
}

/// A message right behind `initialize` waits until `initialize` is
/// answered; an answer to another id does not let it through.
#[tokio::test]
async fn a_message_after_initialize_waits_for_its_answer() {
    let mut p = pump();
    let input = format!(
        "{}\n{}\n",
        request(0, "initialize"),
        request(1, "session/new")
    );
    // Both lines arrive in one read.
    p.to_agent.write_all(input.as_bytes()).await.unwrap();
    assert_eq!(
        p.sdk_in.next().await.unwrap().unwrap(),
        request(0, "initialize")
    );
    assert!(p.sdk_in.next().now_or_never().is_none());
    p.sdk_out
        .send(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#.into())
        .await
        .unwrap();
    p.sdk_out
        .send(r#"{"jsonrpc":"2.0","id":"0","result":{}}"#.into())
        .await
        .unwrap();
    assert!(p.sdk_in.next().now_or_never().is_none());
    p.sdk_out
        .send(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#.into())
        .await
        .unwrap();
    assert_eq!(
        p.sdk_in.next().await.unwrap().unwrap(),
        request(1, "session/new")
    );
    // What the SDK wrote reached the client, in order, a line each.
    assert_eq!(p.client_reads().await["method"], "session/update");
    assert_eq!(p.client_reads().await["id"], "0");
    assert_eq!(p.client_reads().await["result"]["protocolVersion"], 1);
}

/// A last line without a line break is still a line.
#[tokio::test]
async fn the_last_line_needs_no_line_break() {
    let mut p = pump();
    let sdk = p.sdk_reads_all(request(3, "session/list").as_bytes()).await;
    assert_eq!(sdk, [request(3, "session/list")]);
}
