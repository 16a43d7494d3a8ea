//! The row search's GPU backend: subtasks cut into items on the host ([`items`]), each
//! counted by `count.wgsl` (persistent invocations, one depth-first search per item at a
//! time: [`dispatch`]), the counts folded back into their subtasks ([`ledger`]) by the
//! executor, which feeds the GPUs beside the CPU's threads ([`executor`]). Results are the
//! CPU's, subtask by subtask (nodes included), so shards, checkpoints and merge do not know
//! which device counted what.

pub(crate) mod dispatch;
pub(crate) mod executor;
pub(crate) mod items;
pub(crate) mod ledger;
pub(crate) mod trust;
pub(crate) mod wire;
