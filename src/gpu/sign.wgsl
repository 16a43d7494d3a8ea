// The other side's patterns sent as the host's joins made them, signed (signing.wgsl).

// each pattern as it came: its main diagonals (low word, high word), its anti-diagonals
@group(0) @binding(1) var<storage, read> raw: array<u32>;

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) lane: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    // a tile of WG patterns at a time (their signatures counted together)
    for (var base = group.x * WG; base < params.patterns; base += groups.x * WG) {
        var signature = NO_PATTERN;
        if base + lane < params.patterns {
            signature = sign_sent(base + lane);
        }
        count_signature(lane, signature);
    }
}

// Signs pattern `i` where its sieve's patterns were sent: its signature (else NO_PATTERN).
fn sign_sent(i: u32) -> u32 {
    let r = SIGN_WORDS * sieve_of(i);
    if signing[r + 15u] != 0u {
        // a sieve joined here (join.wgsl)
        return NO_PATTERN;
    }
    let at = RAW_WORDS * (signing[r + 22u] + i - signing[r]);
    let main = u64(raw[at]) | (u64(raw[at + 1u]) << 32u);
    let anti = u64(raw[at + 2u]) | (u64(raw[at + 3u]) << 32u);
    return sign(i, r, main, anti);
}
