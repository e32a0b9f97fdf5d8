//! Tool argument schemas: derived from the type a built-in tool parses
//! ([`derive()`]), and checked against a call's arguments before anything
//! runs ([`validate`]), saying exactly what to fix.
//!
//! Only the subset our schemas use is checked: `type`, `properties`,
//! `required`, `additionalProperties: false`, `enum`, `minimum`,
//! `maximum`, `minLength`. A built-in schema using more would be a bug of
//! ours, caught by the test over every tool's schema; an external tool's
//! schema may use more, which its own server then checks.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The JSON Schema of `T`, as the model sees it: a closed object whose
/// properties say their type, bounds and meaning (from the doc comments),
/// without what only adds tokens (titles, formats, defaults). An optional
/// argument is simply not required; `null` is not a value the tools take.
pub fn derive<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    tidy(&mut schema);
    schema
}

fn tidy(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    for noise in ["title", "format", "default", "$schema"] {
        map.remove(noise);
    }
    if let Some(Value::Array(types)) = map.get("type") {
        let types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if let [only] = types.as_slice() {
            map.insert("type".into(), only.clone());
        }
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(tidy);
        // Said even when empty: some providers want it.
        map.entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
    }
}

/// Every problem with `args`, in a stable order; empty when valid.
pub fn validate(args: &Value, schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Value::Object(args) = args else {
        problems.push(format!(
            "the arguments must be a JSON object, got {}",
            describe(args)
        ));
        return problems;
    };
    let properties = schema["properties"].as_object();
    let names: Vec<&str> = properties
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();

    for required in schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !args.contains_key(required) {
            problems.push(format!("missing required argument `{required}`"));
        }
    }
    for (name, value) in args {
        match properties.and_then(|p| p.get(name)) {
            Some(property) => check_value(name, value, property, &mut problems),
            None if schema["additionalProperties"] == Value::Bool(false) => {
                let hint = closest(name, &names)
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                problems.push(format!(
                    "unknown argument `{name}`{hint} (the arguments are: {})",
                    names.join(", ")
                ));
            }
            None => {}
        }
    }
    problems
}

fn check_value(name: &str, value: &Value, property: &Value, problems: &mut Vec<String>) {
    if let Some(expected) = property["type"].as_str()
        && !has_type(value, expected)
    {
        problems.push(format!(
            "`{name}` must be {}, got {}",
            article(expected),
            describe(value)
        ));
        return;
    }
    if let Some(options) = property["enum"].as_array()
        && !options.contains(value)
    {
        let options: Vec<String> = options.iter().map(Value::to_string).collect();
        problems.push(format!(
            "`{name}` must be one of {}, got {value}",
            options.join(", ")
        ));
    }
    if let (Some(min), Some(n)) = (property["minimum"].as_f64(), value.as_f64())
        && n < min
    {
        problems.push(format!("`{name}` must be at least {min}, got {value}"));
    }
    if let (Some(max), Some(n)) = (property["maximum"].as_f64(), value.as_f64())
        && n > max
    {
        problems.push(format!("`{name}` must be at most {max}, got {value}"));
    }
    if let (Some(min), Some(s)) = (property["minLength"].as_u64(), value.as_str())
        && (s.chars().count() as u64) < min
    {
        problems.push(format!("`{name}` must not be empty"));
    }
}

fn has_type(value: &Value, expected: &str) -> bool {
    match expected {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn article(kind: &str) -> String {
    match kind {
        "integer" | "object" | "array" => format!("an {kind}"),
        other => format!("a {other}"),
    }
}

fn describe(value: &Value) -> String {
    let shown = |v: &Value| {
        let text = v.to_string();
        if text.chars().count() > 40 {
            format!("{}…", text.chars().take(40).collect::<String>())
        } else {
            text
        }
    };
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(n) => format!("a number ({n})"),
        Value::String(_) => format!("a string ({})", shown(value)),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// The known name closest to an unknown one, if it is close enough to be
/// a plausible typo or synonym.
pub fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (*k, strsim::normalized_damerau_levenshtein(name, k)))
        .filter(|(_, score)| *score >= 0.5)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(k, _)| k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1},
                "start_line": {"type": "integer", "minimum": 1},
                "mode": {"type": "string", "enum": ["a", "b"]}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    #[test]
    fn valid_arguments_pass() {
        assert!(validate(&json!({"path": "cart.py", "start_line": 3}), &schema()).is_empty());
    }

    #[test]
    fn every_problem_is_named() {
        let problems = validate(
            &json!({"paht": "cart.py", "start_line": "10", "mode": "c"}),
            &schema(),
        );
        expect_test::expect![[r#"
            [
                "missing required argument `path`",
                "unknown argument `paht`; did you mean `path`? (the arguments are: path, start_line, mode)",
                "`start_line` must be an integer, got a string (\"10\")",
                "`mode` must be one of \"a\", \"b\", got \"c\"",
            ]
        "#]]
        .assert_debug_eq(&problems);
        assert_eq!(
            validate(&json!({"path": "", "start_line": 0}), &schema()),
            vec![
                "`path` must not be empty".to_owned(),
                "`start_line` must be at least 1, got 0".to_owned(),
            ]
        );
        assert_eq!(
            validate(&json!([1]), &schema()),
            vec!["the arguments must be a JSON object, got an array".to_owned()]
        );
    }
}
