//! The noop backend: the whole trait set on the CPU.
//!
//! It executes no shaders (it reports no [`crate::HalFeatures::SHADER_EXECUTION`]):
//! pipeline creation returns [`crate::PipelineError::NoShaderExecution`]
//! unless the device was opened with
//! [`crate::DeviceDescriptor::allow_no_shader_execution`] set, for callers
//! that only need pipelines to exist (their dispatches and draws then do
//! nothing). Everything else is real: buffers and textures hold bytes in host
//! memory, copies, clears and queries run on the CPU when a command buffer
//! is submitted, fences are signalled at submit, mapping works, and an
//! instance-wide memory budget makes out-of-memory testable. It is what CI
//! and upper-layer tests run on where there is no GPU.
//!
//! It is also the smallest complete backend, and the one to read before
//! writing another. Its files in the order a reader needs them: `mod.rs`
//! (the `Api` type set and the resource structs), `instance.rs` (the one
//! adapter, device open), `memory.rs` (host bytes and the budget),
//! `device.rs` (creation and destruction), `command.rs` (recording, and
//! executing at submit), `queue.rs` (submission and fences); the rest, one
//! concept a file, in `ARCHITECTURE.md`'s map.
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

mod acceleration;
#[cfg(test)]
mod acceleration_tests;
mod binding;
mod clear;
mod command;
mod device;
mod external;
mod instance;
mod memory;
mod pass;
mod pipeline;
mod queue;
mod shm;
mod surface;
#[cfg(test)]
mod tests;
mod texel;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

pub use acceleration::SCRATCH_ALIGNMENT;
pub use command::{CommandBuffer, CommandEncoder};
pub use external::{ExternalSemaphore, WAIT_TIMEOUT};
pub use instance::{Adapter, Instance, ADAPTER_NAME, API_VERSION};
pub use queue::{Fence, Queue};
pub use surface::{Surface, SurfaceTexture};

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

/// State shared by a device and its queue.
#[derive(Debug)]
pub(crate) struct DeviceShared {
    /// This device's account of the instance's memory budget (a child of
    /// the budget all its devices share): its `used` is the device's live bytes.
    pub(crate) budget: Arc<Budget>,
    /// Features the device was opened with.
    pub(crate) features: wgt::Features,
    /// keel-hal capabilities the device was opened with (they gate
    /// acceleration structures and external memory).
    pub(crate) hal_features: crate::HalFeatures,
    /// Limits the device enforces (the requested ones, or the adapter's).
    pub(crate) limits: wgt::Limits,
    /// Live-object counters.
    pub(crate) counters: crate::HalCounters,
    /// Source of timestamp query values.
    pub(crate) clock: queue::Clock,
    /// Held while a submission executes, so submissions run one at a time
    /// and `wait_idle` can wait for one in flight.
    pub(crate) submit_lock: parking_lot::Mutex<()>,
    /// The next fake device address handed to an acceleration structure.
    pub(crate) next_address: AtomicU64,
    /// Whether the device was opened with
    /// `DeviceDescriptor::allow_no_shader_execution` (pipelines may exist).
    pub(crate) allow_no_shader_execution: bool,
    /// Set when a call reports the device lost (an external-semaphore wait
    /// that times out, see `external.rs`): from then on every fallible call
    /// returns `DeviceError::Lost` (`crate::loss`).
    pub(crate) lost: crate::loss::LossLatch,
}

/// A noop logical device.
#[derive(Debug)]
pub struct Device {
    pub(crate) shared: Arc<DeviceShared>,
}

/// A buffer: real bytes in host memory, in every memory kind (external
/// memory with a shared file beside them, see `external.rs`). Only
/// `Memory::Upload` and `Memory::Readback` buffers may be mapped.
#[derive(Debug)]
pub struct Buffer {
    /// The bytes, shared with recorded commands that use them.
    pub(crate) bytes: Arc<HostBytes>,
    pub(crate) memory: crate::Memory,
    /// What the buffer may be used for (bind groups check it).
    pub(crate) usage: wgt::BufferUsages,
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
    /// `Memory::Device`, or external memory.
    pub(crate) memory: crate::Memory,
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

    /// What the shared checks need to know of it.
    pub(crate) fn facts(&self) -> crate::validate::TextureFacts<'_> {
        let layout = &self.layout;
        crate::validate::TextureFacts {
            format: layout.format,
            dimension: layout.dimension,
            size: layout.size,
            mip_level_count: layout.mip_level_count,
            sample_count: layout.sample_count,
            usage: self.usage,
            view_formats: &self.view_formats,
        }
    }
}

/// A view of a texture: the resolved format, dimension and subresource
/// range, and the texture's bytes and layout (render passes clear
/// attachments through their views).
#[derive(Debug)]
pub struct TextureView {
    /// The texture's bytes, shared with it.
    pub(crate) bytes: Arc<HostBytes>,
    /// The texture's storage layout.
    pub(crate) layout: texel::TexelLayout,
    pub(crate) format: wgt::TextureFormat,
    pub(crate) dimension: wgt::TextureViewDimension,
    /// With `mip_level_count` and `array_layer_count` resolved to `Some`.
    pub(crate) range: wgt::ImageSubresourceRange,
    /// The texture's usages (bind groups check them).
    pub(crate) usage: wgt::TextureUsages,
    /// What its texels read as in a shader (bind groups check it).
    pub(crate) sample_type: Option<wgt::TextureSampleType>,
    /// What it can be bound as (bind groups test it).
    pub(crate) key: crate::validate::binding::ViewKey,
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
/// descriptor passed its checks, and its kind.
#[derive(Debug)]
pub struct Sampler {
    /// Comparison or not, filtering or not (bind groups check them).
    pub(crate) facts: crate::validate::SamplerFacts,
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

