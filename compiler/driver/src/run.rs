//! `cutec run` (being written).
