//! `rein acp` on the wire: bytes no SDK client would send, and messages
//! at moments an SDK client would not send them. Each test names the
//! issue it comes from (issue 32: attacks on Rein; issue 37: agent panels
//! as real clients drive them). Raw lines through `acp/wire.rs`; the
//! scripted model; no network, no timing assertions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use rein_testkit::rein_binary;
use serde_json::{Value, json};

mod support;
#[path = "acp/wire.rs"]
mod wire;

use wire::Agent;

/// A copy of the demo project and a config and state folder of its own.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        Self {
            dir: support::demo_scratch(),
        }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("project").canonicalize().unwrap()
    }

    fn agent(&self) -> Agent {
        let path = |p: PathBuf| p.display().to_string();
        let env = vec![
            ("REIN_PROVIDER".to_owned(), "scripted".to_owned()),
            ("REIN_SCENARIO".to_owned(), path(support::demo_scenario())),
            (
                "XDG_CONFIG_HOME".to_owned(),
                path(self.dir.path().join("config")),
            ),
            (
                "XDG_STATE_HOME".to_owned(),
                path(self.dir.path().join("state")),
            ),
        ];
        Agent::spawn(
            &rein_binary().unwrap(),
            &self.root(),
            &env,
            &self.dir.path().join("agent.log"),
        )
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("agent.log")).unwrap_or_default()
    }
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}},
    }})
}

fn new_session(id: u64, cwd: &std::path::Path) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}})
}

/// Issue 32, attack 12: one line of invalid UTF-8 on stdin ended `rein
/// acp`. It is a parse error (-32700, id null), and the agent goes on: the
/// next requests are served.
#[test]
fn a_line_that_is_not_utf8_is_a_parse_error_and_the_agent_goes_on() {
    let s = Scratch::new();
    let mut agent = s.agent();
    agent.send_raw(
        b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\",\"params\":\"\xc3\x28\"}\n",
    );
    let error = agent.recv();
    assert_eq!(
        error,
        json!({"jsonrpc": "2.0", "id": null, "error": {
            "code": -32700,
            "message": "Parse error: the line is not UTF-8 (an invalid byte at offset 56)",
        }}),
        "{}",
        s.log()
    );
    agent.send(&initialize(1));
    let answer = agent.until_answer(&json!(1));
    assert_eq!(
        answer.last().unwrap()["result"]["agentInfo"]["name"],
        "rein"
    );
    agent.send(&new_session(2, &s.root()));
    let session = agent.until_answer(&json!(2));
    assert!(
        session.last().unwrap()["result"]["sessionId"].is_string(),
        "{session:#?}\n{}",
        s.log()
    );
    let (status, _) = agent.finish();
    assert!(status.success(), "{status}\n{}", s.log());
}

/// Issue 32, attack 12: a 300 MiB line made `rein acp` hold 954 MB. A
/// line over the limit (64 MiB) is dropped as it streams, answered with
/// an invalid-request error, and the connection goes on; the agent never
/// holds much more than the limit.
#[test]
fn an_over_long_line_is_dropped_as_it_streams_and_the_agent_goes_on() {
    let s = Scratch::new();
    let mut agent = s.agent();
    agent.send_raw(br#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"x":""#);
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..300 {
        agent.send_raw(&chunk);
    }
    agent.send_raw(b"\"}}\n");
    agent.send(&initialize(4));
    let error = agent.recv();
    assert_eq!(error["id"], Value::Null, "{error}");
    assert_eq!(error["error"]["code"], -32600, "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert_eq!(
        message,
        "Invalid request: a line of 314572864 bytes is longer than the 67108864-byte limit; it was discarded"
    );
    let answer = agent.until_answer(&json!(4));
    assert_eq!(
        answer.last().unwrap()["result"]["agentInfo"]["name"],
        "rein"
    );
    let peak_mib = agent.peak_memory_kib() / 1024;
    assert!(
        peak_mib < 256,
        "rein acp held {peak_mib} MiB for a 300 MiB line it should have dropped as it came"
    );
}

/// Issue 37 A: a client that sends `session/new` right after `initialize`,
/// without waiting for its answer (CodeCompanion did), was refused
/// "ACP initialization must complete…" and saw a blank chat. Messages are
/// served in order: the session is opened after `initialize` is answered.
#[test]
fn a_session_new_sent_before_the_initialize_answer_is_served_after_it() {
    let s = Scratch::new();
    let mut agent = s.agent();
    let both = format!("{}\n{}\n", initialize(0), new_session(1, &s.root()));
    agent.send_raw(both.as_bytes());
    let got = agent.until_answer(&json!(1));
    let answers: Vec<&Value> = got.iter().filter(|m| m.get("method").is_none()).collect();
    assert_eq!(answers.len(), 2, "{got:#?}");
    assert_eq!(answers[0]["id"], 0);
    assert!(
        answers[0]["result"]["protocolVersion"].is_number(),
        "{got:#?}"
    );
    assert_eq!(answers[1]["id"], 1);
    assert!(
        answers[1]["result"]["sessionId"].is_string(),
        "{got:#?}\n{}",
        s.log()
    );
}
