//! What the editor shows of a task's step and of the model's words while it
//! works: `rein/taskStatus`'s `step` and `said`.
//!
//! Both are untrusted text on their way to an editor: the step names the
//! model's arguments ("editing cart.py"), `said` is the model's own words.
//! Each is redacted with the task's redactor (the key must never reach the
//! editor), made one inert line (no control, bidi or invisible character
//! can disguise it: `rein_core::inert`) and bounded. A reply can be
//! megabytes long and stream for minutes: only its latest line is kept,
//! and only so much of it.

use rein_core::inert;
use rein_models::Redactor;

/// The longest `said` shown, in characters: one status line's worth.
pub const MAX_SAID_CHARS: usize = 160;
/// The longest `step`, in characters.
pub const MAX_STEP_CHARS: usize = 120;
/// Bytes of one line kept while it streams: far more than is shown, so a
/// secret that starts inside the shown part is found whole by the redactor.
const LINE_CAP: usize = 4 * 1024;

/// A line of the reply, as much of it as is kept.
#[derive(Clone, Debug, Default)]
struct Piece {
    text: String,
    /// The line went on past [`LINE_CAP`]: the rest was dropped, so its
    /// end is as unfinished as a line still streaming.
    capped: bool,
}

impl Piece {
    fn push(&mut self, c: char) {
        if self.text.len() + c.len_utf8() <= LINE_CAP {
            self.text.push(c);
        } else {
            self.capped = true;
        }
    }

    fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }
}

/// The model's latest line, as it streams.
#[derive(Debug, Default)]
pub struct Said {
    /// The line being written in the current reply.
    line: Piece,
    /// The reply is complete: its last line is no longer being written.
    complete: bool,
    /// The last line the current reply finished that was not blank.
    finished: Option<Piece>,
    /// What was shown of the previous reply: kept until this one says
    /// something, so the editor is not left blank while the model thinks.
    before: Option<String>,
}

impl Said {
    /// A model call starts: its words replace the last reply's once it
    /// says something.
    pub fn new_reply(&mut self, redactor: &Redactor) {
        if let Some(shown) = self.shown(redactor) {
            self.before = Some(shown);
        }
        self.line = Piece::default();
        self.finished = None;
        self.complete = false;
    }

    /// The reply starts over (a retry): what it streamed so far is gone.
    pub fn restart(&mut self) {
        self.line = Piece::default();
        self.finished = None;
        self.complete = false;
    }

    /// A piece of the reply's text as it streams.
    pub fn push(&mut self, delta: &str) {
        self.complete = false;
        for c in delta.chars() {
            // A `\r` alone is no line break: it shows as a space (a
            // terminal would let it rewrite the line).
            if c == '\n' {
                let line = std::mem::take(&mut self.line);
                if !line.is_blank() {
                    self.finished = Some(line);
                }
            } else {
                self.line.push(c);
            }
        }
    }

    /// The whole text of the reply, once complete: it has the last word
    /// (a reply's text may differ from what streamed, after a retry).
    pub fn reply(&mut self, text: &str) {
        let mut last = Piece::default();
        if let Some(line) = text.lines().rev().find(|l| !l.trim().is_empty()) {
            for c in line.chars() {
                last.push(c);
            }
        }
        self.line = last;
        self.finished = None;
        self.complete = true;
    }

    /// The line to show: redacted, inert, bounded; a line still being
    /// written without its last word (it may be the start of a secret the
    /// next piece completes). `None` before the model said anything.
    pub fn shown(&self, redactor: &Redactor) -> Option<String> {
        let open = !self.complete || self.line.capped;
        if let Some(shown) = render(&self.line.text, open, redactor, MAX_SAID_CHARS) {
            return Some(shown);
        }
        if let Some(finished) = &self.finished
            && let Some(shown) = render(&finished.text, finished.capped, redactor, MAX_SAID_CHARS)
        {
            return Some(shown);
        }
        self.before.clone()
    }
}

/// A step as the editor shows it: redacted, inert, one line, bounded.
pub fn step(text: &str, redactor: &Redactor) -> String {
    render(text, false, redactor, MAX_STEP_CHARS).unwrap_or_default()
}

