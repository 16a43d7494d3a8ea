//! A small, well-mixed generator (SplitMix64) for the samples `merge --verify` recounts and
//! `estimate` times: the same seed gives the same draws on every machine.

/// SplitMix64: a 64-bit state moved by a constant, its output mixed by two multiplications.
pub(crate) struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}
