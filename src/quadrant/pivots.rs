//! The sieve's pivots: the few diagonals where most pairs clash, which group the stored
//! patterns into blocks that a pattern of the other side can skip, and the signatures (which
//! pivots a pattern occupies) that decide what it may skip.

use super::pattern::{for_each_bit, Pattern, Shift};
use std::collections::TryReserveError;

/// Most diagonals the stored patterns are grouped by. A pattern's *signature* says which
/// pivots it occupies; it can only pair with stored patterns whose signature shares no pivot
/// with its own, so stored blocks holding none of those are skipped.
pub(super) const PIVOTS: usize = 8;

/// Signatures of [`PIVOTS`] bits.
pub(super) const GROUPS: usize = 1 << PIVOTS;

/// Patterns sampled per side to choose the pivots.
const PIVOT_SAMPLE: usize = 128;

/// Signatures as 256-bit sets: `COMPATIBLE[s]` holds every `t` with `t & s == 0`.
pub(super) static COMPATIBLE: [[u64; 4]; GROUPS] = compatible_table();

const fn compatible_table() -> [[u64; 4]; GROUPS] {
    let mut table = [[0u64; 4]; GROUPS];
    let mut s = 0;
    while s < GROUPS {
        let mut t = 0;
        while t < GROUPS {
            if t & s == 0 {
                table[s][t / 64] |= 1 << (t % 64);
            }
            t += 1;
        }
        s += 1;
    }
    table
}

/// The diagonals patterns are grouped by.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Pivots {
    pub(super) count: usize,
    /// Pivot `i`'s diagonal as a pattern.
    mask: [Pattern; PIVOTS],
}

impl Pivots {
    /// Bit `count - 1 - i` set when `p` occupies pivot `i` (the definition;
    /// [`SignatureBytes`] computes it).
    #[cfg(test)]
    fn signature(&self, p: Pattern) -> usize {
        let mut s = 0;
        for m in &self.mask[..self.count] {
            s = s << 1 | usize::from(p.main & m.main | p.anti & m.anti != 0);
        }
        s
    }

    /// Pivot `i`'s diagonal, as a bit index (main diagonals below 64, anti-diagonal `d` at `64 + d`), and its bit in a signature.
    pub(super) fn diagonals(&self) -> impl Iterator<Item = (usize, u8)> + '_ {
        self.mask[..self.count].iter().enumerate().map(|(i, m)| {
            let d = if m.main != 0 {
                m.main.trailing_zeros()
            } else {
                64 + m.anti.trailing_zeros()
            };
            (d as usize, 1 << (self.count - 1 - i))
        })
    }

    /// The diagonals occupied most often on both sides, strongest first: a pair clashes on
    /// diagonal `d` about as often as the product of the two sides' rates.
    pub(super) fn choose(
        count: usize,
        stored: &[Pattern],
        (others, shift): (&[Pattern], Shift),
    ) -> Pivots {
        if count == 0 {
            return Pivots::default();
        }
        let occupancy = |side: &[Pattern], shift: Shift| {
            let mut rate = [0u32; 128];
            let step = side.len().div_ceil(PIVOT_SAMPLE).max(1);
            for &p in side.iter().step_by(step) {
                let p = shift.apply(p);
                for_each_bit(p.main, |d| rate[d] += 1);
                for_each_bit(p.anti, |d| rate[64 + d] += 1);
            }
            rate
        };
        let (a, b) = (
            occupancy(stored, Shift::default()),
            occupancy(others, shift),
        );
        let mut score: [u64; 128] = std::array::from_fn(|d| u64::from(a[d]) * u64::from(b[d]));
        let mut pivots = Pivots::default();
        while pivots.count < count {
            let (d, &best) = score
                .iter()
                .enumerate()
                .max_by_key(|&(d, s)| (*s, std::cmp::Reverse(d)))
                .expect("128 scores");
            if best == 0 {
                break;
            }
            pivots.mask[pivots.count] = one_diagonal(d);
            pivots.count += 1;
            score[d] = 0;
        }
        pivots
    }
}

/// Diagonal `d` alone: main diagonal `d` below 64, anti-diagonal `d - 64` from 64.
fn one_diagonal(d: usize) -> Pattern {
    if d < 64 {
        Pattern {
            main: 1 << d,
            anti: 0,
        }
    } else {
        Pattern {
            main: 0,
            anti: 1 << (d - 64),
        }
    }
}

