//! What the program prints, as pure functions of results: a count's plain line, JSON record
//! and stats line ([`count`]), an estimate's lines ([`crate::Estimate::to_json`]), and the
//! `list` formats (`list`: [`crate::Format`]). `merge` reads and writes the count record. Every JSON document carries [`SCHEMA_VERSION`].

pub mod count;
mod estimate;
pub(crate) mod list;
mod schema;

pub use schema::SCHEMA_VERSION;
