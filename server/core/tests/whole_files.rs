//! The `whole` edit format (small models, as Aider asks of them): a file
//! written whole in the reply is a `write_file` call, checked at once; a
//! block that is not a file, a file unchanged, a rewritten test and a file
//! with parts left out change nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use rein_core::harness::EditFormat;
use rein_core::task::TaskState;
use rein_testkit::fake_model::{Reply, Scenario, StopReason};
use serde_json::json;
use support::{CART_BROKEN, CART_FIXED, Run, Setup, TEST_FILE, TEST_TEXT, cart_workspace};

fn whole(config: &mut rein_core::agent::AgentConfig) {
    config.edit_format = EditFormat::Whole;
}

fn file_reply(path: &str, text: &str) -> Reply {
    Reply::text(format!(
        "The bug is in total(): it counts the items.\n\n{path}\n```python\n{text}```\n"
    ))
}

/// What the model was told after each reply, in order (the last text of
/// each request after the first).
fn told(r: &Run) -> Vec<String> {
    r.server
        .requests()
        .iter()
        .skip(1)
        .map(|req| {
            let last = req.body["messages"].as_array().unwrap().last().unwrap();
            let texts: Vec<String> = last["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|part| {
                    part["text"]
                        .as_str()
                        .or(part["content"].as_str())
                        .unwrap_or_default()
                        .to_owned()
                })
                .collect();
            texts.join("\n")
        })
        .collect()
}

/// The test file as a small model rewrote it in get_factors: an import
/// added, the test itself as it was.
fn with_an_import_added() -> String {
    TEST_TEXT.replace(
        "import unittest\n",
        "import unittest\nfrom unittest import TestCase\n",
    )
}

fn written(r: &Run) -> Vec<String> {
    r.transformations("whole_files_from_text")
}

#[tokio::test]
async fn a_whole_file_in_the_reply_is_written_and_checked_at_once() {
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new().reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
    // One model call: the write and the check came from the same reply.
    assert_eq!(r.server.requests().len(), 1);
    assert_eq!(written(&r), ["1 file(s) the model wrote whole: cart.py"]);
    assert_eq!(r.server.violations(), Vec::<String>::new());

    // The request: the short prompt, three tools, and the code shown as the
    // model is to write it back.
    let body = &r.server.requests()[0].body;
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read_file", "list_files", "write_file"]);
    // The server's own sampling: greedy decoding (Aider's) made a 1.5B
    // model copy the file it was shown (BENCHMARKS.md, figure 9).
    assert!(body.get("temperature").is_none());
    let system = body["system"].to_string();
    assert!(
        system.contains("reply with the file's path alone on a line"),
        "{system}"
    );
    let first = body["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(
        first.contains(&format!("\ncart.py\n```py\n{CART_BROKEN}```\n")),
        "{first}"
    );
    assert!(
        first.ends_with("Reply with the fixed function whole: `cart.py` alone on a line, then the complete fixed function in a fenced code block (only the function, not the rest of the file). Rein then runs the test."),
        "{first}"
    );
}

/// A small model often writes the file back as it was: that is no claim of
/// being done, and the tests need not run to say so.
#[tokio::test]
async fn a_file_written_back_unchanged_is_told_and_is_not_a_claim() {
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(file_reply("cart.py", CART_BROKEN))
                .reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(r.outcome.state, TaskState::Succeeded);
    assert!(
        told(&r)[0].starts_with("The file you wrote (cart.py) is the same as it is now"),
        "{:?}",
        told(&r)
    );
    // The baseline, then the verifier's two runs after the real fix.
    assert_eq!(r.exec.commands().len(), 3, "{:?}", r.exec.commands());
}

