//! Settings as each source gives them: one [`Layer`] per source (the
//! editor, the workspace's `.rein/config.toml`, the user's config file),
//! with where it came from. Data only; merging them is `config/mod.rs`.

use rein_models::ProviderSettings;
use serde::Deserialize;

use std::collections::BTreeMap;

use super::mcp::McpServerSettings;
use crate::sandbox_config::SandboxSettings;

/// One source of settings. Every field is optional. Editors send JSON in
/// camelCase; TOML files use snake_case; both are accepted.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Settings {
    #[serde(flatten)]
    pub provider: ProviderSettings,
    #[serde(alias = "maxTurns")]
    pub max_turns: Option<u32>,
    #[serde(alias = "maxCostUsd")]
    pub max_cost_usd: Option<f64>,
    /// Wall time per task; fractions are allowed (`0.5` is 30 s).
    #[serde(alias = "maxMinutes")]
    pub max_minutes: Option<f64>,
    #[serde(alias = "maxTokens")]
    pub max_tokens: Option<u64>,
    /// The test command, with `{target}` where the target goes.
    #[serde(alias = "testCommand")]
    pub test_command: Option<String>,
    /// JUnit XML files the test command writes (a workspace-relative path
    /// or glob), read when its output does not name the tests.
    #[serde(alias = "testReport")]
    pub test_report: Option<String>,
    #[serde(alias = "allowTestEdits")]
    pub allow_test_edits: Option<bool>,
    /// The command that checks the project (reports its diagnostics), for
    /// "Fix this error" tasks; needs `check_format`.
    #[serde(alias = "checkCommand")]
    pub check_command: Option<String>,
    /// How `check_command`'s output is read: `cargo-json`,
    /// `pyright-json`, `mypy-json`, `tsc`, `ruff-json`, `eslint-json` or
    /// `lines` (`crate::diagnostics::Format`).
    #[serde(alias = "checkFormat")]
    pub check_format: Option<String>,
    /// A fix-diagnostic task may silence the checker (a suppression
    /// comment, its configuration) instead of fixing the cause.
    #[serde(alias = "allowSuppressions")]
    pub allow_suppressions: Option<bool>,
    /// `full` (the default) or `naive` (for measuring the harness, see
    /// `crate::harness`).
    pub harness: Option<String>,
    /// `auto` (the default), `tools` or `whole` (see
    /// `crate::harness::EditFormat`).
    #[serde(alias = "editFormat")]
    pub edit_format: Option<String>,
    /// In an ACP agent panel that offers a terminal: the model's commands
    /// run there, where the user sees them, and outside Rein's sandbox
    /// (the tests and the verifier's checks stay in it).
    #[serde(alias = "clientTerminal")]
    pub client_terminal: Option<bool>,
    /// `off`, `on_failure` (the default) or `always`: when the loop
    /// searches with the verifier (`crate::config::search`).
    pub search: Option<String>,
    /// How many candidate fixes one search may sample.
    #[serde(alias = "searchCandidates")]
    pub search_candidates: Option<u32>,
    /// Where the search's sampler seeds start (a measured round's seed).
    #[serde(alias = "searchSeed")]
    pub search_seed: Option<u64>,
    pub permissions: PermissionSettings,
    pub sandbox: SandboxSettings,
    /// `[mcp_servers.<name>]` (and a project's `.mcp.json`, read into the
    /// workspace's layer).
    #[serde(alias = "mcpServers")]
    pub mcp_servers: BTreeMap<String, McpServerSettings>,
    /// Keys that are no setting (a misspelling, a table Rein never had):
    /// a settings file holding one is refused rather than half-applied.
    /// Last, so the provider's settings have taken theirs first.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, serde::de::IgnoredAny>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct PermissionSettings {
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
}

/// Where a layer of settings came from. Trust is a property of the
/// source, not of each setting: the workspace's own file comes with the
/// repository, so what it may set depends on the user's decision
/// ([`crate::trust`]); the editor's settings and the user's config file are
/// the user's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Editor,
    /// `<workspace>/.rein/config.toml`; `fingerprint` is the hash of the
    /// exact bytes parsed, so a decision about one text never covers another.
    Workspace {
        fingerprint: String,
    },
    User,
}

/// One layer of settings and where it came from.
#[derive(Clone, Debug)]
pub struct Layer {
    pub source: Source,
    pub settings: Settings,
}

impl Source {
    /// Where the settings are, for a message that sends the user there.
    pub fn describe(&self) -> &'static str {
        match self {
            Source::Editor => {
                "the editor's settings (VS Code: Rein: Set API Key; Neovim: vim.g.rein.apiKey)"
            }
            Source::Workspace { .. } => "the workspace's .rein/config.toml",
            Source::User => "your Rein config file (~/.config/rein/config.toml)",
        }
    }
}

impl Layer {
    pub fn is_workspace(&self) -> bool {
        matches!(self.source, Source::Workspace { .. })
    }
}
