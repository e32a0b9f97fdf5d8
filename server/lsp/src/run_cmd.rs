//! `rein run`: the agent without an editor (being written).

use std::process::ExitCode;

use crate::cli::RunArgs;

pub fn main(_args: RunArgs) -> ExitCode {
    eprintln!("rein run: not built yet; it comes with the editor front-ends (issue 5).");
    ExitCode::from(2)
}
