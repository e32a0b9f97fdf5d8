//! Which command can confirm a diagnostic: from who reported it (its
//! `source`), the project's files and the checkers installed, or the
//! project's configured `check_command`. Pure: what is on the disk comes
//! in as a [`Project`] (gathered by `os::checkers::scan`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::diagnostic::Diagnostic;
use super::parse::Format;

/// A checker Rein knows how to run and read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    Cargo,
    Clippy,
    Pyright,
    Basedpyright,
    Mypy,
    Tsc,
    Ruff,
    Eslint,
    GoVet,
    /// The project's `check_command`.
    Configured,
}

impl Tool {
    /// The program the checker is (what is looked for on `PATH`).
    pub fn program(self) -> &'static str {
        match self {
            Tool::Cargo => "cargo",
            Tool::Clippy => "cargo-clippy",
            Tool::Pyright => "pyright",
            Tool::Basedpyright => "basedpyright",
            Tool::Mypy => "mypy",
            Tool::Tsc => "tsc",
            Tool::Ruff => "ruff",
            Tool::Eslint => "eslint",
            Tool::GoVet => "go",
            Tool::Configured => "check_command",
        }
    }

    /// Its name for people.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Cargo => "cargo check",
            Tool::Clippy => "cargo clippy",
            Tool::GoVet => "go vet",
            Tool::Configured => "the check command",
            other => other.program(),
        }
    }
}

/// The project's own checker (the `check_command` and `check_format`
/// settings): trusted like `test_command`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckCommand {
    /// Run with `sh -c` at the workspace root.
    pub command: String,
    pub format: Format,
}

/// What a scan of the project found (see `os::checkers::scan`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Project {
    /// Files that decide a checker, workspace-relative: at the root, and
    /// in the folders from the root down to the diagnostic's file.
    pub files: BTreeSet<String>,
    /// The `[tool.<name>]` tables of the root's `pyproject.toml`.
    pub pyproject_tools: BTreeSet<String>,
    /// The root's `setup.cfg` has a `[mypy]` section.
    pub setup_cfg_mypy: bool,
    /// Checker programs found, by program name (see [`Tool::program`]).
    pub programs: BTreeMap<String, Program>,
}

/// An installed checker program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Absolute.
    pub path: PathBuf,
    /// Workspace-relative when it is the project's own (`node_modules`,
    /// `.venv`): a file the task could change, so it is guarded.
    pub in_workspace: Option<String>,
}

/// A checker ready to run for one diagnostic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checker {
    pub tool: Tool,
    /// Run with `sh -c` in `dir`; programs named by absolute path.
    pub command: String,
    /// The command as the user would type it, for evidence and messages.
    pub shown: String,
    pub format: Format,
    /// Where it runs, workspace-relative (`""`: the root); the checker's
    /// relative paths are relative to it.
    pub dir: String,
    /// Files whose change changes what the checker reports: its
    /// configuration (a change is silencing, not fixing), and the
    /// checker's own program when it is inside the workspace.
    pub guarded: Vec<Guarded>,
}

/// A guarded file, and which part of it counts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Guarded {
    pub path: String,
    pub part: Part,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    Whole,
    /// These tables of a TOML file (`tool.mypy`, `lints`): the rest of a
    /// `pyproject.toml` or `Cargo.toml` (a dependency) may change.
    TomlTables(Vec<String>),
    /// The INI sections whose names start with this (`setup.cfg`'s `mypy`).
    IniSections(String),
    /// One key of a JSON file (`package.json`'s `eslintConfig`).
    JsonKey(String),
}

/// Why Rein cannot confirm a diagnostic: the front end offers "Ask Rein…"
/// instead, with this reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotCheckable {
    pub reason: String,
}

impl fmt::Display for NotCheckable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for NotCheckable {}

fn not(reason: String) -> NotCheckable {
    NotCheckable { reason }
}

