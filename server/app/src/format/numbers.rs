//! Numbers as every front end shows them: token counts, durations,
//! costs.

/// `950 tok`, `3.1k tok`, `1.2M tok`.
pub fn fmt_tokens(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M tok", n as f64 / 1_000_000.0)
    } else if n >= 1_000 {
        format!("{:.1}k tok", n as f64 / 1_000.0)
    } else {
        format!("{n} tok")
    }
}

/// `0.42s`, `12.3s`, `2m 05s`.
pub fn fmt_duration_ms(ms: u64) -> String {
    if ms < 10_000 {
        format!("{:.2}s", ms as f64 / 1000.0)
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m {:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

/// `$0.03`; `cost unknown` when no call was priced, `≥ $0.03` when some
/// were not (never `$0.00` for a cost Rein does not know).
pub fn cost(usd: f64, unpriced_calls: u32) -> String {
    known_cost(usd, unpriced_calls, 2).unwrap_or_else(|| "cost unknown".into())
}

/// [`cost`] to `decimals` places, `None` where it says "cost unknown":
/// for a caller with words of its own for that.
pub fn known_cost(usd: f64, unpriced_calls: u32, decimals: usize) -> Option<String> {
    match (unpriced_calls, usd > 0.0) {
        (0, _) => Some(format!("${usd:.decimals$}")),
        (_, false) => None,
        (_, true) => Some(format!("≥ ${usd:.decimals$}")),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(fmt_tokens(950), "950 tok");
        assert_eq!(fmt_tokens(12_400), "12.4k tok");
        assert_eq!(fmt_tokens(2_500_000), "2.5M tok");
        assert_eq!(fmt_duration_ms(420), "0.42s");
        assert_eq!(fmt_duration_ms(12_340), "12.3s");
        assert_eq!(fmt_duration_ms(125_000), "2m 05s");
    }
}
