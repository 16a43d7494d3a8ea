// The quadrant engine's stored patterns grouped by signature on a GPU, before their tables
// are made (tables.wgsl): the host sends each sieve's dense words in the order its joins
// made them, with where each value of their pivots' bits (the lowest bits of a dense word)
// starts once grouped, and each pattern takes the next place of its value. Within a group
// the order is whichever the atomics give: a pattern of the other side visits every block
// of a group it is compatible with, so its count does not depend on it. A workgroup a
// block of 256 patterns, an invocation a pattern.

// (`params`: pair_params.wgsl)
// the stored patterns' dense words as they came, `per` 32-bit words a pattern
@group(0) @binding(1) var<storage, read> words: array<u32>;
// the same words grouped, each sieve's where its words came
@group(0) @binding(2) var<storage, read_write> grouped: array<u32>;
@group(0) @binding(3) var<storage, read> blocks: array<WordBlock>;
// each sieve's next place for each value of its pivots' bits
@group(0) @binding(4) var<storage, read_write> cursors: array<atomic<u32>>;

const BLOCK: u32 = 256u;

@compute @workgroup_size(BLOCK)
fn main(lane: BlockLane) {
    let t = lane.t;
    for (var b = lane.group.x; b < params.blocks; b += lane.groups.x) {
        let block = blocks[b];
        if t < block.patterns {
            let per = block.per_pattern;
            let first = block.words_at + t * per;
            let value = words[first] & ((1u << block.pivots) - 1u);
            let to = block.sieve_words_at + per * atomicAdd(&cursors[block.cursors_at + value], 1u);
            for (var w = 0u; w < per; w++) {
                grouped[to + w] = words[first + w];
            }
        }
    }
}
