// The other side joined here from the quarter tables the GPU holds, then signed
// (signing.wgsl): the host sends each sieve's cells (src/quadrant/cells.rs), and an
// invocation a candidate (a north placement of a cell paired with a south one, numbered
// cell after cell, north-major) finds its cell by binary search, reads its two placements
// and joins them. A cell lists only the placements that keep off the middle column's
// queen's diagonals. A candidate whose placements share a diagonal is no pattern: it is
// marked so (NO_PATTERN, pair_params.wgsl) and counted under no signature, so a sieve's
// patterns take the first places of its candidates', and the order and the pairs pass
// over the rest.

@group(0) @binding(1) var<storage, read> cells: array<CellRecord>;
// each sieve's cells' north placements' places in the north table, then their south ones';
// past every sieve's, the hints (two words each: the sieve and the cell at a slot)
@group(0) @binding(8) var<storage, read> cell_places: array<u32>;
// the north quarter's placements, two packed words each (main, anti), and the south
// quarter's, four (main low, high, anti low, high)
@group(0) @binding(6) var<storage, read> north: array<u32>;
@group(0) @binding(7) var<storage, read> south: array<u32>;

const HINT_EVERY: u32 = {HINT_EVERY}u;

// The cell of candidate `i` among the `count` cells from `first` on: the last whose first
// candidate is at most `i`.
fn cell_of(i: u32, first: u32, count: u32) -> u32 {
    var range = vec2(first, first + count);
    while range.y - range.x > 1u {
        range = narrowed(range, cells[middle_of(range)].first <= i);
    }
    return range.x;
}

@compute @workgroup_size(WG)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    for (var i = gid.x; i < params.patterns; i += groups.x * WG) {
        // from the hint of the slot HINT_EVERY (or fewer) before: the sieve there, or one
        // starting after it
        let hint = params.hints_at + 2u * (i / HINT_EVERY);
        let hinted = cell_places[hint];
        var sieve = hinted;
        if sieve + 1u < params.sieves && signing[sieve + 1u].first <= i {
            sieve = sieve_within(i, sieve + 1u, params.sieves);
        }
        let r = signing[sieve];
        if r.cells == 0u {
            // a sieve whose patterns were sent (sign.wgsl)
            continue;
        }
        // the cell: the hint's (or where a sieve starts past it, its first), else one of
        // the next few, as a cell holds a candidate at least
        let here = sieve == hinted;
        let start = select(r.cells_at, cell_places[hint + 1u], here);
        let base = select(r.first, i - i % HINT_EVERY, here);
        let end = min(r.cells_at + r.cells, start + 1u + i - base);
        var cell = start;
        if cell + 1u < end && cells[cell + 1u].first <= i {
            cell = cell_of(i, cell + 1u, end - cell - 1u);
        }
        let c = cells[cell];
        let local = i - c.first;
        let up = 2u * cell_places[c.north_at + local / c.south_len];
        let low = 4u * cell_places[c.south_at + local % c.south_len];
        let up_main = u64(north[up]) << r.north_main_shift;
        let up_anti = u64(north[up + 1u]) << r.north_anti_shift;
        let low_main = u64(south[low]) | (u64(south[low + 1u]) << 32u);
        let low_anti = u64(south[low + 2u]) | (u64(south[low + 3u]) << 32u);
        let main = up_main | low_main;
        let anti = up_anti | low_anti;
        let clash = (up_main & low_main) | (up_anti & low_anti);
        if clash != 0lu {
            signed[NARROW_WORDS * i + 2u] = NO_PATTERN;
        } else {
            sign(i, r, main, anti);
        }
    }
}
