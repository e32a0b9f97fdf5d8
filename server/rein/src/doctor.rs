//! `rein doctor` (DESIGN.md §2): what Rein would run with in a workspace,
//! and whether it can. Each check prints one line: `ok`, `warn` (works,
//! but probably not as meant), `FAIL` (a task would not start or would
//! fail) or `info`. Exit 0 without a `FAIL`, 1 with one, 2 on bad usage.
//!
//! It reads and asks; it never changes anything: no task state is
//! created, no model is called (the reachability check lists the
//! provider's models, and an OpenAI-compatible server is asked its
//! context window, as a task's launch asks it: neither costs tokens).
//!
//! Its lines quote the workspace's settings, paths and the provider's
//! answers: they are printed inert (`terminal::inert`), and a line that
//! spans several is indented after its first, so no setting can fake an
//! `ok` line.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use rein_core::config::Config;
use rein_core::exec::Confinement;
use rein_core::harness::EditFormat;
use rein_core::os::testcmd;
use rein_core::testing::command::{Runner, TestCommand};
use rein_models::{ProviderConfig, ProviderKind, WindowSource};
use serde_json::Value;

use rein_core::trust::{Trust, TrustSource};

use crate::cli::DoctorArgs;
use rein_app::settings::{self, Assessment, WORKSPACE_FILE};
use rein_core::inert;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Ok,
    Warn,
    Fail,
    Info,
}

impl Level {
    fn label(self) -> &'static str {
        match self {
            Level::Ok => "ok  ",
            Level::Warn => "warn",
            Level::Fail => "FAIL",
            Level::Info => "info",
        }
    }
}

struct Report {
    lines: Vec<(Level, String)>,
}

impl Report {
    fn add(&mut self, level: Level, text: impl Into<String>) {
        self.lines.push((level, text.into()));
    }

    fn failed(&self) -> bool {
        self.lines.iter().any(|(level, _)| *level == Level::Fail)
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for (level, text) in &self.lines {
            let text = inert::block(text);
            let mut lines = text.lines();
            out.push_str(&format!(
                "{} {}\n",
                level.label(),
                lines.next().unwrap_or_default()
            ));
            for more in lines {
                out.push_str(&format!("     {more}\n"));
            }
        }
        out
    }
}

