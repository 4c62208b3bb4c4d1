//! The Vulkan backend, on `ash`, with VMA for memory.
//!
//! Vulkan 1.3 is the baseline (dynamic rendering, synchronization2,
//! timeline semaphores, maintenance4). One file per concept
//! (`ARCHITECTURE.md`'s map lists them).
//!
//! Every object exposes its raw handle (`raw()`); the device exposes its
//! `ash::Device`, physical device, `ash::Instance` and queue family, the
//! encoder its command buffer being recorded; raw buffers and images can be
//! wrapped (`Device::buffer_from_raw`, `Device::texture_from_raw`) as
//! caller-owned resources. Upper layers so have escape hatches.

mod acceleration;
mod acceleration_commands;
mod adapter;
mod barrier;
mod bind_group;
mod binding;
mod bounds;
mod command;
mod conv;
mod cooperative_matrix;
mod copy;
mod descriptor;
mod device;
mod draw;
mod external;
mod external_sync;
mod external_texture;
#[cfg(feature = "fault-injection")]
pub mod fault;
pub(crate) mod features;
mod formats;
mod instance;
mod instance_shared;
mod memory;
mod object_name;
mod pass;
mod physical;
mod pipeline;
mod pipeline_cache;
mod pipeline_state;
mod query;
mod queue;
mod raw;
mod ray_tracing;
mod surface;
mod swapchain;
mod texture_checks;
mod validation;
mod workarounds;

use std::ptr::NonNull;
use std::sync::Arc;

use ash::vk;

use conv::map_err;

pub use acceleration::SAFE_SCRATCH_OFFSET_ALIGNMENT;
pub use adapter::Adapter;
pub use external_sync::ExternalSemaphore;
pub use instance::Instance;
pub use pipeline_cache::PipelineCache;
pub use validation::ValidationCounter;

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
    type BindGroupLayout = BindGroupLayout;
    type BindGroup = BindGroup;
    type PipelineLayout = PipelineLayout;
    type ShaderModule = ShaderModule;
    type RenderPipeline = RenderPipeline;
    type ComputePipeline = ComputePipeline;
    type Surface = Surface;
    type SurfaceTexture = SurfaceTexture;
    type AccelerationStructure = AccelerationStructure;
    type RayTracingPipeline = RayTracingPipeline;
    type PipelineCache = PipelineCache;
}

/// State shared by a device, its queue and its encoders. Destroyed (VMA
/// allocator, then `VkDevice`) when the last of them is dropped.
pub(crate) struct DeviceShared {
    /// The device's function table (wrapped by fault injection when that is on).
    pub(crate) raw: ash::Device,
    /// Keeps the instance alive while the device lives.
    pub(crate) instance: Arc<instance_shared::InstanceShared>,
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
    /// The Vulkan feature bits the device enabled (`features.rs`): what
    /// draws, samplers and pipelines may use.
    pub(crate) enabled: crate::features::vulkan_column::Bits,
    /// Format and image-format queries, asked of the driver once each.
    pub(crate) formats: formats::FormatCache,
    pub(crate) limits: wgt::Limits,
    pub(crate) timestamp_period: f32,
    pub(crate) counters: crate::HalCounters,
    /// What the adapter reported (properties, feature bits, extensions).
    pub(crate) physical: physical::PhysicalInfo,
    /// `VK_KHR_ray_tracing_pipeline` functions, when the device enabled it.
    pub(crate) ray_tracing: Option<ray_tracing::RayTracingFns>,
    /// Guards the one queue: `vkQueueSubmit2` and `vkDeviceWaitIdle` need
    /// it externally synchronised.
    pub(crate) queue_lock: parking_lot::Mutex<()>,
    /// External-memory and external-semaphore functions (`external.rs`).
    pub(crate) external: external::ExternalFns,
    /// Descriptor pools and sets for bind groups. Every layout is
    /// unregistered before the device goes (contract of `Device`).
    pub(crate) descriptors: descriptor::DescriptorAllocator,
    /// `VK_KHR_acceleration_structure` functions, when the device enabled it.
    pub(crate) accel: Option<acceleration::AccelerationFns>,
    /// `VK_EXT_mesh_shader` functions, when the device enabled it.
    pub(crate) mesh: Option<ash::ext::mesh_shader::Device>,
    /// The shared compacted-size query pools (`query.rs`).
    pub(crate) compaction_pools: parking_lot::Mutex<query::CompactionPools>,
    /// Set at the first `VK_ERROR_DEVICE_LOST`: from then on every fallible
    /// call returns `DeviceError::Lost` without reaching the driver
    /// (`crate::loss`).
    pub(crate) lost: crate::loss::LossLatch,
}

impl DeviceShared {
    /// Maps a failed Vulkan call's result like [`map_err`], latching the
    /// device lost on `VK_ERROR_DEVICE_LOST`.
    pub(crate) fn check(&self, result: vk::Result) -> crate::DeviceError {
        let error = map_err(result);
        if error == crate::DeviceError::Lost {
            self.lost.latch();
        }
        error
    }

