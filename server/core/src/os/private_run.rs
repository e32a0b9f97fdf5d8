//! The private directory of a run with Rein's own reporter
//! ([`ReportSpec::Private`]): made for that run alone, under a random name,
//! inside the commands' temporary directory — outside the workspace, and
//! writable in the sandbox, since the reporter runs in the test process —
//! filled with the reporter's files, read back once the run is over and
//! then removed.
//!
//! The directory also holds a random token ([`TOKEN_FILE`]), which the
//! reporter deletes before any code under test runs and writes as the
//! first line of its report: a report without it was written by something
//! else. The report is read only if it is a regular file (never through a
//! link, never a FIFO that would block) and not larger than
//! [`MAX_REPORT_BYTES`].
//!
//! [`ReportSpec::Private`]: crate::exec::ReportSpec::Private

use std::ffi::OsString;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;

use crate::exec::{PrivateReport, TOKEN_FILE};

/// A larger report is not one Rein's reporter wrote.
pub const MAX_REPORT_BYTES: u64 = 16 * 1024 * 1024;

/// A run's private directory; removed when dropped.
#[derive(Debug)]
pub(super) struct RunDir {
    dir: PathBuf,
    report: String,
    token: String,
}

impl RunDir {
    /// Makes a fresh directory under `parent` holding `files`, whose
    /// `report` is read back after the run.
    pub(super) fn make(
        parent: &Path,
        files: &[(String, String)],
        report: &str,
    ) -> io::Result<Self> {
        for name in files.iter().map(|(n, _)| n.as_str()).chain([report]) {
            if !is_plain_name(name) || name == TOKEN_FILE {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{name:?} is not a plain file name"),
                ));
            }
        }
        let dir = fresh_dir(parent)?;
        let run = Self {
            dir,
            report: report.to_owned(),
            token: random_hex()?,
        };
        for (name, text) in files {
            fs::write(run.dir.join(name), text)?;
        }
        fs::write(run.dir.join(TOKEN_FILE), &run.token)?;
        Ok(run)
    }

    pub(super) fn path(&self) -> &Path {
        &self.dir
    }

    /// What the reporter left (the process may have been ended before it
    /// wrote anything).
    pub(super) fn read_report(&self) -> PrivateReport {
        let path = self.dir.join(&self.report);
        let file = fs::OpenOptions::new()
            .read(true)
            .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
            .open(&path);
        let file = match file {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return PrivateReport::Missing,
            Err(e) => return PrivateReport::Unreadable(format!("{}: {e}", self.report)),
        };
        match file.metadata() {
            Ok(meta) if !meta.is_file() => {
                return PrivateReport::Unreadable(format!("{}: not a regular file", self.report));
            }
            Ok(meta) if meta.len() > MAX_REPORT_BYTES => {
                return PrivateReport::Unreadable(format!(
                    "{}: larger than {} MiB",
                    self.report,
                    MAX_REPORT_BYTES / 1024 / 1024
                ));
            }
            Ok(_) => {}
            Err(e) => return PrivateReport::Unreadable(format!("{}: {e}", self.report)),
        }
        let mut bytes = Vec::new();
        if let Err(e) = file.take(MAX_REPORT_BYTES).read_to_end(&mut bytes) {
            return PrivateReport::Unreadable(format!("{}: {e}", self.report));
        }
        let Ok(text) = String::from_utf8(bytes) else {
            return PrivateReport::Unreadable(format!("{}: not UTF-8", self.report));
        };
        match text.split_once('\n') {
            Some((token, rest)) if token == self.token => PrivateReport::Text(rest.to_owned()),
            _ => PrivateReport::Unreadable(format!(
                "{}: not written by Rein's reporter (its token is missing or wrong)",
                self.report
            )),
        }
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if let Err(e) = fs::remove_dir_all(&self.dir) {
            tracing::debug!(dir = %self.dir.display(), "removing a run's directory: {e}");
        }
    }
}

/// The temporary directory a command gets: its `TMPDIR` (the sandbox's
/// private one), else this process's.
pub(super) fn temp_parent(env: &[(OsString, OsString)]) -> PathBuf {
    env.iter()
        .rev()
        .find(|(k, _)| k == "TMPDIR")
        .map(|(_, v)| PathBuf::from(v))
        .filter(|p| p.is_absolute())
        .unwrap_or_else(std::env::temp_dir)
}

fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])
}

/// A new directory (mode 0700) under `parent` with a name nobody could
/// guess ahead of time: one that exists already is never reused.
fn fresh_dir(parent: &Path) -> io::Result<PathBuf> {
    let mut builder = fs::DirBuilder::new();
    builder.mode(0o700);
    let mut last = io::Error::other("no attempt");
    for _ in 0..8 {
        let dir = parent.join(format!("rein-run-{}", random_hex()?));
        match builder.create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// 16 random bytes from the kernel, as hex.
pub(super) fn random_hex() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(files: &[(&str, &str)]) -> (tempfile::TempDir, RunDir) {
        let parent = tempfile::tempdir().unwrap();
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect();
        let dir = RunDir::make(parent.path(), &files, "report.json").unwrap();
        (parent, dir)
    }

    #[test]
    fn the_files_are_there_and_the_report_is_read_back() {
        let (_parent, dir) = run(&[("boot.py", "print(1)\n")]);
        assert_eq!(
            fs::read_to_string(dir.path().join("boot.py")).unwrap(),
            "print(1)\n"
        );
        assert_eq!(dir.read_report(), PrivateReport::Missing);
        let token = fs::read_to_string(dir.path().join("token")).unwrap();
        assert_eq!(token.len(), 32);
        fs::write(dir.path().join("report.json"), format!("{token}\n{{}}")).unwrap();
        assert_eq!(dir.read_report(), PrivateReport::Text("{}".into()));
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(!path.exists(), "the run's directory is removed");
    }

    /// Attack: the test process replaces the report with a link to a file
    /// elsewhere (or a FIFO, to hang Rein): neither is read.
    #[test]
    fn a_link_or_a_fifo_is_not_a_report() {
        let (_parent, dir) = run(&[]);
        let elsewhere = tempfile::NamedTempFile::new().unwrap();
        fs::write(elsewhere.path(), "{}").unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("report.json")).unwrap();
        assert!(matches!(dir.read_report(), PrivateReport::Unreadable(_)));
        fs::remove_file(dir.path().join("report.json")).unwrap();
        nix::unistd::mkfifo(
            &dir.path().join("report.json"),
            nix::sys::stat::Mode::S_IRWXU,
        )
        .unwrap();
        assert!(matches!(dir.read_report(), PrivateReport::Unreadable(_)));
    }

    /// Attack: the code under test writes a report of its own where Rein
    /// reads it. Without the token it is not the reporter's.
    #[test]
    fn a_report_without_the_token_does_not_count() {
        let (_parent, dir) = run(&[]);
        for forged in ["{\"tests\": []}", "0123\n{}", ""] {
            fs::write(dir.path().join("report.json"), forged).unwrap();
            let PrivateReport::Unreadable(why) = dir.read_report() else {
                panic!("{forged:?} was taken for the reporter's");
            };
            assert!(
                why.ends_with("not written by Rein's reporter (its token is missing or wrong)"),
                "{why}"
            );
        }
        // Each run has its own.
        let (_other_parent, other) = run(&[]);
        assert_ne!(
            fs::read_to_string(dir.path().join("token")).unwrap(),
            fs::read_to_string(other.path().join("token")).unwrap()
        );
    }

    #[test]
    fn names_must_be_plain() {
        let parent = tempfile::tempdir().unwrap();
        for bad in ["../x", "a/b", "", "..", "token"] {
            let files = vec![(bad.to_owned(), String::new())];
            assert!(RunDir::make(parent.path(), &files, "report.json").is_err());
        }
        assert!(RunDir::make(parent.path(), &[], "../report.json").is_err());
    }

    #[test]
    fn the_commands_tmpdir_is_the_parent() {
        let env = vec![
            (
                OsString::from("TMPDIR"),
                OsString::from("/tmp/rein-commands-x"),
            ),
            (OsString::from("PATH"), OsString::from("/bin")),
        ];
        assert_eq!(temp_parent(&env), PathBuf::from("/tmp/rein-commands-x"));
        assert_eq!(temp_parent(&[]), std::env::temp_dir());
    }
}
