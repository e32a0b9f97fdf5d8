//! `ruff check --output-format json`: one JSON array; rows and columns
//! 1-based, paths absolute. Run with `--exit-zero`, so any other exit
//! than 0 is ruff's own failure.

use serde_json::Value;

use super::{excerpt, tidy};
use crate::diagnostics::diagnostic::{Reported, Severity};

pub(super) fn read(stdout: &str, exit: i32) -> Result<Vec<Reported>, String> {
    let list = serde_json::from_str::<Value>(stdout.trim()).ok();
    let Some(list) = list
        .as_ref()
        .and_then(Value::as_array)
        .filter(|_| exit <= 1)
    else {
        return Err(format!(
            "ruff exited {exit} without a report; its output begins with {}",
            excerpt(stdout)
        ));
    };
    Ok(list
        .iter()
        .filter_map(|d| {
            let line = d["location"]["row"].as_u64()? as u32;
            Some(Reported {
                path: tidy(d["filename"].as_str()?),
                line,
                column: d["location"]["column"].as_u64().unwrap_or(0) as u32,
                end_line: (d["end_location"]["row"].as_u64().unwrap_or(0) as u32).max(line),
                // Ruff has no severities: every rule it reports is a finding.
                severity: Severity::Error,
                code: d["code"].as_str().map(str::to_owned),
                message: d["message"].as_str()?.to_owned(),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Through the format's reader, at the root `/w`.
    fn parsed(stdout: &str, exit: i32) -> Result<Vec<Reported>, String> {
        super::super::read(
            super::super::Format::RuffJson,
            super::super::Output {
                stdout,
                exit_code: Some(exit),
                root: std::path::Path::new("/w"),
                dir: "",
            },
        )
    }

    #[test]
    fn findings_are_read() {
        let out = r#"[{"cell":null,"code":"F401","end_location":{"column":10,"row":1},"filename":"/w/a.py","fix":null,"location":{"column":8,"row":1},"message":"`os` imported but unused","noqa_row":1,"url":"https://docs.astral.sh/ruff/rules/unused-import"}]"#;
        let found = parsed(out, 0).unwrap();
        assert_eq!(
            found[0].to_string(),
            "a.py:1: error [F401]: `os` imported but unused"
        );
        assert!(parsed("error: bad config", 2).is_err());
    }
}
