// The quadrant engine's pair count (src/quadrant/sieve/offload.rs): for each pattern of the
// other side, the stored patterns that share a diagonal with it in the blocks its signature
// reaches. A block's lookup tables (sent, or filled by tables.wgsl before) hold, for every
// subset of five of its seen diagonals, the 256-bit set of its patterns on one of them; a
// pattern's dense word picks one entry per lookup, and the popcount of their OR is its
// clashes with the block. A workgroup takes the consecutive patterns from its start to the
// next workgroup's (stretches of about equal cost: src/gpu/pairs/batch.rs), a lane every WG-th of
// them, and each lane adds its patterns' clashes up in its own registers while they are of
// one sieve (a sieve's patterns lie together), then into the sieve's sum with one atomic
// add; the clashes of the patterns the host spot-checks (each sieve's first, those at
// multiples of `params.spot_every` in the batch, known by where they came: where
// order.wgsl put them in signature order, it noted that place) are written out besides. A
// pattern's clashes are at most the stored patterns, 2^23: no 32-bit count wraps; a run
// and a sieve's sum are kept in 64 bits.

// (`params`: pair_params.wgsl)
// entry `e` of the block whose first entry is `b`: tables[b + e]
@group(0) @binding(1) var<storage, read> tables: array<vec4<u64>>;
@group(0) @binding(2) var<storage, read> reach: array<u32>;
// signature `s`'s reach, head, sieve and its sieve's first pattern (ReachAt: wire.rs)
@group(0) @binding(3) var<storage, read> reach_at: array<ReachAt>;
// per pattern (a batch holds many sieves: src/gpu/pairs/batch.rs), its signature last, before it
// its dense word in DENSE_WORDS words, or its bits past the pivots in two (NARROW_WORDS in
// all: its pivots' bits are its signature's head)
@group(0) @binding(4) var<storage, read> patterns: array<u32>;
// each sieve's SieveSums, SUM_WORDS words (its clashes' low word first, its first
// pattern's at SUM_FIRST); past the batch's sieves', the clashes of the patterns at
// multiples of `params.spot_every` (zeroed before the pass)
@group(0) @binding(5) var<storage, read_write> sums: array<atomic<u32>>;
// one past where each pattern came, where the GPU put them in signature order (order.wgsl;
// 0: a place no pattern took)
@group(0) @binding(6) var<storage, read> origin: array<u32>;
// where each workgroup's patterns start, and past the last where they end
@group(0) @binding(7) var<storage, read> starts: array<u32>;

const WG: u32 = {WG}u;
const SUM_WORDS: u32 = {SUM_WORDS}u;
const SUM_FIRST: u32 = {SUM_FIRST}u;
const DENSE_WORDS: u32 = {DENSE_WORDS}u;
const NARROW_WORDS: u32 = {NARROW_WORDS}u;
// (a wide word is read as two 64-bit halves below)
const_assert DENSE_WORDS == 4u;
const SUBSET_BITS: u32 = {SUBSET_BITS}u;
const ENTRIES: u32 = 1u << SUBSET_BITS;

// The subset of lookup `l` that a dense word picks (0: none), the word as its low and high
// 64 bits.
fn subset_of(low: u64, high: u64, l: u32) -> u32 {
    let bit = l * SUBSET_BITS;
    let shift = bit & 63u;
    // a subset may straddle the two halves
    let from_low = (low >> shift) | select(0lu, high << (64u - shift), shift != 0u);
    return u32(select(from_low, high >> shift, bit >= 64u)) & (ENTRIES - 1u);
}

