//! Random boards and prefixes against the naive solver.

use crate::naive;
use nqueens::{count, count_completions, CountOptions, EngineChoice};
use proptest::prelude::*;

pub fn valid_prefix(n: usize, picks: &[usize]) -> Vec<usize> {
    // greedily keep the picks that fit, so every generated prefix is valid
    let mut prefix: Vec<usize> = Vec::new();
    for &p in picks {
        let col = p % n;
        if prefix.len() < n
            && !naive::attacked(&[prefix.as_slice(), &[col]].concat(), prefix.len(), col)
        {
            prefix.push(col);
        }
    }
    prefix
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_prefix_completions(n in 1usize..=10, picks in proptest::collection::vec(0usize..10, 0..6), threads in 1usize..=3, depth in 1usize..=3) {
        let prefix = valid_prefix(n, &picks);
        let expected = naive::solutions_from(n, &prefix).len() as u128;
        for kernel in crate::counts::kernels("random prefixes") {
            let opts = CountOptions { threads: Some(threads), split_depth: Some(depth.min(n)), kernel, ..CountOptions::default() };
            prop_assert_eq!(count_completions(n, &prefix, &opts).unwrap().total, expected);
        }
    }

    #[test]
    fn random_board_counts(n in 1usize..=10, mirror in any::<bool>(), threads in 1usize..=3) {
        // the full-symmetry engine starts at N = 4 (asked for below, it is refused)
        let engine = if mirror || n < 4 { EngineChoice::Mirror } else { EngineChoice::D4 };
        let opts = CountOptions { threads: Some(threads), engine, unique: true, ..CountOptions::default() };
        let c = count(n, &opts).unwrap();
        prop_assert_eq!(c.total, naive::solutions(n).len() as u128);
        prop_assert_eq!(c.unique, Some(naive::unique_count(n) as u128));
    }
}
