//! Leaf search kernels, the choice between them, and the one place the CPU's instruction
//! sets are looked at ([`features`]).

pub mod batch;
mod cursor;
mod lanes;
pub mod scalar;
mod search;

use crate::error::Error;
pub use cursor::Cursor;
pub(crate) use search::Start;
pub use search::{Leaf, Tally};
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;

/// The kernel asked for on the command line.
///
/// ```
/// use nqueens::{count, CountOptions, Kernel, KernelChoice};
/// let scalar = CountOptions { kernel: KernelChoice::Scalar, ..CountOptions::default() };
/// assert_eq!(count(10, &scalar).unwrap().kernel, Kernel::Scalar);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum KernelChoice {
    /// The fastest kernel this CPU supports.
    #[default]
    Auto,
    /// The portable scalar search.
    Scalar,
    /// The best vector kernel available.
    ///
    /// An error when there is none.
    Simd,
    /// The AVX2 kernel.
    ///
    /// An error without AVX2.
    Avx2,
    /// The AVX-512 kernel.
    ///
    /// An error without AVX-512F.
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

/// `auto`, the vector kernels named and `scalar`, as a person lists them: `auto, avx2 or
/// scalar`.
pub(crate) fn usable(avx512: bool, avx2: bool) -> &'static str {
    match (avx512, avx2) {
        (true, true) => "auto, avx512, avx2 or scalar",
        (true, false) => "auto, avx512 or scalar",
        (false, true) => "auto, avx2 or scalar",
        (false, false) => "auto or scalar",
    }
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
            KernelChoice::Simd => Kernel::best_vector().ok_or_else(|| Error::KernelUnavailable {
                kernel: "simd",
                why: "this CPU has neither AVX-512F nor AVX2",
                usable: Kernel::usable(),
            }),
            KernelChoice::Avx2 => Kernel::Avx2.checked(),
            KernelChoice::Avx512 => Kernel::Avx512.checked(),
        }
    }

    /// The kernel, when this CPU runs it.
    fn checked(self) -> Result<Kernel, Error> {
        if Kernel::available().contains(&self) {
            Ok(self)
        } else {
            Err(Error::KernelUnavailable {
                kernel: self.name(),
                why: "this CPU does not support it",
                usable: Kernel::usable(),
            })
        }
    }

    /// The best vector kernel this CPU runs, if any.
    pub fn best_vector() -> Option<Kernel> {
        Kernel::available()
            .into_iter()
            .rfind(|&k| k != Kernel::Scalar)
    }

    /// Every kernel this machine can run, scalar first, slowest to fastest (what the tests
    /// iterate over).
    pub fn available() -> Vec<Kernel> {
        let cpu = features();
        [
            (Kernel::Scalar, true),
            (Kernel::Avx2, cpu.avx2),
            (Kernel::Avx512, cpu.avx512),
        ]
        .into_iter()
        .filter_map(|(k, runs)| runs.then_some(k))
        .collect()
    }

    /// The `--kernel` values the row search takes on this CPU, as a refusal lists them.
    fn usable() -> &'static str {
        let runs = Kernel::available();
        usable(runs.contains(&Kernel::Avx512), runs.contains(&Kernel::Avx2))
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

/// What this CPU offers the kernels: looked at once per process, here and nowhere else.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Features {
    /// AVX2 with popcnt.
    pub avx2: bool,
    /// AVX-512F with popcnt.
    pub avx512: bool,
    /// popcnt and bmi1 (the scalar builds' lowest-bit and count instructions).
    pub bmi: bool,
    /// bmi2 (`pext`, which the quadrant engine's AVX2 pair loop packs bits with).
    pub bmi2: bool,
    /// AVX-512 as Intel from Ice Lake and AMD from Zen 4 have it (F, VL, BW, VBMI, VBMI2,
    /// BITALG and VPOPCNTDQ, with GFNI), which the quadrant engine's AVX2 loops take up where
    /// the CPU has it (a vector popcount on 256-bit vectors, compress on 512, bit transposes
    /// by GFNI, signatures by bit shuffles).
    pub avx512_ice_lake: bool,
}

/// This CPU's [`Features`].
pub(crate) fn features() -> Features {
    static SEEN: OnceLock<Features> = OnceLock::new();
    *SEEN.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            let popcnt = has!("popcnt");
            Features {
                avx2: popcnt && has!("avx2"),
                avx512: popcnt && has!("avx512f"),
                bmi: popcnt && has!("bmi1"),
                bmi2: has!("bmi2"),
                avx512_ice_lake: has!("avx512f")
                    && has!("avx512vl")
                    && has!("avx512vpopcntdq")
                    && has!("avx512bw")
                    && has!("avx512vbmi")
                    && has!("avx512vbmi2")
                    && has!("avx512bitalg")
                    && has!("gfni"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        Features::default()
    })
}

