//! The sieve's loops built for x86-64's instruction sets: AVX2 with BMI2, and what AVX-512
//! adds to them. Each file instantiates the portable algorithm with its own steps.

pub(super) mod avx2;
pub(super) mod avx512;