/// The checker that can confirm `diagnostic` in `project`: the configured
/// `check_command` when there is one (the user's word on how the project
/// is checked), else the checker its source names.
pub fn checker_for(
    diagnostic: &Diagnostic,
    project: &Project,
    configured: Option<&CheckCommand>,
) -> Result<Checker, NotCheckable> {
    if let Some(configured) = configured {
        return Ok(Checker {
            tool: Tool::Configured,
            command: configured.command.clone(),
            shown: configured.command.clone(),
            format: configured.format,
            dir: String::new(),
            guarded: Vec::new(),
        });
    }
    if diagnostic.severity > super::diagnostic::Severity::Warning {
        return Err(not(format!(
            "Rein fixes errors and warnings; this diagnostic is {} {}",
            if diagnostic.severity == super::diagnostic::Severity::Information {
                "an"
            } else {
                "a"
            },
            diagnostic.severity.word()
        )));
    }
    let tool = tool_for(diagnostic, project)?;
    let program = |name: &str| project.programs.get(name);
    let missing = |tool: Tool| {
        not(format!(
            "{} is not installed (Rein looked in the project's node_modules/.bin and .venv, and on PATH); install it, or set `check_command` and `check_format`",
            tool.program()
        ))
    };
    let (found, tool) = match tool {
        Tool::Pyright | Tool::Basedpyright => {
            let other = if tool == Tool::Pyright {
                Tool::Basedpyright
            } else {
                Tool::Pyright
            };
            match (program(tool.program()), program(other.program())) {
                (Some(p), _) => (p, tool),
                (None, Some(p)) => (p, other),
                (None, None) => return Err(missing(tool)),
            }
        }
        // Clippy is a cargo subcommand: cargo runs, cargo-clippy must exist.
        Tool::Clippy => {
            if program(Tool::Clippy.program()).is_none() {
                return Err(missing(Tool::Clippy));
            }
            (program("cargo").ok_or_else(|| missing(Tool::Cargo))?, tool)
        }
        _ => (program(tool.program()).ok_or_else(|| missing(tool))?, tool),
    };
    build(tool, found, diagnostic, project)
}

/// Who reported it, and so which checker can say the same.
fn tool_for(diagnostic: &Diagnostic, project: &Project) -> Result<Tool, NotCheckable> {
    let source = diagnostic.source.as_deref().map(str::to_ascii_lowercase);
    let ext = diagnostic.path.rsplit_once('.').map_or("", |(_, e)| e);
    let clippy = diagnostic
        .code
        .as_deref()
        .is_some_and(|c| c.starts_with("clippy::"));
    let language = match ext {
        "rs" => Some("rust"),
        "py" | "pyi" => Some("python"),
        "ts" | "tsx" | "mts" | "cts" => Some("typescript"),
        "go" => Some("go"),
        _ => None,
    };
    let by_language = |language: &str| match language {
        "rust" if clippy => Ok(Tool::Clippy),
        "rust" => Ok(Tool::Cargo),
        "python" => python_checker(project),
        "typescript" => Ok(Tool::Tsc),
        _ => Ok(Tool::GoVet),
    };
    match source.as_deref() {
        Some("rustc" | "rust-analyzer" | "cargo" | "rust") if clippy => Ok(Tool::Clippy),
        Some("rustc" | "rust-analyzer" | "cargo" | "rust") => Ok(Tool::Cargo),
        Some("clippy") => Ok(Tool::Clippy),
        Some("pyright" | "pylance") => Ok(Tool::Pyright),
        Some("basedpyright") => Ok(Tool::Basedpyright),
        Some("mypy") => Ok(Tool::Mypy),
        Some("ts" | "typescript" | "tsserver" | "tsc" | "vtsls") => Ok(Tool::Tsc),
        Some("eslint") => Ok(Tool::Eslint),
        Some("ruff") => Ok(Tool::Ruff),
        Some("go" | "gopls" | "compiler" | "vet" | "go vet") if ext == "go" => Ok(Tool::GoVet),
        // No source, or a language's name: the project's usual checker.
        None | Some("python" | "go") => match language {
            Some(language) => by_language(language),
            None => Err(not(format!(
                "Rein knows no checker for `{}`; set `check_command` and `check_format` to the command that reports this diagnostic",
                diagnostic.path
            ))),
        },
        Some(other) => Err(not(format!(
            "Rein cannot run `{}` (the diagnostic's source) to check this; set `check_command` and `check_format` to the command that reports it",
            crate::inert::shown(diagnostic.source.as_deref().unwrap_or(other))
        ))),
    }
}

