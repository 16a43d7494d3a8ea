//! Vectors of `u32` lanes: the operations the batched search ([`super::batch`]) is written
//! in, once portably ([`Portable`], one lane) and once per instruction set ([`Avx2`],
//! [`Avx512`]).
//!
//! # Safety
//!
//! Every method is `unsafe` for one reason: an instruction-set implementation may only run on
//! a CPU that has the instructions, so its methods are called only from code compiled for them
//! (the `#[target_feature]` wrappers in [`super::batch`], entered after [`super::Chosen`] found
//! the CPU has them), into which they are inlined. Pointers given to [`Lanes::load`],
//! [`Lanes::store`] and [`Lanes::compress_store`] must be valid for [`Lanes::WIDTH`] `u32`s:
//! whole vectors are read and written, whatever the lanes in use.

/// A vector of [`Lanes::WIDTH`] `u32` lanes. Lane masks are `u32` bit sets (bit `i`: lane `i`).
pub(crate) trait Lanes: Copy {
    /// Lanes per vector.
    const WIDTH: usize;
    /// Nodes a step of the search takes: one vector, or (one lane) a loop of 32.
    const BATCH: usize = Self::WIDTH;
    /// Every lane `x`.
    unsafe fn splat(x: u32) -> Self;
    /// Lane `i` is `base + i`.
    #[inline(always)]
    unsafe fn iota(base: u32) -> Self {
        let lanes: [u32; 32] = std::array::from_fn(|i| base + i as u32);
        // SAFETY: 32 readable lanes; the caller runs where the instructions do.
        unsafe { Self::load(lanes.as_ptr(), Self::WIDTH) }
    }
    /// Lanes `0..take` of `src` (`take <= WIDTH`), zero past them.
    unsafe fn load(src: *const u32, take: usize) -> Self;
    /// Every lane, to `dst`.
    unsafe fn store(self, dst: *mut u32);
    /// The lanes set in `keep`, packed to the front of `dst`; the rest of the vector's room
    /// at `dst` is overwritten with lanes nobody reads.
    unsafe fn compress_store(self, dst: *mut u32, keep: u32);
    unsafe fn and(self, other: Self) -> Self;
    unsafe fn or(self, other: Self) -> Self;
    unsafe fn xor(self, other: Self) -> Self;
    /// `!self & other`.
    unsafe fn and_not(self, other: Self) -> Self;
    unsafe fn sub(self, other: Self) -> Self;
    /// Each lane shifted up by one bit.
    unsafe fn shl1(self) -> Self;
    /// Each lane shifted down by one bit.
    unsafe fn shr1(self) -> Self;
    /// The lanes that are not zero.
    unsafe fn nonzero(self) -> u32;
    /// The lanes of `lanes` that are not zero.
    #[inline(always)]
    unsafe fn nonzero_in(self, lanes: u32) -> u32 {
        // SAFETY: the caller runs where the implementation's instructions do.
        unsafe { self.nonzero() & lanes }
    }
    /// All ones in the lanes that are zero, zero in the others.
    unsafe fn zero_lanes(self) -> Self;

    /// Each lane's lowest set bit (`x & -x`).
    #[inline(always)]
    unsafe fn lowest(self) -> Self {
        // SAFETY: the caller runs where the implementation's instructions do.
        unsafe { self.and(Self::splat(0).sub(self)) }
    }

    /// Lanes `0..take` as a mask.
    #[inline(always)]
    fn first(take: usize) -> u32 {
        debug_assert!(take <= Self::WIDTH && Self::WIDTH <= 32);
        ((1u64 << take) - 1) as u32
    }
}

/// One lane in a register: the portable kernel's step is a loop over its nodes, one at a
/// time, without a branch that depends on the board (a step takes [`Lanes::BATCH`] = 32).
#[derive(Clone, Copy)]
pub(crate) struct Portable(u32);

