//! Subtask identity, pinned: checkpoints and shard results name subtasks by id, so a change
//! that reorders or recuts the subtasks of a plan breaks every saved file. The digests below
//! were computed once and checked in; a test that compared two plans built by the same
//! program could not see such a change.

use nqueens::CountOptions;
use nqueens::{run, EngineChoice, Hooks, Plan, RunRequest};

/// A digest computed here, independent of `Plan::digest`: FNV-1a over each subtask's frame
/// index and queens in id order (a change to `Plan::digest` itself cannot hide a reorder).
/// The quadrant engine's units are not row prefixes: up to N = 13 what each id counts is
/// digested instead; past it `Plan::digest` (its rule, size and units at 256 ids) pins them.
fn subtask_list_digest(plan: &Plan) -> String {
    if plan.engine() == nqueens::Engine::Quadrant {
        return quadrant_counts_digest(plan);
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

/// FNV-1a over what each unit id of a quadrant plan counts, in id order (`-` past N = 13).
fn quadrant_counts_digest(plan: &Plan) -> String {
    if plan.n() > 13 {
        return "-".into();
    }
    let request = RunRequest::new(
        plan.n(),
        CountOptions {
            engine: EngineChoice::Quadrant,
            ..CountOptions::default()
        },
        None,
    );
    let parts = run(&request, &Hooks::default()).unwrap().parts;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.total.to_le_bytes() {
            h = (h ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
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
    (
        1,
        EngineChoice::Quadrant,
        None,
        1,
        "2eb8866f",
        "89cd31291d2aefa4",
    ),
    (
        2,
        EngineChoice::Quadrant,
        None,
        1,
        "a5e789fc",
        "a8c7f832281a39c5",
    ),
    (
        3,
        EngineChoice::Quadrant,
        None,
        2,
        "03fc5b6d",
        "88201fb960ff6465",
    ),
    (
        4,
        EngineChoice::Quadrant,
        None,
        3,
        "4c042a3d",
        "1fce6b6726665387",
    ),
    (
        5,
        EngineChoice::Quadrant,
        None,
        9,
        "63ebc33a",
        "1cc7f95e184555c7",
    ),
    (
        8,
        EngineChoice::Quadrant,
        None,
        35,
        "088964c4",
        "f7a39b70a3675e05",
    ),
    (
        9,
        EngineChoice::Quadrant,
        None,
        175,
        "b6eb6b26",
        "f476e34a21b51e05",
    ),
    (
        12,
        EngineChoice::Quadrant,
        None,
        462,
        "ac4ad5b5",
        "51932dcf150867cd",
    ),
    (
        13,
        EngineChoice::Quadrant,
        None,
        3234,
        "fb90ff1d",
        "f72665514df33c9d",
    ),
    (16, EngineChoice::Quadrant, None, 6435, "28a933ed", "-"),
    (17, EngineChoice::Quadrant, None, 57915, "010b732e", "-"),
    (18, EngineChoice::Quadrant, None, 24310, "6af51e69", "-"),
    (19, EngineChoice::Quadrant, None, 243100, "79ea5f9d", "-"),
    (20, EngineChoice::Quadrant, None, 92378, "7319d60f", "-"),
    (21, EngineChoice::Quadrant, None, 1016158, "66269193", "-"),
    (22, EngineChoice::Quadrant, None, 352716, "b3c9c158", "-"),
    (23, EngineChoice::Quadrant, None, 4232592, "6643a869", "-"),
    (24, EngineChoice::Quadrant, None, 1352078, "698cad3d", "-"),
    (25, EngineChoice::Quadrant, None, 17577014, "7aab7d32", "-"),
    (26, EngineChoice::Quadrant, None, 5200300, "f876e733", "-"),
    (27, EngineChoice::Quadrant, None, 72804200, "a7fb397d", "-"),
    (28, EngineChoice::Quadrant, None, 20058300, "8c6c4079", "-"),
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
             shard results no longer match; if that is intended, make sure their plan digest \
             changed too (it refuses them) and update this table"
        );
    }
}
