//! Tool calls a model wrote as text. Small open models often ignore their
//! chat template's call syntax and write the call in their answer: a
//! fenced JSON block, `<tool_call>{…}</tool_call>`, `[TOOL_CALLS] […]`, or
//! bare JSON. Read as plain text, such a reply looks like "done", the tests
//! run to check the claim, and the model is never told its calls were not
//! calls.
//!
//! A call found in text is accepted only when the tool exists and the
//! arguments validate against its schema, and only when the reply has no
//! real call; all of a reply's calls, or none: a reply that tries to call
//! and gets one wrong is told exactly what to fix instead of half-run. The
//! calls then go through the dispatcher like any other (permissions,
//! guards, the op log); the loop records that they came from text.

use serde_json::Value;

use crate::tools::Registry;
use crate::tools::schema::validate;

/// A call read from text.
#[derive(Clone, Debug, PartialEq)]
pub struct TextCall {
    pub name: String,
    pub arguments: Value,
}

/// What a reply's text holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Found {
    /// Nothing that looks like a call.
    Nothing,
    /// Calls to run, and what the text says besides them.
    Calls { calls: Vec<TextCall>, prose: String },
    /// Something written as a call that cannot be run, and why: the model
    /// is told how to call instead.
    Unusable(Vec<String>),
}

/// Reads `text` for calls of `tools`.
pub fn find(text: &str, tools: &Registry) -> Found {
    let mut calls = Vec::new();
    let mut problems = Vec::new();
    let mut prose = text.to_owned();
    for (span, json) in candidates(text) {
        let Some(value) = lenient_json(json.trim()) else {
            if looks_like_a_call(json) {
                problems.push(format!(
                    "the call you wrote is not valid JSON: {}",
                    shorten(json)
                ));
            }
            continue;
        };
        let items = match value {
            Value::Array(items) => items,
            other => vec![other],
        };
        let mut any = false;
        for item in items {
            let Some((name, arguments)) = call_of(&item) else {
                continue;
            };
            any = true;
            let Some(tool) = tools.get(&name) else {
                problems.push(format!(
                    "there is no tool named {name:?} (the tools are: {})",
                    tools.names().join(", ")
                ));
                continue;
            };
            let wrong = validate(&arguments, &tool.input_schema());
            if !wrong.is_empty() {
                problems.push(format!(
                    "the arguments of {name} do not match its schema: {}",
                    wrong.join("; ")
                ));
                continue;
            }
            calls.push(TextCall { name, arguments });
        }
        if any {
            prose = prose.replacen(span, "", 1);
        }
    }
    if !problems.is_empty() {
        return Found::Unusable(problems);
    }
    if calls.is_empty() {
        return Found::Nothing;
    }
    Found::Calls {
        calls,
        prose: prose.trim().to_owned(),
    }
}

/// JSON as models write it in text: strict, else with the raw tabs and
/// line breaks inside strings escaped (code copied into `old_text` keeps
/// its tabs; strict JSON refuses them, and the model cannot see why).
fn lenient_json(json: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str(json) {
        return Some(value);
    }
    let mut escaped = String::with_capacity(json.len() + 16);
    let (mut in_string, mut after_backslash) = (false, false);
    for c in json.chars() {
        if in_string {
            if after_backslash {
                after_backslash = false;
            } else if c == '\\' {
                after_backslash = true;
            } else if c == '"' {
                in_string = false;
            } else if c.is_control() {
                match c {
                    '\n' => escaped.push_str("\\n"),
                    '\r' => escaped.push_str("\\r"),
                    '\t' => escaped.push_str("\\t"),
                    other => escaped.push_str(&format!("\\u{:04x}", u32::from(other))),
                }
                continue;
            }
        } else if c == '"' {
            in_string = true;
        }
        escaped.push(c);
    }
    serde_json::from_str(&escaped).ok()
}

/// How to call, for a model that wrote its calls as text.
pub fn how_to_call(problems: &[String]) -> String {
    format!(
        "Your reply contains what looks like a tool call written as text, and it was not run: {}. Call tools through tool calling, not in your text; if your text is the only way you can call, write exactly one JSON object per call, {{\"name\": \"<tool>\", \"arguments\": {{…}}}}, inside <tool_call></tool_call>, with arguments that match the tool's schema.",
        problems.join("; ")
    )
}

/// The pieces of `text` that may hold calls: (the span to remove from the
/// prose, the JSON inside it).
fn candidates(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    for (open, close) in [
        ("<tool_call>", "</tool_call>"),
        ("<function_call>", "</function_call>"),
    ] {
        let mut rest = text;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len()..];
            let Some(end) = after.find(close) else { break };
            let span_end = start + open.len() + end + close.len();
            out.push((&rest[start..span_end], &after[..end]));
            rest = &rest[span_end..];
        }
    }
    // Fenced blocks: ``` with an optional tag on the fence line.
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let body = &after[body_start..];
        let Some(end) = body.find("```") else { break };
        let span_end = start + 3 + body_start + end + 3;
        // A fence inside a <tool_call> was taken already.
        if !out.iter().any(|(span, _)| span.contains(&body[..end])) {
            out.push((&rest[start..span_end], &body[..end]));
        }
        rest = &rest[span_end..];
    }
    if let Some(start) = text.find("[TOOL_CALLS]") {
        let after = &text[start + "[TOOL_CALLS]".len()..];
        out.push((&text[start..], after));
    }
    let trimmed = text.trim();
    if out.is_empty() && (trimmed.starts_with('{') || trimmed.starts_with('[')) {
        out.push((trimmed, trimmed));
    }
    out
}

