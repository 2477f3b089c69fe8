//! refault-scenario: scenario files (TOML) resolved into a [`Scenario`].

pub mod model;
pub use model::*;
