//! Why Rein did not go through a path, in words for the model and the
//! user, carried inside an [`std::io::Error`].

use std::io;

/// What Rein was about to do, for the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Read,
    Write,
}

impl Verb {
    fn word(self) -> &'static str {
        match self {
            Verb::Read => "read",
            Verb::Write => "write",
        }
    }
}

/// Why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A symbolic link whose target is absolute, climbs above the root,
    /// or is one of the kernel's magic links.
    LinkOutside,
    /// A symbolic link where none is followed (Rein's own folders, or the
    /// last component of a file Rein appends to).
    Link,
    /// The path given is absolute or has `..` in it.
    NotBeneath,
    /// A component kept changing between a symbolic link and a folder or
    /// file while Rein opened it (someone is swapping it).
    Changing,
}

/// A path Rein refused to resolve. `path` is as the caller knows it
/// (relative to the root, with the root's own prefix such as `.rein/`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct Refused {
    pub path: String,
    pub reason: Reason,
    pub verb: Verb,
    /// What the user can do about it, if the root says.
    pub hint: Option<&'static str>,
}

impl Refused {
    fn message(&self) -> String {
        let (path, verb) = (&self.path, self.verb.word());
        let mut text = match self.reason {
            Reason::LinkOutside => format!(
                "{path} is a symbolic link to a place outside the workspace; Rein does not {verb} through it"
            ),
            Reason::Link => {
                format!("{path} is a symbolic link; Rein does not {verb} through it")
            }
            Reason::Changing => format!(
                "{path} keeps changing between a symbolic link and a folder or file while Rein opens it; Rein does not {verb} through it"
            ),
            Reason::NotBeneath => {
                format!("{path}: not a path inside the folder; use a relative path without `..`")
            }
        };
        if let Some(hint) = self.hint {
            text.push_str(" (");
            text.push_str(hint);
            text.push(')');
        }
        text
    }

    /// The same refusal, told as one of `verb` (a check made before a
    /// write reads, but the user is about to write).
    pub fn with_verb(&self, verb: Verb) -> Refused {
        Refused {
            verb,
            ..self.clone()
        }
    }

    pub(crate) fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::PermissionDenied, self)
    }
}

/// The refusal inside `error`, if it is one.
pub fn refusal(error: &io::Error) -> Option<&Refused> {
    error.get_ref()?.downcast_ref::<Refused>()
}
