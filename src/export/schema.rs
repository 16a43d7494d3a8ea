//! The version every JSON record the program writes carries.

/// The JSON schema version of every record the program writes (count, merge, scale).
///
/// A format constant: every record's `schema_version` field.
pub const SCHEMA_VERSION: u32 = 1;
