//! The quadrant engine's quarter tables held on a GPU, which joins the other side of a
//! sieve from them (`join.wgsl`): uploaded once a board (a few MB to 150 MB, against the
//! 16 bytes a pattern the host sent of that side: about 130 GB at N = 21) and kept for
//! every thread's batches.

use crate::error::Error;
use crate::gpu::device::upload::words_buffer;
use crate::parallel::lock;
use crate::quadrant::Quarters;
use std::sync::{Arc, Mutex};

/// Boards whose tables a device keeps at once (tests count several in one process).
const BOARDS: usize = 4;

/// One board's tables on a device: the north one a placement as its two packed words, the
/// south one as its four.
pub struct Held {
    n: usize,
    pub north: wgpu::Buffer,
    pub south: wgpu::Buffer,
}

/// The tables a device holds, the latest last.
pub type Holding = Mutex<Vec<Arc<Held>>>;

/// The tables of `quarters` on `device`: those it holds of that board, or uploaded now.
pub fn held(
    (device, queue): (&wgpu::Device, &wgpu::Queue),
    holding: &Holding,
    quarters: Quarters,
) -> Result<Arc<Held>, Error> {
    let mut holding = lock(holding);
    if let Some(held) = holding.iter().find(|held| held.n == quarters.n()) {
        return Ok(held.clone());
    }
    let storage = wgpu::BufferUsages::STORAGE;
    let on_device = (device, queue);
    let held = Arc::new(Held {
        n: quarters.n(),
        north: words_buffer(on_device, "north quarter", &quarters.north_words(), storage)?,
        south: words_buffer(on_device, "south quarter", &quarters.south_words(), storage)?,
    });
    if holding.len() == BOARDS {
        holding.remove(0);
    }
    holding.push(held.clone());
    Ok(held)
}