// no sieve: a lane's before its first pattern
const NO_SIEVE: u32 = 0xFFFFFFFFu;

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) lane: u32,
    @builtin(workgroup_id) group: vec3<u32>,
) {
    // adjacent lanes hold adjacent patterns, and a lane's run is of one sieve but where a
    // sieve ends in it
    var sieve = NO_SIEVE;
    var run = 0lu;
    let end = starts[group.x + 1u];
    for (var i = starts[group.x] + lane; i < end; i += WG) {
        var came = i;
        if params.ordered_here != 0u {
            if origin[i] == 0u {
                continue;
            }
            came = origin[i] - 1u;
        }
        let at = i * params.pattern_words;
        let signature = patterns[at + params.pattern_words - 1u];
        let count = clashes_of(at, signature);
        let its_sieve = reach_at[signature].sieve;
        if its_sieve != sieve {
            add_run(sieve, run);
            sieve = its_sieve;
            run = 0lu;
        }
        run += u64(count);
        if came == reach_at[signature].first {
            atomicStore(&sums[SUM_WORDS * sieve + SUM_FIRST], count);
        }
        if came % params.spot_every == 0u {
            atomicStore(&sums[SUM_WORDS * params.sieves + came / params.spot_every], count);
        }
    }
    add_run(sieve, run);
}

// Adds a lane's run of clashes, `run`, to sieve `sieve`'s sum, in two 32-bit words.
fn add_run(sieve: u32, run: u64) {
    if sieve == NO_SIEVE || run == 0lu {
        return;
    }
    let low = u32(run);
    let before = atomicAdd(&sums[SUM_WORDS * sieve], low);
    // the low word wrapped: one more in the high one
    let carry = select(0u, 1u, before + low < before);
    let high = u32(run >> 32u) + carry;
    if high != 0u {
        atomicAdd(&sums[SUM_WORDS * sieve + 1u], high);
    }
}

// The clashes of the pattern whose words start at `patterns[at]`, of signature `signature`,
// with the stored blocks its signature reaches.
fn clashes_of(at: u32, signature: u32) -> u32 {
    var low = u64(patterns[at]) | (u64(patterns[at + 1u]) << 32u);
    var high = 0lu;
    if params.pattern_words == NARROW_WORDS {
        // the rest moved past the pivots, which are the signature's
        let head = reach_at[signature].head;
        let rest_at = head >> 16u;
        high = select(0lu, low >> (64u - rest_at), rest_at != 0u);
        low = u64(head & 0xFFFFu) | (low << rest_at);
    } else {
        high = u64(patterns[at + 2u]) | (u64(patterns[at + 3u]) << 32u);
    }
    // the lookups whose subset is not empty, once a pattern: a block then costs a step
    // per entry read, not per lookup. The entries themselves are worked out again for
    // each block: kept in a private array indexed per lane, they would live in memory.
    var picks = 0u;
    for (var l = 0u; l < params.lookups; l++) {
        picks |= select(0u, 1u << l, subset_of(low, high, l) != 0u);
    }
    // two blocks a step: an entry's place in a block is worked out once for both, and
    // their loads are independent. The second accumulator is 8 more registers a lane:
    // the kernel takes no workgroup memory, so on a GPU the registers set the occupancy.
    var count = 0u;
    let end = reach_at[signature].end;
    var r = reach_at[signature].start;
    for (; r + 1u < end; r += 2u) {
        let first = reach[r];
        let second = reach[r + 1u];
        var clash = vec4<u64>(0lu);
        var other = vec4<u64>(0lu);
        var left = picks;
        while (left != 0u) {
            let l = firstTrailingBit(left);
            left &= left - 1u;
            let entry = l * ENTRIES + subset_of(low, high, l);
            clash |= tables[first + entry];
            other |= tables[second + entry];
        }
        // at most 256 each
        let c = countOneBits(clash) + countOneBits(other);
        count += u32(c.x + c.y + c.z + c.w);
    }
    if (r < end) {
        let block = reach[r];
        var clash = vec4<u64>(0lu);
        var left = picks;
        while (left != 0u) {
            let l = firstTrailingBit(left);
            left &= left - 1u;
            clash |= tables[block + l * ENTRIES + subset_of(low, high, l)];
        }
        let c = countOneBits(clash);
        count += u32(c.x + c.y + c.z + c.w);
    }
    return count;
}
