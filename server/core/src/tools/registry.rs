//! The tool registry: every fact about a tool in one place — its name,
//! what the model reads about it, the schema of its arguments (derived
//! from the type it parses), its effect on the world, what permission
//! rules match, how UIs name a call, what a crash leaves in doubt, and how
//! it runs. The dispatcher, parallel batching, permission rules, crash
//! recovery and every describer read from here; nothing else names a tool.
//!
//! A built-in tool is a [`TypedTool`] in a file of its own plus one line in
//! [`builtin`](super::builtin). An external tool (an MCP server's) is a
//! [`Tool`] made at run time and [`Registry::add`]ed like any other.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use rein_models::ToolSpec;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ToolOutput;
use super::call::Call;
pub use super::effect::{Effect, ToolKind};
use crate::permissions::{RuleTarget, ToolKinds};

/// What an interrupted call (a crash between its start and its result) is
/// taken to have done, for recovery ([`crate::resume`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnCrash {
    /// Nothing happened that matters: the model may simply ask again.
    NotRun,
    /// Judged by the content of the files it edits.
    ByContent,
    /// It may have run in part, and running it again is harmless: the
    /// model is told this, and the task goes on.
    Rerunnable(&'static str),
    /// It may have done anything in part: the user decides, and Rein never
    /// runs it again by itself.
    InDoubt(&'static str),
}

impl OnCrash {
    /// How an op records it (`journal.rs`), for recovery to read back
    /// when its registry lacks the tool (`resume.rs`).
    pub fn class(self) -> &'static str {
        match self {
            OnCrash::NotRun => "not_run",
            OnCrash::ByContent => "by_content",
            OnCrash::Rerunnable(_) => "rerunnable",
            OnCrash::InDoubt(_) => "in_doubt",
        }
    }
}

/// What a tool-specific call looks like in a UI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Described {
    /// What the call is doing, for a status line: "reading src/cart.py".
    pub title: String,
    /// Its main argument, for a log line: "src/cart.py:10-20".
    pub detail: String,
}

/// One tool, as the registry holds it. Built-in tools implement
/// [`TypedTool`] instead, which derives most of this from a type.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls it by (a contract: renaming breaks
    /// users' permission rules and old traces).
    fn name(&self) -> &str;
    /// What the model reads: when to use it, what it returns, what it does
    /// not do.
    fn description(&self) -> &str;
    /// The JSON Schema of its arguments: a closed object.
    fn input_schema(&self) -> Value;
    fn effect(&self) -> Effect;
    /// What it is for, as a user sees it; by default what its effect says.
    fn kind(&self) -> ToolKind {
        self.effect().kind()
    }
    /// What a permission rule's pattern for this tool matches.
    fn rule_target(&self) -> RuleTarget {
        RuleTarget::Bare
    }
    /// What a crash in the middle of a call leaves.
    fn on_crash(&self) -> OnCrash {
        default_on_crash(self.effect())
    }
    /// How a call with these (unchecked) arguments reads in a UI.
    fn describe(&self, arguments: &Value) -> Described {
        Described {
            title: format!("calling {}", self.name()),
            detail: generic_detail(arguments),
        }
    }
    /// For a tool that edits one file: the file (as the model wrote it)
    /// and, from its text now, what it will hold if the call applies as
    /// asked. Recorded before the call runs, so that recovery can tell
    /// whether it landed.
    fn predicted_edit(&self, _arguments: &Value, _current: Option<&str>) -> Option<PredictedEdit> {
        None
    }
    /// For a tool that proposes a change to a file: the change these
    /// arguments ask for.
    fn proposed_change(&self, _arguments: &Value) -> Option<ProposedChange> {
        None
    }
    /// Runs a call whose arguments matched the schema. `Err` is an early
    /// "no" (a permission, a bad path): the text the model gets.
    async fn run(&self, arguments: &Value, call: &Call<'_, '_>) -> Result<ToolOutput, String>;
}

