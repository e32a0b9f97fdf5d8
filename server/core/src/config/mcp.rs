//! MCP servers in the settings: `[mcp_servers.<name>]` as each source gives
//! it ([`McpServerSettings`], also the entries of a project's `.mcp.json`),
//! and the servers a task connects to once the layers are merged
//! ([`McpServer`]). Data and checks only: connecting is `rein-mcp`'s.
//!
//! Values of `env` and `headers` may name variables (`${GITHUB_TOKEN}`)
//! instead of holding secrets; they stay templates here, so a `Config`
//! printed anywhere holds no secret, and are filled in when the server
//! starts.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

/// What an MCP tool's output may cost the model by default (Claude Code's
/// figure): more is spilled to the task's artifacts.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 25_000;
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest server name: `mcp__<server>__<tool>` must fit the 64 characters
/// model APIs accept, with room for the tool.
pub const MAX_SERVER_NAME: usize = 24;

/// One MCP server as a source gives it. Editors send camelCase, TOML files
/// snake_case, `.mcp.json` the shape Claude Code and others share
/// (`type`, `command`, `args`, `env`, `url`, `headers`): all are accepted.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct McpServerSettings {
    /// A stdio server: the program to start (no shell).
    pub command: Option<String>,
    pub args: Vec<String>,
    /// Variables for the server's process; a value may be `${NAME}`.
    pub env: BTreeMap<String, String>,
    /// Variables of Rein's own environment passed through by name.
    #[serde(alias = "envVars")]
    pub env_vars: Vec<String>,
    /// A Streamable HTTP server.
    pub url: Option<String>,
    /// Headers sent to an HTTP server; a value may hold `${NAME}`.
    pub headers: BTreeMap<String, String>,
    /// `.mcp.json`'s `type`: `stdio`, `http` (or `streamable-http`), `sse`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// `false` keeps the entry but starts nothing.
    pub enabled: Option<bool>,
    /// Only these tools (by the server's names).
    #[serde(alias = "enabledTools")]
    pub enabled_tools: Option<Vec<String>>,
    /// Never these tools.
    #[serde(alias = "disabledTools")]
    pub disabled_tools: Vec<String>,
    #[serde(alias = "startupTimeoutSec")]
    pub startup_timeout_sec: Option<f64>,
    #[serde(alias = "toolTimeoutSec")]
    pub tool_timeout_sec: Option<f64>,
    #[serde(alias = "maxOutputTokens")]
    pub max_output_tokens: Option<u64>,
    /// A stdio server may reach the network (else loopback only, in the
    /// command sandbox).
    pub network: Option<bool>,
    /// Folders a stdio server may read beyond the sandbox's defaults (the
    /// folders of absolute paths in `command` and `args` are added).
    #[serde(alias = "readableRoots")]
    pub readable_roots: Vec<String>,
    /// `"off"`: the server runs unconfined (your choice; a workspace's own
    /// server needs trust to start at all).
    pub sandbox: Option<String>,
    /// Started when the editor's session starts rather than when a task
    /// first needs it (either way it is kept for the session's next tasks).
    #[serde(alias = "startWithSession")]
    pub start_with_session: Option<bool>,
}

/// How Rein reaches a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpTransport {
    /// A process Rein starts, speaking JSON-RPC on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Name and template (`${NAME}` filled in at start).
        env: Vec<(String, String)>,
        /// Passed through from Rein's environment by name.
        env_vars: Vec<String>,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// A server a task connects to.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServer {
    pub name: String,
    pub transport: McpTransport,
    pub enabled_tools: Option<Vec<String>>,
    pub disabled_tools: Vec<String>,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    pub max_output_tokens: u64,
    pub network: bool,
    /// Absolute folders it may read beyond the sandbox's defaults.
    pub readable_roots: Vec<std::path::PathBuf>,
    /// Runs outside the sandbox (the `sandbox = "off"` setting).
    pub unconfined: bool,
    /// Came with the workspace (trusted, or it would not be here).
    pub from_workspace: bool,
    /// Started with the editor's session, not by the first task.
    pub start_with_session: bool,
}

impl McpServer {
    /// Whether the server's tool `tool` is offered to the model.
    pub fn offers(&self, tool: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|t| t == tool))
            && !self.disabled_tools.iter().any(|t| t == tool)
    }

    /// The command line or URL, for `rein doctor` and messages.
    pub fn describe(&self) -> String {
        match &self.transport {
            McpTransport::Stdio { command, args, .. } => {
                let mut line = command.clone();
                for arg in args {
                    line.push(' ');
                    line.push_str(arg);
                }
                line
            }
            McpTransport::Http { url, .. } => url.clone(),
        }
    }
}

/// Why an `[mcp_servers.<name>]` entry cannot be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("MCP server `{name}`: {message}")]
pub struct McpConfigError {
    pub name: String,
    pub message: String,
}

