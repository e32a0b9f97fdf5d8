//! Where a stdio server's own files are, so the sandbox lets it read them:
//! the folders of the absolute paths in its command line. A script in a
//! package's `node_modules` needs the whole tree its imports resolve in; a
//! program in a `bin` folder (a virtualenv, a prefix) needs that prefix.

use std::path::{Path, PathBuf};

/// The folders to read for `command args`.
pub fn install_roots(command: &str, args: &[String]) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for word in std::iter::once(command).chain(args.iter().map(String::as_str)) {
        let path = Path::new(word);
        if !path.is_absolute() || !path.exists() {
            continue;
        }
        let root = root_of(path);
        if root.parent().is_some() && !roots.contains(&root) {
            roots.push(root);
        }
    }
    roots
}

fn root_of(path: &Path) -> PathBuf {
    // The outermost `node_modules` the path is in: its parent holds the
    // whole tree.
    if let Some(outer) = path
        .ancestors()
        .filter(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .last()
        && let Some(parent) = outer.parent()
    {
        return parent.to_path_buf();
    }
    let folder = if path.is_dir() {
        path
    } else {
        path.parent().unwrap_or(path)
    };
    if folder.file_name().is_some_and(|n| n == "bin")
        && let Some(prefix) = folder.parent()
    {
        return prefix.to_path_buf();
    }
    folder.to_path_buf()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_own_files_are_found_from_its_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        let script = base.join("srv/node_modules/@scope/pkg/dist/index.js");
        let venv_bin = base.join("venv/bin/mcp-server");
        let plain = base.join("tools/server.py");
        for file in [&script, &venv_bin, &plain] {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, "").unwrap();
        }
        let roots = install_roots(
            venv_bin.to_str().unwrap(),
            &[
                script.display().to_string(),
                plain.display().to_string(),
                "--flag".into(),
                "/does/not/exist".into(),
                "relative/path".into(),
            ],
        );
        assert_eq!(
            roots,
            [base.join("venv"), base.join("srv"), base.join("tools")]
        );
        // `/` itself is never a root.
        assert_eq!(install_roots("/", &[]), Vec::<PathBuf>::new());
    }
}
