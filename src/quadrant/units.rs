//! The units of a board and their ids: every unit is worked out from its id, none is listed.
//!
//! A unit is a row set (the rows whose queen is east of the middle, `E`, and on odd boards
//! the middle column's row `m`). Of each symmetry class of row sets (the left-right mirror
//! swaps `E` and the other rows `W`; upside down reverses the rows) only the least, as
//! `(m, E)`, is counted, weighted by the size of its class. The ids cover the row sets that
//! the two cheap halvings leave:
//!
//! - `m` at most the middle row (upside down, a lower `m` is a higher one);
//! - `E < W` as numbers, that is, the highest free row is west (the mirror of `E` is `W`).
//!
//! So id = `m × C(2h − 1, h) + rank of E` among the `h`-sets of the lowest `2h − 1` free
//! rows, `h = n / 2`, ranked in increasing order by the combinatorial number system. A set
//! whose upside-down image is less (only on the middle row of odd boards, and on even
//! boards) keeps its id and counts nothing: about half the ids of an even board, a few
//! percent of an odd one's. Memory for the plan is none, whatever N.

use std::sync::OnceLock;

/// A unit has no middle-column queen (even boards).
pub(super) const NO_MIDDLE: u8 = u8::MAX;

/// One row set: the rows whose queen is east of the middle, and for odd boards the row of
/// the middle column's queen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Unit {
    pub(super) east_rows: u32,
    pub(super) middle_row: u8,
    /// How many row sets of the board this one stands for (1, 2 or 4; 0 when it is counted
    /// under another id).
    pub(super) weight: u8,
}

/// The ids of the units of one board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Ids {
    n: usize,
    /// Ids per middle row: the `h`-sets of `2h − 1` rows.
    per_middle: u64,
    len: u64,
}

/// Rows a unit's ids rank sets of, at most (`2h − 1` at N = 32).
const MAX_WIDTH: usize = 31;

/// `C(a, b)` for `a, b ≤ MAX_WIDTH`, built once (Pascal's triangle).
fn choose(a: usize, b: usize) -> u64 {
    static TABLE: OnceLock<[[u64; MAX_WIDTH + 1]; MAX_WIDTH + 1]> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [[0u64; MAX_WIDTH + 1]; MAX_WIDTH + 1];
        for a in 0..=MAX_WIDTH {
            t[a][0] = 1;
            for b in 1..=a {
                t[a][b] = t[a - 1][b - 1] + t[a - 1][b];
            }
        }
        t
    });
    if b > a {
        0
    } else {
        table[a][b]
    }
}

/// The `size`-set of bits with `rank` among all `size`-sets in increasing order (the
/// combinatorial number system: rank = Σ C(bit_i, i + 1) over its bits, lowest first).
pub(super) fn unrank(mut rank: u64, size: usize, width: usize) -> u64 {
    let mut set = 0;
    let mut c = width;
    for k in (1..=size).rev() {
        // the highest bit left is the largest c with C(c, k) <= rank
        c -= 1;
        while choose(c, k) > rank {
            c -= 1;
        }
        set |= 1 << c;
        rank -= choose(c, k);
    }
    set
}

/// The rank of `set` among the sets of as many bits, in increasing order ([`unrank`]'s
/// inverse).
#[cfg(test)]
pub(super) fn rank(set: u64) -> u64 {
    let mut bits = set;
    let mut rank = 0;
    let mut k = 1;
    while bits != 0 {
        rank += choose(bits.trailing_zeros() as usize, k);
        bits &= bits - 1;
        k += 1;
    }
    rank
}

impl Ids {
    /// The unit ids of an `n`×`n` board, `n` from 1 to 32.
    pub(super) fn new(n: usize) -> Ids {
        assert!((1..=MAX_WIDTH + 1).contains(&n), "quadrant ids for n = {n}");
        let half = n / 2;
        let per_middle = if half == 0 {
            1
        } else {
            choose(2 * half - 1, half)
        };
        let middles = if n.is_multiple_of(2) { 1 } else { half + 1 };
        Ids {
            n,
            per_middle,
            len: per_middle * middles as u64,
        }
    }

    /// Number of ids.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// The unit with id `id` (less than [`Ids::len`]).
    pub(super) fn unit(&self, id: u64) -> Unit {
        debug_assert!(id < self.len);
        let n = self.n;
        let half = n / 2;
        let middle = if n.is_multiple_of(2) {
            NO_MIDDLE
        } else {
            (id / self.per_middle) as u8
        };
        let chosen = unrank(id % self.per_middle, half, (2 * half).saturating_sub(1));
        row_set(n, middle, chosen)
    }
}

