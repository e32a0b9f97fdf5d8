//! Memory of a process, from `/proc/<pid>/status`: resident now (`VmRSS`)
//! and at its peak (`VmHWM`, the high-water mark since it started).

use anyhow::{Context, Result};

#[derive(Clone, Copy, Debug, Default)]
pub struct Mem {
    pub rss_kb: u64,
    pub peak_kb: u64,
}

impl Mem {
    pub fn rss_bytes(&self) -> u64 {
        self.rss_kb * 1024
    }

    pub fn peak_bytes(&self) -> u64 {
        self.peak_kb * 1024
    }
}

/// The memory of process `pid`.
pub fn mem(pid: u32) -> Result<Mem> {
    read(&format!("/proc/{pid}/status"))
}

/// The memory of this process.
pub fn own() -> Result<Mem> {
    read("/proc/self/status")
}

fn read(path: &str) -> Result<Mem> {
    let status = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    let field = |name: &str| -> Result<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .with_context(|| format!("{path} has no {name}"))
    };
    Ok(Mem {
        rss_kb: field("VmRSS:")?,
        peak_kb: field("VmHWM:")?,
    })
}
