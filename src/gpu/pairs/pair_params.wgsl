// The parameters of a batch's dispatches (PairParams in src/gpu/pairs/wire.rs), one
// buffer for all of its kernels: each is compiled after this.

@group(0) @binding(0) var<uniform> params: PairParams;

// The signature join.wgsl writes for a candidate that is no pattern: order.wgsl passes
// over it, and the place it would have taken is left empty (`origin` 0 there), which
// pairs.wgsl passes over.
const NO_PATTERN: u32 = 0xFFFFFFFFu;

// A binary search's range (low, high) narrowed to its upper half where `upper`, else its
// lower: the last of a list whose keys are at most a value is found by narrowing while
// the range holds more than one, `upper` where the middle's key is at most the value.
fn middle_of(range: vec2<u32>) -> u32 {
    return (range.x + range.y) / 2u;
}

fn narrowed(range: vec2<u32>, upper: bool) -> vec2<u32> {
    let middle = middle_of(range);
    return select(vec2(range.x, middle), vec2(middle, range.y), upper);
}

// An invocation of a kernel that takes a block of 256 patterns a workgroup (group.wgsl,
// tables.wgsl): its lane in the block, its workgroup and the dispatch's workgroups.
struct BlockLane {
    @builtin(local_invocation_index) t: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
}
