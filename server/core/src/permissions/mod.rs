//! Allow / ask / deny: what the model may do without asking, what needs the
//! user's approval, and what is never done.
//!
//! # Rules
//! A [`Rule`] is a decision, a tool name and an optional argument pattern,
//! written like Claude Code's: `run_command(cargo test:*)`,
//! `edit_file(src/**)`, `read_file(.env)`, `run_tests`, `*` (every tool).
//!
//! **Path patterns** (`read_file`, `list_files`, `search`, `edit_file`,
//! `create_file`) are globs over the workspace-relative path returned by
//! [`crate::paths::resolve`] (for `list_files` and `search`, the directory
//! searched; `""` for the root), with `.gitignore`-like anchoring:
//! - a pattern with a `/` at its start or in its middle is matched against
//!   the whole path (`*` does not cross `/`, `**` does): `src/*` matches
//!   `src/a.rs` but not `src/a/b.rs`, `src/**` matches both;
//! - a pattern without one matches the name of the file **or of any
//!   directory it is in**, at any depth: `.env` matches `config/.env`,
//!   `*.pem` matches `certs/a.pem`, `tests` matches `pkg/tests/a.py`;
//! - a leading `/` or `./` anchors at the root (`/tests` is only the
//!   top-level `tests`); a trailing `/` means the directory and everything
//!   under it (`docs/` is `docs` and `docs/**`).
//!
//! **Command patterns** (`run_command`): `prefix:*` matches a command whose
//! words start with the words of `prefix` (`cargo test:*` matches
//! `cargo test` and `cargo test --lib`, not `cargo testing`); a pattern
//! without `:*` must equal the command word for word (so blanks do not
//! matter); `*` matches any command. Words are compared after quote
//! removal, on each simple command of a compound command line, from its
//! real program on: leading `VAR=value` assignments and the wrappers `env`,
//! `command`, `exec`, `time`, `nice`, `nohup`, `timeout N`, `stdbuf`,
//! `xargs` are skipped, and the bodies of `sh -c '…'`, `eval …` and
//! `find -exec … ;` are commands of their own. Deny and
//! ask rules also match the command with its wrappers and a program given
//! by path (`/usr/bin/curl`); allow rules match the real command only.
//!
//! **`run_tests` patterns** are globs over the target (`*` crosses `/`);
//! a run without a target is matched only by `run_tests` or
//! `run_tests(*)`. `ask_user` and `*` take no pattern.
//!
//! # Evaluation
//! **Deny first, then ask, then allow**: a matching deny beats any ask or
//! allow however narrow (`allow: run_command(git push --dry-run)` does not
//! beat `deny: run_command(git push:*)`). With no matching rule, the
//! default: reads, listing, search, tests and questions are allowed; edits,
//! new files and commands ask.
//!
//! A compound command is split into simple commands, each is checked, and
//! the strictest verdict wins (any deny → deny, else any ask → ask, else
//! allow; on a tie, the first). A command line also asks at least when it
//! cannot be parsed (an unbalanced quote), when a program's name is only
//! known at run time (`$CMD x`, `$(which x) y`), and when output is
//! redirected to a file (`echo x > src/main.rs` writes a file without
//! `edit_file`), even if an allow rule matches. Shell builtins that run
//! nothing and change no file (`cd`, `pushd`, `popd`, `true`, `false`, `:`,
//! `export`, `unset`, `set`, `shopt`, `exit`, `return`) need no allow rule
//! of their own: `cd web && npm test` is allowed by `npm test:*`.
//!
//! [`Policy::with_builtins`] adds the built-in denies (see
//! [`BUILTIN_DENIES`]): Git's and Rein's directories, secret files,
//! network access, destructive commands, privilege escalation and code
//! piped into a shell.
//!
//! # "Allow for the rest of this task"
//! [`TaskApprovals`] remembers the user's answers. They only ever turn an
//! `ask` into `allow`: call [`Policy::check`] first and consult the
//! approvals only when it says `ask` ([`Policy::check_with`] does both), so
//! a deny can never be approved away.

mod builtin;
mod command;
mod rules;
pub mod sandbox;

