//! Reading a checker's output: one parser per format, each turning what
//! the checker printed into [`Reported`] diagnostics, or saying why the
//! output is not a finished check (a crash, a broken configuration, a
//! truncated report). An output that does not parse is never "no
//! diagnostics".

mod cargo;
mod eslint;
mod lines;
mod mypy;
mod pyright;
mod ruff;
mod tsc;

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::diagnostic::Reported;

/// How a checker's output is read (`check_format` names one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `cargo check|clippy --message-format=json`: JSON lines.
    CargoJson,
    /// `pyright --outputjson` (and basedpyright): one JSON object.
    PyrightJson,
    /// `mypy --output json`: JSON lines.
    MypyJson,
    /// `tsc --pretty false`: `file(line,col): error TS2322: …` lines.
    Tsc,
    /// `ruff check --output-format json`: one JSON array.
    RuffJson,
    /// `eslint -f json`: one JSON array of files.
    EslintJson,
    /// `path:line[:col]: [severity[code]:] message` lines (go vet, gcc,
    /// flake8 and most linters).
    Lines,
}

impl Format {
    pub const ALL: [Format; 7] = [
        Format::CargoJson,
        Format::PyrightJson,
        Format::MypyJson,
        Format::Tsc,
        Format::RuffJson,
        Format::EslintJson,
        Format::Lines,
    ];

    /// The name a `check_format` setting gives it.
    pub fn name(self) -> &'static str {
        match self {
            Format::CargoJson => "cargo-json",
            Format::PyrightJson => "pyright-json",
            Format::MypyJson => "mypy-json",
            Format::Tsc => "tsc",
            Format::RuffJson => "ruff-json",
            Format::EslintJson => "eslint-json",
            Format::Lines => "lines",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name.trim())
    }

    /// The names, for an error that lists the choices.
    pub fn names() -> String {
        Self::ALL.map(Format::name).join(", ")
    }
}

/// What a checker run left to read.
#[derive(Clone, Copy, Debug)]
pub struct Output<'a> {
    /// Its whole standard output.
    pub stdout: &'a str,
    /// `None`: killed, or ended by a signal.
    pub exit_code: Option<i32>,
    /// The workspace root, to make the checker's paths relative.
    pub root: &'a Path,
    /// Where the checker ran, workspace-relative (`""`: the root): its
    /// relative paths are relative to it.
    pub dir: &'a str,
}

/// The diagnostics a finished check reported, or why the output is not
/// one (in words for the user).
pub fn read(format: Format, output: Output<'_>) -> Result<Vec<Reported>, String> {
    let Some(exit) = output.exit_code else {
        return Err("it did not finish (killed, or ended by a signal)".to_owned());
    };
    let (stdout, root) = (output.stdout, output.root);
    let mut found = match format {
        Format::CargoJson => cargo::read(stdout),
        Format::PyrightJson => pyright::read(stdout, exit),
        Format::MypyJson => mypy::read(stdout, exit),
        Format::Tsc => tsc::read(stdout),
        Format::RuffJson => ruff::read(stdout, exit),
        Format::EslintJson => eslint::read(stdout, exit),
        Format::Lines => Ok(lines::read(stdout)),
    }?;
    // Absolute paths inside the workspace become relative to its root;
    // relative ones are relative to where the checker ran.
    for r in &mut found {
        r.path = if r.path.starts_with('/') {
            relative(root, &r.path)
        } else if output.dir.is_empty() {
            r.path.clone()
        } else {
            format!("{}/{}", output.dir.trim_end_matches('/'), r.path)
        };
    }
    // A target checked twice (a library and its tests) reports twice.
    let mut seen = std::collections::BTreeSet::new();
    found.retain(|r| {
        seen.insert((
            r.path.clone(),
            r.line,
            r.column,
            r.code.clone(),
            r.message.clone(),
        ))
    });
    Ok(found)
}

/// A checker's path as printed, tidied (`./` and `\\` gone); made
/// workspace-relative by [`read`].
pub(crate) fn tidy(path: &str) -> String {
    let mut path = path.trim().replace('\\', "/");
    while let Some(rest) = path.strip_prefix("./") {
        path = rest.to_owned();
    }
    path
}

/// An absolute path inside the workspace, relative to its root.
fn relative(root: &Path, path: &str) -> String {
    let path = path.trim();
    let stripped = Path::new(path)
        .strip_prefix(root)
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    let path = stripped.as_deref().unwrap_or(path);
    let mut path = path.replace('\\', "/");
    while let Some(rest) = path.strip_prefix("./") {
        path = rest.to_owned();
    }
    path
}

/// The start of `text` for an error message: what the checker said
/// instead of a report.
pub(crate) fn excerpt(text: &str) -> String {
    let text = text.trim();
    let first: Vec<&str> = text.lines().take(3).collect();
    let shown = super::diagnostic::clean(&first.join(" / "), 300, false);
    if shown.is_empty() {
        "nothing".to_owned()
    } else {
        format!("`{shown}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_named_as_the_setting_spells_them() {
        for format in Format::ALL {
            assert_eq!(Format::parse(format.name()), Some(format));
        }
        assert_eq!(Format::parse("json"), None);
        assert_eq!(
            Format::names(),
            "cargo-json, pyright-json, mypy-json, tsc, ruff-json, eslint-json, lines"
        );
    }

    #[test]
    fn paths_become_workspace_relative() {
        let root = Path::new("/w/p");
        assert_eq!(relative(root, "/w/p/src/a.py"), "src/a.py");
        assert_eq!(relative(root, "./src/a.go"), "src/a.go");
        assert_eq!(relative(root, "/usr/lib/x.py"), "/usr/lib/x.py");
    }

    #[test]
    fn a_killed_checker_reported_nothing() {
        let output = Output {
            stdout: "",
            exit_code: None,
            root: Path::new("/w"),
            dir: "",
        };
        assert!(read(Format::Lines, output).is_err());
    }

    /// A checker run in a folder (cargo in a workspace's folder) names
    /// files from there; absolute paths are made relative to the root.
    #[test]
    fn paths_from_a_folder_are_the_workspaces() {
        let output = Output {
            stdout: "src/a.go:3:1: bad\n/w/go/b.go:1:1: also\n",
            exit_code: Some(1),
            root: Path::new("/w"),
            dir: "go",
        };
        let paths: Vec<String> = read(Format::Lines, output)
            .unwrap()
            .into_iter()
            .map(|r| r.path)
            .collect();
        assert_eq!(paths, ["go/src/a.go", "go/b.go"]);
    }
}
