//! The tools the model sees: names (a contract, DESIGN.md §5),
//! descriptions that say when to use each, what it returns and what it does
//! not do, and the JSON Schemas of their arguments.

use rein_models::ToolSpec;
use serde_json::{Value, json};

/// Every tool, in the order the model sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolName {
    ReadFile,
    ListFiles,
    Search,
    EditFile,
    CreateFile,
    RunTests,
    RunCommand,
    AskUser,
}

pub const ALL: [ToolName; 8] = [
    ToolName::ReadFile,
    ToolName::ListFiles,
    ToolName::Search,
    ToolName::EditFile,
    ToolName::CreateFile,
    ToolName::RunTests,
    ToolName::RunCommand,
    ToolName::AskUser,
];

impl ToolName {
    pub fn parse(name: &str) -> Option<Self> {
        ALL.into_iter().find(|t| t.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadFile => "read_file",
            Self::ListFiles => "list_files",
            Self::Search => "search",
            Self::EditFile => "edit_file",
            Self::CreateFile => "create_file",
            Self::RunTests => "run_tests",
            Self::RunCommand => "run_command",
            Self::AskUser => "ask_user",
        }
    }

    /// Calls that change nothing may run in parallel with each other.
    pub fn is_read_only(self) -> bool {
        matches!(self, Self::ReadFile | Self::ListFiles | Self::Search)
    }

    pub fn spec(self) -> ToolSpec {
        let (description, schema) = match self {
            Self::ReadFile => (READ_FILE, read_file_schema()),
            Self::ListFiles => (LIST_FILES, list_files_schema()),
            Self::Search => (SEARCH, search_schema()),
            Self::EditFile => (EDIT_FILE, edit_file_schema()),
            Self::CreateFile => (CREATE_FILE, create_file_schema()),
            Self::RunTests => (RUN_TESTS, run_tests_schema()),
            Self::RunCommand => (RUN_COMMAND, run_command_schema()),
            Self::AskUser => (ASK_USER, ask_user_schema()),
        };
        ToolSpec {
            name: self.as_str().to_owned(),
            description: description.to_owned(),
            input_schema: schema,
        }
    }
}

/// All tool names, for "unknown tool" messages.
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|t| t.as_str()).collect()
}

const READ_FILE: &str = "Read a text file of the project. Use it before editing a file (edit_file applies to the version you last read) and whenever you need the exact current text: the user may be editing too, so an earlier read can be stale. Returns the lines numbered from 1 and the version read (open files are read from the editor's live buffer). Reads up to 2000 lines at a time: use start_line/end_line for more. Does not list directories (use list_files) or search (use search). Paths are relative to the project root.";

const LIST_FILES: &str = "List the files under a directory of the project (default: the root), recursively, skipping what .gitignore ignores. Use it to find where code lives. Returns relative paths, one per line, at most 500. Use glob to filter, e.g. \"**/*.py\" or \"tests/**\". Does not show file contents.";

const SEARCH: &str = "Search the project's files for a regular expression (Rust regex syntax), skipping what .gitignore ignores. Use it to find definitions, usages and error messages. Returns matching lines as path:line: text, at most 200. Narrow with path (a directory) and glob (e.g. \"**/*.rs\"). Does not read whole files (use read_file).";

const EDIT_FILE: &str = "Replace text in a file you have read. old_text must match the current file exactly, including indentation and line breaks, and exactly once (add surrounding lines to make it unique), unless replace_all is true. Keep edits small and focused; make several calls for changes in several places. The edit is shown to the user, who may approve or reject it. Returns the new version and the changed lines. If the file changed since you read it, the edit is refused and you must read it again. Does not create files (use create_file).";

const CREATE_FILE: &str = "Create a new file with the given content (parent directories are created). Refused if the file already exists: use edit_file to change existing files. The new file is shown to the user for approval.";

const RUN_TESTS: &str = "Run the project's tests (the test command is detected: cargo, pytest or unittest, vitest/jest/npm, go; or configured). target narrows the run to a test id: a test file or directory relative to the project root (tests/test_cart.py, tests/), optionally followed by ::test_name (tests/test_cart.py::TestCart::test_total, tests/cart.rs::total, pkg/cart/cart_test.go::TestTotal, src/cart.test.ts::Cart > total), or a test name alone (cart::tests::total, TestTotal). The path must exist inside the project. A target is never passed as runner options: one that starts with - (e.g. -k, --basetemp) is refused; use run_command for options. Your edits are saved to disk first. Returns the exit code, the duration, the failing tests and the last 50 lines of output, with the path of the full log (read it with read_file for more). Use it to see the failure before changing code, and after every change to check it. It is stopped at the configured time limit, or when the task's time budget runs out.";

