use super::*;
use crate::parallel::{Spare, NO_SPARE};
use crate::quadrant::pivots::pivot_bits;
use batching::{Batching, RunOrder, RunReads, RUN};
use layout::TABLE_ENTRIES;
use portable::{order_by_reads, transpose64};
use std::cell::Cell;
#[cfg(target_arch = "x86_64")]
use x86_64::avx512::{order_by_reads_avx512, sign_all_avx512, transpose64_gfni};

/// Runs `f` compiled for the AVX-512 steps' instructions.
///
/// # Safety
///
/// The CPU has AVX2, BMI2, popcnt, AVX-512 F, BW, BITALG, VBMI and VBMI2, and GFNI.
#[cfg(target_arch = "x86_64")]
#[target_feature(
    enable = "avx2,bmi2,popcnt,avx512f,avx512bw,avx512bitalg,avx512vbmi,avx512vbmi2,gfni"
)]
unsafe fn on_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[test]
fn transpose64_swaps_rows_and_columns() {
    let mut next = crate::kernel::xorshift(0x2545_F491_4F6C_DD1D);
    let rows: [u64; 64] = std::array::from_fn(|_| next());
    let mut t = rows;
    transpose64(&mut t);
    for (r, row) in rows.iter().enumerate() {
        for (c, column) in t.iter().enumerate() {
            assert_eq!(row >> c & 1, column >> r & 1, "({r}, {c})");
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn transpose64_gfni_transposes_like_the_rounds() {
    let f = crate::kernel::features();
    if !f.avx512_ice_lake {
        return;
    }
    let mut next = crate::kernel::xorshift(0x9E37_79B9_7F4A_7C15);
    for _ in 0..20 {
        let rows: [u64; 64] = std::array::from_fn(|_| next());
        let (mut want, mut got) = (rows, rows);
        transpose64(&mut want);
        // SAFETY: the CPU has them (looked at above).
        unsafe { on_avx512(|| transpose64_gfni(&mut got)) };
        assert_eq!(got, want);
    }
}

/// Four at a time by bit shuffles, or one at a time where the pivots take more than a
/// byte of one direction: the signatures and union of one at a time.
#[cfg(target_arch = "x86_64")]
#[test]
fn signatures_four_at_once_agree_with_one_at_a_time() {
    if !crate::kernel::features().avx512_ice_lake {
        return;
    }
    let mut next = random_patterns(0x2545_F491_4F6C_DD1D, |x| Pattern {
        main: x & x >> 7,
        anti: x & x >> 13,
    });
    let patterns: Vec<Pattern> = (0..1003).map(|_| next()).collect();
    // pivots over both words and several bytes; the last: nine main diagonals
    let spread = |count: usize| (0..count).map(|i| ((i * 23 + 5) % 64 + i % 2 * 64, i));
    let nine_main = (0..10).map(|i| if i < 9 { (i * 7, i) } else { (64 + 40, i) });
    let cases: Vec<Vec<(usize, usize)>> = (0..=PIVOTS)
        .map(|count| spread(count).collect())
        .chain([nine_main.collect()])
        .collect();
    for diagonals in &cases {
        let count = diagonals.len();
        let bits = diagonals.iter().map(|&(d, i)| (d, 1 << (count - 1 - i)));
        let signatures = Signatures::from_diagonals(bits);
        let fits = diagonals.iter().filter(|&&(d, _)| d < 64).count() <= 8
            && diagonals.iter().filter(|&&(d, _)| d >= 64).count() <= 8;
        assert_eq!(signatures.four_at_once().is_some(), fits, "{diagonals:?}");
        for len in [0, 3, 4, 1003] {
            let (mut want, mut got) = (Vec::new(), Vec::new());
            let one = |p| signatures.signature(p);
            let union = Signatures::sign_each(&patterns[..len], &mut want, one);
            // SAFETY: the CPU has them (looked at above).
            let four =
                unsafe { on_avx512(|| sign_all_avx512(&signatures, &patterns[..len], &mut got)) };
            assert_eq!((got, four), (want, union), "{diagonals:?}, {len}");
        }
    }
}

/// A run's order by reads 64 at a time is the counting sort's, whatever its length.
#[cfg(target_arch = "x86_64")]
#[test]
fn runs_ordered_by_reads_alike() {
    if !crate::kernel::features().avx512_ice_lake {
        return;
    }
    let mut next = crate::kernel::xorshift(0x9E37_79B9_7F4A_7C15);
    for (len, most) in [
        (0, 0),
        (1, 0),
        (5, 3),
        (63, 16),
        (64, 7),
        (65, 16),
        (200, 9),
        (RUN, 16),
    ] {
        let mut reads: RunReads = [u8::MAX; RUN];
        for r in &mut reads[..len] {
            *r = (next() % (most as u64 + 1)) as u8;
        }
        let (mut want, mut got): (RunOrder, RunOrder) = ([0; RUN + 64], [0; RUN + 64]);
        order_by_reads(&reads, (len, most), &mut want);
        // SAFETY: the CPU has them (looked at above).
        unsafe { on_avx512(|| order_by_reads_avx512(&reads, (len, most), &mut got)) };
        assert_eq!(got[..len], want[..len], "{len}, {most}");
        let sorted = want[..len].windows(2).all(|w| {
            let (a, b) = (reads[usize::from(w[0])], reads[usize::from(w[1])]);
            a < b || a == b && w[0] < w[1]
        });
        assert!(sorted, "{len}, {most}: by reads, then in the run's order");
    }
}

/// Random patterns: a generator of `u64`s seeded with `seed`, each turned into a pattern
/// by `shape` (which makes them as sparse as a test needs).
pub(crate) fn random_patterns(seed: u64, shape: fn(u64) -> Pattern) -> impl FnMut() -> Pattern {
    let mut random = crate::kernel::xorshift(seed);
    move || shape(random())
}

/// Patterns from a small generator, compared with the plain pair test.
#[test]
fn counts_like_the_pair_test() {
    let mut next = random_patterns(0x9E37_79B9_7F4A_7C15, |x| Pattern {
        main: x & x >> 9 & 0x3FFF_FFFF,
        anti: x >> 30 & x >> 41 & 0x3FFF_FFFF,
    });
    let cases = [
        (0, 5),
        (1, 1),
        (255, 3),
        (256, 7),
        (257, 40),
        (1000, 33),
        (800, 1100),
        // blocks and the other side enough, too few pairs
        (2000, 2000),
        (3000, 1500),
    ];
    for (a, b) in cases {
        let left: Vec<Pattern> = (0..a).map(|_| next()).collect();
        let right: Vec<Pattern> = (0..b).map(|_| next()).collect();
        let sieve = loaded_like_the_pair_test(&left, &right);
        let grouped = a > 2 * BLOCK && b >= MIN_GROUPED_OTHERS && a * b >= MIN_GROUPED_PAIRS;
        assert_eq!(sieve.pivots.count > 0, grouped, "{a} x {b} grouped");
    }
}

/// The other side's order: each signature's patterns together, as the records the
/// counting loop reads (one signature's longer than [`RUN`]); counted alike on every
/// loop, and a set stop flag gives nothing.
#[test]
fn ordered_records_count_alike_and_a_stop_counts_nothing() {
    let mut next = random_patterns(0x9E37_79B9_7F4A_7C15, |x| Pattern {
        main: x & x >> 9 & 0x3FFF_FFFF,
        anti: x >> 30 & x >> 41 & 0x3FFF_FFFF,
    });
    let left: Vec<Pattern> = (0..3000).map(|_| next()).collect();
    let right: Vec<Pattern> = (0..4000).map(|_| next()).collect();
    let mut sieve = loaded_like_the_pair_test(&left, &right);
    assert!(sieve.reads_records(), "grouped, in records");
    let seen = &sieve.seen;
    let dense = |part: &Gather, p| {
        let (main, anti) = part.gather_by_lookups(p);
        main | anti << part.main_count
    };
    let mut want: Vec<(Signature, u64, u64)> = right
        .iter()
        .map(|&p| (seen.signature.signature(p), dense(&seen.rest, p), 0))
        .collect();
    // a signature's pivots are each of its patterns'
    for &p in &right {
        let s = seen.signature.signature(p);
        assert_eq!(seen.signature.gathered_of(s), dense(&seen.pivots, p));
    }
    want.sort_unstable();
    for kernel in PairKernel::available() {
        let (mut ordered, mut signatures, mut start) = (Vec::new(), Vec::new(), Vec::new());
        let buffers = (&mut ordered, &mut signatures, &mut start);
        sieve.order(kernel, &right, buffers).unwrap();
        assert_eq!(start.last(), Some(&right.len()), "{kernel:?}");
        let mut got: Vec<(Signature, u64, u64)> = start
            .windows(2)
            .enumerate()
            .flat_map(|(s, at)| ordered[at[0]..at[1]].iter().map(move |r| (s, r)))
            .map(|(s, r)| (s as Signature, r.main, r.anti))
            .collect();
        got.sort_unstable();
        assert_eq!(got, want, "{kernel:?}: each record under its signature");
        let longest = start.windows(2).map(|at| at[1] - at[0]).max();
        assert!(longest > Some(RUN), "a run longer than RUN: {longest:?}");
    }
    let (never, stopped) = (AtomicBool::new(false), AtomicBool::new(true));
    let counted = sieve.count_disjoint(&right);
    // runs alone, and in batches over stretches of blocks
    let batched = Batching {
        stretch: 1,
        patterns: 300,
        runs: 3,
        ..Batching::default()
    };
    // and split into pieces, two threads lent to count them
    let lent = Spare::new(3, 1);
    let split = |b| {
        let split = Batching {
            split: 0,
            piece: 1,
            ..b
        };
        (split, &lent)
    };
    let ways = [(Batching::default(), &NO_SPARE), (batched, &NO_SPARE)];
    for (batching, spare) in ways.into_iter().chain(ways.map(|(b, _)| split(b))) {
        sieve.batching = batching;
        for kernel in PairKernel::available() {
            let mut count =
                |stop| (sieve.count_disjoint_on(kernel, &right, (stop, spare))).unwrap();
            assert_eq!(count(&never), Some(counted), "{kernel:?} {batching:?}");
            assert_eq!(count(&stopped), None, "{kernel:?} {batching:?}");
        }
    }
}

/// Masks whose diagonals span more than 32 bits each take the load with one transpose
/// per direction instead of one for both.
#[test]
fn counts_like_the_pair_test_on_wide_masks() {
    let mut random = crate::kernel::xorshift(0x2545_F491_4F6C_DD1D);
    let mut next = || {
        let (x, y) = (random(), random());
        Pattern {
            main: x & x >> 9 & x >> 19,
            anti: y & y >> 9 & y >> 19,
        }
    };
    // the last grouped, its other side read as patterns: the rest spans two words
    for (a, b) in [(100, 100), (1000, 1100), (3000, 1500)] {
        let left: Vec<Pattern> = (0..a).map(|_| next()).collect();
        let right: Vec<Pattern> = (0..b).map(|_| next()).collect();
        let span = |m: u64| 64 - m.leading_zeros() - m.trailing_zeros();
        let main = left.iter().fold(0, |m, p| m | p.main);
        assert!(span(main) > 32, "{a} x {b} spans {}", span(main));
        let sieve = loaded_like_the_pair_test(&left, &right);
        let grouped = sieve.pivots.count > 0;
        assert_eq!((grouped, sieve.reads_records()), (a == 3000, false));
    }
}

/// The other side moved east or west before the pair test: its diagonals are looked up
/// where the stored ones are.
#[test]
fn counts_like_the_pair_test_with_the_other_side_moved() {
    let mut next = random_patterns(0x9E37_79B9_7F4A_7C15, |x| Pattern {
        main: (x & x >> 9 & 0x3FFF_FFFF) << 6,
        anti: (x >> 30 & x >> 41 & 0x3FFF_FFFF) << 6,
    });
    for shift in [
        Shift::west(5),
        Shift::east(6),
        Shift::west(11),
        Shift::east(1),
    ] {
        for (a, b) in [(300, 40), (3000, 1500)] {
            let left: Vec<Pattern> = (0..a).map(|_| next()).collect();
            let right: Vec<Pattern> = (0..b).map(|_| next()).collect();
            let mut sieve = loaded_like_the_pair_test_moved(&left, &right, shift);
            let got = sieve.count_disjoint(&right);
            assert!(got > 0 && got < (a * b) as u64, "{a} x {b} {shift:?}");
        }
    }
}

/// A split load's pieces: every signature once, in order, none empty, about as many as
/// asked where the signatures are many and alike.
#[test]
fn pieces_cover_every_signature_in_order() {
    let even: Vec<usize> = (0..=1000).map(|s| s * 10).collect();
    let uneven: Vec<usize> = (0..=100).map(|s: usize| s.pow(3)).collect();
    for (start, count) in [
        (&even, 64),
        (&even, 1),
        (&even, 5000),
        (&uneven, 16),
        (&vec![0, 0, 5, 5], 3),
    ] {
        let pieces = pieces(start, (count, 1));
        let flat: Vec<usize> = pieces.iter().flat_map(|p| p.clone()).collect();
        assert_eq!(flat, (0..start.len() - 1).collect::<Vec<_>>(), "{count}");
        assert!(pieces.iter().all(|p| !p.is_empty()), "{pieces:?}");
    }
    assert!((60..=65).contains(&pieces(&even, (64, 1)).len()));
    // pieces of 500 patterns at least: 20 of 50 signatures each
    assert_eq!(pieces(&even, (64, 500)).len(), 20);
}

/// Loads `left`, checks both counting loops against the plain pair test, returns the sieve.
fn loaded_like_the_pair_test(left: &[Pattern], right: &[Pattern]) -> Sieve {
    loaded_like_the_pair_test_moved(left, right, Shift::default())
}

/// [`loaded_like_the_pair_test`] with `right` moved by `shift`: laid out and counted by
/// every pair loop, in every pairing (the layout is the same whichever lays it out).
fn loaded_like_the_pair_test_moved(left: &[Pattern], right: &[Pattern], shift: Shift) -> Sieve {
    let want = left
        .iter()
        .flat_map(|p| right.iter().map(move |q| p.disjoint(shift.apply(*q))))
        .filter(|&ok| ok)
        .count() as u64;
    let (a, b) = (left.len(), right.len());
    let mut sieve = Sieve::default();
    // the blocks also in stretches of one and two, the runs in batches of a few
    let batchings = [
        Batching::default(),
        Batching {
            stretch: 1,
            patterns: 300,
            runs: 3,
            ..Batching::default()
        },
        Batching {
            stretch: 2,
            patterns: 1000,
            runs: 40,
            ..Batching::default()
        },
    ];
    // each load also split into pieces, counted with two threads lent from the start, with
    // none lent while the run may lend, and where it never does
    let spares = [Spare::new(3, 1), Spare::new(2, 2), Spare::none()];
    let split = batchings.map(|b| Batching {
        split: 0,
        piece: 1,
        ..b
    });
    let ways: Vec<_> = (batchings.iter().zip(&spares))
        .chain(split.iter().zip(&spares))
        .collect();
    for layout in PairKernel::available() {
        sieve.load(layout, left, (right, shift)).unwrap();
        for kernel in PairKernel::available() {
            for &(&batching, spare) in &ways {
                sieve.batching = batching;
                let never = AtomicBool::new(false);
                let got = sieve.count_disjoint_on(kernel, right, (&never, spare));
                assert_eq!(
                    got.unwrap(),
                    Some(want),
                    "{layout:?}/{kernel:?}, {a} x {b} {shift:?} {batching:?}"
                );
            }
        }
    }
    sieve.batching = Batching::default();
    // handed to a device as tables or as dense words (the device making the tables), or
    // made into tables here when it declines
    let never = AtomicBool::new(false);
    for layout in PairKernel::available() {
        for (takes, declines) in [
            (Made::Tables, false),
            (Made::Words, false),
            (Made::Words, true),
        ] {
            let device = Model {
                takes,
                declines,
                counted: Cell::new(None),
            };
            let loading = ((right, right.len(), shift), device.takes);
            sieve.load_for_device(layout, left, loading).unwrap();
            let others = OtherSide::Joined(right);
            let got = match sieve.count_disjoint_by(layout, others, &never, &device) {
                Ok(Counted::Later(TICKET)) => device.counted.get(),
                Ok(Counted::Now(disjoint)) => Some(disjoint),
                other => panic!("{other:?}"),
            };
            assert_eq!(
                got,
                Some(want),
                "{layout:?} {device:?}, {a} x {b} {shift:?}"
            );
        }
    }
    sieve
        .load(PairKernel::best(), left, (right, shift))
        .unwrap();
    sieve
}

/// The ticket a [`Model`] gives.
const TICKET: u64 = 7;

/// A pair device on the CPU: it counts a sieve's pairs from the work it is handed (what a
/// GPU is sent: the tables or the words, the reaches, the other side's dense words), or
/// declines each.
#[derive(Debug)]
struct Model {
    takes: Made,
    declines: bool,
    counted: Cell<Option<u64>>,
}

impl PairDevice for Model {
    fn takes(&self) -> Made {
        self.takes
    }

    fn take(&self, work: &offload::PairWork) -> Result<Option<u64>, crate::error::Error> {
        if self.declines {
            return Ok(None);
        }
        if self.takes == Made::Words && work.signing.is_none() {
            // it groups the other side by the places it is given: each signature's patterns
            // fill the stretch from its place to the next one's
            let mut ends = work.places.iter().skip(1).copied().collect::<Vec<_>>();
            ends.push(work.len());
            let last = work.pattern_words - 1;
            let signatures = work.patterns.iter().skip(last).step_by(work.pattern_words);
            for &s in signatures {
                ends[s as usize] -= 1;
            }
            assert_eq!(
                ends, work.places,
                "each signature's patterns fill its stretch"
            );
        }
        let clashes: u64 = (0..work.len()).map(|i| u64::from(work.clashes_of(i))).sum();
        let visited = work.visited.unwrap_or_else(|| work.visited_as_signed().0);
        self.counted.set(Some(visited - clashes));
        Ok(Some(TICKET))
    }
}

/// Up to 64 blocks the reach is worked out by ORing each group's blocks into its supersets;
/// it lists the same blocks, in the same order, as walking each signature's compatible
/// groups (what more blocks take), with groups empty, within a block, and across several:
/// for each signature, in increasing order, every block holding a pattern of a group whose
/// pivot bits share none with its own, and no other.
#[test]
fn reach_is_the_compatible_groups_blocks_by_subsets_and_walks() {
    let mut random = crate::kernel::xorshift(0x2545_F491_4F6C_DD1D);
    for count in 0..=9 {
        for len in [1, 255, 256, 257, 3000, 64 * BLOCK] {
            let groups = 1usize << count;
            // where each group starts: sorted random cuts, some groups left empty
            let mut start: Vec<usize> = (1..groups).map(|_| random() as usize % len).collect();
            start.extend([0, len]);
            start.sort_unstable();
            let mut sieve = Sieve {
                len,
                blocks: len.div_ceil(BLOCK),
                lookups: 3,
                ..Sieve::default()
            };
            sieve.pivots.count = count;
            let mut by_walks = sieve.clone();
            sieve.index_reach(&start).unwrap();
            by_walks.reach_at.push(0);
            by_walks.reach_by_walks(&start).unwrap();
            assert_eq!(sieve.reach, by_walks.reach, "{count} pivots, {len}");
            assert_eq!(sieve.reach_at, by_walks.reach_at, "{count} pivots, {len}");
            assert_eq!(sieve.covered, by_walks.covered, "{count} pivots, {len}");
            for s in 0..groups {
                let mut want: Vec<u32> = (0..groups)
                    .filter(|&t| pivot_bits(t) & pivot_bits(s) == 0)
                    .flat_map(|t| start[t]..start[t + 1])
                    .map(|pattern| (pattern / BLOCK * 3 * TABLE_ENTRIES) as u32)
                    .collect();
                want.sort_unstable();
                want.dedup();
                let reach = &sieve.reach[sieve.reach_at[s]..sieve.reach_at[s + 1]];
                assert_eq!(reach, want, "{count} pivots, {len}, signature {s}");
            }
        }
    }
}
