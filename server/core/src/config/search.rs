//! The `search` and `search_candidates` settings: how the loop searches
//! with the verifier (`agent/search.rs`). An untrusted workspace's own
//! settings may only lower them ([`SearchConfig::tightened`]).

use super::settings::Settings;

/// When the loop samples several candidate fixes and checks each in a
/// private layer before one reaches the workspace. Ordered: a lower one
/// searches less.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum SearchMode {
    /// Never: every reply is an ordinary turn.
    Off,
    /// After an attempt the verifier turned down: the next turn is a
    /// search. Costs nothing while the first attempt passes.
    #[default]
    OnFailure,
    /// Every turn (the first one too) is a search: a reply that only
    /// changes files is checked before it reaches the workspace.
    Always,
}

impl SearchMode {
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "off" => Some(Self::Off),
            "on_failure" | "on-failure" => Some(Self::OnFailure),
            "always" => Some(Self::Always),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::OnFailure => "on_failure",
            Self::Always => "always",
        }
    }
}

/// The search's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchConfig {
    pub mode: SearchMode,
    /// Candidates one search may sample (the ordinary next turn is the
    /// first), 1 to [`MAX_CANDIDATES`].
    pub candidates: u32,
    /// Where the candidates' sampler seeds start (`search_seed`): the
    /// same prompt and seed sample the same candidates, so a measured
    /// round is repeated with the same one and varied with another.
    pub seed: u64,
}

/// The default `search_candidates`.
pub const DEFAULT_CANDIDATES: u32 = 4;
/// The most `search_candidates` may be: each is a model call and a test
/// run.
pub const MAX_CANDIDATES: u32 = 16;

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            mode: SearchMode::default(),
            candidates: DEFAULT_CANDIDATES,
            seed: 0,
        }
    }
}

/// A value that is not a setting's: which, and what it held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BadSearch {
    Mode(String),
    Candidates(u32),
}

impl SearchConfig {
    /// The settings of `layers` (highest precedence first) over the
    /// defaults.
    pub(crate) fn resolve(layers: &[&Settings]) -> Result<Self, BadSearch> {
        let mut config = Self::default();
        if let Some(text) = layers.iter().find_map(|l| l.search.as_deref()) {
            config.mode =
                SearchMode::parse(text).ok_or_else(|| BadSearch::Mode(text.to_owned()))?;
        }
        if let Some(n) = layers.iter().find_map(|l| l.search_candidates) {
            if !(1..=MAX_CANDIDATES).contains(&n) {
                return Err(BadSearch::Candidates(n));
            }
            config.candidates = n;
        }
        if let Some(seed) = layers.iter().find_map(|l| l.search_seed) {
            config.seed = seed;
        }
        Ok(config)
    }

    /// `self` lowered where an untrusted layer sets less; what it sets
    /// higher, or cannot be read, changes nothing. Its seed is not taken
    /// either: it spends nothing, but which candidates are tried is the
    /// user's to choose.
    pub(crate) fn tightened(self, untrusted: &Settings) -> Self {
        let mode = untrusted
            .search
            .as_deref()
            .and_then(SearchMode::parse)
            .map_or(self.mode, |m| m.min(self.mode));
        let candidates = untrusted
            .search_candidates
            .filter(|n| *n >= 1)
            .map_or(self.candidates, |n| n.min(self.candidates));
        Self {
            mode,
            candidates,
            seed: self.seed,
        }
    }

