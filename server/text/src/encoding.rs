//! Every conversion between editor positions and rope offsets lives here.
//!
//! An editor position is a zero-based line and a column counted in the code
//! units of the negotiated [`OffsetEncoding`]. Lines end at `\n`, `\r\n` or
//! `\r` and nowhere else (ropey is built without `unicode_lines`, so U+2028,
//! NEL, VT and FF are ordinary characters, as in LSP).
//!
//! Clamping rules, all without panicking:
//! - a column past the end of its line means the end of the line (LSP says
//!   so explicitly), never a position inside the line terminator;
//! - a column inside a multi-unit character (half a surrogate pair, the
//!   middle of a UTF-8 sequence) means the start of that character;
//! - a line past the last line means the end of the document, and is
//!   reported as [`Clamp::DocumentEnd`] so the caller can log it.

use ropey::{Rope, RopeSlice};

/// How the `character` of a [`Position`] counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OffsetEncoding {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units: the LSP default, and what VS Code uses.
    #[default]
    Utf16,
    /// Unicode scalar values (chars).
    Utf32,
}

/// A zero-based line and a column in the units of some [`OffsetEncoding`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

impl Position {
    pub const fn new(line: u32, character: u32) -> Self {
        Self { line, character }
    }
}

/// A half-open range between two positions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

impl Range {
    pub const fn new(start: Position, end: Position) -> Self {
        Self { start, end }
    }
}

/// What had to be adjusted to make a position fit the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Clamp {
    /// The position was inside the document.
    None,
    /// The column was past the end of its line (normal LSP behaviour).
    LineEnd,
    /// The line was past the end of the document: a client bug worth logging.
    DocumentEnd,
}

/// Converts `pos` to a char index of `rope`, clamping as the module doc says.
pub fn position_to_char(rope: &Rope, pos: Position, enc: OffsetEncoding) -> (usize, Clamp) {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return (rope.len_chars(), Clamp::DocumentEnd);
    }
    let line_start = rope.line_to_char(line);
    let line_end = line_start + line_content_len(rope.line(line));
    let column = pos.character as usize;
    let (idx, past_end) = match enc {
        OffsetEncoding::Utf32 => {
            let idx = line_start.saturating_add(column);
            (idx.min(line_end), idx > line_end)
        }
        OffsetEncoding::Utf8 => {
            let start = rope.char_to_byte(line_start);
            let end = rope.char_to_byte(line_end);
            let target = start.saturating_add(column);
            // byte_to_char rounds down to the char containing the byte.
            (rope.byte_to_char(target.min(end)), target > end)
        }
        OffsetEncoding::Utf16 => {
            let start = rope.char_to_utf16_cu(line_start);
            let end = rope.char_to_utf16_cu(line_end);
            let target = start.saturating_add(column);
            // utf16_cu_to_char rounds a unit inside a surrogate pair down.
            (rope.utf16_cu_to_char(target.min(end)), target > end)
        }
    };
    (
        idx,
        if past_end {
            Clamp::LineEnd
        } else {
            Clamp::None
        },
    )
}

/// Converts a char index of `rope` to a position. An index past the end is
/// treated as the end; an index inside a `\r\n` maps to the end of its line.
pub fn char_to_position(rope: &Rope, char_idx: usize, enc: OffsetEncoding) -> Position {
    let idx = char_idx.min(rope.len_chars());
    let line = rope.char_to_line(idx);
    let line_start = rope.line_to_char(line);
    let idx = idx.min(line_start + line_content_len(rope.line(line)));
    let column = match enc {
        OffsetEncoding::Utf32 => idx - line_start,
        OffsetEncoding::Utf8 => rope.char_to_byte(idx) - rope.char_to_byte(line_start),
        OffsetEncoding::Utf16 => rope.char_to_utf16_cu(idx) - rope.char_to_utf16_cu(line_start),
    };
    Position::new(saturate(line), saturate(column))
}

/// Converts a range to char indices. A reversed range is put in order; the
/// returned [`Clamp`] is the worst adjustment made to either end.
pub fn range_to_chars(
    rope: &Rope,
    range: Range,
    enc: OffsetEncoding,
) -> (std::ops::Range<usize>, Clamp) {
    let (start, c1) = position_to_char(rope, range.start, enc);
    let (end, c2) = position_to_char(rope, range.end, enc);
    (start.min(end)..start.max(end), c1.max(c2))
}