/// (name, arguments) of one call in the shapes open models write:
/// `{"name", "arguments" | "parameters" | "args" | "input"}` and
/// `{"function": {"name", "arguments"}}`; arguments given as a JSON string
/// are read as JSON.
fn call_of(item: &Value) -> Option<(String, Value)> {
    let item = item
        .get("function")
        .filter(|f| f.is_object())
        .unwrap_or(item);
    let name = item.get("name")?.as_str()?.trim().to_owned();
    if name.is_empty() {
        return None;
    }
    let arguments = ["arguments", "parameters", "args", "input"]
        .iter()
        .find_map(|k| item.get(*k))
        .cloned()
        .unwrap_or_else(|| Value::Object(Default::default()));
    let arguments = match arguments {
        Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        Value::Null => Value::Object(Default::default()),
        other => other,
    };
    Some((name, arguments))
}

/// The calls `text` tries to make, as compared for repeats: each written
/// call's JSON with its spacing collapsed, without the prose around them
/// (a model that sends the same broken call in other words is repeating
/// itself). Empty when it tries none.
pub fn attempted_calls(text: &str) -> String {
    candidates(text)
        .into_iter()
        .map(|(_, json)| json)
        .filter(|json| looks_like_a_call(json))
        .map(|json| json.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn looks_like_a_call(text: &str) -> bool {
    text.contains("\"name\"")
        && ["\"arguments\"", "\"parameters\"", "\"args\""]
            .iter()
            .any(|k| text.contains(k))
}

fn shorten(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() > 120 {
        format!("{}…", text.chars().take(120).collect::<String>())
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tools::builtin;
    use serde_json::json;

    fn calls(text: &str) -> Vec<(String, Value)> {
        match find(text, &builtin()) {
            Found::Calls { calls, .. } => {
                calls.into_iter().map(|c| (c.name, c.arguments)).collect()
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_shapes_small_models_write_are_read() {
        let run = || {
            (
                "run_tests".to_owned(),
                json!({"target": "tests/test_gcd.py"}),
            )
        };
        // Qwen2.5-Coder's habit, seen with llama.cpp.
        assert_eq!(
            calls(
                "I'll run the test.\n```json\n{\"name\": \"run_tests\", \"arguments\": {\"target\": \"tests/test_gcd.py\"}}\n```"
            ),
            [run()]
        );
        assert_eq!(
            calls(
                "<tool_call>\n{\"name\": \"run_tests\", \"arguments\": {\"target\": \"tests/test_gcd.py\"}}\n</tool_call>"
            ),
            [run()]
        );
        assert_eq!(
            calls(
                "[TOOL_CALLS] [{\"name\": \"run_tests\", \"arguments\": {\"target\": \"tests/test_gcd.py\"}}]"
            ),
            [run()]
        );
        assert_eq!(
            calls(
                "{\"type\": \"function\", \"function\": {\"name\": \"run_tests\", \"arguments\": \"{\\\"target\\\": \\\"tests/test_gcd.py\\\"}\"}}"
            ),
            [run()]
        );
        // Code copied into a string with its raw tab and line break
        // (Qwen2.5-Coder-1.5B, seen with llama.cpp): strict JSON refuses it.
        assert_eq!(
            calls(
                "```json\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"gcd.py\", \"old_text\": \"\tif b == 0:\n\t\treturn a\", \"new_text\": \"x \\\"q\\\"\"}}\n```"
            ),
            [(
                "edit_file".to_owned(),
                json!({"path": "gcd.py", "old_text": "\tif b == 0:\n\t\treturn a", "new_text": "x \"q\""})
            )]
        );
        assert_eq!(
            calls("{\"name\": \"read_file\", \"parameters\": {\"path\": \"gcd.py\"}}"),
            [("read_file".to_owned(), json!({"path": "gcd.py"}))]
        );
        // Two calls, two blocks; the prose around them is kept.
        match find(
            "Reading both.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}\n```\nand\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b.py\"}}\n```",
            &builtin(),
        ) {
            Found::Calls { calls, prose } => {
                assert_eq!(calls.len(), 2);
                assert_eq!(prose, "Reading both.\n\nand");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_wrong_call_is_explained_not_run() {
        for (text, says) in [
            (
                "```json\n{\"name\": \"cat\", \"arguments\": {\"path\": \"a\"}}\n```",
                "no tool named \"cat\"",
            ),
            (
                "```json\n{\"name\": \"read_file\", \"arguments\": {\"paht\": \"a\"}}\n```",
                "missing required argument `path`",
            ),
            (
                "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \n```",
                "not valid JSON",
            ),
        ] {
            match find(text, &builtin()) {
                Found::Unusable(problems) => {
                    assert!(problems.join("; ").contains(says), "{problems:?}")
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        // One right and one wrong: none runs.
        assert!(matches!(
            find(
                "```json\n[{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}, {\"name\": \"rm\", \"arguments\": {}}]\n```",
                &builtin()
            ),
            Found::Unusable(_)
        ));
    }

    #[test]
    fn prose_and_code_that_are_not_calls_are_left_alone() {
        for text in [
            "Fixed: gcd now returns a when b is 0. The test passes.",
            "The fix:\n```python\ndef gcd(a, b):\n    return a if b == 0 else gcd(b, a % b)\n```",
            "```json\n{\"version\": 2, \"deps\": []}\n```",
            "{\"summary\": \"done\"}",
        ] {
            assert_eq!(find(text, &builtin()), Found::Nothing, "{text}");
        }
    }
}
