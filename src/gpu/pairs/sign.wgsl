// The other side's patterns sent as the host's joins made them, signed (signing.wgsl).

// each pattern as it came: its main diagonals (low word, high word), its anti-diagonals
@group(0) @binding(1) var<storage, read> raw: array<u32>;

@compute @workgroup_size(WG)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    for (var i = gid.x; i < params.patterns; i += groups.x * WG) {
        let r = signing[sieve_of(i)];
        if r.cells != 0u {
            // a sieve joined here (join.wgsl)
            continue;
        }
        let at = RAW_WORDS * (r.sent_at + i - r.first);
        let main = u64(raw[at]) | (u64(raw[at + 1u]) << 32u);
        let anti = u64(raw[at + 2u]) | (u64(raw[at + 3u]) << 32u);
        sign(i, r, main, anti);
    }
}
