//! The quadrant engine's inner loop: how many pairs of half-board patterns share no diagonal.
//!
//! One side's patterns are stored bit-sliced: for every diagonal that some pattern occupies,
//! the set of patterns occupying it, 256 patterns to a block. A pattern of the other side is
//! compatible with exactly the patterns outside the union of its diagonals' sets, so a pair
//! test costs a fraction of an OR and a popcount instead of two ANDs and a compare.

use super::Kernel;

/// The diagonals a set of queens occupies, as full-board masks: main diagonal
/// `row - col + n - 1`, anti-diagonal `row + col` (bits `0..2n-1`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

/// Transposes a 64×64 bit matrix in place: bit `c` of `rows[r]` becomes bit `r` of
/// `rows[c]` (six rounds of swapping off-diagonal blocks of 32, 16, ... 1 bits).
#[inline]
fn transpose64(rows: &mut [u64; 64]) {
    let mut width = 32;
    // the columns of the left half of each block pair
    let mut low = 0x0000_0000_FFFF_FFFFu64;
    while width != 0 {
        for k in (0..64).filter(|k| k & width == 0) {
            let swap = ((rows[k] >> width) ^ rows[k + width]) & low;
            rows[k + width] ^= swap;
            rows[k] ^= swap << width;
        }
        width >>= 1;
        low ^= low << width;
    }
}

/// Patterns per block: one 256-bit vector per diagonal.
const BLOCK: usize = 256;

/// One side's patterns, bit-sliced by diagonal.
#[derive(Clone, Debug)]
pub struct Sieve {
    len: usize,
    blocks: usize,
    slices: usize,
    /// Slice index of main diagonal `d` at `d`, of anti-diagonal `d` at `64 + d`.
    slot: [u8; 128],
    main: u64,
    anti: u64,
    /// Block-major: block `b`'s slice `s` at `b * slices + s`.
    data: Vec<[u64; 4]>,
}

impl Default for Sieve {
    fn default() -> Sieve {
        Sieve {
            len: 0,
            blocks: 0,
            slices: 0,
            slot: [0; 128],
            main: 0,
            anti: 0,
            data: Vec::new(),
        }
    }
}

impl Sieve {
    /// Replaces the stored patterns with `patterns` (the buffer is reused).
    pub fn load(&mut self, patterns: &[Pattern]) {
        let (main, anti) = patterns
            .iter()
            .fold((0, 0), |(m, a), p| (m | p.main, a | p.anti));
        self.len = patterns.len();
        self.main = main;
        self.anti = anti;
        let mut slices = 0;
        for bit in 0..64 {
            if main >> bit & 1 != 0 {
                self.slot[bit] = slices;
                slices += 1;
            }
            if anti >> bit & 1 != 0 {
                self.slot[64 + bit] = slices;
                slices += 1;
            }
        }
        self.slices = slices as usize;
        self.blocks = patterns.len().div_ceil(BLOCK);
        self.data.clear();
        self.data.resize(self.slices * self.blocks, [0; 4]);
        // 64 patterns at a time: a bit-matrix transpose turns their masks into one word per
        // diagonal (setting bits one by one chains read-modify-writes through memory)
        let slot = &self.slot;
        for (w, chunk) in patterns.chunks(64).enumerate() {
            let block = &mut self.data[(w * 64 / BLOCK) * self.slices..][..self.slices];
            let word = w % (BLOCK / 64);
            for (masks, offset) in [(main, 0), (anti, 64)] {
                let mut rows = [0u64; 64];
                for (row, p) in rows.iter_mut().zip(chunk) {
                    *row = if offset == 0 { p.main } else { p.anti };
                }
                transpose64(&mut rows);
                for_each_bit(masks, |d| block[slot[offset + d] as usize][word] = rows[d]);
            }
        }
    }

    /// How many pairs (stored pattern, pattern of `others`) share no diagonal, on the fastest
    /// loop this CPU runs.
    #[cfg(test)]
    pub fn count_disjoint(&self, others: &[Pattern]) -> u64 {
        self.count_disjoint_on(vector_kernel().unwrap_or(Kernel::Scalar), others)
    }

    /// [`Sieve::count_disjoint`] on `kernel`: [`Kernel::Scalar`] runs the portable loop, a
    /// vector kernel the AVX2 build of it (where the CPU has AVX2; the portable loop otherwise).
    pub fn count_disjoint_on(&self, kernel: Kernel, others: &[Pattern]) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if kernel != Kernel::Scalar && vector_kernel().is_some() {
            // SAFETY: `count_avx2` only needs AVX2 and popcnt, which `vector_kernel` found.
            return unsafe { count_avx2(self, others) };
        }
        let _ = kernel;
        count_body(self, others)
    }
}

