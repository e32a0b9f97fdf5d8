//! A block that rewrites some of a file's top-level definitions, not all:
//! asked for the whole file, a small model often writes back only the
//! function it fixed ("Here is the corrected function: ```def f…```").
//! Written as the whole file, that would delete every other definition;
//! ignored, the fix is lost. Merged, the block's definitions replace the
//! file's definitions of the same name and the rest stays as it was.
//!
//! A definition is a top-level chunk: a line at column 0 that is not a
//! closing bracket starts one, and it runs to the next. That holds for
//! Python, and for the brace languages' `fn`/`function`/`class` items.
//! The merge happens only when every chunk of the block names exactly one
//! chunk of the file; anything else (a new definition, an ambiguous name,
//! a comment of its own) leaves the block to be judged as a whole file.

/// One top-level chunk: the name it defines and its lines.
#[derive(Debug)]
struct Chunk<'t> {
    key: Option<String>,
    lines: Vec<&'t str>,
}

/// `current` with the definitions `block` rewrites replaced, and the new
/// ones it adds beside them, if `block` holds nothing but definitions and
/// rewrites at least one of `current`'s. `None` when it rewrites none,
/// names a definition twice, or holds text that names nothing (a comment,
/// a docstring): then it is judged whole. What the block leaves out stays,
/// a module's docstring too: a model that wrote only code meant to change
/// only code (asked for the functions it changes, a helper it adds comes
/// with them: written whole, the rest of the file would be lost).
pub fn merge(current: &str, block: &str) -> Option<String> {
    let file = chunks(current);
    let new = chunks(block);
    let placed = placed(&file, &new, true)?;
    let mut out: Vec<&str> = Vec::new();
    for (at, chunk) in file.iter().enumerate() {
        // The blank lines that separated it from the next: kept after its
        // replacement, and as many (at least one) after what is added.
        let kept = chunk.lines.len() - trim_blank_end(&chunk.lines).len();
        let sep = kept.max(1);
        for (_, added) in placed
            .added
            .iter()
            .filter(|(a, _)| *a == Anchor::Before(at))
        {
            out.extend(trim_blank_end(&added.lines));
            out.extend(std::iter::repeat_n("", sep));
        }
        match placed.replaced[at] {
            Some(new) => {
                out.extend(trim_blank_end(&new.lines));
                out.extend(std::iter::repeat_n("", kept));
            }
            None => out.extend(&chunk.lines),
        }
        let after: Vec<_> = placed
            .added
            .iter()
            .filter(|(a, _)| *a == Anchor::After(at))
            .map(|(_, added)| added)
            .collect();
        for (i, added) in after.iter().enumerate() {
            // The last chunk of a file may end without a blank line.
            if i == 0 && kept == 0 {
                out.push("");
            }
            out.extend(trim_blank_end(&added.lines));
            if i + 1 < after.len() || at + 1 < file.len() {
                out.extend(std::iter::repeat_n("", sep));
            }
        }
    }
    let mut text = out.join("\n");
    if current.ends_with('\n') {
        text.push('\n');
    }
    Some(text)
}

/// Whether every definition in `block` is one of `current`'s (some or all
/// of them): the block is a version of that file.
pub fn rewrites(current: &str, block: &str) -> bool {
    placed(&chunks(current), &chunks(block), false).is_some()
}

/// Where a definition new to the file goes: beside the one the block wrote
/// it next to.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Anchor {
    Before(usize),
    After(usize),
}

/// What a block does to a file's chunks.
struct Placed<'n, 't> {
    /// For each chunk of the file, the chunk of the block that replaces it.
    replaced: Vec<Option<&'n Chunk<'t>>>,
    /// The block's new definitions, in its order.
    added: Vec<(Anchor, &'n Chunk<'t>)>,
}

