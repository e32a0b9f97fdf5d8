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
