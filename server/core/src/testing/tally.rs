//! How many tests a run passed and skipped, from the runners' own summary
//! lines, fed one line at a time like [`super::failures::FailureScanner`].
//!
//! Exit code 0 is not "the test passes": a runner whose filter matched
//! nothing, or whose test was skipped (`@unittest.skip`, `#[ignore]`,
//! `t.Skip()`, `it.skip`), also exits 0. The verifier asks this tally
//! whether anything passed at all.
//!
//! Recognised: unittest (`Ran N tests` then `OK (skipped=K)` /
//! `FAILED (…)` / `NO TESTS RAN`), pytest (`1 passed, 2 skipped in 0.1s`,
//! `no tests ran in 0.1s`), libtest (`test result: ok. 1 passed; 0 failed;
//! 1 ignored; …`, summed over the test binaries), cargo nextest
//! (`Summary [...] N tests run: N passed`), go test -v (`--- PASS:` /
//! `--- SKIP:` / `[no tests to run]`), jest (`Tests: 1 skipped, 1 total`),
//! vitest (`Tests  1 passed | 1 skipped (2)`) and mocha (`1 passing (5ms)`,
//! `1 pending`).

use super::failures::strip_ansi;

/// What the summary lines of a run said, added up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Summary lines recognised: none means the run's counts are unknown.
    pub summaries: u32,
    pub passed: u32,
    pub failed: u32,
    /// Skipped, ignored, marked as expected to fail, or left to do: not run
    /// to a pass.
    pub skipped: u32,
    /// unittest's `Ran N tests`, waiting for its verdict line.
    unittest_ran: Option<u32>,
}

impl Tally {
    /// Whether any runner's summary was seen.
    pub fn known(&self) -> bool {
        self.summaries > 0
    }

    /// Counts of a whole output (for fakes and tests).
    pub fn of(output: &str) -> Self {
        let mut tally = Self::default();
        for line in output.lines() {
            tally.line(line);
        }
        tally
    }

    /// Counts of a JUnit report's cases, read after the run.
    pub fn report(&mut self, passed: u32, failed: u32, skipped: u32) {
        self.passed = self.passed.saturating_add(passed);
        self.failed = self.failed.saturating_add(failed);
        self.skipped = self.skipped.saturating_add(skipped);
        self.summaries += 1;
    }

    /// Feeds one line of output, without its line terminator.
    pub fn line(&mut self, line: &str) {
        let line = strip_ansi(line);
        let line = line.trim();
        if let Some(n) = unittest_ran(line) {
            self.unittest_ran = Some(n);
            return;
        }
        if let Some(ran) = self.unittest_ran
            && self.unittest_verdict(ran, line)
        {
            self.unittest_ran = None;
            return;
        }
        if let Some(rest) = line.strip_prefix("test result: ") {
            self.libtest(rest);
        } else if let Some(rest) = line.strip_prefix("--- ") {
            self.go_test(rest);
        } else if line.starts_with("ok ") && line.ends_with("[no tests to run]") {
            self.summaries += 1;
        } else if let Some(rest) = line.strip_prefix("Summary [") {
            self.nextest(rest);
        } else if let Some(rest) = line.strip_prefix("Tests:") {
            self.counts(rest.split(','), false);
        } else if let Some(counts) = mocha(line) {
            self.counts(std::iter::once(counts.as_str()), false);
        } else if let Some(rest) = line.strip_prefix("Tests ") {
            // vitest: `Tests  2 passed | 1 skipped (3)`.
            let rest = rest.rsplit_once('(').map_or(rest, |(counts, _)| counts);
            self.counts(rest.split('|'), false);
        } else {
            self.pytest(line);
        }
    }

    /// `OK`, `OK (skipped=1, expected failures=1)`, `FAILED (failures=1)`
    /// or `NO TESTS RAN` after `Ran N tests`.
    fn unittest_verdict(&mut self, ran: u32, line: &str) -> bool {
        let details = if line == "NO TESTS RAN" {
            ""
        } else if let Some(rest) = line.strip_prefix("OK") {
            rest
        } else if let Some(rest) = line.strip_prefix("FAILED") {
            rest
        } else {
            return false;
        };
        let details = details.trim().trim_start_matches('(').trim_end_matches(')');
        let mut not_passed = 0;
        for part in details.split(',').filter(|p| !p.trim().is_empty()) {
            let Some((key, n)) = part.split_once('=') else {
                continue;
            };
            let n: u32 = n.trim().parse().unwrap_or(0);
            match key.trim() {
                "failures" | "errors" => self.failed += n,
                "skipped" | "expected failures" | "unexpected successes" => self.skipped += n,
                _ => continue,
            }
            not_passed += n;
        }
        self.passed += ran.saturating_sub(not_passed);
        self.summaries += 1;
        true
    }

