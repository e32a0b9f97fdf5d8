//! Numbers into words: percentiles, durations, sizes, and the machine a
//! run happened on (every figure in BENCHMARKS.md names it).

use std::fmt::Write as _;
use std::time::Duration;

/// The spread of a set of samples (nearest-rank percentiles).
#[derive(Clone, Copy, Debug, Default)]
pub struct Spread {
    pub n: usize,
    pub min: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(samples: &[f64]) -> Self {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        let Some((&min, &max)) = sorted.first().zip(sorted.last()) else {
            return Self::default();
        };
        Self {
            n: sorted.len(),
            min,
            p50: percentile(&sorted, 50.0),
            p99: percentile(&sorted, 99.0),
            max,
        }
    }

    pub fn of_durations(samples: &[Duration]) -> Self {
        Self::of(
            &samples
                .iter()
                .map(Duration::as_secs_f64)
                .collect::<Vec<_>>(),
        )
    }

    /// `p50 … p99 (min–max, n)` with durations in seconds.
    pub fn time(&self) -> String {
        format!(
            "p50 {} · p99 {} (min {}, max {}, n={})",
            secs(self.p50),
            secs(self.p99),
            secs(self.min),
            secs(self.max),
            self.n
        )
    }
}

/// Nearest-rank percentile of sorted samples.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The median of a few values (runs).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// A duration in seconds, in the unit that reads best.
pub fn secs(s: f64) -> String {
    if !s.is_finite() {
        "n/a".into()
    } else if s < 1e-3 {
        format!("{:.0} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// A size in bytes, binary units.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// `min–max` of a few values formatted by `f`.
pub fn range(values: &[f64], f: impl Fn(f64) -> String) -> String {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{}–{}", f(min), f(max))
}

/// The machine, as BENCHMARKS.md reports it: cores, CPU, memory, kernel,
/// date and the load when the run started (the machine is shared).
pub fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mhz = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("cpu MHz")
                .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .map(|m| format!(" @ {m} MHz"))
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    let mut out = String::new();
    let _ = write!(
        out,
        "{cores} cores ({cpu}{mhz}), {} RAM, Linux {}, {} UTC, load average {}",
        bytes(mem_kb * 1024),
        kernel.trim(),
        now_utc(),
        load.join(" ")
    );
    out
}

/// The current UTC time as `YYYY-MM-DD HH:MM`.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        rem / 3600,
        (rem % 3600) / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Spread::of(&samples);
        assert_eq!(
            (s.min, s.p50, s.p99, s.max, s.n),
            (1.0, 50.0, 99.0, 100.0, 100)
        );
        assert_eq!(Spread::of(&[3.0]).p99, 3.0);
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), 2.5);
    }

    #[test]
    fn units() {
        assert_eq!(secs(0.000_012), "12 µs");
        assert_eq!(secs(0.0125), "12.50 ms");
        assert_eq!(bytes(1536), "1.5 KiB");
    }
}
