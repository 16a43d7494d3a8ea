// The quadrant engine's lookup tables (src/quadrant/sieve/layout.rs, `Sieve::slice`) filled
// on a GPU from the slices the host sends, before the pair kernel (pairs.wgsl) reads them:
// for each lookup and each subset of its five slices, their OR. The host sends 5 slices a
// lookup instead of its 32 entries (a sixth of the bytes over the bus) and leaves the
// filling to the GPU. An invocation fills one 32-bit word of every entry of a lookup.

// (`params`: pair_params.wgsl)
// lookup `l`'s slices, a bit a pattern of its block: slices[ENTRY_WORDS (SUBSET_BITS l + b)..]
@group(0) @binding(1) var<storage, read> slices: array<u32>;
// lookup `l`'s entry `s`: tables[ENTRY_WORDS (ENTRIES l + s)..][..ENTRY_WORDS]
@group(0) @binding(2) var<storage, read_write> tables: array<u32>;

const WG: u32 = {WG}u;
const ENTRY_WORDS: u32 = 8u;
const SUBSET_BITS: u32 = {SUBSET_BITS}u;
const ENTRIES: u32 = 1u << SUBSET_BITS;
// (a lookup's slices are read one by one below)
const_assert SUBSET_BITS == 5u;

@compute @workgroup_size(WG)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let stride = groups.x * WG;
    for (var i = gid.x; i < params.all_lookups * ENTRY_WORDS; i += stride) {
        let l = i / ENTRY_WORDS;
        let w = i % ENTRY_WORDS;
        let at = ENTRY_WORDS * SUBSET_BITS * l + w;
        let slice = array<u32, 5>(
            slices[at],
            slices[at + ENTRY_WORDS],
            slices[at + 2u * ENTRY_WORDS],
            slices[at + 3u * ENTRY_WORDS],
            slices[at + 4u * ENTRY_WORDS],
        );
        let first = ENTRY_WORDS * ENTRIES * l + w;
        for (var s = 0u; s < ENTRIES; s++) {
            // (each bit's slice picked by a select: no array indexed per lane)
            var entry = 0u;
            entry |= select(0u, slice[0], (s & 1u) != 0u);
            entry |= select(0u, slice[1], (s & 2u) != 0u);
            entry |= select(0u, slice[2], (s & 4u) != 0u);
            entry |= select(0u, slice[3], (s & 8u) != 0u);
            entry |= select(0u, slice[4], (s & 16u) != 0u);
            tables[first + ENTRY_WORDS * s] = entry;
        }
    }
}
