//! The sieve's pivots: the few diagonals where most pairs clash, which group the stored
//! patterns into blocks that a pattern of the other side can skip, and the signatures (which
//! pivots a pattern occupies) that decide what it may skip.

use super::pattern::{for_each_bit, Pattern, Shift};
use std::collections::TryReserveError;

/// Most diagonals the stored patterns are grouped by. A pattern's *signature* says which
/// pivots it occupies; it can only pair with stored patterns whose signature shares no pivot
/// with its own, so stored blocks holding none of those are skipped. The sieve takes as many
/// as its blocks can tell apart and one more (13 for 2^20 stored patterns, 15 for 2^22):
/// each removes about a quarter of the pairs, and from N = 22 the lists are long enough
/// for more than ten. Fifteen fill three lookups of the sieve, which a run reads once per
/// block (sixteen took a fourth, and the loop was a tenth slower at N = 24).
pub(super) const PIVOTS: usize = 15;

/// Stretches of a side sorted side by side (see [`Signatures::sort`]).
const STREAMS: usize = 4;

/// Patterns sampled per side to choose the pivots.
const PIVOT_SAMPLE: usize = 128;

/// Pairs of a load (its stored patterns times the other side's) from which the pivots are
/// chosen on sampled pairs ([`Pivots::choose_on_pairs`]), 256 patterns sampled a side: a
/// millisecond a load, which pays for itself only past a few billion pairs (N = 22 and
/// above). From 64 times as many, 1,024 a side (16 times as long): at N = 24, 0.96 times
/// as long as with 256.
const ON_PAIRS_FROM: u64 = 1 << 32;

/// A signature: the place of a pattern's pivot bits (bit `count - 1 - i` for pivot `i`) in
/// the reflected Gray code ([`pivot_bits`] of it gives them back). Groups are stored in
/// signature order, so a signature's compatible groups (those sharing no pivot bit with it)
/// lie in fewer, longer runs than in the bits' own order, and fewer blocks straddle a run's
/// end: 6 to 7 % fewer pairs visited at N = 18 to 20.
pub(super) type Signature = u16;

/// The pivot bits of signature `s`: the Gray code of `s`.
pub(super) fn pivot_bits(s: usize) -> usize {
    s ^ s >> 1
}

/// The signature of pivot bits `bits` ([`pivot_bits`] undone: each bit the parity of the
/// bits from it up). Linear over XOR, so the signature of disjoint parts is the XOR of
/// theirs.
pub(super) fn signature_of_bits(bits: usize) -> usize {
    let mut s = bits;
    let mut shift = 1;
    while shift < usize::BITS {
        s ^= s >> shift;
        shift <<= 1;
    }
    s
}

/// The buffers of a sort by signature: the sorted patterns (as `T`s), their signatures, and
/// where each signature's patterns start.
pub(super) type SortBuffers<'a, T = Pattern> =
    (&'a mut Vec<T>, &'a mut Vec<Signature>, &'a mut Vec<usize>);

/// The signatures among `groups` (a power of two) whose pivot bits share none with those of
/// `s`, in increasing order. Where `s`'s pivot bits are set, such a signature's bit repeats
/// the one above it (its Gray code is 0 there); its other bits (`free`) are any subset of
/// them, and taken in increasing order they give increasing signatures.
pub(super) fn compatible(s: usize, groups: usize) -> impl Iterator<Item = usize> {
    let taken = pivot_bits(s);
    let free = !taken & (groups - 1);
    // the next subset of `free` above `t` is `(t - free) & free`
    let subsets = std::iter::successors(Some(0usize), move |&t| {
        (t != free).then(|| t.wrapping_sub(free) & free)
    });
    subsets.map(move |chosen| {
        // each bit of `taken` copies the bit above it, down each run of them
        let (mut t, mut runs, mut shift) = (chosen, taken, 1);
        while runs != 0 {
            t |= t >> shift & runs;
            runs &= runs >> shift;
            shift <<= 1;
        }
        t
    })
}

/// The diagonals patterns are grouped by.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Pivots {
    pub(super) count: usize,
    /// Pivot `i`'s diagonal as a pattern.
    mask: [Pattern; PIVOTS],
}