pub fn main(args: DoctorArgs) -> ExitCode {
    let given = match args.workspace {
        Some(dir) => dir,
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!("rein doctor: no current directory: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let root = match given.canonicalize() {
        Ok(root) if root.is_dir() => root,
        Ok(_) => {
            eprintln!(
                "rein doctor: {} is not a folder",
                inert::line(&given.display().to_string())
            );
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!(
                "rein doctor: the workspace {}: {e}",
                inert::line(&given.display().to_string())
            );
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("rein doctor: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let report = runtime.block_on(examine(&root));
    // stdout is the report (like `rein run`'s result), so it can be piped.
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(report.render().as_bytes());
    let _ = stdout.flush();
    if report.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

async fn examine(root: &Path) -> Report {
    let mut report = Report { lines: Vec::new() };
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "rein".into());
    report.add(
        Level::Ok,
        format!("rein {} ({exe})", env!("CARGO_PKG_VERSION")),
    );
    report.add(Level::Info, format!("workspace {}", root.display()));

    let (config, workspace_trusted) = configuration(root, &mut report);
    if let Some(config) = &config {
        provider(&config.provider, config.edit_format, &mut report).await;
        tests(
            root,
            config.test_command.as_ref(),
            config.test_report.as_deref(),
            &mut report,
        );
    }
    state(root, &mut report);
    sandbox(root, config.as_ref(), workspace_trusted, &mut report);
    if let Some(config) = &config {
        mcp_servers(root, config, &mut report).await;
    }
    report.add(
        Level::Info,
        "editors: Neovim checks its side with `:checkhealth rein`; VS Code shows the server's log in Output › Rein",
    );
    report
}

/// The settings files and their merge (`None` when a task could not
/// start), and whether the workspace's own settings are trusted.
fn configuration(root: &Path, report: &mut Report) -> (Option<Config>, bool) {
    for file in settings::files(root) {
        let shown = shown_path(root, &file);
        if file.is_file() {
            report.add(Level::Ok, format!("settings file {shown}"));
        } else {
            report.add(Level::Info, format!("settings file {shown}: none"));
        }
    }
    let assessment = match Assessment::of(root, &Value::Null) {
        Ok(assessment) => assessment,
        Err(message) => {
            report.add(Level::Fail, format!("configuration: {message}"));
            return (None, false);
        }
    };
    // Never asks and never uses what an untrusted file sets: the provider
    // check below must not reach an endpoint the repository chose.
    let state = settings::user_state();
    let trust = assessment
        .known_trust(root, None, state.as_ref())
        .unwrap_or(Trust {
            trusted: false,
            why: TrustSource::NoAnswer,
        });
    workspace_trust(&assessment, &trust, report);
    match assessment.config(&trust) {
        Ok(config) => (Some(config), trust.trusted),
        Err(message) => {
            report.add(Level::Fail, format!("configuration: {message}"));
            (None, trust.trusted)
        }
    }
}

/// Whether the workspace's own settings count, and what is ignored if not.
fn workspace_trust(assessment: &Assessment, trust: &Trust, report: &mut Report) {
    if assessment.fingerprint().is_none() {
        report.add(
            Level::Ok,
            format!("workspace trust: not needed (no {WORKSPACE_FILE})"),
        );
        return;
    }
    if trust.why == TrustSource::NotNeeded {
        report.add(
            Level::Ok,
            format!(
                "workspace trust: not needed ({WORKSPACE_FILE} only tightens: deny rules, lower budgets)"
            ),
        );
        return;
    }
    if trust.trusted {
        report.add(Level::Ok, format!("workspace trust: {}", trust.describe()));
        return;
    }
    report.add(
        Level::Warn,
        format!(
            "workspace trust: {}; ignoring what {WORKSPACE_FILE} would grant (trust it with `rein trust` once you have read it):",
            trust.describe()
        ),
    );
    for grant in &assessment.grants {
        report.add(Level::Warn, format!("  ignored: {grant}"));
    }
}

/// How the model will change files, as a task decides it for this window.
fn edit_format_line(setting: EditFormat, window: u64) -> String {
    let chosen = setting.for_window(window);
    let why = match (setting, chosen) {
        (EditFormat::Auto, EditFormat::Whole) => format!(
            " (edit_format = \"auto\": the window is under {} tokens)",
            rein_core::harness::WHOLE_BELOW_WINDOW
        ),
        (EditFormat::Auto, _) => " (edit_format = \"auto\")".to_owned(),
        _ => format!(" (edit_format = {:?})", setting.name()),
    };
    match chosen {
        EditFormat::Whole => format!("edits: whole files written in the reply, three tools{why}"),
        _ => format!("edits: through the tools{why}"),
    }
}

async fn provider(config: &ProviderConfig, edit_format: EditFormat, report: &mut Report) {
    let key = match (&config.api_key, config.provider) {
        (_, ProviderKind::Scripted) => "",
        (Some(_), _) => " · API key set (hidden)",
        (None, _) => " · no API key",
    };
    report.add(
        Level::Ok,
        format!(
            "provider {} · model {} · {}{key}",
            config.provider.name(),
            config.model,
            if config.provider == ProviderKind::Scripted {
                "the offline demo model"
            } else {
                config.base_url.as_str()
            }
        ),
    );
    if config.provider == ProviderKind::Scripted {
        report.add(Level::Ok, "reachable: the scripted model runs inside rein");
        return;
    }
    let (window, source) = rein_models::ask_context_window(config).await;
    match (window, source) {
        // Not the settings, the server (when there is one to ask) nor the table.
        (window, WindowSource::Guessed) => report.add(
            Level::Warn,
            format!(
                "context window: not known for this model; Rein assumes {window} tokens. Set `context_window` (e.g. the server's --ctx-size) so the prompt fits"
            ),
        ),
        // Configured, from the server (naming what said it), or the table.
        (window, source) => {
            report.add(
                Level::Ok,
                format!("context window: {window} tokens ({source})"),
            );
        }
    }
    report.add(Level::Ok, edit_format_line(edit_format, window));
    let started = Instant::now();
    match rein_models::list_models(config).await {
        Ok(models) => {
            let took = started.elapsed().as_secs_f64();
            if models.iter().any(|m| m == &config.model) {
                report.add(
                    Level::Ok,
                    format!(
                        "reachable in {took:.1} s: {} lists {} models, {} among them",
                        config.base_url,
                        models.len(),
                        config.model
                    ),
                );
            } else {
                // Some servers list only part of what they serve (a page,
                // aliases): a warning, not a failure.
                report.add(
                    Level::Warn,
                    format!(
                        "reachable in {took:.1} s, but {} is not among the {} models it lists ({}); set REIN_MODEL or `model` to one of them",
                        config.model,
                        models.len(),
                        sample(&models)
                    ),
                );
            }
        }
        Err(error) => {
            let message = rein_models::redact(&error.to_string(), config.api_key.as_ref());
            report.add(Level::Fail, format!("not reachable: {message}"));
        }
    }
}

fn sample(models: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut shown: Vec<&str> = models.iter().take(SHOWN).map(String::as_str).collect();
    if models.len() > SHOWN {
        shown.push("…");
    }
    if shown.is_empty() {
        "none".into()
    } else {
        shown.join(", ")
    }
}

fn tests(
    root: &Path,
    configured: Option<&TestCommand>,
    test_report: Option<&str>,
    report: &mut Report,
) {
    let (command, source) = match configured {
        Some(command) => (command.clone(), "configured"),
        None => match testcmd::detect(root) {
            Some(command) => (command, "detected"),
            None => {
                report.add(
                    Level::Warn,
                    "tests: no test command detected (cargo, go, pytest/unittest, npm); set `test_command` in .rein/config.toml, or \"Fix test\" cannot verify a fix",
                );
                return;
            }
        },
    };
    let shown = command.for_target(None);
    let program = shown.split_whitespace().next().unwrap_or_default();
    if program.is_empty() || on_path(program).is_some() {
        report.add(Level::Ok, format!("tests ({source}): {shown}"));
    } else {
        report.add(
            Level::Warn,
            format!("tests ({source}): {shown}, but `{program}` is not on PATH"),
        );
    }
    // Rein makes the runners it drives name their tests; a command of the
    // user's or a package script must do it itself (or write a report),
    // or no fix is verified.
    if let Some(pattern) = test_report {
        report.add(
            Level::Info,
            format!(
                "tests: the JUnit XML reports a run writes to {pattern} show which tests passed"
            ),
        );
    } else if matches!(command.runner, Runner::Custom | Runner::Npm) {
        report.add(
            Level::Info,
            "tests: a fix counts as verified only if this command's output names the target test as passed (e.g. pytest -v, python -m unittest -v, go test -v, jest --verbose, vitest --reporter=verbose) or it writes a JUnit report named by `test_report`; otherwise a task ends `unverified`",
        );
    }
}

fn on_path(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Path::new(program).is_file().then(|| PathBuf::from(program));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

fn state(root: &Path, report: &mut Report) {
    let db = rein_store::state_db_path(root);
    let shown = shown_path(root, &db);
    if !db.is_file() {
        report.add(
            Level::Info,
            format!("state {shown}: none yet (made by the first task)"),
        );
        return;
    }
    let store = match rein_store::Store::open(&db) {
        Ok(store) => store,
        Err(e) => {
            report.add(Level::Fail, format!("state {shown}: {e}"));
            return;
        }
    };
    let version = store
        .schema_version()
        .map(|v| format!("schema v{v}"))
        .unwrap_or_else(|e| format!("schema unknown: {e}"));
    match store.tasks() {
        Ok(tasks) => {
            let installation = settings::user_state().and_then(|s| s.existing_installation_id());
            let unfinished: Vec<_> = tasks
                .iter()
                // A state this build does not know is not called unfinished.
                .filter(|t| {
                    t.state
                        .parse::<rein_core::task::TaskState>()
                        .is_ok_and(|state| !state.is_end())
                })
                .collect();
            let foreign = unfinished
                .iter()
                .filter(|t| installation.is_none() || t.installation != installation)
                .count();
            let level = if unfinished.is_empty() {
                Level::Ok
            } else {
                Level::Warn
            };
            let mut note = String::new();
            if !unfinished.is_empty() {
                note = format!(
                    ", {} unfinished (resume or cancel them from the editor)",
                    unfinished.len()
                );
            }
            if foreign > 0 {
                note.push_str(&format!(
                    "; {foreign} of them not started by this Rein installation (never resumed unless you ask)"
                ));
            }
            let unfinished = note;
            report.add(
                level,
                format!(
                    "state {shown}: {version}, {} tasks{unfinished}",
                    tasks.len()
                ),
            );
        }
        Err(e) => report.add(Level::Fail, format!("state {shown}: {version}, {e}")),
    }
}

/// What limits the commands the model runs: the sandbox this machine
/// gives them (probed, never assumed), and the permission rules.
fn sandbox(root: &Path, config: Option<&Config>, workspace_trusted: bool, report: &mut Report) {
    let rules = settings::layers(root, &Value::Null)
        .map(|layers| {
            layers.iter().fold([0, 0, 0], |[a, s, d], l| {
                // An untrusted workspace's allow rules do not count.
                let allows = if l.is_workspace() && !workspace_trusted {
                    0
                } else {
                    l.settings.permissions.allow.len()
                };
                [
                    a + allows,
                    s + l.settings.permissions.ask.len(),
                    d + l.settings.permissions.deny.len(),
                ]
            })
        })
        .unwrap_or_default();
    let sandbox = config.map(|c| c.sandbox.clone()).unwrap_or_default();
    let support = rein_app::confinement::support(&rein_app::setup::this_binary());
    let auto = if sandbox.auto_approve {
        "; commands the defaults would ask about run without asking inside it (sandbox.auto_approve)"
    } else {
        ""
    };
    match rein_app::confinement::confinement(&sandbox, support) {
        Confinement::Full { description } => report.add(
            Level::Ok,
            format!("sandbox: {description}{auto}"),
        ),
        Confinement::Off => report.add(
            Level::Warn,
            "sandbox: off (your setting: sandbox.mode = \"off\"): commands run with your files and network, only the permission rules and your approvals guard them",
        ),
        Confinement::Degraded {
            description,
            missing,
        } => {
            report.add(
                Level::Warn,
                format!("sandbox: incomplete here: {description}"),
            );
            for part in missing {
                report.add(Level::Warn, format!("  missing: {part}"));
            }
            report.add(
                Level::Warn,
                "  so every command, the tests included, is asked about before it runs",
            );
        }
        Confinement::Unmanaged => {}
    }
    report.add(
        Level::Info,
        rein_app::confinement::reachable_sockets(&sandbox, support),
    );
    report.add(
        Level::Info,
        format!(
            "commands: in the workspace, in their own process group (killed on timeout or cancel), without API keys in their environment, after the permission rules allow them (your rules: {} allow, {} ask, {} deny; other commands are asked)",
            rules[0], rules[1], rules[2]
        ),
    );
}

/// Each MCP server a task would connect to: started here the way a task
/// starts it (in the sandbox), its tools and their annotations listed, then
/// stopped. A workspace's own servers are here only once it is trusted
/// (otherwise they are among the ignored grants above).
async fn mcp_servers(root: &Path, config: &Config, report: &mut Report) {
    if config.mcp_servers.is_empty() {
        report.add(
            Level::Info,
            "MCP servers: none configured ([mcp_servers.<name>] in the settings, or a project's .mcp.json)",
        );
        return;
    }
    let launcher =
        match rein_app::setup::command_launcher(&rein_app::setup::this_binary(), root, config) {
            Ok(launcher) => launcher,
            Err(e) => {
                report.add(Level::Fail, format!("MCP servers: cannot start any: {e}"));
                return;
            }
        };
    // Where each server may write: its sandbox policy, as it will start.
    let writes = |server: &rein_core::config::mcp::McpServer| {
        let mode = server
            .unconfined
            .then_some(rein_core::exec::SandboxMode::Off);
        launcher.policy(server.network, mode).files
    };
    let files: Vec<Option<rein_sandbox::policy::FileAccess>> =
        config.mcp_servers.iter().map(writes).collect();
    let started = rein_mcp::McpServers::start(
        &config.mcp_servers,
        &rein_app::setup::mcp_spawner(root, launcher),
    )
    .await;
    for server in &started.reports {
        match &server.started {
            Ok(tools) => {
                let when = if config
                    .mcp_servers
                    .iter()
                    .any(|s| s.name == server.name && s.start_with_session)
                {
                    "with the editor's session"
                } else {
                    "when a task first needs it"
                };
                report.add(
                    Level::Ok,
                    format!(
                        "MCP server `{}` ({}): starts ({when}); {} tools (calls ask unless a rule allows them: `mcp__{}__*`)",
                        server.name,
                        server.describe,
                        tools.len(),
                        server.name
                    ),
                );
                for tool in tools {
                    use rein_core::tools::Effect;
                    let effect = match tool.effect {
                        Effect::ReadOnly => "runs beside other reads",
                        Effect::Unknown => "effect unknown",
                        Effect::SideEffects | Effect::EditsWorkspace => "has effects",
                    };
                    let annotations = if tool.annotations.is_empty() {
                        format!("no annotations: {effect}")
                    } else {
                        format!("{}: {effect}", tool.annotations.join(", "))
                    };
                    report.add(Level::Info, format!("  {} ({annotations})", tool.name));
                }
                if let Some(at) = config
                    .mcp_servers
                    .iter()
                    .position(|s| s.name == server.name)
                    && let Some((level, text)) =
                        mcp_writes(root, &config.mcp_servers[at], files[at].as_ref())
                {
                    report.add(level, text);
                }
            }
            Err(why) => report.add(
                Level::Fail,
                format!("MCP server `{}` ({}): {why}", server.name, server.describe),
            ),
        }
    }
    started.servers.shutdown().await;
}

/// Servers known to keep their data beside their own files unless told
/// otherwise: the package's name in the command line, the variable that
/// moves the data, and a file name for it.
const DATA_BESIDE_CODE: &[(&str, &str, &str)] =
    &[("server-memory", "MEMORY_FILE_PATH", "memory.jsonl")];

/// Where a started stdio server may write, when the sandbox confines its
/// files (`files`, its policy's): the workspace, not its own files. A
/// server that keeps its data there starts fine, and what it saves fails
/// (EACCES) or is lost with it, so "ok" alone would mislead: a known one is warned
/// about, with the setting that moves its data into the workspace; any
/// other is told where it can write.
fn mcp_writes(
    root: &Path,
    server: &rein_core::config::mcp::McpServer,
    files: Option<&rein_sandbox::policy::FileAccess>,
) -> Option<(Level, String)> {
    use rein_core::config::mcp::McpTransport;
    let McpTransport::Stdio {
        command, args, env, ..
    } = &server.transport
    else {
        return None;
    };
    let files = files?;
    // Its own folders it cannot write (as the kernel will hold it to).
    let own: Vec<std::path::PathBuf> = rein_mcp::roots::install_roots(command, args)
        .into_iter()
        .filter(|r| !may_write(files, r))
        .collect();
    if own.is_empty() {
        return None;
    }
    let own_shown = own
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let line = std::iter::once(command)
        .chain(args)
        .cloned()
        .collect::<Vec<_>>();
    if let Some((package, variable, file)) =
        DATA_BESIDE_CODE.iter().find(|(package, variable, _)| {
            line.iter().any(|word| word.contains(package))
                && !env.iter().any(|(name, _)| name == variable)
        })
    {
        return Some((
            Level::Warn,
            format!(
                "  `{}` ({package}) keeps its data beside its own files ({own_shown}) unless {variable} says otherwise, and the sandbox lets it write only in the workspace: what it saves there fails (EACCES) or does not outlive it. Point it into the workspace: env = {{ {variable} = \"{}\" }} under [mcp_servers.{}]",
                server.name,
                root.join(format!(".mcp-{file}")).display(),
                server.name
            ),
        ));
    }
    Some((
        Level::Info,
        format!(
            "  `{}` can write only in the workspace and its temporary folder; its own files ({own_shown}) are read-only to it: if it keeps data there, give it a path in the workspace",
            server.name
        ),
    ))
}

/// Whether `files` lets a command write `path`: under a write root, and
/// under nothing taken out of it.
fn may_write(files: &rein_sandbox::policy::FileAccess, path: &Path) -> bool {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    files.write.iter().any(|w| path.starts_with(w))
        && !files
            .deny
            .iter()
            .chain(&files.read_only)
            .any(|d| path.starts_with(d))
}

fn shown_path(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(relative) => relative.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// Rein cannot make a command of the user's name its tests: the
    /// report says a fix is verified only if it does.
    #[test]
    fn a_custom_test_command_is_told_it_must_name_its_tests() {
        let said = |command: TestCommand| {
            let mut report = Report { lines: Vec::new() };
            tests(Path::new("."), Some(&command), None, &mut report);
            report.render().contains("names the target test as passed")
        };
        assert!(said(TestCommand::custom("make test T={target}")));
        assert!(said(TestCommand::new(Runner::Npm)));
        assert!(!said(TestCommand::new(Runner::Unittest)));
        assert!(!said(TestCommand::new(Runner::Cargo)));
    }

    /// The window a server states is shown as known, naming what said it;
    /// a server that says nothing leaves the guess, and its warning.
    #[tokio::test]
    async fn the_context_window_line_names_the_server_that_stated_it() {
        use rein_scripted::fake_model::{FakeModel, Scenario, ServerInfo};

        let line = |info: Option<ServerInfo>| async move {
            let mut scenario = Scenario::new()
                .require_api_key(false)
                .models(["qwen2.5-coder-7b"]);
            if let Some(info) = info {
                scenario = scenario.server_info(info);
            }
            let server = FakeModel::start(scenario).await.unwrap();
            let config = ProviderConfig {
                provider: ProviderKind::OpenAi,
                model: "qwen2.5-coder-7b".into(),
                base_url: format!("{}/v1", server.base_url()),
                api_key: None,
                stream: true,
                retry: Default::default(),
                timeouts: Default::default(),
                prices: Default::default(),
                scenario: None,
                context_window: None,
                temperature: 0.0,
                key_from: None,
            };
            let mut report = Report { lines: Vec::new() };
            provider(&config, EditFormat::Auto, &mut report).await;
            report
                .render()
                .lines()
                .find(|line| line.contains("context window"))
                .unwrap_or_default()
                .to_owned()
        };
        assert_eq!(
            line(Some(ServerInfo::new().llama_cpp_n_ctx(4096))).await,
            "ok   context window: 4096 tokens (from the server: llama.cpp /props)"
        );
        assert_eq!(
            line(Some(ServerInfo::new().ollama_context_length(32768))).await,
            "ok   context window: 4096 tokens (from the server: Ollama's default num_ctx)"
        );
        assert_eq!(
            edit_format_line(EditFormat::Auto, 4096),
            "edits: whole files written in the reply, three tools (edit_format = \"auto\": the window is under 32768 tokens)"
        );
        assert_eq!(
            edit_format_line(EditFormat::Tools, 4096),
            "edits: through the tools (edit_format = \"tools\")"
        );
        assert_eq!(
            line(None).await,
            "warn context window: not known for this model; Rein assumes 200000 tokens. Set `context_window` (e.g. the server's --ctx-size) so the prompt fits"
        );
    }

    /// A workspace's settings are quoted in the report: a test command
    /// with a line break and escapes cannot print an `ok` line of its own
    /// nor erase the `warn` before it; a multi-line message stays readable.
    #[test]
    fn a_setting_with_escape_sequences_cannot_fake_a_doctor_line() {
        let mut report = Report { lines: Vec::new() };
        report.add(
            Level::Warn,
            "tests (configured): evil\nok   tests (configured): pytest\x1b[1A\x1b[2K\r",
        );
        report.add(
            Level::Fail,
            "configuration: .rein/config.toml is not valid: TOML parse error at line 1\n  |\n1 | model = \"\u{202e}x\"",
        );
        assert_eq!(
            report.render(),
            "warn tests (configured): evil\n\
             \x20    ok   tests (configured): pytest\\x1b[1A\\x1b[2K\\r\n\
             FAIL configuration: .rein/config.toml is not valid: TOML parse error at line 1\n\
             \x20      |\n\
             \x20    1 | model = \"\\u{202e}x\"\n"
        );
    }
}
