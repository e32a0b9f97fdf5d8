//! Content hashes identify an exact text, wherever it lives: a buffer, a
//! file on disk, the text an edit is expected to produce. They are BLAKE3
//! over the UTF-8 bytes, so the hash of a rope equals the hash of the same
//! text read from disk.

use std::fmt;

use ropey::Rope;

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentHash([u8; 32]);

impl ContentHash {
    pub fn of_bytes(bytes: &[u8]) -> Self {
        Self(*blake3::hash(bytes).as_bytes())
    }

    pub fn of_str(text: &str) -> Self {
        Self::of_bytes(text.as_bytes())
    }

    /// Hashes a rope without building a `String` of it.
    pub fn of_rope(rope: &Rope) -> Self {
        // Rope chunks are about 1 KB; BLAKE3 only hashes several KB-sized
        // chunks in parallel (SIMD) when it gets them in one `update`, so
        // feed it 64 KB at a time.
        const BATCH: usize = 64 * 1024;
        let mut hasher = blake3::Hasher::new();
        let mut batch = Vec::with_capacity(BATCH.min(rope.len_bytes()));
        for chunk in rope.chunks() {
            if batch.len() + chunk.len() > BATCH {
                hasher.update(&batch);
                batch.clear();
            }
            batch.extend_from_slice(chunk.as_bytes());
        }
        hasher.update(&batch);
        Self(*hasher.finalize().as_bytes())
    }

    /// The full hash as 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }

    /// Parses what [`ContentHash::to_hex`] wrote.
    pub fn from_hex(hex: &str) -> Option<Self> {
        blake3::Hash::from_hex(hex)
            .ok()
            .map(|h| Self(*h.as_bytes()))
    }
}

/// Serialized as the 64-digit hex string, readable in traces and state.
impl serde::Serialize for ContentHash {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_hex())
    }
}

impl<'de> serde::Deserialize<'de> for ContentHash {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let hex = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Self::from_hex(&hex).ok_or_else(|| serde::de::Error::custom("expected 64 hex digits"))
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for ContentHash {
    /// Twelve hex digits are plenty to tell hashes apart in logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContentHash({})", &self.to_hex()[..12])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rope_and_string_hash_alike() {
        // Large enough that ropey splits it into many chunks.
        let text = "fn main() {\r\n    println!(\"😀 é 中\");\n}\n".repeat(500);
        let rope = Rope::from_str(&text);
        assert!(rope.chunks().count() > 1);
        assert_eq!(ContentHash::of_rope(&rope), ContentHash::of_str(&text));
        assert_ne!(ContentHash::of_str(&text), ContentHash::of_str(""));
    }

    #[test]
    fn hex_round_trips() {
        let h = ContentHash::of_str("abc");
        assert_eq!(ContentHash::from_hex(&h.to_hex()), Some(h));
        assert_eq!(ContentHash::from_hex("not hex"), None);
    }
}
