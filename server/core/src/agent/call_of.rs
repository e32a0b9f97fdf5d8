//! What a model call is to the loop: a turn's own, or a search's
//! candidate (which counts as a turn only if it is the first).

/// What a model call is to the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CallOf {
    /// A turn's own call.
    Turn,
    /// One of a search's candidates. A search is one turn: only its first
    /// candidate counts as one (seen with a 1.5B model: four candidates
    /// counted as four turns ended three tasks at "max turns (8)" with a
    /// third to nine tenths of their time left); every candidate's
    /// tokens, cost and time count all the same.
    Candidate { first: bool },
}

impl CallOf {
    /// Whether its text goes to the front end as it comes: not a
    /// candidate's, most of which are never the model's answer.
    pub(super) fn streamed(self) -> bool {
        self == Self::Turn
    }

    /// Whether it counts against the turns budget.
    pub(super) fn new_turn(self) -> bool {
        !matches!(self, Self::Candidate { first: false })
    }
}
