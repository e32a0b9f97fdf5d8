//! The built-in tools, in the order the model sees them. Adding a tool is
//! a file of its own and one line here.

use std::sync::LazyLock;

use super::registry::Registry;
use super::{
    ask_user::AskUser, create_file::CreateFile, edit_file::EditFile, git_diff::GitDiff,
    list_files::ListFiles, read_file::ReadFile, run_command::RunCommand, run_tests::RunTests,
    search::Search, write_file::WriteFile,
};

/// Every built-in tool. Built (and each schema derived) once per process;
/// a copy is a list of shared entries.
pub fn builtin() -> Registry {
    BUILTIN.clone()
}

static BUILTIN: LazyLock<Registry> = LazyLock::new(|| {
    Registry::default()
        .with(ReadFile)
        .with(ListFiles)
        .with(Search)
        .with(EditFile)
        .with(WriteFile)
        .with(CreateFile)
        .with(RunTests)
        .with(RunCommand)
        .with(AskUser)
        .with(GitDiff)
});

#[cfg(test)]
mod tests {
    use super::*;

    /// What each built-in tool is for, as every front end shows it (a
    /// panel's icon): the registry's fact, so no front end spells tool
    /// names.
    #[test]
    fn every_builtin_tool_says_what_it_is_for() {
        let registry = builtin();
        let kinds: Vec<String> = registry
            .names()
            .iter()
            .map(|name| format!("{name}: {:?}", registry.kind(name)))
            .collect();
        expect_test::expect![[r#"
            [
                "read_file: Read",
                "list_files: Read",
                "search: Search",
                "edit_file: Edit",
                "write_file: Edit",
                "create_file: Edit",
                "run_tests: Execute",
                "run_command: Execute",
                "ask_user: Ask",
                "git_diff: Read",
            ]
        "#]]
        .assert_debug_eq(&kinds);
        assert_eq!(
            registry.kind("mcp__unknown__tool"),
            super::super::ToolKind::Other
        );
    }
}
