//! One GPU adapter of the machine, as listed: what the probes give and `gpu` opens (a leaf
//! file, so that `gpu` and `device` can both use it).

/// One adapter of the machine, as `nqueens devices` lists it and `--gpus` numbers it.
///
/// ```
/// // every adapter has a name; lavapipe and WARP are software ones
/// for a in nqueens::gpu_adapters().unwrap() {
///     assert!(!a.name.is_empty());
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adapter {
    /// Its number for `--gpus`.
    pub index: usize,
    /// Name and backend.
    pub name: String,
    /// Whether it runs on the CPU (lavapipe, WARP): `auto` never takes it.
    pub software: bool,
}
