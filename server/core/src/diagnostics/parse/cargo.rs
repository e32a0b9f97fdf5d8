//! `cargo check --message-format=json`: one JSON object per line; the
//! compiler's diagnostics are `compiler-message`s, and a finished build
//! ends with `build-finished`.

use std::path::Path;

use serde_json::Value;

use super::{excerpt, tidy};
use crate::diagnostics::diagnostic::{Reported, Severity};

pub(super) fn read(stdout: &str) -> Result<Vec<Reported>, String> {
    let mut found = Vec::new();
    let mut finished = None;
    for line in stdout.lines().filter(|l| l.starts_with('{')) {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match value["reason"].as_str() {
            Some("compiler-message") => found.extend(message(&value["message"])),
            Some("build-finished") => finished = value["success"].as_bool(),
            _ => {}
        }
    }
    let errors = found.iter().any(|r| r.severity == Severity::Error);
    match finished {
        None => Err(format!(
            "cargo did not finish a build (no `build-finished` message); its output begins with {}",
            excerpt(stdout)
        )),
        // A build script or a dependency failed: the crate was never
        // checked, so the absence of errors means nothing.
        Some(false) if !errors => Err(
            "cargo's build failed without a compiler error in the project (a build script or a dependency failed; see the log)"
                .to_owned(),
        ),
        Some(_) => Ok(found),
    }
}

/// A rustc diagnostic at its primary span, followed out of macro
/// expansions defined elsewhere (a dependency's, the standard library's).
fn message(message: &Value) -> Option<Reported> {
    let severity = match message["level"].as_str()? {
        "error" | "error: internal compiler error" => Severity::Error,
        "warning" => Severity::Warning,
        _ => return None,
    };
    let spans = message["spans"].as_array()?;
    let mut span = spans
        .iter()
        .find(|s| s["is_primary"].as_bool() == Some(true))?;
    let mut hops = 0;
    while Path::new(span["file_name"].as_str()?).is_absolute() && hops < 16 {
        match span.get("expansion").and_then(|e| e.get("span")) {
            Some(outer) if outer.is_object() => span = outer,
            _ => break,
        }
        hops += 1;
    }
    let line = span["line_start"].as_u64()? as u32;
    Some(Reported {
        path: tidy(span["file_name"].as_str()?),
        line,
        column: span["column_start"].as_u64().unwrap_or(0) as u32,
        end_line: (span["line_end"].as_u64().unwrap_or(0) as u32).max(line),
        severity,
        code: message["code"]["code"].as_str().map(str::to_owned),
        message: message["message"].as_str()?.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Through the format's reader, at the root `/w`.
    fn parsed(stdout: &str) -> Result<Vec<Reported>, String> {
        super::super::read(
            super::super::Format::CargoJson,
            super::super::Output {
                stdout,
                exit_code: Some(1),
                root: std::path::Path::new("/w"),
                dir: "",
            },
        )
    }

    /// Recorded from cargo 1.95 on a crate with a type error (the
    /// explanation cut short).
    const MISMATCH: &str = r#"{"reason":"compiler-artifact","package_id":"x","target":{},"fresh":true}
{"reason":"compiler-message","package_id":"path+file:///w#app@0.1.0","manifest_path":"/w/Cargo.toml","target":{"kind":["bin"]},"message":{"rendered":"error[E0308]: mismatched types\n","$message_type":"diagnostic","children":[],"level":"error","message":"mismatched types","spans":[{"byte_end":103,"byte_start":93,"column_end":28,"column_start":18,"expansion":null,"file_name":"src/main.rs","is_primary":true,"label":"expected `u32`, found `String`","line_end":6,"line_start":6},{"byte_end":90,"byte_start":87,"column_end":15,"column_start":12,"expansion":null,"file_name":"src/main.rs","is_primary":false,"label":"expected due to this","line_end":6,"line_start":6}],"code":{"code":"E0308","explanation":"Expected type did not match."}}}
{"reason":"compiler-message","package_id":"x","message":{"rendered":"For more information","$message_type":"diagnostic","children":[],"level":"failure-note","message":"For more information about this error, try `rustc --explain E0308`.","spans":[],"code":null}}
{"reason":"build-finished","success":false}
"#;

    #[test]
    fn compiler_messages_at_their_primary_span() {
        let found = parsed(MISMATCH).unwrap();
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["src/main.rs:6: error [E0308]: mismatched types"]);
        assert_eq!(found[0].column, 18);
    }

    /// A macro's error points into the macro's definition (here the
    /// standard library's, an absolute path): the expansion site is in
    /// the project.
    #[test]
    fn an_error_inside_a_macro_is_placed_where_the_macro_is_used() {
        let line = r#"{"reason":"compiler-message","message":{"level":"error","message":"cannot find value `y`","code":{"code":"E0425"},"spans":[{"file_name":"/rustc/lib/core/src/macros.rs","is_primary":true,"line_start":10,"line_end":10,"column_start":1,"expansion":{"span":{"file_name":"src/lib.rs","line_start":3,"line_end":3,"column_start":5,"expansion":null}}}]}}
{"reason":"build-finished","success":false}"#;
        let found = parsed(line).unwrap();
        assert_eq!(
            found[0].to_string(),
            "src/lib.rs:3: error [E0425]: cannot find value `y`"
        );
    }

    #[test]
    fn an_unfinished_or_broken_build_is_not_a_clean_one() {
        let no_end = parsed("").unwrap_err();
        assert!(
            no_end.starts_with("cargo did not finish a build"),
            "{no_end}"
        );
        let script = parsed("{\"reason\":\"build-finished\",\"success\":false}\n").unwrap_err();
        assert!(
            script.contains("a build script or a dependency failed"),
            "{script}"
        );
        let clean = parsed("{\"reason\":\"build-finished\",\"success\":true}\n");
        assert_eq!(clean, Ok(Vec::new()));
    }
}
