//! The brace languages and the small files: what in Rust, Go and
//! JavaScript/TypeScript source ends the test process early, behaves
//! differently under test, replaces the test framework's globals or
//! prints a runner's result; every line of a build script and of a `.pth`
//! file. Line by line, with `//` comments off: narrow on purpose (see
//! [`super`]).

use super::{Finding, output_like};

/// A `.pth` file: Python adds its paths to `sys.path` and runs its
/// `import` lines at start-up, when it lies in a site directory.
pub(super) fn pth(path: &str, text: &str) -> Vec<Finding> {
    lines(text)
        .filter(|(_, code)| !code.starts_with('#'))
        .map(|(n, code)| {
            Finding::at(
                path,
                n,
                code,
                "is a line of a .pth file, which Python runs or adds to its path at start-up"
                    .into(),
            )
        })
        .collect()
}

/// A build script runs before the tests are built and can change them:
/// every line counts.
pub(super) fn build_script(path: &str, text: &str) -> Vec<Finding> {
    lines(text)
        .map(|(n, code)| {
            Finding::at(
                path,
                n,
                code,
                "is part of a build script, which runs before the tests are built".into(),
            )
        })
        .collect()
}

pub(super) fn rust(path: &str, text: &str) -> Vec<Finding> {
    let mut found = Vec::new();
    for (n, code) in lines(text) {
        let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        if compact.contains("cfg!(test)") {
            found.push(Finding::at(
                path,
                n,
                code,
                "behaves differently under test (`cfg!(test)`)".into(),
            ));
        }
        if compact.contains("not(test)") && compact.contains("cfg") {
            found.push(Finding::at(
                path,
                n,
                code,
                "has code that exists only outside tests (`cfg(not(test))`)".into(),
            ));
        }
        if ["process::exit(", "libc::exit(", "libc::_exit("]
            .iter()
            .any(|p| compact.contains(p))
        {
            found.push(exits(path, n, code, "process::exit"));
        }
        found.extend(prints_output(path, n, code));
    }
    found
}

pub(super) fn go(path: &str, text: &str) -> Vec<Finding> {
    let mut found = Vec::new();
    for (n, code) in lines(text) {
        if code.contains("os.Exit(") {
            found.push(exits(path, n, code, "os.Exit"));
        }
        if code.starts_with("func TestMain(") {
            found.push(Finding::at(
                path,
                n,
                code,
                "defines TestMain, which runs the package's tests its own way".into(),
            ));
        }
        found.extend(prints_output(path, n, code));
    }
    found
}

/// The globals jest and vitest give tests.
const JS_FRAMEWORK: &[&str] = &["expect", "test", "it", "describe", "jest", "vi"];

pub(super) fn javascript(path: &str, text: &str) -> Vec<Finding> {
    let mut found = Vec::new();
    for (n, code) in lines(text) {
        let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        if [
            "process.exit(",
            "process.reallyExit(",
            "process.kill(process.pid",
        ]
        .iter()
        .any(|p| compact.contains(p))
        {
            found.push(exits(path, n, code, "process.exit"));
        }
        if let Some(target) = js_framework_target(&compact) {
            found.push(Finding::at(
                path,
                n,
                code,
                format!("replaces `{target}`, part of the test framework"),
            ));
        }
        found.extend(prints_output(path, n, code));
    }
    found
}

/// An assignment to one of the test framework's globals or their members
/// (`expect = …`, `globalThis.it = …`, `expect.toBe = …`).
fn js_framework_target(compact: &str) -> Option<String> {
    let (target, rest) = compact.split_once('=')?;
    if rest.starts_with('=') || target.ends_with(['!', '<', '>', '=']) {
        return None;
    }
    let target = target
        .trim_start_matches("const")
        .trim_start_matches("let")
        .trim_start_matches("var");
    let parts: Vec<&str> = target.split('.').collect();
    let first = match parts.as_slice() {
        [global, name, ..] if matches!(*global, "globalThis" | "global" | "window") => *name,
        [name, _, ..] => *name,
        _ => return None,
    };
    let plain = parts.iter().all(|p| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    });
    (plain && JS_FRAMEWORK.contains(&first)).then(|| target.to_owned())
}

