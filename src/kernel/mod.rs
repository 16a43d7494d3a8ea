//! Leaf search kernels and the choice between them.

pub mod scalar;

use crate::error::Error;

/// What the search does with each complete board it finds.
pub trait Leaf {
    /// Whether [`Leaf::solution`] reads the board; when false the kernel skips recording it.
    const NEEDS_BOARD: bool;
    /// Called once per solution with the one-hot column mask of each row's queen.
    fn solution(&mut self, rows: &[u64]);
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
            KernelChoice::Auto | KernelChoice::Scalar => Ok(Kernel::Scalar),
            KernelChoice::Simd => Err(Error::KernelUnavailable(
                "no vector kernel is available in this build; use --kernel scalar or auto".into(),
            )),
        }
    }

    /// The name reported in JSON and `--stats`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
        }
    }
}
