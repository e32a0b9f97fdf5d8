//! What a test run's output says, read without touching the disk or a
//! process: the failures it names (`failures`), its counts (`tally`) and
//! the tests it reports passed (`passes`); how the verifier runs unittest
//! and pytest through Rein's own runner (`isolated`) and reads its report
//! (`reporter`), and the examples Python files document (`examples`); what a front end is told of a run's failed and passed
//! tests (`outcomes`); which files and statements change the test machinery
//! (`machinery`) or stand in for the runner or the test (`shadow`). The
//! loop and the verifier use them; `os/` runs the commands and reads
//! the files.

pub mod command;
pub mod examples;
pub mod failures;
pub mod isolated;
pub mod machinery;
pub mod outcomes;
pub mod passes;
pub mod reporter;
pub mod shadow;
pub mod tally;
