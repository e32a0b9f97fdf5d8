//! How much of the harness runs around the model: all of it, or — to
//! measure what the harness is worth (`rein eval` with the `naive`
//! setting against the default) — a naive loop: the model gets the goal
//! and the tools and nothing else.

/// The `harness` setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Harness {
    #[default]
    Full,
    /// No first-turn context (only the goal: the model runs the test
    /// itself), no calls read from the model's text, no loop guard (nor a
    /// looping reply cut short), no compaction (a context overflow ends the task). Permissions, the
    /// sandbox, budgets and the verifier stay: they protect the user, not
    /// the score.
    Naive,
}

impl Harness {
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "full" => Some(Self::Full),
            "naive" => Some(Self::Naive),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Naive => "naive",
        }
    }

    pub fn is_naive(self) -> bool {
        self == Self::Naive
    }
}

/// The `edit_format` setting: how the model changes files.
///
/// Small models (QuixBugs runs with a 1.5B model, BENCHMARKS.md figure 9)
/// rarely manage `edit_file` (they quote `old_text` from the traceback)
/// and never chose `write_file` while nine tool schemas filled a fifth of
/// their window. Aider's "whole" format suits them: the file's path on a
/// line, then the complete new file in a fenced block — asked of them as
/// only the functions they change, each whole (merged by name: fewer
/// tokens to write, on a CPU the larger part of a reply's time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EditFormat {
    /// `whole` for a model with a small window, `tools` otherwise.
    #[default]
    Auto,
    /// The tools: `edit_file`, `write_file`, `create_file`…
    Tools,
    /// Whole files written in the reply, a compact tool set, and the
    /// test run as soon as a reply changes a file.
    Whole,
}

/// Below this many tokens of context window, `auto` means `whole`: the
/// windows local servers run small models with (llama.cpp and Ollama
/// default to 4k–16k); hosted models have 128k and more.
pub const WHOLE_BELOW_WINDOW: u64 = 32_768;

impl EditFormat {
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "auto" => Some(Self::Auto),
            "tools" => Some(Self::Tools),
            "whole" => Some(Self::Whole),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Tools => "tools",
            Self::Whole => "whole",
        }
    }

    /// `auto` decided for a model with this context window.
    pub fn for_window(self, window_tokens: u64) -> Self {
        match self {
            Self::Auto if window_tokens < WHOLE_BELOW_WINDOW => Self::Whole,
            Self::Auto => Self::Tools,
            decided => decided,
        }
    }

    pub fn is_whole(self) -> bool {
        self == Self::Whole
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_means_whole_only_for_a_small_window() {
        assert_eq!(EditFormat::Auto.for_window(16_384), EditFormat::Whole);
        assert_eq!(EditFormat::Auto.for_window(32_768), EditFormat::Tools);
        assert_eq!(EditFormat::Auto.for_window(200_000), EditFormat::Tools);
        assert_eq!(EditFormat::Tools.for_window(4_096), EditFormat::Tools);
        assert_eq!(EditFormat::Whole.for_window(200_000), EditFormat::Whole);
        assert_eq!(EditFormat::parse(" whole "), Some(EditFormat::Whole));
        assert_eq!(EditFormat::parse("diff"), None);
    }
}