/// The kernel the sieve runs when a vector kernel is asked for: AVX2 where the CPU has it
/// (the AVX-512 machines too: the loop is bound by loads, not by width).
pub fn vector_kernel() -> Option<Kernel> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("popcnt")
    {
        return Some(Kernel::Avx2);
    }
    None
}

/// The same loop compiled for AVX2 (the 256-bit ORs become one instruction) and popcnt.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn count_avx2(sieve: &Sieve, others: &[Pattern]) -> u64 {
    count_body(sieve, others)
}

#[inline(always)]
fn count_body(sieve: &Sieve, others: &[Pattern]) -> u64 {
    if sieve.len == 0 {
        return 0;
    }
    if sieve.slices == 0 {
        // no stored pattern occupies a diagonal: every pair is disjoint
        return sieve.len as u64 * others.len() as u64;
    }
    let mut hits = 0u64;
    let mut slots = [0u8; 128];
    for p in others {
        // only diagonals some stored pattern occupies can clash
        let mut k = 0;
        for_each_bit(p.main & sieve.main, |d| {
            slots[k] = sieve.slot[d];
            k += 1;
        });
        for_each_bit(p.anti & sieve.anti, |d| {
            slots[k] = sieve.slot[64 + d];
            k += 1;
        });
        for block in sieve.data.chunks_exact(sieve.slices) {
            let mut clash = [0u64; 4];
            for &s in &slots[..k] {
                let v = block[s as usize];
                for w in 0..4 {
                    clash[w] |= v[w];
                }
            }
            hits += clash.iter().map(|w| u64::from(w.count_ones())).sum::<u64>();
        }
    }
    sieve.len as u64 * others.len() as u64 - hits
}

#[inline(always)]
fn for_each_bit(mut mask: u64, mut f: impl FnMut(usize)) {
    while mask != 0 {
        f(mask.trailing_zeros() as usize);
        mask &= mask - 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose64_swaps_rows_and_columns() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let rows: [u64; 64] = std::array::from_fn(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        });
        let mut t = rows;
        transpose64(&mut t);
        for (r, row) in rows.iter().enumerate() {
            for (c, column) in t.iter().enumerate() {
                assert_eq!(row >> c & 1, column >> r & 1, "({r}, {c})");
            }
        }
    }

    /// Patterns from a small generator, compared with the plain pair test.
    #[test]
    fn counts_like_the_pair_test() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Pattern {
                main: x & x >> 9 & 0x3FFF_FFFF,
                anti: x >> 30 & x >> 41 & 0x3FFF_FFFF,
            }
        };
        for (a, b) in [(0, 5), (1, 1), (255, 3), (256, 7), (257, 40), (1000, 33)] {
            let left: Vec<Pattern> = (0..a).map(|_| next()).collect();
            let right: Vec<Pattern> = (0..b).map(|_| next()).collect();
            let mut sieve = Sieve::default();
            sieve.load(&left);
            let want = left
                .iter()
                .flat_map(|p| right.iter().map(move |q| p.disjoint(*q)))
                .filter(|&ok| ok)
                .count() as u64;
            assert_eq!(sieve.count_disjoint(&right), want, "{a} x {b}");
            assert_eq!(count_body(&sieve, &right), want, "portable body, {a} x {b}");
        }
    }
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn pattern_example() {
        use crate::kernel::sieve::Pattern;
        let corner = Pattern::queen(8, 0, 0);
        assert_eq!((corner.main, corner.anti), (1 << 7, 1));
        assert!(corner.disjoint(Pattern::queen(8, 1, 2)));
        assert!(!corner.disjoint(Pattern::queen(8, 7, 7)));
    }

    #[test]
    fn sieve_example() {
        use crate::kernel::sieve::{Pattern, Sieve};
        let n = 4;
        let side = [Pattern::queen(n, 0, 1), Pattern::queen(n, 0, 2)];
        let mut sieve = Sieve::default();
        sieve.load(&side);
        // a queen on (1, 3) shares a diagonal with (0, 2) only
        assert_eq!(sieve.count_disjoint(&[Pattern::queen(n, 1, 3)]), 1);
    }

    #[test]
    fn vector_kernel_example() {
        use crate::kernel::{sieve, Kernel};
        assert!(matches!(sieve::vector_kernel(), None | Some(Kernel::Avx2)));
    }
}
