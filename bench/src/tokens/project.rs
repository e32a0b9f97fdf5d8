//! The scripted fix session of figure 4: a Python shop project whose
//! discount rounds the wrong way, a model that needs 30 turns to find it
//! (two wrong edits, reverted; files read again after each test run; the
//! whole suite run four times), and a test runner that prints what
//! `pytest -v` prints for this project in its current state.

use rein_testkit::fake_model::{Reply, Scenario};
use serde_json::json;

pub const TARGET: &str = "tests/test_cart.py::test_total_with_discount";
pub const TEST_FILE: &str = "tests/test_cart.py";
pub const TEST_NAME: &str = "test_total_with_discount";

const DISCOUNT_BUG: &str = "rounding=ROUND_DOWN)";
const DISCOUNT_FIX: &str = "rounding=ROUND_HALF_UP)";
const CART_LINE: &str = "        subtotal = sum(line.amount() for line in self.lines)";
const CART_WRONG: &str =
    "        subtotal = round_cents(sum(line.amount() for line in self.lines))";
const PRICING_LINE: &str = "    return (base * factor).quantize(CENT)";
const PRICING_WRONG: &str = "    return (base * factor).quantize(CENT, rounding=ROUND_HALF_UP)";

/// `n` helper functions, each a few lines with a docstring: the bulk of a
/// real module around the lines that matter.
fn helpers(module: &str, n: usize) -> String {
    (1..=n)
        .map(|i| {
            format!(
                "\n\ndef {module}_rule_{i}(items, limit={lim}):\n    \"\"\"Rule {i} of the {module} module: items over {lim} are capped.\n\n    Kept separate so the rules can be switched per market.\n    \"\"\"\n    kept = []\n    for item in items:\n        if item.quantity > limit:\n            kept.append(item.with_quantity(limit))\n        else:\n            kept.append(item)\n    return kept\n",
                lim = i * 3 + 7
            )
        })
        .collect()
}

/// The project's files, as the session starts.
pub fn files() -> Vec<(&'static str, String)> {
    let cart = format!(
        "\"\"\"The shopping cart: lines, subtotal, discount, total.\"\"\"\n\nfrom decimal import Decimal\n\nfrom shop.discounts import apply_discount\nfrom shop.money import round_cents\nfrom shop.pricing import unit_price\n\n\nclass Line:\n    def __init__(self, product, quantity):\n        self.product = product\n        self.quantity = quantity\n\n    def amount(self):\n        return unit_price(self.product) * self.quantity\n\n    def with_quantity(self, quantity):\n        return Line(self.product, quantity)\n\n\nclass Cart:\n    def __init__(self, discount_percent=0):\n        self.lines = []\n        self.discount_percent = Decimal(discount_percent)\n\n    def add(self, product, quantity=1):\n        self.lines.append(Line(product, quantity))\n\n    def total(self):\n        \"\"\"What the customer pays, to the cent.\"\"\"\n{CART_LINE}\n        return apply_discount(subtotal, self.discount_percent)\n{}",
        helpers("cart", 22)
    );
    let pricing = format!(
        "\"\"\"Unit prices: the catalogue price times the market's factor.\"\"\"\n\nfrom decimal import Decimal, ROUND_HALF_UP\n\nfrom shop.money import CENT\n\nMARKET_FACTOR = Decimal(\"1.00\")\n\n\ndef unit_price(product):\n    base = Decimal(product.price)\n    factor = MARKET_FACTOR\n{PRICING_LINE}\n{}",
        helpers("pricing", 26)
    );
    let discounts = format!(
        "\"\"\"Discounts: a percentage off an amount.\"\"\"\n\nfrom decimal import ROUND_DOWN, ROUND_HALF_UP\n\nfrom shop.money import CENT\n\n\ndef apply_discount(amount, percent):\n    \"\"\"The amount after a percentage discount, to the cent.\"\"\"\n    return (amount * (100 - percent) / 100).quantize(CENT, {DISCOUNT_BUG}\n{}",
        helpers("discounts", 18)
    );
    let money = format!(
        "\"\"\"Money helpers.\"\"\"\n\nfrom decimal import Decimal, ROUND_HALF_UP\n\nCENT = Decimal(\"0.01\")\n\n\ndef round_cents(amount):\n    return amount.quantize(CENT, rounding=ROUND_HALF_UP)\n{}",
        helpers("money", 10)
    );
    let tests: String = (1..=40)
        .map(|i| {
            format!(
                "\n\ndef test_cart_rule_{i}():\n    cart = Cart()\n    cart.add(Product(\"p{i}\", \"{i}.25\"), quantity={q})\n    assert cart.total() == Decimal(\"{i}.25\") * {q}\n",
                q = i % 5 + 1
            )
        })
        .collect();
    let test_cart = format!(
        "from decimal import Decimal\n\nfrom shop.cart import Cart\nfrom shop.catalogue import Product\n\n\ndef test_total_with_discount():\n    cart = Cart(discount_percent=10)\n    cart.add(Product(\"tea\", \"33.30\"), quantity=3)\n    assert cart.total() == Decimal(\"89.91\")\n\n\ndef test_subtotal_rounding():\n    cart = Cart()\n    cart.add(Product(\"pen\", \"0.333\"), quantity=3)\n    assert cart.total() == Decimal(\"0.999\").quantize(Decimal(\"0.01\"))\n{tests}"
    );
    vec![
        ("shop/__init__.py", String::new()),
        ("shop/cart.py", cart),
        ("shop/pricing.py", pricing),
        ("shop/discounts.py", discounts),
        ("shop/money.py", money),
        (
            "shop/catalogue.py",
            "class Product:\n    def __init__(self, name, price):\n        self.name = name\n        self.price = price\n".into(),
        ),
        ("tests/__init__.py", String::new()),
        (TEST_FILE, test_cart),
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-ra\"\n".into()),
        ("README.md", "# shop\n\nA small shop backend.\n".into()),
    ]
}

