//! An incremental check that a message body is one JSON value nested no
//! deeper than a limit, fed as its bytes arrive.
//!
//! It runs before any parser sees the body, so a body too deep for the
//! transport's parser never reaches it, and it tells the deframer as soon
//! as a frame cannot be what its header claims: a `Content-Length` too long
//! shows as bytes after the value, one too short as a value still open at
//! the end. It is never stricter than serde_json (anything serde_json
//! parses passes); a body it passes may still be rejected by the real
//! parser afterwards.

/// Why a body is not one JSON value of the allowed depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fault {
    /// A byte that cannot continue a JSON value.
    Syntax,
    /// An array or object opened deeper than the limit.
    TooDeep,
    /// Something other than whitespace after the value.
    TrailingData,
    /// The body ended with the value still open.
    Incomplete,
}

/// Where a body went wrong, in offsets from the start of the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Failure {
    pub fault: Fault,
    pub at: usize,
    /// Where a frame header can have begun at the earliest. Outside a
    /// string, a header's first byte is itself a fault, so that is `at`.
    /// Inside one, the header's line break is, so the header can start
    /// anywhere in the open string.
    pub resync_from: usize,
}

#[derive(Clone, Copy, Debug)]
enum State {
    /// Before the top-level value, after `:`, or after `,` in an array.
    Value,
    /// Right after `[`: a value or `]`.
    ArrayStart,
    /// Right after `{`: a key or `}`.
    ObjectStart,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value inside a container: `,` or the closing bracket.
    Next,
    String {
        key: bool,
    },
    Escape {
        key: bool,
    },
    Unicode {
        key: bool,
        left: u8,
    },
    /// Inside a number (loosely: serde_json judges its exact form).
    Number,
    /// Inside `true`, `false` or `null`: the bytes still expected.
    Literal {
        rest: &'static [u8],
    },
    /// The top-level value is complete: only whitespace may follow.
    Done,
}

#[derive(Debug)]
pub(super) struct JsonScan {
    max_depth: usize,
    /// Open containers, innermost last: `true` for an object.
    stack: Vec<bool>,
    state: State,
    /// Bytes fed so far.
    pos: usize,
    /// Offset of the opening quote of the string being read.
    string_start: usize,
}

