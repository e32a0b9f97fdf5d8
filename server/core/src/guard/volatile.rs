//! What changes in a command's output on every run although nothing else
//! did: timings, clock times, temporary paths, object addresses, thread
//! ids, the number of Rein's own log (`.rein/artifacts/<task>/run-7.log`). Two runs that differ only in these are the same result to the loop
//! guard. Each pattern is narrow on purpose: a result that differs in
//! anything else (a count, a line number, a value) stays different.

/// `line` with each volatile part replaced by a placeholder.
pub fn normalize(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while let Some(c) = line[i..].chars().next() {
        let starts_word = line[..i]
            .chars()
            .next_back()
            .is_none_or(|p| !(p.is_alphanumeric() || p == '_' || p == '.'));
        if starts_word && let Some((len, mark)) = volatile_at(&line[..i], &line[i..]) {
            out.push_str(mark);
            i += len;
            continue;
        }
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// The volatile part `rest` starts with, if any: its length and its
/// placeholder. `before` is the text before it, for context.
fn volatile_at(before: &str, rest: &str) -> Option<(usize, &'static str)> {
    if let Some(len) = clock(rest) {
        return Some((len, "<time>"));
    }
    if let Some(len) = duration(rest) {
        return Some((len, "<duration>"));
    }
    if let Some(len) = temp_path(rest) {
        return Some((len, "<tmp>"));
    }
    // `<Foo object at 0x7f3a…>`: Python's reprs show where an object lives.
    if before.ends_with("at ")
        && let Some(len) = address(rest)
    {
        return Some((len, "0x…"));
    }
    // Rein numbers each command's log.
    if before.ends_with('/')
        && before.contains(".rein/artifacts/")
        && let Some(len) = run_log(rest)
    {
        return Some((len, "run-<n>.log"));
    }
    // `thread 'main' (12345) panicked at`: Rust names the OS thread.
    if let Some(len) = thread_id(rest) {
        return Some((len, "(<tid>)"));
    }
    None
}

/// The run of ASCII digits `s` starts with: its length.
fn digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// Whether `s` is at a word's end (nothing, or not a letter or digit).
fn ends_word(s: &str) -> bool {
    s.chars()
        .next()
        .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
}

/// `12.5s`, `0.001 s`, `120ms`, `3 seconds`, `2 min`.
fn duration(s: &str) -> Option<usize> {
    let mut len = digits(s);
    if len == 0 {
        return None;
    }
    if s[len..].starts_with('.') {
        let fraction = digits(&s[len + 1..]);
        if fraction > 0 {
            len += 1 + fraction;
        }
    }
    if s[len..].starts_with(' ') {
        len += 1;
    }
    // Longest first where one unit starts another.
    const UNITS: [&str; 13] = [
        "seconds", "second", "secs", "sec", "minutes", "minute", "mins", "min", "ms", "µs", "us",
        "ns", "s",
    ];
    UNITS.iter().find_map(|unit| {
        let end = len + unit.len();
        (s[len..].starts_with(unit) && ends_word(&s[end..])).then_some(end)
    })
}

/// A clock time (`12:00:01`, `9:05:33.123`), a date (`2026-11-30`) or both
/// (`2026-11-30T12:00:01Z`, `2026-11-30 12:00:01+01:00`).
fn clock(s: &str) -> Option<usize> {
    let date = date(s);
    let mut len = date.unwrap_or(0);
    if date.is_some() && (s[len..].starts_with('T') || s[len..].starts_with(' ')) {
        if let Some(time) = time(&s[len + 1..]) {
            len += 1 + time;
        }
    } else if date.is_none() {
        len = time(s)?;
    }
    // A zone: `Z`, `+01:00`, `-0500`.
    if s[len..].starts_with('Z') {
        len += 1;
    } else if s[len..].starts_with(['+', '-']) {
        let zone = &s[len + 1..];
        let hours = digits(zone);
        if hours == 2 && zone[2..].starts_with(':') && digits(&zone[3..]) == 2 {
            len += 6;
        } else if hours == 4 {
            len += 5;
        }
    }
    ends_word(&s[len..]).then_some(len)
}

/// `2026-11-30`.
fn date(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let shape = digits(s) == 4
        && b.get(4) == Some(&b'-')
        && digits(&s[5..]) == 2
        && b.get(7) == Some(&b'-')
        && digits(&s[8..]) == 2;
    shape.then_some(10)
}

/// `12:00:01`, `9:05:33.123`: hours, minutes and seconds (two parts are
/// too often a line and a column).
fn time(s: &str) -> Option<usize> {
    let hours = digits(s);
    if !(1..=2).contains(&hours) {
        return None;
    }
    let mut len = hours;
    for _ in 0..2 {
        if !s[len..].starts_with(':') || digits(&s[len + 1..]) != 2 {
            return None;
        }
        len += 3;
    }
    if s[len..].starts_with('.') {
        let fraction = digits(&s[len + 1..]);
        if fraction > 0 {
            len += 1 + fraction;
        }
    }
    Some(len)
}

/// A path under a temporary directory, up to a separator of the text
/// around it (`:` too, so `/tmp/x.py:12` keeps its line number).
fn temp_path(s: &str) -> Option<usize> {
    const TEMP: [&str; 4] = [
        "/tmp/",
        "/private/tmp/",
        "/var/folders/",
        "/private/var/folders/",
    ];
    TEMP.iter().find(|t| s.starts_with(*t))?;
    Some(
        s.find(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;:".contains(c))
            .unwrap_or(s.len()),
    )
}

/// `0x7f3a2c1d9e80`: eight hex digits or more.
fn address(s: &str) -> Option<usize> {
    let hex = s
        .strip_prefix("0x")?
        .bytes()
        .take_while(u8::is_ascii_hexdigit)
        .count();
    (hex >= 8 && ends_word(&s[2 + hex..])).then_some(2 + hex)
}

/// `run-7.log`.
fn run_log(s: &str) -> Option<usize> {
    let n = digits(s.strip_prefix("run-")?);
    (n > 0 && s[4 + n..].starts_with(".log")).then_some(4 + n + 4)
}

/// `(12345) panicked`.
fn thread_id(s: &str) -> Option<usize> {
    let id = digits(s.strip_prefix('(')?);
    (id > 0 && s[1 + id..].starts_with(") panicked")).then_some(id + 2)
}

#[cfg(test)]
mod tests {
    use super::normalize;

    /// Each line as it comes from runners, and what the guard compares.
    #[test]
    fn volatile_parts_are_replaced() {
        let lines = [
            "Ran 3 tests in 0.001s",
            "==== 1 failed, 4 passed in 0.12s ====",
            "--- FAIL: TestTotal (0.00s)",
            "ok  \tcart\t0.003s",
            "Time:        1.234 s",
            "test result: FAILED. 3 passed; 1 failed; 0 ignored; finished in 0.05s",
            "  ✓ adds (12 ms)",
            "took 3 seconds, then 2 min",
            "2026-11-30T12:00:01.123Z INFO started",
            "[2026-11-30 12:00:01+01:00] done at 9:05:33",
            "E   FileNotFoundError: /tmp/pytest-of-root/pytest-7/test_total0/cart.json:3",
            "AssertionError: <cart.Item object at 0x7f3a2c1d9e80> != None",
            "thread 'tests::total' (28195) panicked at src/lib.rs:10:5:",
            "could not write the command log /w/.rein/artifacts/t-1/run-12.log: disk full",
        ];
        let normalized: Vec<String> = lines.iter().map(|l| normalize(l)).collect();
        expect_test::expect![[r#"
            [
                "Ran 3 tests in <duration>",
                "==== 1 failed, 4 passed in <duration> ====",
                "--- FAIL: TestTotal (<duration>)",
                "ok  \tcart\t<duration>",
                "Time:        <duration>",
                "test result: FAILED. 3 passed; 1 failed; 0 ignored; finished in <duration>",
                "  ✓ adds (<duration>)",
                "took <duration>, then <duration>",
                "<time> INFO started",
                "[<time>] done at <time>",
                "E   FileNotFoundError: <tmp>:3",
                "AssertionError: <cart.Item object at 0x…> != None",
                "thread 'tests::total' (<tid>) panicked at src/lib.rs:10:5:",
                "could not write the command log /w/.rein/artifacts/t-1/run-<n>.log: disk full",
            ]
        "#]]
        .assert_debug_eq(&normalized);
    }

    /// What differs between genuinely different results is left alone.
    #[test]
    fn what_tells_results_apart_is_kept() {
        let lines = [
            "1 failed, 4 passed",
            "Ran 3 tests",
            "AssertionError: 2 != 30",
            "File \"tests/test_cart.py\", line 8, in test_total",
            "src/lib.rs:10:5",
            "at 12:05 the value was 0xdeadbeef",
            "expected 0xdeadbeef, got 0xdeadbeee",
            "version 1.2.3s",
            "3 sessions, 10 secrets, 5m",
            "run-7.log",
            "logs/run-7.log",
            "/home/me/tmp/x.py",
            "x2026-11-30",
            "1000000000 tokens",
            "Item(10s)",
        ];
        for line in lines {
            let kept = if line == "Item(10s)" {
                // A value shaped like a duration is one; the guard also
                // compares exit codes, failing tests and line counts.
                "Item(<duration>)".to_owned()
            } else {
                line.to_owned()
            };
            assert_eq!(normalize(line), kept, "{line}");
        }
    }
}