/// What a call proposes to change, as a reviewer reads it (the trace
/// report shows it as a diff).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProposedChange {
    pub path: String,
    /// The text replaced; `None` for a new file.
    pub old_text: Option<String>,
    pub new_text: String,
    pub replace_all: bool,
}

/// What an edit will leave in its file (see [`Tool::predicted_edit`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PredictedEdit {
    /// The path as the model wrote it (not yet resolved).
    pub path: String,
    /// The whole text after the edit, when it can be known.
    pub after: Option<String>,
}

/// A built-in tool: its arguments are a type, and the schema the model
/// sees is derived from that type, so the two cannot drift.
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    type Input: DeserializeOwned + JsonSchema + Send + Sync;
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    const EFFECT: Effect;
    /// What it is for, as a user sees it (by default, what its effect says).
    const KIND: Option<ToolKind> = None;
    const RULE_TARGET: RuleTarget = RuleTarget::Bare;

    fn on_crash(&self) -> OnCrash {
        default_on_crash(Self::EFFECT)
    }
    fn describe(input: &Self::Input) -> Described;
    fn predicted_edit(_input: &Self::Input, _current: Option<&str>) -> Option<PredictedEdit> {
        None
    }
    fn proposed_change(_input: &Self::Input) -> Option<ProposedChange> {
        None
    }
    async fn run(&self, input: Self::Input, call: &Call<'_, '_>) -> Result<ToolOutput, String>;
}

fn default_on_crash(effect: Effect) -> OnCrash {
    match effect {
        Effect::ReadOnly => OnCrash::NotRun,
        Effect::EditsWorkspace => OnCrash::ByContent,
        Effect::SideEffects | Effect::Unknown => {
            OnCrash::InDoubt("the call was interrupted; what it did is unknown")
        }
    }
}

/// A [`TypedTool`] as a registry entry, with its schema derived once (the
/// dispatcher validates every call against it).
struct Typed<T> {
    tool: T,
    schema: Value,
}

/// `T`'s input read from a call's arguments (without copying them).
fn input_of<T: TypedTool>(arguments: &Value) -> Result<T::Input, serde_json::Error> {
    T::Input::deserialize(arguments)
}

#[async_trait]
impl<T: TypedTool> Tool for Typed<T> {
    fn name(&self) -> &str {
        T::NAME
    }
    fn description(&self) -> &str {
        T::DESCRIPTION
    }
    fn input_schema(&self) -> Value {
        self.schema.clone()
    }
    fn effect(&self) -> Effect {
        T::EFFECT
    }
    fn kind(&self) -> ToolKind {
        T::KIND.unwrap_or_else(|| T::EFFECT.kind())
    }
    fn rule_target(&self) -> RuleTarget {
        T::RULE_TARGET
    }
    fn on_crash(&self) -> OnCrash {
        self.tool.on_crash()
    }
    fn describe(&self, arguments: &Value) -> Described {
        match input_of::<T>(arguments) {
            Ok(input) => T::describe(&input),
            // A call the model got wrong is shown as it was written.
            Err(_) => Described {
                title: format!("calling {}", T::NAME),
                detail: generic_detail(arguments),
            },
        }
    }
    fn predicted_edit(&self, arguments: &Value, current: Option<&str>) -> Option<PredictedEdit> {
        let input = input_of::<T>(arguments).ok()?;
        T::predicted_edit(&input, current)
    }
    fn proposed_change(&self, arguments: &Value) -> Option<ProposedChange> {
        let input = input_of::<T>(arguments).ok()?;
        T::proposed_change(&input)
    }
    async fn run(&self, arguments: &Value, call: &Call<'_, '_>) -> Result<ToolOutput, String> {
        let input = input_of::<T>(arguments)
            .map_err(|e| format!("Invalid arguments for {}: {e}", T::NAME))?;
        self.tool.run(input, call).await
    }
}