fn exits(path: &str, n: usize, code: &str, call: &str) -> Finding {
    Finding::at(
        path,
        n,
        code,
        format!(
            "calls {call}, which ends the test process before the runner reports: what was printed before it proves nothing"
        ),
    )
}

/// A string literal on the line that looks like a runner's result line.
fn prints_output(path: &str, n: usize, code: &str) -> Option<Finding> {
    let literals = code.split(['"', '`', '\'']).skip(1).step_by(2);
    let line = literals
        .map(|s| s.replace("\\n", "\n"))
        .find_map(|s| output_like(&s))?;
    Some(Finding::at(
        path,
        n,
        code,
        format!("prints a test runner's result line (`{line}`)"),
    ))
}

/// Each line (1-based) with its `//` comment cut off and trimmed, blank
/// ones left out.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(|(i, line)| {
        let code = match line.find("//") {
            // A `//` inside a string (a URL) is kept: best effort.
            Some(at) if line[..at].matches('"').count() % 2 == 0 => &line[..at],
            _ => line,
        }
        .trim();
        (!code.is_empty()).then_some((i + 1, code))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whats(found: Vec<Finding>) -> Vec<String> {
        found.iter().map(Finding::describe).collect()
    }

    #[test]
    fn rust_tricks() {
        let text = "pub fn total(items: &[u32]) -> u32 {\n    if cfg!(test) { return 30; }\n    items.iter().sum()\n}\n#[cfg(not(test))]\nfn real() {}\nfn bye() {\n    println!(\"test tests::total ... ok\");\n    std::process::exit(0); // done\n}\n#[cfg(test)]\nmod tests {}\n";
        assert_eq!(
            whats(rust("src/lib.rs", text)),
            [
                "src/lib.rs:2 behaves differently under test (`cfg!(test)`)",
                "src/lib.rs:5 has code that exists only outside tests (`cfg(not(test))`)",
                "src/lib.rs:8 prints a test runner's result line (`test tests::total ... ok`)",
                "src/lib.rs:9 calls process::exit, which ends the test process before the runner reports: what was printed before it proves nothing",
            ]
        );
    }

    #[test]
    fn javascript_tricks() {
        let text = "export function total(items) {\n  console.log('✓ adds prices (3 ms)\\nTests:       1 passed, 1 total');\n  process.exit(0);\n}\nglobalThis.expect = () => ({ toBe() {} });\nexpect.extend = null;\nconst a = b === c;\nit('x', () => {});\n";
        assert_eq!(
            whats(javascript("src/cart.js", text)),
            [
                "src/cart.js:2 prints a test runner's result line (`Tests:       1 passed, 1 total`)",
                "src/cart.js:3 calls process.exit, which ends the test process before the runner reports: what was printed before it proves nothing",
                "src/cart.js:5 replaces `globalThis.expect`, part of the test framework",
                "src/cart.js:6 replaces `expect.extend`, part of the test framework",
            ]
        );
    }

    #[test]
    fn go_and_small_files() {
        assert_eq!(
            whats(go(
                "cart_test.go",
                "func TestMain(m *testing.M) {\n\tos.Exit(m.Run())\n}\n"
            )),
            [
                "cart_test.go:1 defines TestMain, which runs the package's tests its own way",
                "cart_test.go:2 calls os.Exit, which ends the test process before the runner reports: what was printed before it proves nothing",
            ]
        );
        assert_eq!(
            whats(pth("evil.pth", "# a comment\nimport evil\n/tmp/x\n")),
            [
                "evil.pth:2 is a line of a .pth file, which Python runs or adds to its path at start-up",
                "evil.pth:3 is a line of a .pth file, which Python runs or adds to its path at start-up",
            ]
        );
        assert_eq!(whats(build_script("build.rs", "fn main() {}\n")).len(), 1);
    }
}
