//! The document store against a naive model: a `String` and position rules
//! written out the slow, obvious way. Random edit sequences in all three
//! encodings, over text full of multi-byte characters, emoji, CRLF, lone CR
//! and the characters that are *not* LSP line breaks (U+2028, NEL, VT, FF).

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use rein_text::{
    ContentChange, DocumentStore, OffsetEncoding, Position, Range, Rope, char_to_position,
    position_to_char,
};

const ENCODINGS: [OffsetEncoding; 3] = [
    OffsetEncoding::Utf8,
    OffsetEncoding::Utf16,
    OffsetEncoding::Utf32,
];

/// The naive model of a document.
struct Model {
    text: String,
}

impl Model {
    /// (start byte, end byte of content) of every line, found by scanning.
    fn lines(&self) -> Vec<(usize, usize)> {
        let bytes = self.text.as_bytes();
        let mut lines = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                    lines.push((start, i));
                    i += 2;
                    start = i;
                }
                b'\r' | b'\n' => {
                    lines.push((start, i));
                    i += 1;
                    start = i;
                }
                _ => i += 1,
            }
        }
        lines.push((start, bytes.len()));
        lines
    }

    fn width(c: char, enc: OffsetEncoding) -> usize {
        match enc {
            OffsetEncoding::Utf8 => c.len_utf8(),
            OffsetEncoding::Utf16 => c.len_utf16(),
            OffsetEncoding::Utf32 => 1,
        }
    }

    fn position_to_byte(&self, pos: Position, enc: OffsetEncoding) -> usize {
        let lines = self.lines();
        let Some(&(start, end)) = lines.get(pos.line as usize) else {
            return self.text.len();
        };
        let mut units = 0;
        for (offset, c) in self.text[start..end].char_indices() {
            if units + Self::width(c, enc) > pos.character as usize {
                return start + offset;
            }
            units += Self::width(c, enc);
        }
        end
    }

    fn byte_to_position(&self, byte: usize, enc: OffsetEncoding) -> Position {
        let lines = self.lines();
        // The last line whose start is at or before `byte`.
        let line = lines
            .iter()
            .rposition(|&(start, _)| start <= byte)
            .unwrap_or(0);
        let (start, end) = lines[line];
        let column = self.text[start..byte.min(end)]
            .chars()
            .map(|c| Self::width(c, enc))
            .sum::<usize>();
        Position::new(line as u32, column as u32)
    }

    fn apply(&mut self, change: &ContentChange, enc: OffsetEncoding) {
        match change.range {
            None => self.text = change.text.clone(),
            Some(range) => {
                let a = self.position_to_byte(range.start, enc);
                let b = self.position_to_byte(range.end, enc);
                self.text.replace_range(a.min(b)..a.max(b), &change.text);
            }
        }
    }
}

fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "a", "b", "xyz", " ", "é", "中", "😀", "👍🏽", "\n", "\r\n", "\r", "\u{2028}", "\u{85}",
        "\u{0B}", "\u{0C}", "\t",
    ])
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(piece(), 0..40).prop_map(|p| p.concat()),
        // Long enough that ropey splits it into several chunks, so CRLF pairs
        // and multi-byte characters meet chunk boundaries.
        1 => prop::collection::vec(piece(), 1..20).prop_map(|p| p.concat().repeat(300)),
    ]
}

fn encoding() -> impl Strategy<Value = OffsetEncoding> {
    prop::sample::select(ENCODINGS.to_vec())
}

/// A position that may be anywhere, including past the end of its line or
/// of the document; `scale` keeps most positions inside long documents.
fn position(scale: u32) -> impl Strategy<Value = Position> {
    (0..scale + 3, 0..40u32).prop_map(|(line, character)| Position::new(line, character))
}

fn change() -> impl Strategy<Value = ContentChange> {
    prop_oneof![
        12 => (position(12), position(12), text(), any::<bool>()).prop_map(|(a, b, text, short)| {
            let text = if short { text.chars().take(3).collect() } else { text };
            ContentChange::replace(Range::new(a, b), text)
        }),
        1 => text().prop_map(ContentChange::full),
    ]
}

/// One `didChange`: a batch of changes applied in order, in one encoding.
fn batch() -> impl Strategy<Value = (OffsetEncoding, Vec<ContentChange>)> {
    (encoding(), prop::collection::vec(change(), 1..4))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn store_matches_model(initial in text(), batches in prop::collection::vec(batch(), 1..12)) {
        let store = DocumentStore::new();
        store.open("file:///t", "plaintext", 0, &initial);
        let mut model = Model { text: initial };
        for (version, (enc, changes)) in batches.into_iter().enumerate() {
            for change in &changes {
                model.apply(change, enc);
            }
            store.change("file:///t", version as i32 + 1, changes, enc).unwrap();
            let snap = store.snapshot("file:///t").unwrap();
            prop_assert_eq!(snap.text(), model.text.clone());
            prop_assert_eq!(snap.version(), version as i32 + 1);
        }
    }

    #[test]
    fn conversions_match_model(text in text(), positions in prop::collection::vec(position(12), 1..20)) {
        let rope = Rope::from_str(&text);
        let model = Model { text };
        for enc in ENCODINGS {
            for &pos in &positions {
                let (char_idx, _) = position_to_char(&rope, pos, enc);
                prop_assert_eq!(rope.char_to_byte(char_idx), model.position_to_byte(pos, enc), "{:?} {:?}", enc, pos);
            }
            // Every char boundary of short texts; a sample of long ones.
            let boundaries: Vec<usize> =
                model.text.char_indices().map(|(b, _)| b).chain([model.text.len()]).collect();
            let step = (boundaries.len() / 150).max(1);
            for &byte in boundaries.iter().step_by(step) {
                let got = char_to_position(&rope, rope.byte_to_char(byte), enc);
                prop_assert_eq!(got, model.byte_to_position(byte, enc), "{:?} byte {}", enc, byte);
            }
        }
    }
}
