//! `report.html`: the summary of `report.md` as one self-contained page
//! (inline CSS; no script, font, image or any other request; readable
//! offline), with each task's row linked to its files.
//!
//! Every string in a report comes from the suite, the model or a task's
//! output and is escaped, in text and in attributes; a Content Security
//! Policy that allows nothing but the inline style is the second line of
//! defence should an escape ever be missed. The same report always gives
//! the same bytes (no "generated at" time).

use std::fmt::Write as _;
use std::path::Path;

use rein_core::inert;

use super::report::{Report, TaskResult, Totals, cost, shorten};
use crate::trace_cmd::html::escape;

/// Escapes `text` for HTML text and attribute values. Line breaks and
/// invisible characters (bidi overrides, terminal escapes) are shown as
/// `\n`, `\u{202e}`, …: a one-line field cannot disguise what it says.
fn esc(text: &str) -> String {
    escape(&inert::line(text))
}

/// [`esc`] for text of several lines (a title attribute): line breaks kept.
fn esc_block(text: &str) -> String {
    escape(&inert::block(text))
}

/// A URL path segment: every byte but the unreserved ones percent-encoded,
/// so a segment has no `/`, quote, `?`, `#` or `:` to change what it names.
fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// The files the runner writes in each task's folder (`runner.rs`), with
/// their link text.
const TASK_FILES: [(&str, &str); 4] = [
    ("run.out", "out"),
    ("run.err", "err"),
    ("result.json", "result"),
    ("check.log", "check"),
];

/// Links to the task's files, relative to `report.html` (which is in the
/// results folder, next to `tasks/`), so the folder can be moved or
/// archived. None when the task's folder is not `tasks/<id>` (its runner
/// failed before there was one), or the id could climb out of `tasks/`.
fn task_links(t: &TaskResult) -> Option<String> {
    if t.id.is_empty() || t.id == "." || t.id == ".." {
        return None;
    }
    if !Path::new(&t.dir).ends_with(Path::new("tasks").join(&t.id)) {
        return None;
    }
    let id = segment(&t.id);
    let links: Vec<String> = TASK_FILES
        .iter()
        .map(|(file, text)| {
            format!(
                "<a href=\"{}\" title=\"{}\">{text}</a>",
                esc(&format!("tasks/{id}/{file}")),
                esc(file)
            )
        })
        .collect();
    Some(links.join(" "))
}