use std::collections::HashSet;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use builtin::BUILTIN_DENIES;
pub use rules::{MCP_PREFIX, RuleError, RuleTarget, ToolKinds};

use crate::effect::Effect;
use builtin::Builtin;
use command::Unit;
use rules::Matcher;

/// What to do with an action. Ordered by strictness: `Allow < Ask < Deny`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One user rule. Build it with [`Rule::parse`]; its `Display` is the
/// rule as written, `deny: run_command(curl:*)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    pub decision: Decision,
    /// A tool name, or `*` for every tool.
    pub tool: String,
    pub pattern: Option<String>,
    /// What the pattern matches, from the tool's registry entry.
    pub target: RuleTarget,
}

/// What the model asked to do: which tool, on what. Each tool builds its
/// own (the registry's tools, `crate::tools`); the policy knows only the
/// kinds of subject. Paths are already resolved by
/// [`crate::paths::resolve`] (workspace-relative, `""` for the root).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Action<'a> {
    /// The tool's name, as the model sees it.
    pub tool: &'a str,
    pub subject: Subject<'a>,
}

/// What an action is about, as far as the policy cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject<'a> {
    /// Looks at a file, or the directory listed or searched. Allowed by
    /// default. `verb` reads "reading", "listing", "searching".
    Read { path: &'a str, verb: &'static str },
    /// Changes a file, shown to the user where it is proposed. Asks by
    /// default. `verb` reads "editing", "creating".
    Write { path: &'a str, verb: &'static str },
    /// Runs the project's tests (on a target). Allowed by default.
    Tests { target: Option<&'a str> },
    /// Runs a shell command. Asks by default.
    Command { command: &'a str },
    /// Asks the user a question. Allowed by default.
    Question,
    /// A tool the policy knows by its name and effect alone (an external
    /// tool, a tool whose arguments no rule matches): reads are allowed by
    /// default, anything else asks. `runs_process`: it starts a process of
    /// its own, so the sandbox's rules for commands apply to it.
    Call { effect: Effect, runs_process: bool },
}

impl Action<'_> {
    /// The tool's name, as the model sees it.
    pub fn tool(&self) -> &str {
        self.tool
    }

    fn path(&self) -> Option<&str> {
        match self.subject {
            Subject::Read { path, .. } | Subject::Write { path, .. } => Some(path),
            _ => None,
        }
    }

    /// Runs a process (a command, the tests, a tool that starts one): the
    /// sandbox's rules for commands apply.
    pub fn runs_process(&self) -> bool {
        matches!(
            self.subject,
            Subject::Tests { .. }
                | Subject::Command { .. }
                | Subject::Call {
                    runs_process: true,
                    ..
                }
        )
    }

    /// Changes files the editor shows for approval when proposed.
    pub fn is_proposed_edit(&self) -> bool {
        matches!(self.subject, Subject::Write { .. })
    }

    /// How the action reads in a sentence: "reading `src/a.rs`".
    fn describe(&self) -> String {
        match self.subject {
            Subject::Read { path, verb } => format!("{verb} `{}`", dir(path)),
            Subject::Write { path, verb } => format!("{verb} `{path}`"),
            Subject::Tests { target: Some(t) } => format!("running the tests `{t}`"),
            Subject::Tests { target: None } => "running the tests".into(),
            Subject::Command { command } => format!("`{}`", command.trim()),
            Subject::Question => "asking the user".into(),
            Subject::Call { .. } => format!("calling `{}`", self.tool),
        }
    }

    /// The key under which an "allow for this task" answer is remembered.
    fn approval_key(&self) -> (String, String) {
        let argument = match self.subject {
            Subject::Command { command } => command::normalize_whitespace(command),
            Subject::Tests { target } => target.unwrap_or_default().to_owned(),
            Subject::Question | Subject::Call { .. } => String::new(),
            Subject::Read { path, .. } | Subject::Write { path, .. } => path.to_owned(),
        };
        (self.tool.to_owned(), argument)
    }
}

fn dir(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}

