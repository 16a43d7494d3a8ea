//! Leaf search kernels and the choice between them.

pub mod batch;
mod cursor;
pub mod join;
pub mod scalar;
pub mod sieve;
#[cfg(target_arch = "x86_64")]
pub mod simd;

use crate::board::{Attacks, RowMasks};
use crate::error::Error;
pub use cursor::Cursor;
use std::sync::atomic::AtomicBool;

/// What the search does with each complete board it finds.
pub trait Leaf {
    /// Whether [`Leaf::solution`] reads the board; when false the kernel skips recording it.
    const NEEDS_BOARD: bool;
    /// Called once per solution with the one-hot column mask of each row's queen.
    fn solution(&mut self, rows: &[u64]);
    /// Records `k` solutions at once; only called when `NEEDS_BOARD` is false.
    fn add_solutions(&mut self, k: u64) {
        for _ in 0..k {
            self.solution(&[]);
        }
    }
}

/// Counts solutions, ignoring their shape.
#[derive(Default, Debug, Clone, Copy)]
pub struct Tally(pub u64);

impl Leaf for Tally {
    const NEEDS_BOARD: bool = false;
    #[inline(always)]
    fn solution(&mut self, _rows: &[u64]) {
        self.0 += 1;
    }
    #[inline(always)]
    fn add_solutions(&mut self, k: u64) {
        self.0 += k;
    }
}

/// The kernel asked for on the command line.
///
/// ```
/// use nqueens::{count, CountOptions, Kernel, KernelChoice};
/// let scalar = CountOptions { kernel: KernelChoice::Scalar, ..CountOptions::default() };
/// assert_eq!(count(10, &scalar).unwrap().kernel, Kernel::Scalar);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KernelChoice {
    /// The fastest kernel this CPU supports.
    #[default]
    Auto,
    /// The portable scalar search.
    Scalar,
    /// The best vector kernel available (an error when there is none).
    Simd,
    /// The AVX2 kernel (an error without AVX2).
    Avx2,
    /// The AVX-512 kernel (an error without AVX-512F).
    Avx512,
}

/// A kernel that can run on this machine; in JSON records, its [`Kernel::name`].
///
/// ```
/// use nqueens::Kernel;
/// let all = Kernel::available();
/// assert_eq!(all[0], Kernel::Scalar); // every machine runs the portable kernel
/// assert!(all.iter().all(|k| ["scalar", "avx2", "avx512"].contains(&k.name())));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kernel {
    /// The portable scalar search.
    Scalar,
    /// 16-lane AVX-512 batched search.
    Avx512,
    /// 8-lane AVX2 batched search.
    Avx2,
}

impl Kernel {
    /// Resolves a choice against what this CPU and build support.
    ///
    /// ```
    /// use nqueens::{Kernel, KernelChoice};
    /// assert_eq!(Kernel::resolve(KernelChoice::Scalar).unwrap(), Kernel::Scalar);
    /// ```
    pub fn resolve(choice: KernelChoice) -> Result<Kernel, Error> {
        match choice {
            KernelChoice::Scalar => Ok(Kernel::Scalar),
            KernelChoice::Auto => Ok(Kernel::best_vector().unwrap_or(Kernel::Scalar)),
            KernelChoice::Simd => Kernel::best_vector().ok_or(Error::KernelUnavailable {
                kernel: "simd",
                why: "this CPU has neither AVX-512F nor AVX2",
            }),
            KernelChoice::Avx2 | KernelChoice::Avx512 => {
                let wanted = if choice == KernelChoice::Avx2 {
                    Kernel::Avx2
                } else {
                    Kernel::Avx512
                };
                if Kernel::available().contains(&wanted) {
                    Ok(wanted)
                } else {
                    Err(Error::KernelUnavailable {
                        kernel: wanted.name(),
                        why: "this CPU does not support it",
                    })
                }
            }
        }
    }

    /// The best vector kernel this CPU runs, if any.
    pub fn best_vector() -> Option<Kernel> {
        Kernel::vectors().last().copied()
    }

    /// Every kernel this machine can run, scalar first (what the tests iterate over).
    pub fn available() -> Vec<Kernel> {
        std::iter::once(Kernel::Scalar)
            .chain(Kernel::vectors())
            .collect()
    }

