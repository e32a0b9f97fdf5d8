//! The peer Rein is measured against: `lsp-ai` 0.7.0 from crates.io,
//! installed on first use into a cached root (never during a normal build
//! or test run), reused afterwards.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

pub const LSP_AI_VERSION: &str = "0.7.0";

/// Where `cargo install --root` puts tools: `$REIN_BENCH_TOOLS`, else
/// `target/bench-tools` in the workspace.
pub fn tools_root() -> PathBuf {
    std::env::var_os("REIN_BENCH_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("target")
                .join("bench-tools")
        })
}

/// The `lsp-ai` binary of the right version, installed if missing.
pub fn lsp_ai(root: &Path) -> Result<PathBuf> {
    let bin = root.join("bin").join("lsp-ai");
    if version_of(&bin).as_deref() == Some(LSP_AI_VERSION) {
        return Ok(bin);
    }
    eprintln!(
        "installing lsp-ai {LSP_AI_VERSION} into {} (once; several minutes)",
        root.display()
    );
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args([
            "install",
            "lsp-ai",
            "--version",
            LSP_AI_VERSION,
            "--locked",
            "--root",
        ])
        .arg(root)
        .status()
        .context("running cargo install")?;
    if !status.success() {
        bail!("cargo install lsp-ai {LSP_AI_VERSION} failed ({status})");
    }
    match version_of(&bin) {
        Some(v) if v == LSP_AI_VERSION => Ok(bin),
        other => bail!("{} reports version {other:?}", bin.display()),
    }
}

/// `lsp-ai --version` prints `lsp-ai 0.7.0`.
fn version_of(bin: &Path) -> Option<String> {
    let out = Command::new(bin).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().nth(1).map(str::to_owned)
}
