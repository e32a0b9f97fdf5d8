//! Terminal I/O for `rein run` (being written).
