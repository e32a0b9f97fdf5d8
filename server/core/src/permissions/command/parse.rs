//! The tokenizer and parser: [`parse`] splits a command line into the
//! simple commands a POSIX shell would run. What it understands:
//!
//! - separators `;`, `&`, `&&`, `||`, `|`, `|&`, newlines, `(`/`)`
//!   subshells and `{ …; }` groups; a command after `|` is marked
//!   [`SimpleCommand::piped_into`] (so is one whose input is redirected:
//!   `sh <<EOF` runs the here-document);
//! - quoting: `'…'`, `"…"` (with `\` escapes), `$'…'`, backslashes,
//!   line continuations; quotes are removed from the words;
//! - command substitutions `$(…)` and `` `…` `` (also inside double quotes
//!   and `${…}`), process substitutions `<(…)` / `>(…)`, arithmetic
//!   `$((…))`: the commands inside are parsed (recursively) and checked too;
//! - redirections (`>`, `>>`, `2>&1`, `&>`, `<`, here-strings, here-docs,
//!   whose unquoted bodies are scanned for substitutions): they are not
//!   words; output redirected to a file is recorded in
//!   [`SimpleCommand::writes`], bash's network paths (`/dev/tcp/…`) in
//!   [`SimpleCommand::sockets`];
//! - comments (`#` at the start of a word);
//! - reserved words at the start of a command (`if`, `then`, `while`, `do`,
//!   `!`, …) are skipped, `for …`/`case …`/`function …` headers are no
//!   commands (their substitutions still are).
//!
//! When a command cannot be parsed (an unbalanced quote, a `$(` without its
//! `)`), what was parsed before the problem is still returned, with
//! [`Script::error`] set; the policy then answers at least `ask`.

/// How deeply substitutions and `sh -c` bodies may nest.
pub(super) const MAX_DEPTH: usize = 16;

/// One word of a simple command, after quote removal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Word {
    pub text: String,
    /// Contains an expansion (`$x`, `$(…)`, `` `…` ``) or an unquoted glob:
    /// its value is only known when the shell runs it.
    pub dynamic: bool,
    /// Contained a quote or a backslash.
    pub quoted: bool,
}

/// A command with its arguments, as the shell would start it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    pub words: Vec<Word>,
    /// Files that output is redirected to (not `/dev/null` or a file descriptor).
    pub writes: Vec<String>,
    /// Redirections to or from `/dev/tcp/…` or `/dev/udp/…` (bash opens a
    /// network connection).
    pub sockets: Vec<String>,
    /// Its standard input comes from a pipe (`… | this`) or a redirection
    /// (`< file`, `<<EOF`, `<<< text`).
    pub piped_into: bool,
}

/// A parsed command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Script {
    /// Every simple command, including those in substitutions (which come
    /// before the command they are part of).
    pub commands: Vec<SimpleCommand>,
    /// Why parsing stopped early, for the model.
    pub error: Option<String>,
}

/// Parses a command line.
pub(crate) fn parse(src: &str) -> Script {
    parse_at(src, 0)
}

pub(super) fn parse_at(src: &str, depth: usize) -> Script {
    let mut parser = Parser::new(src, depth);
    if depth > MAX_DEPTH {
        parser.error = Some("substitutions are nested too deeply".into());
    } else {
        parser.run();
    }
    Script {
        commands: parser.commands,
        error: parser.error,
    }
}

struct Heredoc {
    delimiter: String,
    strip_tabs: bool,
    expand: bool,
}

/// What ends a simple command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sep {
    /// `;`, `&`, `&&`, `||`, newline, `)`.
    Seq,
    /// `|`, `|&`: the next command reads this one's output.
    Pipe,
    /// `(`, `{`: the commands inside inherit a pending pipe.
    Group,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    commands: Vec<SimpleCommand>,
    error: Option<String>,
    /// The command being read gets its input from a pipe.
    piped: bool,
    heredocs: Vec<Heredoc>,
}

