//! What the client served, kept while nothing can have changed it.
//!
//! ACP gives a file's text no version: only asking again says whether the
//! user typed. Asking for every read made one four-turn task send 24
//! `fs/read_text_file` for two files (the first turn's context, the model's
//! reads, each edit, the verifier's checks before and after each run). A
//! step of Rein's own — building a turn's context, a batch of calls —
//! takes milliseconds; the user's typing lands in between the steps that
//! take time. So a read is answered from here while the task has not let
//! time pass since the client served it, and asked again after: a model
//! call, a tool's result, a verdict, the start of a task. While commands
//! may run (from `flush_to_disk` on, until the next of those) nothing is
//! kept: the verifier reads after its checks to see whether the user
//! typed meanwhile. The text an edit is written over is always asked
//! fresh (`workspace.rs`): a keystroke is never lost to this cache.

use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Default)]
pub struct ReadCache {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Commands may be running: nothing is kept.
    volatile: bool,
    /// Workspace-relative path → the text the client served (or was
    /// given) since time last passed.
    texts: HashMap<String, String>,
}

impl ReadCache {
    /// The text served for `path` since time last passed.
    pub fn get(&self, path: &str) -> Option<String> {
        self.state.lock().ok()?.texts.get(path).cloned()
    }

    /// The client holds `text` for `path` now.
    pub fn put(&self, path: &str, text: &str) {
        if let Ok(mut state) = self.state.lock()
            && !state.volatile
        {
            state.texts.insert(path.to_owned(), text.to_owned());
        }
    }

    /// Time passed (a model call, a tool's result, a verdict): the user may
    /// have typed.
    pub fn time_passed(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.volatile = false;
            state.texts.clear();
        }
    }

    /// Commands may run from now on, taking whatever time they take: keep
    /// nothing until time has passed.
    pub fn commands_may_run(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.volatile = true;
            state.texts.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_kept_until_time_passes_and_never_while_commands_run() {
        let cache = ReadCache::default();
        cache.put("cart.py", "v1");
        assert_eq!(cache.get("cart.py").as_deref(), Some("v1"));
        cache.time_passed();
        assert_eq!(cache.get("cart.py"), None);
        cache.put("cart.py", "v2");
        cache.commands_may_run();
        assert_eq!(cache.get("cart.py"), None);
        cache.put("cart.py", "v3");
        assert_eq!(cache.get("cart.py"), None);
        cache.time_passed();
        cache.put("cart.py", "v4");
        assert_eq!(cache.get("cart.py").as_deref(), Some("v4"));
    }
}
