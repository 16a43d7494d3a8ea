// The parameters of a batch's dispatches (Params: PairParams in src/gpu/wire.rs), one
// buffer for all of its kernels: each is compiled after this.

@group(0) @binding(0) var<uniform> params: Params;

// The signature join.wgsl writes for a candidate that is no pattern: order.wgsl passes
// over it, and the place it would have taken is left empty (`origin` 0 there), which
// pairs.wgsl passes over.
const NO_PATTERN: u32 = 0xFFFFFFFFu;
