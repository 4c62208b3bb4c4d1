//! The Vulkan backend, on `ash`, with VMA for memory.
//!
//! Vulkan 1.3 is the baseline (dynamic rendering, synchronization2,
//! timeline semaphores, maintenance4). One file per concept:
//!
//! | file | concept |
//! |---|---|
//! | `instance.rs` | loader, layers, debug messenger, adapter enumeration |
//! | `adapter.rs` | physical-device capabilities, device open |
//! | `device.rs` | resource creation and destruction |
//! | `texture_checks.rs` | cheap checks of texture and view descriptions |
//! | `memory.rs` | VMA behind our `Memory` enum (the only file that names `vk_mem`) |
//! | `queue.rs` | submission, timeline-semaphore fences |
//! | `command.rs` | command recording: barriers, copies, queries, markers |
//! | `bounds.rs` | recording-time bounds checks of regions and ranges |
//! | `barrier.rs` | usage states → sync2 scopes and image layouts |
//! | `conv.rs` | wgpu-types ↔ Vulkan conversion tables |
//! | `formats.rs` | per-device cache of format queries |
//! | `raw.rs` | raw accessors and wrapping of raw buffers and images |
//! | `external.rs` | external memory: capabilities, export, import (dedicated, outside VMA) |
//! | `external_texture.rs` | external textures: dma-buf layouts, DRM format modifiers |
//! | `external_sync.rs` | external semaphores, `submit_external`, ownership transfers |
//! | `fault.rs` | test-only fault injection into the function tables |
//!
//! Every object exposes its raw handle (`raw()`); the device exposes its
//! `ash::Device`, physical device, `ash::Instance` and queue family, the
//! encoder its command buffer being recorded; raw buffers and images can be
//! wrapped (`Device::buffer_from_raw`, `Device::texture_from_raw`) as
//! caller-owned resources. Upper layers so have escape hatches.

mod adapter;
mod barrier;
mod bounds;
mod command;
mod conv;
mod device;
mod external;
mod external_sync;
mod external_texture;
#[cfg(feature = "fault-injection")]
pub mod fault;
mod formats;
mod instance;
mod memory;
mod queue;
mod raw;
mod texture_checks;

use std::ptr::NonNull;
use std::sync::Arc;

use ash::vk;

pub use adapter::Adapter;
pub use external_sync::ExternalSemaphore;
pub use instance::{Instance, ValidationCounter};

/// The Vulkan backend's type set.
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

/// State shared by a device, its queue and its encoders. Destroyed (VMA
/// allocator, then `VkDevice`) when the last of them is dropped.
pub(crate) struct DeviceShared {
    /// The device's function table (wrapped by fault injection when that is on).
    pub(crate) raw: ash::Device,
    /// Keeps the instance alive while the device lives.
    pub(crate) instance: Arc<instance::InstanceShared>,
    pub(crate) physical_device: vk::PhysicalDevice,
    pub(crate) queue_family_index: u32,
    /// Memory: VMA allocator and the memory-type choices.
    pub(crate) memory: memory::MemoryAllocator,
    /// `VK_EXT_debug_utils` device functions, when the instance enabled it.
    pub(crate) debug_utils: Option<ash::ext::debug_utils::Device>,
    /// Features and limits the device was opened with. `hal_features` is
    /// derived from the extensions really enabled.
    pub(crate) features: wgt::Features,
    pub(crate) hal_features: crate::HalFeatures,
    /// Whether `VK_KHR_swapchain` is enabled (so `PRESENT_SRC_KHR` is a valid layout).
    pub(crate) swapchain: bool,
    /// Format and image-format queries, asked of the driver once each.
    pub(crate) formats: formats::FormatCache,
    pub(crate) limits: wgt::Limits,
    pub(crate) timestamp_period: f32,
    pub(crate) counters: crate::HalCounters,
    /// What the adapter reported (properties, feature bits, extensions).
    pub(crate) physical: adapter::PhysicalInfo,
    /// Guards the one queue: `vkQueueSubmit2` and `vkDeviceWaitIdle` need
    /// it externally synchronised.
    pub(crate) queue_lock: parking_lot::Mutex<()>,
    /// External-memory and external-semaphore functions (`external.rs`).
    pub(crate) external: external::ExternalFns,
}

impl std::fmt::Debug for DeviceShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceShared")
            .field("raw", &self.raw.handle())
            .field("queue_family_index", &self.queue_family_index)
            .finish_non_exhaustive()
    }
}

/// A Vulkan logical device.
#[derive(Debug)]
pub struct Device {
    pub(crate) shared: Arc<DeviceShared>,
}

/// The device's one queue (graphics + compute + transfer).
#[derive(Debug)]
pub struct Queue {
    pub(crate) raw: vk::Queue,
    pub(crate) device: Arc<DeviceShared>,
}

/// A Vulkan buffer and the memory bound to it.
#[derive(Debug)]
pub struct Buffer {
    pub(crate) raw: vk::Buffer,
    pub(crate) block: memory::Block,
    pub(crate) size: u64,
    pub(crate) usage: wgt::BufferUsages,
    pub(crate) memory: crate::Memory,
    /// Persistent mapping of `Upload`/`Readback` buffers.
    pub(crate) mapped: Option<NonNull<u8>>,
}

