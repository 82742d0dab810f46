//! The number guard (being written).
