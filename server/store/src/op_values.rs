//! The values an op record is made of that other parts of the store name
//! too (errors name states, validation checks hashes): a leaf, so the op
//! log, the errors and the checks do not import each other in a circle.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::columns::UnknownName;

/// A file an op may touch and its content hash: 64 lowercase hex digits
/// (BLAKE3), or `""` when the file does not exist.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileHash {
    pub path: String,
    pub hash: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpState {
    Requested,
    Started,
    Finished,
    /// A crash left it requested or started; the caller reconciled it.
    Recovered,
}

impl OpState {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            OpState::Requested => "requested",
            OpState::Started => "started",
            OpState::Finished => "finished",
            OpState::Recovered => "recovered",
        }
    }
}

impl fmt::Display for OpState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for OpState {
    type Err = UnknownName;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [
            OpState::Requested,
            OpState::Started,
            OpState::Finished,
            OpState::Recovered,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
        .ok_or_else(|| UnknownName {
            what: "op state",
            value: text.to_owned(),
        })
    }
}
