// The quadrant engine's lookup tables (src/quadrant/sieve/layout.rs, `Sieve::slice`) made on
// a GPU from the stored patterns' dense words, once grouped (group.wgsl), before the pair
// kernel (pairs.wgsl) reads them. A workgroup a block of 256 patterns: each invocation sets
// its pattern's bit in the slice of every dense bit it holds (the slices in workgroup
// memory, a 256-bit set a dense bit), then fills one 32-bit word of one entry of every
// lookup: for each subset of a lookup's five slices, their OR. The host sends a pattern's
// dense word (8 bytes where it fits 64 bits) instead of the block's slices and leaves the
// sort and the transposes to the GPU.

// (`params`: pair_params.wgsl)
// the stored patterns' dense words, grouped, `per` 32-bit words a pattern, low word first
@group(0) @binding(1) var<storage, read> words: array<u32>;
// lookup `l`'s entry `s` of a block: tables[ENTRY_WORDS (first + ENTRIES l + s)..][..ENTRY_WORDS]
@group(0) @binding(2) var<storage, read_write> tables: array<u32>;
@group(0) @binding(3) var<storage, read> blocks: array<WordBlock>;

const BLOCK: u32 = 256u;
const ENTRY_WORDS: u32 = 8u;
const SUBSET_BITS: u32 = {SUBSET_BITS}u;
const ENTRIES: u32 = 1u << SUBSET_BITS;
// a dense word's bits at most: {DENSE_WORDS} words, the lookups' padding included
const MOST_BITS: u32 = ({DENSE_WORDS}u * 32u + SUBSET_BITS - 1u) / SUBSET_BITS * SUBSET_BITS;
// (a lookup's slices are read one by one below, an entry a word of an invocation's)
const_assert SUBSET_BITS == 5u;
const_assert ENTRIES * ENTRY_WORDS == BLOCK;

var<workgroup> slices: array<atomic<u32>, MOST_BITS * ENTRY_WORDS>;

@compute @workgroup_size(BLOCK)
fn main(lane: BlockLane) {
    let t = lane.t;
    for (var b = lane.group.x; b < params.blocks; b += lane.groups.x) {
        let block = blocks[b];
        let per = block.per_pattern;
        let lookups = block.lookups;
        for (var i = t; i < lookups * SUBSET_BITS * ENTRY_WORDS; i += BLOCK) {
            atomicStore(&slices[i], 0u);
        }
        workgroupBarrier();
        if t < block.patterns {
            let at = block.words_at + t * per;
            let word = t / 32u;
            let bit = 1u << (t % 32u);
            for (var w = 0u; w < per; w++) {
                // the dense bits the pattern holds, lowest first
                var held = words[at + w];
                while held != 0u {
                    let d = 32u * w + countTrailingZeros(held);
                    atomicOr(&slices[ENTRY_WORDS * d + word], bit);
                    held &= held - 1u;
                }
            }
        }
        workgroupBarrier();
        let s = t / ENTRY_WORDS;
        let w = t % ENTRY_WORDS;
        for (var l = 0u; l < lookups; l++) {
            let at = ENTRY_WORDS * SUBSET_BITS * l + w;
            // (each bit's slice picked by a select: no array indexed per lane)
            var entry = 0u;
            entry |= select(0u, atomicLoad(&slices[at]), (s & 1u) != 0u);
            entry |= select(0u, atomicLoad(&slices[at + ENTRY_WORDS]), (s & 2u) != 0u);
            entry |= select(0u, atomicLoad(&slices[at + 2u * ENTRY_WORDS]), (s & 4u) != 0u);
            entry |= select(0u, atomicLoad(&slices[at + 3u * ENTRY_WORDS]), (s & 8u) != 0u);
            entry |= select(0u, atomicLoad(&slices[at + 4u * ENTRY_WORDS]), (s & 16u) != 0u);
            tables[ENTRY_WORDS * (block.first_entry + ENTRIES * l + s) + w] = entry;
        }
        // (the next block clears the slices only once every invocation has read them)
        workgroupBarrier();
    }
}
