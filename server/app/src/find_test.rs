//! A test named as users write it (`tests/test_cart.py::test_total`,
//! `TestCart::test_total`, `./tests/…`), found in the workspace: what
//! `rein run --fix-test` and an agent panel's "fix the failing test …"
//! prompt both take.

use std::path::{Component, Path};

use rein_core::os::disk::DiskWorkspace;
use rein_core::testfind;
use rein_core::workspace::Workspace;

/// `PATH::NAME` → (workspace-relative path, the test's qualified name).
pub async fn find_test(disk: &DiskWorkspace, target: &str) -> Result<(String, String), String> {
    let Some((path, name)) = target.split_once("::") else {
        return Err(format!(
            "--fix-test wants PATH::NAME, e.g. tests/test_cart.py::test_total (got {target:?})"
        ));
    };
    let (path, name) = (path.trim(), name.trim());
    if path.is_empty() || name.is_empty() {
        return Err(format!(
            "--fix-test wants PATH::NAME, e.g. tests/test_cart.py::test_total (got {target:?})"
        ));
    }
    let root = disk.root();
    let path = workspace_relative(root, path)?;
    let file = disk
        .read_file(&path)
        .await
        .map_err(|e| format!("{e} (in the workspace {})", root.display()))?;
    let lang = testfind::lang_for_path(&path).ok_or_else(|| {
        format!(
            "{path}: Rein finds tests in Rust, Python, JavaScript/TypeScript and Go files, by their extension"
        )
    })?;
    if let Some(test) = testfind::find(&file.text, lang, name) {
        return Ok((path, test.qualified));
    }
    let tests = testfind::tests_in(&file.text, lang);
    if tests.is_empty() {
        return Err(format!(
            "no test `{name}` in {path}: Rein finds no tests in that file"
        ));
    }
    const SHOWN: usize = 30;
    let mut names: Vec<String> = tests
        .iter()
        .take(SHOWN)
        .map(|t| t.qualified.clone())
        .collect();
    if tests.len() > SHOWN {
        names.push(format!("… and {} more", tests.len() - SHOWN));
    }
    Err(format!(
        "no test `{name}` in {path}; the tests there are: {}",
        names.join(", ")
    ))
}

/// A path given on the command line as workspace-relative with `/`. An
/// absolute path is accepted when it is inside the workspace.
pub fn workspace_relative(root: &Path, path: &str) -> Result<String, String> {
    let given = Path::new(path);
    let relative = if given.is_absolute() {
        let real = given.canonicalize().map_err(|e| format!("{path}: {e}"))?;
        real.strip_prefix(root)
            .map_err(|_| format!("{path} is outside the workspace {}", root.display()))?
            .to_path_buf()
    } else {
        given.to_path_buf()
    };
    let mut parts = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => {
                return Err(format!(
                    "{path}: give the test file's path inside the workspace, relative to {}",
                    root.display()
                ));
            }
        }
    }
    if parts.is_empty() {
        return Err(format!("{path} is not a file"));
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_paths_become_workspace_relative() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("tests")).unwrap();
        std::fs::write(root.join("tests/t.py"), "").unwrap();
        assert_eq!(
            workspace_relative(&root, "./tests/t.py").unwrap(),
            "tests/t.py"
        );
        let abs = root.join("tests/t.py");
        assert_eq!(
            workspace_relative(&root, abs.to_str().unwrap()).unwrap(),
            "tests/t.py"
        );
        assert!(workspace_relative(&root, "../t.py").is_err());
        assert!(workspace_relative(&root, "/etc/hostname").is_err());
    }

    #[tokio::test]
    async fn a_test_is_found_by_the_names_users_write() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join("tests/test_cart.py"),
            "import unittest\n\nclass TestCart(unittest.TestCase):\n    def test_total(self):\n        assert 1\n\n    def test_count(self):\n        assert 1\n",
        )
        .unwrap();
        let disk = DiskWorkspace::new(dir.path()).unwrap();
        for target in [
            "tests/test_cart.py::test_total",
            "tests/test_cart.py::TestCart::test_total",
            "tests/test_cart.py::TestCart.test_total",
            "./tests/test_cart.py::test_total",
        ] {
            assert_eq!(
                find_test(&disk, target).await.unwrap(),
                (
                    "tests/test_cart.py".to_owned(),
                    "TestCart.test_total".to_owned()
                ),
                "{target}"
            );
        }
        let err = find_test(&disk, "tests/test_cart.py::test_nope")
            .await
            .unwrap_err();
        assert_eq!(
            err,
            "no test `test_nope` in tests/test_cart.py; the tests there are: TestCart.test_total, TestCart.test_count"
        );
        let err = find_test(&disk, "tests/test_carts.py::test_total")
            .await
            .unwrap_err();
        assert!(
            err.contains("tests/test_carts.py not found; did you mean tests/test_cart.py?"),
            "{err}"
        );
        let err = find_test(&disk, "tests/test_cart.py").await.unwrap_err();
        assert!(err.contains("PATH::NAME"), "{err}");
    }
}
