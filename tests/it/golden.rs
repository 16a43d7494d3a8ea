//! Subtask identity, pinned: checkpoints and shard results name subtasks by id, so a change
//! that reorders or recuts the subtasks of a plan breaks every saved file. The digests below
//! were computed once and checked in; a test that compared two plans built by the same
//! program could not see such a change.

use nqueens::CountOptions;
use nqueens::{EngineChoice, Plan};

/// A digest computed here, independent of `Plan::digest`: FNV-1a over each subtask's frame
/// index and queens in id order (a change to `Plan::digest` itself cannot hide a reorder).
/// The quadrant engine's units are not row prefixes: `Plan::digest` alone pins them.
fn subtask_list_digest(plan: &Plan) -> String {
    if plan.engine() == nqueens::Engine::Quadrant {
        return "-".into();
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |v: u64| {
        for byte in v.to_le_bytes() {
            h = (h ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for id in 0..plan.len() {
        let task = plan.subtask(id).unwrap();
        eat(u64::from(task.frame));
        // the one-hot row masks of the prefix's queens
        for &col in &task.prefix[..plan.depth()] {
            eat(1u64 << col);
        }
    }
    format!("{h:016x}")
}

/// (N, engine, split depth (None: the default), subtasks, `Plan::digest`, digest of the list)
type Golden = (
    usize,
    EngineChoice,
    Option<usize>,
    usize,
    &'static str,
    &'static str,
);

/// A failing assertion prints the new values.
const GOLDEN: &[Golden] = &[
    (
        8,
        EngineChoice::Mirror,
        Some(2),
        21,
        "82f60f25",
        "16f0068670f2d09d",
    ),
    (
        12,
        EngineChoice::Mirror,
        None,
        8426,
        "c9bb8629",
        "a5c96caf26e8db51",
    ),
    (
        12,
        EngineChoice::D4,
        Some(3),
        618,
        "ad6be93f",
        "8d41415d8fc480fd",
    ),
    (
        16,
        EngineChoice::D4,
        None,
        2348,
        "1617f22e",
        "6c526ba2f367cc17",
    ),
    (
        17,
        EngineChoice::Mirror,
        None,
        14272,
        "f1e2dba9",
        "42ef33191ed7b199",
    ),
    (
        18,
        EngineChoice::D4,
        None,
        32939,
        "283a5146",
        "60285b6cc5858483",
    ),
    (1, EngineChoice::Quadrant, None, 1, "771874ae", "-"),
    (2, EngineChoice::Quadrant, None, 1, "f2c82edb", "-"),
    (3, EngineChoice::Quadrant, None, 2, "294f0b0c", "-"),
    (4, EngineChoice::Quadrant, None, 3, "a6de34ec", "-"),
    (5, EngineChoice::Quadrant, None, 9, "f203ac4a", "-"),
    (8, EngineChoice::Quadrant, None, 23, "06851a9d", "-"),
    (9, EngineChoice::Quadrant, None, 163, "4001abbd", "-"),
    (12, EngineChoice::Quadrant, None, 252, "f173a787", "-"),
    (13, EngineChoice::Quadrant, None, 3024, "cde1f5e7", "-"),
    (16, EngineChoice::Quadrant, None, 3299, "f817db49", "-"),
    (17, EngineChoice::Quadrant, None, 54779, "c0a9b5c0", "-"),
    (18, EngineChoice::Quadrant, None, 12283, "96d9335d", "-"),
    (19, EngineChoice::Quadrant, None, 231073, "e1d8054c", "-"),
    (20, EngineChoice::Quadrant, None, 46508, "0908f62e", "-"),
    (21, EngineChoice::Quadrant, None, 970288, "31ef8f68", "-"),
    (22, EngineChoice::Quadrant, None, 176870, "2764576a", "-"),
    (23, EngineChoice::Quadrant, None, 4056746, "f9ce8dfc", "-"),
];

fn plan_of(n: usize, engine: EngineChoice, depth: Option<usize>) -> Plan {
    match depth {
        Some(_) => Plan::new(n, engine, None, depth).unwrap(),
        // the plan `count` itself builds
        None => CountOptions {
            engine,
            ..CountOptions::default()
        }
        .plan(n, None)
        .unwrap(),
    }
}

#[test]
fn subtask_ids_are_those_of_the_checked_in_digests() {
    for &(n, engine, depth, len, digest, list) in GOLDEN {
        let plan = plan_of(n, engine, depth);
        let got = (plan.len(), plan.digest(), subtask_list_digest(&plan));
        assert_eq!(
            got,
            (len, digest.to_string(), list.to_string()),
            "N={n} {engine:?} depth {depth:?}: the subtasks changed, so saved checkpoints and \
             shard results no longer match; if that is intended, bump the checkpoint and shard \
             format versions and update this table"
        );
    }
}
