//! Logs go to stderr, never stdout: stdout carries the LSP frames, and one
//! stray line there corrupts the editor's connection. Once the workspace is
//! known they also go to `<workspace>/.rein/logs/lsp.log`, where a user
//! finds them after the editor has thrown its stderr away.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::writer::MakeWriterExt;

/// The environment variable with the log filter (`info` when unset), in
/// `tracing` syntax: `REIN_LOG=rein=debug,rein_text=trace`.
pub const LOG_ENV: &str = "REIN_LOG";

/// A log file over this size is moved to `lsp.log.1` when a server opens
/// it, so logs never grow without bound (two files at most).
const ROTATE_BYTES: u64 = 10 * 1024 * 1024;

/// Set by `init`: only the binary logs to files (in-process tests do not).
static ENABLED: AtomicBool = AtomicBool::new(false);
static FILE: OnceLock<Mutex<Option<File>>> = OnceLock::new();

pub fn init() {
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("info"));
    let writer = std::io::stderr.and(WorkspaceLog);
    if tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init()
        .is_ok()
    {
        ENABLED.store(true, Ordering::SeqCst);
    }
}

/// Starts copying the log to `<root>/.rein/logs/lsp.log`. Failing to is
/// logged (to stderr) and otherwise ignored: logging never stops the work.
pub fn log_to_workspace(root: &Path) -> Option<PathBuf> {
    if !ENABLED.load(Ordering::SeqCst) {
        return None;
    }
    let path = root.join(".rein/logs/lsp.log");
    match open_rotated(&path) {
        Ok(file) => {
            if let Ok(mut slot) = FILE.get_or_init(|| Mutex::new(None)).lock() {
                *slot = Some(file);
            }
            Some(path)
        }
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "cannot write the log file");
            None
        }
    }
}

fn open_rotated(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if std::fs::metadata(path).is_ok_and(|m| m.len() > ROTATE_BYTES) {
        std::fs::rename(path, path.with_extension("log.1"))?;
    }
    // Append: two servers on one workspace (two editor windows) share the
    // file; each event is one `write`, so lines do not interleave.
    OpenOptions::new().create(true).append(true).open(path)
}

/// The workspace log file, once there is one.
#[derive(Clone, Copy)]
struct WorkspaceLog;

impl<'a> MakeWriter<'a> for WorkspaceLog {
    type Writer = WorkspaceLog;

    fn make_writer(&'a self) -> Self::Writer {
        *self
    }
}

impl Write for WorkspaceLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(slot) = FILE.get()
            && let Ok(mut file) = slot.lock()
            && let Some(file) = file.as_mut()
        {
            // A full disk must not fail the event for stderr too.
            let _ = file.write_all(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_log_is_rotated_once_and_a_new_one_started() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".rein/logs/lsp.log");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, vec![b'x'; (ROTATE_BYTES + 1) as usize]).unwrap();
        let mut file = open_rotated(&path).unwrap();
        file.write_all(b"new\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new\n");
        assert_eq!(
            std::fs::metadata(path.with_extension("log.1"))
                .unwrap()
                .len(),
            ROTATE_BYTES + 1
        );
        // A small one is appended to.
        drop(file);
        open_rotated(&path).unwrap().write_all(b"more\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new\nmore\n");
    }
}
