//! Logs go to stderr, never stdout: stdout carries the LSP frames, and one
//! stray line there corrupts the editor's connection.

use tracing_subscriber::EnvFilter;

/// The environment variable with the log filter (`info` when unset), in
/// `tracing` syntax: `REIN_LOG=rein=debug,rein_text=trace`.
pub const LOG_ENV: &str = "REIN_LOG";

pub fn init() {
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