/// The arguments on one line, at most 120 characters: how a call of a tool
/// nobody described reads.
fn generic_detail(arguments: &Value) -> String {
    match arguments {
        Value::Null => String::new(),
        Value::Object(map) if map.is_empty() => String::new(),
        other => {
            let text = other.to_string();
            if text.chars().count() > 120 {
                format!("{} …", text.chars().take(120).collect::<String>())
            } else {
                text
            }
        }
    }
}

/// Tools that come and go during a task (an MCP server's list changed,
/// or it was restarted): the loop asks between turns.
#[async_trait]
pub trait ToolUpdates: Send + Sync {
    /// `None`: nothing changed. Else the names of the tools to drop and
    /// the tools to add.
    async fn changed(&self) -> Option<(Vec<String>, Vec<Arc<dyn Tool>>)>;
}

impl fmt::Debug for dyn ToolUpdates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ToolUpdates")
    }
}

/// The tools a task may call, in the order the model sees them.
#[derive(Clone, Default)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
}

/// Why a tool could not join a registry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("a tool named `{0}` is already registered")]
    Duplicate(String),
    #[error(
        "`{0}` is not a usable tool name: 1 to 64 ASCII letters, digits, `_` or `-` (what model APIs accept)"
    )]
    BadName(String),
}

impl Registry {
    /// Adds a typed (built-in) tool.
    pub fn with<T: TypedTool>(self, tool: T) -> Self {
        let mut registry = self;
        // Built-in names are constants, checked by a test; a clash would
        // be a bug of ours, and the first one wins.
        let schema = super::schema::derive::<T::Input>();
        if let Err(e) = registry.add(Arc::new(Typed { tool, schema })) {
            tracing::error!("built-in tool not registered: {e}");
        }
        registry
    }

    /// Adds a tool; its name must be new and one every model API accepts.
    pub fn add(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let name = tool.name();
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(RegistryError::BadName(name.to_owned()));
        }
        if self.get(name).is_some() {
            return Err(RegistryError::Duplicate(name.to_owned()));
        }
        self.tools.push(tool);
        Ok(())
    }

    /// The same tools but `name` (a front end that cannot offer one: a
    /// run nobody answers has no `ask_user`).
    pub fn without(&self, name: &str) -> Registry {
        Registry {
            tools: self
                .tools
                .iter()
                .filter(|t| t.name() != name)
                .cloned()
                .collect(),
        }
    }

    /// The same tools but those named in `names`.
    pub fn without_all(&self, names: &[String]) -> Registry {
        Registry {
            tools: self
                .tools
                .iter()
                .filter(|t| !names.iter().any(|n| n == t.name()))
                .cloned()
                .collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.iter()
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// What the model is told about every tool.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name().to_owned(),
                description: t.description().to_owned(),
                input_schema: t.input_schema(),
            })
            .collect()
    }

    /// Calls of `name` may run side by side with other such calls.
    /// What the tool `name` is for; a tool this registry does not know is
    /// `Other`.
    pub fn kind(&self, name: &str) -> ToolKind {
        self.get(name).map_or(ToolKind::Other, |t| t.kind())
    }

    pub fn is_read_only(&self, name: &str) -> bool {
        self.get(name)
            .is_some_and(|t| t.effect() == Effect::ReadOnly)
    }

    /// What a crash leaves of a call of `name`; a tool this registry does
    /// not know is in doubt, never "not run".
    pub fn on_crash(&self, name: &str) -> OnCrash {
        self.get(name).map_or(
            OnCrash::InDoubt(
                "the call of a tool Rein does not know was interrupted; what it did is unknown",
            ),
            |t| t.on_crash(),
        )
    }

    /// Whether calls of `name` change the workspace's files.
    pub fn edits_workspace(&self, name: &str) -> bool {
        self.get(name)
            .is_some_and(|t| t.effect() == Effect::EditsWorkspace)
    }

    /// The change a call of `name` proposes, if it proposes one.
    pub fn proposed_change(&self, name: &str, arguments: &Value) -> Option<ProposedChange> {
        self.get(name)?.proposed_change(arguments)
    }

    /// How a call reads in a UI, for any name (a trace may name a tool
    /// this build does not have).
    pub fn describe(&self, name: &str, arguments: &Value) -> Described {
        match self.get(name) {
            Some(tool) => tool.describe(arguments),
            None => Described {
                title: format!("calling {name}"),
                detail: generic_detail(arguments),
            },
        }
    }
}

