//! Rules as the user writes them (`run_command(cargo test:*)`), checked and
//! compiled into matchers.

use std::fmt;

use globset::{GlobBuilder, GlobMatcher};

use super::command::{self, Unit, basename};
use super::{Decision, Rule};

/// What a tool's argument pattern is matched against (each tool says,
/// in the registry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleTarget {
    /// A workspace-relative path (the directory for `list_files`/`search`).
    Path,
    /// A shell command.
    Command,
    /// A test target.
    Target,
    /// Takes no pattern.
    Bare,
}

/// The tools rules may name, and what their patterns match: the tool
/// registry, seen from the policy.
pub trait ToolKinds {
    fn rule_target(&self, tool: &str) -> Option<RuleTarget>;
    fn tool_names(&self) -> Vec<&str>;
}

/// A rule that cannot be used, with what is wrong and how rules are written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid {decision} rule `{rule}`: {message}; rules look like `run_command(cargo test:*)`, \
     `edit_file(src/**)`, `read_file(.env)`, `run_tests` or `*`"
)]
pub struct RuleError {
    pub decision: Decision,
    /// The rule as written.
    pub rule: String,
    pub message: String,
}

impl Rule {
    /// Parses `tool` or `tool(pattern)` (or `*`, every tool):
    ///
    /// - for `read_file`, `list_files`, `search`, `edit_file`, `create_file`
    ///   the pattern is a glob over the workspace-relative path (see
    ///   [`Policy`](super::Policy) for the exact rules);
    /// - for `run_command`, `prefix:*` (the command starts with these words),
    ///   an exact command, or `*`;
    /// - for `run_tests`, a glob over the test target (`*` crosses `/`);
    /// - `ask_user` and `*` take no pattern.
    pub fn parse(decision: Decision, text: &str, tools: &dyn ToolKinds) -> Result<Rule, RuleError> {
        let error = |message: String| RuleError {
            decision,
            rule: text.to_owned(),
            message,
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(error("it is empty".into()));
        }
        let (tool, pattern) = match trimmed.find('(') {
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(error("the pattern must end with `)`".into()));
                };
                (trimmed[..open].trim(), Some(inner.trim()))
            }
            None => (trimmed, None),
        };
        let names = tools.tool_names();
        let target = match tool {
            "*" => Some(RuleTarget::Bare),
            // MCP tools are known only once their servers start: a rule
            // names them by shape (`mcp__server__tool`, `mcp__server__*`).
            tool if tool.starts_with(MCP_PREFIX) => {
                check_mcp_name(tool).map_err(error)?;
                Some(RuleTarget::Bare)
            }
            tool => tools.rule_target(tool),
        };
        let Some(target) = target else {
            let best = names
                .iter()
                .map(|name| (strsim::levenshtein(tool, name), *name))
                .min()
                .filter(|(distance, _)| *distance <= 3);
            let hint = match best {
                Some((_, name)) => format!(" (did you mean `{name}`?)"),
                None => format!(" (tools: {}, or `*` for all)", names.join(", ")),
            };
            return Err(error(format!("unknown tool `{tool}`{hint}")));
        };
        let pattern = match pattern {
            Some("") => {
                return Err(error(format!(
                    "the pattern is empty; write `{tool}` alone for every use of the tool"
                )));
            }
            Some(p) => Some(p.to_owned()),
            None => None,
        };
        let rule = Rule {
            decision,
            tool: tool.to_owned(),
            pattern,
            target,
        };
        rule.compile().map_err(error)?;
        Ok(rule)
    }

    /// Whether this rule is about `tool`: its name, `*`, or for MCP tools
    /// a trailing `*` (`mcp__github__*`, `mcp__*`).
    pub fn names_tool(&self, tool: &str) -> bool {
        if self.tool == "*" || self.tool == tool {
            return true;
        }
        self.tool.starts_with(MCP_PREFIX)
            && self
                .tool
                .strip_suffix('*')
                .is_some_and(|prefix| tool.starts_with(prefix))
    }

    /// The matcher for this rule, or what is wrong with it.
    pub(crate) fn compile(&self) -> Result<Matcher, String> {
        let Some(pattern) = self.pattern.as_deref() else {
            return Ok(Matcher::Any);
        };
        if self.tool == "*" {
            return Err("`*` applies to every tool and takes no pattern".into());
        }
        match self.target {
            RuleTarget::Bare => Err(format!("`{}` takes no pattern", self.tool)),
            _ if pattern == "*" => Ok(Matcher::Any),
            RuleTarget::Path => PathPattern::new(pattern).map(Matcher::Path),
            RuleTarget::Target => glob(pattern, false).map(Matcher::Target),
            RuleTarget::Command => CommandPattern::new(pattern).map(Matcher::Command),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.decision, self.tool)?;
        if let Some(pattern) = &self.pattern {
            write!(f, "({pattern})")?;
        }
        Ok(())
    }
}

