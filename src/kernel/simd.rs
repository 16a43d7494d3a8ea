//! Lane-parallel counting: a batched depth-first search that expands 16 (AVX-512) or 8 (AVX2)
//! nodes of one row in lock-step.
//!
//! Every row has a buffer of pending nodes (struct of arrays: columns, both diagonals, and the
//! squares still to try). A step takes up to a vector of nodes from the deepest row that has a
//! full vector (or else from the deepest non-empty row); each lane takes its lowest free square;
//! the lanes that still have squares go back to their row, and the children that have a free
//! square are appended to the next row with a compress-store. The last two rows are not stored:
//! two columns are left at row n-2, so a lane's solutions are counted with two mask tests.
//! Masks are trimmed to the board every row, so 32-bit lanes hold any board up to 32 columns.
//!
//! Leaves that need the whole board (the full-symmetry tie frames, `--unique` with mirror
//! halving) run with *tracking*: every stored node also records an entry (its parent entry and
//! its column) in an arena, so a solution's board is rebuilt from its chain when it is found.
//! Counting leaves skip the arena and count solutions with popcounts.

use super::batch::{next_row, set_row};
use super::Leaf;
use crate::board::{Attacks, RowMasks, MAX_N};
use std::sync::atomic::{AtomicBool, Ordering};

/// Room per row: a row is only expanded when the row below holds less than a vector, so no
/// row holds two vectors.
const CAP: usize = 64;

/// Arena entries one tracked subtask may use (8 bytes each); a larger subtask runs scalar.
const ARENA_CAP: usize = 1 << 20;

/// Room past the arena's end for the kernels' whole-vector stores (16 lanes at most).
const LANE_SLACK: usize = 16;

/// No parent: the node's earlier rows are the subtask's prefix.
const ROOT: u32 = u32::MAX;

/// Pending nodes of every row, as a struct of arrays.
struct Buffers {
    cols: [[u32; CAP]; MAX_N],
    right: [[u32; CAP]; MAX_N],
    left: [[u32; CAP]; MAX_N],
    free: [[u32; CAP]; MAX_N],
    /// Arena entry of the queen on the row above (tracking only).
    node: [[u32; CAP]; MAX_N],
    len: [usize; MAX_N],
    /// Arena: parent entry and one-hot column of each placed queen (tracking only).
    parent: Vec<u32>,
    column: Vec<u32>,
}

/// Steps between two looks at the stop flag.
const STOP_CHECK_STEPS: u64 = 1 << 12;

/// How a vector count ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorCount {
    /// Finished: the queens placed above the last row (leaves got their solutions).
    Done {
        /// Search nodes, counted as the scalar kernel counts them.
        nodes: u64,
    },
    /// The stop flag was set.
    Stopped,
    /// The subtask needs more arena than allowed: count it with the scalar kernel.
    TooLarge,
}

/// Whether the subtask can run here: at least three rows left and no required-column check
/// on the last two rows (they are counted without one).
pub fn applies(n: usize, masks: &RowMasks, start_row: usize) -> bool {
    n <= 32 && start_row + 3 <= n && (!masks.has_must() || masks.must_row + 2 < n)
}

thread_local! {
    /// One set of row buffers per worker thread, reused by every subtask it counts.
    static BUFFERS: std::cell::RefCell<Box<Buffers>> = std::cell::RefCell::new(Box::new(Buffers {
        cols: [[0; CAP]; MAX_N],
        right: [[0; CAP]; MAX_N],
        left: [[0; CAP]; MAX_N],
        free: [[0; CAP]; MAX_N],
        node: [[0; CAP]; MAX_N],
        len: [0; MAX_N],
        parent: Vec::new(),
        column: Vec::new(),
    }));
}

