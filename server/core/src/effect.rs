//! What running a tool may do to the world: a leaf, so that the policy
//! can speak of it without knowing the tools.

/// What running a tool may do to the world. It decides which calls may
/// run side by side, the default permission of a tool the policy knows
/// only by name, and what a crash leaves in doubt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Reads only: calls may run in parallel; a crash loses nothing.
    ReadOnly,
    /// Changes the workspace's files, through the workspace: a crash is
    /// judged by the files' content.
    EditsWorkspace,
    /// May change anything it can reach (a process, a remote service).
    SideEffects,
    /// Nobody said: treated as the worst case.
    Unknown,
}

/// What a tool is for, as a user sees it (a panel's icon, a status verb):
/// each tool's own fact ([`crate::tools::Tool::kind`]), never guessed from
/// its name by a front end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Reads files or the project's state.
    Read,
    /// Searches the project.
    Search,
    /// Changes files in the workspace.
    Edit,
    /// Runs something (a command, the tests, a tool with effects).
    Execute,
    /// Asks the user.
    Ask,
    /// A tool nobody said anything of.
    #[default]
    Other,
}

impl Effect {
    /// The kind of a tool that says only what it does to the world.
    pub fn kind(self) -> ToolKind {
        match self {
            Effect::ReadOnly => ToolKind::Read,
            Effect::EditsWorkspace => ToolKind::Edit,
            Effect::SideEffects | Effect::Unknown => ToolKind::Execute,
        }
    }
}
