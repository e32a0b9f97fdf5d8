//! Reading our own encodings back out of a row: enum names stored as text
//! and small JSON arrays. A value we cannot read is reported as a
//! conversion failure of that column, never a panic.

use std::str::FromStr;

use rusqlite::Row;
use rusqlite::types::Type;
use serde::de::DeserializeOwned;

/// A text column that is not one of the names of its enum.
#[derive(Debug, thiserror::Error)]
#[error("{value:?} is not a known {what}")]
pub struct UnknownName {
    pub what: &'static str,
    pub value: String,
}

fn conversion(
    index: usize,
    error: impl std::error::Error + Send + Sync + 'static,
) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(index, Type::Text, Box::new(error))
}

/// Reads an enum stored by its name.
pub(crate) fn name<T>(row: &Row<'_>, column: &str) -> rusqlite::Result<T>
where
    T: FromStr<Err = UnknownName>,
{
    let index = row.as_ref().column_index(column)?;
    let text: String = row.get(index)?;
    text.parse().map_err(|error| conversion(index, error))
}

/// Reads a JSON column that the store itself wrote.
pub(crate) fn json<T: DeserializeOwned>(row: &Row<'_>, column: &str) -> rusqlite::Result<T> {
    let index = row.as_ref().column_index(column)?;
    let text: String = row.get(index)?;
    serde_json::from_str(&text).map_err(|error| conversion(index, error))
}

/// Reads a non-negative INTEGER column as `u64` (the schema's CHECKs keep
/// them non-negative).
pub(crate) fn unsigned(row: &Row<'_>, column: &str) -> rusqlite::Result<u64> {
    let index = row.as_ref().column_index(column)?;
    let value: i64 = row.get(index)?;
    u64::try_from(value).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(index, value))
}