/// A Vulkan image and the memory bound to it.
#[derive(Debug)]
pub struct Texture {
    pub(crate) raw: vk::Image,
    pub(crate) block: memory::Block,
    pub(crate) format: wgt::TextureFormat,
    pub(crate) dimension: wgt::TextureDimension,
    pub(crate) size: wgt::Extent3d,
    pub(crate) mip_level_count: u32,
    pub(crate) sample_count: u32,
    pub(crate) usage: wgt::TextureUsages,
    /// Other formats views may use (the image is `MUTABLE_FORMAT` when non-empty).
    pub(crate) view_formats: Vec<wgt::TextureFormat>,
}

/// A Vulkan image view.
#[derive(Debug)]
pub struct TextureView {
    pub(crate) raw: vk::ImageView,
    pub(crate) format: wgt::TextureFormat,
    pub(crate) range: wgt::ImageSubresourceRange,
}

/// A Vulkan sampler.
#[derive(Debug)]
pub struct Sampler {
    pub(crate) raw: vk::Sampler,
}

/// A Vulkan query pool.
#[derive(Debug)]
pub struct QuerySet {
    pub(crate) raw: vk::QueryPool,
    pub(crate) ty: wgt::QueryType,
    pub(crate) count: u32,
}

/// A fence: a timeline semaphore.
#[derive(Debug)]
pub struct Fence {
    pub(crate) raw: vk::Semaphore,
}

/// Records into command buffers from one `VkCommandPool`.
#[derive(Debug)]
pub struct CommandEncoder {
    pub(crate) device: Arc<DeviceShared>,
    pub(crate) pool: vk::CommandPool,
    /// The command buffer being recorded, if any.
    pub(crate) active: Option<vk::CommandBuffer>,
    /// Reset command buffers ready for reuse (a subset of `allocated`).
    pub(crate) free: Vec<vk::CommandBuffer>,
    /// Every command buffer allocated from `pool`; all of them are free
    /// again after each `reset_all`.
    pub(crate) allocated: Vec<vk::CommandBuffer>,
    /// Scratch for barrier conversion, reused across calls (no per-call allocation).
    pub(crate) temp: command::Temp,
}

/// A finished recording.
#[derive(Debug)]
pub struct CommandBuffer {
    pub(crate) raw: vk::CommandBuffer,
    /// The pool (so the encoder) it came from.
    pub(crate) pool: vk::CommandPool,
}

// SAFETY: Vulkan handles are plain identifiers; all access to the objects
// they name is externally synchronised by the hal's `&mut`/`unsafe`
// contracts. `mapped` points into persistently mapped coherent memory owned
// by the buffer's block.
unsafe impl Send for Buffer {}
// SAFETY: as above.
unsafe impl Sync for Buffer {}

macro_rules! raw_access {
    ($($ty:ident => $raw:ty),* $(,)?) => {$(
        impl $ty {
            /// The raw Vulkan handle. The hal still owns it: do not destroy it.
            pub fn raw(&self) -> $raw {
                self.raw
            }
        }
    )*};
}
raw_access!(
    Buffer => vk::Buffer,
    Texture => vk::Image,
    TextureView => vk::ImageView,
    Sampler => vk::Sampler,
    QuerySet => vk::QueryPool,
    Fence => vk::Semaphore,
    CommandBuffer => vk::CommandBuffer,
    Queue => vk::Queue,
);

impl Texture {
    /// The texture's format.
    pub fn format(&self) -> wgt::TextureFormat {
        self.format
    }
    /// The texture's extent.
    pub fn size(&self) -> wgt::Extent3d {
        self.size
    }
    /// Number of mip levels.
    pub fn mip_level_count(&self) -> u32 {
        self.mip_level_count
    }
    /// Samples per texel.
    pub fn sample_count(&self) -> u32 {
        self.sample_count
    }
    /// The usages it was created with.
    pub fn usage(&self) -> wgt::TextureUsages {
        self.usage
    }
}

impl TextureView {
    /// The view's format.
    pub fn format(&self) -> wgt::TextureFormat {
        self.format
    }
    /// The subresources it covers, with every count resolved.
    pub fn range(&self) -> &wgt::ImageSubresourceRange {
        &self.range
    }
}

impl QuerySet {
    /// The query type.
    pub fn ty(&self) -> wgt::QueryType {
        self.ty
    }
    /// Number of queries.
    pub fn count(&self) -> u32 {
        self.count
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

/// Compile-time check that every resource type is `Send + Sync`.
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

/// Maps a driver error to the hal's [`crate::DeviceError`].
pub(crate) fn map_err(result: vk::Result) -> crate::DeviceError {
    match result {
        vk::Result::ERROR_OUT_OF_HOST_MEMORY | vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => {
            crate::DeviceError::OutOfMemory
        }
        vk::Result::ERROR_DEVICE_LOST => crate::DeviceError::Lost,
        other => {
            log::warn!("unexpected Vulkan result {other:?}");
            crate::DeviceError::Unexpected
        }
    }
}
