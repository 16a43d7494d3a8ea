//! The devices this process opened: each opened once and shared by every later run, with
//! what each backend keeps for it ([`PerDevice`]).

use crate::error::Error;
use crate::gpu::device::{adapter, adapters, room, Device, Wants};
use crate::parallel::lock;
use std::sync::{Arc, Mutex, Weak};

/// Which device of which adapter: (adapter, how many times it came earlier in one list).
type DeviceKey = (usize, usize);

/// Devices this process opened.
static OPENED: Mutex<Vec<(DeviceKey, Arc<Device>)>> = Mutex::new(Vec::new());

/// The GPUs a run asked for: `indices` of [`adapters`] (an index may repeat: each time
/// opens a device of its own on that adapter), or, without indices, every adapter that is
/// not a software one, else (only when `allow_software`) the first software one. A device
/// is kept only once `known_answer` passed on it.
///
/// Devices are opened once per process and shared by every later run: opening a GPU again
/// for each count fails on real drivers (after a few dozen opens in one process the Vulkan
/// loader reports no driver, and opens from several threads at once crash it).
pub(crate) fn open(
    indices: Option<&[usize]>,
    allow_software: bool,
    known_answer: fn(&Arc<Device>) -> Result<(), Error>,
) -> Result<Vec<Arc<Device>>, Error> {
    let mut opened = lock(&OPENED);
    if opened.is_empty() {
        // (listing the adapters alone can run out of address space)
        refusing_for_auto(room::within(
            "listing and opening the GPU ",
            room::TO_LIST + room::to_open(),
            || (),
        ))?;
    }
    let chosen = chosen(indices, allow_software)?;
    let mut gpus = Vec::new();
    for (k, &index) in chosen.iter().enumerate() {
        let key = (index, chosen[..k].iter().filter(|&&i| i == index).count());
        let gpu = match opened.iter().find(|(at, _)| *at == key) {
            Some((_, gpu)) => gpu.clone(),
            None => {
                refusing_for_auto(room::within("opening the GPU ", room::to_open(), || ()))?;
                let gpu = Arc::new(open_on(adapter(index)?, None)?);
                // once per device and process: a device that fails is not kept, and `auto`
                // (which goes on without it) says why
                refusing_for_auto(known_answer(&gpu))?;
                opened.push((key, gpu.clone()));
                gpu
            }
        };
        gpus.push(gpu);
    }
    Ok(gpus)
}

/// The adapters `open` opens a device on (see there).
fn chosen(indices: Option<&[usize]>, allow_software: bool) -> Result<Vec<usize>, Error> {
    let known = adapters()?;
    if let Some(list) = indices {
        return match list.iter().find(|&&i| i >= known.len()) {
            Some(&bad) => Err(Error::NoSuchGpu {
                index: bad,
                found: known.len(),
            }),
            None => Ok(list.to_vec()),
        };
    }
    let real: Vec<usize> = (known.iter().filter(|a| !a.software))
        .map(|a| a.index)
        .collect();
    if !real.is_empty() {
        return Ok(real);
    }
    match known.iter().find(|a| a.software) {
        Some(soft) if allow_software => Ok(vec![soft.index]),
        Some(soft) => Err(Error::Failed(format!(
            "no usable GPU: the only adapter is {}, which runs on the CPU",
            soft.name
        ))),
        None => Err(Error::Failed(
            "no usable GPU: looked for a Vulkan, Metal or DX12 adapter with compute shaders".into(),
        )),
    }
}

/// A device on `adapter` for both backends, with every feature they take that the adapter
/// has, less `without`.
pub(crate) fn open_on(
    adapter: &wgpu::Adapter,
    without: Option<wgpu::Features>,
) -> Result<Device, Error> {
    let mut features = adapter.features() - without.unwrap_or(wgpu::Features::empty());
    if crate::stages::over_a_bus() {
        // (its buffers then copied as a discrete GPU's are, and it is sent words)
        features.remove(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS);
    }
    let wants = Wants {
        features,
        // each pass of the pair count timed on the GPU (`pass_times`)
        timed: crate::stages::KEPT,
    };
    Device::open(adapter, wants)
}

/// Why the last GPU refused by its known-answer check, or for want of address space, was
/// refused, if one was.
static REFUSED: Mutex<Option<String>> = Mutex::new(None);

/// `result`, its refusal kept for `auto`'s note ([`refused`]).
fn refusing_for_auto<T>(result: Result<T, Error>) -> Result<T, Error> {
    if let Err(e) = &result {
        *lock(&REFUSED) = Some(e.to_string());
    }
    result
}

/// Why a GPU of this process was refused by its known-answer check or for want of address
/// space ([`room`]), if one was: what `--device auto`, which goes on without it, says.
pub fn refused() -> Option<String> {
    lock(&REFUSED).clone()
}

/// What a backend keeps for each device it counts on (its kernels, say): made the first
/// time a run asks, shared by the later ones, gone with the device.
pub(crate) struct PerDevice<T> {
    kept: Mutex<Vec<(Weak<Device>, Arc<T>)>>,
}

impl<T> PerDevice<T> {
    pub const fn new() -> PerDevice<T> {
        PerDevice {
            kept: Mutex::new(Vec::new()),
        }
    }

    /// `device` with what is kept for it, made by `make` the first time.
    pub fn on(&self, device: &Arc<Device>, make: impl FnOnce(&Device) -> T) -> OnDevice<T> {
        let mut kept = lock(&self.kept);
        kept.retain(|(on, _)| on.strong_count() > 0);
        // (a live `Weak` keeps its allocation: no other device can be at its address)
        let found = kept
            .iter()
            .find(|(on, _)| on.as_ptr() == Arc::as_ptr(device));
        let kept = match found {
            Some((_, kept)) => kept.clone(),
            None => {
                let made = Arc::new(make(device));
                kept.push((Arc::downgrade(device), made.clone()));
                made
            }
        };
        OnDevice {
            device: device.clone(),
            kept,
        }
    }
}

/// A device and what a backend keeps for it ([`PerDevice`]).
pub(crate) struct OnDevice<T> {
    pub device: Arc<Device>,
    pub kept: Arc<T>,
}

impl<T> Clone for OnDevice<T> {
    fn clone(&self) -> OnDevice<T> {
        OnDevice {
            device: self.device.clone(),
            kept: self.kept.clone(),
        }
    }
}
