//! The bytes of a frame header: line syntax, the `Content-Length` value,
//! and the text a resync looks for.

/// Where a frame starts. After a bad frame the deframer scans for this
/// (in any case) and reads a header from there.
pub(super) const MARKER: &[u8] = b"content-length";

/// The first `MARKER` in `hay`, compared without regard to case.
pub(super) fn find_marker(hay: &[u8]) -> Option<usize> {
    let last = hay.len().checked_sub(MARKER.len())?;
    // `| 0x20` lowercases `C` and leaves `c`: a cheap first-byte filter.
    (0..=last).find(|&i| {
        hay[i] | 0x20 == MARKER[0] && hay[i..i + MARKER.len()].eq_ignore_ascii_case(MARKER)
    })
}

/// How many bytes of `MARKER` match, after `matched` did and `b` follows.
/// Simple because no proper prefix of the marker is also its suffix.
/// (After a whole marker, matching starts over.)
pub(super) fn match_marker(matched: usize, b: u8) -> usize {
    let b = b.to_ascii_lowercase();
    if matched < MARKER.len() && b == MARKER[matched] {
        matched + 1
    } else {
        usize::from(b == MARKER[0])
    }
}

/// How far one header line has been read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Line {
    /// Nothing read yet.
    Start,
    /// A `\r` at the start: a blank line if `\n` follows.
    StartCr,
    Name,
    Value,
    /// A `\r` after the value: the line ends if `\n` follows.
    ValueCr,
}

/// What one more byte makes of a header line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Continue(Line),
    /// An empty line ended (at this byte, a `\n`).
    Blank,
    /// A `Name: value` line ended (at this byte, a `\n`).
    End,
    /// This byte cannot be part of a header line.
    Garbage,
}

/// Header lines are `token ":" value` (RFC 9110 field syntax) ending in
/// `\r\n`; a bare `\n` is accepted too, as clients have sent it.
pub(super) fn step(line: Line, b: u8) -> Step {
    match (line, b) {
        (Line::Start, b'\n') | (Line::StartCr, b'\n') => Step::Blank,
        (Line::Start, b'\r') => Step::Continue(Line::StartCr),
        (Line::Start | Line::Name, b) if is_token(b) => Step::Continue(Line::Name),
        (Line::Name, b':') => Step::Continue(Line::Value),
        (Line::Value | Line::ValueCr, b'\n') => Step::End,
        (Line::Value, b'\r') => Step::Continue(Line::ValueCr),
        (Line::Value, b) if b == b'\t' || (b >= 0x20 && b != 0x7f) => Step::Continue(Line::Value),
        _ => Step::Garbage,
    }
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `None` if `line` (without its line break) is another header than
/// `Content-Length`; else its value, or the text that is not one.
pub(super) fn content_length(line: &[u8]) -> Option<Result<u64, String>> {
    let colon = line.iter().position(|&b| b == b':')?;
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    if !name.eq_ignore_ascii_case(MARKER) {
        return None;
    }
    let value = value.trim_ascii();
    let parsed = (!value.is_empty() && value.iter().all(u8::is_ascii_digit))
        .then(|| std::str::from_utf8(value).ok()?.parse::<u64>().ok())
        .flatten();
    Some(parsed.ok_or_else(|| String::from_utf8_lossy(value).into_owned()))
}

/// A short, printable excerpt of bytes for an error message.
pub(super) fn excerpt(bytes: &[u8]) -> String {
    const MAX: usize = 40;
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX)]);
    let ellipsis = if bytes.len() > MAX { "…" } else { "" };
    format!("\"{}{ellipsis}\"", text.escape_debug())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &[u8]) -> Vec<Step> {
        let mut state = Line::Start;
        let mut steps = Vec::new();
        for &b in line {
            let step = step(state, b);
            steps.push(step);
            match step {
                Step::Continue(next) => state = next,
                _ => break,
            }
        }
        steps
    }

    #[test]
    fn header_lines_blank_lines_and_garbage() {
        assert_eq!(read(b"Content-Length: 12\r\n").last(), Some(&Step::End));
        assert_eq!(read(b"content-length:12\n").last(), Some(&Step::End));
        assert_eq!(read(b"\r\n").last(), Some(&Step::Blank));
        assert_eq!(read(b"\n").last(), Some(&Step::Blank));
        for garbage in [
            &b"{\"a\""[..],
            b"Content-Length : 1",
            b"a\rb",
            b"x: \x01",
            b"\r\r",
        ] {
            assert_eq!(read(garbage).last(), Some(&Step::Garbage), "{garbage:?}");
        }
    }

    #[test]
    fn content_length_values() {
        assert_eq!(content_length(b"Content-Length: 42"), Some(Ok(42)));
        assert_eq!(content_length(b"CONTENT-LENGTH:\t7 "), Some(Ok(7)));
        assert_eq!(content_length(b"Content-Type: x"), None);
        for bad in ["+4", "", "4 2", "-1", "99999999999999999999999"] {
            let line = format!("Content-Length: {bad}");
            assert_eq!(
                content_length(line.as_bytes()),
                Some(Err(bad.to_owned())),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_marker_is_found_in_any_case() {
        assert_eq!(find_marker(b"xx}CONTENT-length: 3"), Some(3));
        assert_eq!(find_marker(b"Content-Lengt"), None);
        let ends: Vec<usize> = b"ccontent-lengthcontent-lengtcontent-Length"
            .iter()
            .scan(0, |matched, &b| {
                *matched = match_marker(*matched, b);
                Some(*matched)
            })
            .enumerate()
            .filter(|&(_, matched)| matched == MARKER.len())
            .map(|(i, _)| i)
            .collect();
        assert_eq!(ends, [14, 41]);
    }
}
