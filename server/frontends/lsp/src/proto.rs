//! Conversions between LSP types and `rein-text`'s plain types. Nothing else
//! in the server touches an LSP `Position` directly.

use rein_text::{ContentChange, OffsetEncoding, Position, Range};
use tower_lsp_server::ls_types as lsp;

pub fn position(p: lsp::Position) -> Position {
    Position::new(p.line, p.character)
}

pub fn range(r: lsp::Range) -> Range {
    Range::new(position(r.start), position(r.end))
}

pub fn content_change(change: lsp::TextDocumentContentChangeEvent) -> ContentChange {
    ContentChange {
        range: change.range.map(range),
        text: change.text,
    }
}

pub fn encoding_kind(enc: OffsetEncoding) -> lsp::PositionEncodingKind {
    match enc {
        OffsetEncoding::Utf8 => lsp::PositionEncodingKind::UTF8,
        OffsetEncoding::Utf16 => lsp::PositionEncodingKind::UTF16,
        OffsetEncoding::Utf32 => lsp::PositionEncodingKind::UTF32,
    }
}

/// UTF-8 when the client offers it (no conversion work for us), else the
/// mandatory UTF-16.
pub fn negotiate_encoding(caps: &lsp::ClientCapabilities) -> OffsetEncoding {
    let offered = caps
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref());
    match offered {
        Some(kinds) if kinds.contains(&lsp::PositionEncodingKind::UTF8) => OffsetEncoding::Utf8,
        _ => OffsetEncoding::Utf16,
    }
}
