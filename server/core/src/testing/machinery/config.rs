//! Settings that change how the tests run: pytest's options (in
//! pytest.ini, tox.ini, setup.cfg or pyproject.toml), plugin entry points,
//! jest's and vitest's setup files, reporters and runners (their config
//! files and package.json), the `test` script, and cargo's runners,
//! linkers, flags and test harnesses.

use super::Finding;

/// pytest settings that add options or plugins, move imports, or change
/// which tests are collected and how.
const PYTEST_KEYS: &[(&str, &str)] = &[
    ("addopts", "options added to every pytest run"),
    ("pythonpath", "where pytest's imports look first"),
    ("python_files", "which files pytest collects as tests"),
    ("python_classes", "which classes pytest collects as tests"),
    (
        "python_functions",
        "which functions pytest collects as tests",
    ),
    ("usefixtures", "fixtures applied to every test"),
    ("confcutdir", "where pytest looks for conftest.py files"),
    ("required_plugins", "plugins pytest must load"),
    (
        "pytest11",
        "a pytest plugin entry point, loaded into every run",
    ),
];

/// jest and vitest settings that add code to the run or change how it
/// reports.
const JS_KEYS: &[&str] = &[
    "setupFiles",
    "setupFilesAfterEnv",
    "globalSetup",
    "globalTeardown",
    "reporters",
    "testResultsProcessor",
    "testRunner",
    "runner",
    "snapshotResolver",
    "moduleNameMapper",
    "transform",
    "resolver",
    "alias",
    "testEnvironment",
    "environment",
    "passWithNoTests",
];

/// package.json scripts that decide what `npm test` runs.
const TEST_SCRIPTS: &[&str] = &["test", "pretest", "posttest"];

/// cargo settings that decide what builds or runs the test binaries.
const CARGO_KEYS: &[&str] = &[
    "runner",
    "rustflags",
    "rustdocflags",
    "linker",
    "rustc",
    "rustc-wrapper",
    "rustc-workspace-wrapper",
];

/// Cargo.toml keys that make a test a plain program or add a build script.
const MANIFEST_KEYS: &[(&str, &str)] = &[
    (
        "harness",
        "sets `harness`, which can make a test target a plain program printing what it likes",
    ),
    (
        "build",
        "names a build script, which runs before the tests are built",
    ),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    PytestIni,
    Pyproject,
    PackageJson,
    JsConfig,
    CargoConfig,
    CargoManifest,
}

fn kind(path: &str) -> Option<Kind> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let parent = path.rsplit('/').nth(1).unwrap_or("");
    let stem = name.split('.').next().unwrap_or(name);
    let js_ext = name
        .rsplit_once('.')
        .is_some_and(|(_, e)| matches!(e, "js" | "ts" | "mjs" | "cjs" | "mts" | "cts" | "json"));
    match name {
        "pytest.ini" | ".pytest.ini" | "tox.ini" | "setup.cfg" => Some(Kind::PytestIni),
        "pyproject.toml" => Some(Kind::Pyproject),
        "package.json" => Some(Kind::PackageJson),
        "Cargo.toml" => Some(Kind::CargoManifest),
        "config" | "config.toml" if parent == ".cargo" => Some(Kind::CargoConfig),
        _ if js_ext
            && matches!(stem, "jest" | "vitest" | "vite")
            && (name.contains(".config.") || name.contains(".workspace.")) =>
        {
            Some(Kind::JsConfig)
        }
        _ => None,
    }
}

pub(super) fn is_config(path: &str) -> bool {
    kind(path).is_some()
}

pub(super) fn scan(path: &str, text: &str) -> Vec<Finding> {
    match kind(path) {
        Some(Kind::PytestIni) => ini(
            path,
            text,
            &["pytest", "tool:pytest", "options.entry_points"],
        ),
        Some(Kind::Pyproject) => ini(
            path,
            text,
            &[
                "tool.pytest.ini_options",
                "tool.pytest",
                "project.entry-points",
                "project.entry-points.pytest11",
            ],
        ),
        Some(Kind::PackageJson) => package_json(path, text),
        Some(Kind::JsConfig) => js_config(path, text),
        Some(Kind::CargoConfig) => keyed_lines(path, text, '#', |key| {
            CARGO_KEYS.contains(&key).then(|| {
                format!("sets cargo's `{key}`, which decides what builds or runs the test binaries")
            })
        }),
        Some(Kind::CargoManifest) => keyed_lines(path, text, '#', |key| {
            MANIFEST_KEYS
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, what)| (*what).to_owned())
        }),
        None => Vec::new(),
    }
}