#[tokio::test]
async fn a_code_block_that_names_no_file_is_not_a_write() {
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::text(
                    "Use a sum:\n```python\nreturn sum(item.price * item.qty for item in items)\n```",
                ))
                .reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(r.outcome.state, TaskState::Succeeded);
    // The snippet was neither a write nor a claim to check: the model is
    // told how to write a file, and no test ran for it.
    assert!(
        told(&r)[0].starts_with("Your code block names no file, so nothing was written"),
        "{:?}",
        told(&r)
    );
    assert_eq!(written(&r), ["1 file(s) the model wrote whole: cart.py"]);
    assert_eq!(r.exec.commands().len(), 3, "{:?}", r.exec.commands());
}

/// A block without a path that is plainly the file (most of its lines)
/// is the file.
#[tokio::test]
async fn an_unnamed_block_that_rewrites_a_read_file_is_that_file() {
    let reply = format!("Here is the fix:\n```python\n{CART_FIXED}```\n");
    let r = Setup::new(cart_workspace())
        .run(Scenario::new().reply(Reply::text(reply)), whole)
        .await;
    assert_eq!(r.outcome.state, TaskState::Succeeded);
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
}

#[tokio::test]
async fn a_test_rewritten_whole_is_refused_and_not_checked() {
    let weakened = TEST_TEXT.replace("30)", "2)");
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::text(format!(
                    "{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"{TEST_FILE}\"}}}}"
                )))
                .reply(file_reply(TEST_FILE, &weakened))
                .reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(r.outcome.state, TaskState::Succeeded);
    assert_eq!(r.ws.text(TEST_FILE).unwrap(), TEST_TEXT);
    assert!(
        told(&r)[1].starts_with("tests/test_cart.py holds the failing test, and the test stays as written, so nothing was written."),
        "{:?}",
        told(&r)
    );
    assert_eq!(r.exec.commands().len(), 3, "{:?}", r.exec.commands());
}

/// Regression (QuixBugs get_factors, 1.5B, dev split of 2026-12-07): the
/// model wrote the test file whole (imports added, the class's base
/// renamed), was told "Read tests/test_get_factors.py with read_file
/// before editing it" five times over, and the loop guard ended the task;
/// Aider fixed it in 27 s. It is now told where the fix goes.
#[tokio::test]
async fn get_factors_a_whole_test_file_is_answered_with_where_the_fix_goes() {
    let rewritten = with_an_import_added();
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(file_reply(TEST_FILE, &rewritten))
                .reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(
        told(&r),
        [
            "tests/test_cart.py holds the failing test, and the test stays as written, so nothing was written. The bug is in the code it tests, most likely cart.py: reply with `cart.py` alone on a line, then the fixed function whole in a fenced code block.\n[Progress: turn 2 of 20] No files changed yet."
        ]
    );
    assert_eq!(
        r.transformations("whole_file_test_set_aside"),
        ["set aside the model's whole tests/test_cart.py: the target test's file stays as written"]
    );
    assert_eq!(r.ws.text(TEST_FILE).unwrap(), TEST_TEXT);
    assert_eq!(r.ws.proposals(), ["cart.py"]);
}

/// The test file written whole beside the fix: the fix is written and
/// checked, the test file stays as it is.
#[tokio::test]
async fn a_whole_test_file_beside_the_fix_is_set_aside() {
    let rewritten = TEST_TEXT.replace("30)", "2)");
    let reply =
        format!("cart.py\n```python\n{CART_FIXED}```\n\n{TEST_FILE}\n```python\n{rewritten}```\n");
    let r = Setup::new(cart_workspace())
        .run(Scenario::new().reply(Reply::text(reply)), whole)
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.server.requests().len(), 1);
    assert_eq!(r.ws.proposals(), ["cart.py"]);
    assert_eq!(r.ws.text(TEST_FILE).unwrap(), TEST_TEXT);
    assert_eq!(written(&r), ["1 file(s) the model wrote whole: cart.py"]);
}

/// Where the user allows test edits, a whole test file is the model's to
/// write (by the tools' rules: read first).
#[tokio::test]
async fn with_test_edits_allowed_a_whole_test_file_is_not_set_aside() {
    let rewritten = with_an_import_added();
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(file_reply(TEST_FILE, &rewritten))
                .reply(file_reply("cart.py", CART_FIXED)),
            |c| {
                whole(c);
                c.allow_test_edits = true;
            },
        )
        .await;
    assert_eq!(
        r.transformations("whole_file_test_set_aside"),
        Vec::<String>::new()
    );
    assert_eq!(
        written(&r)[0],
        "1 file(s) the model wrote whole: tests/test_cart.py"
    );
}