impl Pivots {
    /// `p`'s pivot bits: bit `count - 1 - i` set when it occupies pivot `i` (the
    /// definition; [`Signatures`] computes their signature).
    #[cfg(test)]
    fn signature(&self, p: Pattern) -> usize {
        let mut s = 0;
        for m in &self.mask[..self.count] {
            s = s << 1 | usize::from(p.main & m.main | p.anti & m.anti != 0);
        }
        s
    }

    /// Pivot `i`'s diagonal, as a bit index (main diagonals below 64, anti-diagonal `d` at `64 + d`), and its pivot bit.
    pub(super) fn diagonals(&self) -> impl Iterator<Item = (usize, Signature)> + '_ {
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
    /// diagonal `d` about as often as the product of the two sides' rates. Where the pairs
    /// are many, chosen on sampled pairs instead ([`Pivots::choose_on_pairs`]).
    /// `others` may be a sample of the other side, of `others_len` patterns in all.
    pub(super) fn choose(
        count: usize,
        stored: &[Pattern],
        (others, others_len, shift): (&[Pattern], usize, Shift),
    ) -> Pivots {
        if count == 0 {
            return Pivots::default();
        }
        let pairs = stored.len() as u64 * others_len as u64;
        if pairs >= ON_PAIRS_FROM << 6 {
            return Pivots::choose_on_pairs::<16>(count, stored, (others, shift));
        }
        if pairs >= ON_PAIRS_FROM {
            return Pivots::choose_on_pairs::<4>(count, stored, (others, shift));
        }
        let occupancy = |side: &[Pattern], shift: Shift| {
            let mut rate = [0u32; 128];
            let step = side.len().div_ceil(PIVOT_SAMPLE).max(1);
            for &p in side.iter().step_by(step) {
                each_diagonal(shift.apply(p), |d| rate[d] += 1);
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
            let Some(d) = strongest(&score) else {
                break;
            };
            pivots.mask[pivots.count] = one_diagonal(d);
            pivots.count += 1;
            score[d] = 0;
        }
        pivots
    }
}

impl Pivots {
    /// Each pivot the diagonal on which most sampled pairs that no earlier pivot separates
    /// clash: diagonals occupied most often are much alike (a pattern takes half the
    /// diagonals of each direction near the middle), and the products of rates chose pivots
    /// that split the same pairs again. At N = 24 the blocks visited fell by a third.
    /// `W` words of samples: `64 W` patterns sampled a side.
    fn choose_on_pairs<const W: usize>(
        count: usize,
        stored: &[Pattern],
        (others, shift): (&[Pattern], Shift),
    ) -> Pivots {
        // sampled patterns' occupancy of one diagonal: bit `i` for sample `i`
        type Sampled<const W: usize> = [u64; W];
        // for each diagonal, which sampled patterns occupy it
        let sample = |side: &[Pattern], shift: Shift| {
            let mut on = [[0u64; W]; 128];
            let step = side.len().div_ceil(64 * W).max(1);
            let taken: Vec<Pattern> = side.iter().step_by(step).map(|&p| shift.apply(p)).collect();
            for (i, p) in taken.iter().enumerate() {
                let bit = 1 << (i % 64);
                each_diagonal(*p, |d| on[d][i / 64] |= bit);
            }
            (on, taken)
        };
        let ((a_on, a), (b_on, b)) = (sample(stored, Shift::default()), sample(others, shift));
        let common = |x: &Sampled<W>, y: &Sampled<W>| -> u64 {
            x.iter()
                .zip(y)
                .map(|(x, y)| u64::from((x & y).count_ones()))
                .sum()
        };
        // for each sampled stored pattern, the sampled others it is not yet separated from
        let all: Sampled<W> = std::array::from_fn(|w| {
            let bits = b.len().saturating_sub(64 * w).min(64);
            u64::MAX.checked_shr(64 - bits as u32).unwrap_or(0)
        });
        let mut alive = vec![all; a.len()];
        // for each diagonal, the pairs still together that clash on it
        let mut clashes = [0u64; 128];
        for (i, p) in a.iter().enumerate() {
            each_diagonal(*p, |d| clashes[d] += common(&alive[i], &b_on[d]));
        }
        let mut pivots = Pivots::default();
        while pivots.count < count {
            let Some(d) = strongest(&clashes) else {
                break;
            };
            // the pairs it separates are no longer counted on any diagonal
            for i in (0..a.len()).filter(|&i| a_on[d][i / 64] >> (i % 64) & 1 != 0) {
                let parted: Sampled<W> = std::array::from_fn(|w| alive[i][w] & b_on[d][w]);
                alive[i] = std::array::from_fn(|w| alive[i][w] & !parted[w]);
                each_diagonal(a[i], |e| clashes[e] -= common(&parted, &b_on[e]));
            }
            pivots.mask[pivots.count] = one_diagonal(d);
            pivots.count += 1;
        }
        pivots
    }
}

/// The diagonal of the highest score (the lowest of those tied), `None` when every score is 0.
fn strongest(scores: &[u64; 128]) -> Option<usize> {
    let (d, &best) = scores
        .iter()
        .enumerate()
        .max_by_key(|&(d, s)| (*s, std::cmp::Reverse(d)))
        .expect("128 scores");
    (best > 0).then_some(d)
}

/// Each diagonal of `p` (main diagonal `d` as `d`, anti-diagonal `d` as `64 + d`).
fn each_diagonal(p: Pattern, mut f: impl FnMut(usize)) {
    for_each_bit(p.main, &mut f);
    for_each_bit(p.anti, |d| f(64 + d));
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
    /// Where lookup `l`'s byte starts: bit `at[l]` of `main`, or bit `at[l] - 64` of `anti`.
    at: Vec<u8>,
    /// The signature of the pivot bits that each value of lookup `l`'s byte gives (a
    /// pattern's is the XOR of its bytes').
    bits: Vec<[Signature; 256]>,
    /// The pivots of each direction, as masks to gather by.
    main: u64,
    anti: u64,
    /// How many pivots `main` holds: the anti-diagonals' gathered bits follow them.
    main_count: u32,
    /// The signature that each value of the gathered bits gives: `1 << count` of them (a
    /// fixed table for fifteen pivots took 64 KiB to clear for each load of a unit).
    gathered: Vec<Signature>,
    /// For each pivot bit, the gathered bit of its pivot.
    gathered_bit: [u8; PIVOTS],
    /// One past the largest signature: a power of two.
    groups: usize,
}

impl Signatures {
    pub(super) fn new(pivots: &Pivots) -> Signatures {
        Signatures::from_diagonals(pivots.diagonals())
    }

