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
    /// itself), no calls read from the model's text, no loop guard, no
    /// compaction (a context overflow ends the task). Permissions, the
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
