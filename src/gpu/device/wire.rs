//! Records the host and the shaders share: each a `#[repr(C)]` struct of 32-bit words with
//! its WGSL declaration beside it (each backend's `wire.rs`), given to the shaders that
//! read it; a test holds the two layouts against each other (`wgsl_layout` and
//! `rust_layout!`).

use bytemuck::Pod;

/// `records` as the 32-bit words a buffer holds.
pub(crate) fn words<R: Pod>(records: &[R]) -> &[u32] {
    bytemuck::cast_slice(records)
}

/// The 32-bit words of a record.
pub(crate) const fn words_of<R>() -> usize {
    std::mem::size_of::<R>() / 4
}

/// The size and the members' names and offsets of the WGSL struct `name` declared in
/// `source`, as a shader lays it out in a storage buffer.
#[cfg(test)]
pub(crate) fn wgsl_layout(source: &str, name: &str) -> (u32, Vec<(String, u32)>) {
    let module = wgpu::naga::front::wgsl::parse_str(source).expect("valid WGSL");
    let (_, ty) = (module.types.iter())
        .find(|(_, ty)| ty.name.as_deref() == Some(name))
        .expect("the struct declared");
    match &ty.inner {
        wgpu::naga::TypeInner::Struct { members, span } => {
            let members = members.iter().map(|m| {
                let name = m.name.clone().expect("a named member");
                (name, m.offset)
            });
            (*span, members.collect())
        }
        other => panic!("{name} is not a struct: {other:?}"),
    }
}

/// The size and the fields' names and offsets of a Rust record, as [`wgsl_layout`] gives a
/// WGSL struct's.
#[cfg(test)]
macro_rules! rust_layout {
    ($record:ty, [$($field:ident),*]) => {
        (
            std::mem::size_of::<$record>() as u32,
            vec![$((stringify!($field).to_string(), std::mem::offset_of!($record, $field) as u32)),*],
        )
    };
}
#[cfg(test)]
pub(crate) use rust_layout;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_struct_laid_out_otherwise_is_told_apart() {
        // a 64-bit member aligns to 8 in WGSL: the layouts differ where a field is not
        // where the Rust record has it
        let padded = "struct P { a: u32, b: vec2<u32> }";
        assert_eq!(
            wgsl_layout(padded, "P"),
            (16, vec![("a".into(), 0), ("b".into(), 8)])
        );
    }

    #[test]
    fn records_are_their_words() {
        #[repr(C)]
        #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
        struct Two {
            a: u32,
            b: u32,
        }
        let two = Two { a: 1, b: 2 };
        assert_eq!(words(&[two, two]), [1, 2, 1, 2]);
        assert_eq!(words_of::<Two>(), 2);
        assert_eq!(
            rust_layout!(Two, [a, b]),
            (8, vec![("a".into(), 0), ("b".into(), 4)])
        );
    }
}
