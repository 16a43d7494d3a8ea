// Counts the completions of a batch of subtasks: one depth-first search per subtask, run by
// persistent invocations that take subtasks with atomicAdd until the batch is done.
//
// Masks are u32: bit c = column c; diagonals are trimmed to the board every row. Each lane
// keeps its stack in workgroup memory at `level * WG + lane`, so lanes of a warp touch
// consecutive words (different banks). The last row is never pushed: its free squares
// (0 or 1, one column is left) are counted with countOneBits.

const WG: u32 = 32u;
// rows kept on a lane's stack: start row .. n-2, at most 30 (the host sends deeper subtasks
// to the CPU); 4 arrays of 30 * 32 words fill 15 KiB of the 16 KiB every device offers
const LEVELS: u32 = 30u;
// per frame: 32 allowed masks, then must_row, then must
const FRAME_WORDS: u32 = 34u;

struct Params {
    n: u32,
    count: u32,
    full: u32,
    _pad: u32,
}

// start state of a subtask: frame, first row to search, attacks on that row
struct Task {
    frame: u32,
    row: u32,
    cols: u32,
    right: u32,
    left: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> frames: array<u32>;
@group(0) @binding(2) var<storage, read> tasks: array<Task>;
// per subtask: solutions (lo, hi), nodes (lo, hi); two words so that no count wraps
@group(0) @binding(3) var<storage, read_write> results: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> next_task: atomic<u32>;

var<workgroup> s_free: array<u32, 960>;
var<workgroup> s_cols: array<u32, 960>;
var<workgroup> s_right: array<u32, 960>;
var<workgroup> s_left: array<u32, 960>;

// free squares of `row` in frame `f`, with the required-columns rule of its must row
fn free_at(f: u32, row: u32, cols: u32, right: u32, left: u32) -> u32 {
    let base = f * FRAME_WORDS;
    let free = frames[base + row] & ~(cols | right | left);
    let missing = frames[base + 33u] & ~cols;
    let one_missing = (missing & (missing - 1u)) == 0u;
    // one required column empty: this row must take it; two or more: the branch is dead
    let forced = select(0u, free & missing, one_missing);
    let at_must = select(free, forced, missing != 0u);
    return select(free, at_must, row == frames[base + 32u]);
}

// adds `x` to the two-word count (lo, hi)
fn add_wide(acc: vec2<u32>, x: u32) -> vec2<u32> {
    let lo = acc.x + x;
    return vec2<u32>(lo, acc.y + select(0u, 1u, lo < x));
}

@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) lane: u32) {
    let n = params.n;
    let full = params.full;
    var level: i32 = -1;
    var task: u32 = 0u;
    var busy = false;
    var frame: u32 = 0u;
    var start: u32 = 0u;
    var total = vec2<u32>(0u, 0u);
    var nodes = vec2<u32>(0u, 0u);
    loop {
        if (level < 0) {
            if (busy) {
                results[task] = vec4<u32>(total.x, total.y, nodes.x, nodes.y);
                busy = false;
            }
            task = atomicAdd(&next_task, 1u);
            if (task >= params.count) {
                break;
            }
            let t = tasks[task];
            frame = t.frame;
            start = t.row;
            total = vec2<u32>(0u, 0u);
            nodes = vec2<u32>(0u, 0u);
            busy = true;
            if (start >= n) {
                // the prefix fills the board: it is a solution
                total = vec2<u32>(1u, 0u);
                continue;
            }
            let free0 = free_at(frame, start, t.cols, t.right, t.left);
            if (start + 1u == n) {
                total = vec2<u32>(countOneBits(free0), 0u);
                continue;
            }
            level = 0;
            s_free[lane] = free0;
            s_cols[lane] = t.cols;
            s_right[lane] = t.right;
            s_left[lane] = t.left;
            continue;
        }
        let at = u32(level) * WG + lane;
        let f = s_free[at];
        if (f == 0u) {
            level -= 1;
            continue;
        }
        // the lowest free square: the leftmost column, as the CPU kernels take them
        let bit = f & (0u - f);
        s_free[at] = f ^ bit;
        nodes = add_wide(nodes, 1u);
        let row = start + u32(level);
        let cols = s_cols[at] | bit;
        let right = ((s_right[at] | bit) << 1u) & full;
        let left = (s_left[at] | bit) >> 1u;
        let free = free_at(frame, row + 1u, cols, right, left);
        if (row + 2u == n) {
            total = add_wide(total, countOneBits(free));
        } else if (free != 0u) {
            level += 1;
            let down = at + WG;
            s_free[down] = free;
            s_cols[down] = cols;
            s_right[down] = right;
            s_left[down] = left;
        }
    }
}
