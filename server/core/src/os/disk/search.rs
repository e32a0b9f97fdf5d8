//! Searching file contents: the regex matcher and the sink that keeps the
//! hits.

use super::*;

/// Collects one file's first matching lines and counts them all; notices
/// binary files.
pub(super) struct FileSink {
    pub(super) hits: Vec<(u64, String)>,
    pub(super) count: usize,
    pub(super) binary: bool,
    /// How many hits to keep (more cannot be among the first `limit`).
    pub(super) keep: usize,
}

impl Sink for FileSink {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        // Every line is read, even past `keep`: a NUL further on still makes
        // the file binary, and its hits must then be dropped.
        self.count += 1;
        if self.hits.len() >= self.keep {
            return Ok(true);
        }
        let mut line = m.bytes();
        line = line.strip_suffix(b"\n").unwrap_or(line);
        line = line.strip_suffix(b"\r").unwrap_or(line);
        let text = String::from_utf8_lossy(line);
        let text = match text.char_indices().nth(MAX_HIT_CHARS) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text.into_owned(),
        };
        self.hits.push((m.line_number().unwrap_or(0), text));
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

pub(super) fn build_matcher(pattern: &str) -> Result<RegexMatcher, WorkspaceError> {
    RegexMatcherBuilder::new()
        .crlf(true)
        .ban_byte(Some(0))
        .build(pattern)
        .map_err(|e| {
            // The regex error quotes the pattern as grep-regex rewrote it
            // (`(?:fn ()`), which would confuse; keep its last line, the
            // reason ("error: unclosed group").
            let full = e.to_string();
            let reason = full
                .lines()
                .rev()
                .find_map(|l| l.trim().strip_prefix("error: "))
                .unwrap_or(&full)
                .to_string();
            WorkspaceError::BadPattern {
                pattern: pattern.to_string(),
                reason,
            }
        })
}
