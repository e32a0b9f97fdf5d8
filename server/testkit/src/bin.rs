//! Finding the `rein` binary that the tests run against, built from the
//! sources as they are now.
//!
//! Cargo builds a test's own package and the libraries it depends on, never
//! another package's binary: after a change to the server, `cargo nextest
//! run -p rein-e2e` would run the old `target/debug/rein` and could pass
//! against old code. So each test process first has Cargo bring the binary
//! up to date (`cargo build -p rein --bin rein`), once.
//!
//! Cargo, not a comparison of modification times, decides whether it is
//! stale: a build that started before a file was saved and ended after it
//! leaves a binary newer than every source and still without that change
//! (a build of the user's own, running alongside the tests, does exactly
//! that), while Cargo's own record of a build is dated from its start. When nothing changed this costs a fraction of a second. Test
//! processes that start together do not each build: Cargo's lock on the
//! target directory makes the others wait, and they then find it built.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;

#[derive(Debug, thiserror::Error)]
pub enum BinaryError {
    #[error("cannot locate the test executable: {0}")]
    CurrentExe(std::io::Error),
    #[error("the test executable {0} is not in a Cargo target directory (target/<profile>/deps)")]
    NotInTarget(PathBuf),
    #[error(
        "the rein binary is not at {0}; build it first with `cargo build -p rein --bin rein`, \
         or set REIN_BIN"
    )]
    Missing(PathBuf),
    #[error("cannot run `{command}` to bring the rein binary up to date: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "`{command}` failed ({status}): the rein binary may be older than its sources, and \
         the tests will not run old code:\n{output}"
    )]
    Build {
        command: String,
        status: ExitStatus,
        output: String,
    },
}

/// The `rein` binary: `$REIN_BIN` if set (taken as it is: whoever sets it
/// chose that binary), else the one in the target directory of the running
/// test executable (`target/<profile>/rein`), first brought up to date by
/// Cargo (once per process). Without the workspace's sources (a test
/// binary moved elsewhere) there is nothing to build from, and the binary
/// next to it is used as it is.
pub fn rein_binary() -> Result<PathBuf, BinaryError> {
    if let Some(path) = std::env::var_os("REIN_BIN") {
        return Ok(PathBuf::from(path));
    }
    // Once per process: a test calls this several times.
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    if let Some(path) = BUILT.get() {
        return Ok(path.clone());
    }
    let exe = std::env::current_exe().map_err(BinaryError::CurrentExe)?;
    // target/<profile>/deps/<test>-<hash> → target/<profile>
    let profile_dir = exe
        .parent()
        .filter(|dir| dir.ends_with("deps"))
        .and_then(Path::parent)
        .ok_or_else(|| BinaryError::NotInTarget(exe.clone()))?;
    let root = workspace_root();
    if root.join("Cargo.toml").is_file() {
        build(&root, profile_dir)?;
    }
    let path = profile_dir.join(format!("rein{}", std::env::consts::EXE_SUFFIX));
    if !path.is_file() {
        return Err(BinaryError::Missing(path));
    }
    Ok(BUILT.get_or_init(|| path).clone())
}

/// `cargo build -p rein --bin rein` into the target directory and profile
/// the running test was built for.
fn build(root: &Path, profile_dir: &Path) -> Result<(), BinaryError> {
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev",
        Some(other) => other,
    };
    let target_dir = profile_dir.parent().unwrap_or(profile_dir);
    // The Cargo running these tests, if it says (it does, through $CARGO).
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let shown = format!(
        "{} build -p rein --bin rein --profile {profile} --target-dir {}",
        Path::new(&cargo).display(),
        target_dir.display()
    );
    let mut command = Command::new(&cargo);
    // What Cargo sets for the running test is not the outer build's
    // environment: a dependency's build script that watches one of these
    // (ring watches CARGO_MANIFEST_DIR) would make this build differ from
    // `cargo build --workspace`, and each would rebuild over the other.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_BIN_")
            || name.starts_with("NEXTEST")
            || matches!(
                name.as_ref(),
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_TARGET_TMPDIR"
                    | "OUT_DIR"
            )
        {
            command.env_remove(name.as_ref());
        }
    }
    let output = command
        .args(["build", "--quiet", "-p", "rein", "--bin", "rein"])
        .args(["--profile", profile])
        .arg("--target-dir")
        .arg(target_dir)
        .current_dir(root)
        .output()
        .map_err(|source| BinaryError::Spawn {
            command: shown.clone(),
            source,
        })?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    Err(BinaryError::Build {
        command: shown,
        status: output.status,
        output: lines[lines.len().saturating_sub(80)..].join("\n"),
    })
}

/// The workspace this crate was built in (`server/testkit` → `.`).
fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .and_then(Path::parent)
        .unwrap_or(manifest)
        .to_path_buf()
}
