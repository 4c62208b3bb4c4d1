//! The noop backend: the whole trait set on the CPU.
//!
//! It executes no shaders (it reports no [`crate::HalFeatures::SHADER_EXECUTION`]),
//! but everything else is real: buffers and textures hold bytes in host
//! memory, copies, clears and queries run on the CPU when a command buffer
//! is submitted, fences are signalled at submit, mapping works, and an
//! instance-wide memory budget makes out-of-memory testable. It is what CI
//! and upper-layer tests run on where there is no GPU.
//!
//! It is also the smallest complete backend, and the one to read before
//! writing another. One file per concept, in the order a reader needs them:
//!
//! | file | concept |
//! |---|---|
//! | `mod.rs` | the `Api` type set and the resource structs |
//! | `instance.rs` | instance, the one adapter, its capabilities, device open |
//! | `memory.rs` | host allocations ("device memory") and the memory budget |
//! | `texel.rs` | texture storage layout and the copy-region math |
//! | `device.rs` | resource creation (with the cheap descriptor checks) and destruction |
//! | `command.rs` | recording commands, and executing them |
//! | `queue.rs` | submission, fences, the timestamp clock |
//! | `external.rs` | external memory and semaphores: unsupported |
//!
//! ## Adding a backend, following this one
//!
//! 1. Define an `Api` type naming one struct per associated type, and
//!    `impl crate::Dyn* for` each resource so the dyn path can carry it.
//! 2. Assert at compile time that every type is `Send + Sync` (see the end
//!    of this file).
//! 3. Check descriptors before creating anything, returning the typed errors
//!    of `src/error.rs` (see `device.rs` for the list of cheap checks); keep
//!    [`crate::HalCounters`] on every create and destroy.
//! 4. Never panic on bad input: where the hal's contract makes a mistake
//!    undefined behaviour on a GPU, a backend that can still detect it
//!    cheaply logs it and skips the work (see `command.rs`).

mod command;
mod device;
mod external;
mod instance;
mod memory;
mod queue;
#[cfg(test)]
mod tests;
mod texel;

use std::sync::Arc;

pub use command::{CommandBuffer, CommandEncoder};
pub use external::ExternalSemaphore;
pub use instance::{Adapter, Instance, ADAPTER_NAME, API_VERSION};
pub use queue::{Fence, Queue};

use memory::{Budget, Charge, HostBytes};

/// The noop backend's type set.
#[derive(Clone, Debug)]
pub struct Api;

impl crate::Api for Api {
    type Instance = Instance;
    type Adapter = Adapter;
    type Device = Device;
    type Queue = Queue;
    type CommandEncoder = CommandEncoder;
    type CommandBuffer = CommandBuffer;
    type Buffer = Buffer;
    type Texture = Texture;
    type TextureView = TextureView;
    type Sampler = Sampler;
    type QuerySet = QuerySet;
    type Fence = Fence;
    type ExternalSemaphore = ExternalSemaphore;
}

/// State shared by a device and its queue.
#[derive(Debug)]
pub(crate) struct DeviceShared {
    /// The instance's memory budget, shared by all its devices.
    pub(crate) budget: Arc<Budget>,
    /// Features the device was opened with.
    pub(crate) features: wgt::Features,
    /// Limits the device enforces (the requested ones, or the adapter's).
    pub(crate) limits: wgt::Limits,
    /// Live-object counters.
    pub(crate) counters: crate::HalCounters,
    /// Source of timestamp query values.
    pub(crate) clock: queue::Clock,
    /// Held while a submission executes, so submissions run one at a time
    /// and `wait_idle` can wait for one in flight.
    pub(crate) submit_lock: parking_lot::Mutex<()>,
}

/// A noop logical device.
#[derive(Debug)]
pub struct Device {
    pub(crate) shared: Arc<DeviceShared>,
}

/// A buffer: real bytes in host memory, in every memory kind. Only
/// `Memory::Upload` and `Memory::Readback` buffers may be mapped.
#[derive(Debug)]
pub struct Buffer {
    /// The bytes, shared with recorded commands that use them.
    pub(crate) bytes: Arc<HostBytes>,
    pub(crate) memory: crate::Memory,
    /// This buffer's share of the memory budget.
    pub(crate) _charge: Charge,
}

impl Buffer {
    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.bytes.len()
    }

    /// The memory kind it was created with.
    pub fn memory(&self) -> crate::Memory {
        self.memory
    }
}

/// A texture: real bytes per subresource, laid out as `texel.rs` describes.
#[derive(Debug)]
pub struct Texture {
    /// The bytes, shared with recorded commands that use them.
    pub(crate) bytes: Arc<HostBytes>,
    /// Format, extent, mips, samples and where each subresource lies.
    pub(crate) layout: texel::TexelLayout,
    /// Formats views may use besides the texture's own.
    pub(crate) view_formats: Vec<wgt::TextureFormat>,
    /// What the texture may be used for.
    pub(crate) usage: wgt::TextureUsages,
    /// This texture's share of the memory budget.
    pub(crate) _charge: Charge,
}

impl Texture {
    /// Texel format.
    pub fn format(&self) -> wgt::TextureFormat {
        self.layout.format
    }

    /// Extent of mip level 0.
    pub fn size(&self) -> wgt::Extent3d {
        self.layout.size
    }
}

/// A view of a texture: the resolved format, dimension and subresource
/// range. The noop backend never samples, so a view holds no bytes.
#[derive(Debug)]
pub struct TextureView {
    pub(crate) format: wgt::TextureFormat,
    pub(crate) dimension: wgt::TextureViewDimension,
    /// With `mip_level_count` and `array_layer_count` resolved to `Some`.
    pub(crate) range: wgt::ImageSubresourceRange,
}

impl TextureView {
    /// The view's format.
    pub fn format(&self) -> wgt::TextureFormat {
        self.format
    }

    /// The view's dimension.
    pub fn dimension(&self) -> wgt::TextureViewDimension {
        self.dimension
    }

    /// The subresources it covers, with both counts resolved.
    pub fn range(&self) -> wgt::ImageSubresourceRange {
        self.range
    }
}

/// A sampler. The noop backend never samples, so it only records that the
/// descriptor passed its checks.
#[derive(Debug)]
pub struct Sampler {
    _private: (),
}

/// A set of queries: one `u64` result per query.
#[derive(Debug)]
pub struct QuerySet {
    pub(crate) kind: command::QueryKind,
    /// The results, shared with recorded commands that write or read them.
    pub(crate) results: Arc<command::QueryResults>,
}

impl QuerySet {
    /// Number of queries.
    pub fn count(&self) -> u32 {
        self.results.count()
    }
}

macro_rules! dyn_resources {
    ($($ty:ident: $tr:ident),* $(,)?) => {$( impl crate::$tr for $ty {} )*};
}
dyn_resources!(
    Buffer: DynBuffer,
    Texture: DynTexture,
    TextureView: DynTextureView,
    Sampler: DynSampler,
    QuerySet: DynQuerySet,
    Fence: DynFence,
    CommandBuffer: DynCommandBuffer,
    ExternalSemaphore: DynExternalSemaphore,
);

/// Compile-time check that every type of the backend is `Send + Sync`.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Instance>();
    send_sync::<Adapter>();
    send_sync::<Device>();
    send_sync::<Queue>();
    send_sync::<CommandEncoder>();
    send_sync::<CommandBuffer>();
    send_sync::<Buffer>();
    send_sync::<Texture>();
    send_sync::<TextureView>();
    send_sync::<Sampler>();
    send_sync::<QuerySet>();
    send_sync::<Fence>();
    send_sync::<ExternalSemaphore>();
};