/// "Here is the corrected function": the function alone is merged into
/// the file, and the class before it stays.
#[tokio::test]
async fn a_function_written_alone_is_merged_into_its_file() {
    let reply = "Here is the corrected function:\n```python\ndef total(items):\n    return sum(item.price * item.qty for item in items)\n```\n";
    let r = Setup::new(cart_workspace())
        .run(Scenario::new().reply(Reply::text(reply)), whole)
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
}

const TOTAL_BROKEN: &str = "def total(items):\n    return len(items)\n";
const TOTAL_FIXED: &str =
    "def total(items):\n    return sum(item.price * item.qty for item in items)\n";

/// Seen in the held-out round of 2026-12-07 (flatten): the fixed function
/// twice in one reply became two writes, the second "identical" and an
/// error, so the fix was never checked and the model went astray. One
/// file, one write, checked at once.
#[tokio::test]
async fn the_fix_written_twice_in_one_reply_is_one_write_checked_at_once() {
    let twice =
        format!("cart.py\n```python\n{TOTAL_FIXED}```\n\ncart.py\n```python\n{TOTAL_FIXED}```\n");
    let r = Setup::new(cart_workspace())
        .run(Scenario::new().reply(Reply::text(twice)), whole)
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(written(&r), ["1 file(s) the model wrote whole: cart.py"]);
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
    assert_eq!(r.outcome.spent.turns, 1);
}

/// The code before the fix, quoted beside it, in either order: it undoes
/// nothing.
#[tokio::test]
async fn the_code_before_the_fix_quoted_beside_it_undoes_nothing() {
    for (first, second) in [(TOTAL_BROKEN, TOTAL_FIXED), (TOTAL_FIXED, TOTAL_BROKEN)] {
        let reply = format!(
            "Before:\ncart.py\n```python\n{first}```\nAfter:\ncart.py\n```python\n{second}```\n"
        );
        let r = Setup::new(cart_workspace())
            .run(Scenario::new().reply(Reply::text(reply)), whole)
            .await;
        assert_eq!(
            r.outcome.state,
            TaskState::Succeeded,
            "{}",
            r.outcome.reason
        );
        assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
    }
}

