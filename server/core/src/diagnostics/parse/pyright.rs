//! `pyright --outputjson` (and basedpyright's): one JSON object with
//! `generalDiagnostics`; positions 0-based, paths absolute.

use serde_json::Value;

use super::{excerpt, tidy};
use crate::diagnostics::diagnostic::{Reported, Severity};

pub(super) fn read(stdout: &str, exit: i32) -> Result<Vec<Reported>, String> {
    // Exit 0: no errors, 1: errors; 2 and up: pyright could not check
    // (a fatal error, a bad configuration, a bad command line).
    let report = serde_json::from_str::<Value>(stdout.trim()).ok();
    let Some(list) = report
        .as_ref()
        .and_then(|r| r.get("generalDiagnostics"))
        .and_then(Value::as_array)
        .filter(|_| exit <= 1)
    else {
        return Err(format!(
            "pyright exited {exit} without a report; its output begins with {}",
            excerpt(stdout)
        ));
    };
    Ok(list.iter().filter_map(diagnostic).collect())
}

fn diagnostic(d: &Value) -> Option<Reported> {
    let severity = match d["severity"].as_str()? {
        "error" => Severity::Error,
        "warning" => Severity::Warning,
        "information" => Severity::Information,
        _ => Severity::Hint,
    };
    let start = &d["range"]["start"];
    let line = start["line"].as_u64()? as u32 + 1;
    Some(Reported {
        path: tidy(d["file"].as_str()?),
        line,
        column: start["character"].as_u64().unwrap_or(0) as u32 + 1,
        end_line: (d["range"]["end"]["line"].as_u64().unwrap_or(0) as u32 + 1).max(line),
        severity,
        code: d["rule"].as_str().map(str::to_owned),
        message: d["message"].as_str()?.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Through the format's reader, at the root `/w`.
    fn parsed(stdout: &str, exit: i32) -> Result<Vec<Reported>, String> {
        super::super::read(
            super::super::Format::PyrightJson,
            super::super::Output {
                stdout,
                exit_code: Some(exit),
                root: std::path::Path::new("/w"),
                dir: "",
            },
        )
    }

    /// Recorded from pyright 1.1.414.
    const REPORT: &str = r#"{
    "version": "1.1.414",
    "generalDiagnostics": [
        {
            "file": "/w/app.py",
            "severity": "error",
            "message": "Argument of type \"Literal[3]\" cannot be assigned to parameter \"name\" of type \"str\" in function \"greet\"\n  \"Literal[3]\" is not assignable to \"str\"",
            "range": {"start": {"line": 6, "character": 16}, "end": {"line": 6, "character": 17}},
            "rule": "reportArgumentType"
        },
        {
            "file": "/w/bad.py",
            "severity": "error",
            "message": "\"(\" was not closed",
            "range": {"start": {"line": 0, "character": 5}, "end": {"line": 0, "character": 6}}
        }
    ],
    "summary": {"filesAnalyzed": 2, "errorCount": 2}
}"#;

    #[test]
    fn general_diagnostics_are_read_one_based() {
        let found = parsed(REPORT, 1).unwrap();
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "app.py:7: error [reportArgumentType]: Argument of type \"Literal[3]\" cannot be assigned to parameter \"name\" of type \"str\" in function \"greet\"",
                "bad.py:1: error: \"(\" was not closed",
            ]
        );
        assert_eq!(found[0].column, 17);
    }

    #[test]
    fn a_fatal_exit_or_no_report_is_no_check() {
        let fatal = parsed(REPORT, 3).unwrap_err();
        assert!(
            fatal.starts_with("pyright exited 3 without a report"),
            "{fatal}"
        );
        let crash = parsed("Error: cannot find module\n", 1).unwrap_err();
        assert!(crash.ends_with("`Error: cannot find module`"), "{crash}");
    }
}
