//! `tsc --noEmit --pretty false`: no JSON, one line per diagnostic,
//! `src/app.ts(4,7): error TS2322: Type … .`, with a message chain's
//! further lines indented below it; errors of the project itself (a bad
//! `tsconfig.json`) have no file: `error TS5058: …`.

use super::{excerpt, tidy};
use crate::diagnostics::diagnostic::{Reported, Severity};

pub(super) fn read(stdout: &str) -> Result<Vec<Reported>, String> {
    let mut found: Vec<Reported> = Vec::new();
    let mut global = Vec::new();
    let mut last_was_diagnostic = false;
    for line in stdout.lines() {
        if line.starts_with([' ', '\t']) && last_was_diagnostic {
            if let Some(last) = found.last_mut() {
                last.message.push('\n');
                last.message.push_str(line.trim_end());
            }
            continue;
        }
        last_was_diagnostic = false;
        if let Some(d) = diagnostic(line) {
            found.push(d);
            last_was_diagnostic = true;
        } else if line.starts_with("error TS") {
            global.push(line);
        }
    }
    // The project could not be read: nothing was checked.
    if found.is_empty() && !global.is_empty() {
        return Err(format!(
            "tsc could not check the project: {}",
            excerpt(&global.join("\n"))
        ));
    }
    Ok(found)
}

/// `path(line,col): severity TSnnnn: message`.
fn diagnostic(line: &str) -> Option<Reported> {
    let (place, rest) = line.split_once("): ")?;
    let (path, position) = place.rsplit_once('(')?;
    let (row, col) = position.split_once(',')?;
    let (row, col): (u32, u32) = (row.parse().ok()?, col.parse().ok()?);
    let (kind, rest) = rest.split_once(' ')?;
    let severity = match kind {
        "error" => Severity::Error,
        "warning" => Severity::Warning,
        "message" | "suggestion" => Severity::Information,
        _ => return None,
    };
    let (code, message) = rest.split_once(": ")?;
    let number = code.strip_prefix("TS")?;
    if path.is_empty() || number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Reported {
        path: tidy(path),
        line: row,
        column: col,
        end_line: row,
        severity,
        code: Some(number.to_owned()),
        message: message.trim_end().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Through the format's reader, at the root `/w`.
    fn parsed(stdout: &str) -> Result<Vec<Reported>, String> {
        super::super::read(
            super::super::Format::Tsc,
            super::super::Output {
                stdout,
                exit_code: Some(1),
                root: std::path::Path::new("/w"),
                dir: "",
            },
        )
    }

    /// Recorded from tsc 5.9.3 (the chain of the last one added).
    const OUTPUT: &str = "src/app.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.
src/app.ts(5,7): error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'.
src/lib (old)/a.ts(7,27): error TS2322: Type '{ z: number; }' is not assignable to type 'B'.
  Types of property 'z' are incompatible.
    Type 'number' is not assignable to type 'string'.
error TS2688: Cannot find type definition file for 'node'.
";

    #[test]
    fn lines_and_their_chains_are_read() {
        let found = parsed(OUTPUT).unwrap();
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "src/app.ts:4: error [2322]: Type 'string' is not assignable to type 'number'.",
                "src/app.ts:5: error [2345]: Argument of type 'number' is not assignable to parameter of type 'string'.",
                "src/lib (old)/a.ts:7: error [2322]: Type '{ z: number; }' is not assignable to type 'B'.",
            ]
        );
        assert_eq!(
            found[2].message,
            "Type '{ z: number; }' is not assignable to type 'B'.\n  Types of property 'z' are incompatible.\n    Type 'number' is not assignable to type 'string'."
        );
    }

    #[test]
    fn a_project_tsc_cannot_read_is_no_check() {
        let error =
            parsed("error TS5058: The specified path does not exist: 'nonexist'.\n").unwrap_err();
        assert_eq!(
            error,
            "tsc could not check the project: `error TS5058: The specified path does not exist: 'nonexist'.`"
        );
        assert_eq!(parsed(""), Ok(Vec::new()));
    }
}