    /// The lookups for diagonals `d` (indexed like [`Pivots::diagonals`]) giving pivot bits
    /// `bit` (at most [`PIVOTS`]). Its tables are as long as the pivots need: a unit makes two.
    pub(super) fn from_diagonals(
        diagonals: impl Iterator<Item = (usize, Signature)>,
    ) -> Signatures {
        let mut table = Signatures {
            at: Vec::new(),
            bits: Vec::new(),
            main: 0,
            anti: 0,
            main_count: 0,
            gathered: Vec::new(),
            gathered_bit: [0; PIVOTS],
            groups: 1,
        };
        let mut pivots = [(0usize, 0); PIVOTS];
        let mut count = 0;
        // for each lookup, the pivot bit of each bit of its byte
        let mut byte_bits: Vec<[Signature; 8]> = Vec::new();
        for (d, bit) in diagonals {
            pivots[count] = (d, bit);
            count += 1;
            let at = (d / 8 * 8) as u8;
            let l = match table.at.iter().position(|&a| a == at) {
                Some(l) => l,
                None => {
                    table.at.push(at);
                    byte_bits.push([0; 8]);
                    table.at.len() - 1
                }
            };
            byte_bits[l][d % 8] |= bit;
            if d < 64 {
                table.main |= 1 << d;
            } else {
                table.anti |= 1 << (d - 64);
            }
        }
        // each byte's pivot bits: those of the byte without its lowest bit, and that
        // bit's (a pass over the byte's values for each pivot was 0.8 % of `count 18`)
        // (then their signatures: the bytes hold disjoint bits, whose signatures XOR)
        table.bits = byte_bits
            .iter()
            .map(|of_bit| {
                let mut bits = [0; 256];
                for value in 1..256usize {
                    bits[value] =
                        bits[value & (value - 1)] | of_bit[value.trailing_zeros() as usize];
                }
                bits.map(|b| signature_of_bits(b.into()) as Signature)
            })
            .collect();
        table.main_count = table.main.count_ones();
        // (a power of two: signatures of bits below it lie below it)
        let bits = usize::from(pivots[..count].iter().fold(0, |all, &(_, bit)| all | bit));
        table.groups = (bits + 1).next_power_of_two();
        // a pivot's gathered bit: its rank among its direction's pivots, past the main ones
        let gathered_bit = |d: usize| {
            let below = |mask: u64, d: usize| (mask & ((1 << d) - 1)).count_ones();
            if d < 64 {
                below(table.main, d)
            } else {
                table.main_count + below(table.anti, d - 64)
            }
        };
        let mut bit_of = [0; PIVOTS];
        for &(d, bit) in &pivots[..count] {
            let gathered = gathered_bit(d);
            bit_of[gathered as usize] = bit;
            table.gathered_bit[bit.trailing_zeros() as usize] = gathered as u8;
        }
        // each value's pivot bits: those of the value without its lowest bit, and that
        // bit's; then their signature
        table.gathered = vec![0; 1 << count];
        for value in 1..1usize << count {
            let rest = table.gathered[value & (value - 1)];
            table.gathered[value] = rest | bit_of[value.trailing_zeros() as usize];
        }
        for s in &mut table.gathered {
            *s = signature_of_bits((*s).into()) as Signature;
        }
        table
    }

