//! The full-symmetry engine against mirror halving and brute force, solution by solution.

use crate::naive;
use nqueens::{EngineChoice, Plan};
use std::collections::BTreeMap;

/// canonical form -> (number of counted boards in the class, weight they add up to)
fn classes(n: usize, engine: EngineChoice, depth: usize) -> BTreeMap<Vec<usize>, (u32, u32)> {
    let plan = Plan::new(n, engine, None, Some(depth.min(n))).unwrap();
    let mut map = BTreeMap::new();
    for id in 0..plan.len() {
        plan.for_each_counted(id, |q, weight| {
            let q: Vec<usize> = q.iter().map(|&c| c as usize).collect();
            assert!(naive::is_solution(&q), "{q:?}");
            let entry = map.entry(naive::canonical(&q)).or_insert((0, 0));
            entry.0 += 1;
            entry.1 += weight as u32;
        })
        .unwrap();
    }
    map
}

#[test]
fn d4_reaches_every_class_once_with_its_orbit_size() {
    for n in 4..=12 {
        // brute force: every class with the number of solutions in it
        let mut orbits: BTreeMap<Vec<usize>, u32> = BTreeMap::new();
        for q in naive::solutions(n) {
            *orbits.entry(naive::canonical(&q)).or_default() += 1;
        }
        for depth in [1, 3] {
            let d4 = classes(n, EngineChoice::D4, depth);
            let mirror = classes(n, EngineChoice::Mirror, depth);
            assert_eq!(d4.len(), orbits.len(), "n={n}: classes");
            for (form, &orbit) in &orbits {
                assert_eq!(d4[form], (1, orbit), "n={n} d4 class {form:?}");
                assert_eq!(mirror[form].1, orbit, "n={n} mirror class {form:?}");
            }
        }
    }
}
