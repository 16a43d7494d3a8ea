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
    /// [`Signatures`] computes it).
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

/// `Pivots::signature` two ways. By table lookups, a byte of the masks at a time: pivots
/// crowd into the middle diagonals, so a few bytes hold them all (testing the pivots one by
/// one took a sixth of the time at N = 18). Or, where the CPU has `pext`, by gathering the
/// pivots' bits of each word and looking the gathered bits up once (the sorts took 15 % of
/// the time at N = 18 with the bytes).
#[derive(Clone, Debug)]
pub(super) struct Signatures {
    count: usize,
    /// Where lookup `l`'s byte starts: bit `at[l]` of `main`, or bit `at[l] - 64` of `anti`.
    at: [u8; PIVOTS],
    /// The signature bits that each value of lookup `l`'s byte gives.
    bits: [[u8; 256]; PIVOTS],
    /// The pivots of each direction, as masks to gather by.
    main: u64,
    anti: u64,
    /// How many pivots `main` holds: the anti-diagonals' gathered bits follow them.
    main_count: u32,
    /// The signature that each value of the gathered bits gives.
    gathered: [u8; GROUPS],
}

impl Signatures {
    pub(super) fn new(pivots: &Pivots) -> Signatures {
        Signatures::from_diagonals(pivots.diagonals())
    }

    /// The lookups for diagonals `d` (indexed like [`Pivots::diagonals`]) giving bits `bit`.
    pub(super) fn from_diagonals(diagonals: impl Iterator<Item = (usize, u8)>) -> Signatures {
        let mut table = Signatures {
            count: 0,
            at: [0; PIVOTS],
            bits: [[0; 256]; PIVOTS],
            main: 0,
            anti: 0,
            main_count: 0,
            gathered: [0; GROUPS],
        };
        let mut pivots = [(0usize, 0u8); PIVOTS];
        let mut count = 0;
        for (d, bit) in diagonals {
            pivots[count] = (d, bit);
            count += 1;
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
            if d < 64 {
                table.main |= 1 << d;
            } else {
                table.anti |= 1 << (d - 64);
            }
        }
        table.main_count = table.main.count_ones();
        // a pivot's gathered bit: its rank among its direction's pivots, past the main ones
        let gathered_bit = |d: usize| {
            let below = |mask: u64, d: usize| (mask & ((1 << d) - 1)).count_ones();
            if d < 64 {
                below(table.main, d)
            } else {
                table.main_count + below(table.anti, d - 64)
            }
        };
        let mut bit_of = [0u8; PIVOTS];
        for &(d, bit) in &pivots[..count] {
            bit_of[gathered_bit(d) as usize] = bit;
        }
        for (value, signature) in table.gathered.iter_mut().enumerate() {
            *signature = (0..count)
                .filter(|&i| value >> i & 1 != 0)
                .fold(0, |s, i| s | bit_of[i]);
        }
        table
    }

    /// `p`'s signature with the pivots' bits gathered by `extract`, which takes the bits of
    /// a word at a mask's bits, packed low (`pext`).
    #[inline(always)]
    pub(super) fn signature_by(&self, p: Pattern, extract: impl Fn(u64, u64) -> u64) -> u8 {
        let gathered = extract(p.main, self.main) | extract(p.anti, self.anti) << self.main_count;
        self.gathered[gathered as usize]
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

    /// Copies `patterns` into `sorted` in increasing signature, as `signature_of` computes
    /// it ([`Signatures::signature`] or [`Signatures::signature_by`]); signature `s`'s
    /// patterns end up at `sorted[start[s]..start[s + 1]]` (a counting sort; `signatures` is
    /// a buffer).
    #[inline(always)]
    pub(super) fn sort(
        patterns: &[Pattern],
        signature_of: impl Fn(Pattern) -> u8,
        sorted: &mut Vec<Pattern>,
        signatures: &mut Vec<u8>,
        start: &mut [usize; GROUPS + 1],
    ) -> Result<(), TryReserveError> {
        signatures.clear();
        signatures.try_reserve(patterns.len())?;
        signatures.extend(patterns.iter().map(|&p| signature_of(p)));
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

    /// `pext` without the instruction: the bits of `x` at `mask`'s bits, packed low.
    fn gather(x: u64, mask: u64) -> u64 {
        let mut packed = 0;
        let mut i = 0;
        for_each_bit(mask, |d| {
            packed |= (x >> d & 1) << i;
            i += 1;
        });
        packed
    }

    #[test]
    fn signatures_agree_with_the_pivot_test() {
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
            let signatures = Signatures::new(&pivots);
            for &p in &patterns {
                let want = pivots.signature(p);
                assert_eq!(usize::from(signatures.signature(p)), want, "{count}");
                let gathered = signatures.signature_by(p, gather);
                assert_eq!(usize::from(gathered), want, "{count}, gathered");
            }
        }
    }
}
