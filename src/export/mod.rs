//! What the program prints of a count, as pure functions of results: its plain line, JSON
//! record and stats line ([`count`]). `merge` reads and writes the count record. Every JSON
//! document carries [`SCHEMA_VERSION`].

pub mod count;
mod schema;

pub use schema::SCHEMA_VERSION;
