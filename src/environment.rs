//! How the library reads the environment variables a caller hands it (a scheduler's shard,
//! the race's settings): one rule for all of them.

/// `var(name)`, where a variable set to nothing (or to spaces) is as if unset, as clap
/// takes `NQUEENS_THREADS`.
pub(crate) fn set(var: impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    var(name).filter(|v| !v.trim().is_empty())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_variable_set_to_nothing_is_unset() {
        let var = |name: &str| Some(name.to_string());
        assert_eq!(super::set(var, "X").as_deref(), Some("X"));
        for empty in ["", "  "] {
            assert_eq!(super::set(|_| Some(empty.to_string()), "X"), None);
        }
        assert_eq!(super::set(|_| None, "X"), None);
    }
}