/// The number of chars in `line` without its terminator (`\n`, `\r\n`, `\r`).
pub fn line_content_len(line: RopeSlice<'_>) -> usize {
    let len = line.len_chars();
    match (
        len.checked_sub(2).map(|i| line.char(i)),
        len.checked_sub(1).map(|i| line.char(i)),
    ) {
        (Some('\r'), Some('\n')) => len - 2,
        (_, Some('\n' | '\r')) => len - 1,
        _ => len,
    }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    /// Checks a position → char → position round trip for each encoding.
    fn check(text: &str, p: Position, want: [usize; 3]) {
        let rope = Rope::from_str(text);
        for (enc, want) in [
            OffsetEncoding::Utf8,
            OffsetEncoding::Utf16,
            OffsetEncoding::Utf32,
        ]
        .into_iter()
        .zip(want)
        {
            let (got, _) = position_to_char(&rope, p, enc);
            assert_eq!(got, want, "{enc:?} {p:?} in {text:?}");
        }
    }

    #[test]
    fn emoji_counts_differently_per_encoding() {
        // "a😀b": 😀 is 4 UTF-8 bytes, 2 UTF-16 units, 1 char.
        check("a😀b", pos(0, 1), [1, 1, 1]);
        // Byte 5 is after 😀; unit 5 and char 5 are past the end of the line.
        check("a😀b", pos(0, 5), [2, 3, 3]);
        check("a😀b", pos(0, 3), [1, 2, 3]);
    }

    #[test]
    fn column_inside_a_character_rounds_down() {
        let rope = Rope::from_str("a😀b");
        // UTF-16 unit 2 is the low surrogate of 😀: rounds down to 😀 (char 1).
        assert_eq!(
            position_to_char(&rope, pos(0, 2), OffsetEncoding::Utf16).0,
            1
        );
        // UTF-8 byte 3 is inside 😀.
        assert_eq!(
            position_to_char(&rope, pos(0, 3), OffsetEncoding::Utf8).0,
            1
        );
        // After the emoji.
        assert_eq!(
            position_to_char(&rope, pos(0, 3), OffsetEncoding::Utf16).0,
            2
        );
        assert_eq!(
            position_to_char(&rope, pos(0, 5), OffsetEncoding::Utf8).0,
            2
        );
    }

    #[test]
    fn column_past_line_end_clamps_before_the_terminator() {
        let rope = Rope::from_str("ab\r\ncd\n");
        for enc in [
            OffsetEncoding::Utf8,
            OffsetEncoding::Utf16,
            OffsetEncoding::Utf32,
        ] {
            assert_eq!(
                position_to_char(&rope, pos(0, 99), enc),
                (2, Clamp::LineEnd)
            );
            assert_eq!(position_to_char(&rope, pos(1, 2), enc), (6, Clamp::None));
            assert_eq!(position_to_char(&rope, pos(2, 0), enc), (7, Clamp::None));
            assert_eq!(
                position_to_char(&rope, pos(3, 0), enc),
                (7, Clamp::DocumentEnd)
            );
            assert_eq!(position_to_char(&rope, pos(u32::MAX, u32::MAX), enc).0, 7);
        }
    }

    #[test]
    fn only_lsp_line_breaks_count() {
        // U+2028, NEL, VT and FF are not line breaks in LSP.
        let rope = Rope::from_str("a\u{2028}b\u{85}c\u{0B}d\u{0C}e\rf");
        assert_eq!(rope.len_lines(), 2);
        assert_eq!(
            char_to_position(&rope, 10, OffsetEncoding::Utf16),
            pos(1, 0)
        );
        assert_eq!(char_to_position(&rope, 9, OffsetEncoding::Utf8), pos(0, 12));
    }

    #[test]
    fn char_inside_crlf_maps_to_line_end() {
        let rope = Rope::from_str("ab\r\ncd");
        assert_eq!(char_to_position(&rope, 3, OffsetEncoding::Utf16), pos(0, 2));
        assert_eq!(char_to_position(&rope, 4, OffsetEncoding::Utf16), pos(1, 0));
        assert_eq!(
            char_to_position(&rope, 100, OffsetEncoding::Utf16),
            pos(1, 2)
        );
    }

    #[test]
    fn reversed_range_is_ordered() {
        let rope = Rope::from_str("hello\nworld");
        let (r, clamp) = range_to_chars(
            &rope,
            Range::new(pos(1, 2), pos(0, 1)),
            OffsetEncoding::Utf16,
        );
        assert_eq!((r, clamp), (1..8, Clamp::None));
    }
}