    /// The vector kernels this CPU runs, slowest first.
    fn vectors() -> Vec<Kernel> {
        let mut found = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("popcnt") && has!("avx2") {
                found.push(Kernel::Avx2);
            }
            if has!("popcnt") && has!("avx512f") {
                found.push(Kernel::Avx512);
            }
        }
        found
    }

    /// Whether this CPU can run the kernel (cached by the standard library's detection).
    fn supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            match self {
                Kernel::Scalar => true,
                Kernel::Avx2 => has!("popcnt") && has!("avx2"),
                Kernel::Avx512 => has!("popcnt") && has!("avx512f"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Kernel::Scalar
        }
    }

    /// The name reported in JSON and `--stats`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx512 => "avx512",
            Kernel::Avx2 => "avx2",
        }
    }
}

/// Visits the completions of a board whose rows `0..start_row` are placed (one-hot in
/// `prefix`, which the search may overwrite below `start_row`) with `kernel` where it takes
/// the subtask, else with the portable search. `make` gives the leaf (a second one when a
/// vector kernel gave up half-way). Returns the leaf and the nodes, or `None` when `stop` was
/// set before the search finished.
#[allow(clippy::too_many_arguments)]
pub fn search<L: Leaf>(
    kernel: Kernel,
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    prefix: &mut [u64; crate::board::MAX_N],
    make: impl Fn() -> L,
    stop: &AtomicBool,
) -> Option<(L, u64)> {
    if kernel != Kernel::Scalar {
        let mut leaf = make();
        if let Some(outcome) = search_vector(
            kernel, n, masks, start_row, attacks, prefix, &mut leaf, stop,
        ) {
            return outcome.map(|nodes| (leaf, nodes));
        }
    }
    let mut leaf = make();
    let nodes = search_scalar(n, masks, start_row, attacks, prefix, &mut leaf, stop)?;
    Some((leaf, nodes))
}

/// [`search`] on the portable kernel with one leaf, the required-column check compiled in
/// only for frames that have required columns.
pub(crate) fn search_scalar<L: Leaf>(
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    prefix: &mut [u64; crate::board::MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> Option<u64> {
    if masks.has_must() {
        scalar::search::<L, true>(n, masks, start_row, attacks, prefix, leaf, stop)
    } else {
        scalar::search::<L, false>(n, masks, start_row, attacks, prefix, leaf, stop)
    }
}

/// Visits the completions of a board whose rows `0..start_row` are placed (one-hot in
/// `prefix`) with a vector kernel, calling `leaf` as the scalar search does. Returns the
/// nodes, `Some(None)` when `stop` was set, and `None` when the kernel cannot take this
/// subtask (scalar asked for, a kernel this CPU lacks, a board it does not handle, or too
/// large to track): the caller then runs the scalar search with a fresh leaf.
#[allow(clippy::too_many_arguments)]
fn search_vector<L: Leaf>(
    kernel: Kernel,
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    prefix: &[u64; crate::board::MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> Option<Option<u64>> {
    #[cfg(target_arch = "x86_64")]
    if kernel != Kernel::Scalar && kernel.supported() && simd::applies(n, masks, start_row) {
        // SAFETY: the CPU was just found to have the kernel's features, and `applies` holds.
        let outcome = unsafe {
            match kernel {
                Kernel::Avx512 => {
                    simd::count_avx512(n, masks, start_row, attacks, prefix, leaf, stop)
                }
                _ => simd::count_avx2(n, masks, start_row, attacks, prefix, leaf, stop),
            }
        };
        return match outcome {
            simd::VectorCount::Done { nodes } => Some(Some(nodes)),
            simd::VectorCount::Stopped => Some(None),
            simd::VectorCount::TooLarge => None,
        };
    }
    let _ = (kernel, n, masks, start_row, attacks, prefix, leaf, stop);
    None
}

/// A xorshift generator for the kernels' tests: the same numbers from the same seed.
#[cfg(test)]
pub(crate) fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn search_example() {
        use crate::board::{Attacks, RowMasks, MAX_N};
        use crate::kernel::{search, Kernel, Tally};
        use std::sync::atomic::AtomicBool;
        let (n, masks) = (8, RowMasks::unconstrained(8));
        let mut rows = [0u64; MAX_N];
        let stop = AtomicBool::new(false);
        for kernel in Kernel::available() {
            let (tally, _nodes) = search(
                kernel,
                n,
                &masks,
                0,
                Attacks::default(),
                &mut rows,
                Tally::default,
                &stop,
            )
            .unwrap();
            assert_eq!(tally.0, 92);
        }
    }
}
