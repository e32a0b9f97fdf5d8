//! Everything a task needs beyond its front end, built from configuration:
//! the model client (for the scripted provider, a fake model server started
//! for the task), the agent's configuration, the verifier and the
//! executor. [`TaskSetup`] is the task host's [`Setup`] for every front end
//! (made only by the task service, `service.rs`), so all behave the same;
//! `prepare` is the one place that builds a task's executor, and
//! [`command_launcher`] the one place that builds its sandbox.

use std::any::Any;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use rein_core::agent::AgentConfig;
use rein_core::config::Config;
use rein_core::context::ContextConfig;
use rein_core::diagnostics::DiagnosticVerifier;
use rein_core::exec::Exec;
use rein_core::os::process::{ProcessExec, process_redactor};
use rein_core::os::{instructions, testcmd};
use rein_core::ports::Verifier;
use rein_core::task::{TaskKind, TaskSpec};
use rein_core::task_host::{Prepared, Setup};
use rein_core::testing::command::TestCommand;
use rein_core::tools::TypedTool;
use rein_core::tools::ask_user::AskUser;
use rein_core::verify::{Baseline, TestVerifier};
use rein_core::workspace::Workspace;
use rein_mcp::{McpPool, McpServers, Spawner};
use rein_models::{ApiKey, ModelClient, ProviderConfig, ProviderKind, Redactor, WindowSource};
use rein_scripted::fake_model::{FakeModel, Scenario};
use tokio_util::sync::CancellationToken;

/// The scenario `rein demo` plays when no other is configured.
pub const DEMO_SCENARIO: &str = include_str!("../demo/scenario.json");

/// The set-up of tasks in one workspace, with its configuration; `rein`,
/// the binary every command starts through ([`command_launcher`]).
pub struct TaskSetup<'a> {
    pub root: &'a Path,
    pub config: &'a Config,
    pub rein: &'a Path,
    /// Someone can answer the model's questions (an editor, a terminal
    /// without `--yes`): otherwise the model has no `ask_user`, and is
    /// told nobody answers, instead of waiting forever for an answer.
    pub answers_questions: bool,
    /// Where the task's MCP servers come from: the session's, kept between
    /// tasks (the editor), or one for this task alone (`rein run`).
    pub mcp: &'a McpPool,
}

#[async_trait]
impl Setup for TaskSetup<'_> {
    async fn prepare(
        &self,
        task: &TaskSpec,
        workspace: &dyn Workspace,
        baseline: Option<Baseline>,
        cancel: &CancellationToken,
    ) -> Result<Prepared, String> {
        let mut prepared = prepare(self, task, workspace, baseline, cancel).await?;
        if !self.answers_questions {
            prepared.config.tools = prepared.config.tools.without(AskUser::NAME);
        }
        Ok(prepared)
    }
}

/// The one redactor of a task, for every sink (state, artifacts, logs,
/// trace, what the model is sent): this process's secret-named variables,
/// the configured key and the key shapes. The server's own log learns the
/// same secrets.
pub fn redactor(config: &Config) -> Redactor {
    let key = config
        .provider
        .api_key
        .as_ref()
        .map(|k| k.expose().to_owned());
    let redactor = process_redactor(key);
    crate::logging::redact_also(&redactor);
    redactor
}

/// `baseline`: the verifier's saved baseline, for a resumed task (a new
/// task records one now, before anything changes).
async fn prepare(
    launch: &TaskSetup<'_>,
    task: &TaskSpec,
    workspace: &dyn Workspace,
    baseline: Option<Baseline>,
    cancel: &CancellationToken,
) -> Result<Prepared, String> {
    let TaskSetup {
        root,
        config,
        rein,
        mcp: pool,
        ..
    } = *launch;
    let (model, scripted) = model_client(config).await?;
    let test_command = config
        .test_command
        .clone()
        .or_else(|| testcmd::detect(root))
        .map(|c| c.with_report(config.test_report.clone()));
    let mut agent = AgentConfig::new(config.policy.clone());
    agent.redactor = redactor(config);
    let launcher = command_launcher(rein, root, config)?;
    let exec = Arc::new(
        ProcessExec::new()
            .with_launcher(launcher.clone())
            .with_redactor(agent.redactor.clone()),
    );
    let mut notices = Vec::new();
    let mcp = mcp_tools(root, config, launcher, pool, &mut agent, &mut notices).await;
    agent.budgets = config.budgets.clone();
    agent.test_command = test_command.clone();
    agent.allow_test_edits = config.allow_test_edits;
    agent.harness = config.harness;
    agent.prices = config.provider.prices.clone();
    agent.temperature = Some(config.provider.temperature);
    agent.search = config.search;
    agent.project_instructions = instructions::project_instructions(root);
    let window = context_window(&config.provider).await;
    agent.context = ContextConfig::for_window(window);
    agent.edit_format = config.edit_format.for_window(window);
    let artifacts_dir = root.join(".rein/artifacts").join(&task.id.0);
    let verifier = verifier(
        VerifierFor {
            root,
            config,
            task,
            workspace,
            exec: exec.as_ref(),
            test_command,
            test_timeout: agent.budgets.test_timeout,
            artifacts_dir: &artifacts_dir,
        },
        baseline,
        cancel,
    )
    .await?;
    Ok(Prepared {
        config: agent,
        model,
        verifier,
        exec,
        keep_alive: Some(Box::new((scripted, mcp)) as Box<dyn Any + Send + Sync>),
        notices,
    })
}

