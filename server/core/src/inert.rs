//! Untrusted text made inert for a terminal or an editor's message box
//! (`rein run`, `rein trace`, `rein doctor`, the trust question, command
//! approvals). Commands, diffs, paths, test
//! names and the model's words come from the model, the repository or a
//! test runner; written raw, `\r` or `ESC [2K` can rewrite what a line
//! shows (`touch pwned #\x1b[2K\r python3 -m unittest` reads as
//! `python3 -m unittest`) and a bidi override can reorder it ("Trojan
//! Source"). Every character that a terminal does not show as itself is
//! written as a visible escape instead: `\x1b`, `\r`, `\u{202e}`.
//!
//! Backslashes stay as they are, so ordinary text (regexes, Windows paths)
//! reads as usual; whether an escape is real is said separately where it
//! matters ([`escapes`], the warning of an approval prompt).

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` for a block of lines (a diff, the model's message): line breaks
/// (`\n`, and `\r\n`) and tabs are kept, every other disguising character
/// is escaped. A tab only moves the cursor forward over blank cells, so
/// it cannot hide anything, and code is full of them.
pub fn block(text: &str) -> Cow<'_, str> {
    escape(text, Mode::Block)
}

/// `text` for a one-line field (a command, a path, a test name): line
/// breaks and tabs are escaped too, so the field cannot end the line and
/// fake the next one, nor hide its width.
pub fn line(text: &str) -> Cow<'_, str> {
    escape(text, Mode::Line)
}

/// The escapes [`block`] shows in `text`, each once, in order of
/// appearance (`["\\x1b", "\\r"]`): what a warning names. Empty when
/// `text` shows as it is (line breaks and tabs are no disguise).
pub fn escapes(text: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped(c, chars.peek().copied(), Mode::Block) {
            let mut shown = String::new();
            push_escape(&mut shown, c);
            if !seen.contains(&shown) {
                seen.push(shown);
            }
        }
    }
    seen
}

/// Whether a terminal would not show `c` as itself: a control character
/// (C0, DEL, C1), or a Unicode format character that is invisible or
/// changes how the text around it is shown: bidi embeddings, overrides,
/// isolates and marks, zero-width characters, line and paragraph
/// separators, the BOM, the soft hyphen, joiners, Hangul fillers, tags.
/// (Visible format characters, like the Arabic number signs, are left.)
pub fn disguises(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            // soft hyphen; combining grapheme joiner; Arabic letter mark (bidi)
            '\u{ad}' | '\u{34f}' | '\u{61c}'
            // Hangul fillers; Mongolian vowel separator
            | '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' | '\u{180e}'
            // zero-width space and (non-)joiner, left-to-right and right-to-left marks
            | '\u{200b}'..='\u{200f}'
            // line and paragraph separators, bidi embeddings and overrides
            | '\u{2028}'..='\u{202e}'
            // word joiner, invisible operators
            | '\u{2060}'..='\u{2064}'
            // bidi isolates, deprecated format characters
            | '\u{2066}'..='\u{206f}'
            // BOM (zero-width no-break space); interlinear annotation
            | '\u{feff}' | '\u{fff9}'..='\u{fffb}'
            // shorthand and musical format controls
            | '\u{1bca0}'..='\u{1bca3}' | '\u{1d173}'..='\u{1d17a}'
            // tags: text smuggled invisibly
            | '\u{e0000}'..='\u{e007f}'
        )
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Block,
    Line,
}

/// Whether `c` (followed by `next`) is shown escaped. A block keeps its
/// line breaks, `\r\n` too (nothing follows the `\r` on its line to be
/// overwritten), and its tabs.
fn escaped(c: char, next: Option<char>, mode: Mode) -> bool {
    let kept = mode == Mode::Block && (c == '\n' || c == '\t' || (c == '\r' && next == Some('\n')));
    disguises(c) && !kept
}

fn escape(text: &str, mode: Mode) -> Cow<'_, str> {
    let needed = |text: &str| {
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if escaped(c, chars.peek().copied(), mode) {
                return true;
            }
        }
        false
    };
    if !needed(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped(c, chars.peek().copied(), mode) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `\n`, `\r`, `\t`; `\x1b` below U+0080; `\u{202e}` above.
fn push_escape(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_ascii() => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

/// Text from the repository as it may appear in a question: control
/// characters escaped, and cut short, so it can neither disguise itself
/// nor push the rest of the question out of view.
pub fn shown(text: &str) -> String {
    const MAX_CHARS: usize = 120;
    let mut out: String = text.chars().take(MAX_CHARS).collect();
    if text.chars().nth(MAX_CHARS).is_some() {
        out.push('…');
    }
    line(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::expect;

    use super::*;

    /// Each attack, as given and as shown.
    #[test]
    fn control_and_invisible_characters_are_shown_escaped() {
        let cases = [
            ("plain", "python3 -m unittest"),
            (
                "erase line and return",
                "touch pwned #\x1b[2K\r python3 -m unittest",
            ),
            ("carriage return alone", "rm -rf ~\rls"),
            ("backspaces", "rm x\x08\x08\x08\x08ls"),
            (
                "OSC title and hyperlink",
                "\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
            ),
            ("CSI cursor up", "ok\x1b[1A\x1b[2Kfaked"),
            ("NUL, BEL, DEL", "a\0b\x07c\x7f"),
            ("C1 CSI and NEL", "a\u{9b}2Kb\u{85}c"),
            (
                "Trojan Source override",
                "access = \"user\u{202e} \u{2066}// admin\u{2069} \u{2066}\"",
            ),
            (
                "bidi embeddings and isolates",
                "\u{202a}\u{202b}\u{202c}\u{202d}\u{2067}\u{2068}",
            ),
            (
                "zero-width and marks",
                "r\u{200b}m\u{200c}\u{200d}\u{200e}\u{200f}",
            ),
            ("line and paragraph separators", "a\u{2028}b\u{2029}c"),
            (
                "BOM, soft hyphen, word joiner",
                "\u{feff}su\u{ad}do\u{2060}",
            ),
            ("tags smuggle text", "hi\u{e0041}\u{e0042}"),
            ("Hangul filler", "if\u{3164}x"),
            (
                "text that stays",
                "naïve café → 日本語 ✓ ⚠\u{fe0f} C:\\dir \\x1b",
            ),
        ];
        let mut table = String::new();
        for (name, text) in cases {
            let _ = writeln!(
                table,
                "{name}\n  block: {}\n  line:  {}",
                block(text),
                line(text)
            );
        }
        expect![[r#"
            plain
              block: python3 -m unittest
              line:  python3 -m unittest
            erase line and return
              block: touch pwned #\x1b[2K\r python3 -m unittest
              line:  touch pwned #\x1b[2K\r python3 -m unittest
            carriage return alone
              block: rm -rf ~\rls
              line:  rm -rf ~\rls
            backspaces
              block: rm x\x08\x08\x08\x08ls
              line:  rm x\x08\x08\x08\x08ls
            OSC title and hyperlink
              block: \x1b]0;title\x07\x1b]8;;http://x\x1b\link\x1b]8;;\x1b\
              line:  \x1b]0;title\x07\x1b]8;;http://x\x1b\link\x1b]8;;\x1b\
            CSI cursor up
              block: ok\x1b[1A\x1b[2Kfaked
              line:  ok\x1b[1A\x1b[2Kfaked
            NUL, BEL, DEL
              block: a\x00b\x07c\x7f
              line:  a\x00b\x07c\x7f
            C1 CSI and NEL
              block: a\u{9b}2Kb\u{85}c
              line:  a\u{9b}2Kb\u{85}c
            Trojan Source override
              block: access = "user\u{202e} \u{2066}// admin\u{2069} \u{2066}"
              line:  access = "user\u{202e} \u{2066}// admin\u{2069} \u{2066}"
            bidi embeddings and isolates
              block: \u{202a}\u{202b}\u{202c}\u{202d}\u{2067}\u{2068}
              line:  \u{202a}\u{202b}\u{202c}\u{202d}\u{2067}\u{2068}
            zero-width and marks
              block: r\u{200b}m\u{200c}\u{200d}\u{200e}\u{200f}
              line:  r\u{200b}m\u{200c}\u{200d}\u{200e}\u{200f}
            line and paragraph separators
              block: a\u{2028}b\u{2029}c
              line:  a\u{2028}b\u{2029}c
            BOM, soft hyphen, word joiner
              block: \u{feff}su\u{ad}do\u{2060}
              line:  \u{feff}su\u{ad}do\u{2060}
            tags smuggle text
              block: hi\u{e0041}\u{e0042}
              line:  hi\u{e0041}\u{e0042}
            Hangul filler
              block: if\u{3164}x
              line:  if\u{3164}x
            text that stays
              block: naïve café → 日本語 ✓ ⚠️ C:\dir \x1b
              line:  naïve café → 日本語 ✓ ⚠️ C:\dir \x1b
        "#]]
        .assert_eq(&table);
    }

    #[test]
    fn what_is_escaped_is_printable_and_escaping_twice_changes_nothing() {
        let text = "a\x1b[31mb\r\nc\rd\u{202e}e\u{9b}\tf\n";
        // A block keeps its lines (a CRLF ending too: nothing follows the
        // `\r` on its line to be overwritten) and its tabs.
        assert_eq!(block(text), "a\\x1b[31mb\r\nc\\rd\\u{202e}e\\u{9b}\tf\n");
        assert_eq!(line(text), "a\\x1b[31mb\\r\\nc\\rd\\u{202e}e\\u{9b}\\tf\\n");
        assert!(line(text).chars().all(|c| !disguises(c)));
        // Every C0 and C1 control and DEL, whatever a terminal does with it.
        for c in (0..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            assert!(line(&c.to_string()).starts_with('\\'), "{c:?}");
        }
        assert_eq!(block(&line(text)), line(text));
        assert_eq!(line(&block(text)), line(text));
        assert!(matches!(block("clean\ttext\r\n"), Cow::Borrowed(_)));
        assert!(matches!(line("clean text"), Cow::Borrowed(_)));
        assert_eq!(
            escapes("touch pwned #\x1b[2K\r python3 -m unittest\x1b[0m"),
            ["\\x1b", "\\r"]
        );
        assert!(escapes("python3 -m unittest").is_empty());
        assert!(escapes("a\tb\r\nc\n").is_empty());
        assert_eq!(escapes("a\rb\u{202e}"), ["\\r", "\\u{202e}"]);
    }
}