const RUN_COMMAND: &str = "Run a shell command in the project root, e.g. a build or a linter. It runs in Rein's sandbox: it may write only the project and $TMPDIR (not .rein/, .git/hooks or .git/config), cannot read the home directory's secrets, and has loopback (localhost) only unless you set network: true (the user is then asked). The user is asked before most commands run; destructive commands (rm -rf, git push, …) are denied. Your edits are saved to disk first. Returns the exit code, the duration and the last 50 lines of output, with the path of the full log. It is killed at its time limit: timeout_s if you give one, but never more than the configured limit (120 s unless configured) nor the time left in the task's budget; the result says when the limit was not the one you asked for. Prefer run_tests for tests and read_file/search over cat/grep.";

const ASK_USER: &str = "Ask the user a question when you cannot go on without their decision or knowledge (e.g. which of two behaviours is intended). The task waits for the answer, which comes back as this call's result. Do not ask for permission to edit or run commands: those are approved separately.";

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn read_file_schema() -> Value {
    object(
        json!({
            "path": {"type": "string", "minLength": 1, "description": "The file, relative to the project root."},
            "start_line": {"type": "integer", "minimum": 1, "description": "First line to return (1-based, default 1)."},
            "end_line": {"type": "integer", "minimum": 1, "description": "Last line to return (inclusive, default start_line + 1999)."}
        }),
        &["path"],
    )
}

fn list_files_schema() -> Value {
    object(
        json!({
            "path": {"type": "string", "description": "Directory to list, relative to the project root (default: the root)."},
            "glob": {"type": "string", "minLength": 1, "description": "Only paths matching this glob, e.g. \"**/*.py\"."}
        }),
        &[],
    )
}

fn search_schema() -> Value {
    object(
        json!({
            "pattern": {"type": "string", "minLength": 1, "description": "A regular expression."},
            "path": {"type": "string", "description": "Directory to search (default: the root)."},
            "glob": {"type": "string", "minLength": 1, "description": "Only files matching this glob, e.g. \"**/*.rs\"."}
        }),
        &["pattern"],
    )
}

fn edit_file_schema() -> Value {
    object(
        json!({
            "path": {"type": "string", "minLength": 1, "description": "The file to edit, relative to the project root."},
            "old_text": {"type": "string", "minLength": 1, "description": "The exact text to replace, as it is in the file now."},
            "new_text": {"type": "string", "description": "The replacement text."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of exactly one (default false)."}
        }),
        &["path", "old_text", "new_text"],
    )
}

fn create_file_schema() -> Value {
    object(
        json!({
            "path": {"type": "string", "minLength": 1, "description": "The new file, relative to the project root."},
            "content": {"type": "string", "description": "The whole content of the file."}
        }),
        &["path", "content"],
    )
}

fn run_tests_schema() -> Value {
    object(
        json!({
            "target": {"type": "string", "minLength": 1, "description": "A test id: a file or directory relative to the project root, optionally with ::test_name, or a test name. Never runner options. Default: the whole suite."}
        }),
        &[],
    )
}

fn run_command_schema() -> Value {
    object(
        json!({
            "command": {"type": "string", "minLength": 1, "description": "The shell command (run with sh -c)."},
            "timeout_s": {"type": "integer", "minimum": 1, "maximum": 3600, "description": "Seconds before the command is killed; at most the configured limit (default 120) and the task's time left."},
            "network": {"type": "boolean", "description": "true if the command needs the network (installing packages, fetching): the user is asked, and it runs with the network. Otherwise it has loopback (localhost) only."}
        }),
        &["command"],
    )
}

fn ask_user_schema() -> Value {
    object(
        json!({
            "question": {"type": "string", "minLength": 1, "description": "The question, with the options if there are any."}
        }),
        &["question"],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_schemas_are_closed_objects() {
        for tool in ALL {
            assert_eq!(ToolName::parse(tool.as_str()), Some(tool));
            let spec = tool.spec();
            assert_eq!(spec.input_schema["type"], "object");
            assert_eq!(spec.input_schema["additionalProperties"], false);
            // Every required argument is a declared property.
            for required in spec.input_schema["required"].as_array().unwrap() {
                assert!(
                    spec.input_schema["properties"]
                        .get(required.as_str().unwrap())
                        .is_some()
                );
            }
            assert!(
                spec.description.len() > 80,
                "{} needs a real description",
                tool.as_str()
            );
        }
        assert_eq!(ToolName::parse("cat"), None);
    }
}
