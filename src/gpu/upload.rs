//! Buffers a dispatch binds: words uploaded to a storage or uniform buffer, and the bind
//! group entry of one (for both kernels' dispatches).

/// A buffer holding `words` (little-endian), at least 32 bytes: every binding holds at least
/// one of its elements (an item's prefix is 32 bytes).
pub(crate) fn words_buffer(
    (device, queue): (&wgpu::Device, &wgpu::Queue),
    label: &str,
    words: &[u32],
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.len().max(32) as u64,
        usage: usage | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&buffer, 0, &bytes);
    buffer
}

/// `buffer`, whole, at `binding`.
pub(crate) fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}
