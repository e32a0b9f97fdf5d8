//! What a key looks like when nobody told us its value: the prefixes of
//! the common providers' tokens, each with the rule its body follows, and
//! PEM private-key blocks.

/// A kind of key recognised by its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    /// `sk-…`, `sk-proj-…`, `sk-ant-api03-…`, and the `sk-abc***xyz`
    /// fragments OpenAI echoes back in its errors.
    OpenAi,
    /// `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` + 36 letters and digits.
    GitHub,
    /// `github_pat_` + letters, digits and `_`.
    GitHubPat,
    /// `AKIA` / `ASIA` + exactly 16 capitals and digits.
    Aws,
    /// `xoxa-`, `xoxb-`, `xoxp-`, `xoxr-`, `xoxs-`.
    Slack,
    /// `AIza` + 35 characters.
    Google,
    /// `glpat-` + 20 characters or more.
    GitLab,
    /// `-----BEGIN … PRIVATE KEY-----`: its body is redacted up to the
    /// matching END line.
    PemBegin,
}

/// Every prefix the matcher looks for, and the shape it starts.
pub(super) const PREFIXES: &[(&str, Shape)] = &[
    ("sk-", Shape::OpenAi),
    ("ghp_", Shape::GitHub),
    ("gho_", Shape::GitHub),
    ("ghu_", Shape::GitHub),
    ("ghs_", Shape::GitHub),
    ("ghr_", Shape::GitHub),
    ("github_pat_", Shape::GitHubPat),
    ("AKIA", Shape::Aws),
    ("ASIA", Shape::Aws),
    ("xoxa-", Shape::Slack),
    ("xoxb-", Shape::Slack),
    ("xoxp-", Shape::Slack),
    ("xoxr-", Shape::Slack),
    ("xoxs-", Shape::Slack),
    ("AIza", Shape::Google),
    ("glpat-", Shape::GitLab),
    ("-----BEGIN ", Shape::PemBegin),
];

/// The longest a PEM block may run without its END line: past this, the
/// BEGIN line was only a mention (a test, a doc) and the text goes back to
/// normal. A 16384-bit RSA key is about 12 KiB.
pub(super) const PEM_MAX_BYTES: usize = 16 * 1024;

/// A body run at least this long inside a PEM block is redacted; shorter
/// ones are line numbers and such.
const PEM_RUN: usize = 8;

impl Shape {
    /// Where the key whose prefix is `hay[start..body]` ends, if what
    /// follows has the shape's body; `None` if this is not a key.
    pub(super) fn token_end(self, hay: &[u8], start: usize, body: usize) -> Option<usize> {
        // A prefix inside a word ("task-list", "disk-usage") starts nothing.
        if start > 0 && hay[start - 1].is_ascii_alphanumeric() {
            return None;
        }
        let run = |ok: fn(&u8) -> bool| body + hay[body..].iter().take_while(|b| ok(b)).count();
        match self {
            Shape::OpenAi => {
                let end = run(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'*'));
                let token = &hay[body..end];
                // SpinKit's `sk-fading-circle` has no digit; a random key
                // of 16 characters almost surely has one.
                let masked = token.contains(&b'*') && token.len() >= 8;
                let random = token.len() >= 16 && token.iter().any(u8::is_ascii_digit);
                (masked || random).then_some(end)
            }
            Shape::GitHub => {
                let end = run(u8::is_ascii_alphanumeric);
                (end - body >= 30).then_some(end)
            }
            Shape::GitHubPat => {
                let end = run(|b| b.is_ascii_alphanumeric() || *b == b'_');
                (end - body >= 22).then_some(end)
            }
            Shape::Aws => {
                let end = run(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
                let whole = !hay.get(end).is_some_and(u8::is_ascii_alphanumeric);
                (end - body == 16 && whole).then_some(end)
            }
            Shape::Slack => {
                let end = run(|b| b.is_ascii_alphanumeric() || *b == b'-');
                (end - body >= 10).then_some(end)
            }
            Shape::Google => {
                let end = run(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'));
                (end - body >= 35).then_some(end)
            }
            Shape::GitLab => {
                let end = run(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'));
                (end - body >= 20).then_some(end)
            }
            Shape::PemBegin => None,
        }
    }
}

/// After `-----BEGIN ` or `-----END ` at `from`: the end of the line's
/// `… PRIVATE KEY-----` (or `… PRIVATE KEY BLOCK-----`, PGP's), if it is a
/// private key's.
pub(super) fn pem_label_end(hay: &[u8], from: usize) -> Option<usize> {
    let rest = &hay[from..];
    let n = rest
        .iter()
        .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b' ')
        .count();
    let label = &rest[..n];
    let private = label.ends_with(b"PRIVATE KEY") || label.ends_with(b"PRIVATE KEY BLOCK");
    (private && rest[n..].starts_with(b"-----")).then_some(from + n + 5)
}

/// Inside a PEM block from `pos`: copies the text to `out` with every
/// base64 run of [`PEM_RUN`] characters or more replaced by `marker`, up to
/// and including the END line, or until `budget` bytes are spent, or until
/// `stop` (a run that crosses it is taken whole). Returns where it stopped
/// and the budget left (`None`: the block is over).
pub(super) fn pem_body(
    hay: &[u8],
    mut pos: usize,
    stop: usize,
    budget: usize,
    marker: &[u8],
    out: &mut Vec<u8>,
) -> (usize, Option<usize>) {
    let start = pos;
    while pos < stop {
        if pos - start >= budget {
            return (pos, None);
        }
        let rest = &hay[pos..];
        if rest.starts_with(b"-----END ")
            && let Some(end) = pem_label_end(hay, pos + 9)
        {
            out.extend_from_slice(&hay[pos..end]);
            return (end, None);
        }
        // Already redacted (a second pass must change nothing).
        if rest.starts_with(marker) {
            out.extend_from_slice(marker);
            pos += marker.len();
            continue;
        }
        // `\n` in a JSON string: the `n` is not part of the key.
        if rest[0] == b'\\' && rest.len() > 1 {
            out.extend_from_slice(&rest[..2]);
            pos += 2;
            continue;
        }
        let run = rest.iter().take_while(|b| is_base64(b)).count();
        if run >= PEM_RUN {
            out.extend_from_slice(marker);
        } else {
            out.extend_from_slice(&rest[..run.max(1)]);
        }
        pos += run.max(1);
    }
    (pos, Some(budget.saturating_sub(pos - start)))
}

fn is_base64(b: &u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}
