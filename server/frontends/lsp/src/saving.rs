//! Asking the user to save, for a client that Rein cannot ask (no
//! `rein/saveDocuments`). Tests run on the disk, the user sees the
//! buffers: when they differ, the user is told — not only the model — and
//! either saves (Rein sees the `didSave` and goes on) or lets Rein write
//! the buffers, which it does only over a disk copy the editor has seen.
//! Also the question about a file left in doubt ([`crate::doubt`]).

use rein_core::inert;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::MessageType;

use crate::questions::{ask, unanswered};
use crate::session::Session;

pub const WRITE: &str = "Write them";
pub const WRITE_ALWAYS: &str = "Always write them";
pub const CANCEL: &str = "Cancel";

pub const SAVED: &str = "I saved it";
pub const NOT_THERE: &str = "The change is not there";

/// What became of a request to save.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaveAnswer {
    /// The user saved every file.
    Saved,
    /// The user lets Rein write the buffers.
    Write,
    /// No: why, for the model.
    Declined(String),
}

/// Asks the user to save `paths` (or let Rein write them). Bounded by the
/// approval timeout; dropping the future withdraws the question.
pub async fn ask_to_save(client: &Client, session: &Session, paths: &[String]) -> SaveAnswer {
    let names = list(paths);
    let message = format!(
        "Rein is about to run commands on the files on disk, and {names} {} unsaved changes. Save {} in your editor so the tests run on the text you see, or let Rein write {} (exactly what your editor shows).",
        if paths.len() == 1 { "has" } else { "have" },
        if paths.len() == 1 { "it" } else { "them" },
        if paths.len() == 1 { "it" } else { "them" },
    );
    let (answer, timeout) = ask(client, session, message, &[WRITE, WRITE_ALWAYS, CANCEL]).await;
    match answer {
        Ok(Some(WRITE)) => SaveAnswer::Write,
        Ok(Some(WRITE_ALWAYS)) => {
            session
                .write_buffers_always
                .store(true, std::sync::atomic::Ordering::SeqCst);
            SaveAnswer::Write
        }
        Ok(Some(_)) => SaveAnswer::Declined("the user cancelled".into()),
        Ok(None) => SaveAnswer::Declined("the user dismissed the question".into()),
        Err(why) => SaveAnswer::Declined(unanswered(&why, timeout)),
    }
}

/// Tells the user that Rein's change to `path` may sit unsaved in a buffer
/// the editor does not share, and asks them to save it. Returns what the
/// user said, if anything.
pub async fn ask_about_doubt(client: &Client, session: &Session, path: &str) -> Option<String> {
    let path = inert::line(path);
    let message = format!(
        "Your editor says it applied Rein's change to {path}, but it does not share {path} with Rein, so Rein cannot see whether the change is there. Save {path} (Rein will not touch it until then), or tell Rein the change is not there."
    );
    match ask(client, session, message, &[SAVED, NOT_THERE]).await.0 {
        Ok(Some(SAVED)) => Some(format!("“{SAVED}”")),
        Ok(Some(NOT_THERE)) => Some(format!("“{NOT_THERE}”")),
        _ => None,
    }
}

/// After Rein wrote buffers to disk for a client that cannot save on
/// request: the editor may now think the files changed behind its back.
pub async fn tell_written(client: &Client, paths: &[String]) {
    let names = list(paths);
    tell(
        client,
        MessageType::INFO,
        format!(
            "Rein wrote {names} to disk, exactly as your editor shows {}. If your editor says {} changed on disk, reload: nothing is lost.",
            if paths.len() == 1 { "it" } else { "them" },
            if paths.len() == 1 { "it" } else { "they" },
        ),
    )
    .await;
}

pub async fn tell(client: &Client, kind: MessageType, message: String) {
    client.show_message(kind, message).await;
}

/// "a.py", "a.py and b.py", "a.py, b.py and c.py" (inert).
fn list(paths: &[String]) -> String {
    let names: Vec<String> = paths.iter().map(|p| inert::line(p).into_owned()).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_lists_read_as_english_and_stay_inert() {
        assert_eq!(list(&["a.py".into()]), "a.py");
        assert_eq!(list(&["a.py".into(), "b.py".into()]), "a.py and b.py");
        assert_eq!(
            list(&["a.py".into(), "b\n.py".into(), "c.py".into()]),
            "a.py, b\\n.py and c.py"
        );
    }
}