impl Parser {
    fn new(src: &str, depth: usize) -> Self {
        Self {
            chars: src.chars().collect(),
            pos: 0,
            depth,
            commands: Vec::new(),
            error: None,
            piped: false,
            heredocs: Vec::new(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn fail(&mut self, message: &str) {
        if self.error.is_none() {
            self.error = Some(message.to_owned());
        }
    }

    fn run(&mut self) {
        let mut cur = SimpleCommand::default();
        while self.error.is_none() {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            match c {
                '\n' => {
                    self.pos += 1;
                    self.finish(&mut cur, Sep::Seq);
                    self.read_heredocs();
                }
                ';' => {
                    self.pos += 1;
                    self.finish(&mut cur, Sep::Seq);
                }
                '&' => match self.peek_at(1) {
                    Some('&') => {
                        self.pos += 2;
                        self.finish(&mut cur, Sep::Seq);
                    }
                    Some('>') => self.redirect(&mut cur),
                    _ => {
                        self.pos += 1;
                        self.finish(&mut cur, Sep::Seq);
                    }
                },
                '|' => {
                    if self.peek_at(1) == Some('|') {
                        self.pos += 2;
                        self.finish(&mut cur, Sep::Seq);
                    } else {
                        self.pos += 1;
                        if self.peek() == Some('&') {
                            self.pos += 1;
                        }
                        self.finish(&mut cur, Sep::Pipe);
                    }
                }
                '(' => {
                    self.pos += 1;
                    self.finish(&mut cur, Sep::Group);
                }
                ')' => {
                    self.pos += 1;
                    self.finish(&mut cur, Sep::Seq);
                }
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    let mut word = Word::default();
                    self.pos += 1;
                    self.substitution(&mut word, c);
                    cur.words.push(word);
                }
                '<' | '>' => self.redirect(&mut cur),
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => {
                    let word = self.word();
                    let is_fd = !word.quoted
                        && !word.text.is_empty()
                        && word.text.chars().all(|c| c.is_ascii_digit())
                        && matches!(self.peek(), Some('<' | '>'));
                    if is_fd {
                        self.redirect(&mut cur);
                    } else if !word.quoted && word.text == "{" {
                        self.finish(&mut cur, Sep::Group);
                    } else if !word.quoted && word.text == "}" && cur.words.is_empty() {
                        // The end of a `{ …; }` group.
                    } else if !word.text.is_empty() || word.quoted || word.dynamic {
                        cur.words.push(word);
                    }
                }
            }
        }
        self.finish(&mut cur, Sep::Seq);
    }

    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => self.pos += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.pos += 2,
                _ => break,
            }
        }
    }

    fn finish(&mut self, cur: &mut SimpleCommand, sep: Sep) {
        let empty = cur.words.is_empty() && cur.writes.is_empty() && cur.sockets.is_empty();
        if !empty {
            let mut command = std::mem::take(cur);
            command.piped_into |= self.piped;
            strip_reserved_words(&mut command);
            if !command.words.is_empty()
                || !command.writes.is_empty()
                || !command.sockets.is_empty()
            {
                self.commands.push(command);
            }
        }
        self.piped = match sep {
            Sep::Pipe => true,
            Sep::Group => self.piped && empty,
            Sep::Seq => false,
        };
    }

    /// Reads one word, up to an unquoted blank or operator.
    fn word(&mut self) -> Word {
        let mut word = Word::default();
        let mut open_bracket = false;
        while let Some(c) = self.peek() {
            if self.error.is_some() {
                break;
            }
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        None => word.text.push('\\'),
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            word.text.push(next);
                            word.quoted = true;
                            self.pos += 1;
                        }
                    }
                }
                '\'' => {
                    self.pos += 1;
                    word.quoted = true;
                    match self.chars[self.pos..].iter().position(|&c| c == '\'') {
                        Some(len) => {
                            word.text.extend(&self.chars[self.pos..self.pos + len]);
                            self.pos += len + 1;
                        }
                        None => self.fail("it has an unbalanced single quote (')"),
                    }
                }
                '"' => {
                    self.pos += 1;
                    word.quoted = true;
                    self.double_quoted(&mut word);
                }
                '$' => self.dollar(&mut word),
                '`' => self.backtick(&mut word),
                '*' | '?' => {
                    word.dynamic = true;
                    word.text.push(c);
                    self.pos += 1;
                }
                '[' => {
                    open_bracket = true;
                    word.text.push(c);
                    self.pos += 1;
                }
                ']' => {
                    word.dynamic |= open_bracket;
                    word.text.push(c);
                    self.pos += 1;
                }
                _ => {
                    word.text.push(c);
                    self.pos += 1;
                }
            }
        }
        word
    }

    /// After the opening `"`.
    fn double_quoted(&mut self, word: &mut Word) {
        loop {
            match self.peek() {
                None => {
                    self.fail("it has an unbalanced double quote (\")");
                    return;
                }
                Some('"') => {
                    self.pos += 1;
                    return;
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(c @ ('$' | '`' | '"' | '\\')) => {
                            word.text.push(c);
                            self.pos += 1;
                        }
                        _ => word.text.push('\\'),
                    }
                }
                Some('$') => self.dollar(word),
                Some('`') => self.backtick(word),
                Some(c) => {
                    word.text.push(c);
                    self.pos += 1;
                }
            }
            if self.error.is_some() {
                return;
            }
        }
    }

    /// At a `$`.
    fn dollar(&mut self, word: &mut Word) {
        self.pos += 1;
        match self.peek() {
            Some('(') => self.substitution(word, '$'),
            Some('{') => {
                let open = self.pos;
                match find_closing(&self.chars, open, '{', '}') {
                    Some(close) => {
                        let inner: String = self.chars[open + 1..close].iter().collect();
                        self.scan_text(&inner);
                        word.text.push('$');
                        word.text.extend(&self.chars[open..=close]);
                        word.dynamic = true;
                        self.pos = close + 1;
                    }
                    None => self.fail("it has a `${` without its `}`"),
                }
            }
            Some('\'') => {
                self.pos += 1;
                word.quoted = true;
                self.ansi_c_quoted(word);
            }
            Some('"') => {
                self.pos += 1;
                word.quoted = true;
                self.double_quoted(word);
            }
            Some(c) if c.is_ascii_alphanumeric() || c == '_' => {
                word.text.push('$');
                word.dynamic = true;
                if c.is_ascii_digit() {
                    word.text.push(c);
                    self.pos += 1;
                } else {
                    while let Some(c) = self
                        .peek()
                        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                    {
                        word.text.push(c);
                        self.pos += 1;
                    }
                }
            }
            Some(c @ ('@' | '*' | '#' | '?' | '-' | '$' | '!')) => {
                word.text.push('$');
                word.text.push(c);
                word.dynamic = true;
                self.pos += 1;
            }
            _ => word.text.push('$'),
        }
    }

    /// At the `(` of `$(`, `<(` or `>(`: parses the inside as commands.
    fn substitution(&mut self, word: &mut Word, sigil: char) {
        let open = self.pos;
        let Some(close) = find_closing(&self.chars, open, '(', ')') else {
            self.fail(&format!("it has a `{sigil}(` without its `)`"));
            return;
        };
        let inner: String = self.chars[open + 1..close].iter().collect();
        let arithmetic = sigil == '$'
            && inner.starts_with('(')
            && inner.ends_with(')')
            && find_closing(&self.chars, open + 1, '(', ')') == Some(close - 1);
        if arithmetic {
            self.scan_text(&inner);
        } else {
            self.nested(&inner);
        }
        word.text.push(sigil);
        word.text.extend(&self.chars[open..=close]);
        word.dynamic = true;
        self.pos = close + 1;
    }

    /// At a backtick.
    fn backtick(&mut self, word: &mut Word) {
        self.pos += 1;
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => {
                    self.fail("it has an unbalanced backtick (`)");
                    return;
                }
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(c @ ('`' | '\\' | '$')) => {
                            inner.push(c);
                            self.pos += 1;
                        }
                        _ => inner.push('\\'),
                    }
                }
                Some(c) => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        self.nested(&inner);
        word.text.push('`');
        word.text.push_str(&inner);
        word.text.push('`');
        word.dynamic = true;
    }

    /// After `$'`: bash's ANSI-C quoting.
    fn ansi_c_quoted(&mut self, word: &mut Word) {
        loop {
            match self.peek() {
                None => {
                    self.fail("it has an unbalanced $'…' quote");
                    return;
                }
                Some('\'') => {
                    self.pos += 1;
                    return;
                }
                Some('\\') => {
                    self.pos += 1;
                    let Some(c) = self.peek() else { continue };
                    self.pos += 1;
                    word.text.push(match c {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'a' => '\x07',
                        'b' => '\x08',
                        'e' | 'E' => '\x1b',
                        'v' => '\x0b',
                        'f' => '\x0c',
                        other => other,
                    });
                }
                Some(c) => {
                    word.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// At `<`, `>`, `&>` (a file-descriptor number already read).
    fn redirect(&mut self, cur: &mut SimpleCommand) {
        let op: String = self.chars[self.pos..].iter().take(3).collect::<String>();
        let (len, kind) = if op.starts_with("<<<") {
            (3, Redir::HereString)
        } else if op.starts_with("<<-") {
            (3, Redir::Heredoc { strip_tabs: true })
        } else if op.starts_with("<<") {
            (2, Redir::Heredoc { strip_tabs: false })
        } else if op.starts_with("<&") || op.starts_with(">&") {
            (2, Redir::Dup)
        } else if op.starts_with("<>") {
            (2, Redir::Write)
        } else if op.starts_with('<') {
            (1, Redir::Read)
        } else if op.starts_with("&>>") {
            (3, Redir::Write)
        } else if op.starts_with("&>") || op.starts_with(">>") || op.starts_with(">|") {
            (2, Redir::Write)
        } else {
            (1, Redir::Write)
        };
        self.pos += len;
        self.skip_blanks();
        let target = self.word();
        if self.error.is_some() {
            return;
        }
        if target.text.is_empty() && !target.quoted {
            self.fail("it has a redirection without a target");
            return;
        }
        if target.text.starts_with("/dev/tcp/") || target.text.starts_with("/dev/udp/") {
            cur.sockets.push(target.text.clone());
        }
        if matches!(
            kind,
            Redir::Read | Redir::HereString | Redir::Heredoc { .. }
        ) {
            cur.piped_into = true;
        }
        match kind {
            Redir::Heredoc { strip_tabs } => self.heredocs.push(Heredoc {
                delimiter: target.text,
                strip_tabs,
                expand: !target.quoted,
            }),
            Redir::Dup => {
                let is_fd = target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit());
                if !is_fd && op.starts_with('>') {
                    // `>&file` is `&>file`.
                    record_write(cur, target.text);
                }
            }
            Redir::Write => record_write(cur, target.text),
            Redir::Read | Redir::HereString => {}
        }
    }

    /// After the newline ending a line with here-documents: skips their bodies.
    fn read_heredocs(&mut self) {
        for doc in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            while self.pos < self.chars.len() {
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |n| self.pos + n);
                let line: String = self.chars[self.pos..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                let candidate = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if candidate == doc.delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if doc.expand {
                self.scan_text(&body);
            }
        }
    }

    /// Finds the substitutions in text that is not shell syntax (a
    /// here-document body, `${…}`, arithmetic) and parses them.
    fn scan_text(&mut self, text: &str) {
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() && self.error.is_none() {
            match chars[i] {
                '\\' => i += 2,
                '$' if chars.get(i + 1) == Some(&'(') => {
                    match find_closing(&chars, i + 1, '(', ')') {
                        Some(close) => {
                            let inner: String = chars[i + 2..close].iter().collect();
                            if inner.starts_with('(') && inner.ends_with(')') {
                                self.scan_text(&inner);
                            } else {
                                self.nested(&inner);
                            }
                            i = close + 1;
                        }
                        None => {
                            self.fail("it has a `$(` without its `)`");
                            return;
                        }
                    }
                }
                '`' => {
                    let Some(len) = chars[i + 1..].iter().position(|&c| c == '`') else {
                        self.fail("it has an unbalanced backtick (`)");
                        return;
                    };
                    let inner: String = chars[i + 1..i + 1 + len].iter().collect();
                    self.nested(&inner);
                    i += len + 2;
                }
                _ => i += 1,
            }
        }
    }

    fn nested(&mut self, src: &str) {
        let script = parse_at(src, self.depth + 1);
        self.commands.extend(script.commands);
        if let Some(error) = script.error {
            self.fail(&error);
        }
    }
}

enum Redir {
    Read,
    Write,
    Dup,
    HereString,
    Heredoc { strip_tabs: bool },
}

fn record_write(cur: &mut SimpleCommand, target: String) {
    if !matches!(
        target.as_str(),
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    ) {
        cur.writes.push(target);
    }
}

/// The index of the bracket closing the one at `open`, skipping quoted
/// text, escapes and nested substitutions.
fn find_closing(chars: &[char], open: usize, left: char, right: char) -> Option<usize> {
    find_closing_at(chars, open, left, right, 0)
}

fn find_closing_at(
    chars: &[char],
    open: usize,
    left: char,
    right: char,
    nesting: usize,
) -> Option<usize> {
    if nesting > 4 * MAX_DEPTH {
        return None;
    }
    let mut depth = 0usize;
    let mut i = open;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                i += 2;
                continue;
            }
            '\'' => {
                i += 1 + chars.get(i + 1..)?.iter().position(|&c| c == '\'')?;
            }
            '"' => i = skip_double_quoted(chars, i, nesting + 1)?,
            '`' => {
                i += 1 + chars.get(i + 1..)?.iter().position(|&c| c == '`')?;
            }
            '$' if chars.get(i + 1) == Some(&'(') && left != '(' => {
                i = find_closing_at(chars, i + 1, '(', ')', nesting + 1)?;
            }
            c if c == left => depth += 1,
            c if c == right => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// From the opening `"` at `open`, the index of the closing one.
fn skip_double_quoted(chars: &[char], open: usize, nesting: usize) -> Option<usize> {
    let mut i = open + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '"' => return Some(i),
            '$' if chars.get(i + 1) == Some(&'(') => {
                i = find_closing_at(chars, i + 1, '(', ')', nesting + 1)?;
            }
            '`' => i += 1 + chars.get(i + 1..)?.iter().position(|&c| c == '`')?,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Words that start a compound command or a pipeline rather than name a
/// program, and headers that run nothing themselves.
fn strip_reserved_words(command: &mut SimpleCommand) {
    let skip = command
        .words
        .iter()
        .take_while(|w| {
            !w.quoted
                && matches!(
                    w.text.as_str(),
                    "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!"
                )
        })
        .count();
    command.words.drain(..skip);
    let header = command.words.first().is_some_and(|w| {
        !w.quoted
            && matches!(
                w.text.as_str(),
                "fi" | "done" | "esac" | "}" | "for" | "select" | "case" | "function"
            )
    });
    if header {
        command.words.clear();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Each simple command as its words joined with `·`, `|` in front when
    /// piped into, `>file` after for each write.
    fn split(src: &str) -> Vec<String> {
        let script = parse(src);
        assert_eq!(script.error, None, "{src}");
        show(&script)
    }

    fn show(script: &Script) -> Vec<String> {
        script
            .commands
            .iter()
            .map(|c| {
                let mut s = String::new();
                if c.piped_into {
                    s.push_str("| ");
                }
                s.push_str(
                    &c.words
                        .iter()
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join("·"),
                );
                for w in &c.writes {
                    s.push_str(&format!(" >{w}"));
                }
                s
            })
            .collect()
    }

    #[test]
    fn separators() {
        for (src, want) in [
            ("cargo test", vec!["cargo·test"]),
            ("  cargo   test  --lib ", vec!["cargo·test·--lib"]),
            ("a; b", vec!["a", "b"]),
            ("a && b || c", vec!["a", "b", "c"]),
            ("a & b", vec!["a", "b"]),
            ("a | b |& c", vec!["a", "| b", "| c"]),
            ("a\nb\n\n", vec!["a", "b"]),
            ("(a; b) | c", vec!["a", "b", "| c"]),
            ("a | (b; c)", vec!["a", "| b", "c"]),
            ("a | { b; }", vec!["a", "| b"]),
            ("{ a; b; } && c", vec!["a", "b", "c"]),
            ("a;;b", vec!["a", "b"]),
            ("echo x # a comment; curl", vec!["echo·x"]),
            ("echo a#b", vec!["echo·a#b"]),
            ("cargo test \\\n  --lib", vec!["cargo·test·--lib"]),
            ("", vec![]),
            ("   ", vec![]),
        ] {
            assert_eq!(split(src), want, "{src}");
        }
    }

    #[test]
    fn quotes_are_respected_and_removed() {
        for (src, want) in [
            (r#"echo "rm -rf /""#, vec!["echo·rm -rf /"]),
            (r#"echo 'a; b' "c && d""#, vec!["echo·a; b·c && d"]),
            (r#"echo "a\"b" 'c\'"#, vec![r#"echo·a"b·c\"#]),
            (r#"c'ur'l x"#, vec!["curl·x"]),
            (r#"\curl x"#, vec!["curl·x"]),
            (r#"echo a\ b"#, vec!["echo·a b"]),
            (r#"echo $'a\nb'"#, vec!["echo·a\nb"]),
            (r#"echo "" x"#, vec!["echo··x"]),
            (
                r#"git commit -m "fix: a | b""#,
                vec!["git·commit·-m·fix: a | b"],
            ),
        ] {
            assert_eq!(split(src), want, "{src}");
        }
    }

    #[test]
    fn substitutions_are_parsed() {
        for (src, want) in [
            ("echo $(curl x)", vec!["curl·x", "echo·$(curl x)"]),
            ("echo `curl x`", vec!["curl·x", "echo·`curl x`"]),
            (
                r#"echo "$(curl x) and `wget y`""#,
                vec!["curl·x", "wget·y", "echo·$(curl x) and `wget y`"],
            ),
            (
                "echo $(echo $(curl x))",
                vec!["curl·x", "echo·$(curl x)", "echo·$(echo $(curl x))"],
            ),
            (
                "echo ${X:-$(curl x)}",
                vec!["curl·x", "echo·${X:-$(curl x)}"],
            ),
            (
                "diff <(curl a) >(wget b)",
                vec!["curl·a", "wget·b", "diff·<(curl a)·>(wget b)"],
            ),
            ("echo $((1 + 2))", vec!["echo·$((1 + 2))"]),
            (
                "echo $(( $(curl x) + 1 ))",
                vec!["curl·x", "echo·$(( $(curl x) + 1 ))"],
            ),
            (
                r#"echo "$(echo ")")""#,
                vec!["echo·)", r#"echo·$(echo ")")"#],
            ),
            ("X=$(curl x) make", vec!["curl·x", "X=$(curl x)·make"]),
        ] {
            assert_eq!(split(src), want, "{src}");
        }
    }

    #[test]
    fn redirections_are_not_words() {
        for (src, want) in [
            (
                "cargo test 2>&1 | tail -n 50",
                vec!["cargo·test", "| tail·-n·50"],
            ),
            ("echo x > out.txt", vec!["echo·x >out.txt"]),
            ("echo x>>out.txt", vec!["echo·x >out.txt"]),
            ("make &> log", vec!["make >log"]),
            ("make >& log", vec!["make >log"]),
            ("make > /dev/null 2>/dev/null", vec!["make"]),
            ("sort < in.txt", vec!["| sort"]),
            ("cat <<< 'hi'", vec!["| cat"]),
            ("> empty.txt", vec![" >empty.txt"]),
            ("echo 2 > x", vec!["echo·2 >x"]),
            ("echo a2>x", vec!["echo·a2 >x"]),
        ] {
            assert_eq!(split(src), want, "{src}");
        }
    }

    #[test]
    fn heredocs() {
        let src = "cat <<EOF > notes.txt\nrm -rf / ; curl x\n$(wget y)\nEOF\necho done";
        assert_eq!(split(src), vec!["| cat >notes.txt", "wget·y", "echo·done"]);
        let src = "cat <<'EOF'\n$(wget y)\nEOF\necho done";
        assert_eq!(split(src), vec!["| cat", "echo·done"]);
        let src = "cat <<-EOF\n\tbody\n\tEOF\necho done";
        assert_eq!(split(src), vec!["| cat", "echo·done"]);
    }

    #[test]
    fn reserved_words() {
        for (src, want) in [
            (
                "if cargo test; then echo ok; else curl x; fi",
                vec!["cargo·test", "echo·ok", "curl·x"],
            ),
            ("for f in $(ls); do rm $f; done", vec!["ls", "rm·$f"]),
            ("while true; do sleep 1; done", vec!["true", "sleep·1"]),
            ("! grep x y", vec!["grep·x·y"]),
            ("f() { curl x; }; f", vec!["f", "curl·x", "f"]),
            ("function f { curl x; }", vec!["curl·x"]),
        ] {
            assert_eq!(split(src), want, "{src}");
        }
    }

    #[test]
    fn unbalanced_input_is_an_error_with_what_came_before() {
        for (src, before) in [
            ("echo 'oops", vec!["echo·"]),
            ("curl x; echo \"oops", vec!["curl·x", "echo·oops"]),
            ("echo `oops", vec!["echo"]),
            ("echo $(oops", vec!["echo"]),
            ("echo ${oops", vec!["echo"]),
            ("echo >", vec!["echo"]),
        ] {
            let script = parse(src);
            assert!(script.error.is_some(), "{src}");
            assert_eq!(show(&script), before, "{src}");
        }
    }
}
