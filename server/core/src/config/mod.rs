//! Rein's settings: one [`Settings`] per source (the editor, the
//! workspace's `.rein/config.toml`, the user's config file), merged by
//! precedence (DESIGN.md §3) with the environment and defaults into a
//! [`Config`]. Reading the files is the front-end's business; this is the
//! merge, in one place, so the editor and the CLI agree.

pub(crate) mod budgets;
pub mod mcp;
pub mod search;
pub(crate) mod settings;

use rein_models::{ConfigError as ProviderError, ProviderConfig, ProviderSettings};

pub(crate) use budgets::{BadNumber, budgets};
pub use settings::{Layer, PermissionSettings, Settings, Source};

use crate::budget::Budgets;
use crate::diagnostics::{CheckCommand, Format};
use crate::harness::{EditFormat, Harness};
use crate::permissions::{Policy, RuleError};
use crate::sandbox_config::{SandboxConfig, SandboxConfigError};
use crate::testing::command::TestCommand;
use crate::trust::{self, Grant};

/// Everything a task needs from configuration.
#[derive(Clone, Debug)]
pub struct Config {
    pub provider: ProviderConfig,
    pub budgets: Budgets,
    pub policy: Policy,
    /// `None`: detect from the project's files.
    pub test_command: Option<TestCommand>,
    /// Where the test command writes JUnit XML reports, if it does.
    pub test_report: Option<String>,
    pub allow_test_edits: bool,
    /// The project's checker for fix-diagnostic tasks (`check_command`
    /// with its `check_format`); `None`: chosen from the diagnostic's
    /// source (`crate::diagnostics::checker_for`).
    pub check_command: Option<CheckCommand>,
    /// A fix-diagnostic task may silence the checker instead of fixing.
    pub allow_suppressions: bool,
    pub harness: Harness,
    /// How the model changes files (`auto` is decided once the model's
    /// window is known).
    pub edit_format: EditFormat,
    /// The model's commands go to an ACP client's terminal (see
    /// `Settings::client_terminal`); only the user's own settings or a
    /// trusted workspace's turn it on.
    pub client_terminal: bool,
    /// When the loop searches with the verifier, and how far.
    pub search: search::SearchConfig,
    /// The sandbox commands run in.
    pub sandbox: SandboxConfig,
    /// The MCP servers a task connects to (a workspace's own only when it
    /// is trusted).
    pub mcp_servers: Vec<mcp::McpServer>,
    /// What the workspace's own settings would have granted and were
    /// ignored because the workspace is not trusted (empty when trusted).
    pub ignored: Vec<Grant>,
    /// The workspace is trusted: its own programs (a checker in
    /// `node_modules/.bin` or `.venv/bin`) may be run as the user's.
    pub workspace_trusted: bool,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    Rule(#[from] RuleError),
    #[error("{name} must be a number, got {value:?}")]
    NotANumber { name: &'static str, value: String },
    #[error(transparent)]
    Sandbox(#[from] SandboxConfigError),
    #[error(
        "test_report must be a path or glob inside the workspace (relative, without `..`), got {0:?}"
    )]
    TestReport(String),
    #[error("harness must be \"full\" or \"naive\", got {0:?}")]
    BadHarness(String),
    #[error("edit_format must be \"auto\", \"tools\" or \"whole\", got {0:?}")]
    BadEditFormat(String),
    #[error(transparent)]
    Mcp(#[from] mcp::McpConfigError),
    #[error("{0}")]
    Check(String),
    #[error("search must be \"off\", \"on_failure\" or \"always\", got {0:?}")]
    BadSearch(String),
    #[error("search_candidates must be 1 to {max}, got {0}", max = search::MAX_CANDIDATES)]
    BadSearchCandidates(u32),
}

impl From<search::BadSearch> for ConfigError {
    fn from(bad: search::BadSearch) -> Self {
        match bad {
            search::BadSearch::Mode(text) => ConfigError::BadSearch(text),
            search::BadSearch::Candidates(n) => ConfigError::BadSearchCandidates(n),
        }
    }
}

impl From<BadNumber> for ConfigError {
    fn from(BadNumber { name, value }: BadNumber) -> Self {
        ConfigError::NotANumber { name, value }
    }
}

impl Config {
    /// Merges `layers` (highest precedence first) with the environment.
    /// When the workspace is not `trusted`, its own layer only tightens
    /// ([`crate::trust`]): its deny and ask rules apply, its budgets apply
    /// where lower, and everything else it sets is listed in
    /// [`Config::ignored`].
    pub fn resolve(
        layers: &[Layer],
        env: &dyn Fn(&str) -> Option<String>,
        trusted: bool,
    ) -> Result<Self, ConfigError> {
        let honoured: Vec<&Settings> = layers
            .iter()
            .filter(|l| trusted || !l.is_workspace())
            .map(|l| &l.settings)
            .collect();
        let restricted: Vec<&Settings> = layers
            .iter()
            .filter(|l| !trusted && l.is_workspace())
            .map(|l| &l.settings)
            .collect();

        let providers: Vec<ProviderSettings> = layers
            .iter()
            .filter(|l| trusted || !l.is_workspace())
            .map(|l| ProviderSettings {
                origin: Some(l.source.describe().to_owned()),
                ..l.settings.provider.clone()
            })
            .collect();
        let provider = ProviderConfig::resolve(&providers, env)?;

        let mut budgets = budgets(&honoured, env)?;
        // A model without a price cannot be held to a USD budget; say so
        // by not pretending to.
        if provider.prices.lookup(&provider.model).is_none()
            && honoured.iter().all(|l| l.max_cost_usd.is_none())
        {
            budgets.max_cost_usd = None;
        }
        for layer in &restricted {
            trust::tighten(&mut budgets, layer);
        }

        // Permission rules from every honoured layer apply (a deny anywhere
        // is a deny); an untrusted workspace adds only deny and ask rules.
        let collect = |get: fn(&PermissionSettings) -> &Vec<String>, untrusted_too: bool| {
            honoured
                .iter()
                .chain(restricted.iter().filter(|_| untrusted_too))
                .flat_map(|l| get(&l.permissions).iter().cloned())
                .collect::<Vec<String>>()
        };
        let sandbox = SandboxConfig::resolve(
            &honoured.iter().map(|l| &l.sandbox).collect::<Vec<_>>(),
            &restricted.iter().map(|l| &l.sandbox).collect::<Vec<_>>(),
            env("HOME").as_deref(),
        )?;
        let policy = Policy::from_config(
            &collect(|p| &p.allow, false),
            &collect(|p| &p.ask, true),
            &collect(|p| &p.deny, true),
            &crate::tools::builtin(),
        )?
        .with_sandbox_auto_approve(sandbox.auto_approve)
        .with_sandbox_rules(crate::permissions::sandbox::SandboxRules::new(
            &sandbox.rules,
        ));

        let allow_test_edits = honoured
            .iter()
            .find_map(|l| l.allow_test_edits)
            .unwrap_or(false)
            && !restricted.iter().any(|l| l.allow_test_edits == Some(false));

        // Only the user's own settings (or a trusted workspace's) weaken the harness.
        let harness = match honoured.iter().find_map(|l| l.harness.as_deref()) {
            Some(text) => {
                Harness::parse(text).ok_or_else(|| ConfigError::BadHarness(text.to_owned()))?
            }
            None => Harness::Full,
        };

        let edit_format = match honoured.iter().find_map(|l| l.edit_format.as_deref()) {
            Some(text) => EditFormat::parse(text)
                .ok_or_else(|| ConfigError::BadEditFormat(text.to_owned()))?,
            None => EditFormat::Auto,
        };

        let mcp_servers = mcp::resolve(
            &layers
                .iter()
                .filter(|l| trusted || !l.is_workspace())
                .map(|l| (&l.settings.mcp_servers, l.is_workspace()))
                .collect::<Vec<_>>(),
        )?;

        let search = restricted.iter().fold(
            search::SearchConfig::resolve(&honoured)?,
            |search, layer| search.tightened(layer),
        );
        let check_command = check_command(&honoured)?;
        let allow_suppressions = honoured
            .iter()
            .find_map(|l| l.allow_suppressions)
            .unwrap_or(false)
            && !restricted
                .iter()
                .any(|l| l.allow_suppressions == Some(false));

        let test_report = honoured.iter().find_map(|l| l.test_report.clone());
        if let Some(report) = &test_report
            && !crate::os::junit::valid_pattern(report)
        {
            return Err(ConfigError::TestReport(report.clone()));
        }

        Ok(Self {
            provider,
            budgets,
            policy,
            test_report,
            test_command: honoured
                .iter()
                .find_map(|l| l.test_command.clone())
                .map(|c| TestCommand::custom(&c)),
            allow_test_edits,
            check_command,
            allow_suppressions,
            harness,
            edit_format,
            client_terminal: honoured
                .iter()
                .find_map(|l| l.client_terminal)
                .unwrap_or(false),
            search,
            sandbox,
            mcp_servers,
            ignored: if trusted {
                Vec::new()
            } else {
                trust::grants(layers, env)
            },
            workspace_trusted: trusted,
        })
    }
}

/// `check_command` with the `check_format` that says how to read it, from
/// the honoured layers (each the first that sets it).
fn check_command(honoured: &[&Settings]) -> Result<Option<CheckCommand>, ConfigError> {
    let command = honoured
        .iter()
        .find_map(|l| l.check_command.clone())
        .filter(|c| !c.trim().is_empty());
    let format = honoured.iter().find_map(|l| l.check_format.clone());
    let format = match format {
        Some(name) => Some(Format::parse(&name).ok_or_else(|| {
            ConfigError::Check(format!(
                "check_format must be one of {}, got {name:?}",
                Format::names()
            ))
        })?),
        None => None,
    };
    match (command, format) {
        (Some(command), Some(format)) => Ok(Some(CheckCommand { command, format })),
        (Some(_), None) => Err(ConfigError::Check(format!(
            "check_command needs check_format, how Rein reads its output: one of {}",
            Format::names()
        ))),
        (None, _) => Ok(None),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::permissions::Decision;

    /// An environment of fixed pairs (tests never touch the real one).
    pub(crate) fn env(
        pairs: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn layers_merge_by_precedence() {
        let editor: Settings =
            serde_json::from_str(r#"{"maxTurns": 5, "testCommand": "make test T={target}"}"#)
                .unwrap();
        let workspace: Settings = serde_json::from_str(
            r#"{"provider": "openai", "base_url": "http://localhost:11434/v1", "model": "qwen2.5-coder:7b", "max_turns": 9, "permissions": {"deny": ["run_command(make deploy:*)"]}}"#,
        )
        .unwrap();
        let layers = [
            Layer {
                source: Source::Editor,
                settings: editor,
            },
            Layer {
                source: Source::Workspace {
                    fingerprint: "f".into(),
                },
                settings: workspace,
            },
        ];
        let config = Config::resolve(&layers, &env(&[("REIN_MAX_TURNS", "30")]), true).unwrap();
        assert_eq!(config.budgets.max_turns, 5);
        assert_eq!(config.provider.model, "qwen2.5-coder:7b");
        // A local model has no price: no USD budget rather than a false one.
        assert_eq!(config.budgets.max_cost_usd, None);
        assert_eq!(
            config
                .test_command
                .unwrap()
                .for_target(crate::testtarget::TestTarget::parse("t").unwrap().as_ref()),
            "make test T=t"
        );
        assert_eq!(
            config
                .policy
                .check(&crate::tools::run_command::action("make deploy --prod"))
                .decision,
            Decision::Deny
        );
    }

    #[test]
    fn a_check_command_says_how_its_output_is_read() {
        let resolve = |json: &str| {
            let settings: Settings = serde_json::from_str(json).unwrap();
            let layers = [Layer {
                source: Source::User,
                settings,
            }];
            Config::resolve(&layers, &env(&[("ANTHROPIC_API_KEY", "k")]), false)
        };
        let config = resolve(
            r#"{"checkCommand": "make lint", "checkFormat": "lines", "allowSuppressions": true}"#,
        )
        .unwrap();
        assert_eq!(
            config.check_command,
            Some(CheckCommand {
                command: "make lint".into(),
                format: Format::Lines
            })
        );
        assert!(config.allow_suppressions);
        let missing = resolve(r#"{"check_command": "make lint"}"#).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "check_command needs check_format, how Rein reads its output: one of cargo-json, pyright-json, mypy-json, tsc, ruff-json, eslint-json, lines"
        );
        let bad = resolve(r#"{"check_command": "x", "check_format": "json"}"#).unwrap_err();
        assert!(
            bad.to_string().starts_with("check_format must be one of"),
            "{bad}"
        );
        assert_eq!(resolve("{}").unwrap().check_command, None);
    }

    #[test]
    fn the_environment_fills_in_and_bad_numbers_are_named() {
        let config = Config::resolve(
            &[],
            &env(&[
                ("ANTHROPIC_API_KEY", "k"),
                ("REIN_MAX_TURNS", "7"),
                ("REIN_MAX_COST_USD", "0.5"),
            ]),
            false,
        )
        .unwrap();
        assert_eq!(
            (config.budgets.max_turns, config.budgets.max_cost_usd),
            (7, Some(0.5))
        );
        let err = Config::resolve(
            &[],
            &env(&[("ANTHROPIC_API_KEY", "k"), ("REIN_MAX_TURNS", "many")]),
            false,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "REIN_MAX_TURNS must be a number, got \"many\""
        );
    }
}
