//! The row search's records ([`wire`](crate::gpu::device::wire)).

use bytemuck::{Pod, Zeroable};

/// A frame of the row search (`count.wgsl`): the columns each row allows, row `r` at
/// `allowed[r]`, and the row by which the must columns are filled (32: none) and those
/// columns.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct Frame {
    pub allowed: [u32; 32],
    pub must_row: u32,
    pub must: u32,
}

/// [`Frame`] in WGSL.
pub(crate) const FRAME_WGSL: &str = "
struct Frame {
    allowed: array<u32, 32>,
    must_row: u32,
    must: u32,
}
";

/// The parameters of a dispatch of the row search (`count.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct RowParams {
    /// The board's size, and its items.
    pub n: u32,
    pub count: u32,
    /// The board's columns, a bit each.
    pub full: u32,
    /// An item is given up (its count left for the CPU) once its nodes reach this, at most
    /// 2^31: it is checked whenever a row is popped, fewer than 33 × rows queens are placed
    /// between two pops, so no 32-bit count wraps. Nodes of `limit` or more in a result:
    /// given up.
    pub limit: u32,
}

/// [`RowParams`] in WGSL.
pub(crate) const ROW_PARAMS_WGSL: &str = "
struct Params {
    n: u32,
    count: u32,
    full: u32,
    limit: u32,
}
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::device::wire::{rust_layout, wgsl_layout};

    #[test]
    fn each_record_is_laid_out_as_its_wgsl_struct() {
        assert_eq!(
            wgsl_layout(FRAME_WGSL, "Frame"),
            rust_layout!(Frame, [allowed, must_row, must])
        );
        assert_eq!(
            wgsl_layout(ROW_PARAMS_WGSL, "Params"),
            rust_layout!(RowParams, [n, count, full, limit])
        );
        assert_eq!(crate::gpu::device::wire::words_of::<Frame>(), 34);
    }
}