impl ToolKinds for Registry {
    fn rule_target(&self, tool: &str) -> Option<RuleTarget> {
        self.get(tool).map(|t| t.rule_target())
    }

    fn tool_names(&self) -> Vec<&str> {
        self.names()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tools::builtin;
    use crate::tools::schema::validate;
    use serde_json::json;

    /// What the model is told, whole: a change here changes every task.
    #[test]
    fn the_built_in_tools_as_the_model_sees_them() {
        let shown: Vec<String> = builtin()
            .specs()
            .iter()
            .map(|s| format!("{} {}", s.name, s.input_schema))
            .collect();
        expect_test::expect_file!["../../tests/snapshots/tool_schemas.txt"]
            .assert_eq(&(shown.join("\n") + "\n"));
    }

    #[test]
    fn every_schema_is_a_closed_object_with_a_real_description() {
        for tool in builtin().iter() {
            let schema = tool.input_schema();
            assert_eq!(schema["type"], "object", "{}", tool.name());
            assert_eq!(schema["additionalProperties"], false, "{}", tool.name());
            for required in schema["required"].as_array().unwrap() {
                let name = required.as_str().unwrap();
                assert!(schema["properties"].get(name).is_some(), "{}", tool.name());
            }
            for (name, property) in schema["properties"].as_object().unwrap() {
                assert!(
                    property["description"]
                        .as_str()
                        .is_some_and(|d| d.len() > 10),
                    "{}.{name} needs a description",
                    tool.name()
                );
            }
            assert!(tool.description().len() > 80, "{}", tool.name());
        }
    }

    /// The schema is derived from the type the tool parses, so what the
    /// validator lets through, the tool can read.
    #[test]
    fn arguments_the_schema_accepts_are_arguments_the_tool_reads() {
        let registry = builtin();
        for (tool, args) in [
            (
                "read_file",
                json!({"path": "a.py", "start_line": 3, "end_line": 9}),
            ),
            ("list_files", json!({})),
            ("search", json!({"pattern": "x", "glob": "**/*.rs"})),
            (
                "edit_file",
                json!({"path": "a", "old_text": "x", "new_text": ""}),
            ),
            ("create_file", json!({"path": "a", "content": ""})),
            ("run_tests", json!({})),
            (
                "run_command",
                json!({"command": "ls", "timeout_s": 5, "network": false}),
            ),
            ("ask_user", json!({"question": "which?"})),
            ("git_diff", json!({"path": "src"})),
        ] {
            let entry = registry.get(tool).unwrap();
            assert_eq!(
                validate(&args, &entry.input_schema()),
                Vec::<String>::new(),
                "{tool}"
            );
            // A call that parses is described from its fields.
            assert_ne!(
                entry.describe(&args).title,
                format!("calling {tool}"),
                "{tool}"
            );
        }
    }

    #[test]
    fn how_calls_read_in_a_ui() {
        let registry = builtin();
        let shown: Vec<String> = [
            (
                "read_file",
                json!({"path": "src/cart.py", "start_line": 10, "end_line": 20}),
            ),
            ("list_files", json!({"path": "src", "glob": "*.py"})),
            ("search", json!({"pattern": "def total", "path": "src"})),
            (
                "edit_file",
                json!({"path": "cart.py", "old_text": "a\nb", "new_text": "c"}),
            ),
            ("create_file", json!({"path": "new.py", "content": "x\n"})),
            ("run_tests", json!({})),
            ("run_command", json!({"command": "ls -la\nrm -rf /"})),
            ("ask_user", json!({"question": "Which one?\nA or B"})),
            ("git_diff", json!({})),
            ("read_file", json!({"paht": "typo"})),
            ("mcp__files__read", json!({"uri": "file:///x"})),
        ]
        .iter()
        .map(|(tool, args)| {
            let d = registry.describe(tool, args);
            format!("{tool}: {} | {}", d.title, d.detail)
        })
        .collect();
        expect_test::expect![[r#"
            read_file: reading src/cart.py | src/cart.py:10-20
            list_files: listing files | src *.py
            search: searching for def total | "def total" in src
            edit_file: editing cart.py | cart.py (2 lines → 1 line)
            create_file: creating new.py | new.py (new, 1 line)
            run_tests: running tests | (the test suite)
            run_command: running `ls -la\nrm -rf /` | `ls -la\nrm -rf /`
            ask_user: asking you a question | Which one? …
            git_diff: reviewing the changes | .
            read_file: calling read_file | {"paht":"typo"}
            mcp__files__read: calling mcp__files__read | {"uri":"file:///x"}"#]]
        .assert_eq(&shown.join("\n"));
    }

    #[test]
    fn the_registry_reads_effects_and_crash_rules_from_each_tool() {
        let registry = builtin();
        let read_only: Vec<&str> = registry
            .names()
            .into_iter()
            .filter(|n| registry.is_read_only(n))
            .collect();
        assert_eq!(read_only, ["read_file", "list_files", "search", "git_diff"]);
        assert_eq!(registry.on_crash("edit_file"), OnCrash::ByContent);
        assert_eq!(registry.on_crash("create_file"), OnCrash::ByContent);
        assert_eq!(registry.on_crash("read_file"), OnCrash::NotRun);
        assert!(matches!(
            registry.on_crash("run_command"),
            OnCrash::InDoubt(_)
        ));
        assert!(matches!(
            registry.on_crash("run_tests"),
            OnCrash::Rerunnable(_)
        ));
        // A tool this build does not know may have done anything.
        assert!(matches!(
            registry.on_crash("mcp__db__drop"),
            OnCrash::InDoubt(_)
        ));
        assert!(!registry.is_read_only("mcp__db__drop"));
    }

    struct Named(&'static str);

    #[async_trait]
    impl Tool for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            "A tool for tests."
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        }
        fn effect(&self) -> Effect {
            Effect::Unknown
        }
        async fn run(&self, _: &Value, _: &Call<'_, '_>) -> Result<ToolOutput, String> {
            Ok(ToolOutput::ok(
                "done",
                crate::context::history::ResultMeta::Plain,
            ))
        }
    }

    /// An external tool may not shadow a built-in one (an MCP server naming
    /// its tool `edit_file` would otherwise take its permissions), nor carry
    /// a name a model API would refuse.
    #[test]
    fn an_added_tool_cannot_shadow_another_or_carry_a_bad_name() {
        let mut registry = builtin();
        assert_eq!(
            registry.add(Arc::new(Named("edit_file"))),
            Err(RegistryError::Duplicate("edit_file".into()))
        );
        for bad in ["", "has space", "semi;colon", "ünïcode", &"x".repeat(65)] {
            let bad: &'static str = Box::leak(bad.to_owned().into_boxed_str());
            assert_eq!(
                registry.add(Arc::new(Named(bad))),
                Err(RegistryError::BadName(bad.into()))
            );
        }
        registry.add(Arc::new(Named("mcp__db__query"))).unwrap();
        assert_eq!(registry.names().last(), Some(&"mcp__db__query"));
        // Unknown effect: never batched, in doubt after a crash.
        assert!(!registry.is_read_only("mcp__db__query"));
        assert!(matches!(
            registry.on_crash("mcp__db__query"),
            OnCrash::InDoubt(_)
        ));
        assert_eq!(registry.specs().len(), 11);
    }
}
