//! How the library reads the environment variables a caller hands it (`NQUEENS_THREADS`, a
//! scheduler's shard, the race's settings): one rule for all of them.

use crate::error::Error;
use crate::parallel::MAX_THREADS;

/// The variable that sets the worker threads.
const THREADS: &str = "NQUEENS_THREADS";

/// `var(name)`, where a variable set to nothing (or to spaces) is as if unset.
pub(crate) fn set(var: impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    var(name).filter(|v| !v.trim().is_empty())
}

/// The thread counts [`THREADS`] lists (one, or several separated by commas), each from 1
/// to [`MAX_THREADS`]; `None` where it is unset.
pub(crate) fn threads(var: impl Fn(&str) -> Option<String>) -> Result<Option<Vec<usize>>, Error> {
    let Some(value) = set(var, THREADS) else {
        return Ok(None);
    };
    let each = value.split(',').map(|t| match t.trim().parse::<usize>() {
        Ok(t) if (1..=MAX_THREADS).contains(&t) => Ok(t),
        _ => Err(Error::BadEnv(format!(
            "invalid value '{value}' for the variable {THREADS}: threads must be an integer from 1 to {MAX_THREADS}"
        ))),
    });
    each.collect::<Result<Vec<_>, _>>().map(Some)
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

    #[test]
    fn threads_are_one_count_or_a_list_and_a_bad_one_names_the_variable() {
        let threads = |value: &str| super::threads(|_| Some(value.to_string()));
        assert_eq!(threads("3").unwrap(), Some(vec![3]));
        assert_eq!(threads(" 1,2 ,4 ").unwrap(), Some(vec![1, 2, 4]));
        assert_eq!(threads("").unwrap(), None);
        assert_eq!(super::threads(|_| None).unwrap(), None);
        for bad in ["0", "abc", "1,,2", "4097", "-1"] {
            let line = threads(bad).unwrap_err().to_string();
            assert!(
                line.contains("NQUEENS_THREADS") && line.contains(&format!("'{bad}'")),
                "{line}"
            );
        }
    }
}
