//! `eslint -f json`: one JSON array of files, each with its `messages`;
//! severity 2 is an error, 1 a warning; exit 2 is eslint's own failure.

use serde_json::Value;

use super::{excerpt, tidy};
use crate::diagnostics::diagnostic::{Reported, Severity};

pub(super) fn read(stdout: &str, exit: i32) -> Result<Vec<Reported>, String> {
    let files = serde_json::from_str::<Value>(stdout.trim()).ok();
    let Some(files) = files
        .as_ref()
        .and_then(Value::as_array)
        .filter(|_| exit <= 1)
    else {
        return Err(format!(
            "eslint exited {exit} without a report; its output begins with {}",
            excerpt(stdout)
        ));
    };
    let mut found = Vec::new();
    for file in files {
        let Some(path) = file["filePath"].as_str() else {
            continue;
        };
        for m in file["messages"].as_array().into_iter().flatten() {
            let (Some(line), Some(message)) = (m["line"].as_u64(), m["message"].as_str()) else {
                continue;
            };
            let line = line as u32;
            found.push(Reported {
                path: tidy(path),
                line,
                column: m["column"].as_u64().unwrap_or(0) as u32,
                end_line: (m["endLine"].as_u64().unwrap_or(0) as u32).max(line),
                severity: if m["severity"].as_u64() == Some(2) {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                code: m["ruleId"].as_str().map(str::to_owned),
                message: message.to_owned(),
            });
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Through the format's reader, at the root `/w`.
    fn parsed(stdout: &str, exit: i32) -> Result<Vec<Reported>, String> {
        super::super::read(
            super::super::Format::EslintJson,
            super::super::Output {
                stdout,
                exit_code: Some(exit),
                root: std::path::Path::new("/w"),
                dir: "",
            },
        )
    }

    #[test]
    fn messages_of_each_file_are_read() {
        let out = r#"[{"filePath":"/w/src/a.js","messages":[{"ruleId":"no-unused-vars","severity":2,"message":"'x' is assigned a value but never used.","line":1,"column":7,"endLine":1,"endColumn":8},{"ruleId":"eqeqeq","severity":1,"message":"Expected '===' and instead saw '=='.","line":2,"column":7}],"errorCount":1,"warningCount":1}]"#;
        let found = parsed(out, 1).unwrap();
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "src/a.js:1: error [no-unused-vars]: 'x' is assigned a value but never used.",
                "src/a.js:2: warning [eqeqeq]: Expected '===' and instead saw '=='.",
            ]
        );
        assert!(parsed("Oops! Something went wrong!", 2).is_err());
    }
}