    /// `p`'s signature with the pivots' bits gathered by `extract`, which takes the bits of
    /// a word at a mask's bits, packed low (`pext`).
    #[inline(always)]
    pub(super) fn signature_by(&self, p: Pattern, extract: impl Fn(u64, u64) -> u64) -> Signature {
        let gathered = extract(p.main, self.main) | extract(p.anti, self.anti) << self.main_count;
        self.of_gathered(gathered)
    }

    /// What [`Signatures::signature_by`] takes of a pattern, for a device to do the same:
    /// the pivots' masks, how many main diagonals they hold, and the signature of each
    /// value of the gathered bits.
    pub(super) fn gathering(&self) -> (Pattern, u32, &[Signature]) {
        (self.mask(), self.main_count, &self.gathered)
    }

    #[inline(always)]
    pub(super) fn signature(&self, p: Pattern) -> Signature {
        let mut s = 0;
        for (&at, bits) in self.at.iter().zip(&self.bits) {
            let word = if at < 64 { p.main } else { p.anti };
            s ^= bits[(word >> (at % 64)) as usize & 0xFF];
        }
        s
    }

    /// The pivots' diagonals, as one pattern.
    pub(super) fn mask(&self) -> Pattern {
        Pattern {
            main: self.main,
            anti: self.anti,
        }
    }

    /// How many signatures there can be: one past the largest, a power of two.
    pub(super) fn groups(&self) -> usize {
        self.groups
    }

    /// Appends each pattern's signature to `signatures`, as `signature_of` computes it
    /// ([`Signatures::signature`] or [`Signatures::signature_by`]); returns the union of
    /// their diagonals, taken on the way (a pass of its own cost 1 %).
    #[inline(always)]
    pub(super) fn sign_each(
        patterns: &[Pattern],
        signatures: &mut Vec<Signature>,
        signature_of: impl Fn(Pattern) -> Signature,
    ) -> Pattern {
        let mut union = Pattern::default();
        signatures.extend(patterns.iter().map(|&p| {
            union = union.with(p);
            signature_of(p)
        }));
        union
    }

    /// Where the pivots fit one byte of each direction (at most 8 main and 8
    /// anti-diagonals), what gathers four patterns' signatures at once: for each 64-bit
    /// word of four patterns side by side (main, anti, main, ...), the bit index of each
    /// of its direction's pivots, a byte each (a bit shuffle's indices); which bits of the
    /// shuffle's 64 results to keep (each pattern's, packed low by `pext`, are its gathered
    /// bits, [`Signatures::signature_by`]'s); and how many that is a pattern.
    pub(super) fn four_at_once(&self) -> Option<([u8; 64], u64, u32)> {
        let anti_count = self.anti.count_ones();
        if self.main_count > 8 || anti_count > 8 {
            return None;
        }
        let mut indices = [0u8; 64];
        let mut keep = 0u64;
        for word in 0..8 {
            let (mask, count) = if word % 2 == 0 {
                (self.main, self.main_count)
            } else {
                (self.anti, anti_count)
            };
            let mut next = word * 8;
            for_each_bit(mask, |d| {
                indices[next] = d as u8;
                next += 1;
            });
            keep |= ((1u64 << count) - 1) << (word * 8);
        }
        Some((indices, keep, self.main_count + anti_count))
    }

