//! The last lines of a check's log, for the report's evidence: what the
//! tests printed, not only where the log is (issue 35 point 10).
//!
//! The trace says where the log is, and a trace is a file in the
//! repository's `.rein/`, which the repository could have planted: only a
//! log under this workspace's `.rein/artifacts/` is read, opened beneath
//! that folder without following any link (`rein_fsroot`), at most
//! [`TAIL_BYTES`] from its end. The text is the tests' output, which the
//! repository controls: colours are dropped and every other disguising
//! character is shown escaped by the caller's `esc`.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use rein_core::testing::failures::strip_ansi;
use rein_fsroot::{Links, Root};

/// At most this much of the log's end is read.
pub const TAIL_BYTES: u64 = 16 * 1024;
/// And at most this many of its last lines shown.
pub const TAIL_LINES: usize = 40;

const ARTIFACTS: &str = ".rein/artifacts/";

/// The last lines of the log at `log_path` (workspace-relative, as the
/// trace records it), if it is one of this workspace's artifacts.
pub fn output_tail(log_path: &str, workspace: Option<&Path>) -> Option<String> {
    let rel = log_path.strip_prefix(ARTIFACTS)?;
    if rel.is_empty() || rel.starts_with('/') || rel.split('/').any(|c| c == ".." || c.is_empty()) {
        return None;
    }
    let artifacts = Root::open(workspace?.join(ARTIFACTS), Links::Refuse).ok()?;
    let mut file = artifacts.open_file(rel).ok()?;
    let len = file.metadata().ok().filter(|m| m.is_file())?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::with_capacity(usize::try_from(len - start).unwrap_or(0));
    file.take(TAIL_BYTES).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    // A line cut by where the tail starts is not shown as if whole.
    if start > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    let shown: Vec<String> = lines
        .iter()
        .rev()
        .take(TAIL_LINES)
        .rev()
        .map(|l| strip_ansi(l).into_owned())
        .collect();
    let shown = shown.join("\n");
    (!shown.trim().is_empty()).then_some(shown)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn workspace_with_log(text: &[u8]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join(".rein/artifacts/t-1");
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(logs.join("check.log"), text).unwrap();
        dir
    }

    #[test]
    fn the_last_lines_of_an_artifact_without_colours() {
        let mut log = String::new();
        for i in 0..100 {
            log.push_str(&format!("line {i}\n"));
        }
        log.push_str("\u{1b}[31mFAILED\u{1b}[0m (failures=1)\n");
        let dir = workspace_with_log(log.as_bytes());
        let tail = output_tail(".rein/artifacts/t-1/check.log", Some(dir.path())).unwrap();
        let lines: Vec<&str> = tail.lines().collect();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines[0], "line 61");
        assert_eq!(lines[TAIL_LINES - 1], "FAILED (failures=1)");
    }

    #[test]
    fn a_huge_log_is_read_from_its_end_only_and_no_cut_line_is_shown() {
        let mut log = "x".repeat(1 << 20);
        log.push_str("\nOK\n");
        let dir = workspace_with_log(log.as_bytes());
        assert_eq!(
            output_tail(".rein/artifacts/t-1/check.log", Some(dir.path())).unwrap(),
            "OK"
        );
    }

    /// A planted trace naming a file outside the artifacts, or a link
    /// planted among them, shows nothing of it.
    #[test]
    fn a_log_path_that_leaves_the_artifacts_is_not_read() {
        let dir = workspace_with_log(b"ok\n");
        let secret = dir.path().join("secret.txt");
        std::fs::write(&secret, "the user's key\n").unwrap();
        std::os::unix::fs::symlink(&secret, dir.path().join(".rein/artifacts/t-1/link.log"))
            .unwrap();
        std::os::unix::fs::symlink("../..", dir.path().join(".rein/artifacts/t-1/up")).unwrap();
        for path in [
            "secret.txt",
            "/etc/passwd",
            ".rein/artifacts/../../secret.txt",
            ".rein/artifacts/t-1/link.log",
            ".rein/artifacts/t-1/up/secret.txt",
            ".rein/artifacts//etc/passwd",
            ".rein/artifacts/t-1",
        ] {
            assert_eq!(output_tail(path, Some(dir.path())), None, "{path}");
        }
        assert_eq!(output_tail(".rein/artifacts/t-1/check.log", None), None);
    }
}
