//! Silencing is not fixing: the ways to make a checker stop reporting a
//! diagnostic without changing what it is about. Two kinds, both compared
//! with what was there before the task began:
//! - suppression comments and attributes in the code (`# type: ignore`,
//!   `@ts-ignore`, `#[allow(…)]`, `noqa`, `eslint-disable`, `nolint`…),
//!   counted per file ([`markers`]);
//! - the checker's configuration (`[tool.mypy]`, `pyrightconfig.json`,
//!   `tsconfig.json`, `Cargo.toml`'s `[lints]`, `.eslintrc`, ruff's),
//!   digested by the part that counts ([`digest`]).

use std::collections::BTreeMap;

use rein_text::ContentHash;

use super::checker::Part;

/// Suppressions in `text` (a file at `path`), by marker, counted. Files
/// of no language Rein knows have none.
pub fn markers(path: &str, text: &str) -> BTreeMap<&'static str, usize> {
    let mut found = BTreeMap::new();
    let Some(language) = language(path) else {
        return found;
    };
    for line in text.lines() {
        // Spacing and case vary (`# type:ignore`, `// NOLINT`).
        let squeezed: String = line
            .chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect();
        for (marker, shape) in shapes(language) {
            if matches(&squeezed, shape) {
                *found.entry(*marker).or_insert(0) += 1;
            }
        }
    }
    found
}

/// A source file of a language with suppressions (whose markers are
/// counted).
pub fn is_source(path: &str) -> bool {
    language(path).is_some()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Language {
    Python,
    Script,
    Rust,
    Go,
}

fn language(path: &str) -> Option<Language> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    Some(match ext {
        "py" | "pyi" => Language::Python,
        "ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs" | "vue" | "svelte" => {
            Language::Script
        }
        "rs" => Language::Rust,
        "go" => Language::Go,
        _ => return None,
    })
}

/// How a marker looks in a squeezed line (no spaces, lower case).
enum Shape {
    Contains(&'static str),
    /// An attribute (`#[` or `#![`) holding this.
    Attribute(&'static str),
}

fn matches(line: &str, shape: &Shape) -> bool {
    match shape {
        Shape::Contains(text) => line.contains(text),
        Shape::Attribute(inner) => {
            (line.contains("#[") || line.contains("#![")) && line.contains(inner)
        }
    }
}

/// The markers of each language, as the user would write them.
fn shapes(language: Language) -> &'static [(&'static str, Shape)] {
    match language {
        Language::Python => &[
            ("# type: ignore", Shape::Contains("#type:ignore")),
            // `# pyright: ignore`, and the file-level `# pyright: basic`
            // or `# pyright: reportX=false`.
            ("# pyright:", Shape::Contains("#pyright:")),
            ("# mypy: (inline configuration)", Shape::Contains("#mypy:")),
            ("# noqa", Shape::Contains("noqa")),
            ("# pylint: disable", Shape::Contains("#pylint:disable")),
            ("@no_type_check", Shape::Contains("no_type_check")),
        ],
        Language::Script => &[
            ("@ts-ignore", Shape::Contains("@ts-ignore")),
            ("@ts-expect-error", Shape::Contains("@ts-expect-error")),
            ("@ts-nocheck", Shape::Contains("@ts-nocheck")),
            ("eslint-disable", Shape::Contains("eslint-disable")),
        ],
        Language::Rust => &[
            ("#[allow(…)]", Shape::Attribute("allow(")),
            ("#[expect(…)]", Shape::Attribute("expect(")),
        ],
        Language::Go => &[
            ("//nolint", Shape::Contains("//nolint")),
            ("//lint:ignore", Shape::Contains("//lint:ignore")),
            ("//go:build ignore", Shape::Contains("//go:buildignore")),
        ],
    }
}

/// The digest of the part of a guarded file that counts (`None`: the file
/// is absent). A TOML or JSON file that does not parse counts whole.
pub fn digest(text: Option<&str>, part: &Part) -> Option<String> {
    let text = text?;
    let counted = match part {
        Part::Whole => None,
        Part::TomlTables(tables) => toml_tables(text, tables),
        Part::IniSections(prefix) => Some(ini_sections(text, prefix)),
        Part::JsonKey(key) => serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .map(|v| v.get(key).map(ToString::to_string).unwrap_or_default()),
    };
    Some(ContentHash::of_str(counted.as_deref().unwrap_or(text)).to_hex())
}