const STYLE: &str = r#"
:root { --fg:#1d2329; --muted:#5f6b76; --bg:#ffffff; --panel:#f5f7f9; --line:#dde3e8;
  --ok:#1a7f37; --bad:#cf222e; --warn:#9a6700; --link:#0969da;
  --ok-bg:#e6ffec; --bad-bg:#ffebe9; --warn-bg:#fff8c5;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; }
@media (prefers-color-scheme: dark) {
  :root { --fg:#e6edf3; --muted:#9198a1; --bg:#0d1117; --panel:#161b22; --line:#30363d;
    --ok:#3fb950; --bad:#f85149; --warn:#d29922; --link:#58a6ff;
    --ok-bg:#12261e; --bad-bg:#2d1316; --warn-bg:#272115; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1400px; padding: 1.5rem; color: var(--fg); background: var(--bg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; padding-bottom: .25rem; border-bottom: 1px solid var(--line); }
code { font-family: var(--mono); font-size: .86rem; overflow-wrap: anywhere; }
a { color: var(--link); }
.meta, .muted { color: var(--muted); }
dl.stats { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1rem 0; }
dl.stats div { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .4rem .8rem; min-width: 7rem; }
dl.stats dt { color: var(--muted); font-size: .8rem; }
dl.stats dd { margin: 0; font-size: 1.2rem; font-weight: 600; }
table { border-collapse: collapse; }
th, td { text-align: left; vertical-align: top; padding: .25rem .6rem; border-bottom: 1px solid var(--line); }
thead th { position: sticky; top: 0; background: var(--bg); font-weight: 600; }
.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.fixed td { background: var(--ok-bg); }
tr.false-claim td { background: var(--bad-bg); }
tr.errored td { background: var(--warn-bg); }
.ok { color: var(--ok); }
.bad { color: var(--bad); font-weight: 600; }
.warn { color: var(--warn); }
td.note { max-width: 32rem; }
/* Ids, verdicts and links are short: broken mid-word they read worse than a wider table. */
#tasks td:nth-child(-n+5), #tasks td:last-child { white-space: nowrap; }
footer { margin-top: 2.5rem; font-size: .85rem; color: var(--muted); }
"#;

/// The whole page.
pub fn html(report: &Report) -> String {
    let mut out = String::with_capacity(16 * 1024 + report.tasks.len() * 1024);
    let all = Totals::of(&report.tasks);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>rein eval: {} · {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&report.suite),
        esc(&report.label),
    );
    let _ = writeln!(
        out,
        "<header>\n<h1>rein eval: <code>{}</code></h1>",
        esc(&report.suite)
    );
    let _ = writeln!(
        out,
        "<p class=\"meta\"><code>{}</code> · <code>{}</code>/<code>{}</code> · Rein <code>{}</code> · {} job{} · checks: <code>{}</code></p>\n</header>",
        esc(&report.label),
        esc(&report.provider),
        esc(&report.model),
        esc(&report.rein_version),
        report.jobs,
        if report.jobs == 1 { "" } else { "s" },
        esc(&report.check_sandbox),
    );
    headline(&mut out, report, &all);
    splits(&mut out, report);
    tasks(&mut out, report);
    out.push_str(
        "<footer>Written by <code>rein eval</code>, with <a href=\"report.json\">report.json</a> \
         and <a href=\"report.md\">report.md</a>. A task is fixed only when Rein says it succeeded \
         <em>and</em> the suite&#39;s check (with the held-out tests) passes; a false claim is a \
         success the check refutes. This page is self-contained: it loads no scripts, fonts or \
         images.</footer>\n</body>\n</html>\n",
    );
    out
}

fn headline(out: &mut String, report: &Report, all: &Totals) {
    let stat = |out: &mut String, name: &str, value: String, class: &str| {
        let _ = writeln!(
            out,
            "<div><dt>{name}</dt><dd{}>{value}</dd></div>",
            if class.is_empty() {
                String::new()
            } else {
                format!(" class=\"{class}\"")
            }
        );
    };
    out.push_str("<section id=\"summary\">\n<dl class=\"stats\">\n");
    stat(
        out,
        "fixed",
        format!("{} of {}", all.fixed, all.tasks),
        if all.fixed > 0 { "ok" } else { "" },
    );
    stat(
        out,
        "pass rate",
        format!("{:.0} %", all.pass_rate() * 100.0),
        "",
    );
    stat(
        out,
        "false claims",
        all.false_claims.to_string(),
        if all.false_claims > 0 { "bad" } else { "" },
    );
    stat(
        out,
        "errors",
        all.errors.to_string(),
        if all.errors > 0 { "warn" } else { "" },
    );
    stat(out, "turns", all.turns.to_string(), "");
    stat(out, "tokens in", all.input_tokens.to_string(), "");
    stat(out, "tokens out", all.output_tokens.to_string(), "");
    stat(out, "cost", cost(all.cost_usd, all.unpriced_calls), "");
    stat(out, "task time", seconds(all.wall_ms), "");
    stat(out, "wall time", seconds(report.wall_ms), "");
    out.push_str("</dl>\n</section>\n");
}

fn splits(out: &mut String, report: &Report) {
    out.push_str(
        "<section id=\"splits\">\n<h2>By split</h2>\n<table>\n<thead><tr><th>split</th>\
         <th class=\"n\">tasks</th><th class=\"n\">fixed</th><th class=\"n\">pass rate</th>\
         <th class=\"n\">false claims</th><th class=\"n\">errors</th></tr></thead>\n<tbody>\n",
    );
    for split in report.splits() {
        let t = Totals::of(report.tasks.iter().filter(|r| r.split == split));
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{:.0} %</td><td class=\"n{}\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&split),
            t.tasks,
            t.fixed,
            t.pass_rate() * 100.0,
            if t.false_claims > 0 { " bad" } else { "" },
            t.false_claims,
            t.errors,
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn tasks(out: &mut String, report: &Report) {
    out.push_str(
        "<section id=\"tasks\">\n<h2>Tasks</h2>\n<table>\n<thead><tr><th>task</th><th>split</th>\
         <th>verdict</th><th>check</th><th>fixed</th><th class=\"n\">turns</th>\
         <th class=\"n\">tokens in</th><th class=\"n\">tokens out</th><th class=\"n\">cost</th>\
         <th class=\"n\">time</th><th>note</th><th>files</th></tr></thead>\n<tbody>\n",
    );
    for t in &report.tasks {
        // The row's class comes from the judgement, never from a string
        // of the report.
        let row = if t.false_claim {
            " class=\"false-claim\""
        } else if t.fixed {
            " class=\"fixed\""
        } else if t.error.is_some() {
            " class=\"errored\""
        } else {
            ""
        };
        let check = match t.check_passed {
            Some(true) => "<span class=\"ok\">pass</span>",
            Some(false) => "<span class=\"bad\">FAIL</span>",
            None => "<span class=\"muted\">—</span>",
        };
        let fixed = if t.false_claim {
            "<span class=\"bad\">false claim</span>"
        } else if t.fixed {
            "<span class=\"ok\">yes</span>"
        } else {
            "no"
        };
        let note = t.error.as_deref().unwrap_or(&t.reason);
        let short = shorten(note, 160);
        // The whole note on hover when the cell shows only its start.
        let title = if short == note {
            String::new()
        } else {
            format!(" title=\"{}\"", esc_block(note))
        };
        let _ = writeln!(
            out,
            "<tr{row}><td><code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td>\
             <td>{check}</td><td>{fixed}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"note{}\"{title}>{}</td><td>{}</td></tr>",
            esc(&t.id),
            esc(&t.split),
            esc(&t.state),
            t.turns,
            t.input_tokens,
            t.output_tokens,
            esc(&cost(t.cost_usd, t.unpriced_calls)),
            seconds(t.wall_ms),
            if t.error.is_some() { " warn" } else { "" },
            esc(&short),
            task_links(t).unwrap_or_default(),
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::super::report::VERSION;
    use super::*;

    fn result(id: &str, split: &str, state: &str, check: Option<bool>) -> TaskResult {
        let mut r = TaskResult {
            id: id.into(),
            split: split.into(),
            state: state.into(),
            reason: "r".into(),
            check_passed: check,
            fixed: false,
            false_claim: false,
            turns: 3,
            input_tokens: 1200,
            output_tokens: 80,
            cost_usd: 0.0123,
            unpriced_calls: 0,
            wall_ms: 2500,
            error: None,
            dir: format!("/results/tasks/{id}"),
            candidates: 0,
            candidate_won: None,
        };
        r.judge();
        r
    }

    fn report(tasks: Vec<TaskResult>) -> Report {
        Report {
            version: VERSION,
            suite: "mini".into(),
            label: "baseline".into(),
            rein_version: "0.1.0".into(),
            provider: "scripted".into(),
            model: "scripted".into(),
            check_sandbox: "landlock".into(),
            jobs: 2,
            started_unix: 0,
            wall_ms: 4000,
            tasks,
        }
    }

    const SCRIPT: &str = "<script>alert(1)</script>";
    const BREAKOUT: &str = "\"><img src=x onerror=alert(1)>";

    /// Attack: a suite, a model or a task's output writes markup into the
    /// report, to run a script when the page is opened.
    #[test]
    fn a_task_note_cannot_inject_html() {
        let evil = format!("{SCRIPT}{BREAKOUT}");
        let mut t = result(&evil, &evil, &evil, Some(false));
        t.reason = format!("{evil}\nsecond line {evil}");
        t.dir = format!("/results/tasks/{evil}");
        let mut erred = result("e", "dev", "error", None);
        erred.error = Some(evil.clone());
        let mut r = report(vec![t, erred]);
        r.suite = evil.clone();
        r.label = evil.clone();
        r.provider = evil.clone();
        r.model = evil.clone();
        r.rein_version = evil.clone();
        r.check_sandbox = evil.clone();
        // Long enough that the note has a title attribute too.
        r.tasks[0].reason.push_str(&"x".repeat(200));

        let page = html(&r).to_lowercase();
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{page}"
        );
        assert!(page.contains("&quot;&gt;&lt;img src=x"), "{page}");
        // The only attributes are the page's own.
        for quoted in page.split('"').skip(1).step_by(2) {
            assert!(!quoted.contains('<') && !quoted.contains('>'), "{quoted}");
        }
    }

    /// Attack: a task id that would make its links point elsewhere (out
    /// of `tasks/`, to another scheme, or out of the attribute).
    #[test]
    fn a_task_id_cannot_redirect_its_links() {
        let mut odd = result("a\"b c/../x:y", "dev", "failed", Some(false));
        odd.dir = "/results/tasks/a\"b c/../x:y".into();
        let links = task_links(&odd).unwrap_or_default();
        assert!(
            links.contains("href=\"tasks/a%22b%20c%2F..%2Fx%3Ay/run.out\""),
            "{links}"
        );
        let mut up = result("..", "dev", "failed", None);
        up.dir = "/results/tasks/..".into();
        assert_eq!(task_links(&up), None);
        // No folder of its own: nothing to link to.
        let mut lost = result("t", "dev", "error", None);
        lost.dir = String::new();
        assert_eq!(task_links(&lost), None);
    }

    #[test]
    fn the_page_loads_nothing_and_runs_nothing() {
        let page = html(&report(vec![result("t", "dev", "succeeded", Some(true))]));
        for banned in [
            "<script", "src=", "http:", "https:", "@import", "url(", "<link",
        ] {
            assert!(!page.contains(banned), "{banned} in {page}");
        }
        assert!(page.contains("default-src 'none'"), "{page}");
    }

    #[test]
    fn the_page_of_a_two_task_report() {
        let fixed = result("honest", "dev", "succeeded", Some(true));
        let mut overfit = result("overfit", "holdout", "succeeded", Some(false));
        overfit.reason = "verified: the test passes & nothing else changed".into();
        let page = html(&report(vec![fixed, overfit]));
        // The stylesheet is long and reviewed as code: only the markup here.
        let page = page.replace(STYLE, "/* STYLE */");
        expect_test::expect![[r#"
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>rein eval: mini · baseline</title>
            <style>/* STYLE */</style>
            </head>
            <body>
            <header>
            <h1>rein eval: <code>mini</code></h1>
            <p class="meta"><code>baseline</code> · <code>scripted</code>/<code>scripted</code> · Rein <code>0.1.0</code> · 2 jobs · checks: <code>landlock</code></p>
            </header>
            <section id="summary">
            <dl class="stats">
            <div><dt>fixed</dt><dd class="ok">1 of 2</dd></div>
            <div><dt>pass rate</dt><dd>50 %</dd></div>
            <div><dt>false claims</dt><dd class="bad">1</dd></div>
            <div><dt>errors</dt><dd>0</dd></div>
            <div><dt>turns</dt><dd>6</dd></div>
            <div><dt>tokens in</dt><dd>2400</dd></div>
            <div><dt>tokens out</dt><dd>160</dd></div>
            <div><dt>cost</dt><dd>$0.0246</dd></div>
            <div><dt>task time</dt><dd>5.0 s</dd></div>
            <div><dt>wall time</dt><dd>4.0 s</dd></div>
            </dl>
            </section>
            <section id="splits">
            <h2>By split</h2>
            <table>
            <thead><tr><th>split</th><th class="n">tasks</th><th class="n">fixed</th><th class="n">pass rate</th><th class="n">false claims</th><th class="n">errors</th></tr></thead>
            <tbody>
            <tr><td><code>dev</code></td><td class="n">1</td><td class="n">1</td><td class="n">100 %</td><td class="n">0</td><td class="n">0</td></tr>
            <tr><td><code>holdout</code></td><td class="n">1</td><td class="n">0</td><td class="n">0 %</td><td class="n bad">1</td><td class="n">0</td></tr>
            </tbody>
            </table>
            </section>
            <section id="tasks">
            <h2>Tasks</h2>
            <table>
            <thead><tr><th>task</th><th>split</th><th>verdict</th><th>check</th><th>fixed</th><th class="n">turns</th><th class="n">tokens in</th><th class="n">tokens out</th><th class="n">cost</th><th class="n">time</th><th>note</th><th>files</th></tr></thead>
            <tbody>
            <tr class="fixed"><td><code>honest</code></td><td><code>dev</code></td><td><code>succeeded</code></td><td><span class="ok">pass</span></td><td><span class="ok">yes</span></td><td class="n">3</td><td class="n">1200</td><td class="n">80</td><td class="n">$0.0123</td><td class="n">2.5 s</td><td class="note">r</td><td><a href="tasks/honest/run.out" title="run.out">out</a> <a href="tasks/honest/run.err" title="run.err">err</a> <a href="tasks/honest/result.json" title="result.json">result</a> <a href="tasks/honest/check.log" title="check.log">check</a></td></tr>
            <tr class="false-claim"><td><code>overfit</code></td><td><code>holdout</code></td><td><code>succeeded</code></td><td><span class="bad">FAIL</span></td><td><span class="bad">false claim</span></td><td class="n">3</td><td class="n">1200</td><td class="n">80</td><td class="n">$0.0123</td><td class="n">2.5 s</td><td class="note">verified: the test passes &amp; nothing else changed</td><td><a href="tasks/overfit/run.out" title="run.out">out</a> <a href="tasks/overfit/run.err" title="run.err">err</a> <a href="tasks/overfit/result.json" title="result.json">result</a> <a href="tasks/overfit/check.log" title="check.log">check</a></td></tr>
            </tbody>
            </table>
            </section>
            <footer>Written by <code>rein eval</code>, with <a href="report.json">report.json</a> and <a href="report.md">report.md</a>. A task is fixed only when Rein says it succeeded <em>and</em> the suite&#39;s check (with the held-out tests) passes; a false claim is a success the check refutes. This page is self-contained: it loads no scripts, fonts or images.</footer>
            </body>
            </html>
        "#]].assert_eq(&page);
    }
}
