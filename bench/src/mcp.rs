//! Figure 10: MCP, the cost of listing and calling tools. Two stdio
//! servers — the reference `@modelcontextprotocol/server-everything`
//! (node) and the dependency-free `fault_server.py` of `rein-mcp`'s tests
//! (python) — are measured three ways:
//!
//! - start-up, spawn → `initialize` → `tools/list` answered, through
//!   `rein_mcp::Connection::start` unconfined and in the command sandbox
//!   (`rein sandbox-exec` with the workspace policy, as a task runs it),
//!   and through a minimal raw JSON-RPC client written here (the floor:
//!   the same exchange with nothing around it);
//! - per call, one `tools/call` of a tool that echoes its argument
//!   (`echo`, `ok`) through `Connection::call` and through the raw client,
//!   each against its own server process.
//!
//! The variants alternate run by run and call by call, so the noise of the
//! shared machine falls on all of them. Every start-up checks the tool
//! list (not empty, holding the tool called) and every call checks that
//! the answer holds the text sent; a wrong answer fails the run.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rein_core::config::mcp::{McpServer, McpTransport};
use rein_core::exec::{CommandSpec, Confinement, Launcher};
use rein_mcp::{Connection, Spawner};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::report::{self, Spread, percentile};

pub struct Options {
    pub rein: PathBuf,
    /// A folder holding `node_modules/@modelcontextprotocol/server-everything`
    /// (`None`: `tests/mcp-servers/install.sh` installs or finds it).
    pub server_dir: Option<PathBuf>,
    pub runs: usize,
    pub calls: usize,
}

/// Start-up runs and calls made first and not counted (page cache, the
/// dynamic loader, V8's JIT).
const WARM_RUNS: usize = 1;
const WARM_CALLS: usize = 20;
/// The pause after a server is stopped.
const SETTLE: Duration = Duration::from_millis(100);
const PROTOCOL_VERSION: &str = "2025-11-25";

/// The launcher a task gets for its MCP servers: the workspace policy of
/// `rein-sandbox` applied by `rein sandbox-exec`, which may also read the
/// server's own files (the folders of the absolute paths in its command
/// line, as `rein-mcp` passes them).
#[derive(Debug)]
struct Sandboxed {
    rein: PathBuf,
    inputs: rein_sandbox::defaults::Inputs,
    /// Servers started through it (checked: the sandboxed runs were).
    started: std::sync::atomic::AtomicUsize,
}

impl Sandboxed {
    fn policy(&self, network: bool, readable: &[PathBuf]) -> rein_sandbox::Policy {
        let mut inputs = rein_sandbox::defaults::Inputs {
            network,
            ..self.inputs.clone()
        };
        inputs.extra_read.extend(readable.iter().cloned());
        rein_sandbox::defaults::policy(&inputs)
    }
}

impl Launcher for Sandboxed {
    fn prefix(&self, spec: &CommandSpec) -> Vec<OsString> {
        rein_sandbox::wrapper(&self.rein, &self.policy(spec.network, &[]))
    }

    fn env(&self) -> Vec<(OsString, OsString)> {
        let tmp = self.inputs.tmp.as_os_str().to_owned();
        ["TMPDIR", "TMP", "TEMP"]
            .into_iter()
            .map(|name| (OsString::from(name), tmp.clone()))
            .collect()
    }

    fn confinement(&self) -> Confinement {
        Confinement::Unmanaged
    }

    fn server_prefix(&self, spec: &CommandSpec, readable: &[PathBuf]) -> Vec<OsString> {
        self.started
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        rein_sandbox::wrapper(&self.rein, &self.policy(spec.network, readable))
    }
}

/// A server measured, and the tool of it that echoes.
struct Subject {
    label: String,
    command: PathBuf,
    args: Vec<String>,
    tool: &'static str,
    /// The tool's one string argument.
    argument: &'static str,
}

impl Subject {
    fn server(&self) -> McpServer {
        McpServer {
            name: "bench".into(),
            transport: McpTransport::Stdio {
                command: self.command.display().to_string(),
                args: self.args.clone(),
                env: vec![],
                env_vars: vec![],
            },
            enabled_tools: None,
            disabled_tools: vec![],
            startup_timeout: Duration::from_secs(60),
            tool_timeout: Duration::from_secs(60),
            max_output_tokens: 25_000,
            network: false,
            readable_roots: vec![],
            unconfined: false,
            from_workspace: false,
            start_with_session: false,
        }
    }