    /// Runs a fallible entry point through the device's loss latch
    /// ([`crate::loss::LossLatch::guard`]).
    pub(crate) fn guard<T, E: crate::loss::LostError>(
        &self,
        call: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        self.physical.workarounds.enter_driver();
        self.lost.guard(call)
    }

    /// Called first by every destroy: after a loss, before the first
    /// destroy, waits once for the queue to go idle (a real
    /// `vkDeviceWaitIdle` under the queue lock; a lost device answers it at
    /// once, with `VK_ERROR_DEVICE_LOST`), so that nothing is destroyed
    /// while the driver still holds it for a pending submission
    /// (`crate::loss`). One load on a live device.
    #[inline(always)]
    pub(crate) fn retire_after_loss(&self) {
        self.lost.retire_once(|| {
            let _queue = self.queue_lock.lock();
            // SAFETY: live device; the queue lock is held. Its answer on a
            // lost device is `ERROR_DEVICE_LOST`, the work then being over.
            let waited = unsafe { self.raw.device_wait_idle() };
            log::warn!("lost device: retired its pending work before teardown ({waited:?})");
        });
    }
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
    /// The device address, once read (0: not yet; see
    /// `acceleration::buffer_address`). A buffer's address never changes.
    pub(crate) address: std::sync::atomic::AtomicU64,
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
    /// What bind groups check: dimension, the texture's sample count and
    /// the usages the view may serve.
    pub(crate) dimension: wgt::TextureViewDimension,
    pub(crate) sample_count: u32,
    pub(crate) usage: wgt::TextureUsages,
    /// What its texels read as in a shader (bind groups check it).
    pub(crate) sample_type: Option<wgt::TextureSampleType>,
    /// What it can be bound as (bind groups test it).
    pub(crate) key: crate::validate::binding::ViewKey,
}

/// A Vulkan sampler.
#[derive(Debug)]
pub struct Sampler {
    pub(crate) raw: vk::Sampler,
    /// Comparison or not, filtering or not (bind groups check them).
    pub(crate) facts: crate::validate::SamplerFacts,
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

/// A Vulkan descriptor set layout, registered with the device's descriptor
/// allocator. It keeps its entries for bind-group and pipeline checks.
#[derive(Debug)]
pub struct BindGroupLayout {
    pub(crate) raw: vk::DescriptorSetLayout,
    /// The entries, sorted by binding (shared with pipeline layouts).
    pub(crate) entries: Arc<[wgt::BindGroupLayoutEntry]>,
    /// What each entry accepts and how it is written, in the same order.
    pub(crate) slots: Box<[binding::LayoutSlot]>,
    /// Bindings with a dynamic offset (one offset each in `set_bind_group`).
    pub(crate) dynamic_count: u32,
    /// Created with `UPDATE_AFTER_BIND`: its binding arrays may be partially bound.
    pub(crate) update_after_bind: bool,
    /// Its groups are written from fixed stack lists, one descriptor per
    /// entry (see `bind_group.rs`).
    pub(crate) simple: bool,
    /// Its descriptor counts: the allocator's bucket for its sets.
    pub(crate) key: descriptor::BucketKey,
    /// Its registration with the descriptor allocator, made by its first
    /// bind group.
    pub(crate) token: descriptor::LazyToken,
}

/// A Vulkan descriptor set from the device's descriptor allocator.
#[derive(Debug)]
pub struct BindGroup {
    /// The allocation (its raw set is the group's), given back to the allocator on destroy.
    pub(crate) set: descriptor::DescriptorSet,
    /// Bindings with a dynamic offset (one offset each in `set_bind_group`).
    pub(crate) dynamic_count: u32,
}

/// A Vulkan pipeline layout, with what pipeline interface checks need.
#[derive(Debug)]
pub struct PipelineLayout {
    pub(crate) raw: vk::PipelineLayout,
    /// Each bind group layout's entries, by group index.
    pub(crate) groups: Box<[Arc<[wgt::BindGroupLayoutEntry]>]>,
    /// The push-constant ranges, as given.
    pub(crate) push_constant_ranges: Box<[crate::PushConstantRange]>,
}

/// A shader module: validated naga IR, or SPIR-V that passed the
/// structural check. No Vulkan object stands behind it: each pipeline
/// translates the entry points it uses and makes a `VkShaderModule` that
/// lives only while the pipeline is created (see `pipeline.rs`).
#[derive(Debug)]
pub struct ShaderModule {
    pub(crate) input: crate::shader::ShaderInput<'static>,
}

/// A Vulkan graphics pipeline.
#[derive(Debug)]
pub struct RenderPipeline {
    pub(crate) raw: vk::Pipeline,
    /// Its view mask (0: none): passes it is set in must have the same.
    pub(crate) view_mask: u32,
    /// Where its geometry comes from: a mesh pipeline (task and mesh
    /// stages) is drawn only with the `draw_mesh_tasks` commands, any other
    /// only with the vertex draws.
    pub(crate) geometry: crate::validate::draw::Geometry,
}

/// A Vulkan compute pipeline.
#[derive(Debug)]
pub struct ComputePipeline {
    pub(crate) raw: vk::Pipeline,
}

/// A Vulkan ray-tracing pipeline, with the kind of each of its shader
/// groups (what a shader binding table may put where).
#[derive(Debug)]
pub struct RayTracingPipeline {
    pub(crate) raw: vk::Pipeline,
    /// Each group's kind, by group index.
    pub(crate) groups: Box<[ray_tracing::GroupKind]>,
}

/// A Vulkan acceleration structure and its storage.
#[derive(Debug)]
pub struct AccelerationStructure {
    pub(crate) raw: vk::AccelerationStructureKHR,
    pub(crate) kind: crate::AccelerationStructureKind,
    /// Size in bytes, as created.
    pub(crate) size: u64,
    /// Its own buffer, or a range of the caller's.
    pub(crate) storage: acceleration::Storage,
    /// Device address, read on first use (0: not read yet).
    pub(crate) address: std::sync::atomic::AtomicU64,
    /// `wgt::AccelerationStructureFlags` bits of the last build or copy
    /// recorded into it (0 before the first), for the update and compaction
    /// checks of later recordings.
    pub(crate) built_flags: std::sync::atomic::AtomicU8,
}

/// Records into command buffers from one `VkCommandPool`.
pub struct CommandEncoder {
    pub(crate) device: Arc<DeviceShared>,
    /// A copy of the device's function table, so recording a command loads
    /// its function pointer from the encoder itself (one indirection fewer
    /// than through the `Arc`; it shows in per-draw cost).
    pub(crate) fns: ash::Device,
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
    /// Compacted-size query slots used by the command buffers recorded since
    /// the last `reset_all`; given back to the device's pools by `reset_all`
    /// and on destruction.
    pub(crate) compaction_slots: Vec<query::SlotRange>,
}

impl std::fmt::Debug for CommandEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandEncoder")
            .field("pool", &self.pool)
            .field("active", &self.active)
            .field("free", &self.free.len())
            .field("allocated", &self.allocated.len())
            .finish_non_exhaustive()
    }
}

