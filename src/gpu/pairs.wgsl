// The quadrant engine's pair count (src/quadrant/sieve/offload.rs): for each pattern of the
// other side, the stored patterns that share a diagonal with it in the blocks its signature
// reaches. A block's lookup tables hold, for every subset of five of its seen diagonals, the
// 256-bit set of its patterns on one of them; a pattern's dense word picks one entry per
// lookup, and the popcount of their OR is its clashes with the block. Each invocation takes
// patterns `gid, gid + stride, ...` and writes each one's clashes (at most the stored
// patterns, 2^23: no 32-bit count wraps; the host adds them up in 64 bits).

struct Params {
    patterns: u32,
    // the most lookups of a sieve of the batch: a pattern's dense word is 0 past its own
    // sieve's, and the count is the same in every lane (read per pattern, it was 1.4 times
    // as slow on lavapipe: the word a lookup's bits lie in was then picked lane by lane)
    lookups: u32,
    unused0: u32,
    unused1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// entry `e` of the block whose first entry is `b`: tables[2 (b + e)] and the next
@group(0) @binding(1) var<storage, read> tables: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> reach: array<u32>;
// signature `s`'s reach: reach[reach_at[2 s]..reach_at[2 s + 1]]
@group(0) @binding(3) var<storage, read> reach_at: array<u32>;
// per pattern: its dense word in DENSE_WORDS words, then its signature (a batch holds many
// sieves: src/gpu/batch.rs)
@group(0) @binding(4) var<storage, read> patterns: array<u32>;
@group(0) @binding(5) var<storage, read_write> clashes: array<u32>;

const WG: u32 = {WG}u;
const DENSE_WORDS: u32 = {DENSE_WORDS}u;
const PATTERN_WORDS: u32 = DENSE_WORDS + 1u;
const SUBSET_BITS: u32 = {SUBSET_BITS}u;
const ENTRIES: u32 = 1u << SUBSET_BITS;

// The entry of lookup `l` that `dense` picks, as a vec4 offset within a block (0: the empty
// subset, which picks nothing). `l` is the same in every lane: the word is picked alike.
fn entry_of(dense: vec4<u32>, l: u32) -> u32 {
    let bit = l * SUBSET_BITS;
    let w = bit / 32u;
    let s = bit % 32u;
    var v = dense[w] >> s;
    if (s + SUBSET_BITS > 32u && w + 1u < DENSE_WORDS) {
        v |= dense[w + 1u] << (32u - s);
    }
    let subset = v & (ENTRIES - 1u);
    return select(0u, (l * ENTRIES + subset) * 2u, subset != 0u);
}

@compute @workgroup_size(WG)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let stride = groups.x * WG;
    let lookups = params.lookups;
    for (var i = gid.x; i < params.patterns; i += stride) {
        let at = i * PATTERN_WORDS;
        // the entries are worked out again for each block from the dense word: a private
        // array of them, indexed per lane, lives in memory (on lavapipe it was 1.2 times
        // as slow)
        let dense = vec4<u32>(patterns[at], patterns[at + 1u], patterns[at + 2u], patterns[at + 3u]);
        let signature = patterns[at + DENSE_WORDS];
        var count = 0u;
        for (var r = reach_at[2u * signature]; r < reach_at[2u * signature + 1u]; r++) {
            let block = reach[r] * 2u;
            var low = vec4<u32>(0u);
            var high = vec4<u32>(0u);
            for (var l = 0u; l < lookups; l++) {
                let entry = entry_of(dense, l);
                if (entry != 0u) {
                    low |= tables[block + entry];
                    high |= tables[block + entry + 1u];
                }
            }
            let c = countOneBits(low) + countOneBits(high);
            count += c.x + c.y + c.z + c.w;
        }
        clashes[i] = count;
    }
}
