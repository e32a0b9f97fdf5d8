//! What real ACP clients send, replayed against `rein acp` as data: the
//! traffic of CodeCompanion.nvim recorded by hand in headless Neovim
//! (`tests/acp/record/`), and Toad's message sequence reconstructed from
//! its source (it cannot run here: see the fixtures' headers and
//! `tests/fixtures/acp_traffic/README.md`). Each fixture holds, per agent
//! process the client started, the client's messages in the order it sent
//! them and the points where it waited: before a message, everything the
//! agent had answered (and the permissions and writes it had asked for) by
//! then in the recording is waited for, and nothing else. So a client that
//! sends `session/new` before `initialize`'s answer (CodeCompanion does)
//! does so here too. The agent's requests are answered as that client
//! answers them: files from the disk (an empty text for a missing one), the
//! permissions with the recorded choices.
//!
//! The scripted model plays the demo; no network; no timing assertions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use rein_testkit::rein_binary;
use serde_json::{Value, json};

mod support;
#[path = "acp/wire.rs"]
mod wire;

use support::{FIXED, UNFIXED};
use wire::Agent;

/// One recorded line: which agent process, which way, the message.
struct Entry {
    agent: u64,
    to_agent: bool,
    msg: Value,
}

/// A fixture: its header and its lines.
struct Fixture {
    header: Value,
    entries: Vec<Entry>,
}

