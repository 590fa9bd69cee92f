//! The integration tests of cutec-layout, in one binary (modules under `suite/`).

mod suite;
