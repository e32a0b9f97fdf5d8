//! `run_tests` needs no approval, so its target must be a test and
//! nothing else: the attacks that passed runner options (`--basetemp`
//! makes pytest delete a directory) or paths outside the workspace through
//! it, played by a scripted model against the loop.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use rein_core::fakes::MemoryWorkspace;
use rein_core::task::{TaskId, TaskSpec};
use rein_testkit::fake_model::{Reply, Scenario};
use serde_json::json;
use support::{CART_BROKEN, Setup, TEST_FILE, TEST_TEXT, cart_workspace};

/// One reply calling `run_tests` on each target, then a closing text.
fn run_each(targets: &[&str]) -> Scenario {
    let mut reply = Reply::text("Running the tests.");
    for target in targets {
        reply = reply.tool_call("run_tests", json!({ "target": target }));
    }
    Scenario::new().reply(reply).reply(Reply::text("done"))
}

/// A task with no checks of its own: every command run is the model's.
fn instruction() -> TaskSpec {
    TaskSpec::instruction(TaskId("t-targets".into()), "Run the tests")
}

#[tokio::test]
async fn a_target_starting_with_a_dash_never_reaches_the_runner() {
    let targets = [
        "--basetemp=/tmp/x",
        "--junitxml=/tmp/report.xml",
        "-k x",
        "-- x",
        "  -p no:cacheprovider",
        "tests/test_cart.py::--basetemp=/x",
        "tests/test_cart.py::TestCart:: -x",
        "@args.txt",
    ];
    let r = Setup::new(cart_workspace())
        .task(instruction())
        .run(run_each(&targets), |c| c.budgets.max_turns = 2)
        .await;
    assert_eq!(r.exec.commands(), Vec::<String>::new());
    let results = support::full_results(&r);
    assert_eq!(results.len(), targets.len());
    for (target, result) in targets.iter().zip(&results) {
        assert!(
            result.starts_with(&format!("`{}` is not a test id", target.trim())),
            "{target}: {result}"
        );
    }
}

#[tokio::test]
async fn a_target_outside_the_workspace_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("test_x.py"), "def test_a(): pass\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), root.path().join("elsewhere")).unwrap();
    let ws = MemoryWorkspace::new(root.path())
        .with_file("cart.py", CART_BROKEN)
        .with_file(TEST_FILE, TEST_TEXT);
    let targets = [
        "../../../etc/passwd",
        "/etc/passwd",
        "tests/../../x/test_a.py::test_a",
        "elsewhere/test_x.py::test_a",
    ];
    let r = Setup::new(ws)
        .task(instruction())
        .run(run_each(&targets), |c| c.budgets.max_turns = 2)
        .await;
    assert_eq!(r.exec.commands(), Vec::<String>::new());
    let results = support::full_results(&r);
    let first_parts: Vec<&str> = results
        .iter()
        .map(|r| r.split(';').next().unwrap())
        .collect();
    assert_eq!(
        first_parts,
        [
            "`../../../etc/passwd` is outside the workspace",
            "`/etc/passwd` is an absolute path: test targets are relative to the project root. Give a test file or directory relative to the project root, optionally followed by ::test_name (e.g. tests/test_cart.py::test_total), or a test name alone.",
            "`tests/../../x/test_a.py::test_a` is outside the workspace",
            &format!(
                "`elsewhere/test_x.py::test_a`: `elsewhere/test_x.py` is outside the workspace ({}) through the symbolic link `elsewhere`",
                root.path().display()
            ),
        ]
    );
}

#[tokio::test]
async fn a_missing_target_file_says_no_such_file() {
    let r = Setup::new(cart_workspace())
        .task(instruction())
        .run(
            run_each(&["tests/test_carts.py::TestCart::test_total", "spec/"]),
            |c| c.budgets.max_turns = 2,
        )
        .await;
    assert_eq!(r.exec.commands(), Vec::<String>::new());
    assert_eq!(
        support::full_results(&r),
        [
            "no such file: tests/test_carts.py (did you mean tests/test_cart.py?); a test target names an existing test file or directory (relative to the project root), optionally with ::test_name",
            "no such file: spec; a test target names an existing test file or directory (relative to the project root), optionally with ::test_name",
        ]
    );
}

