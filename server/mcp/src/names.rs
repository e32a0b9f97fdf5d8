//! How an MCP server's tool is named in Rein's registry:
//! `mcp__<server>__<tool>`, within what every model API accepts (1 to 64
//! of `A-Za-z0-9_-`), and never two tools under one name.

use std::collections::HashSet;

use rein_core::permissions::MCP_PREFIX;

/// The longest tool name model APIs accept.
const MAX: usize = 64;

/// The registry name of `server`'s tool `tool`; `taken` holds the names
/// already given (a second tool that would read the same gets a suffix).
pub fn tool_name(server: &str, tool: &str, taken: &HashSet<String>) -> String {
    let clean = rein_core::tools::file_safe(tool);
    let name = format!("{MCP_PREFIX}{server}__{clean}");
    if name.len() <= MAX && clean == tool && !taken.contains(&name) {
        return name;
    }
    // Changed, too long or taken: a stable suffix from the server's own
    // name keeps it apart from every other.
    let suffix = format!("_{:08x}", fnv(tool));
    let room = MAX - suffix.len();
    let mut base = name;
    base.truncate(room);
    let mut candidate = format!("{base}{suffix}");
    let mut n = 1;
    while taken.contains(&candidate) {
        let extra = format!("{suffix}{n}");
        let mut b = base.clone();
        b.truncate(MAX - extra.len());
        candidate = format!("{b}{extra}");
        n += 1;
    }
    candidate
}

/// FNV-1a, 32 bits: stable across builds, unlike the std hasher.
fn fnv(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5, |hash: u32, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// A call id as part of a file name, at most 64 characters.
pub(crate) fn artifact_safe(id: &str) -> String {
    rein_core::tools::file_safe(id).chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_model_apis_and_never_clash() {
        let mut taken = HashSet::new();
        let mut give = |tool: &str| {
            let name = tool_name("gh", tool, &taken);
            assert!(name.len() <= MAX, "{name}");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{name}"
            );
            assert!(taken.insert(name.clone()), "{name} given twice");
            name
        };
        assert_eq!(give("get_issue"), "mcp__gh__get_issue");
        assert_eq!(give("get.issue"), "mcp__gh__get_issue_9d245d92");
        assert_eq!(give("get issue"), "mcp__gh__get_issue_27f34850");
        let long = give(&"x".repeat(100));
        assert_eq!(long.len(), MAX);
        assert!(give("ünïcode").starts_with("mcp__gh__"));
    }
}