/// The servers of `layers` (highest precedence first): the first layer
/// naming a server defines it whole. `from_workspace[i]`: layer `i` came
/// with the workspace.
pub fn resolve(
    layers: &[(&BTreeMap<String, McpServerSettings>, bool)],
) -> Result<Vec<McpServer>, McpConfigError> {
    let mut seen = BTreeMap::new();
    for (servers, from_workspace) in layers {
        for (name, settings) in servers.iter() {
            seen.entry(name.clone())
                .or_insert((settings.clone(), *from_workspace));
        }
    }
    let mut out = Vec::new();
    for (name, (settings, from_workspace)) in seen {
        if settings.enabled == Some(false) {
            continue;
        }
        out.push(server(&name, &settings, from_workspace)?);
    }
    Ok(out)
}

fn server(
    name: &str,
    s: &McpServerSettings,
    from_workspace: bool,
) -> Result<McpServer, McpConfigError> {
    let error = |message: String| McpConfigError {
        name: name.to_owned(),
        message,
    };
    check_name(name).map_err(error)?;
    let kind = s.kind.as_deref().map(str::trim);
    let transport = match (&s.command, &s.url, kind) {
        (Some(_), Some(_), _) => {
            return Err(error(
                "set `command` (stdio) or `url` (HTTP), not both".into(),
            ));
        }
        (Some(command), None, None | Some("stdio")) => {
            if command.trim().is_empty() {
                return Err(error("`command` is empty".into()));
            }
            McpTransport::Stdio {
                command: command.clone(),
                args: s.args.clone(),
                env: s.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                env_vars: s.env_vars.clone(),
            }
        }
        (None, Some(url), None | Some("http" | "streamable-http" | "streamableHttp")) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(error(format!(
                    "`url` must be http:// or https://, got {url:?}"
                )));
            }
            McpTransport::Http {
                url: url.clone(),
                headers: s
                    .headers
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            }
        }
        (None, Some(_), Some("sse")) => {
            return Err(error(
                "the SSE transport is deprecated and not supported; use the server's Streamable HTTP endpoint (`type = \"http\"`)".into(),
            ));
        }
        (_, _, Some(other)) => {
            return Err(error(format!(
                "`type` {other:?} does not fit the entry (stdio needs `command`, http needs `url`)"
            )));
        }
        (None, None, _) => return Err(error("set `command` (stdio) or `url` (HTTP)".into())),
    };
    let seconds = |value: Option<f64>, what: &str, default: Duration| match value {
        None => Ok(default),
        Some(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(Duration::from_secs_f64(v)),
        Some(v) => Err(error(format!(
            "`{what}` must be a number of seconds above 0, got {v}"
        ))),
    };
    Ok(McpServer {
        name: name.to_owned(),
        transport,
        enabled_tools: s.enabled_tools.clone(),
        disabled_tools: s.disabled_tools.clone(),
        startup_timeout: seconds(
            s.startup_timeout_sec,
            "startup_timeout_sec",
            DEFAULT_STARTUP_TIMEOUT,
        )?,
        tool_timeout: seconds(s.tool_timeout_sec, "tool_timeout_sec", DEFAULT_TOOL_TIMEOUT)?,
        max_output_tokens: match s.max_output_tokens {
            None => DEFAULT_MAX_OUTPUT_TOKENS,
            Some(0) => return Err(error("`max_output_tokens` must be above 0".into())),
            Some(n) => n,
        },
        network: s.network.unwrap_or(false),
        readable_roots: s
            .readable_roots
            .iter()
            .map(|root| {
                let path = std::path::PathBuf::from(root);
                if path.is_absolute() {
                    Ok(path)
                } else {
                    Err(error(format!(
                        "`readable_roots` must be absolute paths, got {root:?}"
                    )))
                }
            })
            .collect::<Result<_, _>>()?,
        unconfined: match s.sandbox.as_deref().map(str::trim) {
            None | Some("on") => false,
            Some("off") => true,
            Some(other) => {
                return Err(error(format!(
                    "`sandbox` must be \"on\" or \"off\", got {other:?}"
                )));
            }
        },
        from_workspace,
        start_with_session: s.start_with_session.unwrap_or(false),
    })
}

/// A server name fits in a tool name and cannot blur where one part ends:
/// ASCII letters, digits, `-` and single `_`.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > MAX_SERVER_NAME
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        || name.contains("__")
    {
        return Err(format!(
            "the name must be 1 to {MAX_SERVER_NAME} ASCII letters, digits, `-` or `_` (never `__`): tools are named `mcp__<server>__<tool>`"
        ));
    }
    Ok(())
}

/// The servers of a project's `.mcp.json` (`{"mcpServers": {…}}`), as a
/// layer's `mcp_servers`.
pub fn parse_mcp_json(text: &str) -> Result<BTreeMap<String, McpServerSettings>, String> {
    #[derive(Deserialize)]
    struct File {
        #[serde(rename = "mcpServers", default)]
        mcp_servers: BTreeMap<String, McpServerSettings>,
    }
    serde_json::from_str::<File>(text)
        .map(|f| f.mcp_servers)
        .map_err(|e| e.to_string())
}

