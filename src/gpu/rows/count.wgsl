// Counts the completions of a dispatch's items. An item is a board whose first rows are
// placed (the host cut it from a plan subtask): its attacks and the free squares of its first
// open row, the row itself and the frame whose per-row masks it runs under. Invocations are
// persistent: each takes an item with atomicAdd, searches it depth-first and takes the next.
//
// Masks are u32, bit c = column c; the down-right diagonals are trimmed to the board every row.
// The row being extended lives in registers (columns, both diagonals, free squares). The rows
// above it that still have squares to try wait on a per-lane stack in workgroup memory at
// `depth * WG + lane`, so the lanes of a subgroup touch consecutive words. A row whose last
// square is being tried is not pushed: its parent is popped instead (the level is read back
// off the column count). Every iteration places one queen; the last row is never entered:
// its one open column is free or not, a solution or not (what countOneBits of its free squares
// would count, without the count).
//
// The host fills in WG (invocations per workgroup), ROWS (the most rows an item leaves) and,
// for the full-symmetry tie frames, whose solutions are classified on their whole board and
// counted by orbit, the board and the sections of ties.wgsl; and the RowParams and
// Frame structs (wire.rs).

const WG: u32 = {WG}u;
const ROWS: u32 = {ROWS}u;
// stacked rows: every row but the last two (row n-2 is never pushed, row n-1 never entered)
const STACK: u32 = ROWS - 1u;
// per-row masks of an item's rows below its first: at most ROWS - 1
const MASKS: u32 = ROWS - 1u;
// the queen of each searched row, tie frames only (they look at the whole board)
const BOARD: u32 = {BOARD};

@group(0) @binding(0) var<uniform> params: RowParams;
@group(0) @binding(1) var<storage, read> frames: array<Frame>;
// cols, right-down diagonals, left-down diagonals, free squares of the item's first row
@group(0) @binding(2) var<storage, read> items: array<vec4<u32>>;
// frame << 8 | first row
@group(0) @binding(3) var<storage, read> item_rows: array<u32>;
// solutions (orbit 8 for tie frames), orbit 4, orbit 2, nodes
@group(0) @binding(4) var<storage, read_write> results: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> next_item: atomic<u32>;
{TIE_BINDINGS}

var<workgroup> stack: array<vec4<u32>, STACK * WG>;
var<workgroup> masks: array<u32, MASKS * WG>;
var<workgroup> board: array<u32, BOARD * WG>;

// The free squares of the row by which the must columns are filled, `missing` of them still
// empty: all when none is missing, the missing one when one is, none when two or more are.
fn required(free: u32, missing: u32) -> u32 {
    let forced = select(free & missing, free, missing == 0u);
    return select(0u, forced, (missing & (missing - 1u)) == 0u);
}

{TIE_FUNCTIONS}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lane: u32) {
    let n = params.n;
    let full = params.full;
    var item = 0xffffffffu;
    // the row being extended: columns, right-down and left-down diagonals, free squares
    var row = vec4<u32>(0u);
    var counts = vec4<u32>(0u);
    // The row is the item's first plus `level`; its children's row allows `allowed` (read
    // from the lane's masks whenever the level changes). Rows are counted in steps of WG,
    // the distance between a lane's entries in workgroup memory.
    var start = 0u;
    var level = 0u;
    var last_level = 0u;
    var allowed = 0u;
    var depth = 0u;
    var must_level = 0u;
    var must = 0u;
    loop {
        if (row.w == 0u) {
            // the item is done (or none was taken yet): hand it in, take the next
            if (item != 0xffffffffu) {
                results[item] = counts;
            }
            item = atomicAdd(&next_item, 1u);
            if (item >= params.count) {
                break;
            }
            row = items[item];
            let at = item_rows[item];
            start = at & 0xffu;
            let frame = at >> 8u;
            for (var r = start + 1u; r < n; r++) {
                masks[(r - start - 1u) * WG + lane] = frames[frame].allowed[r];
            }
            allowed = frames[frame].allowed[start + 1u];
            // never matched when there is no must row (32) or it lies above the item
            must_level = (frames[frame].must_row - start - 1u) * WG;
            must = frames[frame].must;
            level = 0u;
            last_level = (n - start - 2u) * WG;
            depth = 0u;
            counts = vec4<u32>(0u);
        }
        // the lowest free square: the leftmost column, as the CPU kernels take them
        let bit = row.w & (0u - row.w);
        let rest = row.w ^ bit;
        let child_cols = row.x | bit;
        let child_right = ((row.y | bit) << 1u) & full;
        let child_left = (row.z | bit) >> 1u;
        var child_free = allowed & ~(child_cols | child_right | child_left);
        if (level == must_level) {
            child_free = required(child_free, must & ~child_cols);
        }
        counts.w += 1u;
        // the child row is the last: one column is left, free or not; free, it is a solution
        let child_last = level == last_level;
        {TIE_COUNT}
        // down to the child row (pushing this one if it has squares left), or back up to the
        // row on top of the stack once this one has none, or on along this row
        let down = !child_last & (child_free != 0u);
        let push = down & (rest != 0u);
        let pop = !down & (rest == 0u) & (depth != 0u);
        // the memory is touched whatever happens (a branch around it costs more than the
        // access): the slot above the top is free, and kept only by a push
        let here = vec4<u32>(row.xyz, rest);
        stack[depth + lane] = here;
        let saved = stack[depth - select(0u, WG, depth != 0u) + lane];
        depth = depth + select(0u, WG, push) - select(0u, WG, pop);
        let child = vec4<u32>(child_cols, child_right, child_left, child_free);
        row = select(select(here, saved, pop), child, down);
        level = select(select(level, (countOneBits(row.x) - start) * WG, pop), level + WG, down);
        allowed = masks[level + lane];
        if (pop & (counts.w >= params.limit)) {
            // given up: the CPU counts it
            row.w = 0u;
            depth = 0u;
        }
    }
}
