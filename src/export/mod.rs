//! What the program prints, as pure functions of results: a count's plain line, JSON record
//! and stats line ([`count`]), and the `list` formats (`list`: [`crate::Format`]). `merge`
//! reads and writes the count record. Every JSON document carries [`SCHEMA_VERSION`].

pub mod count;
pub(crate) mod list;
mod schema;

pub use schema::SCHEMA_VERSION;
