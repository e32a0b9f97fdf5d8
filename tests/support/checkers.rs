//! The real checkers (mypy, pyright, tsc) for the "fix this error" tests,
//! installed once by the core's `server/core/tests/checkers/install.sh`
//! (pinned, under the suite's install lock), and the fixture projects
//! they check.

#![allow(dead_code)] // Each test file uses a part of this module.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The folder `install.sh` printed (installed on first use).
pub fn installed() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../server/core/tests/checkers/install.sh");
        let out = Command::new("bash")
            .arg(script)
            .output()
            .expect("bash runs the checkers' install script");
        assert!(
            out.status.success(),
            "installing the checkers failed (node, npm, python3 with pip and the registries are needed):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        PathBuf::from(stdout.lines().last().unwrap_or_default().trim())
    })
}

/// `PATH` with the installed checkers first.
pub fn path_var() -> OsString {
    let dir = installed();
    let mut dirs = vec![dir.join("node_modules/.bin"), dir.join("mypy/bin")];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// The user's settings that let the sandbox read the installed checkers
/// (they live in the user's cache, which commands do not see).
pub fn user_settings() -> String {
    format!(
        "[sandbox]\nreadable_roots = [{:?}]\n",
        installed().display().to_string()
    )
}

/// The core's fixture project `name` (`python`, `rust`, `typescript`),
/// copied to `to`.
pub fn copy_fixture(name: &str, to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../server/core/tests/fixtures/fix_error")
        .join(name);
    rein_testkit::copy_project(&from, to).unwrap();
}