/// The unit of middle row `middle` whose east rows are `chosen`, a set of `n / 2` bits out of
/// the rows other than the middle one, renumbered without it.
fn row_set(n: usize, middle: u8, chosen: u64) -> Unit {
    let all = (1u64 << n) - 1;
    // the row a gap opens at (past the board when there is no middle row)
    let (free, gap) = if middle == NO_MIDDLE {
        (all, n)
    } else {
        (all & !(1 << middle), usize::from(middle))
    };
    // a gap opened at the middle row keeps the order of the sets
    let below = chosen & ((1 << gap) - 1);
    let east = below | (chosen ^ below) << 1;
    let west = free & !east;
    // upside down: row `r` to row `n - 1 - r`
    let flip_rows = |rows: u64| rows.reverse_bits() >> (64 - n);
    let flip_middle = |m: u8| if m == NO_MIDDLE { m } else { n as u8 - 1 - m };
    let key = |m: u8, rows: u64| (m.wrapping_add(1), rows);
    let mut class = [
        key(middle, east),
        key(middle, west),
        key(flip_middle(middle), flip_rows(east)),
        key(flip_middle(middle), flip_rows(west)),
    ];
    let least = class.iter().all(|&k| k >= key(middle, east));
    class.sort_unstable();
    let distinct = 1 + class.windows(2).filter(|w| w[0] != w[1]).count();
    Unit {
        east_rows: east as u32,
        middle_row: middle,
        weight: if least { distinct as u8 } else { 0 },
    }
}

/// Feeds the rule of `ids` to a plan digest: its board, its size and the units at 256 ids
/// spread over it (any other numbering changes some of them), without listing the rest.
pub(super) fn digest(ids: &Ids, h: &mut crc32fast::Hasher) {
    h.update(b"quadrant units by rank, v2");
    h.update(&ids.len.to_le_bytes());
    let samples = ids.len.min(256);
    for i in 0..samples {
        let u = ids.unit(i * ids.len / samples);
        h.update(&u.east_rows.to_le_bytes());
        h.update(&[u.middle_row, u.weight]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row set of the board, the least of each class kept (the list the ids replace).
    fn listed(n: usize) -> Vec<Unit> {
        let half = n / 2;
        let middles: Vec<u8> = if n.is_multiple_of(2) {
            vec![NO_MIDDLE]
        } else {
            (0..n as u8).collect()
        };
        let mut out = Vec::new();
        for middle in middles {
            for chosen in super::super::quarter::subsets(2 * half as u32, half as u32) {
                let unit = row_set(n, middle, chosen);
                if unit.weight > 0 {
                    out.push(unit);
                }
            }
        }
        out
    }

    #[test]
    fn the_ids_hold_every_least_row_set_once_in_order() {
        for n in 1..=16 {
            let ids = Ids::new(n);
            let counted: Vec<Unit> = (0..ids.len())
                .map(|id| ids.unit(id))
                .filter(|u| u.weight > 0)
                .collect();
            assert_eq!(counted, listed(n), "n = {n}");
        }
    }

    #[test]
    fn weights_cover_every_row_set() {
        // every row set of the board is stood for exactly once: the weights add up to the
        // number of (middle row, east rows) choices
        for n in 1..=17 {
            let ids = Ids::new(n);
            let half = n / 2;
            let middles = if n.is_multiple_of(2) { 1 } else { n as u64 };
            let weights: u64 = (0..ids.len())
                .map(|id| u64::from(ids.unit(id).weight))
                .sum();
            assert_eq!(weights, middles * choose(2 * half, half), "n = {n}");
        }
    }

    #[test]
    fn ranks_and_sets_agree() {
        for width in 0..=12usize {
            for size in 0..=width {
                let all: Vec<u64> =
                    super::super::quarter::subsets(width as u32, size as u32).collect();
                for (r, &set) in all.iter().enumerate() {
                    assert_eq!(unrank(r as u64, size, width), set, "{width} {size} {r}");
                    assert_eq!(rank(set), r as u64);
                }
            }
        }
        // the largest: the last 13-set of 25 rows, N = 27's ids, and N = 28's last unit, the
        // last 14-set of 27 rows (row 27 is west)
        assert_eq!(unrank(choose(25, 13) - 1, 13, 25), ((1 << 13) - 1) << 12);
        assert_eq!(Ids::new(27).len(), 14 * 5_200_300);
        let n28 = Ids::new(28);
        assert_eq!(n28.len(), choose(27, 14));
        assert_eq!(n28.unit(n28.len() - 1).east_rows, ((1 << 14) - 1) << 13);
    }

    #[test]
    fn holes_are_few_on_odd_boards_and_half_on_even_ones() {
        for (n, lo, hi) in [(15, 0.0, 0.15), (16, 0.4, 0.55), (17, 0.0, 0.15)] {
            let ids = Ids::new(n);
            let holes = (0..ids.len())
                .filter(|&id| ids.unit(id).weight == 0)
                .count();
            let share = holes as f64 / ids.len() as f64;
            assert!((lo..hi).contains(&share), "n = {n}: {share}");
        }
    }
}