/// A finished recording.
#[derive(Debug)]
pub struct CommandBuffer {
    pub(crate) raw: vk::CommandBuffer,
    /// The pool (so the encoder) it came from.
    pub(crate) pool: vk::CommandPool,
}

/// A window's presentation surface (`VkSurfaceKHR`) and, once configured,
/// its swapchain.
#[derive(Debug)]
pub struct Surface {
    pub(crate) raw: vk::SurfaceKHR,
    /// Keeps the instance (and its surface functions) alive.
    pub(crate) instance: Arc<instance_shared::InstanceShared>,
    /// The swapchain; its lock also serialises acquire and present.
    pub(crate) swapchain: parking_lot::Mutex<Option<swapchain::Swapchain>>,
}

/// A swapchain image acquired from a [`Surface`], with the semaphores that
/// order its acquire, the submits writing it, and its presentation.
#[derive(Debug)]
pub struct SurfaceTexture {
    /// The image as a hal texture; the swapchain owns it (never destroy it).
    pub(crate) texture: Texture,
    pub(crate) sync: swapchain::ImageSync,
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
    BindGroupLayout => vk::DescriptorSetLayout,
    PipelineLayout => vk::PipelineLayout,
    RenderPipeline => vk::Pipeline,
    ComputePipeline => vk::Pipeline,
    RayTracingPipeline => vk::Pipeline,
    CommandBuffer => vk::CommandBuffer,
    Queue => vk::Queue,
    AccelerationStructure => vk::AccelerationStructureKHR,
);

impl BindGroup {
    /// The raw Vulkan handle. The hal still owns it: do not destroy it.
    pub fn raw(&self) -> vk::DescriptorSet {
        self.set.raw()
    }
}

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

impl Texture {
    /// What the shared checks need to know of it.
    pub(crate) fn facts(&self) -> crate::validate::TextureFacts<'_> {
        crate::validate::TextureFacts {
            format: self.format,
            dimension: self.dimension,
            size: self.size,
            mip_level_count: self.mip_level_count,
            sample_count: self.sample_count,
            usage: self.usage,
            view_formats: &self.view_formats,
        }
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
    BindGroupLayout: DynBindGroupLayout,
    BindGroup: DynBindGroup,
    PipelineLayout: DynPipelineLayout,
    ShaderModule: DynShaderModule,
    RenderPipeline: DynRenderPipeline,
    ComputePipeline: DynComputePipeline,
    RayTracingPipeline: DynRayTracingPipeline,
    PipelineCache: DynPipelineCache,
    CommandBuffer: DynCommandBuffer,
    ExternalSemaphore: DynExternalSemaphore,
    SurfaceTexture: DynSurfaceTexture,
    AccelerationStructure: DynAccelerationStructure,
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
    send_sync::<Surface>();
    send_sync::<SurfaceTexture>();
    send_sync::<BindGroupLayout>();
    send_sync::<BindGroup>();
    send_sync::<PipelineLayout>();
    send_sync::<ShaderModule>();
    send_sync::<RenderPipeline>();
    send_sync::<ComputePipeline>();
    send_sync::<AccelerationStructure>();
    send_sync::<RayTracingPipeline>();
};
