//! `rein demo`, the real binary, with the scripted model: it must fix the
//! sample project's failing test through the real language server, show
//! what an editor would, leave the fixed project where it says, and exit 0.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use pretty_assertions::assert_eq;
use rein_testkit::rein_binary;
use tokio::process::Command;

#[tokio::test]
async fn the_demo_fixes_the_sample_project_with_the_scripted_model() {
    // No user configuration may leak in: a config file that sets budgets
    // or a provider would change what the demo does.
    let config_home = tempfile::tempdir().unwrap();
    let mut command = Command::new(rein_binary().unwrap());
    command
        .arg("demo")
        .env_remove("REIN_PROVIDER")
        .env_remove("REIN_MODEL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("REIN_MAX_TURNS")
        .env_remove("REIN_MAX_COST_USD")
        .env("XDG_CONFIG_HOME", config_home.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // The demo has its own 60 s limit; this one only keeps a broken demo
    // from hanging the suite.
    let output = tokio::time::timeout(Duration::from_secs(180), command.output())
        .await
        .expect("rein demo did not end")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let context = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(output.status.code(), Some(0), "{context}");

    for expected in [
        // The scripted model is announced first, with how to use a real one.
        "The model is SCRIPTED",
        "REIN_PROVIDER=anthropic ANTHROPIC_API_KEY=… rein demo",
        // The code action the editor found and ran.
        "▸ Fix test test_total with Rein",
        // The proposal, approved.
        "✎ workspace/applyEdit: Rein proposes a change to cart.py",
        "✔ approved",
        // Progress as a status line.
        "⟳ turn 1/20",
        // The verification and its evidence.
        "✔ verification passed",
        "command   python3 -m unittest -v tests.test_cart.TestCart.test_total",
        "result    exit code 0 in",
        "file      cart.py @ ",
        // The end.
        "exited with 0",
        "✔ Fixed. Final state `succeeded`",
    ] {
        assert!(stdout.contains(expected), "{expected:?} missing\n{context}");
    }
    let scripted_notice = stdout.find("The model is SCRIPTED").unwrap();
    let first_editor_line = stdout.find("editor ·").unwrap();
    assert!(
        scripted_notice < first_editor_line,
        "the notice comes first\n{context}"
    );
    let fixed = "return sum(item.price * item.qty for item in items)";
    assert!(
        stdout.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with('+') && !l.starts_with("+++") && l.contains(fixed)
        }),
        "no diff line adds the fix\n{context}"
    );
    assert!(
        stdout.lines().any(|l| l.trim_start().starts_with('-')
            && l.contains("return sum(item.qty for item in items)")),
        "no diff line removes the bug\n{context}"
    );

    // The project is where the demo says, fixed on disk, and its tests pass.
    let project = stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("project "))
        .map(|p| PathBuf::from(p.trim()))
        .unwrap_or_else(|| panic!("no project line\n{context}"));
    assert!(stdout.contains(&format!(
        "cd {} && python3 -m unittest -v",
        project.display()
    )));
    let cart = std::fs::read_to_string(project.join("cart.py")).unwrap();
    assert!(cart.contains(fixed), "{cart}");
    assert!(!cart.contains("return sum(item.qty for item in items)\n\n\ndef count"));
    let tests = Command::new("python3")
        .args(["-m", "unittest", "-v"])
        .current_dir(&project)
        .output()
        .await
        .unwrap();
    let report = String::from_utf8_lossy(&tests.stderr);
    assert!(tests.status.success(), "{report}");
    assert!(report.contains("test_total"), "{report}");
    assert!(report.contains("Ran 3 tests"), "{report}");

    // The server's log is in the project, and a clean run leaves no error.
    let log = std::fs::read_to_string(project.join(".rein/logs/demo-server.stderr.log")).unwrap();
    assert!(!log.contains("ERROR"), "{log}");

    // The demo keeps the project for the user; the test cleans up.
    let _ = std::fs::remove_dir_all(&project);
}
