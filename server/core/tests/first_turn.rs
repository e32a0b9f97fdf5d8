//! The first message of a fix-test task carries what the harness already
//! knows: the failure (no need to run the test again), the test's source
//! and the code it exercises, so a model can fix the bug in its first turn.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use rein_core::permissions::{Decision, Policy, Rule};
use rein_core::task::TaskState;
use rein_testkit::fake_model::{Reply, Scenario};
use serde_json::json;
use support::{CART_FIXED, Setup, cart_workspace, full_results};

fn fix_at_once() -> Scenario {
    Scenario::new()
        .reply(Reply::text("total() counts items; it must sum price × qty.").tool_call(
            "edit_file",
            json!({"path": "cart.py", "old_text": "    return len(items)", "new_text": "    return sum(item.price * item.qty for item in items)"}),
        ))
        .reply(Reply::text("Fixed total()."))
}

/// The task's first message as the model gets it (the first block of the
/// first request; the progress note follows in a block of its own).
fn first_user_message(r: &support::Run) -> String {
    r.server.requests()[0].body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_fix_test_task_starts_from_the_failure_the_test_and_the_code_under_test() {
    let r = Setup::new(cart_workspace())
        .run(fix_at_once(), |_| {})
        .await;
    expect_test::expect![[r#"
        Fix the failing test `TestCart.test_total` in `tests/test_cart.py`. The test is right: fix the code it exercises, most likely `cart.py`. Edits that change the test are refused.

        The code it exercises (from the failure's traceback and the test's imports):
        cart.py (v1), lines 1-7 of 7:
             1	class Item:
             2	    def __init__(self, price, qty):
             3	        self.price = price
             4	        self.qty = qty
             5	
             6	def total(items):
             7	    return len(items)

        Rein ran the tests before you started, so you do not need to run them to see the failure:
        $ run-tests tests/test_cart.py
        exit code 1; failing: tests.test_cart.TestCart.test_total
        output (last lines):
        F..
        ======================================================================
        FAIL: test_total (tests.test_cart.TestCart.test_total)
        ----------------------------------------------------------------------
        Traceback (most recent call last):
          File "tests/test_cart.py", line 8, in test_total
            self.assertEqual(total(items), 30)
        AssertionError: 2 != 30

        FAILED (failures=1)
        full log: .rein/artifacts/t-test/baseline-1.log

        The test, tests/test_cart.py lines 6-8 (v1):
             6	    def test_total(self):
             7	        items = [Item(10, 1), Item(10, 2)]
             8	        self.assertEqual(total(items), 30)

        Files shown whole above count as read: edit them directly with edit_file (old_text is the file's text, without the line numbers). Find the bug in the code under test, fix it there, then run the test."#]]
    .assert_eq(&first_user_message(&r));
    // The model edited at once, without reading: the file counted as read.
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.outcome.spent.turns, 2);
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
    assert!(
        full_results(&r)[0].starts_with("Edited cart.py"),
        "{:?}",
        full_results(&r)
    );
}

/// Seen in the held-out round of 2026-12-06 (is_valid_parenthesization):
/// a table-driven test failed with "True != False" in case 1, the model
/// saw only the loop over the cases and rewrote the code unchanged. The
/// table the test reads is shown beside it; a table it does not read is
/// not.
#[tokio::test]
async fn the_cases_a_table_driven_test_reads_are_shown_beside_it() {
    let table_test = "import unittest\nfrom cart import Item, total\n\nCASES = [\n    ([Item(10, 1), Item(10, 2)], 30),\n]\nOTHER = [1]\n\n\nclass TestCart(unittest.TestCase):\n    def test_total(self):\n        for items, expected in CASES:\n            self.assertEqual(total(items), expected)\n";
    let ws = cart_workspace().with_file(support::TEST_FILE, table_test);
    let r = Setup::new(ws).run(fix_at_once(), |_| {}).await;
    let first = first_user_message(&r);
    assert!(
        first.contains(concat!(
            "What it reads, tests/test_cart.py lines 4-6:\n",
            "     4\tCASES = [\n",
            "     5\t    ([Item(10, 1), Item(10, 2)], 30),\n",
            "     6\t]\n"
        )),
        "{first}"
    );
    assert!(!first.contains("OTHER"), "{first}");
}

/// A file the user's rules keep from the model is not shown up front
/// either (nor counted as read).
#[tokio::test]
async fn the_first_message_never_shows_a_file_the_model_may_not_read() {
    let r = Setup::new(cart_workspace())
        .run(fix_at_once(), |c| {
            c.policy = Policy::with_builtins(vec![
                Rule::parse(
                    Decision::Deny,
                    "read_file(cart.py)",
                    &rein_core::tools::builtin(),
                )
                .unwrap(),
            ]);
        })
        .await;
    let first = first_user_message(&r);
    assert!(!first.contains("return len(items)"), "{first}");
    assert!(
        first.contains("self.assertEqual(total(items), 30)"),
        "{first}"
    );
    // Not read: the edit needs a read first.
    assert!(
        full_results(&r)[0].starts_with("Read cart.py with read_file before editing it"),
        "{:?}",
        full_results(&r)
    );
}

/// A secret in the code under test is redacted in the first message, and
/// the file does not count as read (its shown text is not its text).
#[tokio::test]
async fn a_secret_in_the_code_under_test_never_reaches_the_first_message() {
    let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ";
    let ws = cart_workspace().with_file(
        "cart.py",
        &format!("KEY = \"{key}\"\n\n{}", support::CART_BROKEN),
    );
    let r = Setup::new(ws).run(fix_at_once(), |_| {}).await;
    let first = first_user_message(&r);
    assert!(!first.contains(key), "{first}");
    assert!(first.contains("def total(items):"), "{first}");
    assert!(
        full_results(&r)[0].starts_with("Read cart.py with read_file before editing it"),
        "{:?}",
        full_results(&r)
    );
}

/// Seen with Qwen2.5-Coder-1.5B: the traceback named
/// `/tmp/…/project/gcd.py` and the model edited `project/gcd.py`, to be
/// told to read a file that does not exist. It is told the path it meant.
#[tokio::test]
async fn an_edit_of_a_path_that_is_not_there_names_the_file_it_meant() {
    let scenario = Scenario::new()
        .reply(Reply::text("Fixing.").tool_call(
            "edit_file",
            json!({"path": "project/cart.py", "old_text": "    return len(items)", "new_text": "    return 0"}),
        ))
        .reply(Reply::text("Fixing.").tool_call(
            "edit_file",
            json!({"path": "nowhere/else.py", "old_text": "a", "new_text": "b"}),
        ))
        .reply(Reply::text("Done."));
    let r = Setup::new(cart_workspace()).run(scenario, |_| {}).await;
    assert_eq!(
        full_results(&r)[..2],
        [
            "There is no file project/cart.py in the project. Did you mean cart.py? Paths are relative to the project's root.",
            "There is no file nowhere/else.py in the project (paths are relative to the project's root); to make a new file use create_file.",
        ]
    );
}

/// Seen in the QuixBugs round: an infinite loop ends in the tests' time
/// limit (`tests/_timeout.py`, innermost frame), the harness showed that
/// helper as the code under test, and the model rewrote it. The program
/// the traceback passes through comes first.
#[tokio::test]
async fn a_test_helper_in_the_traceback_is_not_taken_for_the_code_under_test() {
    const TIMEOUT: &str = "import signal\n\ndef on_alarm(signum, frame):\n    raise TimeoutError('an infinite loop?')\n";
    let ws = cart_workspace().with_file("tests/_timeout.py", TIMEOUT);
    let mut setup = Setup::new(ws);
    setup.exec = std::sync::Arc::new(rein_core::fakes::ScriptedExec::new(|_| {
        rein_core::fakes::command_result(
            1,
            "E..\nERROR: test_total (tests.test_cart.TestCart.test_total)\nTraceback (most recent call last):\n  File \"tests/test_cart.py\", line 8, in test_total\n    self.assertEqual(total(items), 30)\n  File \"cart.py\", line 7, in total\n    return len(items)\n  File \"tests/_timeout.py\", line 4, in on_alarm\n    raise TimeoutError('an infinite loop?')\nTimeoutError: an infinite loop?\n\nFAILED (errors=1)",
            &["tests.test_cart.TestCart.test_total"],
        )
    }));
    let r = setup.run(fix_at_once(), |c| c.budgets.max_turns = 1).await;
    let first = first_user_message(&r);
    assert!(first.contains("most likely `cart.py`"), "{first}");
    let cart = first.find("cart.py (v1), lines 1-7").unwrap();
    let helper = first.find("tests/_timeout.py (v1)").unwrap();
    assert!(cart < helper, "{first}");
}

/// Regression (QuixBugs reverse_linked_list, 1.5B, dev split of
/// 2026-12-07): the test imports `node` before `reverse_linked_list`, the
/// failure's traceback names only the test, and node.py was shown as the
/// likely home of the bug; the model rewrote it for five minutes while
/// Aider fixed the function in 27 s. The module named after the test file
/// comes first.
#[tokio::test]
async fn the_module_named_after_the_test_file_is_the_likely_home_of_the_bug() {
    const NODE: &str = "class Node:\n    def __init__(self, value=None, successor=None):\n        self.value = value\n        self.successor = successor\n";
    const REVERSE: &str = "def reverse_linked_list(node):\n    prevnode = None\n    while node:\n        nextnode = node.successor\n        node.successor = prevnode\n        node = nextnode\n    return prevnode\n";
    const TEST: &str = "import unittest\n\nfrom node import Node\nfrom reverse_linked_list import reverse_linked_list\n\n\nclass TestReverseLinkedList(unittest.TestCase):\n    def test_reverse_linked_list(self):\n        node1 = Node(1)\n        self.assertEqual(reverse_linked_list(node1), node1)\n";
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/memory-root");
    let ws = rein_core::fakes::MemoryWorkspace::new(root)
        .with_file("node.py", NODE)
        .with_file("reverse_linked_list.py", REVERSE)
        .with_file("tests/test_reverse_linked_list.py", TEST);
    let r = Setup::new(ws)
        .task(rein_core::task::TaskSpec::fix_test(
            rein_core::task::TaskId("t-test".into()),
            "tests/test_reverse_linked_list.py",
            "TestReverseLinkedList.test_reverse_linked_list",
        ))
        .run(Scenario::new().reply(Reply::text("I cannot tell.")), |c| {
            c.budgets.max_turns = 1
        })
        .await;
    let first = first_user_message(&r);
    assert!(
        first.contains("most likely `reverse_linked_list.py`"),
        "{first}"
    );
    let program = first.find("reverse_linked_list.py (v1)").unwrap();
    let node = first.find("node.py (v1)").unwrap();
    assert!(program < node, "{first}");
}
