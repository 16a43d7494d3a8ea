//! The row search's records ([`record!`]).

use crate::gpu::device::wire::record;

record! {
    /// A frame of the row search (`count.wgsl`): the columns each row allows, row `r` at
    /// `allowed[r]`, and the row by which the must columns are filled (32: none) and those
    /// columns.
    pub(crate) struct Frame {
        allowed: [u32; 32],
        must_row: u32,
        must: u32,
    }
}

record! {
    /// The parameters of a dispatch of the row search (`count.wgsl`).
    pub(crate) struct RowParams {
        /// The board's size, and its items.
        n: u32,
        count: u32,
        /// The board's columns, a bit each.
        full: u32,
        /// An item is given up (its count left for the CPU) once its nodes reach this, at
        /// most 2^31: it is checked whenever a row is popped, fewer than 33 × rows queens
        /// are placed between two pops, so no 32-bit count wraps. Nodes of `limit` or more
        /// in a result: given up.
        limit: u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::device::wire::{layouts, words_of};

    #[test]
    fn each_record_is_laid_out_as_its_wgsl_struct() {
        for [wgsl, rust] in [layouts::<Frame>(), layouts::<RowParams>()] {
            assert_eq!(wgsl, rust);
        }
        assert_eq!(words_of::<Frame>(), 34);
    }
}
