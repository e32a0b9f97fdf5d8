//! The common text form, `path:line[:col]: [severity[code]:] message`:
//! go vet and the Go compiler (`./a.go:3:2: undefined: x`, or with a
//! `vet: ` prefix), gcc and clang (`a.c:3:5: error: …`), flake8 and most
//! linters (`a.py:1:1: F401 'os' imported but unused`). Lines of any
//! other shape are left out: this format cannot tell a broken run from a
//! clean one, so it is for a configured `check_command`, the user's word.

use super::tidy;
use crate::diagnostics::diagnostic::{Reported, Severity};

pub(super) fn read(stdout: &str) -> Vec<Reported> {
    stdout.lines().filter_map(line).collect()
}

fn line(text: &str) -> Option<Reported> {
    let text = text.strip_prefix("vet: ").unwrap_or(text).trim_end();
    // The first `:<digits>` ends the path (a path may hold colons too).
    let mut search = 0;
    let (path, rest) = loop {
        let at = search + text[search..].find(':')?;
        let after = &text[at + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if at > 0 && digits > 0 && after[digits..].starts_with(':') {
            break (&text[..at], after);
        }
        search = at + 1;
    };
    let (row, rest) = rest.split_once(':')?;
    let row: u32 = row.parse().ok()?;
    let (column, rest) = match rest.split_once(':') {
        Some((col, tail)) if !col.is_empty() && col.bytes().all(|b| b.is_ascii_digit()) => {
            (col.parse().unwrap_or(0), tail)
        }
        _ => (0, rest),
    };
    let rest = rest.trim_start();
    let (severity, code, message) = severity_and_code(rest);
    if message.is_empty() {
        return None;
    }
    Some(Reported {
        path: tidy(path),
        line: row.max(1),
        column,
        end_line: row.max(1),
        severity,
        code,
        message: message.to_owned(),
    })
}

/// `error: m`, `error[E1]: m`, `warning: m`, `F401 m`, or just `m`.
fn severity_and_code(rest: &str) -> (Severity, Option<String>, &str) {
    for (word, severity) in [
        ("error", Severity::Error),
        ("fatal error", Severity::Error),
        ("warning", Severity::Warning),
        ("note", Severity::Information),
    ] {
        if let Some(tail) = rest.strip_prefix(word) {
            if let Some(message) = tail.strip_prefix(": ") {
                return (severity, None, message.trim());
            }
            if let Some((code, message)) = tail.strip_prefix('[').and_then(|t| t.split_once("]: "))
            {
                return (severity, Some(code.to_owned()), message.trim());
            }
        }
    }
    // A linter's code first: letters then digits (F401, E501, SA1000).
    if let Some((first, message)) = rest.split_once(' ') {
        let letters = first.bytes().take_while(u8::is_ascii_uppercase).count();
        let digits = first[letters..].bytes().all(|b| b.is_ascii_digit());
        if (1..=4).contains(&letters) && letters < first.len() && digits {
            return (Severity::Error, Some(first.to_owned()), message.trim());
        }
    }
    (Severity::Error, None, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Through the format's reader, at the root `/w`.
    fn parsed(stdout: &str) -> Result<Vec<Reported>, String> {
        super::super::read(
            super::super::Format::Lines,
            super::super::Output {
                stdout,
                exit_code: Some(1),
                root: std::path::Path::new("/w"),
                dir: "",
            },
        )
    }

    #[test]
    fn the_common_shapes_are_read() {
        let out = "# example.com/app
vet: ./main.go:6:2: undefined: fmtx
./util.go:12:5: fmt.Printf format %d has arg s of wrong type string
src/a.c:3:5: error: use of undeclared identifier 'y'
src/a.c:9:1: warning[unused]: unused variable 'z'
a.py:1:1: F401 'os' imported but unused
C:weird:name.txt:4: odd
not a diagnostic: at all
";
        let found = parsed(out).unwrap();
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "main.go:6: error: undefined: fmtx",
                "util.go:12: error: fmt.Printf format %d has arg s of wrong type string",
                "src/a.c:3: error: use of undeclared identifier 'y'",
                "src/a.c:9: warning [unused]: unused variable 'z'",
                "a.py:1: error [F401]: 'os' imported but unused",
                "C:weird:name.txt:4: error: odd",
            ]
        );
        assert_eq!(found[0].column, 2);
    }
}
