//! Test doubles for the terminal: a [`Terminal`] whose output the test
//! reads back and whose input is a fixed string.

use std::io::Write;
use std::sync::{Arc, Mutex};

use tokio::io::BufReader;

use super::io::Terminal;

/// A writer the test can read back.
#[derive(Clone, Default)]
pub(super) struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    pub(super) fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

pub(super) fn terminal(input: &'static str) -> (Arc<Terminal>, Shared) {
    let out = Shared::default();
    let t = Terminal::new(
        Box::new(out.clone()),
        Box::new(BufReader::new(input.as_bytes())),
        true,
        false,
    );
    (Arc::new(t), out)
}
