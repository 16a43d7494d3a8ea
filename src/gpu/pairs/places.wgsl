// The places of the quadrant engine's other side signed on a GPU (sign.wgsl): an
// invocation a sieve walks its signatures in order, each signature's patterns beginning
// where the last one's end (the sieve's from its first pattern in the batch on), which
// order.wgsl takes its cursors from, and adds up the pairs its patterns' reaches visit
// (each signature's patterns times the stored patterns it covers), which the host's
// receiving takes, with the pair kernel's clashes, for the sieve's disjoint pairs, and
// its patterns (where it was joined here, join.wgsl, its candidates that are patterns:
// the others are counted under no signature), which are nodes of the unit.

// (`params`: pair_params.wgsl)
@group(0) @binding(1) var<storage, read> signing: array<SignRecord>;
@group(0) @binding(2) var<storage, read> counts: array<u32>;
// for each signature of the batch, the stored patterns of the blocks it reaches
@group(0) @binding(3) var<storage, read> covered: array<u32>;
// each signature's first place (order.wgsl's cursors)
@group(0) @binding(4) var<storage, read_write> cursors: array<u32>;
// each sieve's SieveSums (the pair kernel's spot checks past them)
@group(0) @binding(5) var<storage, read_write> sums: array<SieveSums>;

const WG: u32 = {WG}u;

@compute @workgroup_size(WG)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    for (var k = gid.x; k < params.sieves; k += groups.x * WG) {
        let r = signing[k];
        var at = r.first;
        let end = r.signature_base + r.signatures;
        var visited = 0lu;
        for (var s = r.signature_base; s < end; s++) {
            cursors[s] = at;
            at += counts[s];
            visited += u64(counts[s]) * u64(covered[s]);
        }
        sums[k].visited_low = u32(visited);
        sums[k].visited_high = u32(visited >> 32u);
        sums[k].patterns = at - r.first;
    }
}
