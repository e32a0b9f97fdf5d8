//! A diagnostic as an editor hands it to Rein (an LSP `Diagnostic` of
//! another language server, from `textDocument/codeAction`'s context), in
//! Rein's own plain terms, and a checker's report of one.
//!
//! The text of both comes from outside (another server, a checker reading
//! the repository): it is bounded and stripped of control characters
//! before it is quoted to the model or the user.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A message longer than this is cut (a checker's explanation can run to
/// pages; the first lines say what is wrong).
const MAX_MESSAGE_CHARS: usize = 2_000;
/// A source or code longer than this is no checker's name.
const MAX_NAME_CHARS: usize = 200;

/// A diagnostic the user asks Rein to fix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    /// Where, as the editor sent it: 0-based lines; the characters are in
    /// the editor's unit and only shown, never matched.
    pub range: Range,
    pub severity: Severity,
    /// Who reported it (`Pylance`, `mypy`, `rustc`, `rust-analyzer`,
    /// `ts`, `eslint`, `Ruff`…): decides the checker.
    pub source: Option<String>,
    /// Its code, as text (`reportArgumentType`, `arg-type`, `E0308`,
    /// `2322`, `F401`, `no-unused-vars`).
    pub code: Option<String>,
    pub message: String,
}

/// A span of lines and characters, 0-based as in LSP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

/// How bad, most severe first (the order is used: `Error < Warning`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    pub fn word(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "information",
            Severity::Hint => "hint",
        }
    }
}

/// Why a diagnostic cannot be taken as a task.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadDiagnostic {
    #[error("the diagnostic's file `{0}` is not a path inside the workspace")]
    Path(String),
    #[error("the diagnostic has no message")]
    NoMessage,
}

impl Diagnostic {
    /// The diagnostic with its texts made safe to quote: control and
    /// invisible characters dropped, lengths bounded, the path checked
    /// (relative, no `..`, no empty part).
    pub fn cleaned(mut self) -> Result<Self, BadDiagnostic> {
        let path = self.path.trim().trim_start_matches("./").to_owned();
        let plain = !path.is_empty()
            && !path.starts_with('/')
            && !path.contains('\\')
            && path
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..")
            && !path.chars().any(crate::inert::disguises);
        if !plain {
            return Err(BadDiagnostic::Path(crate::inert::shown(&self.path)));
        }
        self.path = path;
        self.message = clean(&self.message, MAX_MESSAGE_CHARS, true);
        if self.message.trim().is_empty() {
            return Err(BadDiagnostic::NoMessage);
        }
        let name = |text: Option<String>| {
            text.map(|t| clean(&t, MAX_NAME_CHARS, false))
                .filter(|t| !t.trim().is_empty())
        };
        self.source = name(self.source.take());
        self.code = name(self.code.take());
        if self.range.end.line < self.range.start.line {
            self.range.end = self.range.start;
        }
        Ok(self)
    }

    /// The line, 1-based, as people and checkers count.
    pub fn line(&self) -> u32 {
        self.range.start.line.saturating_add(1)
    }

    /// `app.py:7`.
    pub fn place(&self) -> String {
        format!("{}:{}", self.path, self.line())
    }

    /// The first line of the message.
    pub fn headline(&self) -> &str {
        self.message.lines().next().unwrap_or_default().trim()
    }

    /// "error [arg-type] from mypy", for the goal and the title.
    pub fn label(&self) -> String {
        let mut out = self.severity.word().to_owned();
        if let Some(code) = &self.code {
            out.push_str(&format!(" [{code}]"));
        }
        if let Some(source) = &self.source {
            out.push_str(&format!(" from {source}"));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    /// `app.py:7: error [arg-type] from mypy: Argument 1 …` (first line).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.place(), self.label(), self.headline())
    }
}

/// A diagnostic as a checker reported it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reported {
    /// Workspace-relative, `/`-separated (absolute when outside it).
    pub path: String,
    /// 1-based.
    pub line: u32,
    /// 1-based; 0 when the checker gives none.
    pub column: u32,
    /// 1-based, at least `line`.
    pub end_line: u32,
    pub severity: Severity,
    pub code: Option<String>,
    pub message: String,
}

impl Reported {
    /// The first line of the message.
    pub fn headline(&self) -> &str {
        self.message.lines().next().unwrap_or_default().trim()
    }
}

impl fmt::Display for Reported {
    /// `app.py:7: error [arg-type]: Argument 1 …` (first line).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.line, self.severity.word())?;
        if let Some(code) = &self.code {
            write!(f, " [{code}]")?;
        }
        write!(f, ": {}", self.headline())
    }
}

/// `text` without control or invisible characters (line breaks kept when
/// `lines`), at most `max` characters ("…" where cut).
pub(crate) fn clean(text: &str, max: usize, lines: bool) -> String {
    let mut out = String::new();
    for (n, c) in text
        .chars()
        .filter(|c| (lines && *c == '\n') || !crate::inert::disguises(*c))
        .enumerate()
    {
        if n == max {
            out.push('…');
            break;
        }
        out.push(c);
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(path: &str, message: &str) -> Diagnostic {
        Diagnostic {
            path: path.into(),
            range: Range {
                start: Position {
                    line: 6,
                    character: 10,
                },
                end: Position {
                    line: 2,
                    character: 0,
                },
            },
            severity: Severity::Error,
            source: Some("mypy\u{202e}".into()),
            code: Some(String::new()),
            message: message.into(),
        }
    }

    #[test]
    fn a_diagnostic_is_quoted_cleaned_and_bounded() {
        let d = diagnostic("./app.py", "Argument 1 \u{1b}[2Khas\r type\nnote: more")
            .cleaned()
            .unwrap();
        assert_eq!(d.path, "app.py");
        assert_eq!(d.source.as_deref(), Some("mypy"));
        assert_eq!(d.code, None, "an empty code is no code");
        assert_eq!(d.range.end, d.range.start, "a backwards range is clamped");
        assert_eq!(
            d.to_string(),
            "app.py:7: error from mypy: Argument 1 [2Khas type"
        );
        let long = diagnostic("a.py", &"x".repeat(5_000)).cleaned().unwrap();
        assert_eq!(long.message.chars().count(), MAX_MESSAGE_CHARS + 1);
    }

    /// Attack: an editor (or the server behind it) names a file outside
    /// the workspace; it never becomes a task.
    #[test]
    fn a_path_outside_the_workspace_is_refused() {
        for path in [
            "/etc/passwd",
            "../x.py",
            "a/../../x.py",
            "",
            "a//b.py",
            "a\\b.py",
        ] {
            assert!(
                matches!(diagnostic(path, "m").cleaned(), Err(BadDiagnostic::Path(_))),
                "{path:?}"
            );
        }
        assert_eq!(
            diagnostic("a.py", " \u{7} ").cleaned(),
            Err(BadDiagnostic::NoMessage)
        );
    }
}