    /// The query type (noop has no pipeline-statistics sets).
    pub fn ty(&self) -> wgt::QueryType {
        match self.kind {
            command::QueryKind::Occlusion => wgt::QueryType::Occlusion,
            command::QueryKind::Timestamp => wgt::QueryType::Timestamp,
        }
    }
}

/// A bind group layout: its entries, sorted by binding.
#[derive(Debug)]
pub struct BindGroupLayout {
    /// The entries, sorted by binding (shared with pipeline layouts).
    pub(crate) entries: Arc<[wgt::BindGroupLayoutEntry]>,
    /// What each entry accepts, in the same order (bind groups check it).
    pub(crate) slots: Box<[crate::validate::binding::Slot]>,
    /// Bindings with a dynamic offset (one offset each in `set_bind_group`).
    pub(crate) dynamic_count: u32,
    /// Created with `UPDATE_AFTER_BIND`: its arrays may be partially bound.
    pub(crate) update_after_bind: bool,
}

impl BindGroupLayout {
    /// The entries, sorted by binding.
    pub fn entries(&self) -> &[wgt::BindGroupLayoutEntry] {
        &self.entries
    }
}

/// A bind group. The noop backend runs no shaders, so a group keeps only
/// what `set_bind_group` checks: its dynamic bindings.
#[derive(Debug)]
pub struct BindGroup {
    /// For each binding with a dynamic offset, in binding order: the end of
    /// its range at offset 0 and its buffer's size.
    pub(crate) dynamic: Vec<binding::DynamicRange>,
}

/// A pipeline layout: its bind group layouts' entries and push-constant ranges.
#[derive(Debug)]
pub struct PipelineLayout {
    /// Each bind group layout's entries, by group index.
    pub(crate) groups: Box<[Arc<[wgt::BindGroupLayoutEntry]>]>,
    /// The push-constant ranges, as given.
    pub(crate) push_constant_ranges: Box<[crate::PushConstantRange]>,
}

/// A shader module: the front end's validated naga IR, or checked SPIR-V.
#[derive(Debug)]
pub struct ShaderModule {
    pub(crate) input: crate::shader::ShaderInput<'static>,
}

/// A render pipeline. The noop backend draws nothing; the pipeline records
/// that its descriptor and shader interface passed their checks.
#[derive(Debug)]
pub struct RenderPipeline {
    /// Where its geometry comes from (which draws it may be used with).
    pub(crate) geometry: crate::validate::draw::Geometry,
}

/// A pipeline cache. Noop compiles nothing, so a cache holds nothing: its
/// data is keel-hal's header with no bytes after it, checked like any
/// backend's (`validate/pipeline_cache.rs`).
#[derive(Debug)]
pub struct PipelineCache {
    _private: (),
}

/// The noop adapter's pipeline-cache validation key.
pub(crate) const PIPELINE_CACHE_KEY: [u8; 16] = *b"keel-hal noop\x00\x00\x01";

/// A compute pipeline. The noop backend dispatches nothing; the pipeline
/// records that its descriptor and shader interface passed their checks.
#[derive(Debug)]
pub struct ComputePipeline {
    _private: (),
}

/// An acceleration structure. Noop traces no rays, so a structure is its
/// bookkeeping: its kind and size, its storage (host bytes it owns, charged
/// to the memory budget, or a range of a caller's buffer), a fake device
/// address unique on its device, and the state builds and copies update.
#[derive(Debug)]
pub struct AccelerationStructure {
    pub(crate) kind: crate::AccelerationStructureKind,
    pub(crate) size: u64,
    pub(crate) storage: acceleration::Storage,
    pub(crate) address: u64,
    /// Shared with recorded builds and copies that write it.
    pub(crate) state: Arc<acceleration::BuildState>,
}

impl AccelerationStructure {
    /// Bottom or top level.
    pub fn kind(&self) -> crate::AccelerationStructureKind {
        self.kind
    }

    /// Size in bytes, as created.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Whether it lives in a caller's buffer rather than its own storage.
    pub fn is_placed(&self) -> bool {
        matches!(self.storage, acceleration::Storage::Placed { .. })
    }

    /// Whether a build or copy into it has executed (at submit).
    pub fn is_built(&self) -> bool {
        self.state.is_built()
    }

    /// The flags of the last build recorded into it (copies pass their
    /// source's on), or `None` before any.
    pub fn last_build_flags(&self) -> Option<wgt::AccelerationStructureFlags> {
        self.state.recorded_flags()
    }
}

/// A ray-tracing pipeline: noop has no `RAY_TRACING_PIPELINE` capability,
/// so none is ever created (`create_ray_tracing_pipeline` returns
/// `PipelineError::Unsupported`) and this type has no values.
#[derive(Debug)]
pub enum RayTracingPipeline {}

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
    BindGroupLayout: DynBindGroupLayout,
    BindGroup: DynBindGroup,
    PipelineLayout: DynPipelineLayout,
    ShaderModule: DynShaderModule,
    RenderPipeline: DynRenderPipeline,
    ComputePipeline: DynComputePipeline,
    SurfaceTexture: DynSurfaceTexture,
    AccelerationStructure: DynAccelerationStructure,
    RayTracingPipeline: DynRayTracingPipeline,
    PipelineCache: DynPipelineCache,
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
    send_sync::<BindGroupLayout>();
    send_sync::<BindGroup>();
    send_sync::<PipelineLayout>();
    send_sync::<ShaderModule>();
    send_sync::<RenderPipeline>();
    send_sync::<ComputePipeline>();
    send_sync::<Surface>();
    send_sync::<SurfaceTexture>();
    send_sync::<AccelerationStructure>();
    send_sync::<RayTracingPipeline>();
    send_sync::<PipelineCache>();
};
