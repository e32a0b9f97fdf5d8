//! `rein trace` (being written).
