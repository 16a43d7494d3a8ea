// The quadrant engine's other side signed on a GPU over a bus, before it is put in
// signature order (order.wgsl): what sign.wgsl (patterns sent as the host's joins made
// them) and join.wgsl (patterns joined here from the quarter tables) share. For each
// pattern it gathers what the host's sort would have (src/quadrant/sieve/offload.rs,
// `Signing`): its bits on the seen diagonals past the pivots, packed low (main diagonals,
// then anti-diagonals), and its pivots' bits, whose value's signature the sieve's list
// gives; it writes them as the host would have written its narrow words and counts its
// signature's patterns (places.wgsl makes their places of the counts).

// (`params`: pair_params.wgsl)
// each pattern's narrow words: its bits past the pivots (low word, high word), its
// signature in the batch
@group(0) @binding(2) var<storage, read_write> signed: array<u32>;
@group(0) @binding(3) var<storage, read> signing: array<SignRecord>;
@group(0) @binding(4) var<storage, read> gathered: array<u32>;
// the patterns of each signature of the batch (zeroed before the pass)
@group(0) @binding(5) var<storage, read_write> counts: array<atomic<u32>>;

const WG: u32 = {WG}u;
const RAW_WORDS: u32 = {RAW_WORDS}u;
const NARROW_WORDS: u32 = {NARROW_WORDS}u;

// The bits of `x` at the bits of `mask`, packed low (`pext`), a run of the mask's
// consecutive bits at a time: a sieve's masks are seen diagonals less its few pivots, a
// few runs where a bit at a time took a step for each of some forty bits.
fn extract(x: u64, mask: u64) -> u64 {
    var out = 0lu;
    var m = mask;
    var bit = 0u;
    while m != 0lu {
        let start = trailing_zeros(m);
        let ones = trailing_zeros(~(m >> start));
        // (a shift by 64 shifts by 0)
        let run = select((1lu << ones) - 1lu, ~0lu, ones == 64u);
        out |= ((x >> start) & run) << bit;
        bit += ones;
        m &= ~(run << start);
    }
    return out;
}

// The zeros below the lowest one of `x` (64 where it is 0).
fn trailing_zeros(x: u64) -> u32 {
    let low = u32(x);
    if low != 0u {
        return countTrailingZeros(low);
    }
    return 32u + countTrailingZeros(u32(x >> 32u));
}

fn word_of(halves: vec2<u32>) -> u64 {
    return u64(halves.x) | (u64(halves.y) << 32u);
}

// The sieve whose patterns hold pattern `i`: the last whose first is at most `i`.
fn sieve_of(i: u32) -> u32 {
    return sieve_within(i, 0u, params.sieves);
}

// The last sieve from `first` on and before `end` whose first pattern is at most `i`.
fn sieve_within(i: u32, first: u32, end: u32) -> u32 {
    var range = vec2(first, end);
    while range.y - range.x > 1u {
        range = narrowed(range, signing[middle_of(range)].first <= i);
    }
    return range.x;
}

// Writes pattern `i` (its diagonals `main` and `anti`) of sieve `r` signed, and counts its
// signature.
fn sign(i: u32, r: SignRecord, main: u64, anti: u64) {
    // (a mask of 64 main diagonals leaves no anti-diagonal: a shift by 64 then
    // shifts 0)
    let rest_anti = extract(anti, word_of(r.rest_anti)) << r.rest_mains;
    let rest = extract(main, word_of(r.rest_main)) | rest_anti;
    let pivots_anti = extract(anti, word_of(r.pivots_anti)) << r.pivot_mains;
    let pivots = extract(main, word_of(r.pivots_main)) | pivots_anti;
    let signature = gathered[r.gathered_at + u32(pivots)];
    write_signed(i, rest, signature);
}

fn write_signed(i: u32, rest: u64, signature: u32) {
    let to = NARROW_WORDS * i;
    signed[to] = u32(rest);
    signed[to + 1u] = u32(rest >> 32u);
    signed[to + 2u] = signature;
    atomicAdd(&counts[signature], 1u);
}