/// How every MCP tool's name starts (`mcp__<server>__<tool>`).
pub const MCP_PREFIX: &str = "mcp__";

/// `mcp__<server>__<tool>`, `mcp__<server>__*` or `mcp__*`.
fn check_mcp_name(tool: &str) -> Result<(), String> {
    let rest = &tool[MCP_PREFIX.len()..];
    let part = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let ok = rest == "*"
        || rest.split_once("__").is_some_and(|(server, name)| {
            part(server) && (name == "*" || part(name.trim_end_matches('*')) && !name.is_empty())
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{tool}` is not an MCP tool name: write `mcp__<server>__<tool>`, `mcp__<server>__*` or `mcp__*`"
        ))
    }
}

fn glob(pattern: &str, literal_separator: bool) -> Result<GlobMatcher, String> {
    GlobBuilder::new(pattern)
        .literal_separator(literal_separator)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("`{pattern}` is not a valid glob: {}", e.kind()))
}

/// A compiled argument pattern.
#[derive(Clone, Debug)]
pub(crate) enum Matcher {
    /// No pattern, or `*`: every use of the tool.
    Any,
    Path(PathPattern),
    Command(CommandPattern),
    Target(GlobMatcher),
    /// A rule built by hand that does not compile: a deny or ask rule then
    /// matches every use of its tool (failing safe), an allow rule none.
    Broken,
}

/// A glob over workspace-relative paths.
#[derive(Clone, Debug)]
pub(crate) struct PathPattern {
    globs: Vec<GlobMatcher>,
    /// No `/` in the pattern (but maybe a trailing one): it matches the name
    /// of the file or of any directory it is in, at any depth.
    any_component: bool,
}

impl PathPattern {
    fn new(pattern: &str) -> Result<Self, String> {
        let mut p = pattern.strip_prefix("./").unwrap_or(pattern);
        let anchored_at_root = p.starts_with('/');
        p = p.trim_start_matches('/');
        let dir = p.ends_with('/');
        p = p.trim_end_matches('/');
        if p.is_empty() {
            return Err(format!("`{pattern}` names no file; use `*` for every path"));
        }
        if p.split('/').any(|c| c == ".." || c == ".") {
            return Err(format!(
                "`{pattern}` contains `.` or `..`; paths are relative to the workspace root"
            ));
        }
        let any_component = !anchored_at_root && !p.contains('/');
        let mut globs = vec![glob(p, true)?];
        if dir {
            globs.push(glob(&format!("{p}/**"), true)?);
        }
        Ok(Self {
            globs,
            any_component,
        })
    }

    pub(crate) fn matches(&self, path: &str) -> bool {
        if self.any_component {
            path.split('/')
                .any(|c| self.globs.iter().any(|g| g.is_match(c)))
        } else {
            self.globs.iter().any(|g| g.is_match(path))
        }
    }
}

/// A `run_command` pattern, as words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CommandPattern {
    words: Vec<String>,
    /// `prefix:*`: the command's words start with `words`.
    prefix: bool,
}

impl CommandPattern {
    fn new(pattern: &str) -> Result<Self, String> {
        let (body, prefix) = match pattern.strip_suffix(":*") {
            Some(body) => (body.trim_end(), true),
            None => (pattern, false),
        };
        if body.contains(":*") {
            return Err("`:*` may only end the pattern (`cargo test:*`)".into());
        }
        let words = command::words_of(body)
            .map_err(|why| format!("the command pattern `{body}` cannot be used: {why}"))?;
        if words.is_empty() {
            return Err("the command pattern names no command; use `*` for every command".into());
        }
        Ok(Self { words, prefix })
    }

    fn matches_words(&self, argv: &[String]) -> bool {
        if self.prefix {
            argv.starts_with(&self.words)
        } else {
            argv == self.words.as_slice()
        }
    }

    /// `strict` (for allow rules): the words from the real program on must
    /// match. Otherwise (deny, ask) also the whole command with its
    /// wrappers, or the program given by path (`/usr/bin/curl`).
    pub(crate) fn matches(&self, unit: &Unit, strict: bool) -> bool {
        let argv = unit.argv();
        if self.matches_words(argv) {
            return true;
        }
        if strict {
            return false;
        }
        if self.matches_words(&unit.words) {
            return true;
        }
        match argv.split_first() {
            Some((program, rest)) if program.contains('/') => {
                let mut named = vec![basename(program).to_owned()];
                named.extend(rest.iter().cloned());
                self.matches_words(&named)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display() {
        for text in [
            "run_command(cargo test:*)",
            "edit_file(src/**)",
            "read_file(.env)",
            "run_tests",
            "*",
            "run_command(*)",
            "run_tests(tests/slow/*)",
        ] {
            let rule = Rule::parse(Decision::Deny, text, &crate::tools::builtin()).unwrap();
            assert_eq!(rule.to_string(), format!("deny: {text}"));
        }
        let rule = Rule::parse(
            Decision::Allow,
            "  run_command( git status )  ",
            &crate::tools::builtin(),
        )
        .unwrap();
        assert_eq!(rule.to_string(), "allow: run_command(git status)");
    }

    #[test]
    fn errors_explain_the_syntax() {
        for (text, needle) in [
            ("", "it is empty"),
            ("run_commands(ls)", "(did you mean `run_command`?)"),
            ("frobnicate", "unknown tool `frobnicate` (tools: read_file,"),
            ("run_command(ls", "must end with `)`"),
            ("run_command()", "the pattern is empty"),
            ("ask_user(x)", "`ask_user` takes no pattern"),
            ("*(x)", "`*` applies to every tool"),
            ("edit_file(src/[)", "not a valid glob"),
            ("edit_file(../x)", "relative to the workspace root"),
            ("run_command(a && b)", "more than one command"),
            ("run_command(a:*b)", "`:*` may only end"),
            ("run_command(echo 'x)", "unbalanced single quote"),
        ] {
            let err = Rule::parse(Decision::Ask, text, &crate::tools::builtin())
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{text}: {err}");
            assert!(err.starts_with("invalid ask rule `"), "{err}");
            assert!(err.ends_with("`run_tests` or `*`"), "{err}");
        }
    }

    fn path_matches(pattern: &str, path: &str) -> bool {
        PathPattern::new(pattern).unwrap().matches(path)
    }

    #[test]
    fn path_patterns() {
        for (pattern, path, want) in [
            ("src/*", "src/a.rs", true),
            ("src/*", "src/a/b.rs", false),
            ("src/**", "src/a/b.rs", true),
            ("src/**", "lib/src/a.rs", false),
            ("./src/**", "src/a.rs", true),
            ("/src/**", "src/a.rs", true),
            (".env", ".env", true),
            (".env", "config/.env", true),
            (".env", "config/.env.local", false),
            ("*.rs", "src/deep/main.rs", true),
            ("*.rs", "src/main.rsx", false),
            ("tests", "tests/a.py", true),
            ("tests", "pkg/tests/a.py", true),
            ("tests", "pkg/mytests/a.py", false),
            ("/tests", "pkg/tests/a.py", false),
            ("/tests", "tests", true),
            ("docs/", "docs", true),
            ("docs/", "docs/a/b.md", true),
            ("src/gen/", "src/gen/x.rs", true),
            ("src/gen/", "gen/x.rs", false),
            ("**/*.lock", "a/b/Cargo.lock", true),
            ("**/*.lock", "Cargo.lock", true),
        ] {
            assert_eq!(path_matches(pattern, path), want, "{pattern} ~ {path}");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod mcp_tests {
    use super::*;

    /// MCP tools are named before their servers start: rules take them by
    /// shape, and a trailing `*` covers a server's tools and no other's.
    #[test]
    fn rules_name_mcp_tools_by_server_and_by_tool() {
        let tools = crate::tools::builtin();
        let rule = |text| Rule::parse(Decision::Allow, text, &tools);
        let server = rule("mcp__github__*").unwrap();
        assert!(server.names_tool("mcp__github__create_issue"));
        assert!(!server.names_tool("mcp__github2__create_issue"));
        assert!(!server.names_tool("edit_file"));
        assert!(rule("mcp__*").unwrap().names_tool("mcp__x__y"));
        let one = rule("mcp__github__get_issue").unwrap();
        assert!(one.names_tool("mcp__github__get_issue"));
        assert!(!one.names_tool("mcp__github__get_issues"));
        // A pattern-less exact rule never matches a longer name.
        assert!(!rule("edit_file").unwrap().names_tool("edit_files"));
        for bad in [
            "mcp__",
            "mcp__github",
            "mcp__github__",
            "mcp__git hub__x",
            "mcp__a__b(c)",
        ] {
            let err = rule(bad).unwrap_err();
            assert!(
                err.message.contains("MCP tool name") || err.message.contains("takes no pattern"),
                "{bad}: {err}"
            );
        }
    }
}
