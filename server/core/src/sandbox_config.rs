//! The `[sandbox]` settings: how much the commands of a workspace may do
//! (the kernel enforces it; see the `rein-sandbox` crate), merged over the
//! layers like every other setting, with an untrusted workspace's file
//! only tightening.

use std::path::PathBuf;

use serde::Deserialize;

pub use crate::exec::SandboxMode;

/// One layer's `[sandbox]` table (camelCase from an editor).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SandboxSettings {
    /// `workspace-write` (default), `read-only` or `off`.
    pub mode: Option<String>,
    /// Commands the defaults would ask about run without a prompt when the
    /// full sandbox confines them.
    #[serde(alias = "autoApprove")]
    pub auto_approve: Option<bool>,
    #[serde(alias = "writableRoots")]
    pub writable_roots: Vec<String>,
    #[serde(alias = "readableRoots")]
    pub readable_roots: Vec<String>,
    #[serde(alias = "denyRead")]
    pub deny_read: Vec<String>,
    #[serde(alias = "maxProcesses")]
    pub max_processes: Option<u64>,
    #[serde(alias = "maxFileMb")]
    pub max_file_mb: Option<u64>,
    #[serde(alias = "maxMemoryMb")]
    pub max_memory_mb: Option<u64>,
    /// Modes for some commands (`[[sandbox.rules]]`): the first whose
    /// `command` pattern (the permission rules' syntax, `docker:*`)
    /// matches the whole command decides its mode.
    pub rules: Vec<SandboxRuleSettings>,
}

/// One `[[sandbox.rules]]` entry.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SandboxRuleSettings {
    pub command: String,
    pub mode: String,
}

/// The sandbox a task's commands run in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxConfig {
    pub mode: SandboxMode,
    pub auto_approve: bool,
    pub writable_roots: Vec<PathBuf>,
    pub readable_roots: Vec<PathBuf>,
    pub deny_read: Vec<PathBuf>,
    pub max_processes: Option<u64>,
    pub max_file_bytes: Option<u64>,
    pub max_memory_bytes: Option<u64>,
    /// (command pattern, mode), first match wins.
    pub rules: Vec<(String, SandboxMode)>,
}

/// The processes (and threads) a command may have by default: a test
/// suite's workers and a compiler's threads fit, a fork bomb stops.
pub const DEFAULT_MAX_PROCESSES: u64 = 2048;
/// The largest file a command may write by default.
pub const DEFAULT_MAX_FILE_MB: u64 = 4096;

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            mode: SandboxMode::WorkspaceWrite,
            auto_approve: false,
            writable_roots: Vec::new(),
            readable_roots: Vec::new(),
            deny_read: Vec::new(),
            max_processes: Some(DEFAULT_MAX_PROCESSES),
            max_file_bytes: Some(DEFAULT_MAX_FILE_MB << 20),
            max_memory_bytes: None,
            rules: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SandboxConfigError {
    #[error("sandbox.mode must be workspace-write, read-only or off, got {0:?}")]
    Mode(String),
    #[error("sandbox path {0:?} must be absolute (or start with ~/)")]
    Path(String),
    #[error("sandbox rule for {command:?}: {why}")]
    Rule { command: String, why: String },
}

impl SandboxConfig {
    /// `layers` (highest first) over the defaults; `restricted` are layers
    /// that may only tighten (an untrusted workspace's). `home` expands
    /// `~/`.
    pub fn resolve(
        layers: &[&SandboxSettings],
        restricted: &[&SandboxSettings],
        home: Option<&str>,
    ) -> Result<Self, SandboxConfigError> {
        let mut config = Self::default();
        if let Some(mode) = layers.iter().find_map(|l| l.mode.as_deref()) {
            config.mode =
                SandboxMode::parse(mode).ok_or_else(|| SandboxConfigError::Mode(mode.into()))?;
        }
        if let Some(auto) = layers.iter().find_map(|l| l.auto_approve) {
            config.auto_approve = auto;
        }
        let paths = |get: fn(&SandboxSettings) -> &Vec<String>,
                     from: &[&SandboxSettings]|
         -> Result<Vec<PathBuf>, SandboxConfigError> {
            from.iter()
                .flat_map(|l| get(l).iter())
                .map(|p| expand(p, home))
                .collect()
        };
        config.writable_roots = paths(|l| &l.writable_roots, layers)?;
        config.readable_roots = paths(|l| &l.readable_roots, layers)?;
        config.deny_read = paths(|l| &l.deny_read, layers)?;
        if let Some(n) = layers.iter().find_map(|l| l.max_processes) {
            config.max_processes = Some(n);
        }
        if let Some(mb) = layers.iter().find_map(|l| l.max_file_mb) {
            config.max_file_bytes = Some(mb.saturating_mul(1 << 20));
        }
        if let Some(mb) = layers.iter().find_map(|l| l.max_memory_mb) {
            config.max_memory_bytes = Some(mb.saturating_mul(1 << 20));
        }
        for rule in layers.iter().flat_map(|l| l.rules.iter()) {
            config.rules.push(parse_rule(rule)?);
        }
        for layer in restricted {
            config.tighten(layer, home)?;
        }
        Ok(config)
    }