/// `${NAME}` (and `$NAME`-free text) in `template` filled in from `env`;
/// the first variable that is not set is the error.
pub fn expand(template: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("`${{` without a closing `}}` in {template:?}"));
        };
        let name = &after[..end];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`${{{name}}}` is not a variable name"));
        }
        match env(name) {
            Some(value) => out.push_str(&value),
            None => return Err(format!("the variable {name} is not set")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn settings(toml_text: &str) -> BTreeMap<String, McpServerSettings> {
        #[derive(Deserialize)]
        struct F {
            mcp_servers: BTreeMap<String, McpServerSettings>,
        }
        toml::from_str::<F>(toml_text).unwrap().mcp_servers
    }

    #[test]
    fn a_server_is_defined_whole_by_the_first_layer_that_names_it() {
        let user = settings(
            r#"
            [mcp_servers.fs]
            command = "npx"
            args = ["-y", "server-filesystem", "."]
            tool_timeout_sec = 5
            [mcp_servers.off]
            command = "x"
            enabled = false
            "#,
        );
        let editor = settings(
            r#"
            [mcp_servers.fs]
            url = "http://127.0.0.1:9/mcp"
            headers = { Authorization = "Bearer ${TOKEN}" }
            "#,
        );
        let servers = resolve(&[(&editor, false), (&user, false)]).unwrap();
        assert_eq!(servers.len(), 1, "the disabled one is left out");
        assert_eq!(
            servers[0].transport,
            McpTransport::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: vec![("Authorization".into(), "Bearer ${TOKEN}".into())],
            }
        );
        assert_eq!(servers[0].tool_timeout, DEFAULT_TOOL_TIMEOUT);
        assert_eq!(servers[0].max_output_tokens, 25_000);
    }

    #[test]
    fn bad_entries_are_named_with_what_to_fix() {
        for (toml_text, message) in [
            (
                "[mcp_servers.a__b]\ncommand = \"x\"",
                "MCP server `a__b`: the name must be 1 to 24 ASCII letters, digits, `-` or `_` (never `__`): tools are named `mcp__<server>__<tool>`",
            ),
            (
                "[mcp_servers.x]\ncommand = \"x\"\nurl = \"http://h\"",
                "MCP server `x`: set `command` (stdio) or `url` (HTTP), not both",
            ),
            (
                "[mcp_servers.x]\nargs = [\"a\"]",
                "MCP server `x`: set `command` (stdio) or `url` (HTTP)",
            ),
            (
                "[mcp_servers.x]\nurl = \"file:///etc/passwd\"",
                "MCP server `x`: `url` must be http:// or https://, got \"file:///etc/passwd\"",
            ),
            (
                "[mcp_servers.x]\ncommand = \"x\"\ntool_timeout_sec = -1",
                "MCP server `x`: `tool_timeout_sec` must be a number of seconds above 0, got -1",
            ),
            (
                "[mcp_servers.x]\ntype = \"sse\"\nurl = \"http://h/sse\"",
                "MCP server `x`: the SSE transport is deprecated and not supported; use the server's Streamable HTTP endpoint (`type = \"http\"`)",
            ),
        ] {
            let layer = settings(toml_text);
            assert_eq!(
                resolve(&[(&layer, false)]).unwrap_err().to_string(),
                message
            );
        }
    }

    #[test]
    fn a_projects_mcp_json_reads_as_settings() {
        let servers = parse_mcp_json(
            r#"{"mcpServers": {
                "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"KEY": "${MY_KEY}"}},
                "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Api-Key": "${API_KEY}"}}
            }}"#,
        )
        .unwrap();
        let resolved = resolve(&[(&servers, true)]).unwrap();
        assert_eq!(
            resolved.iter().map(McpServer::describe).collect::<Vec<_>>(),
            [
                "npx -y @modelcontextprotocol/server-everything",
                "https://example.com/mcp"
            ]
        );
        assert!(resolved.iter().all(|s| s.from_workspace));
        assert!(parse_mcp_json("{\"mcpServers\": 3}").is_err());
    }

    #[test]
    fn templates_name_variables_and_a_missing_one_is_said() {
        let env = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
        assert_eq!(expand("Bearer ${TOKEN}", &env).unwrap(), "Bearer s3cret");
        assert_eq!(expand("plain $TOKEN", &env).unwrap(), "plain $TOKEN");
        assert_eq!(
            expand("${NOPE}", &env).unwrap_err(),
            "the variable NOPE is not set"
        );
        assert!(expand("${TOKEN", &env).is_err());
        assert!(expand("${A-B}", &env).is_err());
    }

    #[test]
    fn tools_are_chosen_by_enabled_then_disabled() {
        let layer = settings(
            "[mcp_servers.x]\ncommand = \"x\"\nenabled_tools = [\"a\", \"b\"]\ndisabled_tools = [\"b\"]",
        );
        let server = &resolve(&[(&layer, false)]).unwrap()[0];
        assert!(server.offers("a"));
        assert!(!server.offers("b"));
        assert!(!server.offers("c"));
    }
}
