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
// two for each block: where its words start, its first entry in the tables, its patterns,
// and `per` | lookups << 8 | pivots << 16; where its sieve's words and cursors start
@group(0) @binding(3) var<storage, read> blocks: array<vec4<u32>>;
// each sieve's next place for each value of its pivots' bits
@group(0) @binding(4) var<storage, read_write> cursors: array<atomic<u32>>;

const BLOCK: u32 = 256u;

@compute @workgroup_size(BLOCK)
fn main(lane: BlockLane) {
    let t = lane.t;
    for (var b = lane.group.x; b < params.blocks; b += lane.groups.x) {
        let block = blocks[2u * b];
        let sieve = blocks[2u * b + 1u];
        if t < block.z {
            let per = block.w & 0xFFu;
            let pivots = block.w >> 16u;
            let first = block.x + t * per;
            let value = words[first] & ((1u << pivots) - 1u);
            let to = sieve.x + per * atomicAdd(&cursors[sieve.y + value], 1u);
            for (var w = 0u; w < per; w++) {
                grouped[to + w] = words[first + w];
            }
        }
    }
}
