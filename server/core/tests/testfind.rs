//! The test finder on fixture files, one per language: the tests found
//! (qualified name, span, name line), their assertions, the test at a
//! cursor, and look-up by the names test runners print.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use expect_test::{Expect, expect};
use rein_core::testfind::{Lang, TestFn, assertions, find, lang_for_path, test_at, tests_in};

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/testfind/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn lang(name: &str) -> Lang {
    lang_for_path(name).unwrap()
}

/// `qualified span @name_line`, one test a line.
fn table(name: &str) -> String {
    let text = fixture(name);
    tests_in(&text, lang(name))
        .iter()
        .map(|t| format!("{:<42} {:?} @{}\n", t.qualified, t.span, t.name_line))
        .collect()
}

/// Each test's assertion lines.
fn asserts(name: &str) -> String {
    let text = fixture(name);
    let lang = lang(name);
    let mut out = String::new();
    for test in tests_in(&text, lang) {
        out.push_str(&format!("{}:\n", test.qualified));
        for line in assertions(&text, lang, &test) {
            out.push_str(&format!("    {line}\n"));
        }
    }
    out
}

fn check(actual: String, expected: Expect) {
    expected.assert_eq(&actual);
}

#[test]
fn rust_tests() {
    check(
        table("cart.rs"),
        expect![[r#"
            top_level                                  12..16 @13
            tests::total_empty                         25..30 @26
            tests::panics                              32..37 @34
            tests::braces_in_strings                   38..52 @39
            tests::nested::param                       54..62 @57
            tests::snapshot                            68..73 @69
        "#]],
    );
    check(
        asserts("cart.rs"),
        expect![[r#"
            top_level:
                assert_eq!(1 + 1, 2);
            tests::total_empty:
                assert_eq!(cart.total(), 0);
            tests::panics:
                #[should_panic(expected = "boom")]
                panic!("boom");
            tests::braces_in_strings:
                assert!(
                s.len() > 3,
                "message with {} braces",
                r
                );
                assert_ne!(c, '{');
            tests::nested::param:
                debug_assert!(n > 0);
                prop_assert_eq!(v.len(), 1);
            tests::snapshot:
                expect.assert_eq("}");
        "#]],
    );
}

#[test]
fn python_tests() {
    check(
        table("test_cart.py"),
        expect![[r#"
            test_empty_total                           12..15 @12
            test_totals                                17..34 @21
            TestCart.test_add                          40..43 @40
            TestCart.TestNested.test_async             45..50 @45
            CartTests.test_discount                    53..58 @53
        "#]],
    );
    check(
        asserts("test_cart.py"),
        expect![[r#"
            test_empty_total:
                assert cart.total() == 0
            test_totals:
                assert cart.total() == (
                price * qty
                )
                with pytest.raises(ValueError):
            TestCart.test_add:
                assert len(self.cart) == 1
            TestCart.TestNested.test_async:
                assert await self.cart.ready()
            CartTests.test_discount:
                self.assertEqual(
                Cart().discount(), 0
                )
                self.assertRaises(ValueError, Cart().pay, -1)
        "#]],
    );
}

#[test]
fn js_tests() {
    check(
        table("cart.test.ts"),
        expect![[r#"
            Cart > starts empty                        7..10 @7
            Cart > adding items > adds one item        12..19 @12
            Cart > adding items > squares %i           20..27 @23
            Cart > adding items > template ${"name"}   28..31 @28
            Cart > adding items > tagged $a            32..38 @35
            Cart > handles refunds                     40..41 @40
            top level                                  43..48 @43
        "#]],
    );
    check(
        asserts("cart.test.ts"),
        expect![[r#"
            Cart > starts empty:
                expect(new Cart().total()).toBe(0);
            Cart > adding items > adds one item:
                expect(cart.total()).toEqual(
                2,
                );
            Cart > adding items > squares %i:
                expect(n * n).toBe(sq);
            Cart > adding items > template ${"name"}:
                await expect(Promise.resolve(1)).resolves.toBe(1);
            Cart > adding items > tagged $a:
                expect(a + 1).toBe(b);
            Cart > handles refunds:
            top level:
                assert.equal(half, 0.5);
                assert(half);
        "#]],
    );
}

#[test]
fn go_tests() {
    check(
        table("cart_test.go"),
        expect![[r#"
            TestEmpty                                  14..20 @14
            TestAdd                                    21..37 @21
            CartSuite.TestTotal                        46..49 @46
            TestCartSuite                              50..53 @50
        "#]],
    );
    check(
        asserts("cart_test.go"),
        expect![[r#"
            TestEmpty:
                if got := c.Total(); got != 0 {
                t.Errorf("Total() = %d, want 0", got)
            TestAdd:
                if c.Total() != 2 {
                t.Fatal(
                "wrong total",
                )
                assert.Equal(t, 2, c.Total())
            CartSuite.TestTotal:
            TestCartSuite:
        "#]],
    );
}

/// The 0-based line of the first line containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in fixture"))
}

fn at(name: &str, needle: &str) -> Option<String> {
    let text = fixture(name);
    test_at(&text, lang(name), line_of(&text, needle)).map(|t| t.qualified)
}

#[test]
fn test_at_the_cursor() {
    let some = |s: &str| Some(s.to_owned());
    // Rust: attribute line, name line, body line, closing brace, between tests.
    assert_eq!(
        at("cart.rs", "#[tokio::test("),
        some("tests::braces_in_strings")
    );
    assert_eq!(
        at("cart.rs", "fn braces_in_strings"),
        some("tests::braces_in_strings")
    );
    assert_eq!(
        at("cart.rs", "\"message with {} braces\""),
        some("tests::braces_in_strings")
    );
    assert_eq!(at("cart.rs", "#[should_panic"), some("tests::panics"));
    assert_eq!(at("cart.rs", "#[case(2)]"), some("tests::nested::param"));
    assert_eq!(at("cart.rs", "A doc comment"), None);
    assert_eq!(at("cart.rs", "fn helper"), None);
    assert_eq!(at("cart.rs", "mod nested"), None);
    assert_eq!(at("cart.rs", "fn not_a_test"), None);
    // Python: decorator, def, a string below the indentation, between.
    assert_eq!(
        at("test_cart.py", "@pytest.mark.parametrize"),
        some("test_totals")
    );
    assert_eq!(at("test_cart.py", "[(1, 2), (3, 4)]"), some("test_totals"));
    assert_eq!(
        at("test_cart.py", "not indented, still in the test"),
        some("test_totals")
    );
    assert_eq!(
        at("test_cart.py", "a trailing comment"),
        some("test_totals")
    );
    assert_eq!(
        at("test_cart.py", "def test_inner"),
        some("TestCart.TestNested.test_async")
    );
    assert_eq!(at("test_cart.py", "def setup_method"), None);
    assert_eq!(at("test_cart.py", "class TestCart"), None);
    assert_eq!(at("test_cart.py", "def test_not_collected"), None);
    // JS: the call line, inside, the closing line, a describe line.
    assert_eq!(
        at("cart.test.ts", "test(\"adds one item\""),
        some("Cart > adding items > adds one item")
    );
    assert_eq!(
        at("cart.test.ts", "cart.add({ name"),
        some("Cart > adding items > adds one item")
    );
    assert_eq!(
        at("cart.test.ts", "[2, 4]"),
        some("Cart > adding items > squares %i")
    );
    assert_eq!(
        at("cart.test.ts", "const re ="),
        some("Cart > adding items > squares %i")
    );
    assert_eq!(at("cart.test.ts", "describe('adding items'"), None);
    assert_eq!(at("cart.test.ts", "commented out"), None);
    // Go.
    assert_eq!(at("cart_test.go", "func TestAdd"), some("TestAdd"));
    assert_eq!(at("cart_test.go", "raw } string"), some("TestAdd"));
    assert_eq!(at("cart_test.go", "s.Equal(0"), some("CartSuite.TestTotal"));
    assert_eq!(at("cart_test.go", "func helper"), None);
    assert_eq!(at("cart_test.go", "func TestMain"), None);
}

fn found(name: &str, query: &str) -> Option<String> {
    find(&fixture(name), lang(name), query).map(|t| t.qualified)
}

#[test]
fn find_by_the_names_runners_print() {
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(found("cart.rs", "total_empty"), some("tests::total_empty"));
    assert_eq!(
        found("cart.rs", "tests::total_empty"),
        some("tests::total_empty")
    );
    assert_eq!(
        found("cart.rs", "cart::tests::total_empty"),
        some("tests::total_empty")
    );
    assert_eq!(
        found("cart.rs", "cart::tests::nested::param"),
        some("tests::nested::param")
    );
    assert_eq!(found("cart.rs", "xtests::total_empty"), None);
    assert_eq!(found("cart.rs", "helper"), None);

    assert_eq!(found("test_cart.py", "test_add"), some("TestCart.test_add"));
    assert_eq!(
        found("test_cart.py", "TestCart.test_add"),
        some("TestCart.test_add")
    );
    assert_eq!(
        found("test_cart.py", "tests/test_cart.py::TestCart::test_add"),
        some("TestCart.test_add")
    );
    assert_eq!(
        found("test_cart.py", "test_cart.py::test_totals[1-2]"),
        some("test_totals")
    );
    assert_eq!(found("test_cart.py", "test_not_collected"), None);

    assert_eq!(
        found("cart.test.ts", "adds one item"),
        some("Cart > adding items > adds one item")
    );
    assert_eq!(
        found("cart.test.ts", "Cart › adding items › adds one item"),
        some("Cart > adding items > adds one item")
    );
    assert_eq!(
        found("cart.test.ts", "Cart > starts empty"),
        some("Cart > starts empty")
    );

    assert_eq!(found("cart_test.go", "TestAdd"), some("TestAdd"));
    assert_eq!(found("cart_test.go", "TestAdd/subtest_1"), some("TestAdd"));
    assert_eq!(
        found("cart_test.go", "TestTotal"),
        some("CartSuite.TestTotal")
    );
    assert_eq!(found("cart_test.go", "TestMain"), None);
}

/// Every prefix of every fixture (a file being typed) is handled without
/// panicking, and spans stay inside the text.
#[test]
fn unfinished_files_never_panic() {
    for name in ["cart.rs", "test_cart.py", "cart.test.ts", "cart_test.go"] {
        let text = fixture(name);
        let lang = lang(name);
        for (cut, _) in text.char_indices() {
            let prefix = &text[..cut];
            let line_count = prefix.split('\n').count();
            for test in tests_in(prefix, lang) {
                assert!(
                    test.span.start <= test.name_line && test.name_line < test.span.end,
                    "{name}[..{cut}]: {test:?}"
                );
                assert!(test.span.end <= line_count, "{name}[..{cut}]: {test:?}");
                let _ = assertions(prefix, lang, &test);
            }
        }
    }
}

#[test]
fn spans_of_a_hand_written_test() {
    let text = "fn a() {}\n\n#[test]\nfn b() {\n    assert!(true);\n}\n";
    let want = TestFn {
        name: "b".into(),
        qualified: "b".into(),
        span: 2..6,
        name_line: 3,
    };
    assert_eq!(tests_in(text, Lang::Rust), vec![want.clone()]);
    assert_eq!(test_at(text, Lang::Rust, 5), Some(want.clone()));
    assert_eq!(test_at(text, Lang::Rust, 6), None);
    assert_eq!(assertions(text, Lang::Rust, &want), vec!["assert!(true);"]);
}