/// What was accepted before still runs, in the runner's syntax.
#[tokio::test]
async fn test_ids_paths_and_names_still_reach_the_runner() {
    let targets = [
        "tests/test_cart.py::TestCart::test_total",
        "./tests/test_cart.py",
        "tests/",
        "tests",
        "cart::tests::total",
        "TestCart.test_total",
        "tests/test_cart.py::test_param[a - b]",
    ];
    let r = Setup::new(cart_workspace())
        .task(instruction())
        .run(run_each(&targets), |c| c.budgets.max_turns = 2)
        .await;
    assert_eq!(
        r.exec.commands(),
        [
            "run-tests tests/test_cart.py::TestCart::test_total",
            "run-tests tests/test_cart.py",
            "run-tests tests/",
            // Without a `/` or an extension, a name (as before).
            "run-tests tests",
            "run-tests cart::tests::total",
            "run-tests TestCart.test_total",
            "run-tests 'tests/test_cart.py::test_param[a - b]'",
        ]
    );
}

/// A user's rule sees the target as it runs: `./` and `..` cannot slip a
/// test past `deny: run_tests(tests/slow/*)`.
#[tokio::test]
async fn rules_match_the_target_as_it_runs() {
    let ws = cart_workspace().with_file("tests/slow/test_big.py", "def test_big(): pass\n");
    let targets = [
        "./tests/slow/test_big.py",
        "tests/../tests/slow/test_big.py::test_big",
    ];
    let r = Setup::new(ws)
        .task(instruction())
        .run(run_each(&targets), |c| {
            c.budgets.max_turns = 2;
            c.policy = rein_core::permissions::Policy::with_builtins(vec![
                rein_core::permissions::Rule::parse(
                    rein_core::permissions::Decision::Deny,
                    "run_tests(tests/slow/*)",
                    &rein_core::tools::builtin(),
                )
                .unwrap(),
            ]);
        })
        .await;
    assert_eq!(r.exec.commands(), Vec::<String>::new());
    for result in support::full_results(&r) {
        assert!(
            result.starts_with("Denied by rule deny: run_tests(tests/slow/*)"),
            "{result}"
        );
    }
}

/// On a real disk: directories end with `/`, go's `dir/...` is kept, a
/// symbolic link inside the workspace resolves to its target (what the
/// rules then see), and a path that is not there is named.
#[tokio::test]
async fn targets_are_resolved_on_the_disk_as_every_path_is() {
    use rein_core::os::disk::DiskWorkspace;
    use rein_core::testtarget::TestTarget;

    let root = tempfile::tempdir().unwrap();
    let write = |path: &str| {
        let path = root.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    };
    write("tests/test_cart.py");
    write("pkg/cart/cart_test.go");
    std::os::unix::fs::symlink("tests", root.path().join("t")).unwrap();
    let ws = DiskWorkspace::new(root.path()).unwrap();
    let check = |raw: &'static str| {
        let ws = &ws;
        async move {
            match TestTarget::check(raw, ws).await {
                Ok(Some(target)) => target.to_string(),
                Ok(None) => "(the whole suite)".to_owned(),
                Err(e) => format!("error: {e}"),
            }
        }
    };
    let cases = [
        (
            "tests/test_cart.py::test_total",
            "tests/test_cart.py::test_total",
        ),
        ("./tests", "tests/"),
        ("tests/", "tests/"),
        ("pkg/...", "pkg/..."),
        (
            "./pkg/cart/cart_test.go::TestTotal",
            "pkg/cart/cart_test.go::TestTotal",
        ),
        (
            "t/test_cart.py::test_total",
            "tests/test_cart.py::test_total",
        ),
        ("tests/..", "(the whole suite)"),
        ("TestTotal", "TestTotal"),
        (
            "tests/test_cart.py/",
            "error: no such file: tests/test_cart.py/; a test target names an existing test file or directory (relative to the project root), optionally with ::test_name",
        ),
        (
            "pkg/cart/cart_tests.go::TestTotal",
            "error: no such file: pkg/cart/cart_tests.go (did you mean pkg/cart/cart_test.go?); a test target names an existing test file or directory (relative to the project root), optionally with ::test_name",
        ),
    ];
    for (raw, expected) in cases {
        assert_eq!(check(raw).await, expected, "{raw}");
    }
}
