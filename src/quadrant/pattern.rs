//! Half-board patterns as the quadrant engine joins and pairs them: the diagonals a set of
//! queens occupies, and how they move when the queens move east or west.

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
