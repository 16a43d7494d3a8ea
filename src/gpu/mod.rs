//! The GPU path (wgpu: Vulkan, Metal, DX12): a device layer ([`device`]: adapters, opening
//! and limits, room, buffers, kernels, records) under two backends, the row search's
//! ([`rows`]) and the quadrant engine's pair count ([`pairs`]), each with its shaders and
//! its executor; [`gpus`] holds the devices this process opened, with both backends'
//! kernels.

pub(crate) mod device;
pub(crate) mod gpus;
pub(crate) mod pairs;
pub(crate) mod rows;

pub use device::adapters;
pub use gpus::{open, open_real, refused, Gpu};
