//! The command line of the real binary.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use rein_testkit::rein_binary;

fn rein(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(rein_binary().unwrap())
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn help_lists_every_subcommand() {
    let (code, stdout, _) = rein(&["--help"]);
    assert_eq!(code, 0);
    for sub in [
        "lsp", "run", "demo", "trace", "doctor", "trust", "eval", "undo",
    ] {
        assert!(stdout.contains(sub), "{sub} missing from:\n{stdout}");
    }
}

#[test]
fn run_needs_a_task() {
    let (code, _, stderr) = rein(&["run"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--fix-test"), "{stderr}");
}
