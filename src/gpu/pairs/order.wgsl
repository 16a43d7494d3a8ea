// The quadrant engine's other side put in signature order on a GPU over a bus, before the
// pairs are counted (pairs.wgsl): the host writes each pattern's words as its joins made
// them, with where each signature's patterns begin once grouped, and each pattern takes
// the next place of its signature. Within a signature the order is whichever the atomics
// give, and no count depends on it; adjacent invocations of the pair kernel then hold
// patterns of one signature, which walk the same blocks. A workgroup's patterns of one
// signature take their places with one atomic add (tally.wgsl). Each pattern's place
// notes where it came, one past it, so its clashes go back there (the host's spot checks
// and sieves know it by it); a joined candidate that is no pattern takes no place, and a
// place none took keeps 0 (the host clears them where the batch joins).

// (`params`: pair_params.wgsl)
// each pattern's `pattern_words` words as they came, its signature (in the batch) last
@group(0) @binding(1) var<storage, read> patterns: array<u32>;
// the same words grouped by signature
@group(0) @binding(2) var<storage, read_write> ordered: array<u32>;
// for each place of `ordered`, one past where its pattern came (0: none came)
@group(0) @binding(3) var<storage, read_write> origin: array<u32>;
// each signature's next place
@group(0) @binding(4) var<storage, read_write> cursors: array<atomic<u32>>;

const WG: u32 = {WG}u;

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) lane: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let per = params.pattern_words;
    for (var base = group.x * WG; base < params.patterns; base += groups.x * WG) {
        let i = base + lane;
        var signature = NO_PATTERN;
        if i < params.patterns {
            signature = patterns[i * per + per - 1u];
        }
        tally_reset(lane);
        workgroupBarrier();
        let taken = tally_in(signature);
        workgroupBarrier();
        if lane < TALLY_BUCKETS {
            let key = atomicLoad(&tally_keys[lane]);
            if key != NO_PATTERN {
                tally_bases[lane] = atomicAdd(&cursors[key], atomicLoad(&tally_counts[lane]));
            }
        }
        workgroupBarrier();
        if signature != NO_PATTERN {
            var to: u32;
            if taken.x == NO_PATTERN {
                to = atomicAdd(&cursors[signature], 1u);
            } else {
                to = tally_bases[taken.x] + taken.y;
            }
            for (var w = 0u; w < per; w++) {
                ordered[to * per + w] = patterns[i * per + w];
            }
            origin[to] = i + 1u;
        }
        // (the buckets are read above before the next tile empties them)
        workgroupBarrier();
    }
}
