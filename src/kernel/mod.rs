//! Leaf search kernels and the choice between them.

pub mod scalar;
#[cfg(target_arch = "x86_64")]
pub mod simd;

use crate::board::{Attacks, RowMasks};
use crate::error::Error;
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KernelChoice {
    /// The fastest kernel this CPU supports.
    #[default]
    Auto,
    /// The portable scalar search.
    Scalar,
    /// The best vector kernel available (an error when there is none).
    Simd,
}

/// A kernel that can run on this machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// The portable scalar search.
    Scalar,
    /// 16-lane AVX-512 batched search (counting frames; the others run scalar).
    Avx512,
}

impl Kernel {
    /// Resolves a choice against what this CPU and build support.
    ///
    /// ```
    /// use nqueens::kernel::{Kernel, KernelChoice};
    /// assert_eq!(Kernel::resolve(KernelChoice::Scalar).unwrap(), Kernel::Scalar);
    /// ```
    pub fn resolve(choice: KernelChoice) -> Result<Kernel, Error> {
        match choice {
            KernelChoice::Scalar => Ok(Kernel::Scalar),
            KernelChoice::Auto => Ok(Kernel::best_vector().unwrap_or(Kernel::Scalar)),
            KernelChoice::Simd => Kernel::best_vector().ok_or_else(|| {
                Error::KernelUnavailable(
                    "--kernel simd: this CPU has no AVX-512F; use --kernel scalar or auto".into(),
                )
            }),
        }
    }

    /// The best vector kernel this CPU runs, if any.
    pub fn best_vector() -> Option<Kernel> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            return Some(Kernel::Avx512);
        }
        None
    }

    /// Every kernel this machine can run, scalar first (what the tests iterate over).
    pub fn available() -> Vec<Kernel> {
        std::iter::once(Kernel::Scalar)
            .chain(Kernel::best_vector())
            .collect()
    }

    /// The name reported in JSON and `--stats`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx512 => "avx512",
        }
    }
}

/// Visits the completions of a board whose rows `0..start_row` are placed (one-hot in
/// `prefix`) with the AVX-512 kernel, calling `leaf` as the scalar search does. Returns the
/// nodes, `Some(None)` when `stop` was set, and `None` when the kernel cannot take this
/// subtask (no AVX-512F on this CPU, not x86-64, a board it does not handle, or too large to
/// track): the caller then runs the scalar search.
pub fn search_avx512<L: Leaf>(
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    prefix: &[u64; crate::board::MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> Option<Option<u64>> {
    #[cfg(target_arch = "x86_64")]
    if Kernel::best_vector() == Some(Kernel::Avx512) && simd::applies(n, masks, start_row) {
        // `None` on TooLarge: the caller retries with a fresh leaf (this one saw part of it).
        // SAFETY: the CPU was just found to have AVX-512F and popcnt, and `applies` holds.
        return match unsafe { simd::count_avx512(n, masks, start_row, attacks, prefix, leaf, stop) }
        {
            simd::VectorCount::Done { nodes } => Some(Some(nodes)),
            simd::VectorCount::Stopped => Some(None),
            simd::VectorCount::TooLarge => None,
        };
    }
    let _ = (n, masks, start_row, attacks, prefix, leaf, stop);
    None
}
