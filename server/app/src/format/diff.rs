//! Unified diffs of proposed and made edits, and [`paint_diff`], the only
//! place Rein adds colours of its own ([`Styled`]).

use rein_core::inert;
use similar::TextDiff;

/// A unified diff of `path` from `old` (`None`: the file did not exist) to
/// `new`, with three lines of context; empty when nothing changed. The
/// path is escaped ([`inert::line`]): a line break in it would fake the
/// diff's next line.
pub fn unified_diff(path: &str, old: Option<&str>, new: &str) -> String {
    let before = old.unwrap_or("");
    if old.is_some() && before == new {
        return String::new();
    }
    let path = inert::line(path);
    let from = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_owned()
    };
    TextDiff::from_lines(before, new)
        .unified_diff()
        .context_radius(3)
        .header(&from, &format!("b/{path}"))
        .to_string()
}

/// A deleted file, as a unified diff.
pub fn deletion_diff(path: &str, old: &str) -> String {
    TextDiff::from_lines(old, "")
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{}", inert::line(path)), "/dev/null")
        .to_string()
}

/// Text for the terminal with Rein's own colours: its untrusted content
/// was escaped before they were added. Only [`paint_diff`] makes one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Styled(String);

impl Styled {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// `diff` with each line's content escaped ([`inert::line`]), then, when
/// `color` is set, ANSI colours (headers bold, hunks cyan, removals red,
/// additions green). Line endings (`\n`, `\r\n`) stay as they are; a
/// line ending in a lone `\r` (similar ends lines there too) shows it
/// (`\\r`) and gets a line break of its own, so the next line cannot be
/// drawn over it.
pub fn paint_diff(diff: &str, color: bool) -> Styled {
    let mut out = String::with_capacity(diff.len() + diff.len() / 4);
    let mut rest = diff;
    while !rest.is_empty() {
        let (line, shown_end, end, next) = match rest.find(['\n', '\r']) {
            None => (rest, "", "", ""),
            Some(i) if rest[i..].starts_with("\r\n") => (&rest[..i], "", "\r\n", &rest[i + 2..]),
            Some(i) if rest[i..].starts_with('\n') => (&rest[..i], "", "\n", &rest[i + 1..]),
            Some(i) => (&rest[..i], "\\r", "\n", &rest[i + 1..]),
        };
        rest = next;
        let body = format!("{}{shown_end}", inert::line(line));
        let code = if !color {
            ""
        } else if body.starts_with("+++") || body.starts_with("---") {
            "1"
        } else if body.starts_with("@@") {
            "36"
        } else if body.starts_with('+') {
            "32"
        } else if body.starts_with('-') {
            "31"
        } else if body.starts_with('\\') {
            "2"
        } else {
            ""
        };
        if code.is_empty() {
            out.push_str(&body);
            out.push_str(end);
        } else {
            out.push_str(&format!("\x1b[{code}m{body}\x1b[0m{end}"));
        }
    }
    Styled(out)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn diffs_are_unified_and_coloured_only_on_request() {
        let old = "a\nb\nc\n";
        let new = "a\nB\nc\n";
        let diff = unified_diff("x.py", Some(old), new);
        assert_eq!(
            diff,
            "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!(paint_diff(&diff, false).as_str(), diff);
        let painted = paint_diff(&diff, true).0;
        assert!(painted.contains("\x1b[31m-b\x1b[0m\n"), "{painted:?}");
        assert!(painted.contains("\x1b[32m+B\x1b[0m\n"), "{painted:?}");
        assert!(painted.contains("\x1b[36m@@ -1,3 +1,3 @@\x1b[0m\n"));
        assert_eq!(unified_diff("x.py", Some(old), old), "");
        assert_eq!(
            unified_diff("n.py", None, "hi\n"),
            "--- /dev/null\n+++ b/n.py\n@@ -0,0 +1 @@\n+hi\n"
        );
        assert!(deletion_diff("d.py", "x\n").contains("+++ /dev/null"));
    }

    /// An added line that erases itself (`ESC[2K\r`) and draws the line a
    /// reviewer hopes for: its content is escaped before Rein colours it,
    /// the line similar ends at the `\r` gets a line break of its own, and
    /// a line break in a path cannot fake a header.
    #[test]
    fn a_diff_line_with_escape_sequences_is_escaped_before_it_is_coloured() {
        let diff = unified_diff(
            "x.py\n+++ b/fake.py",
            Some("a\r\nb\r\n"),
            "a\r\nb # \x1b[2K\r+fixed\r\n",
        );
        let painted = paint_diff(&diff, true);
        // ␛ is Rein's ESC, ␍ a CR of a CRLF line ending.
        let shown = painted.as_str().replace('\x1b', "␛").replace('\r', "␍");
        expect_test::expect![[r#"
            ␛[1m--- a/x.py\n+++ b/fake.py␛[0m
            ␛[1m+++ b/x.py\n+++ b/fake.py␛[0m
            ␛[36m@@ -1,2 +1,3 @@␛[0m
             a␍
            ␛[31m-b␛[0m␍
            ␛[32m+b # \x1b[2K\r␛[0m
            ␛[32m++fixed␛[0m␍
        "#]]
        .assert_eq(&shown);
        assert_eq!(
            paint_diff(&diff, false).as_str(),
            "--- a/x.py\\n+++ b/fake.py\n+++ b/x.py\\n+++ b/fake.py\n@@ -1,2 +1,3 @@\n a\r\n-b\r\n+b # \\x1b[2K\\r\n++fixed\r\n"
        );
    }
}