fn read(path: &str) -> (&'static str, serde_json::Value) {
    ("read_file", json!({"path": path}))
}

fn run(target: Option<&str>) -> (&'static str, serde_json::Value) {
    match target {
        Some(t) => ("run_tests", json!({"target": t})),
        None => ("run_tests", json!({})),
    }
}

fn edit(path: &str, old: &str, new: &str) -> (&'static str, serde_json::Value) {
    (
        "edit_file",
        json!({"path": path, "old_text": old, "new_text": new}),
    )
}

/// The model's 30 replies: what it says, and its tool calls.
pub fn scenario() -> Scenario {
    let steps: Vec<(&str, Vec<(&'static str, serde_json::Value)>)> = vec![
        (
            "I'll start by looking at the project layout.",
            vec![("list_files", json!({}))],
        ),
        ("Let me read the failing test.", vec![read(TEST_FILE)]),
        (
            "Running the failing test to see how it fails.",
            vec![run(Some(TARGET))],
        ),
        (
            "The total is one cent short. Reading the cart and the pricing.",
            vec![read("shop/cart.py"), read("shop/pricing.py")],
        ),
        (
            "Where is the discount applied?",
            vec![("search", json!({"pattern": "def apply_discount"}))],
        ),
        (
            "Reading the discount module.",
            vec![read("shop/discounts.py")],
        ),
        (
            "Let me run the whole suite to see what else fails.",
            vec![run(None)],
        ),
        (
            "Looking at the cart's total again.",
            vec![read("shop/cart.py")],
        ),
        (
            "The subtotal may carry fractions of a cent; rounding it first should help.",
            vec![edit("shop/cart.py", CART_LINE, CART_WRONG)],
        ),
        ("Running the target test.", vec![run(Some(TARGET))]),
        (
            "Still failing. Re-reading the cart.",
            vec![read("shop/cart.py")],
        ),
        ("And the pricing again.", vec![read("shop/pricing.py")]),
        (
            "Where else do we round?",
            vec![("search", json!({"pattern": "quantize\\("}))],
        ),
        ("Reading the money helpers.", vec![read("shop/money.py")]),
        (
            "Unit prices are quantized without an explicit rounding; making it half-up.",
            vec![edit("shop/pricing.py", PRICING_LINE, PRICING_WRONG)],
        ),
        ("Running the target test.", vec![run(Some(TARGET))]),
        (
            "Let me re-read the test's expectations.",
            vec![read(TEST_FILE)],
        ),
        (
            "Looking at the pricing once more.",
            vec![read("shop/pricing.py")],
        ),
        (
            "That change did not matter: reverting it.",
            vec![edit("shop/pricing.py", PRICING_WRONG, PRICING_LINE)],
        ),
        ("Running the suite.", vec![run(None)]),
        ("Back to the discount.", vec![read("shop/discounts.py")]),
        (
            "The discount rounds down: 89.91 becomes 89.90. It should round half-up.",
            vec![edit("shop/discounts.py", DISCOUNT_BUG, DISCOUNT_FIX)],
        ),
        ("Running the target test.", vec![run(Some(TARGET))]),
        ("It passes. Now the whole suite.", vec![run(None)]),
        (
            "test_subtotal_rounding broke: my first change to the cart. Reading it.",
            vec![read("shop/cart.py")],
        ),
        (
            "Reverting the subtotal rounding.",
            vec![edit("shop/cart.py", CART_WRONG, CART_LINE)],
        ),
        ("The whole suite again.", vec![run(None)]),
        (
            "A last look at the fixed discount.",
            vec![read("shop/discounts.py")],
        ),
        ("And the target test once more.", vec![run(Some(TARGET))]),
    ];
    let mut scenario = Scenario::new();
    for (text, calls) in steps {
        let mut reply = Reply::text(text);
        for (name, input) in calls {
            reply = reply.tool_call(name, input);
        }
        scenario = scenario.reply(reply);
    }
    scenario.reply(Reply::text(
        "Fixed: apply_discount rounded down, so a 10% discount on 99.90 gave 89.90 instead of 89.91. It now rounds half-up; test_total_with_discount passes and so does the whole suite.",
    ))
}

/// Whether the project is in each of the states the runner knows.
pub struct State {
    pub discount_fixed: bool,
    pub cart_wrong: bool,
    pub pricing_wrong: bool,
}

/// What `pytest -v <target>` prints for the project in `state`, and its
/// exit code.
pub fn pytest_output(target: &str, state: &State) -> (String, i32) {
    let whole = target.is_empty();
    let file_only = target == TEST_FILE;
    let mut tests: Vec<(String, bool)> = Vec::new();
    if whole || file_only || target == TARGET {
        tests.push((TARGET.to_owned(), state.discount_fixed));
    }
    if whole || file_only {
        tests.push((
            format!("{TEST_FILE}::test_subtotal_rounding"),
            !state.cart_wrong,
        ));
        for i in 1..=40 {
            tests.push((format!("{TEST_FILE}::test_cart_rule_{i}"), true));
        }
    }
    if whole {
        for module in [
            "pricing",
            "discounts",
            "money",
            "inventory",
            "orders",
            "invoices",
            "shipping",
            "taxes",
        ] {
            for i in 1..=140 {
                let passed = !(module == "pricing" && i == 7 && state.pricing_wrong);
                tests.push((
                    format!("tests/test_{module}.py::test_{module}_rule_{i}"),
                    passed,
                ));
            }
        }
    }
    let failed: Vec<&(String, bool)> = tests.iter().filter(|t| !t.1).collect();
    let n = tests.len();
    let mut out = String::new();
    out.push_str("============================= test session starts ==============================\nplatform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.5.0 -- /usr/bin/python3\ncachedir: .pytest_cache\nrootdir: /home/dev/shop\nconfigfile: pyproject.toml\nplugins: cov-5.0.0, xdist-3.6.1, randomly-3.15.0\nUsing --randomly-seed=1234\n");
    out.push_str(&format!("collecting ... collected {n} items\n\n"));
    for (i, (name, passed)) in tests.iter().enumerate() {
        let pct = (i + 1) * 100 / n;
        let verdict = if *passed { "PASSED" } else { "FAILED" };
        out.push_str(&format!(
            "{name} {verdict}{:>w$}\n",
            format!("[{pct:>3}%]"),
            w = 78usize.saturating_sub(name.len() + 7)
        ));
    }
    if !failed.is_empty() {
        out.push_str(
            "\n=================================== FAILURES ===================================\n",
        );
        for (name, _) in &failed {
            let short = name.rsplit("::").next().unwrap_or(name);
            out.push_str(&format!("{:_^80}\n\n", format!(" {short} ")));
            out.push_str("    def test():\n        cart = Cart(discount_percent=10)\n        cart.add(Product(\"tea\", \"33.30\"), quantity=3)\n>       assert cart.total() == Decimal(\"89.91\")\nE       AssertionError: assert Decimal('89.90') == Decimal('89.91')\nE        +  where Decimal('89.90') = <bound method Cart.total of <shop.cart.Cart object at 0x7f3a2c1d5e50>>()\nE        +    where <bound method Cart.total of <shop.cart.Cart object at 0x7f3a2c1d5e50>> = <shop.cart.Cart object at 0x7f3a2c1d5e50>.total\n\n");
            out.push_str(&format!(
                "{}:9: AssertionError\n",
                name.split("::").next().unwrap_or(name)
            ));
            out.push_str("------------------------------ Captured log call -------------------------------\n");
            for k in 1..=30 {
                out.push_str(&format!("DEBUG    shop.pricing:pricing.py:{} unit price for p{k}: base={k}.25 factor=1.00 result={k}.25\n", 10 + k));
            }
        }
    }
    out.push_str(
        "\n=============================== warnings summary ===============================\n",
    );
    for k in 1..=12 {
        out.push_str(&format!("tests/test_orders.py::test_orders_rule_{k}\n  /home/dev/shop/shop/orders.py:{}: DeprecationWarning: datetime.datetime.utcnow() is deprecated and scheduled for removal in a future version. Use timezone-aware objects to represent datetimes in UTC: datetime.datetime.now(datetime.UTC).\n    created = datetime.utcnow()\n\n", 40 + k));
    }
    out.push_str("-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html\n");
    if !failed.is_empty() {
        out.push_str(
            "=========================== short test summary info ============================\n",
        );
        for (name, _) in &failed {
            out.push_str(&format!(
                "FAILED {name} - AssertionError: assert Decimal('89.90') == Decimal('89.91')\n"
            ));
        }
    }
    let passed = n - failed.len();
    let summary = if failed.is_empty() {
        format!(" {passed} passed, 12 warnings in 14.21s ")
    } else {
        format!(
            " {} failed, {passed} passed, 12 warnings in 14.21s ",
            failed.len()
        )
    };
    out.push_str(&format!("{summary:=^80}\n"));
    (out, i32::from(!failed.is_empty()))
}
