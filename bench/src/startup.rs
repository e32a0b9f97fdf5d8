//! Figure 5: start-up and footprint. Time from spawning the process to
//! the last byte of the `initialize` response; resident memory once
//! initialized and idle (1 s after `initialized`, nothing open); the
//! release binary's size, as built and stripped. lsp-ai is measured the
//! same way when it is available.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::procfs::{self, Mem};
use crate::report::{self, Spread, bytes, median};
use crate::stdio::{Server, Spawn};

pub struct Options {
    pub rein: PathBuf,
    pub lsp_ai: Option<PathBuf>,
    pub runs: usize,
}

struct Sample {
    startup: Duration,
    idle: Mem,
}

pub fn run(opts: &Options) -> Result<String> {
    use std::fmt::Write as _;
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    std::fs::write(root.join("main.py"), "print('hello')\n")?;
    let mut servers: Vec<(&str, &Path, Vec<&str>, Value)> =
        vec![("rein", opts.rein.as_path(), vec!["lsp"], json!({}))];
    if let Some(lsp_ai) = &opts.lsp_ai {
        servers.push(("lsp-ai", lsp_ai, vec![], crate::sync::lsp_ai_options()));
    }
    let mut out = String::new();
    let _ = writeln!(out, "## Start-up and footprint ({} runs each)\n", opts.runs);
    let _ = writeln!(out, "machine: {}\n", report::machine());
    let _ = writeln!(
        out,
        "| server | spawn → initialize response | idle RSS (peak) | binary | stripped |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for (name, program, args, options) in servers {
        let mut samples = Vec::new();
        for n in 0..opts.runs {
            let sample = one(name, program, &args, options.clone(), &root)
                .with_context(|| format!("{name} run {}", n + 1))?;
            samples.push(sample);
        }
        let times: Vec<Duration> = samples.iter().map(|s| s.startup).collect();
        let rss: Vec<f64> = samples.iter().map(|s| s.idle.rss_bytes() as f64).collect();
        let peak: Vec<f64> = samples.iter().map(|s| s.idle.peak_bytes() as f64).collect();
        let size = std::fs::metadata(program)?.len();
        let stripped = stripped_size(program, &root).map_or("n/a".into(), bytes);
        let _ = writeln!(
            out,
            "| {name} | {} | {} ({}) | {} | {stripped} |",
            Spread::of_durations(&times).time(),
            bytes(median(&rss) as u64),
            bytes(median(&peak) as u64),
            bytes(size),
        );
    }
    Ok(out)
}

fn one(name: &str, program: &Path, args: &[&str], options: Value, root: &Path) -> Result<Sample> {
    let log = root.join(format!("{name}.stderr.log"));
    let config_home = root.join("xdg-config");
    let mut server = Server::spawn(Spawn {
        program,
        args,
        cwd: root,
        stderr: &log,
        env: vec![
            ("REIN_LOG".into(), "warn".into()),
            (
                "XDG_CONFIG_HOME".into(),
                config_home.to_string_lossy().into_owned(),
            ),
        ],
        settings: Value::Null,
    })?;
    let answered = server.initialize(root, options)?;
    let startup = answered.duration_since(server.spawned);
    std::thread::sleep(Duration::from_secs(1));
    let idle = procfs::mem(server.pid())?;
    server.shutdown()?;
    Ok(Sample { startup, idle })
}

/// The size of a stripped copy (`strip` from binutils), if `strip` runs.
fn stripped_size(program: &Path, dir: &Path) -> Option<u64> {
    let copy = dir.join("stripped");
    let status = std::process::Command::new("strip")
        .arg("-o")
        .arg(&copy)
        .arg(program)
        .status()
        .ok()?;
    let size = status
        .success()
        .then(|| std::fs::metadata(&copy).ok())??
        .len();
    let _ = std::fs::remove_file(&copy);
    Some(size)
}