/// Python's checker: the one the project configures, else the one
/// installed (pyright first: editors' Python servers are pyright's).
fn python_checker(project: &Project) -> Result<Tool, NotCheckable> {
    let has = |f: &str| project.files.contains(f);
    if has("pyrightconfig.json") || project.pyproject_tools.contains("pyright") {
        return Ok(Tool::Pyright);
    }
    if project.pyproject_tools.contains("basedpyright") {
        return Ok(Tool::Basedpyright);
    }
    if has("mypy.ini") || has(".mypy.ini") || project.pyproject_tools.contains("mypy") {
        return Ok(Tool::Mypy);
    }
    if project.setup_cfg_mypy {
        return Ok(Tool::Mypy);
    }
    for tool in [Tool::Pyright, Tool::Basedpyright, Tool::Mypy] {
        if project.programs.contains_key(tool.program()) {
            return Ok(tool);
        }
    }
    Err(not(
        "no Python type checker is installed (pyright, basedpyright or mypy; Rein looked in the project's .venv and node_modules/.bin, and on PATH); install one, or set `check_command` and `check_format`"
            .to_owned(),
    ))
}

/// The command, where it runs, and what it guards.
fn build(
    tool: Tool,
    program: &Program,
    diagnostic: &Diagnostic,
    project: &Project,
) -> Result<Checker, NotCheckable> {
    let exe = quote(&program.path.to_string_lossy());
    let mut guarded: Vec<Guarded> = Vec::new();
    let whole = |path: &str| Guarded {
        path: path.to_owned(),
        part: Part::Whole,
    };
    let tables = |path: &str, tables: &[&str]| Guarded {
        path: path.to_owned(),
        part: Part::TomlTables(tables.iter().map(|t| (*t).to_owned()).collect()),
    };
    if let Some(own) = &program.in_workspace {
        guarded.push(whole(own));
    }
    let folders = folders_of(&diagnostic.path);
    let (dir, args, format) = match tool {
        Tool::Cargo | Tool::Clippy => {
            // The topmost manifest on the way to the file: the workspace's.
            let manifest = folders
                .iter()
                .map(|d| join(d, "Cargo.toml"))
                .find(|m| project.files.contains(m))
                .ok_or_else(|| {
                    not(format!(
                        "no Cargo.toml above {}: cargo would not know the crate",
                        diagnostic.path
                    ))
                })?;
            for folder in &folders {
                let manifest = join(folder, "Cargo.toml");
                if project.files.contains(&manifest) {
                    guarded.push(tables(&manifest, &["lints", "workspace.lints"]));
                    guarded.push(whole(&join(folder, "build.rs")));
                }
            }
            for file in [
                ".cargo/config.toml",
                ".cargo/config",
                "clippy.toml",
                ".clippy.toml",
                "rust-toolchain.toml",
                "rust-toolchain",
            ] {
                guarded.push(whole(file));
            }
            let sub = if tool == Tool::Clippy {
                "clippy"
            } else {
                "check"
            };
            (
                parent(&manifest),
                format!("{sub} --workspace --all-targets --message-format=json"),
                Format::CargoJson,
            )
        }
        Tool::Pyright | Tool::Basedpyright => {
            let table = if tool == Tool::Pyright {
                "tool.pyright"
            } else {
                "tool.basedpyright"
            };
            guarded.push(whole("pyrightconfig.json"));
            guarded.push(tables("pyproject.toml", &[table]));
            (
                String::new(),
                "--outputjson".to_owned(),
                Format::PyrightJson,
            )
        }
        Tool::Mypy => {
            guarded.push(whole("mypy.ini"));
            guarded.push(whole(".mypy.ini"));
            guarded.push(tables("pyproject.toml", &["tool.mypy"]));
            guarded.push(Guarded {
                path: "setup.cfg".into(),
                part: Part::IniSections("mypy".into()),
            });
            // No cache: one planted in the workspace could tell mypy a
            // file was checked clean.
            (
                String::new(),
                "--output json --cache-dir=/dev/null .".to_owned(),
                Format::MypyJson,
            )
        }
        Tool::Tsc => {
            // The nearest tsconfig.json: the project the file belongs to.
            let config = folders
                .iter()
                .rev()
                .map(|d| join(d, "tsconfig.json"))
                .find(|c| project.files.contains(c))
                .ok_or_else(|| {
                    not(format!(
                        "no tsconfig.json above {}: tsc would not know the project",
                        diagnostic.path
                    ))
                })?;
            for file in project.files.iter().filter(|f| is_ts_config(f)) {
                guarded.push(whole(file));
            }
            guarded.push(whole(&join(&parent(&config), "tsconfig.tsbuildinfo")));
            (
                String::new(),
                format!("--noEmit --pretty false -p {}", quote(&config)),
                Format::Tsc,
            )
        }
        Tool::Ruff => {
            guarded.push(whole("ruff.toml"));
            guarded.push(whole(".ruff.toml"));
            guarded.push(tables("pyproject.toml", &["tool.ruff"]));
            // No cache (a planted one could say a file is clean), and any
            // exit but 0 is ruff's own failure.
            (
                String::new(),
                "check --output-format json --no-cache --exit-zero .".to_owned(),
                Format::RuffJson,
            )
        }
        Tool::Eslint => {
            let configs: Vec<&String> = project
                .files
                .iter()
                .filter(|f| is_eslint_config(f))
                .collect();
            if configs.is_empty() {
                return Err(not(
                    "the project has no eslint configuration (eslint.config.js or .eslintrc) at its root"
                        .to_owned(),
                ));
            }
            for file in configs {
                guarded.push(whole(file));
            }
            guarded.push(whole(".eslintignore"));
            guarded.push(Guarded {
                path: "package.json".into(),
                part: Part::JsonKey("eslintConfig".into()),
            });
            (String::new(), "-f json .".to_owned(), Format::EslintJson)
        }
        Tool::GoVet => {
            let module = folders
                .iter()
                .map(|d| join(d, "go.mod"))
                .find(|m| project.files.contains(m))
                .ok_or_else(|| {
                    not(format!(
                        "no go.mod above {}: go vet would not know the module",
                        diagnostic.path
                    ))
                })?;
            (parent(&module), "vet ./...".to_owned(), Format::Lines)
        }
        Tool::Configured => (String::new(), String::new(), Format::Lines),
    };
    let shown_program = match tool {
        Tool::Clippy => "cargo",
        other => other.program(),
    };
    let shown = format!("{shown_program} {args}");
    Ok(Checker {
        tool,
        command: format!("{exe} {args}"),
        shown: if dir.is_empty() {
            shown
        } else {
            format!("(in {dir}) {shown}")
        },
        format,
        dir,
        guarded,
    })
}

