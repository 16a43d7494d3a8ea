//! Room in the process's address space for what the GPU path maps. A driver whose mapping
//! fails under an address-space limit (`ulimit -v`) does not always say so: lavapipe hands
//! back the failed mapping, wgpu writes to it and the process dies (SIGSEGV), and wgpu
//! panics where listing the adapters runs short. So the room is looked at before the
//! adapters are listed, before a device is opened and before each buffer is made, and what
//! would not fit is refused with one line ([`Error::NoRoom`]) instead.

use crate::error::Error;
use crate::memory::{address_space_left_now, Bytes};
use crate::parallel::lock;
use std::sync::Mutex;

/// Address space listing the adapters takes: the Vulkan loader and its drivers' libraries
/// (243 to 307 MiB with lavapipe, measured beside a count's threads).
pub(crate) const TO_LIST: u64 = 310 << 20;

/// Address space opening a device takes: 536 MiB with lavapipe on 2 cores, most of it the
/// stack and malloc arena of each of the threads it starts, one a logical CPU.
pub(crate) fn to_open() -> u64 {
    const FIXED: u64 = 400 << 20;
    const A_THREAD: u64 = 72 << 20;
    FIXED + A_THREAD * num_cpus::get() as u64
}

/// The most address space wgpu's allocator maps for one buffer beyond the buffer's own
/// bytes under an address-space limit, where it is told to keep its blocks small
/// ([`memory_hints`]): 64 MiB.
const BLOCK: u64 = 64 << 20;

/// How the allocator takes device memory: in blocks of 128 to 256 MiB (wgpu's default), or
/// of at most 64 MiB under an address-space limit, where a block it may not need could be
/// what does not fit.
pub(crate) fn memory_hints() -> wgpu::MemoryHints {
    match address_space_left_now() {
        Some(_) => wgpu::MemoryHints::MemoryUsage,
        None => wgpu::MemoryHints::Performance,
    }
}

/// Makes something that maps `bytes` of address space (`what` names it for the refusal) once
/// the address-space limit leaves that much, else refuses ([`Error::NoRoom`]). One at a time: two
/// threads' buffers that each fit alone may not fit together.
pub(crate) fn within<T>(what: &str, bytes: u64, make: impl FnOnce() -> T) -> Result<T, Error> {
    within_saying(what, bytes, COUNT_ON_THE_CPU, make)
}

/// [`within`], the refusal ending in `advice`.
fn within_saying<T>(
    what: &str,
    bytes: u64,
    advice: &str,
    make: impl FnOnce() -> T,
) -> Result<T, Error> {
    if address_space_left_now().is_none() {
        // no limit: nothing to look at, and threads make their buffers side by side
        return Ok(make());
    }
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = lock(&ONE_AT_A_TIME);
    match address_space_left_now() {
        Some(left) if left < bytes => Err(short(what, bytes, left, advice)),
        _ => Ok(make()),
    }
}

/// [`within`] for a buffer of `size` bytes, in a block of its allocator's.
pub(crate) fn buffer<T>(label: &str, size: u64, make: impl FnOnce() -> T) -> Result<T, Error> {
    let what = format!("the GPU's {label} buffer ({}) ", Bytes(size));
    within(&what, size + BLOCK, make)
}

/// Room for what the queue stages of a batch's small writes (its parameters, workgroup
/// starts and cursors: kilobytes, in a block of their own at worst).
pub(crate) fn staging() -> Result<(), Error> {
    within("staging a batch's parameters on the GPU ", BLOCK, || ())
}

/// Room to list the adapters (`nqueens devices` too, which counts nothing: its refusal says
/// only to raise the limit).
pub(crate) fn to_list() -> Result<(), Error> {
    within_saying(
        "listing the GPU adapters ",
        TO_LIST,
        "raise the limit",
        || (),
    )
}

/// What a refusal says to do where a count could go on without the GPU.
const COUNT_ON_THE_CPU: &str = "raise the limit, or count with --device cpu";

/// The refusal of `what`, which takes `bytes` where `left` are left, saying `advice`.
fn short(what: &str, bytes: u64, left: u64, advice: &str) -> Error {
    Error::NoRoom(format!(
        "{what}takes up to {} of address space, and this process's limit (ulimit -v) leaves {}: {advice}",
        Bytes(bytes),
        Bytes(left)
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_refusal_names_what_it_could_not_have_and_what_to_do() {
        let advice = super::COUNT_ON_THE_CPU;
        let line = super::short("opening the GPU ", 600 << 20, 57 << 20, advice).to_string();
        assert!(
            line.contains("opening the GPU takes up to 600 MiB"),
            "{line}"
        );
        assert!(line.contains("leaves 57 MiB"), "{line}");
        assert!(line.contains("--device cpu"), "{line}");
    }
}
