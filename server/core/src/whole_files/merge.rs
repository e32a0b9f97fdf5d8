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

/// `current` with the definitions `block` rewrites replaced, if `block`
/// holds nothing but definitions of `current`. `None` when it defines
/// something `current` does not, names a definition twice, or holds text
/// that names nothing (a comment, a docstring): then it is judged whole.
/// What the block leaves out stays, a module's docstring too: a model that
/// wrote only code meant to change only code.
pub fn merge(current: &str, block: &str) -> Option<String> {
    let file = chunks(current);
    let new = chunks(block);
    let replaced = placed(&file, &new)?;
    let mut out: Vec<&str> = Vec::new();
    for (chunk, new) in file.iter().zip(&replaced) {
        match new {
            Some(new) => {
                out.extend(trim_blank_end(&new.lines));
                // Keep the blank lines that separated it from the next.
                let kept = chunk.lines.len() - trim_blank_end(&chunk.lines).len();
                out.extend(std::iter::repeat_n("", kept));
            }
            None => out.extend(&chunk.lines),
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
    placed(&chunks(current), &chunks(block)).is_some()
}

/// For each chunk of `file`, the chunk of `new` that replaces it; `None`
/// unless every chunk of `new` names exactly one chunk of `file`, once.
fn placed<'n, 't>(file: &[Chunk<'_>], new: &'n [Chunk<'t>]) -> Option<Vec<Option<&'n Chunk<'t>>>> {
    let named: Vec<&Chunk> = new
        .iter()
        .filter(|c| c.lines.iter().any(|l| !l.trim().is_empty()))
        .collect();
    if named.is_empty() {
        return None;
    }
    let mut replaced = vec![None; file.len()];
    for chunk in named {
        let key = chunk.key.as_deref()?;
        let mut same = file
            .iter()
            .enumerate()
            .filter(|(_, c)| c.key.as_deref() == Some(key));
        let (at, _) = same.next()?;
        if same.next().is_some() || replaced[at].is_some() {
            return None;
        }
        replaced[at] = Some(chunk);
    }
    Some(replaced)
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
        // A new definition, a name the file does not have.
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