/// `text` made fit to show, `None` when nothing is left. `open`: its end
/// may still grow, so the word being written and the start of a known
/// secret there are held back.
fn render(text: &str, open: bool, redactor: &Redactor, max_chars: usize) -> Option<String> {
    // Redacted whole, before anything is cut, so a secret that crosses a
    // cut is still seen.
    let redacted = redactor.redact(text);
    let mut kept: &str = &redacted;
    if open {
        let held = redactor.unfinished(kept);
        kept = &kept[..kept.len() - held];
        // A word still being written is not shown: it may be a key whose
        // shape the redactor recognises only once more of it came.
        if !kept.ends_with(char::is_whitespace) {
            let word_start = kept
                .char_indices()
                .rev()
                .find(|(_, c)| c.is_whitespace())
                .map_or(0, |(at, c)| at + c.len_utf8());
            // A line cut at the cap that is one long word: its end is
            // held back instead, far past what is shown.
            let end = if word_start == 0 && kept.len() >= LINE_CAP / 2 {
                floor_char_boundary(kept, kept.len() - LINE_CAP / 4)
            } else {
                word_start
            };
            kept = &kept[..end];
        }
    }
    // One line: tabs, line separators and runs of spaces become one space.
    let flat = kept.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.is_empty() {
        return None;
    }
    let cut = |s: &str| -> String {
        if s.chars().count() <= max_chars {
            return s.to_owned();
        }
        let mut out: String = s.chars().take(max_chars.saturating_sub(1)).collect();
        out.truncate(out.trim_end().len());
        out.push('…');
        out
    };
    // Cut before escaping (an escape is several characters), and again
    // after, as escapes can make it longer.
    Some(cut(&inert::line(&cut(&flat))))
}

/// The largest char boundary of `s` at or before `at`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    (0..=at.min(s.len()))
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(said: &Said) -> Option<String> {
        said.shown(&Redactor::default())
    }

    #[test]
    fn the_latest_line_shows_as_it_streams_a_word_at_a_time() {
        let mut said = Said::default();
        assert_eq!(shown(&said), None);
        said.push("I'll run the fail");
        assert_eq!(shown(&said).as_deref(), Some("I'll run the"));
        said.push("ing test first.\n\n");
        assert_eq!(
            shown(&said).as_deref(),
            Some("I'll run the failing test first.")
        );
        said.push("Then cart");
        assert_eq!(shown(&said).as_deref(), Some("Then"));
        // The whole reply has the last word, every word of it.
        said.reply("I'll run the failing test first.\n\nThen cart.py.\n");
        assert_eq!(shown(&said).as_deref(), Some("Then cart.py."));
        // The next call shows the last words until it says something.
        said.new_reply(&Redactor::default());
        assert_eq!(shown(&said).as_deref(), Some("Then cart.py."));
        said.push("Now the tests ");
        assert_eq!(shown(&said).as_deref(), Some("Now the tests"));
        said.restart();
        assert_eq!(shown(&said).as_deref(), Some("Then cart.py."));
    }

    #[test]
    fn what_is_shown_is_one_inert_bounded_line() {
        let mut said = Said::default();
        said.reply("ok\x1b[2K\rfaked \u{202e}gnp.exe\u{202c}\tand\u{2028}more");
        expect_test::expect![[r#"ok\x1b[2K faked \u{202e}gnp.exe\u{202c} and more"#]]
            .assert_eq(&shown(&said).unwrap_or_default());
        let mut said = Said::default();
        said.reply(&"é".repeat(10_000));
        let long = shown(&said).unwrap_or_default();
        assert_eq!(long.chars().count(), MAX_SAID_CHARS);
        assert!(long.ends_with('…'));
        // A line that never ends is kept only so far, and cut the same way.
        let mut said = Said::default();
        for _ in 0..1000 {
            said.push(&"word ".repeat(100));
        }
        assert!(said.line.text.len() <= LINE_CAP);
        assert_eq!(
            shown(&said).unwrap_or_default().chars().count(),
            MAX_SAID_CHARS
        );
        assert_eq!(
            step(" running\ttests\n", &Redactor::default()),
            "running tests"
        );
    }

    #[test]
    fn a_secret_never_shows_not_even_its_start_while_it_streams() {
        let secret = "hunter2-correct-horse-battery";
        let redactor = Redactor::new([], [secret.to_owned()]);
        let mut said = Said::default();
        let text = format!("the token is {secret} and more");
        let mut streamed = String::new();
        for c in text.chars() {
            streamed.push(c);
            said.push(&c.to_string());
            let now = said.shown(&redactor).unwrap_or_default();
            // No piece of the secret (of 5 characters or more) shows.
            for start in 0..secret.len() - 5 {
                assert!(!now.contains(&secret[start..start + 5]), "{now:?}");
            }
        }
        said.reply(&text);
        assert_eq!(
            said.shown(&redactor).as_deref(),
            Some("the token is <redacted> and more")
        );
        // Key shapes too, and in the step.
        let key = "sk-ant-api03-abcdefghijklmnop0123456789";
        assert_eq!(
            step(&format!("reading {key}"), &Redactor::default()),
            "reading <redacted>"
        );
    }
}