/// The policy's answer for one action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub decision: Decision,
    /// What decided: a user rule (`deny: run_command(curl:*)`), a built-in
    /// (`built-in deny: .git/**`) or the default (`default: edits ask`).
    pub rule: String,
    /// A sentence for the model (and the approval prompt).
    pub reason: String,
}

impl Verdict {
    fn new(decision: Decision, rule: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            decision,
            rule: rule.into(),
            reason: reason.into(),
        }
    }

    fn builtin(b: Builtin) -> Self {
        Self::new(
            Decision::Deny,
            format!("built-in deny: {}", b.label),
            b.reason,
        )
    }
}

#[derive(Clone, Debug)]
struct Compiled {
    rule: Rule,
    label: String,
    matcher: Matcher,
}

/// The user's rules (and the built-in denies), ready to check actions.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Deny rules, then ask, then allow; each group in the user's order.
    rules: Vec<Compiled>,
    builtins: bool,
    /// `sandbox.auto_approve`: commands the defaults would ask about run
    /// without a prompt when the full sandbox confines them.
    sandbox_auto_approve: bool,
    /// `[[sandbox.rules]]`: some commands' own sandbox mode.
    sandbox_rules: sandbox::SandboxRules,
}

impl Default for Policy {
    /// No user rules, with the built-in denies.
    fn default() -> Self {
        Self::with_builtins(Vec::new())
    }
}

impl Policy {
    /// The user's rules alone, in any order. A rule built by hand whose
    /// pattern does not compile is logged; as a deny or ask rule it then
    /// matches every use of its tool, as an allow rule nothing.
    pub fn new(rules: Vec<Rule>) -> Policy {
        let mut compiled: Vec<Compiled> = rules
            .into_iter()
            .map(|rule| {
                let matcher = rule.compile().unwrap_or_else(|why| {
                    tracing::warn!(rule = %rule, "unusable permission rule: {why}");
                    Matcher::Broken
                });
                Compiled {
                    label: rule.to_string(),
                    rule,
                    matcher,
                }
            })
            .collect();
        // Stable: the user's order within each decision.
        compiled.sort_by_key(|c| std::cmp::Reverse(c.rule.decision));
        Policy {
            rules: compiled,
            builtins: false,
            sandbox_auto_approve: false,
            sandbox_rules: sandbox::SandboxRules::default(),
        }
    }

    /// With `[[sandbox.rules]]`.
    pub fn with_sandbox_rules(mut self, rules: sandbox::SandboxRules) -> Self {
        self.sandbox_rules = rules;
        self
    }

    /// The sandbox mode a rule gives `command`, if one does.
    pub fn sandbox_mode_for(&self, command: &str) -> Option<crate::exec::SandboxMode> {
        self.sandbox_rules.mode_for(command)
    }

    /// With `sandbox.auto_approve` set as `on`.
    pub fn with_sandbox_auto_approve(mut self, on: bool) -> Self {
        self.sandbox_auto_approve = on;
        self
    }

    pub fn sandbox_auto_approve(&self) -> bool {
        self.sandbox_auto_approve
    }

    /// The user's rules plus the built-in denies: what Rein uses.
    pub fn with_builtins(rules: Vec<Rule>) -> Policy {
        Policy {
            builtins: true,
            ..Policy::new(rules)
        }
    }

    /// The `allow`, `ask` and `deny` lists of the configuration, with the
    /// built-in denies.
    pub fn from_config(
        allow: &[String],
        ask: &[String],
        deny: &[String],
        tools: &dyn ToolKinds,
    ) -> Result<Policy, RuleError> {
        let mut rules = Vec::with_capacity(allow.len() + ask.len() + deny.len());
        for (decision, texts) in [
            (Decision::Allow, allow),
            (Decision::Ask, ask),
            (Decision::Deny, deny),
        ] {
            for text in texts {
                rules.push(Rule::parse(decision, text, tools)?);
            }
        }
        Ok(Policy::with_builtins(rules))
    }

