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