    fn check_tools<'a>(&self, names: impl Iterator<Item = &'a str>, how: &str) -> Result<usize> {
        let names: Vec<&str> = names.collect();
        if !names.contains(&self.tool) {
            bail!(
                "{} ({how}) listed {} tools, without `{}`: {names:?}",
                self.label,
                names.len(),
                self.tool
            );
        }
        Ok(names.len())
    }

    fn check_echo(&self, result: &Value, sent: &str, how: &str) -> Result<()> {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        if result["isError"] == json!(true) || !text.contains(sent) {
            bail!(
                "{} ({how}): `{}` answered {result} to {sent:?}",
                self.label,
                self.tool
            );
        }
        Ok(())
    }
}

/// The ways a server is reached.
#[derive(Clone, Copy)]
enum Client {
    Raw,
    Rein,
    ReinSandboxed,
}

const CLIENTS: [Client; 3] = [Client::Raw, Client::Rein, Client::ReinSandboxed];

impl Client {
    fn describe(self) -> &'static str {
        match self {
            Client::Raw => "raw JSON-RPC client (the floor)",
            Client::Rein => "Rein (`rein-mcp`), unconfined",
            Client::ReinSandboxed => "Rein (`rein-mcp`), in the sandbox",
        }
    }
}

/// A started server, by either client.
enum Live {
    Raw(Raw),
    Rein(Arc<Connection>),
}