    /// `ok. 1 passed; 0 failed; 1 ignored; 0 measured; 5 filtered out; …`
    fn libtest(&mut self, rest: &str) {
        let rest = rest.split_once(". ").map_or(rest, |(_, counts)| counts);
        self.counts(rest.split(';'), true);
    }

    /// `PASS: TestTotal (0.00s)`, `SKIP: …`, `FAIL: …` (go test -v).
    fn go_test(&mut self, rest: &str) {
        let counter = if rest.starts_with("PASS: ") {
            &mut self.passed
        } else if rest.starts_with("SKIP: ") {
            &mut self.skipped
        } else if rest.starts_with("FAIL: ") {
            &mut self.failed
        } else {
            return;
        };
        *counter += 1;
        self.summaries += 1;
    }

    /// `   0.010s] 3 tests run: 3 passed, 1 failed, …` — nextest's
    /// "skipped" are mostly tests its filter left out, so they do not count.
    fn nextest(&mut self, rest: &str) {
        let Some((_, counts)) = rest.split_once("tests run:") else {
            return;
        };
        let mut nextest = Self::default();
        nextest.counts(counts.split(','), false);
        self.passed += nextest.passed;
        self.failed += nextest.failed;
        self.summaries += nextest.summaries;
    }

    /// pytest's closing line: `1 passed, 1 skipped in 0.12s`, between `=`
    /// rules or not (`-q`), or `no tests ran in 0.01s`.
    fn pytest(&mut self, line: &str) {
        let line = line.trim_matches(|c| c == '=' || c == ' ');
        let Some((counts, time)) = line.rsplit_once(" in ") else {
            return;
        };
        let seconds = time.split_whitespace().next().unwrap_or("");
        if !seconds.ends_with('s') || seconds.trim_end_matches('s').parse::<f64>().is_err() {
            return;
        }
        if counts == "no tests ran" {
            self.summaries += 1;
            return;
        }
        self.counts(counts.split(','), false);
    }

    /// `<n> <word>` pairs; recognised only if every pair reads as one.
    fn counts<'a>(&mut self, parts: impl Iterator<Item = &'a str>, libtest: bool) {
        let mut found = Self::default();
        for part in parts {
            let part = part.trim();
            if part.is_empty() || (libtest && part.starts_with("finished in")) {
                continue;
            }
            let Some((n, word)) = part.split_once(' ') else {
                return;
            };
            let Ok(n) = n.parse::<u32>() else {
                return;
            };
            match word.trim() {
                "passed" | "pass" => found.passed += n,
                "failed" | "fail" | "error" | "errors" => found.failed += n,
                "skipped" | "skip" | "ignored" | "xfailed" | "xpassed" | "todo" | "pending" => {
                    found.skipped += n
                }
                // Counted elsewhere or not tests that ran.
                "total" | "measured" | "filtered out" | "deselected" | "warning" | "warnings"
                | "rerun" | "leaky" | "timed out" => {}
                _ => return,
            }
        }
        self.passed += found.passed;
        self.failed += found.failed;
        self.skipped += found.skipped;
        self.summaries += 1;
    }
}

/// mocha's `2 passing (5ms)`, `1 pending`, `1 failing` → `2 passed`, … .
fn mocha(line: &str) -> Option<String> {
    let (n, rest) = line.split_once(' ')?;
    n.parse::<u32>().ok()?;
    let word = match rest.split_once(" (").map_or(rest, |(word, _)| word) {
        "passing" => "passed",
        "pending" => "pending",
        "failing" => "failed",
        _ => return None,
    };
    Some(format!("{n} {word}"))
}

