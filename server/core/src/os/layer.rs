//! The folder of a [`Layer::Files`] command: the files a candidate fix
//! would leave, written under a fresh, random, owner-only folder outside
//! the workspace (this process's temporary directory, which a sandboxed
//! command does not see: it has a `/tmp` of its own), laid over the
//! workspace by the sandbox before the command starts, and removed after
//! it.
//!
//! The paths come from a model: each must be relative, made of plain
//! names only (no `..`, no root, nothing under `.git` or `.rein`), and is
//! created without following a link (`O_EXCL | O_NOFOLLOW`, in folders
//! this process just made).
//!
//! [`Layer::Files`]: crate::exec::Layer::Files

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use nix::fcntl::OFlag;

use super::private_run::random_hex;

/// A layer's folder; removed when dropped.
#[derive(Debug)]
pub(super) struct LayerDir {
    dir: PathBuf,
}

impl LayerDir {
    /// Writes `files` (workspace-relative path, text) in a fresh folder
    /// under `parent`.
    pub(super) fn make(parent: &Path, files: &[(String, String)]) -> io::Result<Self> {
        for (path, _) in files {
            if !is_plain_relative(path) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{path:?} is not a plain path inside the workspace"),
                ));
            }
        }
        let dir = fresh_dir(parent)?;
        // Made at once, so a failure below still removes it.
        let made = Self { dir };
        let mut builder = fs::DirBuilder::new();
        builder.mode(0o700).recursive(true);
        for (path, text) in files {
            let to = made.dir.join(path);
            if let Some(folder) = to.parent() {
                builder.create(folder)?;
            }
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(OFlag::O_NOFOLLOW.bits())
                .open(&to)?;
            io::Write::write_all(&mut file, text.as_bytes())?;
        }
        Ok(made)
    }

    pub(super) fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for LayerDir {
    fn drop(&mut self) {
        if let Err(error) = fs::remove_dir_all(&self.dir) {
            tracing::warn!(%error, dir = %self.dir.display(), "could not remove a candidate's layer");
        }
    }
}

/// A path of plain names inside the workspace, outside Rein's and git's
/// folders.
fn is_plain_relative(path: &str) -> bool {
    let path = Path::new(path);
    let mut components = path.components().peekable();
    let first_is_private = matches!(
        components.peek(),
        Some(Component::Normal(name)) if *name == ".git" || *name == ".rein"
    );
    !path.as_os_str().is_empty()
        && !first_is_private
        && components.all(|c| matches!(c, Component::Normal(_)))
}

fn fresh_dir(parent: &Path) -> io::Result<PathBuf> {
    let mut builder = fs::DirBuilder::new();
    builder.mode(0o700);
    let mut last = io::Error::other("no attempt");
    for _ in 0..8 {
        let dir = parent.join(format!("rein-layer-{}", random_hex()?));
        match builder.create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layer_holds_its_files_and_is_gone_when_dropped() {
        let parent = tempfile::tempdir().unwrap();
        let layer = LayerDir::make(
            parent.path(),
            &[
                ("cart.py".into(), "fixed\n".into()),
                ("pkg/deep/mod.py".into(), "x = 1\n".into()),
            ],
        )
        .unwrap();
        let dir = layer.path().to_path_buf();
        assert_eq!(fs::read_to_string(dir.join("cart.py")).unwrap(), "fixed\n");
        assert_eq!(
            fs::read_to_string(dir.join("pkg/deep/mod.py")).unwrap(),
            "x = 1\n"
        );
        drop(layer);
        assert!(!dir.exists());
    }

    /// Paths from a model: none may leave the folder or reach Rein's and
    /// git's own.
    #[test]
    fn paths_that_leave_the_layer_are_refused() {
        let parent = tempfile::tempdir().unwrap();
        for bad in [
            "../escape.py",
            "/etc/passwd",
            "a/../../b",
            "",
            ".git/hooks/pre-commit",
            ".rein/config.toml",
            "./cart.py",
        ] {
            let made = LayerDir::make(parent.path(), &[(bad.into(), "x".into())]);
            assert!(made.is_err(), "{bad:?} was laid");
        }
        // Nothing was left behind by the refusals.
        assert_eq!(fs::read_dir(parent.path()).unwrap().count(), 0);
    }
}
