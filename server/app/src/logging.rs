//! Logs go to stderr, never stdout: stdout carries the LSP frames, and one
//! stray line there corrupts the editor's connection. Once the workspace is
//! known they also go to `<workspace>/.rein/logs/lsp.log`, where a user
//! finds them after the editor has thrown its stderr away. Both get every
//! event redacted: this process's secrets from the start, each task's
//! configured key once a task has been given it.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, RwLock};

use rein_core::os::process::process_redactor;
use rein_models::Redactor;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::writer::MakeWriterExt;

/// The environment variable with the log filter ([`DEFAULT_FILTER`] when
/// unset), in `tracing` syntax: `REIN_LOG=rein=debug,rein_text=trace`.
pub const LOG_ENV: &str = "REIN_LOG";

/// Rein's own events from `info` up; the MCP library's only from `warn`:
/// at `info` it logs every notification a server sends (each progress
/// step, a server's whole instructions), which `rein run` and `rein
/// doctor` would print among their output.
pub const DEFAULT_FILTER: &str = "info,rmcp=warn";

/// A log file over this size is moved to `lsp.log.1` when a server opens
/// it, so logs never grow without bound (two files at most).
const ROTATE_BYTES: u64 = 10 * 1024 * 1024;

/// Set by `init`: only the binary logs to files (in-process tests do not).
static ENABLED: AtomicBool = AtomicBool::new(false);
static FILE: OnceLock<Mutex<Option<File>>> = OnceLock::new();
/// What every event passes through before it is written.
static REDACTOR: OnceLock<RwLock<Redactor>> = OnceLock::new();

pub fn init() {
    let filter =
        EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let _ = REDACTOR.set(RwLock::new(process_redactor(None)));
    let writer = Redacting(std::io::stderr.and(WorkspaceLog));
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

/// The logs redact `redactor`'s secrets too from now on (a task's
/// configured key, which the environment did not hold).
pub fn redact_also(redactor: &Redactor) {
    let Some(lock) = REDACTOR.get() else { return };
    // Built outside the lock: building may log, and logging reads it.
    let Some(merged) = lock.read().ok().map(|current| current.union(redactor)) else {
        return;
    };
    if let Ok(mut current) = lock.write() {
        // A copy when nothing was added meanwhile.
        *current = merged.union(&current);
    }
}

/// Starts copying the log to `<root>/.rein/logs/lsp.log`. Failing to is
/// logged (to stderr) and otherwise ignored: logging never stops the work.
pub fn log_to_workspace(root: &Path) -> Option<PathBuf> {
    if !ENABLED.load(Ordering::SeqCst) {
        return None;
    }
    let path = root.join(".rein/logs/lsp.log");
    // `.rein/` with its `.gitignore` first (a log must not be what puts an
    // unignored `.rein/` into the user's repository), and no link followed.
    let opened = rein_store::state_dir(root).and_then(|state| open_rotated(&state));
    match opened {
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

/// `logs/lsp.log` in Rein's state folder, open for appending, moved to
/// `lsp.log.1` first when it grew too large; each step beneath the folder
/// in one step, no link followed.
fn open_rotated(state: &rein_fsroot::Root) -> io::Result<File> {
    const LOG: &str = "logs/lsp.log";
    if state
        .symlink_metadata(LOG)
        .is_ok_and(|m| m.is_file() && m.len() > ROTATE_BYTES)
    {
        state.rename(LOG, "logs/lsp.log.1")?;
    }
    // Append: two servers on one workspace (two editor windows) share the
    // file; each event is one `write`, so lines do not interleave.
    state.append(LOG)
}

/// Redacts each event before its writers (stderr and the file) see it.
/// `fmt` writes an event with one `write_all`, which is one `write` here.
#[derive(Clone, Copy)]
struct Redacting<M>(M);

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for Redacting<M> {
    type Writer = RedactingWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter(self.0.make_writer())
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Self::Writer {
        RedactingWriter(self.0.make_writer_for(meta))
    }
}

struct RedactingWriter<W>(W);

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let redactor = REDACTOR
            .get()
            .and_then(|lock| lock.read().ok().map(|r| r.clone()))
            .unwrap_or_default();
        self.0.write_all(&redactor.redact_bytes(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
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
    fn every_event_is_redacted_before_its_writers_see_it() {
        let out = std::sync::Arc::new(Mutex::new(Vec::new()));
        let sink = Shared(std::sync::Arc::clone(&out));
        let _ = REDACTOR.set(RwLock::new(Redactor::default()));
        redact_also(&Redactor::new([], ["log-secret-13579".to_owned()]));
        let make = Redacting(move || sink.clone());
        let mut writer = make.make_writer();
        writer
            .write_all(
                b"settings: key log-secret-13579, token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789\n",
            )
            .unwrap();
        assert_eq!(
            String::from_utf8(out.lock().unwrap().clone()).unwrap(),
            "settings: key <redacted>, token <redacted>\n"
        );
    }

    #[derive(Clone)]
    struct Shared(std::sync::Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_large_log_is_rotated_once_and_a_new_one_started() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".rein/logs/lsp.log");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, vec![b'x'; (ROTATE_BYTES + 1) as usize]).unwrap();
        let state = rein_store::state_dir(dir.path()).unwrap();
        let mut file = open_rotated(&state).unwrap();
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
        open_rotated(&state).unwrap().write_all(b"more\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new\nmore\n");
    }
}