fn fixture(name: &str) -> Fixture {
    let path = support::fixture(&format!("acp_traffic/{name}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap());
    let header = lines.next().unwrap()["fixture"].clone();
    assert!(header.is_object(), "{}: no header", path.display());
    let entries = lines
        .map(|l| Entry {
            agent: l["agent"].as_u64().unwrap(),
            to_agent: l["dir"] == "to_agent",
            msg: l["msg"].clone(),
        })
        .collect();
    Fixture { header, entries }
}

/// The agent requests whose count marks a moment of the conversation (the
/// reads depend on Rein's own caching, not on the client).
const MOMENTS: [&str; 2] = ["session/request_permission", "fs/write_text_file"];

/// One agent process's conversation, replayed.
struct Replay<'a> {
    agent: Agent,
    root: &'a Path,
    /// Recorded session id → the live one.
    sessions: HashMap<String, String>,
    /// The live answers to the client's requests, by id.
    answers: HashMap<String, Value>,
    /// How many of each agent request came live.
    asked: HashMap<String, usize>,
    /// The recorded answers to permission requests, in order.
    choices: VecDeque<Value>,
    /// The recorded answers to the client's requests, by id.
    recorded: HashMap<String, Value>,
}

fn key(id: &Value) -> String {
    id.to_string()
}

impl Replay<'_> {
    /// Reads the agent's messages (answering its requests as the client
    /// does) until `done`.
    fn pump_until(&mut self, done: &dyn Fn(&Self) -> bool) {
        while !done(self) {
            let message = self.agent.recv();
            match (message.get("method"), message.get("id")) {
                (Some(method), Some(id)) => {
                    let method = method.as_str().unwrap().to_owned();
                    let answer = self.answer(&method, &message["params"]);
                    *self.asked.entry(method).or_default() += 1;
                    let mut reply = json!({"jsonrpc": "2.0", "id": id});
                    match answer {
                        Ok(result) => reply["result"] = result,
                        Err(error) => reply["error"] = error,
                    }
                    self.agent.send(&reply);
                }
                (None, Some(id)) => {
                    // An error the recording did not have: the conversation
                    // cannot go on as recorded (fail now, not at the end).
                    let then = self.recorded.get(&key(id));
                    assert!(
                        message.get("error").is_none()
                            || then.is_some_and(|t| t.get("error").is_some()),
                        "answered with an error where the client got none: {message:#}\nrecorded: {then:#?}"
                    );
                    self.answers.insert(key(id), message.clone());
                }
                _ => {} // notifications: the panel's updates
            }
        }
    }

    /// The client's answer to the agent's request `method`.
    fn answer(&mut self, method: &str, params: &Value) -> Result<Value, Value> {
        match method {
            "fs/read_text_file" => {
                let path = params["path"].as_str().unwrap();
                // Both clients answer a file they cannot read with no text.
                Ok(json!({"content": std::fs::read_to_string(path).unwrap_or_default()}))
            }
            "fs/write_text_file" => {
                let path = params["path"].as_str().unwrap();
                std::fs::write(path, params["content"].as_str().unwrap()).unwrap();
                Ok(Value::Null)
            }
            "session/request_permission" => Ok(self.choices.pop_front().unwrap_or_else(|| {
                panic!("a permission the client was not asked for: {params:#}")
            })),
            _ => Err(json!({"code": -32601, "message": "Method not found"})),
        }
    }

    /// `msg` with the recorded folder and session ids made the live ones.
    fn live(&self, msg: &Value) -> Value {
        match msg {
            Value::String(s) => {
                if let Some(live) = self.sessions.get(s) {
                    return Value::String(live.clone());
                }
                Value::String(s.replace("$ROOT", &self.root.display().to_string()))
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| self.live(v)).collect()),
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), self.live(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// What a replay of one agent process gave: the live answer to each
/// recorded request of the client, with the recorded one.
struct Replayed {
    /// (method, recorded answer, live answer)
    answers: Vec<(String, Value, Value)>,
}

impl Replayed {
    fn stop_reasons(&self) -> Vec<(Value, Value)> {
        self.answers
            .iter()
            .filter(|(method, ..)| method == "session/prompt")
            .map(|(_, recorded, live)| {
                (
                    recorded["result"]["stopReason"].clone(),
                    live["result"]["stopReason"].clone(),
                )
            })
            .collect()
    }
}

/// Replays the conversation of agent process `pid` of `fixture` against a
/// new `rein acp` in `root`.
fn replay(fixture: &Fixture, pid: u64, root: &Path, scratch: &Path) -> Replayed {
    let env = vec![
        ("REIN_PROVIDER".to_owned(), "scripted".to_owned()),
        (
            "REIN_SCENARIO".to_owned(),
            support::demo_scenario().display().to_string(),
        ),
        (
            "XDG_CONFIG_HOME".to_owned(),
            scratch.join("config").display().to_string(),
        ),
        (
            "XDG_STATE_HOME".to_owned(),
            scratch.join("state").display().to_string(),
        ),
    ];
    let entries: Vec<&Entry> = fixture.entries.iter().filter(|e| e.agent == pid).collect();
    // The client's choices, as it answered the agent's permission requests.
    let permission_ids: HashSet<String> = entries
        .iter()
        .filter(|e| !e.to_agent && e.msg["method"] == "session/request_permission")
        .map(|e| key(&e.msg["id"]))
        .collect();
    let choices = entries
        .iter()
        .filter(|e| e.to_agent && permission_ids.contains(&key(&e.msg["id"])))
        .map(|e| e.msg["result"].clone())
        .collect();
    let recorded: HashMap<String, Value> = entries
        .iter()
        .filter(|e| !e.to_agent && e.msg.get("method").is_none())
        .map(|e| (key(&e.msg["id"]), e.msg.clone()))
        .collect();
    let mut r = Replay {
        agent: Agent::spawn(
            &rein_binary().unwrap(),
            root,
            &env,
            &scratch.join("agent.log"),
        ),
        root,
        sessions: HashMap::new(),
        answers: HashMap::new(),
        asked: HashMap::new(),
        choices,
        recorded: recorded.clone(),
    };
    // What had come back in the recording by each moment.
    let mut awaited: Vec<Value> = Vec::new();
    let mut moments: HashMap<String, usize> = HashMap::new();
    let mut requests: Vec<(Value, String)> = Vec::new();
    for entry in &entries {
        let msg = &entry.msg;
        if !entry.to_agent {
            match msg.get("method").and_then(Value::as_str) {
                Some(method) if MOMENTS.contains(&method) => {
                    *moments.entry(method.to_owned()).or_default() += 1;
                }
                Some(_) => {}
                None => {
                    awaited.push(msg["id"].clone());
                }
            }
            continue;
        }
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            continue; // an answer to the agent: given live, as recorded
        };
        // Everything the recording had seen by now, and nothing more.
        let (want, counts) = (awaited.clone(), moments.clone());
        r.pump_until(&|r: &Replay| {
            want.iter().all(|id| r.answers.contains_key(&key(id)))
                && counts
                    .iter()
                    .all(|(m, n)| r.asked.get(m).copied().unwrap_or(0) >= *n)
        });
        for id in &want {
            learn_session(&mut r, &recorded, id);
        }
        r.agent.send(&r.live(msg));
        if let Some(id) = msg.get("id") {
            requests.push((id.clone(), method.to_owned()));
        }
    }
    let want = awaited.clone();
    r.pump_until(&|r: &Replay| want.iter().all(|id| r.answers.contains_key(&key(id))));
    let answers = requests
        .into_iter()
        .filter_map(|(id, method)| {
            let recorded = recorded.get(&key(&id))?.clone();
            Some((method, recorded, r.answers[&key(&id)].clone()))
        })
        .collect();
    Replayed { answers }
}

/// The live session id for a recorded `session/new` answer.
fn learn_session(r: &mut Replay, recorded: &HashMap<String, Value>, id: &Value) {
    let Some(then) = recorded[&key(id)]["result"]["sessionId"].as_str() else {
        return;
    };
    if let Some(now) = r.answers[&key(id)]["result"]["sessionId"].as_str() {
        r.sessions.insert(then.to_owned(), now.to_owned());
    }
}

/// A copy of the demo project; each agent process of the fixture replayed
/// in turn (in the order they first spoke); what each gave.
fn run(name: &str) -> (tempfile::TempDir, PathBuf, Vec<Replayed>) {
    let fixture = fixture(name);
    assert!(
        fixture.header["recorded"].is_string() || fixture.header["reconstructed"].is_string(),
        "{name}: the header says neither how it was recorded nor what it was reconstructed from"
    );
    let dir = support::demo_scratch();
    let root = dir.path().join("project").canonicalize().unwrap();
    let mut pids: Vec<u64> = Vec::new();
    for e in &fixture.entries {
        if !pids.contains(&e.agent) {
            pids.push(e.agent);
        }
    }
    let replays = pids
        .iter()
        .map(|pid| replay(&fixture, *pid, &root, dir.path()))
        .collect();
    (dir, root, replays)
}

/// Every request of the client was answered as in the recording: no
/// error where it got none, the same stop reasons.
fn assert_answered_as_recorded(replays: &[Replayed]) {
    for replay in replays {
        for (method, recorded, live) in &replay.answers {
            assert_eq!(
                recorded.get("error").is_some(),
                live.get("error").is_some(),
                "{method}: recorded {recorded:#}, now {live:#}"
            );
            if method == "session/new" {
                assert!(live["result"]["sessionId"].is_string(), "{live:#}");
            }
        }
        for (recorded, live) in replay.stop_reasons() {
            assert_eq!(recorded, live);
        }
    }
}

fn cart(root: &Path) -> String {
    std::fs::read_to_string(root.join("cart.py")).unwrap()
}

/// CodeCompanion starts two agents for one chat and, on one of them,
/// sends `initialize` twice and `session/new` before the first answer
/// (issue 37 A): every request is answered, the pipelined session opens,
/// the edit is allowed and lands through `fs/write_text_file`, and the
/// user's stop ends the prompt `cancelled`.
#[test]
fn codecompanion_cancelling_after_allowing_an_edit() {
    let (_dir, root, replays) = run("codecompanion_cancel");
    assert_answered_as_recorded(&replays);
    let stops: Vec<Value> = replays
        .iter()
        .flat_map(|r| r.stop_reasons())
        .map(|(_, live)| live)
        .collect();
    assert_eq!(stops, [json!("cancelled")]);
    assert!(cart(&root).contains(FIXED));
}

#[test]
fn codecompanion_fixing_the_demo_with_the_edit_allowed() {
    let (_dir, root, replays) = run("codecompanion_fix");
    assert_answered_as_recorded(&replays);
    assert!(cart(&root).contains(FIXED), "{}", cart(&root));
}

#[test]
fn codecompanion_rejecting_the_edit() {
    let (_dir, root, replays) = run("codecompanion_reject");
    assert_answered_as_recorded(&replays);
    assert!(cart(&root).contains(UNFIXED), "{}", cart(&root));
}

/// Reconstructed from Toad's source (not recorded): a client that also
/// offers a terminal and answers a permission with the option it chose.
#[test]
fn toad_fixing_the_demo_with_the_edit_allowed() {
    let (_dir, root, replays) = run("toad_fix");
    assert_answered_as_recorded(&replays);
    assert!(cart(&root).contains(FIXED), "{}", cart(&root));
}

/// Reconstructed from Toad's source: its `session/cancel` carries `_meta`.
#[test]
fn toad_cancelling_after_the_edit() {
    let (_dir, root, replays) = run("toad_cancel");
    assert_answered_as_recorded(&replays);
    assert!(cart(&root).contains(FIXED), "{}", cart(&root));
}