pub fn run(opts: &Options) -> Result<String> {
    use std::fmt::Write as _;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    let tmp = tempfile::tempdir()?;
    let subjects = subjects(opts)?;
    let cgroup = format!("rein-bench-mcp-{}", std::process::id());
    let sandboxed = Arc::new(Sandboxed {
        rein: opts.rein.clone(),
        started: Default::default(),
        inputs: rein_sandbox::defaults::Inputs {
            workspace: root.clone(),
            tmp: tmp.path().to_path_buf(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            path: std::env::var_os("PATH"),
            limits: rein_sandbox::Limits {
                processes: Some(rein_sandbox::defaults::DEFAULT_PROCESSES),
                file_bytes: Some(rein_sandbox::defaults::DEFAULT_FILE_BYTES),
                memory_bytes: None,
                cgroup: Some(cgroup.clone()),
            },
            network: false,
            ..rein_sandbox::defaults::Inputs::default()
        },
    });
    // What a task's servers start from: Rein's environment without secrets.
    let env = rein_core::os::process::scrub_env(std::env::vars_os());
    let spawner = |launcher: Option<Arc<dyn Launcher>>| Spawner {
        launcher,
        root: root.clone(),
        base_env: env.clone(),
        lookup: Arc::new(|_| None),
    };
    let unconfined = spawner(None);
    let confined = spawner(Some(sandboxed.clone()));
    let cancel = CancellationToken::new();

    let start = |subject: &Subject, client: Client| -> Result<(Duration, usize, Live)> {
        let how = client.describe();
        match client {
            Client::Raw => {
                let started = Instant::now();
                let (raw, tools) = Raw::start(subject, &env, &root)?;
                let took = started.elapsed();
                let names = tools
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t["name"].as_str());
                let count = subject.check_tools(names, how)?;
                Ok((took, count, Live::Raw(raw)))
            }
            Client::Rein | Client::ReinSandboxed => {
                let spawner = match client {
                    Client::Rein => unconfined.clone(),
                    _ => confined.clone(),
                };
                let server = subject.server();
                let (took, started) = runtime.block_on(async {
                    let started = Instant::now();
                    let result = Connection::start(server, spawner).await;
                    (started.elapsed(), result)
                });
                let (connection, tools) =
                    started.with_context(|| format!("{} ({how})", subject.label))?;
                let count = subject.check_tools(tools.iter().map(|t| &*t.name), how)?;
                Ok((took, count, Live::Rein(connection)))
            }
        }
    };
    // How long stopping takes: for Rein, `Connection::shutdown` returning.
    let stop = |live: Live| {
        let started = Instant::now();
        match live {
            Live::Raw(raw) => drop(raw),
            Live::Rein(connection) => runtime.block_on(connection.shutdown()),
        }
        started.elapsed()
    };

    // Start-up: one server at a time, the variants alternating (in an
    // order that rotates, so none always follows the same one), a pause
    // after each so a server's exit does not fall on the next start.
    let mut startup = vec![[Vec::new(), Vec::new(), Vec::new()]; subjects.len()];
    let mut stops = startup.clone();
    let mut listed = vec![0; subjects.len()];
    for n in 0..WARM_RUNS + opts.runs {
        eprintln!("start-up run {}/{}", n + 1, WARM_RUNS + opts.runs);
        for (s, subject) in subjects.iter().enumerate() {
            for k in 0..CLIENTS.len() {
                let c = (k + n) % CLIENTS.len();
                let (took, count, live) = start(subject, CLIENTS[c])?;
                let stopped = stop(live);
                std::thread::sleep(SETTLE);
                listed[s] = count;
                if n >= WARM_RUNS {
                    startup[s][c].push(took);
                    stops[s][c].push(stopped);
                }
            }
        }
    }

    // Calls: the three clients of a server live side by side, taking turns
    // call by call.
    let mut calls = vec![[Vec::new(), Vec::new(), Vec::new()]; subjects.len()];
    for (s, subject) in subjects.iter().enumerate() {
        eprintln!("{}: {} calls per client", subject.label, opts.calls);
        let mut lives = Vec::new();
        for client in CLIENTS {
            lives.push((client, start(subject, client)?.2));
        }
        for n in 0..WARM_CALLS + opts.calls {
            for k in 0..lives.len() {
                let c = (k + n) % lives.len();
                let (client, live) = &mut lives[c];
                let how = client.describe();
                let sent = format!("rein-bench call {n} by client {c}");
                let (took, result) = match live {
                    Live::Raw(raw) => {
                        let params =
                            json!({"name": subject.tool, "arguments": {subject.argument: &sent}});
                        let started = Instant::now();
                        let result = raw.request("tools/call", params);
                        (started.elapsed(), result)
                    }
                    Live::Rein(connection) => {
                        let mut arguments = serde_json::Map::new();
                        arguments.insert(subject.argument.to_owned(), json!(sent));
                        runtime.block_on(async {
                            let started = Instant::now();
                            let result = connection
                                .call(subject.tool, arguments, &cancel, None)
                                .await
                                .map_err(anyhow::Error::from);
                            (started.elapsed(), result)
                        })
                    }
                };
                let result = result.with_context(|| format!("{} ({how})", subject.label))?;
                subject.check_echo(&result, &sent, how)?;
                if n >= WARM_CALLS {
                    calls[s][c].push(took);
                }
            }
        }
        for (_, live) in lives {
            stop(live);
        }
    }
    drop(confined);
    rein_sandbox::limits::remove_pids_cgroup(&cgroup);
    let through = sandboxed.started.load(std::sync::atomic::Ordering::SeqCst);
    let expected = subjects.len() * (WARM_RUNS + opts.runs + 1);
    if through != expected {
        bail!("{through} servers started through the sandbox, {expected} expected");
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "## MCP: the cost of listing and calling tools ({} start-ups, {} calls per client)\n",
        opts.runs, opts.calls
    );
    let _ = writeln!(out, "machine: {}\n", report::machine());
    let _ = writeln!(
        out,
        "| server | client | spawn → `initialize` → `tools/list` answered | stop, p50 (max) |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    for (s, subject) in subjects.iter().enumerate() {
        for (c, client) in CLIENTS.into_iter().enumerate() {
            let _ = writeln!(
                out,
                "| {} ({} tools) | {} | {} | {} ({}) |",
                subject.label,
                listed[s],
                client.describe(),
                Spread::of_durations(&startup[s][c]).time(),
                report::secs(Spread::of_durations(&stops[s][c]).p50),
                report::secs(Spread::of_durations(&stops[s][c]).max),
            );
        }
    }
    let _ = writeln!(
        out,
        "\n| server: tool | client | per call p50 | p90 | p99 | min |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for (s, subject) in subjects.iter().enumerate() {
        let mut p50 = [0.0; 3];
        let mut p90 = [0.0; 3];
        for (c, client) in CLIENTS.into_iter().enumerate() {
            let mut sorted: Vec<f64> = calls[s][c].iter().map(Duration::as_secs_f64).collect();
            sorted.sort_by(f64::total_cmp);
            p50[c] = percentile(&sorted, 50.0);
            p90[c] = percentile(&sorted, 90.0);
            let _ = writeln!(
                out,
                "| {}: `{}` | {} | {} | {} | {} | {} |",
                subject.label,
                subject.tool,
                client.describe(),
                report::secs(p50[c]),
                report::secs(p90[c]),
                report::secs(percentile(&sorted, 99.0)),
                report::secs(sorted.first().copied().unwrap_or(f64::NAN)),
            );
        }
        for c in 1..CLIENTS.len() {
            let _ = writeln!(
                out,
                "| {}: `{}` | **added by {}** | {} | {} | | |",
                subject.label,
                subject.tool,
                CLIENTS[c].describe(),
                signed(p50[c] - p50[0]),
                signed(p90[c] - p90[0]),
            );
        }
    }
    Ok(out)
}

