//! Records the host and the shaders share, each a `#[repr(C)]` struct of 32-bit words with
//! its WGSL declaration beside it: the shaders that read one are given that declaration,
//! and a test holds the two layouts against each other.

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

/// Where a signature of a pair batch reaches (`pairs.wgsl`): its reached blocks,
/// `reach[start..end]`, its head (its pivots' dense bits, and at bit 16 where a narrow
/// word's rest starts; 0 for wide words), its sieve's index in the batch and where that
/// sieve's patterns start in the batch.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct ReachAt {
    pub start: u32,
    pub end: u32,
    pub head: u32,
    pub sieve: u32,
    pub first: u32,
}

/// [`ReachAt`] in WGSL.
pub(crate) const REACH_AT_WGSL: &str = "
struct ReachAt {
    start: u32,
    end: u32,
    head: u32,
    sieve: u32,
    first: u32,
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

/// The parameters of a pair batch's dispatches (`gpu/pairs.rs`), one buffer for all of
/// its kernels.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct PairParams {
    /// Patterns of the other side.
    pub patterns: u32,
    /// The most lookups of a sieve of the batch (at most 26: a dense word's 128 bits); a
    /// pattern's dense word is 0 past its own sieve's.
    pub lookups: u32,
    /// The stored blocks of the batch (the tables to make, where it was sent words).
    pub blocks: u32,
    /// Words a pattern of the other side takes once in signature order: `NARROW_WORDS` or
    /// `DENSE_WORDS + 1` (sent as it came, `RAW_WORDS`, where the GPU signs it).
    pub pattern_words: u32,
    /// 1 where the GPU put the other side in signature order (`order.wgsl`): the pair
    /// kernel knows the patterns it spot-checks by where they came.
    pub ordered_here: u32,
    /// Sieves of the batch: the pair kernel writes its spot checks' clashes past their sums.
    pub sieves: u32,
    /// Patterns between two of the pair kernel's spot checks past each sieve's first.
    pub spot_every: u32,
    /// Where the join's hints start among the cells' words (`join.wgsl`).
    pub hints_at: u32,
}

/// [`PairParams`] in WGSL.
pub(crate) const PAIR_PARAMS_WGSL: &str = "
struct Params {
    patterns: u32,
    lookups: u32,
    blocks: u32,
    pattern_words: u32,
    ordered_here: u32,
    sieves: u32,
    spot_every: u32,
    hints_at: u32,
}
";

/// `records` as the 32-bit words a buffer holds.
pub(crate) fn words<R: Pod>(records: &[R]) -> &[u32] {
    bytemuck::cast_slice(records)
}

/// The 32-bit words of a record.
pub(crate) const fn words_of<R>() -> usize {
    std::mem::size_of::<R>() / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};
    use wgpu::naga;

    /// The size and the members' names and offsets of `name`, as a shader lays it out in
    /// a storage buffer.
    fn wgsl_layout(source: &str, name: &str) -> (u32, Vec<(String, u32)>) {
        let module = naga::front::wgsl::parse_str(source).expect("valid WGSL");
        let (_, ty) = (module.types.iter())
            .find(|(_, ty)| ty.name.as_deref() == Some(name))
            .expect("the struct declared");
        match &ty.inner {
            naga::TypeInner::Struct { members, span } => {
                let members = members.iter().map(|m| {
                    let name = m.name.clone().expect("a named member");
                    (name, m.offset)
                });
                (*span, members.collect())
            }
            other => panic!("{name} is not a struct: {other:?}"),
        }
    }

    /// The size and the fields' names and offsets of a Rust record.
    macro_rules! rust_layout {
        ($record:ty, [$($field:ident),*]) => {
            (
                size_of::<$record>() as u32,
                vec![$((stringify!($field).to_string(), offset_of!($record, $field) as u32)),*],
            )
        };
    }

    #[test]
    fn each_record_is_laid_out_as_its_wgsl_struct() {
        assert_eq!(
            wgsl_layout(FRAME_WGSL, "Frame"),
            rust_layout!(Frame, [allowed, must_row, must])
        );
        assert_eq!(
            wgsl_layout(REACH_AT_WGSL, "ReachAt"),
            rust_layout!(ReachAt, [start, end, head, sieve, first])
        );
        assert_eq!(
            wgsl_layout(ROW_PARAMS_WGSL, "Params"),
            rust_layout!(RowParams, [n, count, full, limit])
        );
        let pair_params = rust_layout!(
            PairParams,
            [
                patterns,
                lookups,
                blocks,
                pattern_words,
                ordered_here,
                sieves,
                spot_every,
                hints_at
            ]
        );
        assert_eq!(wgsl_layout(PAIR_PARAMS_WGSL, "Params"), pair_params);
    }

    #[test]
    fn a_struct_laid_out_otherwise_is_told_apart() {
        // a 64-bit member aligns to 8 in WGSL: the layouts differ where a field is not
        // where the Rust record has it, and the test above would fail
        let padded = "struct P { a: u32, b: vec2<u32> }";
        assert_eq!(
            wgsl_layout(padded, "P"),
            (16, vec![("a".into(), 0), ("b".into(), 8)])
        );
    }

    #[test]
    fn records_are_their_words() {
        let at = ReachAt {
            start: 1,
            end: 2,
            head: 3,
            sieve: 4,
            first: 5,
        };
        assert_eq!(words(&[at, at])[5..], [1, 2, 3, 4, 5]);
        assert_eq!(words_of::<Frame>(), 34);
    }
}
