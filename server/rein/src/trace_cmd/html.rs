//! The HTML report: one self-contained file (inline CSS, inline SVG, no
//! external fonts, scripts or images; readable without JavaScript) with the
//! summary, a chart of tokens and cost per turn, the timeline, the diffs of
//! every edit and the verification evidence. Everything from the trace is
//! escaped: it holds arbitrary code and model text. The same trace always
//! gives the same bytes (no "generated at" time, no absolute paths but
//! those the trace holds and, in the links to its logs, the workspace's).
//!
//! Log paths are links (`file://` URLs built from the path, never a URL
//! the trace holds) with the path itself as their text: a browser opens
//! them, and where a link cannot be followed (VS Code's webview opens only
//! web links) the path is there to copy.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::markdown;
use super::model::{
    Check, Edit, EditOutcome, Entry, Report, TurnUsage, fmt_count, fmt_ms, fmt_offset, fmt_usd,
    review_label,
};
use super::timeline::{cost_line, tokens_line};
use rein_core::inert;

/// Escapes text for HTML content and attribute values. Control and
/// invisible characters (a terminal's escape codes in a log line, bidi
/// overrides that reorder a line: "Trojan Source") are shown as the
/// terminal shows them, `\x1b`, `\u{202e}` ([`inert::block`]).
pub fn esc(text: &str) -> String {
    escape(&inert::block(text))
}

