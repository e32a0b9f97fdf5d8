//! The project's own instructions for agents: `AGENTS.md` (the emerging
//! convention), else `CLAUDE.md`, at the workspace root.

use std::io::{self, Read};
use std::path::Path;

use rein_fsroot::{Links, Root};

/// Files read, in order of preference.
const FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// Instruction files larger than this are cut (the context manager cuts
/// them further to its token budget).
const MAX_BYTES: usize = 64 * 1024;

/// `(file name, text)` of the first instruction file found, if any. Read
/// beneath the workspace (a link out of it, say to `~/.aws/credentials`,
/// would send that file to the model: it is skipped, and logged).
pub fn project_instructions(root: &Path) -> Option<(String, String)> {
    let fs = Root::open(root, Links::Within).ok()?;
    FILES.iter().find_map(|name| {
        let text = match read(&fs, name) {
            Ok(text) => text,
            Err(error) => {
                if rein_fsroot::refusal(&error).is_some() {
                    tracing::warn!(%error, "instructions not read");
                }
                return None;
            }
        };
        let text = if text.len() > MAX_BYTES {
            let mut cut = MAX_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text[..cut].to_owned()
        } else {
            text
        };
        (!text.trim().is_empty()).then(|| ((*name).to_owned(), text))
    })
}

/// The text of a regular file (a pipe or a folder is no instruction).
fn read(fs: &Root, name: &str) -> io::Result<String> {
    let file = fs.open_file(name)?;
    if !file.metadata()?.is_file() {
        return Err(io::ErrorKind::InvalidInput.into());
    }
    // Past the cap, so a cut is seen (and made at a character, below).
    let cap = MAX_BYTES as u64 + 4;
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes)?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        // A character cut at the cap.
        Err(e) if e.utf8_error().error_len().is_none() && e.as_bytes().len() as u64 == cap => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| io::ErrorKind::InvalidData.into())
        }
        Err(_) => Err(io::ErrorKind::InvalidData.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_md_wins_over_claude_md() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(project_instructions(dir.path()), None);
        std::fs::write(dir.path().join("CLAUDE.md"), "Use tabs.").unwrap();
        assert_eq!(
            project_instructions(dir.path()),
            Some(("CLAUDE.md".into(), "Use tabs.".into()))
        );
        std::fs::write(dir.path().join("AGENTS.md"), "Run `make check`.").unwrap();
        assert_eq!(project_instructions(dir.path()).unwrap().0, "AGENTS.md");
        std::fs::write(dir.path().join("AGENTS.md"), "  \n").unwrap();
        assert_eq!(project_instructions(dir.path()).unwrap().0, "CLAUDE.md");
    }

    /// A repository's `AGENTS.md` linked to a file of the user's would
    /// send that file to the model.
    #[test]
    fn instructions_linked_out_of_the_workspace_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("credentials"), "aws_secret=1").unwrap();
        std::os::unix::fs::symlink(
            home.path().join("credentials"),
            dir.path().join("AGENTS.md"),
        )
        .unwrap();
        std::fs::write(dir.path().join("CLAUDE.md"), "Use tabs.").unwrap();
        assert_eq!(
            project_instructions(dir.path()),
            Some(("CLAUDE.md".into(), "Use tabs.".into()))
        );
        // A link inside is followed; a long file is cut at a character.
        std::fs::write(dir.path().join("docs.md"), "xé".repeat(MAX_BYTES)).unwrap();
        std::fs::remove_file(dir.path().join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink("docs.md", dir.path().join("AGENTS.md")).unwrap();
        let (name, text) = project_instructions(dir.path()).unwrap();
        assert_eq!((name.as_str(), text.len()), ("AGENTS.md", MAX_BYTES));
    }
}