/// What a task's verifier is made from.
struct VerifierFor<'a> {
    root: &'a Path,
    config: &'a Config,
    task: &'a TaskSpec,
    workspace: &'a dyn Workspace,
    exec: &'a dyn Exec,
    test_command: Option<TestCommand>,
    test_timeout: std::time::Duration,
    artifacts_dir: &'a Path,
}

/// The task's verifier: the checker's for a fix-diagnostic task (which
/// fails the set-up, saying why, when the diagnostic cannot be checked),
/// the tests' for every other. A new task records its baseline now,
/// before anything changes; a resumed one compares against `baseline`.
async fn verifier(
    v: VerifierFor<'_>,
    baseline: Option<Baseline>,
    cancel: &CancellationToken,
) -> Result<Arc<dyn Verifier>, String> {
    if let TaskKind::FixDiagnostic { diagnostic } = &v.task.kind {
        let setup = crate::fix_error::check_setup(v.root, v.config, diagnostic, v.test_command)?;
        let verifier = match baseline {
            Some(baseline) => DiagnosticVerifier::with_baseline(setup, baseline),
            None => {
                DiagnosticVerifier::prepare(
                    v.task,
                    v.workspace,
                    v.exec,
                    setup,
                    v.artifacts_dir,
                    cancel,
                )
                .await
            }
        }
        .map_err(|e| e.to_string())?;
        return Ok(Arc::new(verifier));
    }
    let verifier = match baseline {
        Some(baseline) => TestVerifier::with_baseline(v.test_command, v.test_timeout, baseline),
        None => {
            TestVerifier::prepare(
                v.task,
                v.workspace,
                v.exec,
                v.test_command,
                v.test_timeout,
                v.artifacts_dir,
                cancel,
            )
            .await
        }
    };
    Ok(Arc::new(verifier))
}

/// The configured MCP servers (in the commands' sandbox), from `pool`:
/// those already running for the session, the others started now; their
/// tools are added to the task's registry. A server that does not start is
/// logged and left out: the task goes on with the tools it has.
async fn mcp_tools(
    root: &Path,
    config: &Config,
    launcher: Arc<crate::confinement::SandboxLauncher>,
    pool: &McpPool,
    agent: &mut AgentConfig,
    notices: &mut Vec<String>,
) -> Option<Arc<McpServers>> {
    // Also with none configured: the pool lets go of servers the settings
    // dropped.
    let started = pool
        .servers(
            &config.mcp_servers,
            &sandbox_key(config),
            &mcp_spawner(root, launcher),
        )
        .await;
    if config.mcp_servers.is_empty() {
        return None;
    }
    for report in &started.reports {
        if let Err(why) = &report.started {
            tracing::warn!(server = %report.name, "MCP server not started: {why}");
            notices.push(format!(
                "{why}. Its tools are not available to this task; `rein doctor` starts it the same way."
            ));
        }
    }
    for tool in started.tools {
        if let Err(error) = agent.tools.add(tool) {
            tracing::warn!("MCP tool not added: {error}");
        }
    }
    agent.tool_updates = Some(started.servers.clone());
    Some(started.servers)
}

/// Starts the servers set to start with the session (`start_with_session`)
/// in the background: the first task then finds them running.
pub fn start_session_servers(
    root: &Path,
    config: &Config,
    rein: &Path,
    pool: Arc<McpPool>,
) -> Result<(), String> {
    let servers: Vec<_> = config
        .mcp_servers
        .iter()
        .filter(|s| s.start_with_session)
        .cloned()
        .collect();
    if servers.is_empty() {
        return Ok(());
    }
    let spawner = mcp_spawner(root, command_launcher(rein, root, config)?);
    let key = sandbox_key(config);
    tokio::spawn(async move { pool.warm(&servers, &key, &spawner).await });
    Ok(())
}

/// What a pooled server's sandbox depends on: a server started under
/// other sandbox settings is not reused.
fn sandbox_key(config: &Config) -> String {
    format!("{:?}", config.sandbox)
}

