//! The timeline on the terminal: a header that says how the task went,
//! then one line per meaningful event, grouped by turn. Readable without
//! colour; coloured (ANSI) only when asked. Every piece of the trace is
//! one line made inert ([`inert::line`]) before Rein colours it: the
//! trace holds the model's words and commands, which a terminal must show,
//! not obey.

use rein_core::task::TaskState;
use std::fmt::Write as _;

use rein_core::inert;

use super::markdown;
use super::model::{Class, Entry, Report, fmt_count, fmt_ms, fmt_offset, fmt_usd};

/// How to render.
#[derive(Clone, Debug, Default)]
pub struct Style {
    pub color: bool,
    pub verbose: bool,
    /// The workspace whose `.rein/artifacts/` hold the checks' logs: with
    /// `verbose`, each check shows what it printed (its last lines).
    pub workspace: Option<std::path::PathBuf>,
}

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const BLUE: &str = "\x1b[34m";
const MAGENTA: &str = "\x1b[35m";
const CYAN: &str = "\x1b[36m";

/// The width of the offset column.
const OFFSET: usize = 10;
/// The width of the label column.
const LABEL: usize = 8;

struct Painter {
    color: bool,
}

impl Painter {
    /// `text` on one line, escaped, then coloured.
    fn paint(&self, code: &str, text: &str) -> String {
        let text = inert::line(text);
        if self.color && !code.is_empty() {
            format!("{code}{text}{RESET}")
        } else {
            text.into_owned()
        }
    }

    /// `text` on one line, escaped, not coloured.
    fn plain(&self, text: &str) -> String {
        self.paint("", text)
    }
}

fn color_of(class: Class) -> &'static str {
    match class {
        Class::State => BOLD,
        Class::Model => CYAN,
        Class::Retry | Class::Guard => YELLOW,
        Class::Text => "",
        Class::Call => BLUE,
        Class::Ok | Class::Verified | Class::Approval => GREEN,
        Class::Error | Class::Denied | Class::NotVerified => RED,
        Class::Context => MAGENTA,
        Class::Question | Class::Answer => YELLOW,
        Class::Activity | Class::Permission | Class::Other => DIM,
    }
}

/// The whole timeline, ending with a newline.
pub fn render(report: &Report, style: Style) -> String {
    let p = Painter { color: style.color };
    let mut out = String::new();
    header(&mut out, report, &p);
    for group in &report.groups {
        let entries: Vec<&Entry> = group
            .entries
            .iter()
            .filter(|e| style.verbose || !e.verbose_only)
            .collect();
        if entries.is_empty() {
            continue;
        }
        out.push('\n');
        let title = match group.turn {
            Some(turn) => format!("turn {turn}"),
            None => "start".to_owned(),
        };
        let _ = writeln!(out, "{}", p.paint(BOLD, &title));
        for entry in entries {
            line(&mut out, report, entry, &style, &p);
        }
    }
    out
}

fn header(out: &mut String, r: &Report, p: &Painter) {
    let _ = writeln!(
        out,
        "{}",
        p.paint(BOLD, &format!("task      {}", r.task_id))
    );
    let row = |out: &mut String, name: &str, value: &str| {
        let _ = writeln!(out, "{name:<10}{}", p.plain(value));
    };
    // Sentences quote names in Markdown backticks: a terminal shows the
    // names without them.
    row(
        out,
        "goal",
        &r.goal
            .as_deref()
            .map_or_else(|| "(not recorded in the trace)".to_owned(), markdown::strip),
    );
    let state = match (&r.state, &r.reason) {
        (Some(s), Some(reason)) => format!("{s}: {}", markdown::strip(reason)),
        (Some(s), None) => s.clone(),
        (None, _) => "(no state in the trace)".to_owned(),
    };
    let color = match r.state.as_deref().and_then(|s| s.parse().ok()) {
        Some(TaskState::Succeeded) => GREEN,
        Some(TaskState::Failed | TaskState::Cancelled | TaskState::BudgetExhausted) => RED,
        _ => YELLOW,
    };
    let _ = writeln!(out, "{:<10}{}", "state", p.paint(color, &state));
    let turns = match r.max_turns {
        Some(max) => format!("{} of {max}", r.turns),
        None => r.turns.to_string(),
    };
    row(out, "turns", &turns);
    row(out, "tokens", &tokens_line(r));
    row(out, "cost", &cost_line(r));
    if let Some(totals) = &r.status_totals {
        row(
            out,
            "counted",
            &format!(
                "{} in · {} out · {} (the task's own count; the calls above differ)",
                fmt_count(totals.input),
                fmt_count(totals.output),
                fmt_usd(totals.cost_usd)
            ),
        );
    }
    let mut when = match r.duration_ms {
        Some(ms) => fmt_ms(ms),
        None => "?".to_owned(),
    };
    if let Some(start) = &r.start_ts {
        let _ = write!(when, " · started {start}");
    }
    row(out, "duration", &when);
    row(
        out,
        "trace",
        &format!(
            "{} · {} event{}",
            r.source,
            r.events,
            if r.events == 1 { "" } else { "s" }
        ),
    );
    for note in &r.notes {
        let _ = writeln!(out, "{}", p.paint(YELLOW, &format!("note      {note}")));
    }
}