/// The folders from the root (`""`) down to `path`'s own.
fn folders_of(path: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let parts: Vec<&str> = path.split('/').collect();
    for n in 1..parts.len() {
        out.push(parts[..n].join("/"));
    }
    out
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

fn parent(path: &str) -> String {
    path.rsplit_once('/')
        .map_or(String::new(), |(d, _)| d.to_owned())
}

/// The file names a scan looks for in each folder on the way.
pub const PROJECT_FILES: &[&str] = &[
    "Cargo.toml",
    "pyproject.toml",
    "pyrightconfig.json",
    "mypy.ini",
    ".mypy.ini",
    "setup.cfg",
    "ruff.toml",
    ".ruff.toml",
    "tsconfig.json",
    "tsconfig.base.json",
    "jsconfig.json",
    "go.mod",
    "package.json",
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    "eslint.config.mts",
    "eslint.config.cts",
    ".eslintrc",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yaml",
    ".eslintrc.yml",
];

fn is_ts_config(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with("tsconfig") && name.ends_with(".json") || name == "jsconfig.json"
}

fn is_eslint_config(path: &str) -> bool {
    !path.contains('/') && (path.starts_with("eslint.config.") || path.starts_with(".eslintrc"))
}

/// `text` as one shell word.
pub(crate) fn quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::diagnostic::{Range, Severity};

    fn diagnostic(path: &str, source: Option<&str>, code: Option<&str>) -> Diagnostic {
        Diagnostic {
            path: path.into(),
            range: Range::default(),
            severity: Severity::Error,
            source: source.map(Into::into),
            code: code.map(Into::into),
            message: "m".into(),
        }
    }

    fn project(files: &[&str], programs: &[&str]) -> Project {
        Project {
            files: files.iter().map(|f| (*f).to_owned()).collect(),
            programs: programs
                .iter()
                .map(|p| {
                    (
                        (*p).to_owned(),
                        Program {
                            path: PathBuf::from(format!("/opt/bin/{p}")),
                            in_workspace: None,
                        },
                    )
                })
                .collect(),
            ..Project::default()
        }
    }

    /// Each source, the checker and the command: a table to read.
    #[test]
    fn sources_choose_their_checker() {
        let all = project(
            &[
                "Cargo.toml",
                "web/tsconfig.json",
                "eslint.config.js",
                "go.mod",
            ],
            &[
                "cargo",
                "cargo-clippy",
                "pyright",
                "mypy",
                "tsc",
                "ruff",
                "eslint",
                "go",
            ],
        );
        let cases = [
            ("src/main.rs", Some("rustc"), Some("E0308")),
            (
                "src/main.rs",
                Some("rust-analyzer"),
                Some("clippy::needless_return"),
            ),
            ("app.py", Some("Pylance"), Some("reportArgumentType")),
            ("app.py", Some("Mypy"), Some("arg-type")),
            ("app.py", Some("Ruff"), Some("F401")),
            ("web/src/a.ts", Some("ts"), Some("2322")),
            ("web/src/a.ts", Some("eslint"), Some("no-unused-vars")),
            ("cmd/main.go", Some("compiler"), Some("UndeclaredName")),
            ("app.py", None, None),
        ];
        let shown: Vec<String> = cases
            .iter()
            .map(|(path, source, code)| {
                let c = checker_for(&diagnostic(path, *source, *code), &all, None).unwrap();
                format!("{path} {source:?} -> {} in {:?}", c.command, c.dir)
            })
            .collect();
        expect_test::expect![[r#"
            src/main.rs Some("rustc") -> /opt/bin/cargo check --workspace --all-targets --message-format=json in ""
            src/main.rs Some("rust-analyzer") -> /opt/bin/cargo clippy --workspace --all-targets --message-format=json in ""
            app.py Some("Pylance") -> /opt/bin/pyright --outputjson in ""
            app.py Some("Mypy") -> /opt/bin/mypy --output json --cache-dir=/dev/null . in ""
            app.py Some("Ruff") -> /opt/bin/ruff check --output-format json --no-cache --exit-zero . in ""
            web/src/a.ts Some("ts") -> /opt/bin/tsc --noEmit --pretty false -p web/tsconfig.json in ""
            web/src/a.ts Some("eslint") -> /opt/bin/eslint -f json . in ""
            cmd/main.go Some("compiler") -> /opt/bin/go vet ./... in ""
            app.py None -> /opt/bin/pyright --outputjson in """#]]
        .assert_eq(&shown.join("\n"));
    }

    #[test]
    fn python_follows_the_projects_configuration() {
        let both = |files: &[&str]| {
            let p = project(files, &["pyright", "mypy"]);
            checker_for(&diagnostic("a.py", None, None), &p, None)
                .unwrap()
                .tool
        };
        assert_eq!(both(&["mypy.ini"]), Tool::Mypy);
        assert_eq!(both(&["pyrightconfig.json", "mypy.ini"]), Tool::Pyright);
        assert_eq!(both(&[]), Tool::Pyright);
        // Pylance's diagnostic, only basedpyright installed: its fork.
        let based = project(&[], &["basedpyright"]);
        let c = checker_for(&diagnostic("a.py", Some("Pylance"), None), &based, None).unwrap();
        assert_eq!(c.tool, Tool::Basedpyright);
    }

    /// Not offered, and why: the front end shows it.
    #[test]
    fn what_rein_cannot_check_says_why() {
        let reasons: Vec<String> = [
            (
                diagnostic("a.py", Some("Pylint"), None),
                project(&[], &["pyright"]),
            ),
            (diagnostic("a.py", Some("mypy"), None), project(&[], &[])),
            (diagnostic("a.ts", Some("ts"), None), project(&[], &["tsc"])),
            (
                diagnostic("src/a.rs", Some("rustc"), None),
                project(&[], &["cargo"]),
            ),
            (diagnostic("notes.md", None, None), project(&[], &[])),
            (
                Diagnostic {
                    severity: Severity::Hint,
                    ..diagnostic("a.py", Some("Pylance"), None)
                },
                project(&[], &["pyright"]),
            ),
        ]
        .iter()
        .map(|(d, p)| checker_for(d, p, None).unwrap_err().to_string())
        .collect();
        expect_test::expect![[r#"
            Rein cannot run `Pylint` (the diagnostic's source) to check this; set `check_command` and `check_format` to the command that reports it
            mypy is not installed (Rein looked in the project's node_modules/.bin and .venv, and on PATH); install it, or set `check_command` and `check_format`
            no tsconfig.json above a.ts: tsc would not know the project
            no Cargo.toml above src/a.rs: cargo would not know the crate
            Rein knows no checker for `notes.md`; set `check_command` and `check_format` to the command that reports this diagnostic
            Rein fixes errors and warnings; this diagnostic is a hint"#]]
        .assert_eq(&reasons.join("\n"));
    }

    #[test]
    fn a_configured_check_command_is_used_as_written() {
        let configured = CheckCommand {
            command: "make lint".into(),
            format: Format::Lines,
        };
        let c = checker_for(
            &diagnostic("x.c", Some("clangd"), None),
            &Project::default(),
            Some(&configured),
        )
        .unwrap();
        assert_eq!(
            (c.command.as_str(), c.shown.as_str()),
            ("make lint", "make lint")
        );
    }

    /// The checker's configuration is guarded: changing it is silencing.
    #[test]
    fn configuration_files_are_guarded() {
        let p = project(&["Cargo.toml", "crates/a/Cargo.toml"], &["cargo"]);
        let c = checker_for(
            &diagnostic("crates/a/src/lib.rs", Some("rustc"), None),
            &p,
            None,
        )
        .unwrap();
        let guarded: Vec<String> = c
            .guarded
            .iter()
            .map(|g| format!("{} {:?}", g.path, g.part))
            .collect();
        expect_test::expect![[r#"
            Cargo.toml TomlTables(["lints", "workspace.lints"])
            build.rs Whole
            crates/a/Cargo.toml TomlTables(["lints", "workspace.lints"])
            crates/a/build.rs Whole
            .cargo/config.toml Whole
            .cargo/config Whole
            clippy.toml Whole
            .clippy.toml Whole
            rust-toolchain.toml Whole
            rust-toolchain Whole"#]]
        .assert_eq(&guarded.join("\n"));
    }

    #[test]
    fn shell_words_are_quoted() {
        assert_eq!(quote("/usr/bin/tsc"), "/usr/bin/tsc");
        assert_eq!(quote("/a b/it's"), "'/a b/it'\\''s'");
    }
}
