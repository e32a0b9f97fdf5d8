//! A language server spawned over stdio, driven by plain threads: the
//! bench writes frames as fast as the pipe takes them and a reader thread
//! timestamps every frame the server sends the moment its last byte
//! arrives. Requests the server makes of the client are answered at once
//! from the reader thread (`null`, or the settings for
//! `workspace/configuration`), so no server ever waits on the bench.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

/// A message from the server and when it arrived.
#[derive(Debug)]
pub struct Incoming {
    pub at: Instant,
    pub message: Value,
}

/// What to start and how.
pub struct Spawn<'a> {
    pub program: &'a Path,
    pub args: &'a [&'a str],
    pub cwd: &'a Path,
    /// The server's stderr goes here.
    pub stderr: &'a Path,
    pub env: Vec<(String, String)>,
    /// Returned for each item of `workspace/configuration`.
    pub settings: Value,
}

type Writer = Arc<Mutex<BufWriter<ChildStdin>>>;

pub struct Server {
    /// Just before the process was spawned.
    pub spawned: Instant,
    child: Child,
    writer: Writer,
    incoming: Receiver<Incoming>,
    stash: VecDeque<Incoming>,
    next_id: i64,
}

/// Frames one JSON message as the LSP base protocol does.
pub fn frame(message: &Value) -> Vec<u8> {
    rein_testkit::frame(message)
}

pub fn request_frame(id: i64, method: &str, params: Value) -> Vec<u8> {
    frame(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

pub fn notification_frame(method: &str, params: Value) -> Vec<u8> {
    frame(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

impl Server {
    pub fn spawn(spawn: Spawn<'_>) -> Result<Self> {
        let mut command = Command::new(spawn.program);
        command
            .args(spawn.args)
            .current_dir(spawn.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(spawn.stderr)?);
        // REIN_LOG too: a debug log would slow the server being measured.
        for name in rein_testkit::PROVIDER_ENV.iter().chain(&["REIN_LOG"]) {
            command.env_remove(name);
        }
        command.envs(spawn.env);
        let spawned = Instant::now();
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {}", spawn.program.display()))?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let writer: Writer = Arc::new(Mutex::new(BufWriter::with_capacity(1 << 16, stdin)));
        let (tx, incoming) = mpsc::channel();
        let answer = Arc::clone(&writer);
        let settings = spawn.settings;
        std::thread::spawn(move || {
            let mut reader = BufReader::with_capacity(1 << 16, stdout);
            while let Ok(Some(body)) = read_frame(&mut reader) {
                let at = Instant::now();
                let Ok(message) = serde_json::from_slice::<Value>(&body) else {
                    continue;
                };
                if let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) {
                    let result = match method {
                        "workspace/configuration" => {
                            let n = message["params"]["items"].as_array().map_or(1, Vec::len);
                            json!(vec![settings.clone(); n])
                        }
                        _ => Value::Null,
                    };
                    let reply = frame(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
                    if let Ok(mut w) = answer.lock() {
                        let _ = w.write_all(&reply).and_then(|()| w.flush());
                    }
                }
                if tx.send(Incoming { at, message }).is_err() {
                    return;
                }
            }
        });
        Ok(Self {
            spawned,
            child,
            writer,
            incoming,
            stash: VecDeque::new(),
            next_id: 1,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes bytes (whole frames) and flushes them to the pipe.
    pub fn write(&self, bytes: &[u8]) -> Result<()> {
        let mut w = self.writer.lock().map_err(|_| anyhow!("writer poisoned"))?;
        w.write_all(bytes)?;
        w.flush()?;
        Ok(())
    }

    pub fn notify(&self, method: &str, params: Value) -> Result<()> {
        self.write(&notification_frame(method, params))
    }

    /// A fresh request id.
    pub fn id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Sends a request; its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> Result<i64> {
        let id = self.id();
        self.write(&request_frame(id, method, params))?;
        Ok(id)
    }

    /// Sends a request and waits for its response: the response and the
    /// round trip (write to last byte of the answer).
    pub fn request(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<(Value, Duration)> {
        let id = self.id();
        let frame = request_frame(id, method, params);
        let sent = Instant::now();
        self.write(&frame)?;
        let response = self.response(id, timeout)?;
        Ok((response.message, response.at.duration_since(sent)))
    }

    /// Waits for the response to request `id`.
    pub fn response(&mut self, id: i64, timeout: Duration) -> Result<Incoming> {
        self.wait_for(timeout, |m| {
            m.get("method").is_none() && m.get("id") == Some(&json!(id))
        })
        .with_context(|| format!("waiting for the response to request {id}"))
    }

    /// Waits for a message matching `pred`; others are kept for later.
    pub fn wait_for(
        &mut self,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Incoming> {
        if let Some(i) = self.stash.iter().position(|m| pred(&m.message)) {
            return self.stash.remove(i).context("stash");
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok(m) if pred(&m.message) => return Ok(m),
                Ok(m) => {
                    // Notifications nobody asked for (logs, progress) would
                    // pile up over 10,000 edits: keep only what may be asked.
                    if m.message.get("id").is_some() || self.stash.len() < 10_000 {
                        self.stash.push_back(m);
                    }
                }
                Err(RecvTimeoutError::Timeout) => bail!("timed out after {timeout:?}"),
                Err(RecvTimeoutError::Disconnected) => bail!("the server closed its output"),
            }
        }
    }

    /// `initialize` (a client that offers UTF-16 positions only, as VS Code
    /// does) then `initialized`; when the last byte of the response came.
    pub fn initialize(&mut self, root: &Path, options: Value) -> Result<Instant> {
        let uri = file_uri(root);
        let params = json!({
            "processId": std::process::id(),
            "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": "bench"}],
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "workspace": {"configuration": true, "applyEdit": true},
                "window": {"workDoneProgress": true},
                "textDocument": {"synchronization": {"dynamicRegistration": false}}
            },
            "clientInfo": {"name": "rein-bench"},
            "initializationOptions": options
        });
        let id = self.send_request("initialize", params)?;
        let response = self.response(id, Duration::from_secs(60))?;
        if response.message.get("error").is_some() {
            bail!("initialize failed: {}", response.message);
        }
        self.notify("initialized", json!({}))?;
        Ok(response.at)
    }

    /// `shutdown` and `exit`; waits for the process (kills it after 10 s).
    pub fn shutdown(mut self) -> Result<ExitStatus> {
        if let Ok(id) = self.send_request("shutdown", Value::Null) {
            let _ = self.response(id, Duration::from_secs(30));
            let _ = self.notify("exit", Value::Null);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                self.child.kill()?;
                return Ok(self.child.wait()?);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `file://` URI of an absolute path.
pub fn file_uri(path: &Path) -> String {
    rein_testkit::editor::file_uri(path)
}

/// Reads one frame's body; `None` at the end of the stream.
fn read_frame(reader: &mut impl BufRead) -> Result<Option<Vec<u8>>> {
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = Some(value.trim().parse::<usize>()?);
        }
    }
    let length = length.context("a frame without Content-Length")?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(Some(body))
}