/// Seen in the same round: asked for the function it changes, the model
/// wrote one line, `obj['new_text']`, under the file's name, and it became
/// the file. A block that is a small part of a longer file and no whole
/// definition of it is not written; the model is told why.
#[tokio::test]
async fn a_few_lines_for_a_longer_file_are_not_written_as_the_file() {
    let ws = support::documented_cart_workspace();
    let fragment = "    return sum(item.price * item.qty for item in items)\n";
    let r = Setup::new(ws)
        .run(
            Scenario::new()
                .reply(file_reply("cart.py", fragment))
                .reply(file_reply("cart.py", TOTAL_FIXED)),
            whole,
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    expect_test::expect![[r#"
        Your code block for cart.py is a few lines of it, not a whole function or the whole file, so nothing was written (written as the file, it would delete the rest). Write each function you change whole, from its first line to its last, or the whole file.
        [Progress: turn 2 of 20] No files changed yet."#]]
        .assert_eq(&told(&r)[0]);
    assert_eq!(
        r.ws.text("cart.py").unwrap(),
        format!("{CART_FIXED}{}", support::CART_DOC)
    );
}

/// Seen in the held-out round of 2026-12-07 (next_permutation): the fixed
/// function under the test's path, copied from the failure above the
/// code. The named file has none of the block's definitions and the one
/// file read has them all: it is that file's.
#[tokio::test]
async fn a_function_labelled_with_the_tests_path_is_written_to_its_own_file() {
    let reply = format!("file: {TEST_FILE}\n\n```py\n{TOTAL_FIXED}```\n");
    let r = Setup::new(cart_workspace())
        .run(Scenario::new().reply(Reply::text(reply)), whole)
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
    assert_eq!(r.ws.text(TEST_FILE).unwrap(), TEST_TEXT);
    // A block that is the test's own stays the test's (and is refused).
    let test_again = format!("{TEST_FILE}\n```py\n{}```\n", TEST_TEXT.replace("30", "3"));
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::text(test_again))
                .reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.ws.text(TEST_FILE).unwrap(), TEST_TEXT);
}

/// Seen in the held-out round of 2026-12-07 (sqrt): the file's name as a
/// comment on the block's first line, `# sqrt.py`, no label. It names the
/// file and is no line of it; a file that starts with that very comment
/// keeps it.
#[tokio::test]
async fn a_path_in_the_blocks_first_comment_names_the_file_and_is_not_written() {
    let reply = format!("```python\n# cart.py\n{TOTAL_FIXED}```\n");
    let r = Setup::new(cart_workspace())
        .run(Scenario::new().reply(Reply::text(reply.clone())), whole)
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);

    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/memory-root");
    let headed = rein_core::fakes::MemoryWorkspace::new(root)
        .with_file(
            "cart.py",
            &format!("# cart.py\n# Totals a cart.\n{CART_BROKEN}"),
        )
        .with_file(TEST_FILE, TEST_TEXT);
    let whole_file = format!("```python\n# cart.py\n# Totals a cart.\n{CART_FIXED}```\n");
    let r = Setup::new(headed)
        .run(Scenario::new().reply(Reply::text(whole_file)), whole)
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(
        r.ws.text("cart.py").unwrap(),
        format!("# cart.py\n# Totals a cart.\n{CART_FIXED}")
    );
}

/// Written as given, "# ... rest unchanged" would delete the rest.
#[tokio::test]
async fn a_file_with_parts_left_out_is_refused() {
    let elided = "# ... the Item class, unchanged ...\n\ndef total(items):\n    return sum(item.price * item.qty for item in items)\n";
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(file_reply("cart.py", elided))
                .reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(r.outcome.state, TaskState::Succeeded);
    assert!(
        told(&r)[0].contains("your content leaves part of cart.py out"),
        "{:?}",
        told(&r)
    );
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
}

/// The format is the model's to use only when it is on: with the tools, a
/// file in a reply is an answer (a claim), and nothing is written.
#[tokio::test]
async fn with_the_tools_format_a_file_in_the_reply_is_not_written() {
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new().reply(file_reply("cart.py", CART_FIXED)),
            |config| config.edit_format = EditFormat::Tools,
        )
        .await;
    assert_ne!(r.outcome.state, TaskState::Succeeded);
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_BROKEN);
    assert!(written(&r).is_empty());
    assert!(r.server.requests()[0].body.get("temperature").is_none());
}

/// Shown as a tool call and a tool response, a written file taught a 1.5B
/// model to answer with a `<tool_response>` of its own: the model sees its
/// file as it wrote it, and the result as text.
#[tokio::test]
async fn a_written_file_is_shown_back_as_written_not_as_a_tool_call() {
    let wrong = CART_BROKEN.replace("len(items)", "0");
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(file_reply("cart.py", &wrong))
                .reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(r.outcome.state, TaskState::Succeeded);
    let second = &r.server.requests()[1].body;
    let kinds: Vec<Vec<String>> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["type"].as_str().unwrap().to_owned())
                .collect()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            vec!["text"],
            vec!["text", "text"],
            vec!["text", "text", "text"]
        ]
    );
    let reply = second["messages"][1]["content"][1]["text"]
        .as_str()
        .unwrap();
    assert_eq!(reply, format!("cart.py\n```\n{wrong}```"));
    let result = second["messages"][2]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(result.starts_with("Edited cart.py"), "{result}");
    assert_eq!(r.server.violations(), Vec::<String>::new());
}

