//! What Rein does to its own process so that the secrets it holds stay
//! its own.
//!
//! The API key lives in this process (from the environment or the
//! editor's settings). A command the model runs is a process of the same
//! user: without protection it could read `/proc/<rein>/environ` or
//! `/proc/<rein>/mem`. A process that is not dumpable can be read that way
//! only by one holding `CAP_SYS_PTRACE`, which every command loses before
//! it runs (`rein_sandbox`, `no_ptrace`). Core dumps, which would write the
//! key to disk, are off too.

/// Makes this process non-dumpable. A failure is logged, not fatal: Rein
/// still works, and `rein doctor` reports what protects the key.
pub fn protect_this_process() {
    if let Err(error) = nix::sys::prctl::set_dumpable(false) {
        tracing::warn!(%error, "cannot make the process non-dumpable; commands may be able to read its memory");
    }
}
