//! Figure 1: document sync through the real stdio path, Rein against
//! lsp-ai 0.7.0, the same bytes to both.
//!
//! Each run spawns the server, initializes it, opens a 1 MB source file
//! (ASCII: lsp-ai counts `character` in chars, Rein in the negotiated
//! UTF-16 units; on ASCII they agree) and a one-line `probe.txt`, then:
//!
//! 1. **Burst**: 10,000 incremental `didChange` (half single-character
//!    inserts, half whole-line replacements, at random places, seeded)
//!    written back to back, with a probe request after every 100th edit
//!    and after the last one. Edits per second = 10,000 / (first byte
//!    written → the last probe's response). The probe latency is from
//!    writing the probe (every edit before it already written) to its
//!    response: how far behind the editor's stream the server is.
//! 2. **Keystrokes**: 1,000 more edits, each followed by a probe, waiting
//!    for the answer before the next: the latency of one isolated edit,
//!    write of the edit → response of the probe.
//!
//! The probe is `textDocument/codeAction` on `probe.txt`: both servers
//! answer it only after handling every message before it (Rein's
//! transport polls messages in order and applies document changes before
//! its first await; lsp-ai's memory worker answers it from the same FIFO
//! queue as the edits), and it is cheap for both (no work on the 1 MB
//! file). Rein's final text is checked against the bench's own copy
//! (`rein/documentState` content hash); lsp-ai has no request that returns
//! the text, so its stderr is checked for errors instead.
//!
//! Memory: `VmRSS` and `VmHWM` of the server after the open and after the
//! edits.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rein_text::Rope;
use serde_json::{Value, json};

use crate::procfs::{self, Mem};
use crate::report::{self, Spread, bytes, median, secs};
use crate::stdio::{self, Server, Spawn, file_uri};

pub struct Options {
    pub rein: PathBuf,
    /// `None`: Rein alone.
    pub lsp_ai: Option<PathBuf>,
    pub runs: usize,
    pub edits: usize,
    pub keystrokes: usize,
    pub probe_every: usize,
}

/// One server's command line and settings.
struct Peer {
    name: &'static str,
    program: PathBuf,
    args: Vec<&'static str>,
    options: Value,
    env: Vec<(String, String)>,
}

/// What one run measured.
struct Run {
    edits_per_sec: f64,
    burst: Vec<Duration>,
    keystroke: Vec<Duration>,
    after_open: Mem,
    after_edits: Mem,
    errors: usize,
}

/// The 1 MB file and the edits, built once: both servers get the same bytes.
struct Workload {
    text: String,
    burst: Vec<Vec<u8>>,
    keystrokes: Vec<Vec<u8>>,
    final_hash: String,
    final_version: i32,
}

const SEED: u64 = 0x5e1f_5eed;

pub fn run(opts: &Options) -> Result<String> {
    // The machine and its load as the run starts (the machine is shared).
    let machine = report::machine();
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    let big = root.join("big.rs");
    let probe = root.join("probe.txt");
    let load = workload(&file_uri(&big), opts.edits, opts.keystrokes);
    std::fs::write(&big, &load.text)?;
    std::fs::write(&probe, "probe\n")?;
    eprintln!(
        "sync: {} document, {} lines; {} edits then {} keystrokes",
        bytes(load.text.len() as u64),
        load.text.lines().count(),
        opts.edits,
        opts.keystrokes
    );

    let mut peers = vec![rein_peer(&opts.rein, &root)];
    if let Some(path) = &opts.lsp_ai {
        peers.push(lsp_ai_peer(path));
    }
    let mut runs: Vec<Vec<Run>> = peers.iter().map(|_| Vec::new()).collect();
    for n in 0..opts.runs {
        // Alternate who goes first: the machine is shared and drifts.
        let order: Vec<usize> = if n % 2 == 0 {
            (0..peers.len()).collect()
        } else {
            (0..peers.len()).rev().collect()
        };
        for i in order {
            let peer = &peers[i];
            eprintln!("sync: run {}/{} {}", n + 1, opts.runs, peer.name);
            let run = one_run(peer, &root, &big, &probe, &load, opts.probe_every)
                .with_context(|| format!("{} run {}", peer.name, n + 1))?;
            eprintln!(
                "  {:.0} edits/s; burst probe {}; keystroke {}",
                run.edits_per_sec,
                Spread::of_durations(&run.burst).time(),
                Spread::of_durations(&run.keystroke).time()
            );
            runs[i].push(run);
        }
    }
    Ok(summary(&peers, &runs, &load, opts, &machine))
}

fn rein_peer(rein: &Path, root: &Path) -> Peer {
    let config_home = root.join("xdg-config");
    Peer {
        name: "rein",
        program: rein.to_owned(),
        args: vec!["lsp"],
        options: json!({}),
        env: vec![
            ("REIN_LOG".into(), "warn".into()),
            (
                "XDG_CONFIG_HOME".into(),
                config_home.to_string_lossy().into_owned(),
            ),
        ],
    }
}

