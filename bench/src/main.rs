//! `rein-bench`: the whole-process figures of BENCHMARKS.md. Each
//! subcommand runs one figure and prints its table (markdown) on stdout,
//! its progress on stderr. The in-process figures are criterion benches
//! (`cargo bench -p rein-text`, `cargo bench -p rein-core`).
//!
//! Build the server first: `cargo build --release -p rein`, then
//! `cargo run --release -p rein-bench -- <figure>`.
//!
//! The figures check what they measured (document hashes, log contents,
//! task outcomes) and fail the run when it is wrong. This crate is never
//! part of the test suite, and never changes server code.

// A report tool: stdout is where its report goes.
#![allow(clippy::print_stdout)]

mod load;
mod mcp;
mod peer;
mod procfs;
mod report;
mod sandbox;
mod scripted;
mod startup;
mod stdio;
mod sync;
mod testlog;
mod tokens;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "rein-bench",
    about = "Rein's whole-process benchmarks (BENCHMARKS.md)"
)]
struct Cli {
    /// The `rein` binary (default: `$REIN_BIN`, else `rein` next to this
    /// binary, i.e. `target/release/rein`).
    #[arg(long, global = true)]
    rein: Option<PathBuf>,
    #[command(subcommand)]
    figure: Figure,
}

#[derive(Subcommand)]
enum Figure {
    /// 1. Document sync over stdio, side by side with lsp-ai 0.7.0.
    Sync {
        #[arg(long, default_value_t = 5)]
        runs: usize,
        #[arg(long, default_value_t = 10_000)]
        edits: usize,
        #[arg(long, default_value_t = 1_000)]
        keystrokes: usize,
        #[arg(long, default_value_t = 100)]
        probe_every: usize,
        /// An lsp-ai binary to use instead of installing 0.7.0.
        #[arg(long)]
        lsp_ai: Option<PathBuf>,
        /// Rein alone (nothing is installed).
        #[arg(long)]
        no_peer: bool,
    },
    /// 2. codeAction latency while a task streams a reply and runs tests.
    Load {
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Milliseconds between requests.
        #[arg(long, default_value_t = 20)]
        interval_ms: u64,
    },
    /// 4. Input tokens over a scripted 30-turn session, Rein vs naive.
    Tokens,
    /// 5. Spawn → initialize, idle memory, binary size.
    Startup {
        #[arg(long, default_value_t = 20)]
        runs: usize,
        #[arg(long)]
        lsp_ai: Option<PathBuf>,
        #[arg(long)]
        no_peer: bool,
    },
    /// 6. A command printing 1 GiB through ProcessExec.
    Testlog {
        /// Bytes of output per run.
        #[arg(long, default_value_t = 1 << 30)]
        bytes: u64,
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// In-process only: no run through the whole server.
        #[arg(long)]
        no_server: bool,
    },
    /// 7. What starting every command through `rein sandbox-exec` costs.
    Sandbox {
        #[arg(long, default_value_t = 200)]
        runs: usize,
        /// As for a command allowed the network (no network namespace).
        #[arg(long)]
        network: bool,
    },
    /// 10. MCP: a stdio server's start-up and per-call cost, Rein vs raw JSON-RPC.
    Mcp {
        #[arg(long, default_value_t = 10)]
        runs: usize,
        #[arg(long, default_value_t = 200)]
        calls: usize,
        /// A folder holding `node_modules/@modelcontextprotocol/server-everything`
        /// (default: what `tests/mcp-servers/install.sh` installs).
        #[arg(long)]
        server_dir: Option<PathBuf>,
    },
    /// The machine, as the figures report it.
    Machine,
    /// What loading the `o200k_base` tokenizer costs a process in memory
    /// (a task's first token count does it): RSS before and after.
    #[command(hide = true)]
    TokenizerMemory,
    /// The output `testlog` runs (deterministic lines on stdout).
    #[command(hide = true)]
    Emit {
        #[arg(long)]
        bytes: u64,
        #[arg(long, value_enum)]
        style: testlog::Style,
    },
}

fn rein_binary(given: Option<PathBuf>) -> Result<PathBuf> {
    let beside_me = || {
        // `target/<profile>/rein-bench` runs beside `target/<profile>/rein`.
        let exe = std::env::current_exe().ok()?;
        let rein = exe
            .parent()?
            .join(format!("rein{}", std::env::consts::EXE_SUFFIX));
        rein.is_file().then_some(rein)
    };
    let path = match given {
        Some(p) => p,
        None => match beside_me() {
            Some(p) => p,
            None => rein_testkit::rein_binary()
                .context("build it with `cargo build --release -p rein` (or pass --rein)")?,
        },
    };
    Ok(path.canonicalize().unwrap_or(path))
}

fn peer(given: Option<PathBuf>, none: bool) -> Result<Option<PathBuf>> {
    if none {
        return Ok(None);
    }
    match given {
        // The servers run in a temporary directory: a relative path given
        // on the command line must not be resolved there.
        Some(p) => Ok(Some(
            p.canonicalize()
                .with_context(|| format!("{}", p.display()))?,
        )),
        None => peer::lsp_ai(&peer::tools_root()).map(Some),
    }
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let report = match cli.figure {
        Figure::Emit { bytes, style } => return testlog::emit(style, bytes),
        Figure::Machine => report::machine(),
        Figure::TokenizerMemory => {
            let before = procfs::own()?;
            let n = rein_models::tokens::count_text("hello world");
            let after = procfs::own()?;
            format!(
                "RSS {} before the tokenizer, {} after (peak {}); \"hello world\" is {n} tokens",
                report::bytes(before.rss_bytes()),
                report::bytes(after.rss_bytes()),
                report::bytes(after.peak_bytes())
            )
        }
        Figure::Sync {
            runs,
            edits,
            keystrokes,
            probe_every,
            lsp_ai,
            no_peer,
        } => sync::run(&sync::Options {
            rein: rein_binary(cli.rein)?,
            lsp_ai: peer(lsp_ai, no_peer)?,
            runs,
            edits,
            keystrokes,
            probe_every: probe_every.max(1),
        })?,
        Figure::Load { runs, interval_ms } => load::run(&load::Options {
            rein: rein_binary(cli.rein)?,
            runs,
            interval: Duration::from_millis(interval_ms),
        })?,
        Figure::Tokens => tokens::run()?,
        Figure::Sandbox { runs, network } => sandbox::run(&sandbox::Options {
            rein: rein_binary(cli.rein)?,
            runs,
            network,
        })?,
        Figure::Mcp {
            runs,
            calls,
            server_dir,
        } => mcp::run(&mcp::Options {
            rein: rein_binary(cli.rein)?,
            server_dir: server_dir.map(|d| d.canonicalize().unwrap_or(d)),
            runs,
            calls,
        })?,
        Figure::Startup {
            runs,
            lsp_ai,
            no_peer,
        } => startup::run(&startup::Options {
            rein: rein_binary(cli.rein)?,
            lsp_ai: peer(lsp_ai, no_peer)?,
            runs,
        })?,
        Figure::Testlog {
            bytes,
            runs,
            no_server,
        } => testlog::run(&testlog::Options {
            bytes,
            runs,
            rein: if no_server {
                None
            } else {
                Some(rein_binary(cli.rein)?)
            },
        })?,
    };
    println!("{report}");
    Ok(())
}
