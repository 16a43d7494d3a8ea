// The parameters of a batch's dispatches (src/gpu/pairs.rs), one buffer for all of its
// kernels: each is compiled after this.

struct Params {
    // patterns of the other side
    patterns: u32,
    // the most lookups of a sieve of the batch (at most 26: a dense word's 128 bits); a
    // pattern's dense word is 0 past its own sieve's
    lookups: u32,
    // the stored blocks of the batch (the tables to make, where it was sent words)
    blocks: u32,
    // words a pattern of the other side takes once in signature order: NARROW_WORDS or
    // DENSE_WORDS + 1 (sent as it came, RAW_WORDS, where the GPU signs it: sign.wgsl)
    pattern_words: u32,
    // 1 where the GPU put the other side in signature order (order.wgsl): the pair kernel
    // knows the patterns it spot-checks by where they came
    ordered_here: u32,
    // sieves of the batch: the pair kernel writes its spot checks' clashes past their sums
    sieves: u32,
    // patterns between two of the pair kernel's spot checks past each sieve's first
    spot_every: u32,
    // where the join's hints start among the cells' words (join.wgsl)
    hints_at: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

// The signature join.wgsl writes for a candidate that is no pattern: order.wgsl passes
// over it, and the place it would have taken is left empty (`origin` 0 there), which
// pairs.wgsl passes over.
const NO_PATTERN: u32 = 0xFFFFFFFFu;
