//! Finding the `rein` binary that the tests run against.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum BinaryError {
    #[error("cannot locate the test executable: {0}")]
    CurrentExe(std::io::Error),
    #[error(
        "the rein binary is not at {0}; build it first with `cargo build -p rein`, or set REIN_BIN"
    )]
    Missing(PathBuf),
}

/// The `rein` binary: `$REIN_BIN` if set, else the one Cargo built next to
/// the running test executable (`target/<profile>/rein`).
pub fn rein_binary() -> Result<PathBuf, BinaryError> {
    if let Some(path) = std::env::var_os("REIN_BIN") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe().map_err(BinaryError::CurrentExe)?;
    // target/<profile>/deps/<test>-<hash> → target/<profile>/rein
    let mut dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let path = dir.join(format!("rein{}", std::env::consts::EXE_SUFFIX));
    if path.is_file() {
        Ok(path)
    } else {
        Err(BinaryError::Missing(path))
    }
}
