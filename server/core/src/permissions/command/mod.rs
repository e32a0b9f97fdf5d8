//! A small shell tokenizer: splits a `run_command` command line into the
//! simple commands it would run, so each can be checked on its own.
//!
//! It is not a shell, and does not need to be one: it must find every
//! program a POSIX shell (bash, in practice) would start, and never hide
//! one. In two steps:
//!
//! - `parse`: the tokenizer and parser, from a command line to its simple
//!   commands (what it understands is listed there);
//! - `analyze`: from each simple command to a [`Unit`], its real program
//!   behind assignments and wrappers, with the bodies of `sh -c`, `eval`
//!   and `find -exec` opened as further commands ([`analyze()`]).
//!
//! This file also holds two helpers for rules and policy keys built on the
//! tokenizer: [`words_of`] and [`normalize_whitespace`].

mod analyze;
mod parse;

pub(crate) use analyze::{SHELLS, Unit, analyze, basename};

use parse::parse;

/// Splits `src` into words the way the shell would (quotes removed), for
/// command patterns in rules. `Err` when it is not a single simple command.
pub(crate) fn words_of(src: &str) -> Result<Vec<String>, String> {
    let script = parse(src);
    if let Some(error) = script.error {
        return Err(error);
    }
    match script.commands.as_slice() {
        [] => Ok(Vec::new()),
        [one] if !one.writes.is_empty() || !one.sockets.is_empty() || one.piped_into => Err(
            "redirections (`>`, `<`, `<<`) are not part of a command pattern; write the command alone"
                .into(),
        ),
        [one] => Ok(one.words.iter().map(|w| w.text.clone()).collect()),
        _ => Err(
            "it holds more than one command (`;`, `&&`, `|`, `$(…)`, …); \
                  compound commands are split before matching, so write one rule per command"
                .into(),
        ),
    }
}

/// Collapses runs of blanks outside quotes into one space and trims: two
/// spellings of the same command line give the same key.
pub(crate) fn normalize_whitespace(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut quote: Option<char> = None;
    let mut chars = src.trim().chars();
    let mut pending_space = false;
    while let Some(c) = chars.next() {
        match quote {
            None if c == ' ' || c == '\t' => {
                pending_space = true;
                continue;
            }
            _ => {}
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
        match (quote, c) {
            (_, '\\') if quote != Some('\'') => {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            (None, '\'' | '"' | '`') => quote = Some(c),
            (Some(q), c) if q == c => quote = None,
            _ => {}
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Random strings of shell syntax: parsing never panics or hangs.
    #[test]
    fn arbitrary_input_is_handled() {
        const ALPHABET: &[char] = &[
            ' ', '\n', '\t', 'a', 'x', '=', '$', '(', ')', '{', '}', '[', ']', '\'', '"', '`',
            '\\', '|', '&', ';', '<', '>', '#', '*', '-', ':', '1', 'é', '!',
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let len = (next() % 40) as usize;
            let src: String = (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
                .collect();
            let _ = analyze(&src);
            let _ = normalize_whitespace(&src);
        }
        // Deep nesting stops instead of overflowing the stack.
        let deep = format!("{}x{}", "$(".repeat(200), ")".repeat(200));
        assert!(analyze(&deep).error.is_some());
        let deep = format!("{}x", "sh -c ".repeat(50));
        let _ = analyze(&deep);
        let deep = format!("echo {}x{}", "\"$(".repeat(5000), ")\"".repeat(5000));
        assert!(analyze(&deep).error.is_some());
    }

    #[test]
    fn words_of_patterns() {
        assert_eq!(words_of("cargo test").unwrap(), vec!["cargo", "test"]);
        assert_eq!(
            words_of(r#"git commit -m "a b""#).unwrap(),
            vec!["git", "commit", "-m", "a b"]
        );
        assert!(words_of("a && b").is_err());
        assert!(words_of("a | b").is_err());
        assert!(words_of("echo 'x").is_err());
        assert!(words_of("echo x > y").unwrap_err().contains("redirections"));
    }

    #[test]
    fn whitespace_normalization() {
        assert_eq!(
            normalize_whitespace("  cargo   test\t--lib "),
            "cargo test --lib"
        );
        assert_eq!(normalize_whitespace("echo 'a   b'  c"), "echo 'a   b' c");
        assert_eq!(
            normalize_whitespace(r#"echo "a \"  b"   c"#),
            r#"echo "a \"  b" c"#
        );
        assert_eq!(normalize_whitespace(r"echo a\  b"), r"echo a\  b");
    }
}
