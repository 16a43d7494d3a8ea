//# BINDINGS
// per item, two vec4s: the columns of rows 0..start-1, a byte each
@group(0) @binding(6) var<storage, read> item_prefix: array<vec4<u32>>;

//# FUNCTIONS
// The tie rule of the full-symmetry side frames, on the whole board of a solution: 0 when an
// image of the board that lies in the same frame (its first-row queen on the same column) is
// smaller, otherwise how many of the images equal the board (1, 2 or 4: orbits of 8, 4, 2).
// Only rotations can bring another edge queen to the first row at that column: a reflection
// moves the first-row queen to the mirror column, or brings the side queen of row b1 or n-1-b1
// there, and those share a line with the first-row queen. `bit` and `last` are the queens of
// rows n-2 and n-1; the rows from the item's first to n-3 are on the lane's board.
fn tie_orbit(lane: u32, item: u32, start: u32, level: u32, bit: u32, last: u32) -> u32 {
    let n = params.n;
    let top = n - 1u;
    var q: array<u32, 32>;
    var inv: array<u32, 32>;
    let low = item_prefix[2u * item];
    let high = item_prefix[2u * item + 1u];
    for (var r = 0u; r < start; r++) {
        let word = select(high[(r >> 2u) & 3u], low[(r >> 2u) & 3u], r < 16u);
        q[r] = (word >> ((r & 3u) * 8u)) & 0xffu;
    }
    for (var l = 0u; l < level; l += WG) {
        q[start + l / WG] = firstTrailingBit(board[l + lane]);
    }
    q[top - 1u] = firstTrailingBit(bit);
    q[top] = firstTrailingBit(last);
    for (var r = 0u; r < n; r++) {
        inv[q[r]] = r;
    }
    var fixed = 1u;
    // a quarter turn, a half turn, three quarters (as the CPU's Symmetry::image_at)
    for (var s = 0u; s < 3u; s++) {
        var order = 0;
        for (var i = 0u; i < n; i++) {
            var image = inv[top - i];
            if (s == 0u) {
                image = top - inv[i];
            } else if (s == 1u) {
                image = top - q[top - i];
            }
            if (image != q[i]) {
                order = select(1, -1, image < q[i]);
                // an image whose first-row queen is elsewhere lies outside the frame
                if (i == 0u) {
                    order = 2;
                }
                break;
            }
        }
        if (order == -1) {
            return 0u;
        }
        if (order == 0) {
            fixed += 1u;
        }
    }
    return fixed;
}

//# COUNT
board[level + lane] = bit;
if (child_last && child_free != 0u) {
    let fixed = tie_orbit(lane, item, start, level, bit, child_free);
    counts.x += select(0u, 1u, fixed == 1u);
    counts.y += select(0u, 1u, fixed == 2u);
    counts.z += select(0u, 1u, fixed == 4u);
}