/// Escapes `& < > " '`: safe in HTML content and in quoted attributes.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
:root { --fg:#1d2329; --muted:#5f6b76; --bg:#ffffff; --panel:#f5f7f9; --line:#dde3e8;
  --ok:#1a7f37; --err:#cf222e; --warn:#9a6700; --info:#0969da; --ctx:#8250df;
  --add-bg:#e6ffec; --del-bg:#ffebe9; --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; }
@media (prefers-color-scheme: dark) {
  :root { --fg:#e6edf3; --muted:#9198a1; --bg:#0d1117; --panel:#161b22; --line:#30363d;
    --ok:#3fb950; --err:#f85149; --warn:#d29922; --info:#58a6ff; --ctx:#bc8cff;
    --add-bg:#12261e; --del-bg:#2d1316; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1100px; padding: 1.5rem; color: var(--fg); background: var(--bg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; padding-bottom: .25rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1rem; margin: 1rem 0 .5rem; }
code, pre, .off, .lbl { font-family: var(--mono); font-size: .86rem; }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.log { background: var(--panel); border: 1px solid var(--line); padding: .5rem .75rem; max-height: 24rem; overflow: auto; }
details.output { margin: .25rem 0 1rem; }
a { color: var(--info); }
nav a { margin-right: 1rem; }
.goal { font-size: 1.05rem; margin: .25rem 0 1rem; }
.muted, .meta { color: var(--muted); }
table { border-collapse: collapse; }
td, th { text-align: left; vertical-align: top; padding: .2rem .8rem .2rem 0; }
th { font-weight: 600; }
table.kv th { color: var(--muted); font-weight: normal; width: 8rem; }
table.num td, table.num th { text-align: right; padding: .15rem .6rem; border-bottom: 1px solid var(--line); }
.badge { display: inline-block; padding: 0 .5rem; border-radius: 1rem; font-size: .8rem; font-weight: 600;
  border: 1px solid currentColor; vertical-align: middle; }
.c-ok { color: var(--ok); }
.c-err { color: var(--err); }
.c-warn { color: var(--warn); }
ul.notes li { color: var(--warn); }
.chart { width: 100%; max-width: 760px; height: auto; display: block; }
.chart text { font: 11px system-ui, sans-serif; fill: var(--muted); }
.chart .grid { stroke: var(--line); stroke-width: 1; }
ul.legend { list-style: none; padding: 0; margin: .25rem 0 .75rem; display: flex; gap: 1.25rem; flex-wrap: wrap; font-size: .85rem; }
.sw { display: inline-block; width: .8rem; height: .8rem; margin-right: .35rem; vertical-align: -1px; border-radius: 2px; }
.turn { margin: .4rem 0; border-left: 3px solid var(--line); padding-left: .75rem; }
.turn > summary { cursor: pointer; font-weight: 600; }
.turn > summary .meta { font-weight: normal; }
ol.events { list-style: none; margin: .25rem 0; padding: 0; }
ol.events li { padding: .1rem 0; }
.row, ol.events summary { display: grid; grid-template-columns: 6.5rem 5.5rem 1fr; gap: .5rem; align-items: baseline; }
ol.events summary { cursor: pointer; list-style: none; }
ol.events summary::-webkit-details-marker { display: none; }
ol.events summary .txt::after { content: " ▸"; color: var(--muted); }
ol.events details[open] summary .txt::after { content: " ▾"; }
.off { color: var(--muted); text-align: right; }
.lbl { color: var(--muted); overflow-wrap: anywhere; }
.indent .lbl { padding-left: 1rem; }
.more { margin: .3rem 0 .5rem 12.5rem; padding: .5rem .75rem; background: var(--panel); border-radius: 6px; }
.more dt { font-family: var(--mono); font-size: .8rem; color: var(--muted); }
.more dd { margin: 0 0 .4rem 0; }
.ev.model .lbl, .ev.model .txt { color: var(--info); }
.ev.ok .lbl, .ev.verified .txt, .ev.approval .lbl { color: var(--ok); }
.ev.err .lbl, .ev.denied .lbl, .ev.denied .txt, .ev.notverified .txt { color: var(--err); }
.ev.guard .lbl, .ev.retry .lbl, .ev.question .lbl, .ev.answer .lbl { color: var(--warn); }
.ev.context .lbl { color: var(--ctx); }
.ev.state .txt { font-weight: 600; }
.ev.verbose { display: none; }
#all:checked ~ .groups .ev.verbose { display: list-item; opacity: .7; }
.toggle-label { font-size: .85rem; color: var(--muted); cursor: pointer; }
.edit, .check { border: 1px solid var(--line); border-radius: 6px; margin: .75rem 0; overflow: hidden; }
.edit h3, .check h3 { margin: 0; padding: .45rem .75rem; background: var(--panel); font-weight: 600; }
.edit h3 .meta, .check h3 .meta { font-weight: normal; font-size: .85rem; }
.edit p, .check p, .check table { margin: .5rem .75rem; }
pre.diff { padding: .5rem 0; }
pre.diff span { display: block; padding: 0 .75rem; }
pre.diff .add { background: var(--add-bg); }
pre.diff .del { background: var(--del-bg); }
pre.diff .hdr { color: var(--muted); }
.edit.not-applied pre.diff { opacity: .65; }
footer { margin-top: 2.5rem; font-size: .85rem; color: var(--muted); }
"#;

/// An optional convenience: "expand all" / "collapse all" buttons. The
/// report reads the same without it.
const SCRIPT: &str = r#"
(function () {
  var nav = document.querySelector("nav");
  if (!nav) return;
  [["expand all", true], ["collapse all", false]].forEach(function (b) {
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = b[0];
    button.style.marginRight = ".5rem";
    button.onclick = function () {
      document.querySelectorAll("details").forEach(function (d) { d.open = b[1]; });
    };
    nav.appendChild(button);
  });
})();
"#;

/// Escapes `text` and renders its inline code spans as `<code>`.
fn prose(text: &str) -> String {
    markdown::to_html(text, esc)
}

/// A `file://` URL for a log path from the trace, when one can be built
/// safely: an absolute path, or one relative to `workspace` that stays in
/// it. Never a URL the trace holds: a path whose first component has a
/// `:` (`javascript:…`, `https://…`) or that starts with `//` (a host), or
/// that holds a control character, gets no link. Everything but unreserved
/// characters and `/` is percent-encoded, so the URL has no quote, space,
/// `<`, `&` or `#` to break out of an attribute or change its meaning.
pub fn file_url(path: &str, workspace: Option<&Path>) -> Option<String> {
    let first = path.split('/').next().unwrap_or_default();
    if path.is_empty()
        || first.contains(':')
        || path.starts_with("//")
        || path.chars().any(char::is_control)
    {
        return None;
    }
    let absolute = if path.starts_with('/') {
        path.to_owned()
    } else {
        // Rein's artifacts are under the workspace; a path that climbs out
        // of it is not one of them.
        if path.split(['/', '\\']).any(|c| c == "..") {
            return None;
        }
        let root = workspace?.to_str()?;
        if !root.starts_with('/') {
            return None;
        }
        format!(
            "{}/{}",
            root.trim_end_matches('/'),
            path.trim_start_matches("./")
        )
    };
    let mut url = String::from("file://");
    for byte in absolute.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            url.push(char::from(byte));
        } else {
            let _ = write!(url, "%{byte:02X}");
        }
    }
    Some(url)
}

/// A path as a link to its file (see [`file_url`]), the path its text.
fn path_link(path: &str, workspace: Option<&Path>) -> String {
    let code = format!("<code>{}</code>", esc(path));
    match file_url(path, workspace) {
        Some(url) => format!("<a href=\"{}\">{code}</a>", esc(&url)),
        None => code,
    }
}

/// The whole report. `workspace`: the folder relative log paths are in,
/// for their links.
pub fn render(r: &Report, workspace: Option<&Path>) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Rein trace {id}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        id = esc(&r.task_id)
    );
    let _ = writeln!(
        out,
        "<header>\n<h1>Rein trace <code>{}</code></h1>",
        esc(&r.task_id)
    );
    let _ = writeln!(
        out,
        "<p class=\"goal\">{}</p>",
        match &r.goal {
            Some(goal) => prose(goal),
            None => "<span class=\"muted\">(the goal is not recorded in the trace)</span>".into(),
        }
    );
    out.push_str(
        "<nav><a href=\"#summary\">Summary</a><a href=\"#usage\">Tokens and cost</a>\
         <a href=\"#timeline\">Timeline</a><a href=\"#edits\">Edits</a>\
         <a href=\"#verification\">Verification</a></nav>\n</header>\n",
    );
    summary(&mut out, r);
    usage(&mut out, r);
    timeline(&mut out, r);
    edits(&mut out, r);
    verification(&mut out, r, workspace);
    let _ = write!(
        out,
        "<footer>Written by <code>rein trace</code> from <code>{}</code> ({} events). \
         This file is self-contained: it loads no scripts, fonts or images.</footer>\n\
         <script>{SCRIPT}</script>\n</body>\n</html>\n",
        esc(&r.source),
        r.events
    );
    out
}