    /// What an untrusted layer may do: a stricter mode, no auto-approval,
    /// more paths out of reach, lower limits.
    fn tighten(
        &mut self,
        layer: &SandboxSettings,
        home: Option<&str>,
    ) -> Result<(), SandboxConfigError> {
        if let Some(mode) = layer.mode.as_deref().and_then(SandboxMode::parse) {
            self.mode = self.mode.max(mode);
        }
        if layer.auto_approve == Some(false) {
            self.auto_approve = false;
        }
        // Only rules that make a command stricter than it would be.
        for rule in &layer.rules {
            let (command, mode) = parse_rule(rule)?;
            if mode > self.mode {
                self.rules.insert(0, (command, mode));
            }
        }
        for path in &layer.deny_read {
            self.deny_read.push(expand(path, home)?);
        }
        let lower = |mine: &mut Option<u64>, theirs: Option<u64>| {
            if let Some(theirs) = theirs {
                *mine = Some(mine.map_or(theirs, |m| m.min(theirs)));
            }
        };
        lower(&mut self.max_processes, layer.max_processes);
        lower(
            &mut self.max_file_bytes,
            layer.max_file_mb.map(|mb| mb.saturating_mul(1 << 20)),
        );
        lower(
            &mut self.max_memory_bytes,
            layer.max_memory_mb.map(|mb| mb.saturating_mul(1 << 20)),
        );
        Ok(())
    }
}

/// What an untrusted layer's `[sandbox]` would loosen, for the trust
/// question: `(setting, effect)`.
pub fn loosening(layer: &SandboxSettings, mine: &SandboxConfig) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(mode) = layer.mode.as_deref().and_then(SandboxMode::parse)
        && mode < mine.mode
    {
        out.push((
            "sandbox.mode".to_owned(),
            format!(
                "loosen the sandbox to {} (yours: {})",
                mode.name(),
                mine.mode.name()
            ),
        ));
    }
    for rule in &layer.rules {
        if let Ok((command, mode)) = parse_rule(rule)
            && mode < mine.mode
        {
            out.push((
                "sandbox.rules".to_owned(),
                format!(
                    "run `{}` with the sandbox {}",
                    crate::inert::shown(&command),
                    mode.name()
                ),
            ));
        }
    }
    if layer.auto_approve == Some(true) && !mine.auto_approve {
        out.push((
            "sandbox.auto_approve".to_owned(),
            "run commands inside the sandbox without asking".to_owned(),
        ));
    }
    for path in &layer.writable_roots {
        out.push((
            "sandbox.writable_roots".to_owned(),
            format!("let commands write {}", crate::inert::shown(path)),
        ));
    }
    for path in &layer.readable_roots {
        out.push((
            "sandbox.readable_roots".to_owned(),
            format!("let commands read {}", crate::inert::shown(path)),
        ));
    }
    // Only a limit both set can be raised: without one of yours, the
    // workspace's is the only limit, which tightens.
    let raised = |theirs: Option<u64>, yours: Option<u64>| matches!((theirs, yours), (Some(t), Some(y)) if t > y);
    let mb = |m: Option<u64>| m.map(|m| m.saturating_mul(1 << 20));
    for (setting, effect, theirs, yours) in [
        (
            "max_processes",
            "raise the process limit",
            layer.max_processes,
            mine.max_processes,
        ),
        (
            "max_file_mb",
            "raise the file size limit",
            mb(layer.max_file_mb),
            mine.max_file_bytes,
        ),
        (
            "max_memory_mb",
            "raise the memory limit",
            mb(layer.max_memory_mb),
            mine.max_memory_bytes,
        ),
    ] {
        if raised(theirs, yours) {
            out.push((format!("sandbox.{setting}"), effect.to_owned()));
        }
    }
    out
}

