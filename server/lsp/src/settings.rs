//! Reading Rein's settings from where users put them (DESIGN.md §3): the
//! editor, `<workspace>/.rein/config.toml`, `$XDG_CONFIG_HOME/rein/config.toml`
//! (else `~/.config/rein/config.toml`), then the environment. The merge
//! itself is `rein_core::config`.

use std::path::{Path, PathBuf};

use rein_core::config::{Config, Settings};
use serde_json::Value;

/// The settings layers, highest precedence first. A file that exists but
/// does not parse is an error naming the file and the problem: silently
/// ignoring it would run with settings the user did not choose.
pub fn layers(root: &Path, editor: &Value) -> Result<Vec<Settings>, String> {
    let mut layers = Vec::new();
    if !editor.is_null() {
        let settings: Settings = serde_json::from_value(editor.clone())
            .map_err(|e| format!("the editor's Rein settings are invalid: {e}"))?;
        layers.push(settings);
    }
    for file in files(root) {
        if let Some(settings) = read_file(&file)? {
            layers.push(settings);
        }
    }
    Ok(layers)
}

/// The whole configuration for a task in `root`.
pub fn config(root: &Path, editor: &Value) -> Result<Config, String> {
    let layers = layers(root, editor)?;
    Config::resolve(&layers, &|name| std::env::var(name).ok()).map_err(|e| e.to_string())
}

/// The editor's settings as they may appear in a log: every value under a
/// name that holds a credential (`apiKey`, `api_key`, `token`, `secret`,
/// `password`, in any case) is replaced, at any depth. The settings are
/// worth logging (they explain what a task ran with); the key never is.
pub fn for_log(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(name, inner)| {
                    let shown = if is_credential(name) && !inner.is_null() {
                        Value::String("<redacted>".to_owned())
                    } else {
                        for_log(inner)
                    };
                    (name.clone(), shown)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(for_log).collect()),
        other => other.clone(),
    }
}

fn is_credential(name: &str) -> bool {
    let name: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    ["apikey", "token", "secret", "password"]
        .iter()
        .any(|word| name.contains(word))
}

/// The settings files for `root`, highest precedence first (they need
/// not exist).
pub fn files(root: &Path) -> Vec<PathBuf> {
    [Some(root.join(".rein/config.toml")), user_config_file()]
        .into_iter()
        .flatten()
        .collect()
}

fn user_config_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join("rein/config.toml"))
}

fn read_file(path: &Path) -> Result<Option<Settings>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    toml::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{} is not valid: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: `REIN_LOG=debug` logged the editor's settings with the
    /// API key in them (found by the Neovim end-to-end suite).
    #[test]
    fn settings_logged_never_hold_a_credential() {
        let settings = serde_json::json!({
            "provider": "anthropic",
            "apiKey": "sk-ant-SECRET-1",
            "maxTurns": 5,
            "openai": {"api_key": "sk-SECRET-2", "baseUrl": "http://localhost:1"},
            "headers": [{"Auth-Token": "SECRET-3"}],
            "unsetKey": null,
        });
        let shown = for_log(&settings);
        assert!(!shown.to_string().contains("SECRET"), "{shown}");
        assert_eq!(
            shown,
            serde_json::json!({
                "provider": "anthropic",
                "apiKey": "<redacted>",
                "maxTurns": 5,
                "openai": {"api_key": "<redacted>", "baseUrl": "http://localhost:1"},
                "headers": [{"Auth-Token": "<redacted>"}],
                "unsetKey": null,
            })
        );
    }

    #[test]
    fn a_broken_file_is_named_not_ignored() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".rein")).unwrap();
        std::fs::write(
            dir.path().join(".rein/config.toml"),
            "max_turns = \"lots\"\n",
        )
        .unwrap();
        let err = layers(dir.path(), &Value::Null).unwrap_err();
        assert!(err.contains(".rein/config.toml is not valid"), "{err}");
    }

    #[test]
    fn the_editor_layer_comes_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".rein")).unwrap();
        std::fs::write(
            dir.path().join(".rein/config.toml"),
            "provider = \"anthropic\"\nmax_turns = 9\n[permissions]\ndeny = [\"run_command(make deploy:*)\"]\n",
        )
        .unwrap();
        let layers = layers(dir.path(), &serde_json::json!({"maxTurns": 4})).unwrap();
        assert_eq!(layers[0].max_turns, Some(4));
        assert_eq!(layers[1].max_turns, Some(9));
        assert_eq!(
            layers[1].permissions.deny,
            vec!["run_command(make deploy:*)".to_owned()]
        );
    }
}