impl Lanes for Portable {
    const WIDTH: usize = 1;
    const BATCH: usize = 32;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        Portable(x)
    }

    #[inline(always)]
    unsafe fn load(src: *const u32, take: usize) -> Self {
        debug_assert_eq!(take, 1);
        // SAFETY: the caller gives a `src` valid for one read.
        Portable(unsafe { *src })
    }

    #[inline(always)]
    unsafe fn store(self, dst: *mut u32) {
        // SAFETY: the caller gives a `dst` valid for one write.
        unsafe { *dst = self.0 }
    }

    #[inline(always)]
    unsafe fn compress_store(self, dst: *mut u32, _keep: u32) {
        // written whether kept or not: the caller moves on past it only when kept, so no
        // branch on it (a coin toss, mispredicted half the time)
        // SAFETY: the caller gives a `dst` valid for one write.
        unsafe { *dst = self.0 }
    }

    #[inline(always)]
    unsafe fn and(self, other: Self) -> Self {
        Portable(self.0 & other.0)
    }

    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        Portable(self.0 | other.0)
    }

    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        Portable(self.0 ^ other.0)
    }

    #[inline(always)]
    unsafe fn and_not(self, other: Self) -> Self {
        Portable(!self.0 & other.0)
    }

    #[inline(always)]
    unsafe fn sub(self, other: Self) -> Self {
        Portable(self.0.wrapping_sub(other.0))
    }

    #[inline(always)]
    unsafe fn shl1(self) -> Self {
        Portable(self.0 << 1)
    }

    #[inline(always)]
    unsafe fn shr1(self) -> Self {
        Portable(self.0 >> 1)
    }

    #[inline(always)]
    unsafe fn nonzero(self) -> u32 {
        u32::from(self.0 != 0)
    }

    #[inline(always)]
    unsafe fn zero_lanes(self) -> Self {
        Portable(if self.0 == 0 { !0 } else { 0 })
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Avx2, Avx512};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Lanes;
    use std::arch::x86_64::*;

    /// The impl of [`Lanes`] for a register type: its width, the intrinsics of the methods
    /// that are one instruction each, then the other methods.
    macro_rules! lanes {
        ($v:ident, $width:expr, set1: $set1:ident, storeu: $storeu:ident,
         binary: [$($binary:ident => $b:ident),*], unary: [$($unary:ident => $u:expr),*],
         $($method:item)*) => {
            // SAFETY (every method): instructions of the type's set, run only where the CPU
            // has them (see the module's safety note); pointers as the trait requires.
            impl Lanes for $v {
                const WIDTH: usize = $width;

                #[inline(always)]
                unsafe fn splat(x: u32) -> Self {
                    unsafe { Self($set1(x as i32)) }
                }

                #[inline(always)]
                unsafe fn store(self, dst: *mut u32) {
                    unsafe { $storeu(dst.cast(), self.0) }
                }

                $(
                    #[inline(always)]
                    unsafe fn $binary(self, other: Self) -> Self {
                        unsafe { Self($b(self.0, other.0)) }
                    }
                )*

                $(
                    #[inline(always)]
                    unsafe fn $unary(self) -> Self {
                        unsafe { Self($u(self.0)) }
                    }
                )*

                $($method)*
            }
        };
    }

    /// 8 lanes in an AVX2 register.
    #[derive(Clone, Copy)]
    pub(crate) struct Avx2(__m256i);

    /// Lane `i` of the permutation that packs the lanes set in an 8-bit mask to the front.
    const COMPRESS: [[i32; 8]; 256] = {
        let mut table = [[0i32; 8]; 256];
        let mut mask = 0;
        while mask < 256 {
            let (mut lane, mut packed) = (0, 0);
            while lane < 8 {
                if mask & (1 << lane) != 0 {
                    table[mask][packed] = lane;
                    packed += 1;
                }
                lane += 1;
            }
            mask += 1;
        }
        table
    };

    lanes!(Avx2, 8, set1: _mm256_set1_epi32, storeu: _mm256_storeu_si256,
        binary: [and => _mm256_and_si256, or => _mm256_or_si256, xor => _mm256_xor_si256,
            and_not => _mm256_andnot_si256, sub => _mm256_sub_epi32],
        unary: [shl1 => _mm256_slli_epi32::<1>, shr1 => _mm256_srli_epi32::<1>],

        #[inline(always)]
        unsafe fn load(src: *const u32, take: usize) -> Self {
            unsafe {
                let active = _mm256_cmpgt_epi32(
                    _mm256_set1_epi32(take as i32),
                    _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0),
                );
                Avx2(_mm256_and_si256(_mm256_loadu_si256(src.cast()), active))
            }
        }

        #[inline(always)]
        unsafe fn compress_store(self, dst: *mut u32, keep: u32) {
            unsafe {
                let order = _mm256_loadu_si256(COMPRESS[keep as usize & 0xFF].as_ptr().cast());
                _mm256_storeu_si256(dst.cast(), _mm256_permutevar8x32_epi32(self.0, order));
            }
        }

        #[inline(always)]
        unsafe fn nonzero(self) -> u32 {
            unsafe {
                let zero = _mm256_cmpeq_epi32(self.0, _mm256_setzero_si256());
                (_mm256_movemask_ps(_mm256_castsi256_ps(zero)) ^ 0xFF) as u32
            }
        }

        #[inline(always)]
        unsafe fn zero_lanes(self) -> Self {
            unsafe { Avx2(_mm256_cmpeq_epi32(self.0, _mm256_setzero_si256())) }
        }
    );

    /// 16 lanes in an AVX-512 register.
    #[derive(Clone, Copy)]
    pub(crate) struct Avx512(__m512i);

    lanes!(Avx512, 16, set1: _mm512_set1_epi32, storeu: _mm512_storeu_si512,
        binary: [and => _mm512_and_si512, or => _mm512_or_si512, xor => _mm512_xor_si512,
            and_not => _mm512_andnot_si512, sub => _mm512_sub_epi32],
        unary: [shl1 => _mm512_slli_epi32::<1>, shr1 => _mm512_srli_epi32::<1>],

        #[inline(always)]
        unsafe fn nonzero(self) -> u32 {
            unsafe { u32::from(_mm512_test_epi32_mask(self.0, self.0)) }
        }

        #[inline(always)]
        unsafe fn nonzero_in(self, lanes: u32) -> u32 {
            unsafe { u32::from(_mm512_mask_test_epi32_mask(lanes as __mmask16, self.0, self.0)) }
        }

        #[inline(always)]
        unsafe fn load(src: *const u32, take: usize) -> Self {
            unsafe {
                let lanes = Self::first(take) as __mmask16;
                Avx512(_mm512_maskz_loadu_epi32(lanes, src.cast()))
            }
        }

        #[inline(always)]
        unsafe fn compress_store(self, dst: *mut u32, keep: u32) {
            // packed in a register, then stored whole: the memory form of `vpcompressd` is
            // microcoded and very slow on AMD Zen 4 (and Rust's compress-store intrinsic
            // always emits it)
            unsafe {
                let packed = _mm512_maskz_compress_epi32(keep as __mmask16, self.0);
                _mm512_storeu_si512(dst.cast(), packed)
            }
        }

        #[inline(always)]
        unsafe fn zero_lanes(self) -> Self {
            unsafe {
                let zero = _mm512_testn_epi32_mask(self.0, self.0);
                Avx512(_mm512_maskz_set1_epi32(zero, -1))
            }
        }
    );
}