/// lsp-ai needs a configuration to start: the in-memory `file_store` (a
/// ropey rope per document, no crawling, no tree-sitter) and one model.
/// The model is never called: the chat action only makes `codeAction`
/// consult the document store, which is what puts the probe in order
/// behind the edits. An empty trigger matches the first chunk, so the
/// probe costs lsp-ai nothing on the 1 MB file.
pub fn lsp_ai_options() -> Value {
    json!({
        "memory": {"file_store": {}},
        "models": {
            "model1": {
                "type": "open_ai",
                "chat_endpoint": "http://127.0.0.1:9/v1/chat/completions",
                "model": "none",
                "auth_token": "none"
            }
        },
        "chats": [{"trigger": "", "action_display_name": "Chat", "model": "model1"}]
    })
}

fn lsp_ai_peer(path: &Path) -> Peer {
    Peer {
        name: "lsp-ai",
        program: path.to_owned(),
        args: vec![],
        options: lsp_ai_options(),
        env: vec![],
    }
}

fn code_action(uri: &str) -> Value {
    json!({
        "textDocument": {"uri": uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []}
    })
}

fn one_run(
    peer: &Peer,
    root: &Path,
    big: &Path,
    probe: &Path,
    load: &Workload,
    probe_every: usize,
) -> Result<Run> {
    let stderr = root.join(format!("{}.stderr.log", peer.name));
    let mut server = Server::spawn(Spawn {
        program: &peer.program,
        args: &peer.args,
        cwd: root,
        stderr: &stderr,
        env: peer.env.clone(),
        settings: Value::Null,
    })?;
    server.initialize(root, peer.options.clone())?;
    let big_uri = file_uri(big);
    let probe_uri = file_uri(probe);
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": big_uri, "languageId": "rust", "version": 1, "text": load.text}}),
    )?;
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": probe_uri, "languageId": "plaintext", "version": 1, "text": "probe\n"}}),
    )?;
    let probe_params = code_action(&probe_uri);
    let timeout = Duration::from_secs(600);
    let (answer, _) = server.request("textDocument/codeAction", probe_params.clone(), timeout)?;
    ensure!(answer.get("error").is_none(), "the probe failed: {answer}");
    std::thread::sleep(Duration::from_millis(300));
    let after_open = procfs::mem(server.pid())?;

    // Burst: everything written back to back, a probe every `probe_every`.
    let mut probes: Vec<(i64, Instant)> = Vec::new();
    let started = Instant::now();
    for chunk in load.burst.chunks(probe_every) {
        server.write(&chunk.concat())?;
        let id = server.id();
        let frame = stdio::request_frame(id, "textDocument/codeAction", probe_params.clone());
        probes.push((id, Instant::now()));
        server.write(&frame)?;
    }
    let mut burst = Vec::with_capacity(probes.len());
    let mut last = started;
    for (id, sent) in &probes {
        let response = server.response(*id, timeout)?;
        ensure!(
            response.message.get("error").is_none(),
            "probe failed: {}",
            response.message
        );
        burst.push(response.at.duration_since(*sent));
        last = response.at;
    }
    let edits_per_sec = load.burst.len() as f64 / last.duration_since(started).as_secs_f64();
    let after_edits = procfs::mem(server.pid())?;

    // Keystrokes: one edit, one probe, wait.
    let mut keystroke = Vec::with_capacity(load.keystrokes.len());
    for edit in &load.keystrokes {
        let id = server.id();
        let mut bytes = edit.clone();
        bytes.extend(stdio::request_frame(
            id,
            "textDocument/codeAction",
            probe_params.clone(),
        ));
        let sent = Instant::now();
        server.write(&bytes)?;
        let response = server.response(id, timeout)?;
        keystroke.push(response.at.duration_since(sent));
    }

    if peer.name == "rein" {
        let (state, _) = server.request(
            "rein/documentState",
            json!({"uri": big_uri}),
            Duration::from_secs(60),
        )?;
        let state = &state["result"];
        if state["version"] != json!(load.final_version)
            || state["contentHash"] != json!(load.final_hash)
        {
            bail!(
                "Rein's document differs from the bench's: {state} (expected version {}, hash {})",
                load.final_version,
                load.final_hash
            );
        }
    }
    let pid = server.pid();
    let status = server.shutdown()?;
    let log = std::fs::read_to_string(&stderr).unwrap_or_default();
    let errors = log.lines().filter(|l| l.contains("ERROR")).count();
    if !status.success() {
        eprintln!("  {} (pid {pid}) exited with {status}", peer.name);
    }
    Ok(Run {
        edits_per_sec,
        burst,
        keystroke,
        after_open,
        after_edits,
        errors,
    })
}