/// A 1.5B model wrote the same unchanged file seven turns running: the
/// second earns one more try, sampled hotter, which here writes the fix;
/// a third unchanged one ends the task, as a repeated claim does.
#[tokio::test]
async fn the_same_unchanged_file_twice_earns_one_more_try_and_thrice_ends_the_task() {
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(file_reply("cart.py", CART_BROKEN))
                .reply(file_reply("cart.py", CART_BROKEN))
                .reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.server.requests()[2].body["temperature"], 1.0);
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
    // The one more try starts afresh: the model's repeated answers are
    // not in front of it, the task is, with what did not work.
    let third = r.server.requests()[2].body["messages"].clone();
    let messages = third.as_array().unwrap();
    assert_eq!(messages.len(), 1, "{third:#}");
    let text = messages[0]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Fix the failing test `TestCart.test_total`"),
        "{text}"
    );
    assert!(text.contains("\ncart.py\n```py\nclass Item:"), "{text}");
    assert!(
        text.ends_with(&format!(
            "{}\nThe file you wrote (cart.py) is the same as it is now: nothing changed. Find the bug, then write the fixed function whole.",
            rein_core::context::prompt::AN_EARLIER_TRY
        )),
        "{text}"
    );
    let fresh = r.transformations("fresh_start");
    assert_eq!(
        fresh,
        [
            "4 earlier items set aside (.rein/artifacts/t-test/history-1.json); the task told again with the code as it is now"
        ]
    );
    let archived = r.ws.text(".rein/artifacts/t-test/history-1.json").unwrap();
    assert_eq!(
        archived.matches("The bug is in total()").count(),
        2,
        "{archived}"
    );

    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(file_reply("cart.py", CART_BROKEN))
                .reply(file_reply("cart.py", CART_BROKEN))
                .reply(file_reply("cart.py", CART_BROKEN))
                .reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(r.outcome.state, TaskState::Failed);
    assert!(
        r.outcome.reason.starts_with("stopped: the model gave up"),
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.server.requests().len(), 3);
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_BROKEN);
}

/// "Here is the file … and now the tests": the file is written before the
/// reply's own call runs, and the model reads the run's result.
#[tokio::test]
async fn a_file_beside_a_real_call_is_written_first() {
    let reply = Reply::text(format!(
        "cart.py\n```python\n{CART_FIXED}```\nNow I run the tests."
    ))
    .tool_call_with_id("toolu_run_1", "run_tests", serde_json::json!({}));
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(reply)
                .reply(Reply::text("The test passes now.")),
            whole,
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(written(&r), ["1 file(s) the model wrote whole: cart.py"]);
    // The baseline, the model's run (after the write: it passes), then the
    // verifier's two.
    assert_eq!(r.exec.commands().len(), 4, "{:?}", r.exec.commands());
    let told = told(&r);
    assert!(told[0].contains("Edited cart.py"), "{told:?}");
    assert!(told[0].contains("OK"), "{told:?}");
    assert_eq!(r.server.violations(), Vec::<String>::new());
}

/// Forcing a call after one written wrong is for the tools format: the
/// whole format's replies are text.
#[tokio::test]
async fn the_whole_format_never_forces_a_tool_call() {
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::text(
                    "```json\n{\"name\": \"open_file\", \"arguments\": {\"path\": \"cart.py\"}}\n```",
                ))
                .reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(r.outcome.state, TaskState::Succeeded);
    for request in r.server.requests() {
        assert!(
            request.body.get("tool_choice").is_none(),
            "{}",
            request.body
        );
    }
}

