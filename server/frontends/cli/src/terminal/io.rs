//! [`Terminal`]: where Rein writes to the user (stderr, everything
//! escaped) and reads the answers (stdin, line by line), or test doubles.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};

use rein_core::inert;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};

use rein_app::format::Styled;

/// Where Rein talks to the user and reads the answers.
pub struct Terminal {
    out: Mutex<Box<dyn Write + Send>>,
    input: tokio::sync::Mutex<Box<dyn AsyncBufRead + Send + Unpin>>,
    /// Write each answer after its prompt: when stdin is not a keyboard,
    /// nothing else shows what was answered.
    echo_answers: bool,
    /// Colour diffs.
    color: bool,
}

impl Terminal {
    /// stderr and stdin; colour only when stderr is a terminal and
    /// `NO_COLOR` is not set.
    pub fn stdio() -> Arc<Self> {
        let color = std::io::stderr().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        Arc::new(Self::new(
            Box::new(std::io::stderr()),
            Box::new(BufReader::new(tokio::io::stdin())),
            !std::io::stdin().is_terminal(),
            color,
        ))
    }

    pub fn new(
        out: Box<dyn Write + Send>,
        input: Box<dyn AsyncBufRead + Send + Unpin>,
        echo_answers: bool,
        color: bool,
    ) -> Self {
        Self {
            out: Mutex::new(out),
            input: tokio::sync::Mutex::new(input),
            echo_answers,
            color,
        }
    }

    pub fn color(&self) -> bool {
        self.color
    }

    /// Writes `text` with every character a terminal would act on shown
    /// escaped ([`inert::block`]); line breaks and tabs stay.
    pub fn write(&self, text: &str) {
        self.write_raw(&inert::block(text));
    }

    /// Writes a diff coloured by Rein (its content already escaped).
    pub fn write_styled(&self, text: &Styled) {
        self.write_raw(text.as_str());
    }

    /// A failed write to stderr is not worth stopping a task for.
    fn write_raw(&self, text: &str) {
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// Writes `text` and a newline.
    pub fn line(&self, text: &str) {
        self.write(&format!("{text}\n"));
    }

    /// Shows `prompt` and reads one line. `None` at the end of the input
    /// (or if it cannot be read); the line without its line ending else.
    pub async fn ask(&self, prompt: &str) -> Option<String> {
        // One question at a time: its prompt, then its answer.
        let mut input = self.input.lock().await;
        self.write(prompt);
        let mut line = String::new();
        match input.read_line(&mut line).await {
            Ok(0) | Err(_) => {
                self.line(if self.echo_answers {
                    "(no answer: end of input)"
                } else {
                    ""
                });
                None
            }
            Ok(_) => {
                let answer = line.trim_end_matches(['\n', '\r']).to_owned();
                if self.echo_answers {
                    self.line(&answer);
                }
                Some(answer)
            }
        }
    }
}