impl JsonScan {
    pub fn new(max_depth: usize) -> Self {
        Self {
            max_depth,
            stack: Vec::new(),
            state: State::Value,
            pos: 0,
            string_start: 0,
        }
    }

    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// How many bytes were fed.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Checks the next bytes of the body.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        let mut i = 0;
        while i < bytes.len() {
            if let State::String { key } = self.state {
                // The bulk of a message is string content: skip it fast.
                let rest = &bytes[i..];
                i += rest
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                    .unwrap_or(rest.len());
                let Some(&b) = bytes.get(i) else { break };
                self.state = match b {
                    b'"' if key => State::Colon,
                    b'"' => self.value_done(),
                    b'\\' => State::Escape { key },
                    _ => return Err(self.fail(Fault::Syntax, i)),
                };
                i += 1;
                continue;
            }
            let b = bytes[i];
            match self.step(b, self.pos + i) {
                Ok(true) => i += 1,
                // The byte ended a number; it is looked at again.
                Ok(false) => {}
                Err(fault) => return Err(self.fail(fault, i)),
            }
        }
        self.pos += bytes.len();
        Ok(())
    }

    /// Called once every claimed byte was fed.
    pub fn finish(&self) -> Result<(), Failure> {
        match self.state {
            State::Done => Ok(()),
            State::Number if self.stack.is_empty() => Ok(()),
            _ => Err(self.fail(Fault::Incomplete, 0)),
        }
    }

    /// One byte (at offset `at`) outside a string's content. `Ok(false)`:
    /// not consumed.
    fn step(&mut self, b: u8, at: usize) -> Result<bool, Fault> {
        let is_space = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        self.state = match self.state {
            State::Number
                if b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E') =>
            {
                State::Number
            }
            State::Number => {
                self.state = self.value_done();
                return Ok(false);
            }
            State::Literal { rest } => match rest.split_first() {
                Some((&expected, rest)) if b == expected && rest.is_empty() => self.value_done(),
                Some((&expected, rest)) if b == expected => State::Literal { rest },
                _ => return Err(Fault::Syntax),
            },
            State::Escape { key } => match b {
                b'u' => State::Unicode { key, left: 4 },
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => State::String { key },
                _ => return Err(Fault::Syntax),
            },
            State::Unicode { key, left } if b.is_ascii_hexdigit() => match left {
                1 => State::String { key },
                _ => State::Unicode {
                    key,
                    left: left - 1,
                },
            },
            State::Unicode { .. } => return Err(Fault::Syntax),
            _ if is_space => return Ok(true),
            State::Value => self.begin_value(b, at)?,
            State::ArrayStart if b == b']' => self.close(),
            State::ArrayStart => self.begin_value(b, at)?,
            State::ObjectStart if b == b'}' => self.close(),
            State::ObjectStart | State::Key if b == b'"' => self.begin_string(true, at),
            State::ObjectStart | State::Key => return Err(Fault::Syntax),
            State::Colon if b == b':' => State::Value,
            State::Colon => return Err(Fault::Syntax),
            State::Next => match (b, self.stack.last()) {
                (b',', Some(true)) => State::Key,
                (b',', Some(false)) => State::Value,
                (b'}', Some(true)) | (b']', Some(false)) => self.close(),
                _ => return Err(Fault::Syntax),
            },
            State::Done => return Err(Fault::TrailingData),
            // Handled in `feed`.
            State::String { .. } => return Err(Fault::Syntax),
        };
        Ok(true)
    }

    fn begin_value(&mut self, b: u8, at: usize) -> Result<State, Fault> {
        Ok(match b {
            b'{' | b'[' => {
                if self.stack.len() >= self.max_depth {
                    return Err(Fault::TooDeep);
                }
                self.stack.push(b == b'{');
                if b == b'{' {
                    State::ObjectStart
                } else {
                    State::ArrayStart
                }
            }
            b'"' => self.begin_string(false, at),
            b'-' | b'0'..=b'9' => State::Number,
            b't' => State::Literal { rest: b"rue" },
            b'f' => State::Literal { rest: b"alse" },
            b'n' => State::Literal { rest: b"ull" },
            _ => return Err(Fault::Syntax),
        })
    }

    fn begin_string(&mut self, key: bool, at: usize) -> State {
        self.string_start = at;
        State::String { key }
    }

    fn close(&mut self) -> State {
        self.stack.pop();
        self.value_done()
    }

    fn value_done(&self) -> State {
        if self.stack.is_empty() {
            State::Done
        } else {
            State::Next
        }
    }

    fn fail(&self, fault: Fault, i: usize) -> Failure {
        let at = self.pos + i;
        let in_string = matches!(
            self.state,
            State::String { .. } | State::Escape { .. } | State::Unicode { .. }
        );
        Failure {
            fault,
            at,
            resync_from: if in_string { self.string_start } else { at },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan of `body` (whole, then byte by byte: the same), as
    /// `ok` or `<fault> at <offset>, resync from <offset>`.
    fn scan(body: &str, max_depth: usize) -> String {
        let outcome = |chunks: Vec<&[u8]>| {
            let mut scan = JsonScan::new(max_depth);
            let result = chunks
                .into_iter()
                .try_for_each(|chunk| scan.feed(chunk))
                .and_then(|()| scan.finish());
            match result {
                Ok(()) => "ok".to_owned(),
                Err(f) => format!("{:?} at {}, resync from {}", f.fault, f.at, f.resync_from),
            }
        };
        let whole = outcome(vec![body.as_bytes()]);
        let bytewise = outcome(body.as_bytes().chunks(1).collect());
        assert_eq!(whole, bytewise, "{body}");
        whole
    }

    #[test]
    fn what_the_scan_accepts_and_where_it_stops() {
        let cases = [
            (
                r#" {"a":[1,-2.5e+3,true,null,"x\"\u00e9\\"],"b":{}} "#,
                4,
                "ok",
            ),
            ("-0.5", 4, "ok"),
            (r#"{"a" 1}"#, 4, "Syntax at 5, resync from 5"),
            (r#"{"a":tru}"#, 4, "Syntax at 8, resync from 8"),
            (r#"[1,]"#, 4, "Syntax at 3, resync from 3"),
            ("[[[1]]]", 2, "TooDeep at 2, resync from 2"),
            ("[[1]]", 2, "ok"),
            ("{} x", 4, "TrailingData at 3, resync from 3"),
            ("{}Content-Length: 2", 4, "TrailingData at 2, resync from 2"),
            (r#"{"a":"b"#, 4, "Incomplete at 7, resync from 5"),
            ("{\"a\":\"b\nc\"}", 4, "Syntax at 7, resync from 5"),
            (r#"{"a":"\q"}"#, 4, "Syntax at 7, resync from 5"),
            (r#"["\u12G4"]"#, 4, "Syntax at 6, resync from 1"),
            ("", 4, "Incomplete at 0, resync from 0"),
        ];
        for (body, max_depth, expected) in cases {
            assert_eq!(scan(body, max_depth), expected, "{body}");
        }
    }
}