/// `Ran 3 tests in 0.001s` (unittest).
fn unittest_ran(line: &str) -> Option<u32> {
    let rest = line.strip_prefix("Ran ")?;
    let (n, rest) = rest.split_once(' ')?;
    (rest.starts_with("test ") || rest.starts_with("tests "))
        .then(|| n.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real closing output of each runner, and the counts it gives:
    /// (output, passed, failed, skipped).
    const CASES: &[(&str, &str, u32, u32, u32)] = &[
        (
            "unittest passed",
            "..\n----------------------------------------------------------------------\nRan 2 tests in 0.001s\n\nOK",
            2,
            0,
            0,
        ),
        (
            "unittest skipped",
            "s\n----------------------------------------------------------------------\nRan 1 test in 0.000s\n\nOK (skipped=1)",
            0,
            0,
            1,
        ),
        (
            "unittest failed",
            "F.s\nRan 3 tests in 0.002s\n\nFAILED (failures=1, skipped=1)",
            1,
            1,
            1,
        ),
        (
            "unittest expected failure",
            "x\nRan 1 test in 0.000s\n\nOK (expected failures=1)",
            0,
            0,
            1,
        ),
        (
            "unittest none (3.12)",
            "\nRan 0 tests in 0.000s\n\nNO TESTS RAN",
            0,
            0,
            0,
        ),
        (
            "unittest none (3.11)",
            "\nRan 0 tests in 0.000s\n\nOK",
            0,
            0,
            0,
        ),
        (
            "pytest -q",
            "..                                                     [100%]\n2 passed in 0.01s",
            2,
            0,
            0,
        ),
        (
            "pytest skipped",
            "============================= 1 skipped in 0.01s ==============================",
            0,
            0,
            1,
        ),
        (
            "pytest mixed",
            "=========== 1 failed, 3 passed, 1 skipped, 2 xfailed, 1 warning in 0.21s ===========",
            3,
            1,
            3,
        ),
        (
            "pytest deselected",
            "1 passed, 4 deselected in 0.02s",
            1,
            0,
            0,
        ),
        ("pytest none", "no tests ran in 0.01s", 0, 0, 0),
        (
            "libtest two binaries",
            "running 1 test\ntest tests::total ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s\n\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
            1,
            0,
            0,
        ),
        (
            "libtest ignored",
            "test tests::total ... ignored\n\ntest result: ok. 0 passed; 0 failed; 1 ignored; 0 measured; 3 filtered out; finished in 0.00s",
            0,
            0,
            1,
        ),
        (
            "libtest failed",
            "test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.09s",
            1,
            2,
            0,
        ),
        (
            "nextest",
            "     Summary [   0.010s] 3 tests run: 3 passed, 12 skipped",
            3,
            0,
            0,
        ),
        (
            "go -v",
            "=== RUN   TestTotal\n--- PASS: TestTotal (0.00s)\nPASS\nok  \texample.com/cart\t0.002s",
            1,
            0,
            0,
        ),
        (
            "go skip",
            "=== RUN   TestTotal\n    cart_test.go:9: later\n--- SKIP: TestTotal (0.00s)\nPASS\nok  \texample.com/cart\t0.002s",
            0,
            0,
            1,
        ),
        (
            "go none",
            "ok  \texample.com/cart\t0.002s [no tests to run]",
            0,
            0,
            0,
        ),
        (
            "jest",
            "Test Suites: 1 passed, 1 total\nTests:       1 skipped, 2 passed, 3 total\nSnapshots:   0 total",
            2,
            0,
            1,
        ),
        (
            "vitest",
            " Test Files  1 passed (1)\n      Tests  2 passed | 1 skipped (3)\n   Start at  10:00:00",
            2,
            0,
            1,
        ),
        (
            "mocha",
            "  Cart\n    ✔ adds prices\n    - later\n\n  1 passing (5ms)\n  1 pending",
            1,
            0,
            1,
        ),
        (
            "vitest coloured",
            "\u{1b}[2m      Tests \u{1b}[22m \u{1b}[1m\u{1b}[32m1 passed\u{1b}[39m\u{1b}[22m\u{1b}[90m (1)\u{1b}[39m",
            1,
            0,
            0,
        ),
    ];

    #[test]
    fn each_runners_summary_is_counted() {
        for (name, output, passed, failed, skipped) in CASES {
            let tally = Tally::of(output);
            assert!(tally.known(), "{name}: no summary recognised in {output:?}");
            assert_eq!(
                (tally.passed, tally.failed, tally.skipped),
                (*passed, *failed, *skipped),
                "{name}"
            );
        }
    }

    #[test]
    fn output_without_a_summary_is_unknown() {
        for output in [
            "",
            "ok  \texample.com/cart\t0.002s",
            "OK",
            "all done in 2s",
            "built 3 crates in 1.5s",
            "Tests: run them again later",
        ] {
            let tally = Tally::of(output);
            assert!(!tally.known(), "{output:?} gave {tally:?}");
        }
    }
}