/// `13.1k in (2.0k cached) · 177 out`.
pub fn tokens_line(r: &Report) -> String {
    let t = &r.tokens;
    let mut s = format!("{} in", fmt_count(t.total_input()));
    if t.cache_read > 0 || t.cache_write > 0 {
        let _ = write!(
            s,
            " ({} cached, {} written to the cache)",
            fmt_count(t.cache_read),
            fmt_count(t.cache_write)
        );
    }
    let _ = write!(
        s,
        " · {} out · {} model call{}",
        fmt_count(t.output),
        r.model_calls,
        if r.model_calls == 1 { "" } else { "s" }
    );
    s
}

/// `$0.0412`, with the calls that had no price.
pub fn cost_line(r: &Report) -> String {
    if r.model_calls > 0 && r.unpriced_calls == r.model_calls {
        return "not known: the model has no price in Rein's price table".to_owned();
    }
    let mut s = fmt_usd(r.cost_usd);
    if r.unpriced_calls > 0 {
        let _ = write!(
            s,
            " ({} of {} model calls unpriced, not counted)",
            r.unpriced_calls, r.model_calls
        );
    }
    s
}

fn line(out: &mut String, r: &Report, e: &Entry, style: &Style, p: &Painter) {
    let offset = fmt_offset(e.offset_ms);
    let label = if e.indent {
        format!("  {}", e.label)
    } else {
        e.label.clone()
    };
    let color = color_of(e.class);
    let text = if e.class.is_prose() {
        markdown::strip(&e.text)
    } else {
        e.text.clone()
    };
    let _ = writeln!(
        out,
        "{}  {}  {}",
        p.paint(DIM, &format!("{offset:>OFFSET$}")),
        p.paint(color, &format!("{label:<LABEL$}")),
        p.paint(if e.class == Class::Text { "" } else { color }, &text)
    );
    let pad = " ".repeat(OFFSET + 2 + LABEL + 2);
    if let Some(check) = e.check.and_then(|i| r.checks.get(i)) {
        for ev in &check.evidence {
            let _ = writeln!(out, "{pad}{}", p.plain(&ev.check));
            let exit = ev
                .exit_code
                .map_or_else(|| "none (killed or not run)".to_owned(), |c| c.to_string());
            let duration = ev.duration_ms.map(fmt_ms).unwrap_or_default();
            let _ = writeln!(
                out,
                "{pad}  $ {} · exit {exit} · {duration}",
                p.plain(&ev.command)
            );
            if !ev.log_path.is_empty() {
                let _ = writeln!(out, "{pad}  log   {}", p.plain(&ev.log_path));
            }
            if !ev.sandbox.is_empty() {
                let _ = writeln!(out, "{pad}  sandbox {}", p.plain(&ev.sandbox));
            }
            if !ev.files.is_empty() {
                let files: Vec<String> = ev
                    .files
                    .iter()
                    .map(|(path, hash)| format!("{path} #{}", short_hash(hash)))
                    .collect();
                let _ = writeln!(out, "{pad}  files {}", p.plain(&files.join(", ")));
            }
            if !ev.failures.is_empty() {
                let _ = writeln!(out, "{pad}  failing {}", p.plain(&ev.failures.join(", ")));
            }
            if style.verbose
                && let Some(tail) =
                    super::output_tail::output_tail(&ev.log_path, style.workspace.as_deref())
            {
                for l in tail.lines() {
                    let _ = writeln!(out, "{pad}  {}", p.paint(DIM, &format!("│ {l}")));
                }
            }
        }
    }
    if !style.verbose {
        return;
    }
    if let Some(full) = &e.full_text {
        for l in full.lines() {
            let _ = writeln!(out, "{pad}{}", p.paint(DIM, &format!("│ {l}")));
        }
    }
    if let Some(edit) = e.edit.and_then(|i| r.edits.get(i)) {
        for l in edit.diff_lines() {
            let color = match l.chars().next() {
                Some('+') => GREEN,
                Some('-') => RED,
                _ => "",
            };
            let _ = writeln!(out, "{pad}{}", p.paint(color, &l));
        }
    } else if let Some(args) = &e.args {
        let _ = writeln!(out, "{pad}{}", p.paint(DIM, &args.to_string()));
    }
}

/// The first 8 hex digits of a content hash.
pub fn short_hash(hash: &str) -> &str {
    hash.get(..8).unwrap_or(hash)
}
