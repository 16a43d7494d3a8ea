//! The quadrant engine's pair loops: which of its own kernels a run takes, chosen once from
//! what the CPU has.

use crate::error::Error;
use crate::kernel::{Kernel, KernelChoice};

/// The quadrant engine's pair loops (the sieve's and the join's): its own kernels, chosen
/// once per run. Made only by [`PairKernel::resolve`] (and [`PairKernel::available`]), which
/// look at the CPU: [`PairKernel::Avx2`] exists only where the CPU has AVX2, and
/// [`PairKernel::Avx2WithAvx512`] only where it also has AVX-512 F, VL, BW, VBMI and
/// VPOPCNTDQ, and GFNI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PairKernel {
    /// The portable loops.
    Scalar,
    /// The loops compiled for AVX2 and BMI2: 256-bit ORs and `pext` in the sieve, one `vptest`
    /// per pair in the join.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// The AVX2 loops with what AVX-512 adds to them: the sieve's popcounts by `vpopcntq` on
    /// the same 256-bit vectors (one instruction where AVX2 takes seven), the join's kept
    /// pairs packed four at a time by `vpcompressq`, the slicing's bit transposes by GFNI.
    /// Reported as `avx2`: the sieve keeps its 256-bit blocks.
    #[cfg(target_arch = "x86_64")]
    Avx2WithAvx512,
}

impl PairKernel {
    /// The loops `choice` asks for. The sieve has no loop on AVX-512's 512-bit vectors (it
    /// is bound by loads, not width), so `avx512` is refused rather than run as something
    /// else; what AVX-512 adds, the AVX2 loops take up where the CPU has it.
    pub fn resolve(choice: KernelChoice) -> Result<PairKernel, Error> {
        let best = PairKernel::best();
        match choice {
            KernelChoice::Scalar => Ok(PairKernel::Scalar),
            KernelChoice::Auto => Ok(best),
            KernelChoice::Simd | KernelChoice::Avx2 if best != PairKernel::Scalar => Ok(best),
            KernelChoice::Simd | KernelChoice::Avx2 => Err(Error::KernelUnavailable {
                kernel: if choice == KernelChoice::Simd {
                    "simd"
                } else {
                    "avx2"
                },
                why: "this CPU does not support it",
                usable: PairKernel::usable(),
            }),
            KernelChoice::Avx512 => Err(Error::KernelUnavailable {
                kernel: "avx512",
                why: "the quadrant engine has no AVX-512 loop",
                usable: PairKernel::usable(),
            }),
        }
    }

    /// The `--kernel` values the quadrant engine takes on this CPU, as a refusal lists them
    /// (its AVX2 loops with AVX-512's additions are asked for as `avx2`).
    fn usable() -> &'static str {
        crate::kernel::usable(false, PairKernel::best() != PairKernel::Scalar)
    }

    /// The fastest loops this CPU runs.
    pub fn best() -> PairKernel {
        PairKernel::available()
            .pop()
            .expect("the portable loops run anywhere")
    }

    /// Every kind of loop this CPU runs, portable first.
    pub fn available() -> Vec<PairKernel> {
        let mut all = vec![PairKernel::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            let features = crate::kernel::features();
            if features.avx2 && features.bmi2 {
                all.push(PairKernel::Avx2);
                if features.avx512_ice_lake {
                    all.push(PairKernel::Avx2WithAvx512);
                }
            }
        }
        all
    }

    /// The kernel reports name.
    pub fn kernel(self) -> Kernel {
        match self {
            PairKernel::Scalar => Kernel::Scalar,
            #[cfg(target_arch = "x86_64")]
            PairKernel::Avx2 | PairKernel::Avx2WithAvx512 => Kernel::Avx2,
        }
    }
}
