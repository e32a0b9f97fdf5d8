//! Real pytest for the suites that need it: the machine's own, else
//! installed once with pip into `~/.cache/rein-tests/pytest` and found
//! through `PYTHONPATH`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Pinned so a run is the same on every machine.
const PYTEST: &str = "pytest==9.0.3";

/// `None`: the machine's `python3` has pytest already.
pub fn pythonpath() -> Option<PathBuf> {
    if works(None) {
        return None;
    }
    let cache = cache_dir();
    let target = cache.join("pytest-9.0.3");
    if !works(Some(&target)) {
        // The suite's one install lock (tests/install-lib.sh): one
        // process installs, the others wait and find it done.
        std::fs::create_dir_all(&cache).unwrap();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(cache.join("install.lock"))
            .unwrap();
        let _lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| e)
            .unwrap();
        if !works(Some(&target)) {
            install(&cache, &target);
        }
    }
    assert!(
        works(Some(&target)),
        "pytest installed into {} does not run",
        target.display()
    );
    Some(target)
}

fn works(pythonpath: Option<&Path>) -> bool {
    let mut command = Command::new("python3");
    command.args(["-m", "pytest", "--version"]);
    if let Some(path) = pythonpath {
        command.env("PYTHONPATH", path);
    }
    command.output().is_ok_and(|o| o.status.success())
}

/// The suite's cache folder, as tests/install-lib.sh has it.
fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("REIN_TEST_CACHE") {
        return PathBuf::from(dir);
    }
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .expect("neither XDG_CACHE_HOME nor HOME is set")
        .join("rein-tests")
}

/// `pip install --target` into a fresh folder, then a rename (under
/// the install lock): an interrupted install never leaves a half copy,
/// and a broken copy left before is replaced.
fn install(cache: &Path, target: &Path) {
    std::fs::create_dir_all(cache).unwrap();
    let work = tempfile::Builder::new()
        .prefix(".pytest-install-")
        .tempdir_in(cache)
        .unwrap();
    let output = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .arg("--target")
        .arg(work.path())
        .arg(PYTEST)
        .output()
        .expect("python3 is needed for the pytest end-to-end tests");
    assert!(
        output.status.success(),
        "cannot install {PYTEST} for the end-to-end tests (they need python3 with pip and the PyPI registry):\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let _ = std::fs::remove_dir_all(target);
    std::fs::rename(work.path(), target).unwrap();
}
