//! Half-board patterns as the quadrant engine joins and pairs them: the diagonals a set of
//! queens occupies, how they move when the queens move east or west, the regions of the board
//! they lie in, and how a quarter's placements are stored.

/// The diagonals a set of queens occupies, as full-board masks: main diagonal
/// `row - col + n - 1`, anti-diagonal `row + col` (bits `0..2n-1`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Pattern {
    /// Main diagonals (`row - col + n - 1`).
    pub main: u64,
    /// Anti-diagonals (`row + col`).
    pub anti: u64,
}

impl Pattern {
    /// The diagonals of one queen at `(row, col)` on an `n`×`n` board.
    pub fn queen(n: usize, row: usize, col: usize) -> Pattern {
        Pattern {
            main: 1 << (row + n - 1 - col),
            anti: 1 << (row + col),
        }
    }

    /// Both patterns together.
    pub fn with(self, other: Pattern) -> Pattern {
        Pattern {
            main: self.main | other.main,
            anti: self.anti | other.anti,
        }
    }

    /// Whether the two share no diagonal.
    pub fn disjoint(self, other: Pattern) -> bool {
        (self.main & other.main) | (self.anti & other.anti) == 0
    }
}

/// Moves patterns some columns east or west: a queen `c` columns further east has main
/// diagonal `row - col + n - 1` lower by `c` and anti-diagonal `row + col` higher by `c`. The
/// quadrant engine builds its east half in the west half's columns and moves one side's
/// patterns with this before they meet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shift {
    /// How far the main and anti-diagonal masks move up (down when negative).
    pub(super) main: i8,
    pub(super) anti: i8,
}

impl Shift {
    /// Moves patterns `columns` columns west. Anti-diagonals that would fall below 0 are
    /// dropped: a queen `columns` or more columns east of the west edge lies on none of them.
    pub fn west(columns: usize) -> Shift {
        Shift {
            main: columns as i8,
            anti: -(columns as i8),
        }
    }

    /// Moves patterns `columns` columns east (back where [`Shift::west`] took them).
    pub fn east(columns: usize) -> Shift {
        Shift {
            main: -(columns as i8),
            anti: columns as i8,
        }
    }

    /// `p` moved.
    #[inline(always)]
    pub fn apply(self, p: Pattern) -> Pattern {
        let by = |mask: u64, up: i8| {
            if up >= 0 {
                mask << up
            } else {
                mask >> -up
            }
        };
        Pattern {
            main: by(p.main, self.main),
            anti: by(p.anti, self.anti),
        }
    }
}

#[inline(always)]
/// Calls `f` with the index of each set bit of `mask`, lowest first.
pub(super) fn for_each_bit(mut mask: u64, mut f: impl FnMut(usize)) {
    while mask != 0 {
        f(mask.trailing_zeros() as usize);
        mask &= mask - 1;
    }
}

/// A placement's diagonals counted from the lowest its region can hold, two 32-bit masks: half
/// the bytes of a [`Pattern`] (a quarter of a 23×23 board spans 23 diagonals each way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Packed {
    main: u32,
    anti: u32,
}

/// How a region's placements are stored: as board patterns, or packed.
pub(crate) trait Stored: Copy + Default + Send + Sync {
    fn store(region: Region, p: Pattern) -> Self;
    /// The board pattern of a placement of `region` stored so.
    fn board(self, region: Region) -> Pattern;
}

impl Stored for Pattern {
    fn store(_: Region, p: Pattern) -> Pattern {
        p
    }
    fn board(self, _: Region) -> Pattern {
        self
    }
}

impl Stored for Packed {
    fn store(region: Region, p: Pattern) -> Packed {
        let (main_low, anti_low) = region.lowest_diagonals();
        let packed = Packed {
            main: (p.main >> main_low) as u32,
            anti: (p.anti >> anti_low) as u32,
        };
        debug_assert_eq!(packed.unpack(region), p, "{region:?} fits 32 diagonals");
        packed
    }
    fn board(self, region: Region) -> Pattern {
        self.unpack(region)
    }
}

impl Packed {
    /// Its main and anti-diagonal words, as stored.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn words(self) -> (u32, u32) {
        (self.main, self.anti)
    }

    /// The board pattern of a placement of `region`.
    #[inline(always)]
    pub(crate) fn unpack(self, region: Region) -> Pattern {
        let (main_low, anti_low) = region.lowest_diagonals();
        Pattern {
            main: u64::from(self.main) << main_low,
            anti: u64::from(self.anti) << anti_low,
        }
    }
}

/// The rows `row0..row0 + rows` and columns `col0..col0 + cols` of an `n`×`n` board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    pub n: usize,
    pub row0: usize,
    pub rows: usize,
    pub col0: usize,
    pub cols: usize,
}

impl Region {
    /// The lowest main and anti-diagonal a queen of the region can occupy: how far a
    /// [`Packed`] placement's words move up when unpacked.
    pub(crate) fn lowest_diagonals(self) -> (usize, usize) {
        let main = self.row0 + self.n - self.col0 - self.cols;
        (main, self.row0 + self.col0)
    }

    /// Rows of the board the region covers, as a mask.
    pub(crate) fn row_mask(self) -> u64 {
        ((1u64 << self.rows) - 1) << self.row0
    }

    /// The region's own row set (bit `i`: row `row0 + i`) of the board rows `rows`.
    pub(crate) fn local_rows(self, rows: u64) -> usize {
        (rows >> self.row0) as usize & ((1 << self.rows) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_placements_unpack_to_their_patterns() {
        // the largest quarters the engine builds: 23's north and south, and one of 24
        for (n, row0, rows) in [(23, 0, 11), (23, 11, 12), (24, 12, 12)] {
            let region = Region {
                n,
                row0,
                rows,
                col0: 0,
                cols: n / 2,
            };
            for (row, col) in [(0, 0), (rows - 1, 0), (0, n / 2 - 1), (rows - 1, n / 2 - 1)] {
                let p = Pattern::queen(n, row0 + row, col);
                assert_eq!(Packed::store(region, p).unpack(region), p, "{region:?}");
            }
        }
    }
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn pattern_example() {
        use crate::quadrant::pattern::Pattern;
        let corner = Pattern::queen(8, 0, 0);
        assert_eq!((corner.main, corner.anti), (1 << 7, 1));
        assert!(corner.disjoint(Pattern::queen(8, 1, 2)));
        assert!(!corner.disjoint(Pattern::queen(8, 7, 7)));
    }
}