/// How `new`'s chunks fall on `file`'s; `None` unless every chunk of `new`
/// is a definition, at least one names exactly one chunk of `file`, and
/// none is named twice. A definition the file does not have is added
/// (`add`) after the rewritten one before it in the block, or before the
/// first if none is; without `add`, it makes the block no version of the
/// file.
fn placed<'n, 't>(file: &[Chunk<'_>], new: &'n [Chunk<'t>], add: bool) -> Option<Placed<'n, 't>> {
    let named: Vec<&Chunk> = new
        .iter()
        .filter(|c| c.lines.iter().any(|l| !l.trim().is_empty()))
        .collect();
    if named.is_empty() {
        return None;
    }
    let mut replaced = vec![None; file.len()];
    let mut added: Vec<(Option<usize>, &Chunk)> = Vec::new();
    let mut last: Option<usize> = None;
    let mut keys: Vec<&str> = Vec::new();
    for chunk in named {
        let key = chunk.key.as_deref()?;
        if keys.contains(&key) {
            return None;
        }
        keys.push(key);
        let mut same = file
            .iter()
            .enumerate()
            .filter(|(_, c)| c.key.as_deref() == Some(key));
        match (same.next(), same.next()) {
            (Some((at, _)), None) => {
                replaced[at] = Some(chunk);
                last = Some(at);
            }
            (None, _) if add => added.push((last, chunk)),
            _ => return None,
        }
    }
    let first = replaced.iter().position(Option::is_some)?;
    let added = added
        .into_iter()
        .map(|(after, chunk)| {
            let anchor = after.map_or(Anchor::Before(first), Anchor::After);
            (anchor, chunk)
        })
        .collect();
    Some(Placed { replaced, added })
}

fn trim_blank_end<'a, 't>(lines: &'a [&'t str]) -> &'a [&'t str] {
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    &lines[..end]
}

/// The top-level chunks of `text`; lines before the first start belong to
/// a chunk without a name.
fn chunks(text: &str) -> Vec<Chunk<'_>> {
    let mut out: Vec<Chunk> = Vec::new();
    // Inside a triple-quoted string (a docstring's text at column 0 is not
    // a definition).
    let mut quoted = false;
    for line in text.lines() {
        let starts = !quoted
            && !line.is_empty()
            && !line.starts_with(char::is_whitespace)
            && !line.starts_with(['}', ')', ']']);
        if (line.matches("\"\"\"").count() + line.matches("'''").count()) % 2 == 1 {
            quoted = !quoted;
        }
        match out.last_mut() {
            Some(chunk) if !starts => chunk.lines.push(line),
            // A decorator belongs to the definition under it, which names
            // the chunk: `@cache` then `def fib(n):` is `def fib`.
            Some(chunk) if chunk.key.is_none() && decorators_only(&chunk.lines) => {
                chunk.lines.push(line);
                chunk.key = key(line);
            }
            _ if !starts => out.push(Chunk {
                key: None,
                lines: vec![line],
            }),
            _ => out.push(Chunk {
                key: key(line),
                lines: vec![line],
            }),
        }
    }
    out
}

/// Whether `lines` are decorators (and blank lines) only, at least one.
fn decorators_only(lines: &[&str]) -> bool {
    lines.iter().any(|l| l.starts_with('@'))
        && lines
            .iter()
            .all(|l| l.starts_with('@') || l.trim().is_empty())
}