fn toml_tables(text: &str, tables: &[String]) -> Option<String> {
    let value: toml::Table = toml::from_str(text).ok()?;
    let mut out = String::new();
    for table in tables {
        let mut at: Option<&toml::Value> = None;
        for (n, key) in table.split('.').enumerate() {
            at = if n == 0 {
                value.get(key)
            } else {
                at.and_then(|v| v.get(key))
            };
        }
        // serde_json orders keys: the same settings give the same digest.
        let shown = at
            .and_then(|v| serde_json::to_value(v).ok())
            .map(|v| v.to_string())
            .unwrap_or_default();
        out.push_str(&format!("[{table}] {shown}\n"));
    }
    Some(out)
}

fn ini_sections(text: &str, prefix: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(name) = trimmed.strip_prefix('[') {
            inside = name.starts_with(prefix);
        }
        if inside && !trimmed.is_empty() && !trimmed.starts_with(['#', ';']) {
            out.push_str(trimmed);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_languages_suppressions_are_counted() {
        let py = "x: int = f()  # type: ignore[assignment]\ny = g()  #noqa: E501\nz = 1 # pyright: ignore\n";
        assert_eq!(
            markers("a.py", py).into_iter().collect::<Vec<_>>(),
            [("# noqa", 1), ("# pyright:", 1), ("# type: ignore", 1)]
        );
        let ts = "// @ts-expect-error\nconst n: number = s;\n/* eslint-disable-next-line */\n";
        assert_eq!(markers("a.ts", ts).len(), 2);
        let rs = "#![allow(dead_code)]\n#[cfg_attr(test, allow(unused))]\nfn f() {}\n#[expect(clippy::x)]\n";
        assert_eq!(
            markers("src/lib.rs", rs).into_iter().collect::<Vec<_>>(),
            [("#[allow(…)]", 2), ("#[expect(…)]", 1)]
        );
        assert_eq!(markers("main.go", "x() // NOLINT\n")["//nolint"], 1);
        assert!(markers("notes.md", "# type: ignore").is_empty());
        // Plain code is no suppression.
        assert!(markers("a.py", "def allow(x):\n    return typed(x)\n").is_empty());
    }

    #[test]
    fn only_the_checkers_part_of_a_shared_file_counts() {
        let part = Part::TomlTables(vec!["tool.mypy".into()]);
        let before = "[project]\nname = \"a\"\ndependencies = []\n\n[tool.mypy]\nstrict = true\n";
        let dependency = before.replace("dependencies = []", "dependencies = [\"attrs\"]");
        let loosened = before.replace("strict = true", "strict = false");
        let reordered =
            "[tool.mypy]\nstrict = true\n\n[project]\nname = \"a\"\ndependencies = []\n";
        let d = |t: &str| digest(Some(t), &part);
        assert_eq!(
            d(before),
            d(&dependency),
            "a dependency is no checker setting"
        );
        assert_eq!(d(before), d(reordered));
        assert_ne!(d(before), d(&loosened));
        assert_ne!(
            d(before),
            digest(None, &part),
            "added or removed is a change"
        );
        // A broken file counts whole.
        assert_ne!(d("[tool.mypy\n"), d("[tool.mypy\n\n"));
        let cfg = Part::IniSections("mypy".into());
        let setup =
            "[metadata]\nname = a\n[mypy]\nstrict = True\n[mypy-tests.*]\nignore_errors = False\n";
        assert_ne!(
            digest(Some(setup), &cfg),
            digest(Some(&setup.replace("= False", "= True")), &cfg)
        );
        assert_eq!(
            digest(Some(setup), &cfg),
            digest(Some(&setup.replace("name = a", "name = b")), &cfg)
        );
        let json = Part::JsonKey("eslintConfig".into());
        assert_eq!(
            digest(
                Some(r#"{"version": "1", "eslintConfig": {"rules": {}}}"#),
                &json
            ),
            digest(
                Some(r#"{"version": "2", "eslintConfig": {"rules": {}}}"#),
                &json
            )
        );
    }
}