/// A row kernel checked against this CPU, with the instruction sets of the code it runs:
/// made only by [`Chosen::resolve`] and [`Chosen::named`], so nothing below them checks
/// again (the vector code relies on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chosen {
    kernel: Kernel,
    bmi: bool,
}

impl Chosen {
    /// The kernel `choice` asks for on this CPU (an error when it cannot run one).
    pub fn resolve(choice: KernelChoice) -> Result<Chosen, Error> {
        Chosen::named(Kernel::resolve(choice)?)
    }

    /// The portable kernel, which every CPU runs.
    pub fn portable() -> Chosen {
        Chosen {
            kernel: Kernel::Scalar,
            bmi: features().bmi,
        }
    }

    /// `kernel`, when this CPU runs it.
    pub fn named(kernel: Kernel) -> Result<Chosen, Error> {
        Ok(Chosen {
            kernel: kernel.checked()?,
            bmi: features().bmi,
        })
    }

    /// The kernel's name.
    pub fn kernel(self) -> Kernel {
        self.kernel
    }
}

/// Visits the completions of `start` (its placed rows one-hot in `prefix`, which the search
/// may overwrite below `start.row`): batched on the chosen kernel where the subtask allows,
/// depth-first otherwise (and on the portable kernel for leaves that need boards). `make`
/// gives the leaf (a second one when a batched count gave up half-way, its arena full).
/// Returns the leaf and the nodes, or `None` when `stop` was set before the search finished.
pub(crate) fn visit<L: Leaf>(
    kernel: Chosen,
    start: Start,
    prefix: &mut [u64; crate::board::MAX_N],
    make: impl Fn() -> L,
    stop: &AtomicBool,
) -> Option<(L, u64)> {
    let width = match kernel.kernel {
        Kernel::Scalar if L::NEEDS_BOARD => None,
        Kernel::Scalar => Some(batch::Width::Portable { bmi: kernel.bmi }),
        Kernel::Avx2 => Some(batch::Width::Avx2),
        Kernel::Avx512 => Some(batch::Width::Avx512),
    };
    if let Some(width) = width.filter(|_| batch::applies(&start)) {
        let mut leaf = make();
        // SAFETY: `kernel` was checked against this CPU (its only constructors check), and
        // `applies` holds.
        match unsafe { batch::count(width, start, prefix, &mut leaf, stop) } {
            batch::Outcome::Done { nodes } => return Some((leaf, nodes)),
            batch::Outcome::Stopped => return None,
            batch::Outcome::TooLarge => {}
        }
    }
    let mut leaf = make();
    let nodes = depth_first(kernel, start, prefix, &mut leaf, stop)?;
    Some((leaf, nodes))
}

/// [`visit`] depth-first, with one leaf: completions in lexicographic order. The
/// required-column check is compiled in only for frames that have required columns.
pub(crate) fn depth_first<L: Leaf>(
    kernel: Chosen,
    start: Start,
    prefix: &mut [u64; crate::board::MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> Option<u64> {
    if start.masks.has_must() {
        scalar::depth_first::<L, true>(kernel.bmi, start, prefix, leaf, stop)
    } else {
        scalar::depth_first::<L, false>(kernel.bmi, start, prefix, leaf, stop)
    }
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
    fn visit_example() {
        use crate::board::{RowMasks, MAX_N};
        use crate::kernel::{visit, Chosen, Kernel, Start, Tally};
        use std::sync::atomic::AtomicBool;
        let masks = RowMasks::unconstrained(8);
        let start = Start::empty(8, &masks);
        let mut rows = [0u64; MAX_N];
        let stop = AtomicBool::new(false);
        for kernel in Kernel::available() {
            let chosen = Chosen::named(kernel).unwrap();
            let (tally, _nodes) = visit(chosen, start, &mut rows, Tally::default, &stop).unwrap();
            assert_eq!(tally.0, 92);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_kernels_a_refusal_offers_are_listed_as_a_person_lists_them() {
        assert_eq!(super::usable(false, false), "auto or scalar");
        assert_eq!(super::usable(false, true), "auto, avx2 or scalar");
        assert_eq!(super::usable(true, true), "auto, avx512, avx2 or scalar");
    }
}
