//! Inline code spans in the prose of a trace: Rein's reasons and the
//! model's words quote names in Markdown backticks ("fixed:
//! `TestCart.test_total` passes"). The HTML report shows them as code, the
//! terminal without the backticks; neither shows raw Markdown.
//!
//! Only code spans, as CommonMark reads them: a run of backticks opens
//! one, the next run of exactly as many closes it; a run with no match is
//! literal text, kept as it is. Nothing else is Markdown here: a trace is
//! untrusted, and everything but the span markers is text.

/// A piece of a line: text, or the content of a code span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span<'a> {
    Text(&'a str),
    Code(&'a str),
}

/// `text` cut into text and code spans, in order.
pub fn spans(text: &str) -> Vec<Span<'_>> {
    let mut out = Vec::new();
    // Where the current text piece starts, and where to look from.
    let (mut start, mut at) = (0, 0);
    while let Some(open) = text[at..].find('`').map(|i| at + i) {
        let ticks = run(&text[open..]);
        let body = open + ticks;
        match closing(&text[body..], ticks) {
            Some(close) => {
                if start < open {
                    out.push(Span::Text(&text[start..open]));
                }
                out.push(Span::Code(trim_one_space(&text[body..body + close])));
                start = body + close + ticks;
                at = start;
            }
            // Unmatched: literal, and so is the whole run.
            None => at = body,
        }
    }
    if start < text.len() {
        out.push(Span::Text(&text[start..]));
    }
    out
}

/// The HTML of `text`: code spans as `<code>`, everything escaped by
/// `esc` (the report's one escaper).
pub fn to_html(text: &str, esc: impl Fn(&str) -> String) -> String {
    spans(text)
        .into_iter()
        .map(|span| match span {
            Span::Text(t) => esc(t),
            Span::Code(c) => format!("<code>{}</code>", esc(c)),
        })
        .collect()
}

/// `text` without the backticks of its code spans (unmatched ones stay).
pub fn strip(text: &str) -> String {
    spans(text)
        .into_iter()
        .map(|span| match span {
            Span::Text(t) | Span::Code(t) => t,
        })
        .collect()
}

/// The length of the backtick run `text` starts with.
fn run(text: &str) -> usize {
    text.bytes().take_while(|b| *b == b'`').count()
}

/// Where in `text` the next run of exactly `ticks` backticks starts.
fn closing(text: &str, ticks: usize) -> Option<usize> {
    let mut at = 0;
    while let Some(i) = text[at..].find('`').map(|i| at + i) {
        let n = run(&text[i..]);
        if n == ticks {
            return Some(i);
        }
        at = i + n;
    }
    None
}

/// CommonMark: one space is dropped from each end of a span that has one
/// at both and is not all spaces (so `` ` `` `` can quote a backtick).
fn trim_one_space(code: &str) -> &str {
    match code.strip_prefix(' ').and_then(|c| c.strip_suffix(' ')) {
        Some(inner) if !code.bytes().all(|b| b == b' ') => inner,
        _ => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(text: &str) -> String {
        super::super::html::esc(text)
    }

    #[test]
    fn code_spans_become_code_and_lose_their_backticks() {
        // (input, HTML, stripped)
        let cases: [(&str, &str, &str); 11] = [
            (
                "fixed: `TestCart.test_total` passes",
                "fixed: <code>TestCart.test_total</code> passes",
                "fixed: TestCart.test_total passes",
            ),
            ("no code", "no code", "no code"),
            (
                "`a` and `b`",
                "<code>a</code> and <code>b</code>",
                "a and b",
            ),
            // Unmatched backticks are literal text.
            ("a ` b", "a ` b", "a ` b"),
            ("`a` then `", "<code>a</code> then `", "a then `"),
            ("``", "``", "``"),
            // A longer run closes only with the same length, and may hold
            // a shorter one.
            ("``a`b``", "<code>a`b</code>", "a`b"),
            ("``a` b", "``a` b", "``a` b"),
            ("`a``", "`a``", "`a``"),
            // One space each side is dropped, so a backtick can be quoted.
            ("`` ` ``", "<code>`</code>", "`"),
            ("`  `", "<code>  </code>", "  "),
        ];
        for (input, html, stripped) in cases {
            assert_eq!(to_html(input, esc), html, "{input:?}");
            assert_eq!(strip(input), stripped, "{input:?}");
        }
    }

    #[test]
    fn markup_inside_and_around_spans_is_escaped() {
        assert_eq!(
            to_html("<b>`<script>alert(1)</script>`</b> & `\"'`", esc),
            "&lt;b&gt;<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>&lt;/b&gt; &amp; \
             <code>&quot;&#39;</code>"
        );
        // A span cannot smuggle a control character past the escaper.
        assert_eq!(to_html("`\u{1b}[31m`", esc), "<code>\\x1b[31m</code>");
    }

    #[test]
    fn any_text_splits_back_into_itself_without_panicking() {
        for text in ["", "`", "```", "é`ü`ß", "`é", "a``b`c```d", "` `` `"] {
            assert!(strip(text).len() <= text.len(), "{text:?}");
            let _ = to_html(text, esc);
        }
        assert_eq!(
            spans("é`ü`ß"),
            [Span::Text("é"), Span::Code("ü"), Span::Text("ß")]
        );
    }
}
