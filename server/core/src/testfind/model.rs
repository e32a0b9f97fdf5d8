//! The types every part of test finding shares: the languages whose tests
//! can be found ([`Lang`], told by a file's extension with
//! [`lang_for_path`]) and one found test ([`TestFn`]).

use std::ops::Range;

/// A language whose tests can be found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    Rust,
    Python,
    /// Also TypeScript and JSX.
    JavaScript,
    Go,
}

/// The language of a file, by its extension.
pub fn lang_for_path(path: &str) -> Option<Lang> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (_, ext) = name.rsplit_once('.')?;
    match ext {
        "rs" => Some(Lang::Rust),
        "py" => Some(Lang::Python),
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Some(Lang::JavaScript),
        "go" => Some(Lang::Go),
        _ => None,
    }
}

/// One test function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TestFn {
    /// `test_total`, `TestTotal`, `adds items` (JS: the literal's text).
    pub name: String,
    /// With its enclosing modules, classes or `describe`s: `tests::total`,
    /// `TestCart.test_total`, `Cart > adds items`, `Suite.TestTotal`.
    pub qualified: String,
    /// 0-based lines of the whole test, attributes and decorators
    /// included; the end is exclusive.
    pub span: Range<usize>,
    /// 0-based line of the name.
    pub name_line: usize,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn languages_by_extension() {
        assert_eq!(lang_for_path("src/lib.rs"), Some(Lang::Rust));
        assert_eq!(lang_for_path("tests/test_cart.py"), Some(Lang::Python));
        for ext in ["js", "jsx", "ts", "tsx", "mjs", "cjs"] {
            assert_eq!(
                lang_for_path(&format!("a/cart.test.{ext}")),
                Some(Lang::JavaScript)
            );
        }
        assert_eq!(lang_for_path("cart_test.go"), Some(Lang::Go));
        assert_eq!(lang_for_path("Makefile"), None);
        assert_eq!(lang_for_path("dir.rs/README"), None);
    }
}
