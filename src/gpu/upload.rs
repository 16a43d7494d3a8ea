//! Buffers a dispatch binds: words uploaded to a storage or uniform buffer, and the bind
//! group entry of one (for both kernels' dispatches); words as the GPU reads them.

use crate::error::Error;
use std::borrow::Cow;

/// `words` as a GPU reads them, little-endian: their own bytes where the CPU is little-endian
/// (one copy into a mapped buffer, not a word at a time: writing the pair count's uploads a
/// word at a time was a fifth of the host's work beside lavapipe at N = 18).
pub(crate) fn le_bytes<W: bytemuck::Pod>(words: &[W]) -> Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        Cow::Borrowed(bytemuck::cast_slice(words))
    } else {
        let reversed = words
            .iter()
            .flat_map(|w| bytemuck::bytes_of(w).iter().rev());
        Cow::Owned(reversed.copied().collect())
    }
}

/// A buffer holding `words` (little-endian), at least 32 bytes: every binding holds at least
/// one of its elements (an item's prefix is 32 bytes). Refused where the address space has
/// no room for it and the copy the queue stages it in ([`super::room`]).
pub(crate) fn words_buffer(
    (device, queue): (&wgpu::Device, &wgpu::Queue),
    label: &str,
    words: &[u32],
    usage: wgpu::BufferUsages,
) -> Result<wgpu::Buffer, Error> {
    let bytes = le_bytes(words);
    let size = bytes.len().max(32) as u64;
    super::room::buffer(label, 2 * size, || {
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: usage | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&buffer, 0, &bytes);
        buffer
    })
}

/// `buffer`, whole, at `binding`.
pub(crate) fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}