    /// The user's rules, deny first.
    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().map(|c| &c.rule)
    }

    /// Decides on an action. Nothing in a tool's output can change this:
    /// the policy comes from configuration only, fixed when the task
    /// starts.
    pub fn check(&self, action: &Action<'_>) -> Verdict {
        match action.subject {
            Subject::Command { command } => self.check_command(action.tool, command),
            _ => self.check_simple(action),
        }
    }

    /// [`check`](Self::check), then `approvals` for an `ask`: never for a deny.
    pub fn check_with(&self, action: &Action<'_>, approvals: &TaskApprovals) -> Verdict {
        let verdict = self.check(action);
        if verdict.decision == Decision::Ask && approvals.covers(action) {
            return Verdict::new(
                Decision::Allow,
                "approved for this task",
                format!(
                    "{} was allowed by the user for the rest of this task",
                    capitalize(&action.describe())
                ),
            );
        }
        verdict
    }

    fn check_simple(&self, action: &Action<'_>) -> Verdict {
        if self.builtins
            && let Some(path) = action.path()
            && let Some(b) = builtin::check_path(path)
        {
            return Verdict::builtin(b);
        }
        let described = action.describe();
        for c in &self.rules {
            if !c.rule.names_tool(action.tool()) {
                continue;
            }
            let matches = match (&c.matcher, action.subject) {
                (Matcher::Any, _) => true,
                (Matcher::Broken, _) => c.rule.decision != Decision::Allow,
                (Matcher::Path(p), _) => action.path().is_some_and(|path| p.matches(path)),
                (Matcher::Target(g), Subject::Tests { target }) => {
                    target.is_some_and(|t| g.is_match(t))
                }
                _ => false,
            };
            if matches {
                return rule_verdict(c, &described);
            }
        }
        let (decision, rule) = match action.subject {
            Subject::Read { .. }
            | Subject::Call {
                effect: Effect::ReadOnly,
                ..
            } => (Decision::Allow, "default: reads allow"),
            Subject::Tests { .. } => (Decision::Allow, "default: tests allow"),
            Subject::Question => (Decision::Allow, "default: questions allow"),
            Subject::Write { .. }
            | Subject::Call {
                effect: Effect::EditsWorkspace,
                ..
            } => (Decision::Ask, "default: edits ask"),
            Subject::Command { .. } => (Decision::Ask, "default: commands ask"),
            Subject::Call { .. } => (Decision::Ask, "default: tools with effects ask"),
        };
        let reason = match decision {
            Decision::Allow => format!("{} is allowed by default", capitalize(&described)),
            _ => format!(
                "{} needs the user's approval (changes are asked by default)",
                capitalize(&described)
            ),
        };
        Verdict::new(decision, rule, reason)
    }

    fn check_command(&self, tool: &str, command: &str) -> Verdict {
        let analysis = command::analyze(command);
        let mut worst: Option<Verdict> = None;
        let mut consider = |v: Verdict| {
            if worst.as_ref().is_none_or(|w| v.decision > w.decision) {
                worst = Some(v);
            }
        };
        if self.builtins && analysis.fork_bomb {
            consider(Verdict::builtin(builtin::fork_bomb()));
        }
        for unit in &analysis.units {
            if let Some(v) = self.check_unit(tool, unit) {
                consider(v);
            }
        }
        if let Some(error) = &analysis.error {
            consider(Verdict::new(
                Decision::Ask,
                "built-in ask: command cannot be parsed",
                format!(
                    "`{}` cannot be parsed ({error}), so it needs the user's approval; \
                     fix the quoting or split it into simpler commands",
                    command.trim()
                ),
            ));
        }
        worst.unwrap_or_else(|| {
            Verdict::new(
                Decision::Ask,
                "default: commands ask",
                format!(
                    "`{}` needs the user's approval (commands are asked by default)",
                    command.trim()
                ),
            )
        })
    }

    /// The verdict for one simple command; `None` when it decides nothing
    /// (a bare assignment, a shell whose body is checked instead).
    fn check_unit(&self, tool: &str, unit: &Unit) -> Option<Verdict> {
        if self.builtins
            && let Some(b) = builtin::check_command(unit)
        {
            return Some(Verdict::builtin(b));
        }
        let text = unit.text();
        let described = format!("`{text}`");
        let applies = |c: &Compiled| c.rule.names_tool(tool);
        for c in self.rules.iter().filter(|c| applies(c)) {
            let strict = c.rule.decision == Decision::Allow;
            if strict && (unit.transparent || unit.program.is_none() || is_neutral(unit)) {
                break;
            }
            let matches = match &c.matcher {
                Matcher::Any => true,
                Matcher::Broken => !strict,
                Matcher::Command(p) => p.matches(unit, strict),
                Matcher::Path(_) | Matcher::Target(_) => false,
            };
            if !matches {
                continue;
            }
            if strict {
                // Allowed by a rule, unless something makes it ask anyway.
                if let Some(v) = floor(unit, &text) {
                    return Some(v);
                }
            }
            return Some(rule_verdict(c, &described));
        }
        if unit.transparent || is_neutral(unit) {
            return None;
        }
        if unit.program.is_none() {
            return floor(unit, &text);
        }
        Some(floor(unit, &text).unwrap_or_else(|| {
            Verdict::new(
                Decision::Ask,
                "default: commands ask",
                format!("{described} needs the user's approval (commands are asked by default)"),
            )
        }))
    }
}