/// A claim the test refutes, twice the same: the one more try starts
/// afresh with the file as the model left it and the test's verdict.
#[tokio::test]
async fn a_claim_refuted_twice_starts_afresh_with_the_code_as_it_is_now() {
    const HALF: &str = "class Item:\n    def __init__(self, price, qty):\n        self.price = price\n        self.qty = qty\n\ndef total(items):\n    n = 0\n    for item in items:\n        n += item.price\n    return n\n";
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(file_reply("cart.py", HALF))
                .reply(Reply::text("It is fixed now."))
                .reply(Reply::text("It is fixed now."))
                .reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    let requests = r.server.requests();
    let fourth = requests[3].body["messages"].as_array().unwrap().clone();
    assert_eq!(fourth.len(), 1, "{fourth:#?}");
    let text = fourth[0]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("        n += item.price\n"), "{text}");
    assert!(!text.contains("return len(items)"), "{text}");
    assert!(
        text.contains("Rein ran the test after it: `TestCart.test_total` still fails"),
        "{text}"
    );
    assert_eq!(requests[3].body["temperature"], 1.0);
    assert_eq!(r.transformations("fresh_start").len(), 1);
}

/// A fresh start rewrites the history: the checkpoint after it holds the
/// new history (a new epoch), so a task resumed after a crash goes on from
/// the task told again, not from the turns set aside.
#[tokio::test]
async fn a_checkpoint_after_a_fresh_start_holds_the_new_history() {
    use rein_core::journal::{Journal, last_snapshot};
    use std::sync::Arc;
    let store = Arc::new(rein_store::Store::open_in_memory().unwrap());
    let mut setup = Setup::new(cart_workspace());
    setup.journal = Some(Arc::new(
        Journal::begin(
            Arc::clone(&store),
            &setup.task,
            &rein_core::budget::Budgets::default(),
            &rein_core::journal::owner_id(),
            None,
            rein_models::Redactor::default(),
        )
        .unwrap(),
    ));
    let r = setup
        .run(
            Scenario::new()
                .reply(file_reply("cart.py", CART_BROKEN))
                .reply(file_reply("cart.py", CART_BROKEN))
                .reply(Reply::text("I do not know.")),
            |c| {
                whole(c);
                c.budgets.max_turns = 3;
            },
        )
        .await;
    assert_eq!(r.outcome.state, TaskState::Failed, "{}", r.outcome.reason);
    let (_, snapshot) = last_snapshot(&store, &rein_core::task::TaskId("t-test".into()))
        .unwrap()
        .unwrap();
    assert_eq!(snapshot.state.compactions, 1);
    let first = serde_json::to_string(&snapshot.history.items[0]).unwrap();
    assert!(
        first.contains(rein_core::context::prompt::AN_EARLIER_TRY),
        "{first}"
    );
    assert!(!first.contains("The bug is in total()"), "{first}");
}

/// Seen in the QuixBugs round (bitcount): the fix in a code block, then
/// the same file again as a `write_file` JSON call whose nested fence cut
/// it short. The file is what the whole format asks for: it is written
/// and checked, and the broken call is not held against the reply.
#[tokio::test]
async fn a_file_beside_a_broken_text_call_is_still_written() {
    let reply = "```python\ndef total(items):\n    return sum(item.price * item.qty for item in items)\n```\n\n```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"cart.py\", \"content\": \"```python\\ndef total(items):\\n```\"}}\n```";
    let r = Setup::new(cart_workspace())
        .run(Scenario::new().reply(Reply::text(reply)), whole)
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
    assert_eq!(r.server.requests().len(), 1);
}

/// Seen in the quiet QuixBugs round (bitcount): the right fix in a code
/// block, then a `<tool_call>` writing the same file, whose JSON string had
/// lost the docstring's quotes. Both ran, the call second, and the task
/// spent its five minutes on the syntax error it left. The block is the
/// format asked for: the file is written once, from it.
#[tokio::test]
async fn a_text_call_writing_a_file_written_whole_is_set_aside() {
    let mangled = CART_FIXED.replace("class Item:\n", "");
    let call = serde_json::json!({
        "name": "write_file",
        "arguments": {"path": "./cart.py", "content": mangled},
    });
    let reply = format!("cart.py\n```python\n{CART_FIXED}```\n\n<tool_call>\n{call}\n</tool_call>");
    let r = Setup::new(cart_workspace())
        .run(Scenario::new().reply(Reply::text(reply)), whole)
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
    assert_eq!(
        r.transformations("whole_file_over_call"),
        ["set aside write_file ./cart.py: the same reply wrote the file whole"]
    );
    // Written from the block alone, and checked at once, as a reply that
    // only wrote the file.
    assert_eq!(r.server.requests().len(), 1);
}