/// How this binary starts MCP servers: through `launcher`, in the
/// workspace, from this process's environment without its secrets.
pub fn mcp_spawner(root: &Path, launcher: Arc<crate::confinement::SandboxLauncher>) -> Spawner {
    Spawner {
        launcher: Some(launcher),
        root: root.to_path_buf(),
        base_env: rein_core::os::process::scrub_env(std::env::vars_os()),
        lookup: Arc::new(|name| std::env::var(name).ok()),
    }
}

/// The model's context window: configured, else as an OpenAI-compatible
/// server says it runs the model (a local one runs with the window it was
/// started with, often far below the guess; asked for at most a few
/// seconds), else Rein's table, else a guess, said as one.
async fn context_window(provider: &ProviderConfig) -> u64 {
    let (window, source) = rein_models::ask_context_window(provider).await;
    if source == WindowSource::Guessed && provider.provider != ProviderKind::Scripted {
        tracing::warn!(
            model = %provider.model,
            "the context window of this model is not known: assuming {window} tokens; set `context_window` in the settings"
        );
    } else {
        tracing::info!(model = %provider.model, window, %source, "context window");
    }
    window
}

/// The sandbox's launcher for the workspace: how every command and every
/// MCP server process of a task starts.
pub fn command_launcher(
    rein: &Path,
    root: &Path,
    config: &Config,
) -> Result<Arc<crate::confinement::SandboxLauncher>, String> {
    crate::confinement::SandboxLauncher::new(rein, root, &config.sandbox).map(Arc::new)
}

/// This binary, which runs commands as `rein sandbox-exec`. If it cannot be
/// found (deleted under us), a path that does not exist: commands then fail
/// to start rather than run unconfined.
pub fn this_binary() -> std::path::PathBuf {
    std::env::current_exe().unwrap_or_else(|error| {
        tracing::error!(%error, "cannot find Rein's own binary; commands will not run");
        std::path::PathBuf::from("/nonexistent/rein")
    })
}

async fn model_client(
    config: &Config,
) -> Result<(Arc<dyn ModelClient>, Option<FakeModel>), String> {
    let provider = &config.provider;
    if provider.provider != ProviderKind::Scripted {
        return rein_models::build_client(provider)
            .map(|c| (c, None))
            .map_err(|e| e.to_string());
    }
    let scenario = match &provider.scenario {
        Some(path) => Scenario::load(path).map_err(|e| e.to_string())?,
        None => Scenario::from_json(DEMO_SCENARIO)
            .map_err(|e| format!("the bundled demo scenario is invalid: {e}"))?,
    };
    let server = FakeModel::start(scenario)
        .await
        .map_err(|e| e.to_string())?;
    let mut scripted = provider.clone();
    scripted.base_url = server.base_url();
    // The fake server checks that a key is sent, as the real API does.
    scripted.api_key = scripted.api_key.or_else(|| ApiKey::new("scripted-key"));
    let client = rein_models::anthropic_client(&scripted).map_err(|e| e.to_string())?;
    Ok((client, Some(server)))
}

#[cfg(test)]
mod tests {
    use rein_models::GUESSED_WINDOW;
    use rein_scripted::fake_model::ServerInfo;

    use super::*;

    fn local(base_url: String, context_window: Option<u64>) -> ProviderConfig {
        ProviderConfig {
            provider: ProviderKind::OpenAi,
            model: "qwen2.5-coder-7b".into(),
            base_url,
            api_key: None,
            stream: true,
            retry: Default::default(),
            timeouts: Default::default(),
            prices: Default::default(),
            scenario: None,
            context_window,
            temperature: 0.0,
            key_from: None,
        }
    }

    /// A task on a `llama-server -c 4096` is fitted to 4096 tokens, not
    /// to the 200k guess; a configured window still wins; the scripted
    /// model's fake server is not asked.
    #[tokio::test]
    async fn a_task_is_fitted_to_the_window_the_server_states() {
        let scenario = Scenario::new()
            .require_api_key(false)
            .server_info(ServerInfo::new().llama_cpp_n_ctx(4096));
        let server = FakeModel::start(scenario).await.unwrap();
        let base = format!("{}/v1", server.base_url());
        let mut scripted = local(server.base_url(), None);
        scripted.provider = ProviderKind::Scripted;
        let cases = [
            ("from the server", local(base.clone(), None), 4096, 1),
            ("configured", local(base, Some(16_384)), 16_384, 0),
            ("scripted", scripted, GUESSED_WINDOW, 0),
        ];
        for (name, provider, window, asked) in cases {
            let before = server.requests().len();
            assert_eq!(context_window(&provider).await, window, "{name}");
            assert_eq!(server.requests().len() - before, asked, "{name}");
        }
    }
}