/// About 1 MB of Rust-like ASCII source, 12,000+ lines of varied length.
pub fn one_megabyte() -> String {
    let mut rng = SmallRng::seed_from_u64(SEED);
    let mut out = String::with_capacity(1_050_000);
    let mut n = 0u32;
    while out.len() < 1_000_000 {
        n += 1;
        let line = match rng.random_range(0..6) {
            0 => format!("fn step_{n}(items: &[Item]) -> u64 {{\n"),
            1 => format!(
                "    let total_{n} = items.iter().map(|i| i.price * i.qty).sum::<u64>(); // {n}\n"
            ),
            2 => format!(
                "    if total_{n} > {} {{ return total_{n} - {}; }}\n",
                n * 7,
                n % 13
            ),
            3 => "}\n\n".to_owned(),
            4 => {
                format!("    // Step {n}: keep the running total within the budget of the cart.\n")
            }
            _ => format!("    assert_eq!(compute(&items, {n}), expected_{n});\n"),
        };
        out.push_str(&line);
    }
    out
}

fn workload(uri: &str, edits: usize, keystrokes: usize) -> Workload {
    let text = one_megabyte();
    let mut rope = Rope::from_str(&text);
    let mut rng = SmallRng::seed_from_u64(SEED + 1);
    let mut version = 1;
    let mut next = |rope: &mut Rope| {
        version += 1;
        change(rope, &mut rng, uri, version)
    };
    let burst = (0..edits).map(|_| next(&mut rope)).collect();
    let keystrokes = (0..keystrokes).map(|_| next(&mut rope)).collect();
    let final_text = rope.to_string();
    Workload {
        text,
        burst,
        keystrokes,
        final_hash: rein_text::ContentHash::of_str(&final_text).to_hex(),
        final_version: version,
    }
}

/// One random edit, applied to `rope` and framed as a `didChange`.
fn change(rope: &mut Rope, rng: &mut SmallRng, uri: &str, version: i32) -> Vec<u8> {
    // The last line is empty (the text ends with a newline): never edit it,
    // so every position is inside the document for both servers.
    let lines = rope.len_lines() - 1;
    let line = rng.random_range(0..lines);
    let start = rope.line_to_char(line);
    let end = rope.line_to_char(line + 1);
    let (range, text) = if rng.random_bool(0.5) {
        let len = end - start - 1; // without the newline
        let col = rng.random_range(0..=len);
        let ch = char::from(b'a' + rng.random_range(0..26u8)).to_string();
        rope.insert(start + col, &ch);
        (((line, col), (line, col)), ch)
    } else {
        let n = rng.random_range(0..100_000u32);
        let text = match rng.random_range(0..3) {
            0 => format!("    let replaced_{n} = compute(&items, {n}); // edited\n"),
            1 => format!("    total += {n};\n"),
            _ => format!("    if total > {n} {{ return Err(Error::Budget({n})); }}\n"),
        };
        rope.remove(start..end);
        rope.insert(start, &text);
        (((line, 0), (line + 1, 0)), text)
    };
    let (((sl, sc), (el, ec)), text) = (range, text);
    stdio::notification_frame(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{
                "range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}},
                "text": text
            }]
        }),
    )
}

fn summary(
    peers: &[Peer],
    runs: &[Vec<Run>],
    load: &Workload,
    opts: &Options,
    machine: &str,
) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Document sync ({} edits + {} keystrokes on a {} file, {} runs each)\n",
        opts.edits,
        opts.keystrokes,
        bytes(load.text.len() as u64),
        opts.runs
    );
    let _ = writeln!(out, "machine (at the start): {machine}\n");
    let _ = writeln!(
        out,
        "| server | edits/s (median, range) | burst probe p50 / p99 | keystroke p50 / p99 | RSS after open (peak) | RSS after edits (peak) | errors logged |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    let mut rates = Vec::new();
    for (peer, runs) in peers.iter().zip(runs) {
        let eps: Vec<f64> = runs.iter().map(|r| r.edits_per_sec).collect();
        let burst: Vec<Duration> = runs.iter().flat_map(|r| r.burst.clone()).collect();
        let keys: Vec<Duration> = runs.iter().flat_map(|r| r.keystroke.clone()).collect();
        let (b, k) = (Spread::of_durations(&burst), Spread::of_durations(&keys));
        let mem = |f: &dyn Fn(&Run) -> Mem| {
            let rss: Vec<f64> = runs.iter().map(|r| f(r).rss_bytes() as f64).collect();
            let peak: Vec<f64> = runs.iter().map(|r| f(r).peak_bytes() as f64).collect();
            format!(
                "{} ({})",
                bytes(median(&rss) as u64),
                bytes(median(&peak) as u64)
            )
        };
        let _ = writeln!(
            out,
            "| {} | {:.0} ({}) | {} / {} | {} / {} | {} | {} | {} |",
            peer.name,
            median(&eps),
            report::range(&eps, |x| format!("{x:.0}")),
            secs(b.p50),
            secs(b.p99),
            secs(k.p50),
            secs(k.p99),
            mem(&|r| r.after_open),
            mem(&|r| r.after_edits),
            runs.iter().map(|r| r.errors).sum::<usize>()
        );
        rates.push(median(&eps));
    }
    if let [rein, peer] = rates.as_slice() {
        let _ = writeln!(
            out,
            "\nRein handles {:.1}× the edits per second of lsp-ai (medians).",
            rein / peer
        );
    }
    out
}
