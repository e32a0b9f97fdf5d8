//! Figure 7: what starting every command through `rein sandbox-exec` costs.
//! The same `ProcessExec` runs `true` (spawn, process group, pipes, log,
//! reaping: everything a real command pays) with the shell started
//! directly and with it started through the launcher, alternating so that
//! noise on the shared machine falls on both. It checks every run exited 0.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use rein_core::exec::{CommandKind, CommandSpec, Confinement, Exec, Launcher};
use rein_core::os::process::ProcessExec;
use tokio_util::sync::CancellationToken;

/// The launcher a task gets: the workspace policy of `rein-sandbox`
/// (Landlock, a network namespace, limits) applied by `rein sandbox-exec`.
#[derive(Debug)]
struct Sandboxed {
    rein: PathBuf,
    policy: rein_sandbox::Policy,
}

impl Launcher for Sandboxed {
    fn prefix(&self, _: &CommandSpec) -> Vec<OsString> {
        rein_sandbox::wrapper(&self.rein, &self.policy)
    }

    fn confinement(&self) -> Confinement {
        Confinement::Unmanaged
    }
}

use crate::report::{self, Spread};

pub struct Options {
    pub rein: PathBuf,
    pub runs: usize,
    /// Commands allowed the network: no network namespace is made.
    pub network: bool,
}

pub fn run(opts: &Options) -> Result<String> {
    use std::fmt::Write as _;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let dir = tempfile::tempdir()?;
    let tmp = tempfile::tempdir()?;
    let direct = ProcessExec::new();
    let policy = rein_sandbox::defaults::policy(&rein_sandbox::defaults::Inputs {
        workspace: dir.path().to_path_buf(),
        tmp: tmp.path().to_path_buf(),
        home: std::env::var_os("HOME").map(PathBuf::from),
        path: std::env::var_os("PATH"),
        limits: rein_sandbox::Limits {
            processes: Some(2048),
            file_bytes: Some(4 << 30),
            memory_bytes: None,
            cgroup: Some(format!("rein-bench-{}", std::process::id())),
        },
        network: opts.network,
        ..rein_sandbox::defaults::Inputs::default()
    });
    let confined = ProcessExec::new().with_launcher(Arc::new(Sandboxed {
        rein: opts.rein.clone(),
        policy,
    }));
    let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    runtime.block_on(async {
        // A few runs of each first: page cache, the dynamic loader.
        for n in 0..opts.runs + 10 {
            for (i, exec) in [&direct, &confined].into_iter().enumerate() {
                let spec = CommandSpec {
                    command: "true".into(),
                    cwd: dir.path().to_path_buf(),
                    timeout: Duration::from_secs(30),
                    log_path: dir.path().join(format!("run-{i}-{n}.log")),
                    kind: CommandKind::Other,
                    network: false,
                    sandbox_mode: None,
                    report: None,
                    layer: None,
                };
                let started = Instant::now();
                let result = exec.run(spec, CancellationToken::new()).await?;
                let took = started.elapsed();
                if result.exit_code != Some(0) {
                    bail!("`true` did not exit 0 ({i}): {:?}", result.tail);
                }
                if n >= 10 {
                    times[i].push(took);
                }
            }
        }
        Ok(())
    })?;
    rein_sandbox::limits::remove_pids_cgroup(&format!("rein-bench-{}", std::process::id()));
    let [direct, confined] = times.map(|t| Spread::of_durations(&t));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## The launcher's cost per command ({} runs each)\n",
        opts.runs
    );
    let _ = writeln!(out, "machine: {}\n", report::machine());
    let _ = writeln!(out, "| `true` through ProcessExec | spawn → exit |");
    let _ = writeln!(out, "|---|---|");
    let _ = writeln!(out, "| `sh -c` directly | {} |", direct.time());
    let _ = writeln!(
        out,
        "| through `rein sandbox-exec` (Landlock, {}, limits, no_new_privs, capabilities dropped) | {} |",
        if opts.network {
            "the machine's network"
        } else {
            "own network namespace"
        },
        confined.time()
    );
    let _ = writeln!(
        out,
        "\nadded by the launcher: p50 {} · p99 {}",
        report::secs(confined.p50 - direct.p50),
        report::secs(confined.p99 - direct.p99)
    );
    Ok(out)
}