/// An INI or TOML file: the pytest keys of the pytest sections, with the
/// lines that continue their values.
fn ini(path: &str, text: &str, sections: &[&str]) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut in_section = false;
    // Every key of a `[project.entry-points.pytest11]` section is a plugin.
    let mut all_plugins = false;
    // The key whose value the following indented lines continue.
    let mut open: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if trimmed.starts_with('[')
            && !trimmed.starts_with("[[")
            && trimmed.ends_with(']')
            && !line.starts_with(char::is_whitespace)
        {
            let name = trimmed.trim_matches(['[', ']']).trim().trim_matches('"');
            in_section = sections.contains(&name);
            all_plugins = name.ends_with(".pytest11");
            open = None;
            continue;
        }
        if !in_section {
            continue;
        }
        let key = trimmed
            .split(['=', ':'])
            .next()
            .map(|k| k.trim().trim_matches('"'))
            .filter(|k| {
                !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || "_-.".contains(c))
            });
        let continues = line.starts_with(char::is_whitespace) || key.is_none();
        if continues {
            if let Some(what) = &open {
                found.push(Finding::at(path, i + 1, trimmed, what.clone()));
            }
            continue;
        }
        let key = if all_plugins { Some("pytest11") } else { key };
        open = key.and_then(|key| {
            PYTEST_KEYS
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(k, what)| format!("sets pytest's `{k}`: {what}"))
        });
        if let Some(what) = &open {
            found.push(Finding::at(path, i + 1, trimmed, what.clone()));
        }
    }
    found
}

/// `key = …` lines (the first word before `=` or `:`), comments off.
fn keyed_lines(
    path: &str,
    text: &str,
    comment: char,
    rule: impl Fn(&str) -> Option<String>,
) -> Vec<Finding> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split(comment).next().unwrap_or("").trim();
        let Some((key, _)) = code.split_once('=') else {
            continue;
        };
        let key = key.trim().trim_matches('"');
        if let Some(what) = rule(key) {
            found.push(Finding::at(path, i + 1, code, what));
        }
    }
    found
}

/// A jest or vitest config file: the lines that set one of [`JS_KEYS`].
fn js_config(path: &str, text: &str) -> Vec<Finding> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("").trim();
        for key in JS_KEYS {
            let set = [
                format!("{key}:"),
                format!("\"{key}\":"),
                format!("'{key}':"),
                format!("{key} :"),
            ]
            .iter()
            .any(|p| code.contains(p.as_str()));
            let word = code
                .find(key)
                .is_some_and(|at| !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_'));
            if set && word {
                found.push(Finding::at(
                    path,
                    i + 1,
                    code,
                    format!(
                        "sets `{key}`, which adds code to the test run or changes how it reports"
                    ),
                ));
                break;
            }
        }
    }
    found
}

