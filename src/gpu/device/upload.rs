//! Buffers a dispatch binds: words uploaded to a storage or uniform buffer (for both
//! kernels' dispatches); words as the GPU reads them.

use crate::error::Error;
use std::borrow::Cow;

/// `words` as a GPU reads them, little-endian: their own bytes where the CPU is little-endian
/// (one copy into a mapped buffer, not a word at a time).
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

/// Writes the patterns `raw` (`W` words each) into `to` from byte `at` on as the GPU reads
/// them, a stretch at a time as [`write_rebased`] does.
pub(crate) fn write_raw<const W: usize>(
    (to, mut at): (&mut wgpu::BufferViewMut, usize),
    raw: impl Iterator<Item = [u32; W]>,
) {
    const STRETCH: usize = 256;
    let mut stretch = [[0u32; W]; STRETCH];
    let mut held = 0;
    let mut flush = |stretch: &[[u32; W]], at: &mut usize| {
        let bytes = le_bytes(stretch.as_flattened());
        (to.slice(*at..*at + bytes.len())).copy_from_slice(&bytes);
        *at += bytes.len();
    };
    for words in raw {
        stretch[held] = words;
        held += 1;
        if held == STRETCH {
            flush(&stretch, &mut at);
            held = 0;
        }
    }
    flush(&stretch[..held], &mut at);
}

/// Writes the patterns' `words`, `per` a pattern, into `to` from byte `at` on as the GPU
/// reads them, each pattern's signature (its last word) moved by `base`: a stretch at a time rebased in a
/// buffer of the CPU's own, then copied whole (the upload may be memory the CPU reads
/// slowly, and a word at a time was a call to memcpy each).
pub(crate) fn write_rebased(
    (to, at): (&mut wgpu::BufferViewMut, usize),
    words: &[u32],
    per: usize,
    base: u32,
) {
    // (a multiple of every pattern's words: 3 and 5)
    const STRETCH: usize = 15 * 64;
    debug_assert_eq!(STRETCH % per, 0);
    let mut stretch = [0u32; STRETCH];
    for (k, from) in words.chunks(STRETCH).enumerate() {
        let stretch = &mut stretch[..from.len()];
        stretch.copy_from_slice(from);
        (stretch.iter_mut().skip(per - 1).step_by(per)).for_each(|s| *s += base);
        let at = at + 4 * STRETCH * k;
        (to.slice(at..at + 4 * from.len())).copy_from_slice(&le_bytes(stretch));
    }
}
