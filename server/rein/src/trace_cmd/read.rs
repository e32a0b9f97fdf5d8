//! Reading a trace: one JSON object per line. Nothing in a trace is
//! trusted to be well formed: a line cut short by a crash is skipped with a
//! note, a line that is not an object likewise, and the fields of an event
//! are read leniently (a missing or mistyped field is simply absent).

use std::path::Path;

use serde_json::{Map, Value};

/// The fields every record has; an event's own fields are the rest.
pub const COMMON: [&str; 5] = ["trace_id", "task_id", "step", "ts", "kind"];

/// A trace as read.
#[derive(Debug, Default)]
pub struct Trace {
    pub events: Vec<Event>,
    /// What could not be read, for the reader of the report.
    pub notes: Vec<String>,
}

/// One record of the trace.
#[derive(Clone, Debug)]
pub struct Event {
    pub kind: String,
    /// The timestamp as written.
    pub ts: Option<String>,
    /// The timestamp in unix milliseconds, when it could be read.
    pub ts_ms: Option<i64>,
    /// Every field, the common ones included.
    pub fields: Map<String, Value>,
}

impl Event {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key).filter(|v| !v.is_null())
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    pub fn u64(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(Value::as_u64)
    }

    pub fn f64(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(Value::as_f64)
    }

    pub fn bool(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(Value::as_bool)
    }

    /// The event's own fields: everything but the common ones.
    pub fn own_fields(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.fields
            .iter()
            .filter(|(k, _)| !COMMON.contains(&k.as_str()))
    }
}

/// Reads the trace at `path`; `redact` is applied to every line first.
pub fn read_file(path: &Path, redact: &dyn Fn(&str) -> String) -> std::io::Result<Trace> {
    let bytes = std::fs::read(path)?;
    Ok(parse(&bytes, redact))
}

/// Parses the bytes of a trace. Never fails: what cannot be read becomes a
/// note. Bytes that are not UTF-8 (a crash can cut a character in half)
/// are replaced, not refused.
pub fn parse(bytes: &[u8], redact: &dyn Fn(&str) -> String) -> Trace {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let ends_cleanly = text.ends_with('\n');
    let mut trace = Trace::default();
    for (index, (number, line)) in lines.iter().enumerate() {
        let last = index + 1 == lines.len();
        let line = redact(line);
        match serde_json::from_str::<Value>(&line) {
            Ok(Value::Object(fields)) => trace.events.push(event(fields)),
            Ok(_) => trace.notes.push(format!(
                "line {} is not a JSON object; skipped",
                number + 1
            )),
            Err(_) if last && !ends_cleanly => trace.notes.push(format!(
                "the last line (line {}) is cut short, without a line end: the process probably stopped while writing it; skipped",
                number + 1
            )),
            Err(error) => trace.notes.push(format!(
                "line {} is not valid JSON ({error}); skipped",
                number + 1
            )),
        }
    }
    trace
}

fn event(fields: Map<String, Value>) -> Event {
    let kind = fields
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_owned();
    let ts = fields.get("ts").and_then(Value::as_str).map(str::to_owned);
    let ts_ms = ts.as_deref().and_then(parse_rfc3339);
    Event {
        kind,
        ts,
        ts_ms,
        fields,
    }
}

/// An RFC 3339 timestamp (`2026-11-30T07:12:01.234Z`, `…+02:00`, a space
/// instead of `T`, any number of fraction digits) as unix milliseconds.
pub fn parse_rfc3339(ts: &str) -> Option<i64> {
    let ts = ts.trim();
    let (date, time) = ts.split_once(['T', 't', ' '])?;
    let mut date_parts = date.splitn(3, '-');
    let year: i64 = date_parts.next()?.parse().ok()?;
    let month: u32 = date_parts.next()?.parse().ok()?;
    let day: u32 = date_parts.next()?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    // The offset: `Z`, or `+hh:mm` / `-hh:mm`.
    let (clock, offset_min) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else {
        let at = time.rfind(['+', '-'])?;
        let (clock, offset) = time.split_at(at);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let (h, m) = offset[1..].split_once(':')?;
        let minutes = h.parse::<i64>().ok()? * 60 + m.parse::<i64>().ok()?;
        (clock, sign * minutes)
    };
    let (hms, fraction) = match clock.split_once('.') {
        Some((hms, fraction)) => (hms, fraction),
        None => (clock, ""),
    };
    let mut hms_parts = hms.splitn(3, ':');
    let hour: i64 = hms_parts.next()?.parse().ok()?;
    let minute: i64 = hms_parts.next()?.parse().ok()?;
    let second: i64 = hms_parts.next()?.parse().ok()?;
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    if !fraction.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let millis: i64 = format!("{fraction:0<3}")
        .get(..3)
        .and_then(|ms| ms.parse().ok())
        .unwrap_or(0);
    let days = days_from_civil(year, month, day);
    Some(((days * 86_400 + hour * 3_600 + minute * 60 + second) - offset_min * 60) * 1_000 + millis)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(s: &str) -> String {
        s.to_owned()
    }

    #[test]
    fn timestamps_read_back() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2026-11-30T07:12:01.234Z"),
            Some(1_796_022_721_234)
        );
        assert_eq!(
            parse_rfc3339("2026-11-30T08:12:01.2345+01:00"),
            Some(1_796_022_721_234)
        );
        assert_eq!(
            parse_rfc3339("2026-11-30 07:12:01Z"),
            Some(1_796_022_721_000)
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(parse_rfc3339("2026-13-01T00:00:00Z"), None);
    }

    #[test]
    fn a_cut_last_line_is_a_note_not_an_error() {
        let text = b"{\"kind\":\"text\",\"ts\":\"2026-11-30T07:12:01.234Z\",\"text\":\"hi\"}\n\n[1]\n{\"kind\":\"tool_ca";
        let trace = parse(text, &same);
        assert_eq!(trace.events.len(), 1);
        assert_eq!(trace.events[0].kind, "text");
        assert_eq!(trace.events[0].str("text"), Some("hi"));
        assert_eq!(trace.notes.len(), 2, "{:?}", trace.notes);
        assert!(trace.notes[0].contains("line 3 is not a JSON object"));
        assert!(trace.notes[1].contains("last line (line 4) is cut short"));
    }

    #[test]
    fn a_cut_character_is_replaced() {
        // Cut in the middle of "é": not UTF-8, and not a whole line.
        let bytes = b"{\"kind\":\"text\",\"text\":\"a\"}\n{\"kind\":\"text\",\"text\":\"\xc3";
        let trace = parse(bytes, &same);
        assert_eq!(trace.events.len(), 1);
        assert_eq!(trace.notes.len(), 1);
        assert!(trace.notes[0].contains("cut short"), "{:?}", trace.notes);
    }
}
