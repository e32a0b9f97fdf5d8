//! Redacting a stream read in pieces (a command's output, gigabytes of
//! it): whole lines pass at once; of an unfinished line only the last few
//! KiB are held back, so a secret cut by a piece boundary is still seen
//! whole, and memory stays bounded whatever the line's length.

use std::borrow::Cow;

use super::Redactor;

/// Bytes of an unfinished line held back for the next piece (more when a
/// known value is longer). A key shape longer than this that crosses a
/// piece boundary in the middle of a line loses only its start.
const HOLD_BACK: usize = 4 * 1024;

/// A stream's redaction state: the held-back end of an unfinished line,
/// and whether a PEM private key's body is open.
#[derive(Debug)]
pub struct StreamRedactor {
    redactor: Redactor,
    hold: usize,
    carry: Vec<u8>,
    pem: Option<usize>,
}

impl StreamRedactor {
    pub(super) fn new(redactor: Redactor) -> Self {
        let hold = HOLD_BACK.max(redactor.longest());
        Self {
            redactor,
            hold,
            carry: Vec::new(),
            pem: None,
        }
    }

    /// Takes the next piece; returns what can be passed on now, redacted.
    pub fn push<'a>(&mut self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        // The usual case: whole lines, nothing held, nothing to redact.
        if self.carry.is_empty()
            && self.pem.is_none()
            && bytes.last().is_none_or(|&b| b == b'\n')
            && !self.redactor.finds_bytes(bytes)
        {
            return Cow::Borrowed(bytes);
        }
        let mut hay = std::mem::take(&mut self.carry);
        hay.extend_from_slice(bytes);
        let line_start = hay.iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1);
        let stop = line_start.max(hay.len().saturating_sub(self.hold));
        let mut out = Vec::with_capacity(hay.len());
        let consumed = self.redactor.0.scan(&hay, stop, &mut self.pem, &mut out);
        self.carry = hay.split_off(consumed);
        Cow::Owned(out)
    }

    /// Bytes held back, waiting for the rest of their line.
    pub fn pending(&self) -> usize {
        self.carry.len()
    }

    /// The stream ended (or its line was cut): what was held back,
    /// redacted. The next piece starts afresh.
    pub fn finish(&mut self) -> Vec<u8> {
        let hay = std::mem::take(&mut self.carry);
        let mut out = Vec::with_capacity(hay.len());
        self.redactor
            .0
            .scan(&hay, hay.len(), &mut self.pem, &mut out);
        self.pem = None;
        out
    }
}