fn parse_rule(rule: &SandboxRuleSettings) -> Result<(String, SandboxMode), SandboxConfigError> {
    let mode = SandboxMode::parse(&rule.mode).ok_or_else(|| SandboxConfigError::Rule {
        command: rule.command.clone(),
        why: format!(
            "mode must be workspace-write, read-only or off, got {:?}",
            rule.mode
        ),
    })?;
    let command = rule.command.trim();
    if command.is_empty() {
        return Err(SandboxConfigError::Rule {
            command: rule.command.clone(),
            why: "the command pattern is empty".to_owned(),
        });
    }
    crate::permissions::sandbox::check_rule_pattern(command).map_err(|why| {
        SandboxConfigError::Rule {
            command: rule.command.clone(),
            why,
        }
    })?;
    Ok((command.to_owned(), mode))
}

fn expand(path: &str, home: Option<&str>) -> Result<PathBuf, SandboxConfigError> {
    let path = path.trim();
    if let Some(rest) = path.strip_prefix("~/") {
        return home
            .map(|h| PathBuf::from(h).join(rest))
            .ok_or_else(|| SandboxConfigError::Path(path.to_owned()));
    }
    let p = PathBuf::from(path);
    if p.is_absolute() {
        Ok(p)
    } else {
        Err(SandboxConfigError::Path(path.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(toml: &str) -> SandboxSettings {
        toml::from_str(toml).unwrap()
    }

    #[test]
    fn layers_merge_and_an_untrusted_one_only_tightens() {
        let user = layer(
            "mode = \"workspace-write\"\nauto_approve = true\nmax_processes = 500\nwritable_roots = [\"~/.local/share/app\"]\n",
        );
        let repo = layer(
            "mode = \"off\"\nauto_approve = true\nmax_processes = 100000\nwritable_roots = [\"/etc\"]\ndeny_read = [\"~/notes\"]\nmax_file_mb = 10\n",
        );
        let config = SandboxConfig::resolve(&[&user], &[&repo], Some("/home/u")).unwrap();
        assert_eq!(config.mode, SandboxMode::WorkspaceWrite);
        assert!(config.auto_approve, "the user's own setting stands");
        assert_eq!(config.max_processes, Some(500));
        assert_eq!(config.max_file_bytes, Some(10 << 20));
        assert_eq!(
            config.writable_roots,
            [PathBuf::from("/home/u/.local/share/app")]
        );
        assert_eq!(config.deny_read, [PathBuf::from("/home/u/notes")]);
        let stricter = layer("mode = \"read-only\"\nauto_approve = false\n");
        let config = SandboxConfig::resolve(&[&user], &[&stricter], Some("/home/u")).unwrap();
        assert_eq!(
            (config.mode, config.auto_approve),
            (SandboxMode::ReadOnly, false)
        );

        let loose: Vec<String> = loosening(
            &repo,
            &SandboxConfig::resolve(&[&user], &[], Some("/home/u")).unwrap(),
        )
        .into_iter()
        .map(|(s, _)| s)
        .collect();
        assert_eq!(
            loose,
            [
                "sandbox.mode",
                "sandbox.writable_roots",
                "sandbox.max_processes"
            ]
        );
    }

    #[test]
    fn rules_give_some_commands_their_own_mode() {
        let user = layer("[[rules]]\ncommand = \"docker:*\"\nmode = \"off\"\n");
        let repo = layer(
            "[[rules]]\ncommand = \"make:*\"\nmode = \"off\"\n[[rules]]\ncommand = \"npm publish:*\"\nmode = \"read-only\"\n",
        );
        let config = SandboxConfig::resolve(&[&user], &[&repo], None).unwrap();
        let rules = crate::permissions::sandbox::SandboxRules::new(&config.rules);
        assert_eq!(rules.mode_for("docker run -it x"), Some(SandboxMode::Off));
        assert_eq!(rules.mode_for("npm publish"), Some(SandboxMode::ReadOnly));
        assert_eq!(
            rules.mode_for("make test"),
            None,
            "an untrusted rule may not loosen"
        );
        assert_eq!(
            rules.mode_for("docker run x && curl evil"),
            None,
            "all of the command"
        );
        assert_eq!(
            SandboxConfig::resolve(
                &[&layer("[[rules]]\ncommand = \"x\"\nmode = \"none\"\n")],
                &[],
                None
            )
            .unwrap_err()
            .to_string(),
            "sandbox rule for \"x\": mode must be workspace-write, read-only or off, got \"none\""
        );
    }

    #[test]
    fn bad_values_are_named() {
        assert_eq!(
            SandboxConfig::resolve(&[&layer("mode = \"yolo\"\n")], &[], None).unwrap_err(),
            SandboxConfigError::Mode("yolo".into())
        );
        assert_eq!(
            SandboxConfig::resolve(&[&layer("writable_roots = [\"cache\"]\n")], &[], None)
                .unwrap_err(),
            SandboxConfigError::Path("cache".into())
        );
    }
}
