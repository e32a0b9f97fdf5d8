//! The project's own instructions for agents: `AGENTS.md` (the emerging
//! convention), else `CLAUDE.md`, at the workspace root.

use std::path::Path;

/// Files read, in order of preference.
const FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// Instruction files larger than this are cut (the context manager cuts
/// them further to its token budget).
const MAX_BYTES: usize = 64 * 1024;

/// `(file name, text)` of the first instruction file found, if any.
pub fn project_instructions(root: &Path) -> Option<(String, String)> {
    FILES.iter().find_map(|name| {
        let text = std::fs::read_to_string(root.join(name)).ok()?;
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
}