/// Shell builtins that run nothing and change no file (`cd sub && cargo
/// test`): they need no allow rule of their own, but deny and ask rules
/// still see them.
fn is_neutral(unit: &Unit) -> bool {
    const NEUTRAL: &[&str] = &[
        "cd", "pushd", "popd", "true", "false", ":", "export", "unset", "set", "shopt", "exit",
        "return",
    ];
    unit.words.first() == unit.argv().first()
        && !unit.program_dynamic
        && unit.writes.is_empty()
        && unit.program_name().is_some_and(|p| NEUTRAL.contains(&p))
}

/// Why a command asks even when an allow rule matches.
fn floor(unit: &Unit, text: &str) -> Option<Verdict> {
    if unit.program_dynamic {
        return Some(Verdict::new(
            Decision::Ask,
            "built-in ask: program name computed at run time",
            format!(
                "`{text}` runs a program whose name is only known at run time, \
                 so it needs the user's approval; name the program directly"
            ),
        ));
    }
    if let Some(file) = unit.writes.first() {
        return Some(Verdict::new(
            Decision::Ask,
            "built-in ask: output redirected to a file",
            format!(
                "`{text}` writes to `{file}` through a redirection, so it needs the user's approval; \
                 change files with `edit_file`/`create_file`, or drop the redirection"
            ),
        ));
    }
    None
}

fn rule_verdict(c: &Compiled, described: &str) -> Verdict {
    let what = capitalize(described);
    let reason = match c.rule.decision {
        Decision::Allow => format!("{what} is allowed by the user's rule `{}`", c.label),
        Decision::Ask => format!("{what} needs the user's approval (rule `{}`)", c.label),
        Decision::Deny => format!(
            "{what} is denied by the user's rule `{}`; do not try to get around it: \
             do the task another way, or tell the user what you need",
            c.label
        ),
    };
    Verdict::new(c.rule.decision, c.label.clone(), reason)
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The user's "allow for the rest of this task" answers.
///
/// Keys are exact: the tool and, for `run_command`, the command with its
/// blanks normalized outside quotes (approving `cargo test --lib` covers
/// `cargo  test --lib`, not `cargo test`); for file tools, the resolved
/// path; for `run_tests`, the target. An approval only turns `ask` into
/// `allow`: [`Policy::check`] comes first, so a deny is never covered
/// (use [`Policy::check_with`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskApprovals {
    approved: HashSet<(String, String)>,
}

impl TaskApprovals {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn remember(&mut self, action: &Action<'_>) {
        self.approved.insert(action.approval_key());
    }

    pub fn covers(&self, action: &Action<'_>) -> bool {
        self.approved.contains(&action.approval_key())
    }

    pub fn is_empty(&self) -> bool {
        self.approved.is_empty()
    }

    /// Forgets every answer (a new task).
    pub fn clear(&mut self) {
        self.approved.clear();
    }
}
