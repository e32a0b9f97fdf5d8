//! What a test run's output says, read without touching the disk or a
//! process: the failures it names (`failures`), its counts (`tally`) and
//! the tests it reports passed (`passes`). The loop and the verifier use
//! them; `host/` runs the commands and reads the files.

pub mod command;
pub mod failures;
pub mod passes;
pub mod tally;
