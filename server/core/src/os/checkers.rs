//! What the disk says about checking a diagnostic: the project's files
//! that decide a checker, and the checker programs installed — the
//! project's own (`node_modules/.bin`, `.venv/bin`; only in a trusted
//! workspace: they are the repository's code) and those on `PATH`
//! (absolute entries only). Nothing is run. The decision is
//! [`crate::diagnostics::checker_for`]'s.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use rein_fsroot::{Links, Root};

use crate::diagnostics::checker::{PROJECT_FILES, Program, Project, Tool};

/// Configuration files are read up to this size.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Where a project keeps its own checkers, workspace-relative.
const OWN_BINS: &[&str] = &["node_modules/.bin", ".venv/bin", "venv/bin"];

/// The checker programs looked for.
const PROGRAMS: &[Tool] = &[
    Tool::Cargo,
    Tool::Clippy,
    Tool::Pyright,
    Tool::Basedpyright,
    Tool::Mypy,
    Tool::Tsc,
    Tool::Ruff,
    Tool::Eslint,
    Tool::GoVet,
];

/// Scans the workspace at `root` for checking a diagnostic in `file`
/// (workspace-relative): the deciding files at the root and in every
/// folder down to the file's, the checker programs (the project's own
/// only when `trusted`), with `path` as the `PATH` to search.
pub fn scan(root: &Path, file: &str, path: Option<&OsStr>, trusted: bool) -> Project {
    let mut project = Project::default();
    let Ok(workspace) = Root::open(root, Links::Within) else {
        return project;
    };
    let parts: Vec<&str> = file.split('/').filter(|p| !p.is_empty()).collect();
    // The root, then each folder down to the file's own.
    for depth in 0..parts.len().max(1) {
        let dir = parts[..depth].join("/");
        for name in PROJECT_FILES {
            let rel = if dir.is_empty() {
                (*name).to_owned()
            } else {
                format!("{dir}/{name}")
            };
            if workspace.metadata(&rel).is_ok_and(|m| m.is_file()) {
                project.files.insert(rel);
            }
        }
    }
    if let Some(text) = read_capped(&workspace, "pyproject.toml")
        && let Ok(table) = toml::from_str::<toml::Table>(&text)
        && let Some(tools) = table.get("tool").and_then(toml::Value::as_table)
    {
        project.pyproject_tools = tools.keys().cloned().collect();
    }
    project.setup_cfg_mypy = read_capped(&workspace, "setup.cfg")
        .is_some_and(|t| t.lines().any(|l| l.trim_start().starts_with("[mypy")));
    project.programs = programs(root, &workspace, path, trusted);
    project
}

fn read_capped(root: &Root, rel: &str) -> Option<String> {
    let meta = root.metadata(rel).ok()?;
    if !meta.is_file() || meta.len() > MAX_CONFIG_BYTES {
        return None;
    }
    root.read_to_string(rel).ok()
}

fn programs(
    root: &Path,
    workspace: &Root,
    path: Option<&OsStr>,
    trusted: bool,
) -> BTreeMap<String, Program> {
    let mut found = BTreeMap::new();
    let root_real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    for tool in PROGRAMS {
        let name = tool.program();
        let own = OWN_BINS
            .iter()
            .filter(|_| trusted)
            .map(|bin| format!("{bin}/{name}"))
            .find(|rel| {
                workspace
                    .metadata(rel)
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            });
        if let Some(rel) = own {
            found.insert(
                name.to_owned(),
                Program {
                    path: root.join(&rel),
                    in_workspace: Some(rel),
                },
            );
            continue;
        }
        let on_path = path
            .into_iter()
            .flat_map(std::env::split_paths)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(name))
            .find(|candidate| is_executable(candidate.as_path()));
        if let Some(candidate) = on_path {
            // A PATH entry inside the workspace is the project's own too.
            let inside = candidate.canonicalize().ok().and_then(|real| {
                real.strip_prefix(&root_real)
                    .ok()
                    .map(|r| r.to_string_lossy().into_owned())
            });
            if inside.is_some() && !trusted {
                continue;
            }
            found.insert(
                name.to_owned(),
                Program {
                    path: candidate,
                    in_workspace: inside,
                },
            );
        }
    }
    found
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn executable(path: &Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "#!/bin/sh\n").unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn files_on_the_way_and_programs_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("web/src")).unwrap();
        fs::write(root.join("web/tsconfig.json"), "{}").unwrap();
        fs::write(
            root.join("pyproject.toml"),
            "[tool.mypy]\nstrict = true\n[tool.ruff]\n",
        )
        .unwrap();
        fs::write(root.join("setup.cfg"), "[mypy]\n").unwrap();
        executable(&root.join("node_modules/.bin/tsc"));
        let bin = tempfile::tempdir().unwrap();
        executable(&bin.path().join("mypy"));
        executable(&bin.path().join("tsc"));
        let path = std::env::join_paths(["relative/bin".as_ref(), bin.path()]).unwrap();

        let trusted = scan(root, "web/src/a.ts", Some(&path), true);
        assert_eq!(
            trusted.files.iter().collect::<Vec<_>>(),
            ["pyproject.toml", "setup.cfg", "web/tsconfig.json"]
        );
        assert_eq!(
            trusted.pyproject_tools.iter().collect::<Vec<_>>(),
            ["mypy", "ruff"]
        );
        assert!(trusted.setup_cfg_mypy);
        assert_eq!(
            trusted.programs["tsc"].in_workspace.as_deref(),
            Some("node_modules/.bin/tsc"),
            "the project's own first"
        );
        assert_eq!(trusted.programs["mypy"].path, bin.path().join("mypy"));
        assert!(!trusted.programs.contains_key("pyright"));
    }

    /// Attack: a repository ships its own `node_modules/.bin/tsc` that
    /// reports whatever it likes. Until the workspace is trusted, Rein
    /// runs only a checker from outside it.
    #[test]
    fn an_untrusted_workspaces_own_checker_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        executable(&dir.path().join("node_modules/.bin/tsc"));
        executable(&dir.path().join("bin/pyright"));
        let inside = dir.path().join("bin");
        let project = scan(dir.path(), "a.ts", Some(inside.as_os_str()), false);
        assert!(project.programs.is_empty(), "{:?}", project.programs);
    }
}