    /// The gathered bits ([`Signatures::signature_by`]'s) of every pattern of signature
    /// `s`: its pivots, as `pext` packs them.
    pub(super) fn gathered_of(&self, s: Signature) -> u64 {
        let mut gathered = 0;
        let bits = pivot_bits(s.into()) as u64;
        for_each_bit(bits, |bit| gathered |= 1 << self.gathered_bit[bit]);
        gathered
    }

    /// The signature of gathered bits `gathered` ([`Signatures::signature_by`]'s).
    #[inline(always)]
    pub(super) fn of_gathered(&self, gathered: u64) -> Signature {
        self.gathered[gathered as usize & (self.gathered.len() - 1)]
    }

    /// Copies `patterns` into `sorted` in increasing signature among `groups`, as
    /// `sign_all` appends them to a buffer ([`Signatures::sign_each`], or faster) and
    /// returns their union, each written as `record` makes it of the pattern and its
    /// signature (itself, or as a later loop reads it); signature `s`'s patterns end up at
    /// `sorted[start[s]..start[s + 1]]` (a counting sort; `signatures` and `start` are
    /// buffers, sized here). Where `grouped` is false, each is written in the order they
    /// came, and `start` says where each signature's patterns would begin (for a GPU that
    /// groups them itself). Returns the union.
    #[inline(always)]
    pub(super) fn sort<T: Copy + Default>(
        patterns: &[Pattern],
        (sign_all, groups): (
            impl FnOnce(&[Pattern], &mut Vec<Signature>) -> Pattern,
            usize,
        ),
        (record, grouped): (impl Fn(Pattern, Signature) -> T, bool),
        (sorted, signatures, start): SortBuffers<T>,
    ) -> Result<Pattern, TryReserveError> {
        signatures.clear();
        signatures.try_reserve(patterns.len())?;
        let union = sign_all(patterns, signatures);
        debug_assert_eq!(signatures.len(), patterns.len(), "a signature a pattern");
        // the patterns in STREAMS stretches, each with its own counters, interleaved: joined
        // patterns come in runs of one signature, and one counter bumped again and again
        // waits on its own last store
        let stretch = patterns.len() / STREAMS;
        // one counter a stream for each signature (as many as the pivots make: 2^16 of
        // them would take a megabyte)
        let mut next = vec![[0u32; STREAMS]; groups];
        let slot = |s: Signature| usize::from(s);
        let (heads, tail) = signatures.split_at(stretch * STREAMS);
        let heads: [&[Signature]; STREAMS] =
            std::array::from_fn(|k| &heads[k * stretch..][..stretch]);
        for i in 0..stretch {
            for (k, head) in heads.iter().enumerate() {
                next[slot(head[i])][k] += 1;
            }
        }
        for &s in tail {
            next[slot(s)][STREAMS - 1] += 1;
        }
        // each stream's counter becomes where its next pattern of that signature goes
        start.clear();
        start.try_reserve(groups + 1)?;
        let mut at = 0u32;
        for counters in next[..groups].iter_mut() {
            start.push(at as usize);
            for counter in counters.iter_mut() {
                (*counter, at) = (at, at + *counter);
            }
        }
        start.push(patterns.len());
        // every place is written below: only what the buffer grows by is zeroed first (a
        // memset of the whole was 1 % of `count 18`)
        sorted.truncate(patterns.len());
        sorted.try_reserve_exact(patterns.len() - sorted.len())?;
        sorted.resize(patterns.len(), T::default());
        // the slice once: through the vector, each store reloaded its length
        let sorted = &mut sorted[..];
        if !grouped {
            let came = patterns.iter().zip(signatures.iter());
            (sorted.iter_mut().zip(came)).for_each(|(to, (&p, &s))| *to = record(p, s));
            return Ok(union);
        }
        let (head_patterns, tail_patterns) = patterns.split_at(stretch * STREAMS);
        let head_patterns: [&[Pattern]; STREAMS] =
            std::array::from_fn(|k| &head_patterns[k * stretch..][..stretch]);
        for i in 0..stretch {
            for k in 0..STREAMS {
                let s = heads[k][i];
                let at = &mut next[slot(s)][k];
                sorted[*at as usize] = record(head_patterns[k][i], s);
                *at += 1;
            }
        }
        for (&p, &s) in tail_patterns.iter().zip(tail) {
            let at = &mut next[slot(s)][STREAMS - 1];
            sorted[*at as usize] = record(p, s);
            *at += 1;
        }
        Ok(union)
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
    fn pivots_on_pairs_skip_a_diagonal_that_separates_no_more_pairs() {
        // three in five patterns of each side on diagonals 0 and 1 together, the others on
        // 2: the rates rank 0 and 1 first, but 1 separates no pair that 0 has not
        let side: Vec<Pattern> = (0..100)
            .map(|i| Pattern {
                main: if i % 5 < 3 { 0b011 } else { 0b100 },
                anti: 0,
            })
            .collect();
        let on_pairs = Pivots::choose_on_pairs::<4>(2, &side, (&side, Shift::default()));
        let mains: Vec<u64> = on_pairs.mask[..on_pairs.count]
            .iter()
            .map(|m| m.main)
            .collect();
        assert_eq!(mains, [0b001, 0b100]);
        // past the pairs it can separate, no more pivots
        let all = Pivots::choose_on_pairs::<16>(5, &side, (&side, Shift::default()));
        assert_eq!(all.count, 2);
        // the rates alone take 0 and 1 (too few pairs to be chosen on pairs)
        let by_rates = Pivots::choose(2, &side, (&side, side.len(), Shift::default()));
        let mains: Vec<u64> = by_rates.mask[..by_rates.count]
            .iter()
            .map(|m| m.main)
            .collect();
        assert_eq!(mains, [0b001, 0b010]);
    }

    #[test]
    fn compatible_lists_the_disjoint_signatures_in_order() {
        for groups in [1, 2, 8, 1 << 7, 1 << PIVOTS] {
            for s in [0, 1, 5, groups / 2, groups - 1, 0x2A5 & (groups - 1)] {
                let disjoint = |t: &usize| pivot_bits(*t) & pivot_bits(s) == 0;
                let want: Vec<usize> = (0..groups).filter(disjoint).collect();
                assert_eq!(
                    compatible(s, groups).collect::<Vec<_>>(),
                    want,
                    "{s} of {groups}"
                );
            }
        }
    }

    #[test]
    fn sort_puts_each_signature_in_its_stretch() {
        let mut next = crate::kernel::xorshift(0x9E37_79B9_7F4A_7C15);
        for (len, groups) in [(0, 1), (1, 1), (5, 4), (1000, 8), (3001, 1 << PIVOTS)] {
            let patterns: Vec<Pattern> = (0..len)
                .map(|_| Pattern {
                    main: next() % groups as u64,
                    anti: next(),
                })
                .collect();
            let (mut sorted, mut signatures, mut start) = (Vec::new(), Vec::new(), Vec::new());
            let signature_of = |p: Pattern| p.main as Signature;
            let sign_all = |ps: &[Pattern], out: &mut Vec<Signature>| {
                Signatures::sign_each(ps, out, signature_of)
            };
            let sort = (sign_all, groups);
            let buffers = (&mut sorted, &mut signatures, &mut start);
            Signatures::sort(&patterns, sort, (|p, _| p, true), buffers).unwrap();
            assert_eq!((start.len(), start[0], start[groups]), (groups + 1, 0, len));
            for g in 0..groups {
                let stretch = &sorted[start[g]..start[g + 1]];
                assert!(stretch.iter().all(|p| p.main == g as u64), "{len}, {g}");
            }
            let key = |p: &Pattern| (p.main, p.anti);
            let (mut want, mut got) = (patterns.clone(), sorted.clone());
            want.sort_by_key(key);
            got.sort_by_key(key);
            assert_eq!(got, want, "the same patterns");
        }
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
                let want = signature_of_bits(pivots.signature(p));
                assert_eq!(pivot_bits(want), pivots.signature(p), "{count}: Gray code");
                assert_eq!(usize::from(signatures.signature(p)), want, "{count}");
                let gathered = signatures.signature_by(p, gather);
                assert_eq!(usize::from(gathered), want, "{count}, gathered");
                let bits = gather(p.main, signatures.main)
                    | gather(p.anti, signatures.anti) << signatures.main_count;
                assert_eq!(signatures.gathered_of(gathered), bits, "{count}, its bits");
            }
        }
    }
}
