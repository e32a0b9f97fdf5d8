//! `rein demo`: a failing test fixed end to end (being written).

use std::process::ExitCode;

pub fn main() -> ExitCode {
    eprintln!("rein demo: not built yet; it comes with the editor front-ends (issue 5).");
    ExitCode::from(2)
}
