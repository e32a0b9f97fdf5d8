//! `mypy --output json`: one JSON object per line; lines 1-based,
//! columns 0-based, paths as given on the command line.

use serde_json::Value;

use super::{excerpt, tidy};
use crate::diagnostics::diagnostic::{Reported, Severity};

pub(super) fn read(stdout: &str, exit: i32) -> Result<Vec<Reported>, String> {
    let found: Vec<Reported> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|d| diagnostic(&d))
        .collect();
    // 0: clean, 1: errors, 2: a blocking error (a syntax error is still
    // reported as a diagnostic) or a crash (then there is none).
    match exit {
        0 | 1 => Ok(found),
        2 if !found.is_empty() => Ok(found),
        _ => Err(format!(
            "mypy exited {exit} without a report; its output begins with {}",
            excerpt(stdout)
        )),
    }
}

fn diagnostic(d: &Value) -> Option<Reported> {
    let severity = match d["severity"].as_str()? {
        "error" => Severity::Error,
        "warning" => Severity::Warning,
        // Notes explain an error; they are not diagnostics of their own.
        _ => return None,
    };
    let line = d["line"].as_i64()?.max(1) as u32;
    Some(Reported {
        path: tidy(d["file"].as_str()?),
        line,
        column: d["column"].as_i64().unwrap_or(-1).saturating_add(1).max(0) as u32,
        end_line: (d["end_line"].as_i64().unwrap_or(0).max(0) as u32).max(line),
        severity,
        code: d["code"].as_str().map(str::to_owned),
        message: d["message"].as_str()?.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Through the format's reader, at the root `/w`.
    fn parsed(stdout: &str, exit: i32) -> Result<Vec<Reported>, String> {
        super::super::read(
            super::super::Format::MypyJson,
            super::super::Output {
                stdout,
                exit_code: Some(exit),
                root: std::path::Path::new("/w"),
                dir: "",
            },
        )
    }

    /// Recorded from mypy 2.4.1.
    const REPORT: &str = r#"{"file": "app.py", "line": 6, "column": 17, "end_line": 6, "end_column": 27, "message": "Incompatible types in assignment (expression has type \"str\", variable has type \"int\")", "hint": null, "code": "assignment", "severity": "error"}
{"file": "app.py", "line": 7, "column": 16, "end_line": 7, "end_column": 17, "message": "Argument 1 to \"greet\" has incompatible type \"int\"; expected \"str\"", "hint": null, "code": "arg-type", "severity": "error"}
{"file": "app.py", "line": 7, "column": 16, "message": "See https://mypy.rtfd.io", "hint": null, "code": null, "severity": "note"}
"#;

    #[test]
    fn errors_are_read_and_notes_left_out() {
        let found = parsed(REPORT, 1).unwrap();
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "app.py:6: error [assignment]: Incompatible types in assignment (expression has type \"str\", variable has type \"int\")",
                "app.py:7: error [arg-type]: Argument 1 to \"greet\" has incompatible type \"int\"; expected \"str\"",
            ]
        );
        assert_eq!(found[1].column, 17);
    }

    /// A syntax error stops mypy (exit 2) but is reported; a crash or a
    /// bad configuration (exit 2, nothing on stdout) is no check.
    #[test]
    fn exit_2_counts_only_with_a_report() {
        let syntax = r#"{"file": "bad.py", "line": 1, "column": 7, "message": "Expected a parameter", "hint": null, "code": "syntax", "severity": "error"}"#;
        assert_eq!(parsed(syntax, 2).unwrap().len(), 1);
        let crash = parsed("", 2).unwrap_err();
        assert_eq!(
            crash,
            "mypy exited 2 without a report; its output begins with nothing"
        );
    }
}
