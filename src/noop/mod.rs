//! The noop backend (being written).