fn signed(s: f64) -> String {
    if s < 0.0 {
        format!("−{}", report::secs(-s))
    } else {
        format!("+{}", report::secs(s))
    }
}

/// The two servers: server-everything under node, the fault server under
/// the real python interpreter (not a version manager's shim, whose own
/// start-up would be measured too).
fn subjects(opts: &Options) -> Result<Vec<Subject>> {
    let dir = match &opts.server_dir {
        Some(dir) => dir.clone(),
        None => install_servers()?,
    };
    let everything = dir
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .canonicalize()
        .with_context(|| format!("no server-everything in {}", dir.display()))?;
    let fault = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../server/mcp/tests/fixtures/fault_server.py")
        .canonicalize()
        .context("server/mcp/tests/fixtures/fault_server.py")?;
    let node = on_path("node").context("node is not on PATH")?;
    let python = python()?;
    Ok(vec![
        Subject {
            label: "server-everything (node)".into(),
            command: node,
            args: vec![everything.display().to_string(), "stdio".into()],
            tool: "echo",
            argument: "message",
        },
        Subject {
            label: "fault_server.py (python)".into(),
            command: python,
            args: vec![fault.display().to_string()],
            tool: "ok",
            argument: "text",
        },
    ])
}

/// `tests/mcp-servers/install.sh`'s folder: its last line on stdout.
fn install_servers() -> Result<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp-servers/install.sh");
    let output = std::process::Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {}", script.display()))?;
    if !output.status.success() {
        bail!(
            "{} failed ({}); pass --server-dir",
            script.display(),
            output.status
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let Some(last) = stdout.lines().rev().find(|l| !l.trim().is_empty()) else {
        bail!("{} printed no folder", script.display());
    };
    Ok(PathBuf::from(last.trim()))
}

fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

fn python() -> Result<PathBuf> {
    let output = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .context("python3 is not on PATH")?;
    let path = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    if !output.status.success() || !path.is_absolute() {
        bail!("python3 did not say where its interpreter is");
    }
    Ok(path)
}

/// The least an MCP client can be: newline-delimited JSON-RPC on the
/// server's stdin and stdout, blocking reads, no SDK, no runtime.
struct Raw {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
}

impl Raw {
    /// Spawns the server as Rein would (same environment and folder, its
    /// own process group), runs `initialize` and lists its tools.
    fn start(subject: &Subject, env: &[(OsString, OsString)], root: &Path) -> Result<(Raw, Value)> {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new(&subject.command)
            .args(&subject.args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(root)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("spawning {}", subject.command.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            bail!("no pipes to {}", subject.label);
        };
        let mut raw = Raw {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            next_id: 1,
            line: String::new(),
        };
        raw.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "rein-bench-raw", "version": "0"},
            }),
        )?;
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        let mut listed = raw.request("tools/list", json!({}))?;
        Ok((raw, listed["tools"].take()))
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        let mut text = serde_json::to_string(message)?;
        text.push('\n');
        self.stdin.write_all(text.as_bytes())?;
        self.stdin.flush()?;
        Ok(())
    }

    /// Sends a request and reads lines until its response (notifications
    /// and anything else in between are skipped).
    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line)? == 0 {
                bail!("the server closed its stdout before answering `{method}`");
            }
            let Ok(mut message) = serde_json::from_str::<Value>(&self.line) else {
                continue;
            };
            if message.get("method").is_some() || message["id"].as_u64() != Some(id) {
                continue;
            }
            if let Some(error) = message.get("error") {
                bail!("`{method}` failed: {error}");
            }
            return Ok(message["result"].take());
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        // Neither server starts processes of its own: the child is all.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
