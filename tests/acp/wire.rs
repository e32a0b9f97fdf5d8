//! `rein acp` spoken to line by line, as raw bytes: what a client's
//! transport puts on the wire, in the order and at the moments it does
//! (before an answer came, or after). For the tests that no SDK client can
//! write — bytes that are no message, a pipelined first request — and for
//! replaying what real clients sent (`acp_replay.rs`).

#![allow(dead_code)] // Not every suite uses every helper.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use serde_json::Value;

/// How long a test waits for one more line before it fails (a hang guard,
/// not a measurement: a line normally comes in milliseconds).
const HANG: Duration = Duration::from_secs(120);

/// A line from the agent: a message, or bytes that are not one.
#[derive(Debug)]
pub enum FromAgent {
    Message(Value),
    NotJson(String),
}

/// A running `rein acp`.
pub struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<FromAgent>,
    /// Every line received so far, for a failure's message.
    pub seen: Vec<Value>,
}

impl Agent {
    /// Starts `rein acp` in `cwd` with `env` added (the provider's
    /// variables removed first), its stderr to `log`.
    pub fn spawn(rein: &Path, cwd: &Path, env: &[(String, String)], log: &Path) -> Agent {
        let mut command = Command::new(rein);
        command
            .arg("acp")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap());
        for name in rein_testkit::PROVIDER_ENV {
            command.env_remove(name);
        }
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                let text = String::from_utf8_lossy(&line).trim().to_owned();
                line.clear();
                if text.is_empty() {
                    continue;
                }
                let item = match serde_json::from_str(&text) {
                    Ok(value) => FromAgent::Message(value),
                    Err(_) => FromAgent::NotJson(text),
                };
                if send.send(item).is_err() {
                    break;
                }
            }
        });
        Agent {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Writes `bytes` as they are.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes `message` as one line.
    pub fn send(&mut self, message: &Value) {
        self.send_raw(format!("{message}\n").as_bytes());
    }

    /// The next message from the agent.
    pub fn recv(&mut self) -> Value {
        match self.lines.recv_timeout(HANG) {
            Ok(FromAgent::Message(value)) => {
                self.seen.push(value.clone());
                value
            }
            Ok(FromAgent::NotJson(text)) => panic!(
                "the agent wrote a line that is not JSON: {text:?}\nseen: {:#?}",
                self.seen
            ),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the agent's output ended\nseen: {:#?}", self.seen)
            }
            Err(RecvTimeoutError::Timeout) => {
                panic!("no line from the agent in {HANG:?}\nseen: {:#?}", self.seen)
            }
        }
    }

    /// The agent's messages up to and including the answer to `id`.
    pub fn until_answer(&mut self, id: &Value) -> Vec<Value> {
        let mut got = Vec::new();
        loop {
            let message = self.recv();
            let done = message.get("method").is_none() && message["id"] == *id;
            got.push(message);
            if done {
                return got;
            }
        }
    }

    /// Closes stdin; the agent's exit status, and whatever it wrote after.
    pub fn finish(mut self) -> (std::process::ExitStatus, Vec<Value>) {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        while let Ok(item) = self.lines.recv_timeout(HANG) {
            if let FromAgent::Message(value) = item {
                rest.push(value);
            }
        }
        (self.child.wait().unwrap(), rest)
    }

    /// The most memory the agent held at once (VmHWM), in KiB.
    pub fn peak_memory_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