/// What a definition's first line defines: `def flatten(arr):` →
/// `def flatten`, `pub fn parse<'a>(…` → `pub fn parse`, `X = 1` → `X`.
/// `None` for a line that names nothing (a docstring's quotes, a
/// decorator, a comment): such chunks are never matched.
fn key(line: &str) -> Option<String> {
    let head = line
        .split(['(', ':', '{', '=', '<', '['])
        .next()
        .unwrap_or_default()
        .trim();
    let named =
        head.chars().any(char::is_alphabetic) && !head.starts_with(['#', '@', '"', '\'', '/', '*']);
    named.then(|| head.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "import math\n\n\ndef area(r):\n    return math.pi * r\n\n\ndef perimeter(r):\n    return 2 * math.pi * r\n\n\n\"\"\"\nCircles.\n\"\"\"\n";

    #[test]
    fn a_rewritten_function_replaces_its_namesake_and_nothing_else() {
        let block = "def area(r):\n    return math.pi * r * r\n";
        assert_eq!(
            merge(FILE, block).unwrap(),
            FILE.replace("return math.pi * r\n", "return math.pi * r * r\n")
        );
    }

    /// Asked for the whole file, a small model drops the module's
    /// docstring: the code it wrote is merged, the docstring stays.
    #[test]
    fn every_definition_without_the_docstring_keeps_the_docstring() {
        let block = "import math\n\n\ndef area(r):\n    return math.pi * r * r\n\n\ndef perimeter(r):\n    return 2 * math.pi * r\n";
        assert_eq!(
            merge(FILE, block).unwrap(),
            FILE.replace("return math.pi * r\n", "return math.pi * r * r\n")
        );
    }

    #[test]
    fn what_the_block_cannot_place_is_not_merged() {
        // Only new definitions: no version of this file.
        assert_eq!(merge(FILE, "def volume(r):\n    return 0\n"), None);
        // Text of its own that names nothing: the whole file, judged as one.
        assert_eq!(
            merge(
                FILE,
                "# circles\nimport math\ndef area(r):\n    pass\ndef perimeter(r):\n    pass\n"
            ),
            None
        );
        // The same definition twice.
        assert_eq!(
            merge(FILE, "def area(r):\n    pass\ndef area(r):\n    pass\n"),
            None
        );
        // Only a docstring or a bare statement: nothing named.
        assert_eq!(merge(FILE, "\"\"\"\nOther.\n\"\"\"\n"), None);
        assert_eq!(merge(FILE, "    return 1\n"), None);
    }

    #[test]
    fn a_version_of_the_file_is_known_by_its_definitions() {
        assert!(rewrites(FILE, "def area(r):\n    pass\n"));
        assert!(rewrites(
            FILE,
            "import math\ndef area(r):\n    pass\ndef perimeter(r):\n    pass\n"
        ));
        assert!(!rewrites(FILE, "def volume(r):\n    pass\n"));
        // The docstring's own words are not definitions.
        assert!(!rewrites(FILE, "Circles.\n"));
    }

    /// Asked for the functions it changes, a model adds a helper beside
    /// the one it fixed: both go in, the rest of the file stays.
    #[test]
    fn a_new_helper_goes_in_beside_the_function_written_with_it() {
        let after =
            "def area(r):\n    return math.pi * square(r)\n\n\ndef square(x):\n    return x * x\n";
        expect_test::expect![[r#"
            import math


            def area(r):
                return math.pi * square(r)


            def square(x):
                return x * x


            def perimeter(r):
                return 2 * math.pi * r


            """
            Circles.
            """
        "#]]
        .assert_eq(&merge(FILE, after).unwrap());
        let before =
            "def square(x):\n    return x * x\n\n\ndef perimeter(r):\n    return 2 * math.pi * r\n";
        expect_test::expect![[r#"
            import math


            def area(r):
                return math.pi * r


            def square(x):
                return x * x


            def perimeter(r):
                return 2 * math.pi * r


            """
            Circles.
            """
        "#]]
        .assert_eq(&merge(FILE, before).unwrap());
        // At the end of the file.
        let last = "fn a() -> u32 {\n    helper()\n}\nfn helper() -> u32 {\n    1\n}\n";
        assert_eq!(
            merge("fn a() -> u32 {\n    1\n}\n", last).unwrap(),
            "fn a() -> u32 {\n    helper()\n}\n\nfn helper() -> u32 {\n    1\n}\n"
        );
        // An unnamed block that adds is not taken for a version of the file.
        assert!(!rewrites(FILE, after));
        // Lines that were not apart stay together.
        assert_eq!(
            merge("X = 1\nY = 2\n", "Y = 3\n").unwrap(),
            "X = 1\nY = 3\n"
        );
        assert_eq!(
            merge("X = 1\nY = 2\n\n\n", "Y = 3\nZ = 4\n").unwrap(),
            "X = 1\nY = 3\n\n\nZ = 4\n"
        );
    }

    #[test]
    fn a_decorated_function_is_merged_with_its_decorators() {
        let file = "import functools\n\n\n@functools.cache\ndef fib(n):\n    return n\n\n\ndef other():\n    pass\n";
        let block =
            "@functools.cache\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n";
        assert_eq!(
            merge(file, block).unwrap(),
            file.replace(
                "    return n\n",
                "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
            )
        );
        // A decorator with nothing under it names nothing.
        assert_eq!(merge(file, "@functools.cache\n"), None);
    }

    #[test]
    fn brace_languages_merge_by_item() {
        let file = "fn a() -> u32 {\n    1\n}\n\nfn b() -> u32 {\n    2\n}\n";
        assert_eq!(
            merge(file, "fn b() -> u32 {\n    3\n}\n").unwrap(),
            "fn a() -> u32 {\n    1\n}\n\nfn b() -> u32 {\n    3\n}\n"
        );
    }

    #[test]
    fn definitions_are_named_by_their_first_words() {
        assert_eq!(key("def flatten(arr):").as_deref(), Some("def flatten"));
        assert_eq!(
            key("pub fn parse<'a>(text: &'a str) {").as_deref(),
            Some("pub fn parse")
        );
        assert_eq!(key("class  Cart(Base):").as_deref(), Some("class Cart"));
        assert_eq!(key("LIMIT = 5").as_deref(), Some("LIMIT"));
        assert_eq!(key("\"\"\""), None);
        assert_eq!(key("@dataclass"), None);
        assert_eq!(key("# a comment"), None);
    }
}
