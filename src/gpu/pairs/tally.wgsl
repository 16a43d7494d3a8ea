// Atomic adds to the same word gathered in a workgroup first (order.wgsl's cursors): a
// sieve's patterns are of a few signatures (about ten at N = 19), and lanes adding one to
// the same word wait on each other. A workgroup takes WG consecutive patterns at a time:
// each lane finds its key (a signature) a bucket in workgroup memory (TALLY_BUCKETS, one a
// lane), the key's first lane there claiming it, and takes a rank among its bucket's
// lanes; then one lane a bucket adds its lanes to the word at once. A lane whose bucket another key holds adds
// alone. Between barriers: call them in uniform control flow. On a GPU it halved the order
// pass; a CPU-emulated adapter pays for the barriers instead (docs/benchmarks.md, "The GPU
// code's choices").

const TALLY_BUCKETS: u32 = {TALLY_BUCKETS}u;
const_assert TALLY_BUCKETS <= WG;

var<workgroup> tally_keys: array<atomic<u32>, TALLY_BUCKETS>;
var<workgroup> tally_counts: array<atomic<u32>, TALLY_BUCKETS>;
// the first of each bucket's places (order.wgsl)
var<workgroup> tally_bases: array<u32, TALLY_BUCKETS>;

// Empties lane `lane`'s bucket, where it has one; a barrier must follow before any lane
// takes one.
fn tally_reset(lane: u32) {
    if lane < TALLY_BUCKETS {
        atomicStore(&tally_keys[lane], NO_PATTERN);
        atomicStore(&tally_counts[lane], 0u);
    }
}

// The bucket `key` (NO_PATTERN: none) is tallied in and the lane's rank there, or
// NO_PATTERN where another key holds its bucket.
fn tally_in(key: u32) -> vec2<u32> {
    var taken = vec2<u32>(NO_PATTERN, 0u);
    if key == NO_PATTERN {
        return taken;
    }
    let bucket = key % TALLY_BUCKETS;
    loop {
        let seen = atomicCompareExchangeWeak(&tally_keys[bucket], NO_PATTERN, key);
        if seen.exchanged || seen.old_value == key {
            taken = vec2<u32>(bucket, atomicAdd(&tally_counts[bucket], 1u));
            break;
        }
        if seen.old_value != NO_PATTERN {
            break;
        }
        // (a weak exchange may fail with the bucket empty: again)
    }
    return taken;
}
