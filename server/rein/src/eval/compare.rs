//! `rein eval compare A B`: what a harness change won and lost, task by
//! task, on the tasks both runs have.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::report::{Report, TaskResult, Totals, cell, cost};

/// The comparison as markdown.
pub fn compare(a: &Report, b: &Report) -> String {
    let before: BTreeMap<&str, &TaskResult> = a.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let after: BTreeMap<&str, &TaskResult> = b.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let mut won = Vec::new();
    let mut lost = Vec::new();
    let mut new_false_claims = Vec::new();
    let mut both = Vec::new();
    let mut common_a = Vec::new();
    let mut common_b = Vec::new();
    for (id, old) in &before {
        let Some(new) = after.get(id) else { continue };
        common_a.push(*old);
        common_b.push(*new);
        match (old.fixed, new.fixed) {
            (false, true) => won.push(*id),
            (true, false) => lost.push(*id),
            (true, true) => both.push(*id),
            (false, false) => {}
        }
        if new.false_claim && !old.false_claim {
            new_false_claims.push(*id);
        }
    }
    let only_a: Vec<&str> = before
        .keys()
        .filter(|id| !after.contains_key(*id))
        .copied()
        .collect();
    let only_b: Vec<&str> = after
        .keys()
        .filter(|id| !before.contains_key(*id))
        .copied()
        .collect();
    let (ta, tb) = (Totals::of(common_a), Totals::of(common_b));

    let mut out = String::new();
    let _ = writeln!(
        out,
        "# rein eval compare: {} → {}",
        cell(&a.label),
        cell(&b.label)
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "A: {} · {}/{}  \nB: {} · {}/{}",
        cell(&a.suite),
        cell(&a.provider),
        cell(&a.model),
        cell(&b.suite),
        cell(&b.provider),
        cell(&b.model)
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "On the {} tasks both ran:", ta.tasks);
    let _ = writeln!(out);
    let _ = writeln!(out, "| | A | B | change |");
    let _ = writeln!(out, "|---|---:|---:|---:|");
    let row = |out: &mut String, name: &str, x: f64, y: f64, decimals: usize| {
        let _ = writeln!(
            out,
            "| {name} | {x:.decimals$} | {y:.decimals$} | {:+.decimals$} |",
            y - x
        );
    };
    row(&mut out, "fixed", ta.fixed as f64, tb.fixed as f64, 0);
    row(
        &mut out,
        "false claims",
        ta.false_claims as f64,
        tb.false_claims as f64,
        0,
    );
    row(&mut out, "errors", ta.errors as f64, tb.errors as f64, 0);
    row(&mut out, "turns", ta.turns as f64, tb.turns as f64, 0);
    row(
        &mut out,
        "tokens in",
        ta.input_tokens as f64,
        tb.input_tokens as f64,
        0,
    );
    row(
        &mut out,
        "tokens out",
        ta.output_tokens as f64,
        tb.output_tokens as f64,
        0,
    );
    if ta.unpriced_calls == 0 && tb.unpriced_calls == 0 {
        row(&mut out, "cost ($)", ta.cost_usd, tb.cost_usd, 4);
    } else {
        // A model without a known price: no difference to show.
        let _ = writeln!(
            out,
            "| cost | {} | {} | |",
            cost(ta.cost_usd, ta.unpriced_calls),
            cost(tb.cost_usd, tb.unpriced_calls)
        );
    }
    row(
        &mut out,
        "task time (s)",
        ta.wall_ms as f64 / 1000.0,
        tb.wall_ms as f64 / 1000.0,
        1,
    );
    let _ = writeln!(out);
    let list = |out: &mut String, title: &str, ids: &[&str]| {
        let shown: Vec<String> = ids.iter().map(|id| cell(id)).collect();
        let _ = writeln!(
            out,
            "- {title} ({}): {}",
            ids.len(),
            if shown.is_empty() {
                "none".to_owned()
            } else {
                shown.join(", ")
            }
        );
    };
    list(&mut out, "won (fixed in B only)", &won);
    list(&mut out, "lost (fixed in A only)", &lost);
    list(&mut out, "fixed in both", &both);
    list(&mut out, "new false claims in B", &new_false_claims);
    if !only_a.is_empty() || !only_b.is_empty() {
        list(&mut out, "only in A (not compared)", &only_a);
        list(&mut out, "only in B (not compared)", &only_b);
    }
    out
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::eval::report::tests::report;

    fn task(id: &str, state: &str, check: Option<bool>) -> TaskResult {
        let mut r = TaskResult {
            id: id.into(),
            split: "dev".into(),
            state: state.into(),
            reason: String::new(),
            check_passed: check,
            fixed: false,
            false_claim: false,
            turns: 3,
            input_tokens: 1000,
            output_tokens: 100,
            cost_usd: 0.01,
            unpriced_calls: 0,
            wall_ms: 2000,
            error: None,
            dir: String::new(),
            candidates: 0,
            candidate_won: None,
        };
        r.judge();
        r
    }

    #[test]
    fn a_comparison_names_what_was_won_and_lost() {
        let a = report(
            "before",
            vec![
                task("gcd", "succeeded", Some(true)),
                task("flatten", "failed", Some(false)),
                task("sqrt", "succeeded", Some(true)),
                task("lis", "failed", None),
            ],
        );
        let b = report(
            "after",
            vec![
                task("gcd", "succeeded", Some(true)),
                task("flatten", "succeeded", Some(true)),
                task("sqrt", "succeeded", Some(false)),
                task("pascal", "succeeded", Some(true)),
            ],
        );
        expect![[r#"
            # rein eval compare: `before` → `after`

            A: `quixbugs-python` · `openai`/`qwen`  
            B: `quixbugs-python` · `openai`/`qwen`

            On the 3 tasks both ran:

            | | A | B | change |
            |---|---:|---:|---:|
            | fixed | 2 | 2 | +0 |
            | false claims | 0 | 1 | +1 |
            | errors | 0 | 0 | +0 |
            | turns | 9 | 9 | +0 |
            | tokens in | 3000 | 3000 | +0 |
            | tokens out | 300 | 300 | +0 |
            | cost ($) | 0.0300 | 0.0300 | +0.0000 |
            | task time (s) | 6.0 | 6.0 | +0.0 |

            - won (fixed in B only) (1): `flatten`
            - lost (fixed in A only) (1): `sqrt`
            - fixed in both (1): `gcd`
            - new false claims in B (1): `sqrt`
            - only in A (not compared) (1): `lis`
            - only in B (not compared) (1): `pascal`
        "#]]
        .assert_eq(&compare(&a, &b));
    }

    /// A local model has no price: the comparison says so, not "0.0000 →
    /// 0.0000", which would read as free.
    #[test]
    fn a_cost_rein_does_not_know_is_not_compared_as_free() {
        let unpriced = |id: &str, calls: u32| TaskResult {
            cost_usd: 0.0,
            unpriced_calls: calls,
            ..task(id, "failed", Some(false))
        };
        let a = report("before", vec![unpriced("gcd", 3)]);
        let b = report("after", vec![task("gcd", "failed", Some(false))]);
        let out = compare(&a, &b);
        assert!(out.contains("| cost | unknown | $0.0100 | |"), "{out}");
        assert!(!out.contains("cost ($)"), "{out}");
    }
}