/// `Pivots::signature` by table lookups, a byte of the masks at a time: pivots crowd into
/// the middle diagonals, so a few bytes hold them all (testing the pivots one by one took
/// a sixth of the time at N = 18).
#[derive(Clone, Debug)]
pub(super) struct SignatureBytes {
    count: usize,
    /// Where lookup `l`'s byte starts: bit `at[l]` of `main`, or bit `at[l] - 64` of `anti`.
    at: [u8; PIVOTS],
    /// The signature bits that each value of lookup `l`'s byte gives.
    bits: [[u8; 256]; PIVOTS],
}

impl SignatureBytes {
    pub(super) fn new(pivots: &Pivots) -> SignatureBytes {
        SignatureBytes::from_diagonals(pivots.diagonals())
    }

    /// The lookups for diagonals `d` (indexed like [`Pivots::diagonals`]) giving bits `bit`.
    pub(super) fn from_diagonals(diagonals: impl Iterator<Item = (usize, u8)>) -> SignatureBytes {
        let mut table = SignatureBytes {
            count: 0,
            at: [0; PIVOTS],
            bits: [[0; 256]; PIVOTS],
        };
        for (d, bit) in diagonals {
            let at = (d / 8 * 8) as u8;
            let l = match table.at[..table.count].iter().position(|&a| a == at) {
                Some(l) => l,
                None => {
                    table.at[table.count] = at;
                    table.count += 1;
                    table.count - 1
                }
            };
            for (value, bits) in table.bits[l].iter_mut().enumerate() {
                if value >> (d % 8) & 1 != 0 {
                    *bits |= bit;
                }
            }
        }
        table
    }

    #[inline(always)]
    pub(super) fn signature(&self, p: Pattern) -> u8 {
        let mut s = 0;
        for (&at, bits) in self.at[..self.count].iter().zip(&self.bits) {
            let word = if at < 64 { p.main } else { p.anti };
            s |= bits[(word >> (at % 64)) as usize & 0xFF];
        }
        s
    }

    /// Copies `patterns` into `sorted` in increasing signature; signature `s`'s patterns end
    /// up at `sorted[start[s]..start[s + 1]]` (a counting sort; `signatures` is a buffer).
    pub(super) fn sort(
        &self,
        patterns: &[Pattern],
        sorted: &mut Vec<Pattern>,
        signatures: &mut Vec<u8>,
        start: &mut [usize; GROUPS + 1],
    ) -> Result<(), TryReserveError> {
        signatures.clear();
        signatures.try_reserve(patterns.len())?;
        signatures.extend(patterns.iter().map(|&p| self.signature(p)));
        start.fill(0);
        for &s in signatures.iter() {
            start[usize::from(s) + 1] += 1;
        }
        for g in 0..GROUPS {
            start[g + 1] += start[g];
        }
        sorted.clear();
        sorted.try_reserve(patterns.len())?;
        sorted.resize(patterns.len(), Pattern::default());
        let mut next = [0; GROUPS];
        next.copy_from_slice(&start[..GROUPS]);
        for (&p, &s) in patterns.iter().zip(signatures.iter()) {
            let at = &mut next[usize::from(s)];
            sorted[*at] = p;
            *at += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_bytes_agree_with_the_pivot_test() {
        let mut next = crate::kernel::xorshift(0x2545_F491_4F6C_DD1D);
        let patterns: Vec<Pattern> = (0..2000)
            .map(|_| Pattern {
                main: next() & next(),
                anti: next() & next(),
            })
            .collect();
        for count in 0..=PIVOTS {
            // spread pivots over both words and over several bytes of each
            let mut pivots = Pivots {
                count,
                ..Pivots::default()
            };
            for i in 0..count {
                pivots.mask[i] = one_diagonal((i * 23 + 5) % 64 + i % 2 * 64);
            }
            let bytes = SignatureBytes::new(&pivots);
            for &p in &patterns {
                assert_eq!(
                    usize::from(bytes.signature(p)),
                    pivots.signature(p),
                    "{count}"
                );
            }
        }
    }
}