/// Seen in the quiet QuixBugs round (flatten): the fix in a first block,
/// then the test file again, one row of its table repeated until the
/// 4,096-token limit — 7 minutes on 2 cores, past the task's 5, and the
/// fix was never written. The loop is cut where it is plain, and the reply
/// before it is the answer.
#[tokio::test]
async fn a_reply_that_loops_is_cut_and_the_fix_before_the_loop_is_written() {
    let reply = format!(
        "cart.py\n```python\n{CART_FIXED}```\n\nAnd the test:\n```python\n{}",
        "        self.assertEqual(total([]), 0)\n".repeat(300)
    );
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new().reply(Reply::text(reply).stop(StopReason::MaxTokens)),
            whole,
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
    assert_eq!(written(&r), ["1 file(s) the model wrote whole: cart.py"]);
    let cut = r.transformations("repetition_cut");
    assert_eq!(cut.len(), 1, "{cut:?}");
    assert!(
        cut[0].starts_with("the reply repeated the same lines more than 16 times: cut there, "),
        "{cut:?}"
    );
}

/// What the model is shown of a reply that looped: the reply up to one
/// round of the loop, not the loop.
#[tokio::test]
async fn a_reply_cut_for_looping_is_kept_without_its_loop() {
    let line = "The bug is in total().\n";
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::text(format!("Let me think.\n{}", line.repeat(60))))
                .reply(file_reply("cart.py", CART_FIXED)),
            whole,
        )
        .await;
    assert_eq!(r.outcome.state, TaskState::Succeeded);
    let second = &r.server.requests()[1].body;
    let assistant = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(
        assistant["content"][0]["text"].as_str().unwrap().trim_end(),
        format!("Let me think.\n{}", line.trim_end())
    );
}

/// The naive loop has no loop guard: a looping reply is read to its end.
#[tokio::test]
async fn the_naive_loop_does_not_cut_a_looping_reply() {
    let looping =
        Reply::text(format!("Hmm.\n{}", "again\n".repeat(60))).stop(StopReason::MaxTokens);
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(looping)
                .reply(Reply::text("I give up.")),
            |c| {
                whole(c);
                c.harness = rein_core::harness::Harness::Naive;
            },
        )
        .await;
    assert_eq!(r.transformations("repetition_cut"), Vec::<String>::new());
    assert!(
        told(&r)[0].starts_with("Your reply was cut off by the output token limit"),
        "{:?}",
        told(&r)
    );
}

/// A call whose arguments loop (a test file written with one row over and
/// over, seen from a 1.5B model in the tools format) is cut as it streams
/// and not run; the model is told why, and its next call goes through.
#[tokio::test]
async fn a_call_whose_arguments_loop_is_cut_and_not_run() {
    let looping = format!(
        "import unittest\n{}",
        "        self.assertEqual(total([]), 0)\n".repeat(300)
    );
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::tool_call(
                    "write_file",
                    json!({"path": "tests/test_cart.py", "content": looping}),
                ))
                .reply(Reply::tool_call(
                    "edit_file",
                    json!({"path": "cart.py", "old_text": "    return len(items)", "new_text": "    return sum(item.price * item.qty for item in items)"}),
                ))
                .reply(Reply::text("Fixed: total multiplies price by quantity.")),
            |_| {},
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    let cut = r.transformations("repetition_cut");
    assert_eq!(
        cut,
        [
            "the arguments of a call to write_file repeated the same lines more than 16 times: cut there, the call not run"
        ]
    );
    let told = r.server.requests()[1].body["messages"].to_string();
    assert!(told.contains("fell into a loop"), "{told}");
    assert!(
        !r.ws
            .text("tests/test_cart.py")
            .unwrap()
            .contains("assertEqual(total([]), 0)\n        self.assertEqual(total([]), 0)")
    );
}
