//! Copying a fixture project into a test's temporary folder.

use std::io;
use std::path::Path;

/// What running a fixture by hand leaves behind, which is not part of it.
const LEFTOVERS: &[&str] = &["__pycache__", "target", "Cargo.lock", ".rein"];

/// Copies the project at `from` into `to` (created), recursively, without
/// the leftovers of running it by hand (`__pycache__`, `target`,
/// `Cargo.lock`, `.rein`).
pub fn copy_project(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if LEFTOVERS.iter().any(|n| name == *n) {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type()?.is_dir() {
            copy_project(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_the_tree_without_leftovers() {
        let from = tempfile::tempdir().unwrap();
        let to = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(from.path().join("tests/__pycache__")).unwrap();
        std::fs::create_dir_all(from.path().join(".rein")).unwrap();
        std::fs::write(from.path().join("cart.py"), "x = 1\n").unwrap();
        std::fs::write(from.path().join("tests/test_cart.py"), "y = 2\n").unwrap();
        std::fs::write(from.path().join("tests/__pycache__/a.pyc"), "").unwrap();
        copy_project(from.path(), &to.path().join("p")).unwrap();
        let root = to.path().join("p");
        assert_eq!(
            std::fs::read_to_string(root.join("cart.py")).unwrap(),
            "x = 1\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("tests/test_cart.py")).unwrap(),
            "y = 2\n"
        );
        assert!(!root.join("tests/__pycache__").exists());
        assert!(!root.join(".rein").exists());
        assert!(copy_project(&from.path().join("missing"), &root).is_err());
    }
}
