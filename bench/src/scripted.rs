//! A real `rein lsp` in a project, playing a scripted model: how the
//! whole-process figures (`load`, `testlog`) start the server.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, Result};
use serde_json::Value;
use tokio::process::Child;

/// Writes `scenario` under `tmp` and starts `rein lsp` in `root` with an
/// empty user configuration and none of the provider's environment, its
/// stderr in `tmp/rein.stderr.log`. Returns the server and the scenario's
/// path (for the `scenario` setting).
pub fn spawn(rein: &Path, tmp: &Path, root: &Path, scenario: &Value) -> Result<(Child, PathBuf)> {
    let scenario_path = tmp.join("scenario.json");
    std::fs::write(&scenario_path, serde_json::to_string_pretty(scenario)?)?;
    let config_home = tmp.join("xdg-config");
    std::fs::create_dir_all(&config_home)?;
    let mut command = tokio::process::Command::new(rein);
    command
        .arg("lsp")
        .current_dir(root)
        .env("REIN_LOG", "warn")
        .env("XDG_CONFIG_HOME", &config_home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(tmp.join("rein.stderr.log"))?)
        .kill_on_drop(true);
    for name in rein_testkit::PROVIDER_ENV {
        command.env_remove(name);
    }
    let child = command
        .spawn()
        .with_context(|| format!("starting {}", rein.display()))?;
    Ok((child, scenario_path))
}