fn summary(out: &mut String, r: &Report) {
    out.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n<table class=\"kv\">\n");
    let row = |out: &mut String, name: &str, value: String| {
        let _ = writeln!(out, "<tr><th>{name}</th><td>{value}</td></tr>");
    };
    row(out, "task", format!("<code>{}</code>", esc(&r.task_id)));
    let state = match &r.state {
        Some(state) => format!(
            "<span class=\"badge {}\">{}</span> {}",
            state_color(state),
            esc(state),
            r.reason.as_deref().map(prose).unwrap_or_default()
        ),
        None => "<span class=\"muted\">(no state in the trace)</span>".to_owned(),
    };
    row(out, "state", state);
    row(
        out,
        "turns",
        match r.max_turns {
            Some(max) => format!("{} of {max}", r.turns),
            None => r.turns.to_string(),
        },
    );
    row(out, "tokens", esc(&tokens_line(r)));
    row(out, "cost", esc(&cost_line(r)));
    if let Some(t) = &r.status_totals {
        row(
            out,
            "task total",
            esc(&format!(
                "{} in · {} out · {} (the task's own count; the calls above differ)",
                fmt_count(t.input),
                fmt_count(t.output),
                fmt_usd(t.cost_usd)
            )),
        );
    }
    row(
        out,
        "duration",
        esc(&format!(
            "{}{}",
            r.duration_ms.map(fmt_ms).unwrap_or_else(|| "?".into()),
            r.start_ts
                .as_deref()
                .map(|s| format!(" · started {s}"))
                .unwrap_or_default()
        )),
    );
    row(
        out,
        "edits",
        format!(
            "{} proposed, {} applied",
            r.edits.len(),
            r.edits
                .iter()
                .filter(|e| e.outcome == EditOutcome::Applied)
                .count()
        ),
    );
    row(out, "verification", verification_summary(&r.checks));
    out.push_str("</table>\n");
    if !r.notes.is_empty() {
        out.push_str("<ul class=\"notes\">\n");
        for note in &r.notes {
            let _ = writeln!(out, "<li>{}</li>", esc(note));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

/// The verdict of the last verification, with the number of checks it
/// lists (its evidence), not the number of times the verifier ran: a
/// verification lists one check per command it ran, and the reader counts
/// those. Earlier verifications are counted apart.
fn verification_summary(checks: &[Check]) -> String {
    let Some(last) = checks.last() else {
        return "<span class=\"muted\">none</span>".to_owned();
    };
    let verdict = if last.passed {
        "<span class=\"c-ok\">✓ verified</span>"
    } else {
        "<span class=\"c-err\">✗ not verified</span>"
    };
    let listed = last.evidence.len();
    let mut s = format!("{verdict} ({})", count_checks(listed));
    let earlier = checks.len() - 1;
    if earlier > 0 {
        let _ = write!(
            s,
            " <span class=\"meta\">· after {earlier} earlier verification{}</span>",
            plural(earlier)
        );
    }
    s
}

/// `1 check`, `2 checks`.
fn count_checks(n: usize) -> String {
    format!("{n} check{}", plural(n))
}

const C_INPUT: &str = "#4e79a7";
const C_CACHED: &str = "#a0cbe8";
const C_OUTPUT: &str = "#f28e2b";
const C_COST: &str = "#e15759";

fn usage(out: &mut String, r: &Report) {
    out.push_str("<section id=\"usage\">\n<h2>Tokens and cost per turn</h2>\n");
    if r.turn_usage.is_empty() {
        out.push_str("<p class=\"muted\">No model calls in this trace.</p>\n</section>\n");
        return;
    }
    let priced = r.turn_usage.iter().any(|u| u.cost_usd.is_some());
    let _ = writeln!(
        out,
        "<ul class=\"legend\"><li><span class=\"sw\" style=\"background:{C_INPUT}\"></span>input</li>\
         <li><span class=\"sw\" style=\"background:{C_CACHED}\"></span>cached input (read)</li>\
         <li><span class=\"sw\" style=\"background:{C_OUTPUT}\"></span>output</li>{}</ul>",
        if priced {
            format!(
                "<li><span class=\"sw\" style=\"background:{C_COST}\"></span>cost (right axis)</li>"
            )
        } else {
            "<li class=\"muted\">no cost: the model's calls are unpriced</li>".to_owned()
        }
    );
    out.push_str(&chart(&r.turn_usage));
    out.push_str(
        "<details><summary>The numbers</summary>\n<table class=\"num\">\n<tr><th>turn</th>\
         <th>input</th><th>cached</th><th>cache write</th><th>output</th><th>cost</th>\
         <th>model time</th></tr>\n",
    );
    for u in &r.turn_usage {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            u.turn,
            u.tokens.input,
            u.tokens.cache_read,
            u.tokens.cache_write,
            u.tokens.output,
            u.cost_usd.map(fmt_usd).unwrap_or_else(|| "unpriced".into()),
            fmt_ms(u.latency_ms)
        );
    }
    out.push_str("</table>\n</details>\n</section>\n");
}

/// A round step for about `target` (1, 2 or 5 times a power of ten).
/// An axis's ticks, `0, step, 2·step, …` up to `max`: counted, so a huge
/// or infinite `max` (a trace may hold any usage) cannot loop forever.
fn ticks(max: f64, step: f64) -> impl Iterator<Item = f64> {
    (0..=12u32)
        .map(move |i| f64::from(i) * step)
        .take_while(move |v| v.is_finite() && *v <= max + step / 2.0)
}

fn nice_step(target: f64) -> f64 {
    if target <= 0.0 || !target.is_finite() {
        return 1.0;
    }
    let power = 10f64.powf(target.log10().floor());
    let f = target / power;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// Stacked bars (input, cached, output tokens) per turn, and the cost of
/// each turn as a line on a second axis. Pure SVG.
pub fn chart(turns: &[TurnUsage]) -> String {
    const W: f64 = 760.0;
    const H: f64 = 280.0;
    const ML: f64 = 60.0;
    const MR: f64 = 70.0;
    const MT: f64 = 16.0;
    const MB: f64 = 40.0;
    const TICKS: f64 = 4.0;
    let plot_w = W - ML - MR;
    let plot_h = H - MT - MB;
    let n = turns.len().max(1) as f64;
    let total = |u: &TurnUsage| u.tokens.total_input().saturating_add(u.tokens.output);
    let max_tokens = turns.iter().map(total).max().unwrap_or(0).max(1) as f64;
    let step = nice_step(max_tokens / TICKS);
    let y_max = (max_tokens / step).ceil() * step;
    let y = |v: f64| MT + plot_h - v / y_max * plot_h;
    let max_cost = turns.iter().filter_map(|u| u.cost_usd).fold(0.0, f64::max);
    let c_step = nice_step(max_cost / TICKS);
    let c_max = ((max_cost / c_step).ceil() * c_step).max(c_step);
    let yc = |v: f64| MT + plot_h - v / c_max * plot_h;

    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg class=\"chart\" viewBox=\"0 0 {W} {H}\" \
         role=\"img\" aria-label=\"Tokens and cost per turn\">\n\
         <g font-family=\"system-ui, sans-serif\" font-size=\"11\" fill=\"#5f6b76\">"
    );
    // Grid and the token axis.
    for v in ticks(y_max, step) {
        let _ = writeln!(
            s,
            "<line class=\"grid\" stroke=\"#dde3e8\" x1=\"{ML}\" y1=\"{y:.1}\" x2=\"{x2}\" y2=\"{y:.1}\"/>\
             <text x=\"{lx}\" y=\"{ty:.1}\" text-anchor=\"end\">{label}</text>",
            y = y(v),
            x2 = W - MR,
            lx = ML - 6.0,
            ty = y(v) + 4.0,
            label = fmt_count(v as u64)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"14\" y=\"{cy:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {cy:.1})\">tokens</text>\
         <text x=\"{cx:.1}\" y=\"{by}\" text-anchor=\"middle\">turn</text>",
        cy = MT + plot_h / 2.0,
        cx = ML + plot_w / 2.0,
        by = H - 6.0
    );
    // The bars.
    let slot = plot_w / n;
    let bw = (slot * 0.6).clamp(2.0, 56.0);
    let every = (turns.len() / 25).max(1);
    let mut points = Vec::new();
    for (i, u) in turns.iter().enumerate() {
        let x = ML + slot * i as f64 + (slot - bw) / 2.0;
        let fresh = u.tokens.input.saturating_add(u.tokens.cache_write) as f64;
        let cached = u.tokens.cache_read as f64;
        let output = u.tokens.output as f64;
        let _ = write!(
            s,
            "<g><title>turn {}: {} input, {} cached, {} output{}</title>",
            u.turn,
            fmt_count(fresh as u64),
            fmt_count(cached as u64),
            fmt_count(output as u64),
            u.cost_usd
                .map(|c| format!(", {}", fmt_usd(c)))
                .unwrap_or_default()
        );
        let mut base = 0.0;
        for (value, color) in [(fresh, C_INPUT), (cached, C_CACHED), (output, C_OUTPUT)] {
            if value > 0.0 {
                let top = y(base + value);
                let _ = write!(
                    s,
                    "<rect x=\"{x:.1}\" y=\"{top:.1}\" width=\"{bw:.1}\" height=\"{h:.1}\" fill=\"{color}\"/>",
                    h = y(base) - top
                );
            }
            base += value;
        }
        s.push_str("</g>\n");
        if i % every == 0 {
            let _ = writeln!(
                s,
                "<text x=\"{cx:.1}\" y=\"{ty:.1}\" text-anchor=\"middle\">{}</text>",
                u.turn,
                cx = x + bw / 2.0,
                ty = MT + plot_h + 16.0
            );
        }
        if let Some(cost) = u.cost_usd {
            points.push((x + bw / 2.0, yc(cost), u.turn, cost));
        }
    }
    // The cost line and its axis.
    if !points.is_empty() {
        for v in ticks(c_max, c_step) {
            let _ = writeln!(
                s,
                "<text x=\"{lx}\" y=\"{ty:.1}\" text-anchor=\"start\">{}</text>",
                fmt_usd(v),
                lx = W - MR + 6.0,
                ty = yc(v) + 4.0
            );
        }
        let line: Vec<String> = points
            .iter()
            .map(|(x, y, _, _)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{C_COST}\" stroke-width=\"2\" points=\"{}\"/>",
            line.join(" ")
        );
        for (x, y, turn, cost) in &points {
            let _ = writeln!(
                s,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{C_COST}\"><title>turn {turn}: {}</title></circle>",
                fmt_usd(*cost)
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{x}\" y=\"{cy:.1}\" text-anchor=\"middle\" transform=\"rotate(90 {x} {cy:.1})\">cost (USD)</text>",
            x = W - 10.0,
            cy = MT + plot_h / 2.0
        );
    }
    s.push_str("</g>\n</svg>\n");
    s
}

fn timeline(out: &mut String, r: &Report) {
    out.push_str("<section id=\"timeline\">\n<h2>Timeline</h2>\n");
    out.push_str(
        "<input type=\"checkbox\" id=\"all\"> <label for=\"all\" class=\"toggle-label\">\
         show every event (permissions granted by rule, activities)</label>\n<div class=\"groups\">\n",
    );
    for group in &r.groups {
        let title = match group.turn {
            Some(turn) => {
                let meta = r
                    .turn_usage
                    .iter()
                    .find(|u| u.turn == turn)
                    .map(|u| {
                        format!(
                            " <span class=\"meta\">· {} in · {} out{}</span>",
                            fmt_count(u.tokens.total_input()),
                            fmt_count(u.tokens.output),
                            u.cost_usd
                                .map(|c| format!(" · {}", fmt_usd(c)))
                                .unwrap_or_default()
                        )
                    })
                    .unwrap_or_default();
                format!("Turn {turn}{meta}")
            }
            None => "Start".to_owned(),
        };
        let _ = writeln!(
            out,
            "<details class=\"turn\" open>\n<summary>{title}</summary>\n<ol class=\"events\">"
        );
        for entry in &group.entries {
            event(out, entry);
        }
        out.push_str("</ol>\n</details>\n");
    }
    out.push_str("</div>\n</section>\n");
}

fn event(out: &mut String, e: &Entry) {
    let mut class = format!("ev {}", e.class.css());
    if e.indent {
        class.push_str(" indent");
    }
    if e.verbose_only {
        class.push_str(" verbose");
    }
    let text = if e.class.is_prose() {
        prose(&e.text)
    } else {
        esc(&e.text)
    };
    let line = format!(
        "<span class=\"off\">{}</span><span class=\"lbl\">{}</span><span class=\"txt\">{text}</span>",
        esc(&fmt_offset(e.offset_ms)),
        esc(&e.label),
    );
    let mut more = String::new();
    if let Some(full) = &e.full_text {
        let _ = write!(more, "<pre>{}</pre>", esc(full));
    }
    if let Some(args) = &e.args {
        more.push_str(&arguments(args));
    }
    if let Some(i) = e.edit {
        let _ = write!(more, "<p><a href=\"#edit-{}\">the diff</a></p>", i + 1);
    }
    if let Some(i) = e.check {
        let _ = write!(more, "<p><a href=\"#check-{}\">the evidence</a></p>", i + 1);
    }
    if more.is_empty() {
        let _ = writeln!(
            out,
            "<li class=\"{class}\"><div class=\"row\">{line}</div></li>"
        );
    } else {
        let _ = writeln!(
            out,
            "<li class=\"{class}\"><details><summary>{line}</summary><div class=\"more\">{more}</div></details></li>"
        );
    }
}

/// A call's arguments, each on its own: text as it is (code stays code).
fn arguments(args: &Value) -> String {
    match args {
        Value::Object(map) if !map.is_empty() => {
            // What the call is about first, then the change it makes.
            const FIRST: [&str; 8] = [
                "path", "target", "command", "question", "pattern", "old_text", "new_text",
                "content",
            ];
            let mut fields: Vec<(&String, &Value)> = map.iter().collect();
            fields
                .sort_by_key(|(key, _)| FIRST.iter().position(|k| k == key).unwrap_or(FIRST.len()));
            let mut s = String::from("<dl>");
            for (key, value) in fields {
                let text = match value {
                    Value::String(text) => text.clone(),
                    other => serde_json::to_string_pretty(other).unwrap_or_default(),
                };
                let _ = write!(s, "<dt>{}</dt><dd><pre>{}</pre></dd>", esc(key), esc(&text));
            }
            s.push_str("</dl>");
            s
        }
        Value::Object(_) | Value::Null => "<p class=\"muted\">no arguments</p>".to_owned(),
        other => format!(
            "<pre>{}</pre>",
            esc(&serde_json::to_string_pretty(other).unwrap_or_default())
        ),
    }
}

fn edits(out: &mut String, r: &Report) {
    out.push_str("<section id=\"edits\">\n<h2>Edits</h2>\n");
    if r.edits.is_empty() {
        out.push_str("<p class=\"muted\">The model made no edits.</p>\n");
    } else {
        out.push_str(
            "<p class=\"muted\">Each edit as the model asked for it: its <code>old_text</code> → \
             <code>new_text</code> (a new file: all added). The lines are those of the edit, \
             not of the whole file.</p>\n",
        );
    }
    for (i, edit) in r.edits.iter().enumerate() {
        edit_block(out, i, edit);
    }
    out.push_str("</section>\n");
}

fn edit_block(out: &mut String, i: usize, edit: &Edit) {
    let outcome = edit.outcome.as_str();
    let (block, badge) = match edit.outcome {
        EditOutcome::Applied => ("applied", "c-ok"),
        EditOutcome::Unknown | EditOutcome::NoResult | EditOutcome::NoAnswer => {
            ("not-applied", "c-warn")
        }
        EditOutcome::Rejected | EditOutcome::Denied | EditOutcome::Failed => {
            ("not-applied", "c-err")
        }
    };
    let _ = writeln!(
        out,
        "<div class=\"edit {block}\" id=\"edit-{n}\">\n<h3><code>{path}</code> \
         <span class=\"badge {badge}\">{outcome}</span> <span class=\"meta\">{tool}{every}{turn} · {call}{review}</span></h3>",
        n = i + 1,
        path = esc(&edit.path),
        tool = esc(&edit.tool),
        every = if edit.replace_all {
            " (every occurrence)"
        } else {
            ""
        },
        turn = edit
            .turn
            .map(|t| format!(" · turn {t}"))
            .unwrap_or_default(),
        call = esc(&edit.call_id),
        review = edit
            .review_ms
            .map(|ms| format!(" · {}", review_label(ms)))
            .unwrap_or_default()
    );
    out.push_str("<pre class=\"diff\">");
    for (n, line) in edit.diff_lines().iter().enumerate() {
        let class = if n < 2 {
            "hdr"
        } else {
            match line.chars().next() {
                Some('+') => "add",
                Some('-') => "del",
                _ => "ctx",
            }
        };
        let _ = write!(out, "<span class=\"{class}\">{}</span>", esc(line));
    }
    out.push_str("</pre>\n");
    if let Some(result) = &edit.result {
        // Rein's sentence about the edit, which quotes names as code.
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", prose(result));
    }
    out.push_str("</div>\n");
}

fn verification(out: &mut String, r: &Report, workspace: Option<&Path>) {
    out.push_str("<section id=\"verification\">\n<h2>Verification</h2>\n");
    if r.checks.is_empty() {
        out.push_str("<p class=\"muted\">The verifier did not run.</p>\n");
    }
    for (i, check) in r.checks.iter().enumerate() {
        check_block(out, i, check, workspace);
    }
    out.push_str("</section>\n");
}

fn check_block(out: &mut String, i: usize, c: &Check, workspace: Option<&Path>) {
    let (css, verdict) = if c.passed {
        ("c-ok", "✓ verified")
    } else {
        ("c-err", "✗ not verified")
    };
    let _ = writeln!(
        out,
        "<div class=\"check\" id=\"check-{n}\">\n<h3><span class=\"{css}\">{verdict}</span> \
         <span class=\"meta\">{offset}{turn} · {checks}</span></h3>\n<p>{detail}</p>",
        n = i + 1,
        offset = esc(&fmt_offset(c.offset_ms)),
        turn = c.turn.map(|t| format!(" · turn {t}")).unwrap_or_default(),
        checks = count_checks(c.evidence.len()),
        detail = prose(&c.detail)
    );
    if c.evidence.is_empty() {
        out.push_str("<p class=\"muted\">No evidence recorded.</p>\n");
    }
    for ev in &c.evidence {
        let exit = match ev.exit_code {
            Some(0) => "<span class=\"c-ok\">0</span>".to_owned(),
            Some(code) => format!("<span class=\"c-err\">{code}</span>"),
            None => "<span class=\"c-err\">none (killed or not run)</span>".to_owned(),
        };
        let _ = writeln!(
            out,
            "<table class=\"kv\">\n<tr><th>check</th><td><strong>{}</strong></td></tr>\n\
             <tr><th>command</th><td><code>{}</code></td></tr>\n<tr><th>exit code</th><td>{exit}</td></tr>\n\
             <tr><th>duration</th><td>{}</td></tr>\n<tr><th>log</th><td>{}</td></tr>",
            esc(&ev.check),
            esc(&ev.command),
            ev.duration_ms.map(fmt_ms).unwrap_or_else(|| "?".into()),
            path_link(&ev.log_path, workspace)
        );
        if !ev.files.is_empty() {
            let files: Vec<String> = ev
                .files
                .iter()
                .map(|(path, hash)| {
                    format!("<code>{}</code> <code>{}</code>", esc(path), esc(hash))
                })
                .collect();
            let _ = writeln!(
                out,
                "<tr><th>files</th><td>{}</td></tr>",
                files.join("<br>")
            );
        }
        if !ev.failures.is_empty() {
            let failures: Vec<String> = ev
                .failures
                .iter()
                .map(|f| format!("<code>{}</code>", esc(f)))
                .collect();
            let _ = writeln!(
                out,
                "<tr><th>failing</th><td class=\"c-err\">{}</td></tr>",
                failures.join("<br>")
            );
        }
        out.push_str("</table>\n");
        if let Some(tail) = super::output_tail::output_tail(&ev.log_path, workspace) {
            let _ = writeln!(
                out,
                "<details class=\"output\" open><summary>What it printed (the last lines)</summary>\
                 <pre class=\"log\">{}</pre></details>",
                esc(&tail)
            );
        }
    }
    out.push_str("</div>\n");
}

/// The colour of a state's badge.
fn state_color(state: &str) -> &'static str {
    use rein_core::task::TaskState;
    match state.parse() {
        Ok(TaskState::Succeeded) => "c-ok",
        Ok(TaskState::Failed | TaskState::Cancelled | TaskState::BudgetExhausted) => "c-err",
        _ => "c-warn",
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_is_escaped() {
        assert_eq!(
            esc("<script>alert('x' & \"y\")</script>\u{1b}[31m\r\u{202e}"),
            "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;\\x1b[31m\\r\\u{202e}"
        );
    }

    fn report(lines: &[String]) -> Report {
        let text = lines.join("\n") + "\n";
        let trace = super::super::read::parse(text.as_bytes(), &|s: &str| s.to_owned());
        super::super::model::build("t-1", "t-1.jsonl", &trace, None)
    }

    fn verification(passed: bool, checks: &[&str]) -> String {
        let evidence: Vec<String> = checks
            .iter()
            .map(|c| format!(r#"{{"check":"{c}","command":"python3 -m unittest","exit_code":0,"duration_ms":5,"files":[],"log_path":".rein/artifacts/t-1/{c}.log","failures":[]}}"#))
            .collect();
        format!(
            r#"{{"kind":"verification","ts":"2026-11-30T07:12:01.234Z","turn":2,"passed":{passed},"detail":"fixed: `test_total` passes","evidence":[{}]}}"#,
            evidence.join(",")
        )
    }

    /// Issue 16: "✓ verified (1 check)" stood above two listed checks (it
    /// counted the verifier's runs). The count is the checks listed.
    #[test]
    fn verified_1_check_above_two_listed_checks() {
        let one_run = report(&[verification(true, &["test_passes", "no_regressions"])]);
        let html = render(&one_run, None);
        assert!(
            html.contains("<span class=\"c-ok\">✓ verified</span> (2 checks)</td>"),
            "{html}"
        );
        assert!(html.contains("· 2 checks</span></h3>"), "{html}");
        assert_eq!(html.matches("<tr><th>check</th>").count(), 2);

        let two_runs = report(&[
            verification(false, &["test_passes"]),
            verification(true, &["test_passes", "no_regressions"]),
        ]);
        let html = render(&two_runs, None);
        assert!(
            html.contains(
                "✓ verified</span> (2 checks) <span class=\"meta\">· after 1 earlier verification</span>"
            ),
            "{html}"
        );
        assert!(html.contains("· 1 check</span></h3>"), "{html}");
    }

    #[test]
    fn log_paths_link_to_their_files() {
        let root = Path::new("/home/dev/my shop");
        assert_eq!(
            file_url(".rein/artifacts/t-1/verify-1.log", Some(root)).as_deref(),
            Some("file:///home/dev/my%20shop/.rein/artifacts/t-1/verify-1.log")
        );
        assert_eq!(
            file_url("./run.log", Some(root)).as_deref(),
            Some("file:///home/dev/my%20shop/run.log")
        );
        assert_eq!(
            file_url("/tmp/ä #1?.log", None).as_deref(),
            Some("file:///tmp/%C3%A4%20%231%3F.log")
        );
        // A relative path needs the workspace to be found.
        assert_eq!(file_url("run.log", None), None);
        let html = render(&report(&[verification(true, &["test_passes"])]), Some(root));
        assert!(
            html.contains(
                "<td><a href=\"file:///home/dev/my%20shop/.rein/artifacts/t-1/test_passes.log\">\
                 <code>.rein/artifacts/t-1/test_passes.log</code></a></td>"
            ),
            "{html}"
        );
    }

    /// A log path comes from the trace, which anyone may have written: it
    /// never becomes a link to anything but a file, and never markup.
    #[test]
    fn a_hostile_log_path_is_text_or_a_file_link_never_markup() {
        let root = Some(Path::new("/ws"));
        for refused in [
            "javascript:alert(document.cookie)",
            "JavaScript:alert(1)//x.log",
            "data:text/html,<script>alert(1)</script>",
            "https://evil.example/x.log",
            "file:///etc/passwd",
            "vscode://command/x",
            "//evil.example/share/x.log",
            "../../../etc/passwd",
            ".rein/../../x.log",
            "/tmp/x\u{0}.log",
            "/tmp/x\n.log",
            "",
        ] {
            assert_eq!(file_url(refused, root), None, "{refused:?}");
            let cell = path_link(refused, root);
            assert!(!cell.contains("<a "), "{refused:?}: {cell}");
            assert!(!cell.contains("<script"), "{refused:?}: {cell}");
        }
        // Quotes, angle brackets and ampersands cannot close the attribute
        // or open a tag: the URL is percent-encoded, the text escaped.
        let hostile = "/tmp/\"><script>alert('x')</script>&amp;.log";
        assert_eq!(
            path_link(hostile, root),
            "<a href=\"file:///tmp/%22%3E%3Cscript%3Ealert%28%27x%27%29%3C/script%3E%26amp%3B.log\">\
             <code>/tmp/&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;.log</code></a>"
        );
        // In the trace's JSON: `javascript:alert(1)"><img …>`.
        let line = verification(true, &["x"]).replace(
            ".rein/artifacts/t-1/x.log",
            "javascript:alert(1)\\\"><img src=x onerror=alert(1)>",
        );
        let html = render(&report(&[line]), root);
        assert!(
            !html.contains("javascript:alert(1)\"") && !html.contains("<img"),
            "{html}"
        );
        assert!(
            html.contains(
                "<td><code>javascript:alert(1)&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</code></td>"
            ),
            "{html}"
        );
    }

    #[test]
    fn prose_shows_code_spans_as_code() {
        let html = render(&report(&[verification(true, &["x"])]), None);
        assert!(
            html.contains("<p>fixed: <code>test_total</code> passes</p>"),
            "{html}"
        );
        assert!(!html.contains("`test_total`"), "{html}");
    }

    #[test]
    fn steps_are_round() {
        assert_eq!(nice_step(720.0), 1000.0);
        assert_eq!(nice_step(130.0), 200.0);
        assert_eq!(nice_step(0.0031), 0.005);
    }
}