/// package.json: the `test` scripts and the `jest` settings of
/// [`JS_KEYS`], each with its value.
fn package_json(path: &str, text: &str) -> Vec<Finding> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let line_of = |key: &str| {
        let quoted = format!("\"{key}\"");
        text.lines()
            .position(|l| l.contains(&quoted))
            .map_or(0, |i| i + 1)
    };
    let mut found = Vec::new();
    if let Some(scripts) = value.get("scripts").and_then(|s| s.as_object()) {
        for name in TEST_SCRIPTS {
            if let Some(script) = scripts.get(*name) {
                found.push(Finding::at(
                    path,
                    line_of(name),
                    &format!("scripts.{name} = {script}"),
                    format!("sets the `{name}` script, which decides what `npm test` runs"),
                ));
            }
        }
    }
    if let Some(jest) = value.get("jest").and_then(|j| j.as_object()) {
        for key in JS_KEYS {
            if let Some(setting) = jest.get(*key) {
                found.push(Finding::at(
                    path,
                    line_of(key),
                    &format!("jest.{key} = {setting}"),
                    format!("sets jest's `{key}`, which adds code to the test run or changes how it reports"),
                ));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(path: &str, text: &str) -> Vec<String> {
        scan(path, text).iter().map(Finding::describe).collect()
    }

    #[test]
    fn pytest_settings_in_each_file() {
        assert_eq!(
            described(
                "pytest.ini",
                "[pytest]\naddopts = -q\n  -p evil\ntestpaths = tests\n\n[other]\naddopts = x\n"
            ),
            [
                "pytest.ini:2 sets pytest's `addopts`: options added to every pytest run",
                "pytest.ini:3 sets pytest's `addopts`: options added to every pytest run",
            ]
        );
        assert_eq!(
            described(
                "setup.cfg",
                "[metadata]\nname = x\n[tool:pytest]\npythonpath = src\n"
            ),
            ["setup.cfg:4 sets pytest's `pythonpath`: where pytest's imports look first"]
        );
        assert_eq!(
            described(
                "pyproject.toml",
                "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = [\n  \"-p\", \"evil\",\n]\nminversion = \"8\"\n\n[project.entry-points.pytest11]\nevil = \"evil\"\n"
            ),
            [
                "pyproject.toml:5 sets pytest's `addopts`: options added to every pytest run",
                "pyproject.toml:6 sets pytest's `addopts`: options added to every pytest run",
                "pyproject.toml:7 sets pytest's `addopts`: options added to every pytest run",
                "pyproject.toml:11 sets pytest's `pytest11`: a pytest plugin entry point, loaded into every run",
            ]
        );
        assert_eq!(
            described(
                "setup.cfg",
                "[options.entry_points]\npytest11 =\n    evil = evil\n"
            ),
            [
                "setup.cfg:2 sets pytest's `pytest11`: a pytest plugin entry point, loaded into every run",
                "setup.cfg:3 sets pytest's `pytest11`: a pytest plugin entry point, loaded into every run",
            ]
        );
    }

    #[test]
    fn js_settings_and_the_test_script() {
        assert_eq!(
            described(
                "jest.config.js",
                "module.exports = {\n  testMatch: ['**/*.test.js'],\n  setupFiles: ['./fake.js'],\n  // reporters: ['x'],\n};\n"
            ),
            [
                "jest.config.js:3 sets `setupFiles`, which adds code to the test run or changes how it reports"
            ]
        );
        assert_eq!(
            described(
                "vitest.config.ts",
                "export default defineConfig({ test: { reporters: ['./r.ts'] } })\n"
            ),
            [
                "vitest.config.ts:1 sets `reporters`, which adds code to the test run or changes how it reports"
            ]
        );
        assert_eq!(
            described(
                "package.json",
                "{\n  \"scripts\": {\n    \"test\": \"jest\"\n  },\n  \"jest\": {\n    \"setupFilesAfterEnv\": [\"./s.js\"]\n  }\n}\n"
            ),
            [
                "package.json:3 sets the `test` script, which decides what `npm test` runs",
                "package.json:6 sets jest's `setupFilesAfterEnv`, which adds code to the test run or changes how it reports",
            ]
        );
        assert!(described("package.json", "{ not json").is_empty());
    }

    #[test]
    fn cargo_settings() {
        assert_eq!(
            described(
                ".cargo/config.toml",
                "[target.x86_64-unknown-linux-gnu]\nrunner = \"sh fake.sh\"  # r\n[build]\njobs = 2\n"
            ),
            [
                ".cargo/config.toml:2 sets cargo's `runner`, which decides what builds or runs the test binaries"
            ]
        );
        assert_eq!(
            described(
                "Cargo.toml",
                "[package]\nname = \"cart\"\n\n[[test]]\nname = \"cart\"\nharness = false\n"
            ),
            [
                "Cargo.toml:6 sets `harness`, which can make a test target a plain program printing what it likes"
            ]
        );
    }
}
