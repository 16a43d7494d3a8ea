//! Records the host and the shaders share: each declared once by [`record!`], which makes
//! the `#[repr(C)]` struct of 32-bit words and its WGSL declaration of the same fields,
//! given to the shaders that read it; a test holds the two layouts against each other
//! (`layouts`).

use bytemuck::Pod;

/// A record a buffer holds: its WGSL struct, of the same name and fields.
pub(crate) trait Record: Pod {
    const WGSL: &'static str;

    /// Its fields' names and byte offsets, as [`wgsl_layout`] gives the WGSL struct's.
    #[cfg(test)]
    fn offsets() -> Vec<(String, u32)>;
}

/// Declares a record ([`Record`]) of `u32`, `[u32; 2]` (WGSL's `vec2<u32>`) and
/// `[u32; N]` fields.
macro_rules! record {
    ($(#[$meta:meta])* $vis:vis struct $name:ident {
        $($(#[$field_meta:meta])* $field:ident: $ty:tt,)*
    }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
        $vis struct $name {
            $($(#[$field_meta])* pub $field: $ty,)*
        }

        impl $crate::gpu::device::wire::Record for $name {
            const WGSL: &'static str = concat!(
                "struct ", stringify!($name), " {\n",
                $("    ", stringify!($field), ": ", $crate::gpu::device::wire::wgsl_type!($ty), ",\n",)*
                "}\n"
            );

            #[cfg(test)]
            fn offsets() -> Vec<(String, u32)> {
                let offset = |name: &str, at: usize| (name.to_string(), at as u32);
                vec![$(offset(stringify!($field), std::mem::offset_of!($name, $field)),)*]
            }
        }
    };
}
pub(crate) use record;

/// A record field's type in WGSL.
macro_rules! wgsl_type {
    (u32) => {
        "u32"
    };
    ([u32; 2]) => {
        "vec2<u32>"
    };
    ([u32; $n:literal]) => {
        concat!("array<u32, ", $n, ">")
    };
}
pub(crate) use wgsl_type;

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

/// Record `R`'s layout as its WGSL struct lies in a shader's buffer, and as it lies in
/// memory: the two must agree.
#[cfg(test)]
pub(crate) fn layouts<R: Record>() -> [(u32, Vec<(String, u32)>); 2] {
    let name = std::any::type_name::<R>()
        .rsplit("::")
        .next()
        .unwrap_or_default();
    let rust = (std::mem::size_of::<R>() as u32, R::offsets());
    [wgsl_layout(R::WGSL, name), rust]
}

#[cfg(test)]
mod tests {
    use super::*;

    record! {
        struct Two {
            a: u32,
            b: [u32; 2],
            c: [u32; 3],
        }
    }

    #[test]
    fn a_record_is_its_words_and_its_wgsl_struct() {
        let two = Two {
            a: 1,
            b: [2, 3],
            c: [4, 5, 6],
        };
        assert_eq!(words(&[two]), [1, 2, 3, 4, 5, 6]);
        assert_eq!(words_of::<Two>(), 6);
        let declared = "struct Two {\n    a: u32,\n    b: vec2<u32>,\n    c: array<u32, 3>,\n}\n";
        assert_eq!(Two::WGSL, declared);
    }

    #[test]
    fn a_struct_laid_out_otherwise_is_told_apart() {
        // a vec2 aligns to 8 in WGSL: `b` lies at 8 there, at 4 in the Rust record
        let [wgsl, rust] = layouts::<Two>();
        assert_eq!(
            (&wgsl.1[1], &rust.1[1]),
            (&("b".into(), 8), &("b".into(), 4))
        );
        assert_ne!(wgsl, rust);
    }
}
