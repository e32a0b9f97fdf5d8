//! Where a command may write, in the words of the permission that asks
//! about it: a session's folder is the reach of every command Rein runs
//! there, so the question says so ("it can write only in /home/me/shop
//! and its own temporary folder"), or says that nothing confines it.

use std::path::{Path, PathBuf};

use rein_core::exec::{Confinement, SandboxMode};

/// What confines a task's commands.
#[derive(Clone, Debug)]
pub struct Writes {
    pub root: PathBuf,
    /// The workspace's sandbox mode (`[sandbox] mode`).
    pub mode: SandboxMode,
    /// More folders the settings let commands write.
    pub writable: Vec<PathBuf>,
    pub confinement: Confinement,
}

impl Writes {
    /// Where a command may write; `rule_mode`: the mode a
    /// `[[sandbox.rules]]` entry gives this command.
    pub fn describe(&self, rule_mode: Option<SandboxMode>) -> String {
        let unconfined = "it runs outside Rein's sandbox: it can change anything you can";
        let missing = match &self.confinement {
            Confinement::Off | Confinement::Unmanaged => return unconfined.to_owned(),
            Confinement::Full { .. } => None,
            Confinement::Degraded { missing, .. } => Some(missing),
        };
        let mut text = match rule_mode.unwrap_or(self.mode) {
            SandboxMode::Off => return unconfined.to_owned(),
            SandboxMode::ReadOnly => "it can write only its own temporary folder".to_owned(),
            SandboxMode::WorkspaceWrite => {
                let mut places = vec![shown(&self.root)];
                places.extend(self.writable.iter().map(|p| shown(p)));
                format!(
                    "it can write only in {} and its own temporary folder",
                    places.join(", ")
                )
            }
        };
        if let Some(missing) = missing.filter(|m| !m.is_empty()) {
            text.push_str(&format!(
                " (as far as this machine's sandbox holds: it lacks {})",
                missing.join("; ")
            ));
        }
        text
    }
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writes(confinement: Confinement) -> Writes {
        Writes {
            root: "/home/me/shop".into(),
            mode: SandboxMode::WorkspaceWrite,
            writable: vec!["/home/me/.cache/shop-build".into()],
            confinement,
        }
    }

    #[test]
    fn the_question_says_where_a_command_may_write() {
        let full = writes(Confinement::Full {
            description: "workspace-write, files confined by Landlock".into(),
        });
        assert_eq!(
            full.describe(None),
            "it can write only in /home/me/shop, /home/me/.cache/shop-build and its own temporary folder"
        );
        assert_eq!(
            full.describe(Some(SandboxMode::ReadOnly)),
            "it can write only its own temporary folder"
        );
        assert_eq!(
            full.describe(Some(SandboxMode::Off)),
            "it runs outside Rein's sandbox: it can change anything you can"
        );
        assert_eq!(
            writes(Confinement::Off).describe(None),
            "it runs outside Rein's sandbox: it can change anything you can"
        );
        let degraded = writes(Confinement::Degraded {
            description: "workspace-write".into(),
            missing: vec!["Landlock (the kernel has none)".into()],
        });
        assert!(
            degraded.describe(None).ends_with(
                "(as far as this machine's sandbox holds: it lacks Landlock (the kernel has none))"
            ),
            "{}",
            degraded.describe(None)
        );
    }
}