/// Visits the completions of a board whose rows `0..start_row` are placed (one-hot in
/// `prefix`), 16 nodes at a time.
///
/// # Safety
/// The CPU must support AVX-512F and popcnt, and [`applies`] must hold.
#[target_feature(enable = "avx512f,popcnt")]
pub(crate) unsafe fn count_avx512<L: Leaf>(
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    prefix: &[u64; MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> VectorCount {
    // SAFETY: the caller guarantees AVX-512F, popcnt and `applies`.
    with_buffers::<L, _>(|buf| unsafe {
        run_avx512(buf, n, masks, start_row, attacks, prefix, leaf, stop)
    })
}

/// Runs `search` on this thread's buffers, emptied (and the arena readied when tracking).
fn with_buffers<L: Leaf, R>(search: impl FnOnce(&mut Buffers) -> R) -> R {
    BUFFERS.with_borrow_mut(|buf| {
        buf.len = [0; MAX_N];
        if L::NEEDS_BOARD {
            buf.parent.clear();
            buf.column.clear();
            buf.parent.reserve(ARENA_CAP + LANE_SLACK);
            buf.column.reserve(ARENA_CAP + LANE_SLACK);
        }
        search(buf)
    })
}

/// Like [`count_avx512`], 8 nodes at a time with AVX2 (compress-stores by permutation).
///
/// # Safety
/// The CPU must support AVX2 and popcnt, and [`applies`] must hold.
#[target_feature(enable = "avx2,popcnt")]
pub(crate) unsafe fn count_avx2<L: Leaf>(
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    prefix: &[u64; MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> VectorCount {
    // SAFETY: the caller guarantees AVX2, popcnt and `applies`.
    with_buffers::<L, _>(|buf| unsafe {
        run_avx2(buf, n, masks, start_row, attacks, prefix, leaf, stop)
    })
}

#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn run_avx512<L: Leaf>(
    buf: &mut Buffers,
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    prefix: &[u64; MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> VectorCount {
    // SAFETY: the caller guarantees the CPU features of `#[target_feature]` and `applies`;
    // each memory access below states why it stays in its buffer.
    unsafe {
        use std::arch::x86_64::*;
        const LANES: usize = 16;
        let full = crate::board::full_mask(n) as u32;
        let last = n - 1;
        if !buf.push_root(masks, start_row, attacks, full) {
            return VectorCount::Done { nodes: 0 };
        }
        // bit r set: row r has pending nodes / at least a vector of them
        let mut pending: u32 = 1 << start_row;
        let mut full_rows: u32 = 0;
        let (mut nodes, mut steps) = (0u64, 0u64);
        let zero = _mm512_setzero_si512();
        let board = _mm512_set1_epi32(full as i32);
        let last_allowed = _mm512_set1_epi32(masks.allowed[last] as u32 as i32);
        let iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
        // Packs the lanes set in `$keep` to the front in a register and stores all 16: the
        // memory form of `vpcompressd` is microcoded and very slow on AMD Zen 4 (and Rust's
        // compress-store intrinsic always emits it). The lanes past the packed ones land in the
        // buffer's slack and are never read.
        macro_rules! compress_store {
            ($dst:expr, $keep:expr, $v:expr) => {
                _mm512_storeu_si512($dst as *mut _, _mm512_maskz_compress_epi32($keep, $v))
            };
        }
        while pending != 0 {
            steps += 1;
            if steps % STOP_CHECK_STEPS == 0 && stop.load(Ordering::Relaxed) {
                return VectorCount::Stopped;
            }
            let row = next_row(pending, full_rows);
            let len = buf.len[row];
            let take = len.min(LANES);
            let base = len - take;
            let lanes: __mmask16 = ((1u32 << take) - 1) as __mmask16;
            // SAFETY (all loads and stores below): `base + take <= len <= CAP`, a row never holds
            // two vectors so a whole-vector store from `at` stays below `at + 16 <= CAP`, and
            // masked loads touch only their lanes.
            debug_assert!(base + LANES <= CAP);
            let c = _mm512_maskz_loadu_epi32(lanes, buf.cols[row].as_ptr().add(base) as *const i32);
            let r =
                _mm512_maskz_loadu_epi32(lanes, buf.right[row].as_ptr().add(base) as *const i32);
            let l = _mm512_maskz_loadu_epi32(lanes, buf.left[row].as_ptr().add(base) as *const i32);
            let f = _mm512_maskz_loadu_epi32(lanes, buf.free[row].as_ptr().add(base) as *const i32);
            let p = if L::NEEDS_BOARD {
                _mm512_maskz_loadu_epi32(lanes, buf.node[row].as_ptr().add(base) as *const i32)
            } else {
                zero
            };
            nodes += take as u64;
            // each lane takes its lowest free square (x & -x)
            let bit = _mm512_and_si512(f, _mm512_sub_epi32(zero, f));
            let rest = _mm512_xor_si512(f, bit);
            let keep = _mm512_mask_cmpneq_epi32_mask(lanes, rest, zero);
            let at = base;
            compress_store!(buf.cols[row].as_mut_ptr().add(at), keep, c);
            compress_store!(buf.right[row].as_mut_ptr().add(at), keep, r);
            compress_store!(buf.left[row].as_mut_ptr().add(at), keep, l);
            compress_store!(buf.free[row].as_mut_ptr().add(at), keep, rest);
            if L::NEEDS_BOARD {
                compress_store!(buf.node[row].as_mut_ptr().add(at), keep, p);
            }
            buf.len[row] = at + keep.count_ones() as usize;
            let c2 = _mm512_or_si512(c, bit);
            let r2 = _mm512_and_si512(_mm512_slli_epi32::<1>(_mm512_or_si512(r, bit)), board);
            let l2 = _mm512_srli_epi32::<1>(_mm512_or_si512(l, bit));
            let next = row + 1;
            let allowed = _mm512_set1_epi32(masks.allowed[next] as u32 as i32);
            let mut free2 =
                _mm512_andnot_si512(_mm512_or_si512(c2, _mm512_or_si512(r2, l2)), allowed);
            if next == masks.must_row {
                let must = _mm512_set1_epi32(masks.must as u32 as i32);
                let missing = _mm512_andnot_si512(c2, must);
                let none = _mm512_cmpeq_epi32_mask(missing, zero);
                let at_most_one = _mm512_cmpeq_epi32_mask(
                    _mm512_and_si512(missing, _mm512_sub_epi32(missing, _mm512_set1_epi32(1))),
                    zero,
                );
                // one missing: this row must take it; two or more: the branch is dead
                free2 = _mm512_mask_and_epi32(free2, at_most_one & !none, free2, missing);
                free2 = _mm512_maskz_mov_epi32(at_most_one, free2);
            }
            if next + 2 == n {
                // rows n-2 and n-1: two columns u < v are left; try u then v on row n-2
                let open = _mm512_andnot_si512(c2, board);
                let u = _mm512_and_si512(open, _mm512_sub_epi32(zero, open));
                let v = _mm512_xor_si512(open, u);
                for (here, there) in [(u, v), (v, u)] {
                    let placed =
                        _mm512_mask_cmpneq_epi32_mask(lanes, _mm512_and_si512(free2, here), zero);
                    let r3 = _mm512_slli_epi32::<1>(_mm512_or_si512(r2, here));
                    let l3 = _mm512_srli_epi32::<1>(_mm512_or_si512(l2, here));
                    let ok = _mm512_andnot_si512(
                        _mm512_or_si512(r3, l3),
                        _mm512_and_si512(there, last_allowed),
                    );
                    let solved = _mm512_mask_cmpneq_epi32_mask(placed, ok, zero);
                    nodes += placed.count_ones() as u64;
                    if L::NEEDS_BOARD {
                        if solved != 0 {
                            let mut lanes_of = [[0u32; LANES]; 4];
                            for (dst, v) in lanes_of.iter_mut().zip([p, bit, here, there]) {
                                _mm512_storeu_si512(dst.as_mut_ptr() as *mut _, v);
                            }
                            emit_tracked(buf, leaf, prefix, n, row, solved as u32, &lanes_of);
                        }
                    } else {
                        leaf.add_solutions(solved.count_ones() as u64);
                    }
                }
            } else {
                let push = _mm512_mask_cmpneq_epi32_mask(lanes, free2, zero);
                let at = buf.len[next];
                debug_assert!(at + LANES <= CAP);
                compress_store!(buf.cols[next].as_mut_ptr().add(at), push, c2);
                compress_store!(buf.right[next].as_mut_ptr().add(at), push, r2);
                compress_store!(buf.left[next].as_mut_ptr().add(at), push, l2);
                compress_store!(buf.free[next].as_mut_ptr().add(at), push, free2);
                let pushed = push.count_ones() as usize;
                if L::NEEDS_BOARD && pushed > 0 {
                    let entry = buf.parent.len();
                    if entry + pushed > ARENA_CAP {
                        return VectorCount::TooLarge;
                    }
                    // SAFETY: `reserve(ARENA_CAP + LANE_SLACK)` made room for 16 lanes from any
                    // `entry <= ARENA_CAP`; `set_len` then keeps only the `pushed` packed ones.
                    compress_store!(buf.parent.as_mut_ptr().add(entry), push, p);
                    compress_store!(buf.column.as_mut_ptr().add(entry), push, bit);
                    buf.parent.set_len(entry + pushed);
                    buf.column.set_len(entry + pushed);
                    let ids = _mm512_add_epi32(iota, _mm512_set1_epi32(entry as i32));
                    let first: __mmask16 = ((1u32 << pushed) - 1) as __mmask16;
                    _mm512_mask_storeu_epi32(
                        buf.node[next].as_mut_ptr().add(at) as *mut _,
                        first,
                        ids,
                    );
                }
                let grown = at + pushed;
                debug_assert!(grown <= CAP);
                buf.len[next] = grown;
                set_row(&mut pending, &mut full_rows, next, grown, LANES);
            }
            set_row(&mut pending, &mut full_rows, row, buf.len[row], LANES);
        }
        VectorCount::Done { nodes }
    }
}

/// Lane `i` of the permutation that packs the lanes set in an 8-bit mask to the front.
const COMPRESS: [[i32; 8]; 256] = {
    let mut table = [[0i32; 8]; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut lane, mut packed) = (0, 0);
        while lane < 8 {
            if mask & (1 << lane) != 0 {
                table[mask][packed] = lane;
                packed += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    table
};

#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn run_avx2<L: Leaf>(
    buf: &mut Buffers,
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    prefix: &[u64; MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> VectorCount {
    // SAFETY: the caller guarantees the CPU features of `#[target_feature]` and `applies`;
    // each memory access below states why it stays in its buffer.
    unsafe {
        use std::arch::x86_64::*;
        const LANES: usize = 8;
        // lanes of `v` that are not zero, as a bit mask
        macro_rules! nonzero {
            ($v:expr) => {
                (_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(
                    $v,
                    _mm256_setzero_si256(),
                ))) ^ 0xFF) as u32
            };
        }
        // writes the lanes of `v` set in `mask`, packed, at `ptr` (all 8 lanes are written)
        macro_rules! compress_store {
            ($ptr:expr, $mask:expr, $v:expr) => {
                _mm256_storeu_si256(
                    $ptr as *mut __m256i,
                    _mm256_permutevar8x32_epi32(
                        $v,
                        _mm256_loadu_si256(COMPRESS[$mask as usize].as_ptr() as *const __m256i),
                    ),
                )
            };
        }
        let full = crate::board::full_mask(n) as u32;
        let last = n - 1;
        if !buf.push_root(masks, start_row, attacks, full) {
            return VectorCount::Done { nodes: 0 };
        }
        let mut pending: u32 = 1 << start_row;
        let mut full_rows: u32 = 0;
        let (mut nodes, mut steps) = (0u64, 0u64);
        let zero = _mm256_setzero_si256();
        let one = _mm256_set1_epi32(1);
        let board = _mm256_set1_epi32(full as i32);
        let last_allowed = _mm256_set1_epi32(masks.allowed[last] as u32 as i32);
        let iota = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
        while pending != 0 {
            steps += 1;
            if steps % STOP_CHECK_STEPS == 0 && stop.load(Ordering::Relaxed) {
                return VectorCount::Stopped;
            }
            let row = next_row(pending, full_rows);
            let len = buf.len[row];
            let take = len.min(LANES);
            let base = len - take;
            let lanes = (1u32 << take) - 1;
            let active = _mm256_cmpgt_epi32(_mm256_set1_epi32(take as i32), iota);
            // SAFETY (loads and stores below): rows hold fewer than two vectors and CAP leaves a
            // vector of room past any row's end, so every full 8-lane access stays in the array;
            // lanes past `take` are zeroed by `active` or overwritten later.
            macro_rules! load {
                ($src:expr) => {
                    _mm256_and_si256(
                        _mm256_loadu_si256($src.as_ptr().add(base) as *const __m256i),
                        active,
                    )
                };
            }
            let c = load!(buf.cols[row]);
            let r = load!(buf.right[row]);
            let l = load!(buf.left[row]);
            let f = load!(buf.free[row]);
            let p = if L::NEEDS_BOARD {
                load!(buf.node[row])
            } else {
                zero
            };
            nodes += take as u64;
            let bit = _mm256_and_si256(f, _mm256_sub_epi32(zero, f));
            let rest = _mm256_xor_si256(f, bit);
            let keep = nonzero!(rest) & lanes;
            let at = base;
            compress_store!(buf.cols[row].as_mut_ptr().add(at), keep, c);
            compress_store!(buf.right[row].as_mut_ptr().add(at), keep, r);
            compress_store!(buf.left[row].as_mut_ptr().add(at), keep, l);
            compress_store!(buf.free[row].as_mut_ptr().add(at), keep, rest);
            if L::NEEDS_BOARD {
                compress_store!(buf.node[row].as_mut_ptr().add(at), keep, p);
            }
            buf.len[row] = at + keep.count_ones() as usize;
            let c2 = _mm256_or_si256(c, bit);
            let r2 = _mm256_and_si256(_mm256_slli_epi32::<1>(_mm256_or_si256(r, bit)), board);
            let l2 = _mm256_srli_epi32::<1>(_mm256_or_si256(l, bit));
            let next = row + 1;
            let allowed = _mm256_set1_epi32(masks.allowed[next] as u32 as i32);
            let mut free2 =
                _mm256_andnot_si256(_mm256_or_si256(c2, _mm256_or_si256(r2, l2)), allowed);
            if next == masks.must_row {
                let must = _mm256_set1_epi32(masks.must as u32 as i32);
                let missing = _mm256_andnot_si256(c2, must);
                let none = _mm256_cmpeq_epi32(missing, zero);
                let at_most_one = _mm256_cmpeq_epi32(
                    _mm256_and_si256(missing, _mm256_sub_epi32(missing, one)),
                    zero,
                );
                // one missing: this row must take it; two or more: the branch is dead
                let forced = _mm256_andnot_si256(none, at_most_one);
                free2 = _mm256_blendv_epi8(free2, _mm256_and_si256(free2, missing), forced);
                free2 = _mm256_and_si256(free2, at_most_one);
            }
            if next + 2 == n {
                let open = _mm256_andnot_si256(c2, board);
                let u = _mm256_and_si256(open, _mm256_sub_epi32(zero, open));
                let v = _mm256_xor_si256(open, u);
                for (here, there) in [(u, v), (v, u)] {
                    let placed = nonzero!(_mm256_and_si256(free2, here)) & lanes;
                    let r3 = _mm256_slli_epi32::<1>(_mm256_or_si256(r2, here));
                    let l3 = _mm256_srli_epi32::<1>(_mm256_or_si256(l2, here));
                    let ok = _mm256_andnot_si256(
                        _mm256_or_si256(r3, l3),
                        _mm256_and_si256(there, last_allowed),
                    );
                    let solved = nonzero!(ok) & placed;
                    nodes += placed.count_ones() as u64;
                    if L::NEEDS_BOARD {
                        if solved != 0 {
                            let mut lanes_of = [[0u32; LANES]; 4];
                            for (dst, v) in lanes_of.iter_mut().zip([p, bit, here, there]) {
                                _mm256_storeu_si256(dst.as_mut_ptr() as *mut __m256i, v);
                            }
                            emit_tracked(buf, leaf, prefix, n, row, solved, &lanes_of);
                        }
                    } else {
                        leaf.add_solutions(solved.count_ones() as u64);
                    }
                }
            } else {
                let push = nonzero!(free2) & lanes;
                let at = buf.len[next];
                compress_store!(buf.cols[next].as_mut_ptr().add(at), push, c2);
                compress_store!(buf.right[next].as_mut_ptr().add(at), push, r2);
                compress_store!(buf.left[next].as_mut_ptr().add(at), push, l2);
                compress_store!(buf.free[next].as_mut_ptr().add(at), push, free2);
                let pushed = push.count_ones() as usize;
                if L::NEEDS_BOARD && pushed > 0 {
                    let entry = buf.parent.len();
                    if entry + pushed > ARENA_CAP {
                        return VectorCount::TooLarge;
                    }
                    // SAFETY: the arena reserved ARENA_CAP + LANE_SLACK entries, so the full
                    // 8-lane stores at `entry < ARENA_CAP` fit; only `pushed` of them are kept.
                    compress_store!(buf.parent.as_mut_ptr().add(entry), push, p);
                    compress_store!(buf.column.as_mut_ptr().add(entry), push, bit);
                    buf.parent.set_len(entry + pushed);
                    buf.column.set_len(entry + pushed);
                    let ids = _mm256_add_epi32(iota, _mm256_set1_epi32(entry as i32));
                    _mm256_storeu_si256(buf.node[next].as_mut_ptr().add(at) as *mut __m256i, ids);
                }
                let grown = at + pushed;
                debug_assert!(grown + LANES <= CAP);
                buf.len[next] = grown;
                set_row(&mut pending, &mut full_rows, next, grown, LANES);
            }
            set_row(&mut pending, &mut full_rows, row, buf.len[row], LANES);
        }
        VectorCount::Done { nodes }
    }
}

/// Rebuilds the board of every lane set in `solved` and hands it to `leaf`. `lanes` holds,
/// per lane, the arena entry of the node's parent queen, the queen just placed on `row`, and
/// the queens of rows n-2 and n-1.
fn emit_tracked<L: Leaf, const W: usize>(
    buf: &Buffers,
    leaf: &mut L,
    prefix: &[u64; MAX_N],
    n: usize,
    row: usize,
    solved: u32,
    lanes: &[[u32; W]; 4],
) {
    let [parents, bits, heres, theres] = lanes;
    let mut todo = solved;
    while todo != 0 {
        let lane = todo.trailing_zeros() as usize;
        todo &= todo - 1;
        let mut rows = *prefix;
        rows[n - 1] = theres[lane] as u64;
        rows[n - 2] = heres[lane] as u64;
        rows[row] = bits[lane] as u64;
        let mut entry = parents[lane];
        let mut up = row;
        while entry != ROOT {
            up -= 1;
            rows[up] = buf.column[entry as usize] as u64;
            entry = buf.parent[entry as usize];
        }
        leaf.solution(&rows[..n]);
    }
}

impl Buffers {
    /// Stores the subtask's root on `row`; false when it has no free square.
    fn push_root(&mut self, masks: &RowMasks, row: usize, attacks: Attacks, full: u32) -> bool {
        let free = masks.free(row, attacks) as u32;
        if free == 0 {
            return false;
        }
        self.cols[row][0] = attacks.cols as u32;
        self.right[row][0] = (attacks.right_down & full as u64) as u32;
        self.left[row][0] = attacks.left_down as u32;
        self.free[row][0] = free;
        self.node[row][0] = ROOT;
        self.len[row] = 1;
        true
    }
}
