//! Everything the program prints, as pure functions of results: the count's plain line,
//! JSON record and stats line ([`count`]), the scale report's table, CSV, markdown and JSON
//! ([`scale`]). `merge` reads and writes the count record. Every JSON document carries
//! [`SCHEMA_VERSION`].

pub mod count;
pub mod scale;
mod schema;

pub use schema::SCHEMA_VERSION;