    /// What `untrusted` sets above `own`, in the user's words (a grant
    /// the workspace's trust would give).
    pub(crate) fn raised_by(own: Self, untrusted: &Settings) -> Vec<(&'static str, String)> {
        let mut raised = Vec::new();
        if let Some(mode) = untrusted.search.as_deref().and_then(SearchMode::parse)
            && mode > own.mode
        {
            raised.push((
                "search",
                format!(
                    "search with the verifier {} (model calls and test runs beyond your setting)",
                    match mode {
                        SearchMode::Always => "on every turn",
                        _ => "after a failed attempt",
                    }
                ),
            ));
        }
        if let Some(n) = untrusted.search_candidates
            && n > own.candidates
        {
            raised.push((
                "search_candidates",
                format!("sample up to {n} candidate fixes per search"),
            ));
        }
        raised
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(json: &str) -> Settings {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn settings_are_read_in_both_spellings_and_bad_values_are_named() {
        let editor = settings(r#"{"search": "always", "searchCandidates": 6, "searchSeed": 3}"#);
        let config = SearchConfig::resolve(&[&editor]).unwrap();
        assert_eq!(
            config,
            SearchConfig {
                mode: SearchMode::Always,
                candidates: 6,
                seed: 3,
            }
        );
        assert_eq!(SearchConfig::resolve(&[]).unwrap(), SearchConfig::default());
        assert_eq!(
            SearchConfig::resolve(&[&settings(r#"{"search": "sometimes"}"#)]),
            Err(BadSearch::Mode("sometimes".into()))
        );
        assert_eq!(
            SearchConfig::resolve(&[&settings(r#"{"search_candidates": 0}"#)]),
            Err(BadSearch::Candidates(0))
        );
        assert_eq!(
            SearchConfig::resolve(&[&settings(r#"{"search_candidates": 17}"#)]),
            Err(BadSearch::Candidates(17))
        );
    }

    /// A cloned repository cannot make Rein spend more on a search than
    /// the user's settings do; it can make it spend less.
    #[test]
    fn an_untrusted_layer_only_lowers_the_search() {
        let own = SearchConfig::default();
        let raising =
            settings(r#"{"search": "always", "search_candidates": 16, "search_seed": 9}"#);
        assert_eq!(own.tightened(&raising), own);
        assert_eq!(
            SearchConfig::raised_by(own, &raising)
                .into_iter()
                .map(|(s, _)| s)
                .collect::<Vec<_>>(),
            ["search", "search_candidates"]
        );
        let lowering = settings(r#"{"search": "off", "search_candidates": 2}"#);
        assert_eq!(
            own.tightened(&lowering),
            SearchConfig {
                mode: SearchMode::Off,
                candidates: 2,
                seed: 0,
            }
        );
        assert!(SearchConfig::raised_by(own, &lowering).is_empty());
        // Through the merge: ignored and said so until trusted; lowering
        // applies either way.
        use crate::config::{Config, Layer, Source};
        let layer = |json: &str| Layer {
            source: Source::Workspace {
                fingerprint: "f".into(),
            },
            settings: settings(json),
        };
        let env = crate::config::tests::env(&[("ANTHROPIC_API_KEY", "k")]);
        let raising = layer(r#"{"search": "always", "search_candidates": 16}"#);
        let untrusted = Config::resolve(std::slice::from_ref(&raising), &env, false).unwrap();
        assert_eq!(untrusted.search, SearchConfig::default());
        let ignored: Vec<&str> = untrusted
            .ignored
            .iter()
            .map(|g| g.setting.as_str())
            .collect();
        assert_eq!(ignored, ["search", "search_candidates"]);
        let trusted = Config::resolve(&[raising], &env, true).unwrap();
        assert_eq!(
            trusted.search,
            SearchConfig {
                mode: SearchMode::Always,
                candidates: 16,
                seed: 0,
            }
        );
        let lowering = layer(r#"{"search": "off"}"#);
        let untrusted = Config::resolve(&[lowering], &env, false).unwrap();
        assert_eq!(untrusted.search.mode, SearchMode::Off);
        // Unreadable values tighten nothing (and raise nothing).
        let junk = settings(r#"{"search": "lots", "search_candidates": 0}"#);
        assert_eq!(own.tightened(&junk), own);
        assert!(SearchConfig::raised_by(own, &junk).is_empty());
    }

    /// A cloned repository cannot choose which candidates Rein samples:
    /// its `search_seed` is taken once the workspace is trusted, never
    /// before.
    #[test]
    fn an_untrusted_workspace_cannot_choose_the_search_seed() {
        use crate::config::{Config, Layer, Source};
        let workspace = Layer {
            source: Source::Workspace {
                fingerprint: "f".into(),
            },
            settings: settings(r#"{"search_seed": 9}"#),
        };
        let env = crate::config::tests::env(&[("ANTHROPIC_API_KEY", "k")]);
        let untrusted = Config::resolve(std::slice::from_ref(&workspace), &env, false).unwrap();
        assert_eq!(untrusted.search.seed, 0);
        let trusted = Config::resolve(&[workspace], &env, true).unwrap();
        assert_eq!(trusted.search.seed, 9);
    }
}
