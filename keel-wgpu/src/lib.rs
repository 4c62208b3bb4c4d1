//! keel-wgpu: wgpu 30's API on top of keel-hal, through wgpu's `custom`
//! backend interface, so programs written for wgpu run on keel-hal
//! unchanged.
//!
//! ```no_run
//! let instance = keel_wgpu::instance(keel_wgpu::BackendChoice::Auto).expect("keel-hal instance");
//! let adapter = pollster::block_on(instance.request_adapter(&Default::default())).expect("adapter");
//! // From here on, plain wgpu.
//! ```
//!
//! What wgpu-core does for wgpu-hal, keel-wgpu does for keel-hal, at the
//! depth a program needs (`ARCHITECTURE.md`'s map lists the files):
//! - **lifetimes**: objects live while wgpu handles or recorded and
//!   in-flight work use them; keel-hal objects are destroyed once the fence
//!   passes their last submission (`shared.rs`);
//! - **synchronisation**: commands are recorded with the resources they
//!   hold (`command.rs`, `encoder.rs`), encoded at `finish` into the
//!   encoder's own keel-hal command buffer with the barriers between their
//!   uses (`replay.rs`), and at submit the tracker's first uses meet each
//!   resource's current state (`tracker.rs`); new buffers and textures read
//!   as zeros;
//! - **mapping and writes**: `map_async` callbacks fire from
//!   `Device::poll`/`Queue::submit`; `Queue::write_*` go through a recycled
//!   staging belt (`queue.rs`);
//! - **layouts**: `layout: None` pipelines get layouts derived from their
//!   shaders (`binding.rs`);
//! - **errors**: keel-hal's typed errors become `wgpu::Error`s through
//!   error scopes and the uncaptured-error handler (`error.rs`); with
//!   neither, wgpu's default: a panic at the call that made the error;
//! - **surfaces** and **pipeline caches**: keel-hal's (`surface.rs`,
//!   `pipeline.rs`).
//!
//! Mesh pipelines (`EXPERIMENTAL_MESH_SHADER`) are carried as render
//! pipelines (`device.rs::raster_pipeline`). Not yet carried through (never
//! advertised; creating one reports a validation error): acceleration
//! structures, external textures and memory (`docs/design.md` §17.5).

#![warn(missing_docs)]

mod allocator_report;
mod bind_group;
mod binding;
mod command;
mod create_check;
mod device;
mod encoder;
mod error;
mod handles;
mod indirect_check;
mod instance;
mod owner;
mod pass_check;
mod pipeline;
mod ptr_map;
mod queue;
mod replay;
mod resource;
mod shared;
mod surface;
mod tracker;
mod transfer_check;

pub use error::{ErrorKind, KeelError};
pub use keel_hal::dynamic::BackendChoice;
pub use keel_hal::LiveCounts;

/// A `wgpu::Instance` backed by keel-hal, with the backend `choice` picks
/// and the Vulkan validation layer on when `KEEL_VALIDATION=1` or in debug
/// builds.
pub fn instance(choice: BackendChoice) -> Result<wgpu::Instance, keel_hal::InstanceError> {
    let validation = match std::env::var("KEEL_VALIDATION") {
        Ok(v) => v != "0",
        Err(_) => cfg!(debug_assertions),
    };
    instance_with(choice, validation)
}

/// As [`instance`], saying whether the validation layer is on.
pub fn instance_with(
    choice: BackendChoice,
    validation: bool,
) -> Result<wgpu::Instance, keel_hal::InstanceError> {
    let instance = instance::KeelInstance::create(choice, validation)?;
    Ok(wgpu::Instance::from_custom(instance))
}

/// keel-hal objects still alive on a device made by keel-wgpu (`None` for
/// another backend's device), after waiting for the GPU, destroying what
/// it was done with and releasing keel-wgpu's own caches (staging memory,
/// idle encoders). keel-wgpu's fence and the device's indirect dispatch
/// check (`indirect_check.rs`, kept as long as the device) are not
/// counted: all zero once every object the program made is gone.
pub fn live_counts(device: &wgpu::Device) -> Option<LiveCounts> {
    let device = device.as_custom::<device::KeelDevice>()?;
    let shared = &device.handle.shared;
    if let Err(e) = shared.wait_for(None, None) {
        shared.report(e);
    }
    shared::DeviceShared::fire(shared.maintain());
    shared.release_caches();
    let mut counts = shared.hal().live_counts();
    counts.fences -= 1;
    shared.indirect.discount(&mut counts);
    Some(counts)
}

/// Validation messages the keel-hal instance behind `instance` counted
/// (`None` for another backend's instance).
pub fn validation_errors(instance: &wgpu::Instance) -> Option<u64> {
    instance
        .as_custom::<instance::KeelInstance>()
        .and_then(|i| i.chosen.as_ref())
        .map(|c| c.instance.validation_error_count())
}
