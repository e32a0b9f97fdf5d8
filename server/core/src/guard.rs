//! Loop guards: catching a model that repeats itself or stops learning,
//! before the turn budget does.
//!
//! - The same call (tool + arguments), with the project unchanged in
//!   between, giving the same result twice: the second result carries a
//!   notice; a third such call is refused without running.
//! - Several turns in a row that brought no new information (every result
//!   already seen, nothing changed): the model is asked for its best answer.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

pub const REPEAT_NOTICE: &str = "You already ran this exact call and got the same result; running it again will not change anything. Change your approach.";

#[derive(Debug)]
pub struct LoopGuard {
    /// Bumped whenever the project changes (an edit, a new file, a
    /// command): a repeated call after a change is not a repeat.
    epoch: u64,
    /// (call key) → results it produced, in order.
    calls: HashMap<u64, Vec<u64>>,
    /// Every result seen, to tell new information from old.
    seen_results: HashSet<u64>,
    stale_turns: u32,
    /// Turns without new information before the nudge.
    pub stale_limit: u32,
}

/// What to do with a call before running it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Before {
    Run,
    Refuse(String),
}

impl LoopGuard {
    pub fn new(stale_limit: u32) -> Self {
        Self {
            epoch: 0,
            calls: HashMap::new(),
            seen_results: HashSet::new(),
            stale_turns: 0,
            stale_limit,
        }
    }

    /// The project changed: earlier results may no longer hold.
    pub fn project_changed(&mut self) {
        self.epoch += 1;
    }

    fn key(&self, tool: &str, arguments: &Value) -> u64 {
        let mut h = DefaultHasher::new();
        (tool, canonical(arguments), self.epoch).hash(&mut h);
        h.finish()
    }

    pub fn before(&self, tool: &str, arguments: &Value) -> Before {
        let results = self
            .calls
            .get(&self.key(tool, arguments))
            .map(Vec::as_slice)
            .unwrap_or_default();
        match results {
            [.., a, b] if a == b => Before::Refuse(format!(
                "Refused: {tool} with these arguments already ran {} times with the same result, and nothing changed since. Do something different.",
                results.len()
            )),
            _ => Before::Run,
        }
    }

    /// Records a result; returns the notice to attach if it repeats the
    /// previous result of the same call.
    pub fn after(&mut self, tool: &str, arguments: &Value, result: &str) -> Option<&'static str> {
        let key = self.key(tool, arguments);
        let hash = hash_str(result);
        self.seen_results.insert(hash_pair(tool, hash));
        let results = self.calls.entry(key).or_default();
        let repeat = results.last() == Some(&hash);
        results.push(hash);
        repeat.then_some(REPEAT_NOTICE)
    }

    /// Whether a result is something the model has not seen before.
    pub fn is_new(&self, tool: &str, result: &str) -> bool {
        !self
            .seen_results
            .contains(&hash_pair(tool, hash_str(result)))
    }

    /// Ends a turn. Returns the nudge when too many turns in a row brought
    /// nothing new.
    pub fn end_turn(&mut self, learned_something: bool) -> Option<String> {
        if learned_something {
            self.stale_turns = 0;
            return None;
        }
        self.stale_turns += 1;
        if self.stale_turns < self.stale_limit {
            return None;
        }
        self.stale_turns = 0;
        Some(format!(
            "The last {} turns brought no new information. Stop exploring and give your best answer now: make the fix if you know it, or say clearly what blocks you.",
            self.stale_limit
        ))
    }
}

fn hash_str(s: &str) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

fn hash_pair(tool: &str, result: u64) -> u64 {
    let mut h = DefaultHasher::new();
    (tool, result).hash(&mut h);
    h.finish()
}

/// JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}`
/// are the same call.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .iter()
                .map(|k| format!("{k:?}:{}", canonical(&map[*k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_repeated_call_gets_a_notice_then_is_refused() {
        let mut g = LoopGuard::new(3);
        let args = json!({"target": "tests", "x": [1, {"b": 1, "a": 2}]});
        let reordered = json!({"x": [1, {"a": 2, "b": 1}], "target": "tests"});
        assert_eq!(g.before("run_tests", &args), Before::Run);
        assert_eq!(g.after("run_tests", &args, "1 failing"), None);
        assert_eq!(g.before("run_tests", &reordered), Before::Run);
        assert_eq!(
            g.after("run_tests", &reordered, "1 failing"),
            Some(REPEAT_NOTICE)
        );
        assert!(
            matches!(g.before("run_tests", &args), Before::Refuse(m) if m.contains("already ran 2 times"))
        );
        // After a change to the project the same call is legitimate again.
        g.project_changed();
        assert_eq!(g.before("run_tests", &args), Before::Run);
    }

    #[test]
    fn different_results_are_not_repeats() {
        let mut g = LoopGuard::new(3);
        let args = json!({});
        g.after("run_tests", &args, "1 failing");
        assert_eq!(g.after("run_tests", &args, "0 failing"), None);
        assert_eq!(g.before("run_tests", &args), Before::Run);
    }

    #[test]
    fn stale_turns_lead_to_a_nudge() {
        let mut g = LoopGuard::new(2);
        assert!(g.is_new("read_file", "abc"));
        g.after("read_file", &json!({"path": "a"}), "abc");
        assert!(!g.is_new("read_file", "abc"));
        assert_eq!(g.end_turn(false), None);
        assert!(
            g.end_turn(false)
                .unwrap()
                .contains("The last 2 turns brought no new information")
        );
        assert_eq!(g.end_turn(false), None);
        assert_eq!(g.end_turn(true), None);
    }
}
