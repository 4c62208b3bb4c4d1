//! # keel-hal
//!
//! A thin, `unsafe` GPU backend abstraction layer in the style of wgpu-hal.
//! It sits beneath a higher-level API that owns validation of the API
//! contract (lifetimes, usage states, synchronisation between passes);
//! keel-hal owns everything below that and adds no hidden per-call work.
//!
//! Backends: `vulkan` (ash + VMA, feature `vulkan`, on by default) and
//! [`noop`] (CPU-backed, always built: real buffer bytes, copies executed at
//! submit, a configurable memory budget).
//!
//! ## Safety model
//!
//! * Methods whose misuse the hal cannot detect cheaply are `unsafe fn`; each
//!   documents its contract under `# Safety`. The recurring rules are:
//!   every object passed to a device came from that device and is still
//!   alive; an object is destroyed only after the GPU is done with it (its
//!   last submission's fence has been waited on); usage states given to
//!   barriers are the ones the resource is really in.
//! * What is cheap to check (a descriptor's own fields against the limits,
//!   mapping of unmappable memory, …) is checked and returns a typed error.
//!   Library code never panics on bad input or driver errors: driver
//!   failures become [`DeviceError`], unrecoverable ones [`DeviceError::Lost`].
//! * Every object is destroyed explicitly by the device that made it
//!   (`destroy_*`); nothing is destroyed on `Drop` except the [`Instance`]
//!   and the device/queue pair, which go when the last of them is dropped.
//!   Destroy every resource before dropping its device.
//! * Every resource type is `Send + Sync`.
//!
//! ## Initial states
//!
//! A new buffer is in `BufferUses::empty()` (no prior access); a new texture
//! is in [`TextureUses::UNINITIALIZED`]. Mapped buffers (`Memory::Upload`,
//! `Memory::Readback`) are persistently mapped and coherent.
//!
//! ## Moving bytes between the CPU and the GPU
//!
//! One rule, written once under [`BufferMapping#host-visibility`]: what the
//! CPU writes through a mapping before a submit is visible to that
//! submission, with no barrier; for the CPU to read what the GPU wrote, the
//! command buffer ends with a barrier to [`BufferUses::MAP_READ`] and the
//! CPU waits for the submission's fence before reading.
//!
//! ## A first copy, through the dyn path
//!
//! (`examples/first_dispatch.rs` is the compute counterpart, on the static
//! Vulkan types.)
//!
//! ```
//! use keel_hal::{
//!     BackendChoice, BufferBarrier, BufferCopy, BufferDescriptor, BufferUses as U,
//!     CommandEncoderDescriptor, DeviceDescriptor, InstanceDescriptor, Memory, wgt,
//! };
//! // The dyn traits: an upper layer that picks its backend at run time uses these.
//! use keel_hal::{DynAdapter as _, DynCommandEncoder as _, DynDevice as _, DynInstance as _, DynQueue as _};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let chosen = keel_hal::instance(BackendChoice::Noop, &InstanceDescriptor::default())?;
//! // SAFETY: the adapter comes from this instance; everything created below is
//! // destroyed before the device is dropped, after the GPU is done with it.
//! unsafe {
//!     let adapter = chosen.instance.enumerate_adapters().remove(0);
//!     let open = adapter.adapter.open(&DeviceDescriptor::default())?;
//!     let (device, queue) = (open.device, open.queue);
//!     let src = device.create_buffer(&BufferDescriptor::new(16, wgt::BufferUsages::COPY_SRC, Memory::Upload))?;
//!     let usage = wgt::BufferUsages::COPY_DST | wgt::BufferUsages::MAP_READ;
//!     let dst = device.create_buffer(&BufferDescriptor::new(16, usage, Memory::Readback))?;
//!     // The CPU writes `src`; the submit makes the bytes visible to the GPU.
//!     device.map_buffer(src.as_ref())?.write_slice(0, &[7u8; 16])?;
//!
//!     let mut encoder = device.create_command_encoder(&CommandEncoderDescriptor::default())?;
//!     encoder.begin_encoding(Some("copy"))?;
//!     encoder.transition_buffers(&[
//!         BufferBarrier::new(src.as_ref(), U::empty(), U::COPY_SRC),
//!         BufferBarrier::new(dst.as_ref(), U::empty(), U::COPY_DST),
//!     ]);
//!     encoder.copy_buffer_to_buffer(src.as_ref(), dst.as_ref(),
//!         &[BufferCopy { src_offset: 0, dst_offset: 0, size: 16 }]);
//!     // For the CPU to read what the GPU wrote: a barrier to MAP_READ ...
//!     encoder.transition_buffers(&[BufferBarrier::new(dst.as_ref(), U::COPY_DST, U::MAP_READ)]);
//!     let commands = encoder.end_encoding()?;
//!     let fence = device.create_fence()?;
//!     queue.submit(&[commands.as_ref()], &[], fence.as_ref(), 1)?;
//!     // ... then the fence wait.
//!     assert!(device.wait(fence.as_ref(), 1, None)?);
//!     assert_eq!(device.map_buffer(dst.as_ref())?.read_vec::<u8>(0, 16)?, [7; 16]);
//!
//!     encoder.reset_all(&mut [commands].into_iter());
//!     device.destroy_command_encoder(encoder);
//!     device.destroy_fence(fence);
//!     device.destroy_buffer(src);
//!     device.destroy_buffer(dst);
//! }
//! # Ok(()) }
//! ```

#![warn(missing_docs)]
#![warn(unsafe_op_in_unsafe_fn)]

/// The `bytemuck` whose `Pod` bounds what mapped memory is read as and
/// written from ([`BufferMapping::write_slice`]), re-exported so callers
/// derive it from the same version.
pub use bytemuck;
/// The naga keel-hal takes modules from and reports shader capabilities in
/// ([`Device::shader_capabilities`]), re-exported so callers use the same
/// version.
pub use naga;
pub use wgt;

mod acceleration;
mod adapter;
mod binding;
pub mod compaction;
mod counters;
pub mod dynamic;
mod encoder;
mod error;
mod external;
mod features;
pub mod layout;
mod loss;
mod memory;
pub mod noop;
mod pass;
mod pipeline;
pub mod refusal;
mod resource;
// Used by the backends' shader modules.
#[cfg_attr(not(test), allow(dead_code))]
mod shader;
mod surface;
mod validate;
#[cfg(feature = "vulkan")]
pub mod vulkan;

pub use acceleration::*;
pub use adapter::*;
pub use binding::*;
pub use counters::{Counter, HalCounters, LiveCounts};
pub use dynamic::DynExternalSemaphore;
pub use dynamic::{instance, BackendChoice, ChosenInstance, DynApi};
pub use dynamic::{
    DynAccelerationStructure, DynAdapter, DynBindGroup, DynBindGroupLayout, DynBuffer,
    DynCommandBuffer, DynCommandEncoder, DynComputePipeline, DynDevice, DynExposedAdapter,
    DynFence, DynInstance, DynOpenDevice, DynPipelineCache, DynPipelineLayout, DynQuerySet,
    DynQueue, DynRayTracingPipeline, DynRenderPipeline, DynResource, DynResources, DynSampler,
    DynShaderModule, DynSurface, DynSurfaceTexture, DynTexture, DynTextureView,
};
pub use encoder::CommandEncoder;
pub use error::*;
pub use external::*;
pub use memory::{Memory, MemoryHeapReport, MemoryPlacement, MemoryReport, MemoryTypeReport};
pub use pass::*;
pub use pipeline::*;
pub use resource::*;
pub use surface::*;

use std::time::Duration;

/// A backend: the set of types that make it up.
///
/// Which backend an object belongs to is a run-time property (the dyn path,
/// [`DynApi`], carries any backend): ask the instance, [`Instance::backend`].
pub trait Api: Clone + std::fmt::Debug + Sized + Send + Sync + 'static {
    /// Entry point; owns the driver connection.
    type Instance: Instance<A = Self>;
    /// A physical device.
    type Adapter: Adapter<A = Self>;
    /// A logical device.
    type Device: Device<A = Self>;
    /// The device's queue.
    type Queue: Queue<A = Self>;
    /// Records commands.
    type CommandEncoder: CommandEncoder<A = Self>;
    /// A finished recording, ready to submit.
    type CommandBuffer: DynCommandBuffer;
    /// A buffer.
    type Buffer: DynBuffer;
    /// A texture.
    type Texture: DynTexture;
    /// A view of a texture.
    type TextureView: DynTextureView;
    /// A sampler.
    type Sampler: DynSampler;
    /// A set of queries.
    type QuerySet: DynQuerySet;
    /// A fence: a monotonically increasing counter the GPU signals.
    type Fence: DynFence;
    /// A semaphore shared with another API or process (see [`ExternalSemaphoreType`]).
    type ExternalSemaphore: DynExternalSemaphore;
    /// The layout of a bind group.
    type BindGroupLayout: DynBindGroupLayout;
    /// A set of resource bindings.
    type BindGroup: DynBindGroup;
    /// Bind group layouts and push constants of a pipeline.
    type PipelineLayout: DynPipelineLayout;
    /// A validated, translated shader module.
    type ShaderModule: DynShaderModule;
    /// A graphics pipeline.
    type RenderPipeline: DynRenderPipeline;
    /// A compute pipeline.
    type ComputePipeline: DynComputePipeline;
    /// A pipeline cache (`PIPELINE_CACHE`).
    type PipelineCache: DynPipelineCache;
    /// A presentation surface.
    type Surface: Surface<A = Self> + DynSurface;
    /// A bottom- or top-level acceleration structure.
    type AccelerationStructure: DynAccelerationStructure;
    /// A ray-tracing pipeline.
    type RayTracingPipeline: DynRayTracingPipeline;
    /// A texture acquired from a surface.
    type SurfaceTexture: DynSurfaceTexture + std::borrow::Borrow<Self::Texture>;
}

/// The resource types a descriptor can name: an [`Api`]'s own types, or the
/// dyn path's trait objects ([`DynResources`]). Descriptors that point at
/// resources are generic over this, so one struct serves both paths.
pub trait Resources {
    /// Buffer type.
    type Buffer: ?Sized + std::fmt::Debug;
    /// Texture type.
    type Texture: ?Sized + std::fmt::Debug;
    /// Texture view type.
    type TextureView: ?Sized + std::fmt::Debug;
    /// Sampler type.
    type Sampler: ?Sized + std::fmt::Debug;
    /// Query set type.
    type QuerySet: ?Sized + std::fmt::Debug;
    /// Bind group layout type.
    type BindGroupLayout: ?Sized + std::fmt::Debug;
    /// Pipeline layout type.
    type PipelineLayout: ?Sized + std::fmt::Debug;
    /// Shader module type.
    type ShaderModule: ?Sized + std::fmt::Debug;
    /// Acceleration structure type.
    type AccelerationStructure: ?Sized + std::fmt::Debug;
    /// Pipeline cache type.
    type PipelineCache: ?Sized + std::fmt::Debug;
}

impl<A: Api> Resources for A {
    type Buffer = A::Buffer;
    type Texture = A::Texture;
    type TextureView = A::TextureView;
    type Sampler = A::Sampler;
    type QuerySet = A::QuerySet;
    type BindGroupLayout = A::BindGroupLayout;
    type PipelineLayout = A::PipelineLayout;
    type ShaderModule = A::ShaderModule;
    type AccelerationStructure = A::AccelerationStructure;
    type PipelineCache = A::PipelineCache;
}

/// The [`ExternalSubmission`] of an [`Api`]'s own types.
pub type ExternalSubmissionOf<'a, A> = ExternalSubmission<
    'a,
    <A as Api>::CommandBuffer,
    <A as Api>::ExternalSemaphore,
    <A as Api>::Fence,
>;

/// Entry point of a backend.
pub trait Instance: Sized + Send + Sync + std::fmt::Debug + 'static {
    /// The backend.
    type A: Api<Instance = Self>;

    /// Connects to the backend's driver.
    ///
    /// # Safety
    /// The backend's runtime library, if loaded, must be a conforming
    /// implementation (for Vulkan: a real Vulkan loader).
    unsafe fn init(desc: &InstanceDescriptor) -> Result<Self, InstanceError>;

    /// Which backend this instance drives. For [`DynApi`] this is the backend
    /// chosen at run time, never a fixed tag.
    fn backend(&self) -> Backend;

    /// Lists the adapters this instance can open, best first. Adapters below
    /// keel-hal's baseline are logged with their version and left out.
    ///
    /// # Safety
    /// None beyond a live instance; `unsafe` because drivers are entered.
    unsafe fn enumerate_adapters(&self) -> Vec<ExposedAdapter<Self::A>>;

    /// Validation errors reported so far (Vulkan: by the debug messenger;
    /// noop: always 0). Tests read this to fail on any validation error.
    fn validation_error_count(&self) -> u64;

    /// Creates a surface for a window.
    ///
    /// # Safety
    /// The handles are valid and stay valid until the surface is destroyed.
    unsafe fn create_surface(
        &self,
        display: raw_window_handle::RawDisplayHandle,
        window: raw_window_handle::RawWindowHandle,
    ) -> Result<<Self::A as Api>::Surface, InstanceError>;
    /// Destroys a surface.
    ///
    /// # Safety
    /// The surface came from this instance and is unconfigured.
    unsafe fn destroy_surface(&self, surface: <Self::A as Api>::Surface);
}

/// A physical device.
pub trait Adapter: Send + Sync + std::fmt::Debug + 'static {
    /// The backend.
    type A: Api<Adapter = Self>;

    /// Opens a device with the requested features and limits.
    ///
    /// # Safety
    /// The instance this adapter came from must outlive nothing it owns;
    /// keel-hal keeps it alive internally, so the only rule is: do not open
    /// the same adapter from two threads at once.
    unsafe fn open(&self, desc: &DeviceDescriptor) -> Result<OpenDevice<Self::A>, OpenError>;

    /// What a texture format supports on this adapter.
    fn texture_format_capabilities(&self, format: wgt::TextureFormat)
        -> wgt::TextureFormatFeatures;

    /// Identifies the adapter and driver whose pipeline-cache data fits
    /// this adapter (Vulkan: `pipelineCacheUUID`): data made under another
    /// key is refused. `None` where the adapter has no `PIPELINE_CACHE`.
    fn pipeline_cache_validation_key(&self) -> Option<[u8; 16]>;

    // External memory and semaphores (src/external.rs).

    /// Whether buffers like `desc` (its usage; size and memory are ignored)
    /// can be exported as or imported from `handle_type`.
    fn external_buffer_capabilities(
        &self,
        desc: &BufferDescriptor,
        handle_type: ExternalHandleType,
    ) -> ExternalCapabilities;
    /// Whether textures like `desc` (format, dimension, usage, view formats,
    /// extent against the limits) can be exported as or imported from
    /// `handle_type`. Dma-buf answers are for the linear layout; per-modifier
    /// support is in [`Adapter::drm_format_modifiers`].
    fn external_texture_capabilities(
        &self,
        desc: &TextureDescriptor,
        handle_type: ExternalHandleType,
    ) -> Result<ExternalCapabilities, DeviceError>;
    /// Whether semaphores of this type and kind can be exported and imported.
    fn external_semaphore_capabilities(
        &self,
        desc: &ExternalSemaphoreDescriptor,
    ) -> ExternalCapabilities;
    /// The DRM format modifiers `format` supports; empty without
    /// [`HalFeatures::DRM_FORMAT_MODIFIER`].
    fn drm_format_modifiers(&self, format: wgt::TextureFormat) -> Vec<DrmModifierInfo>;

    /// What `surface` supports on this adapter; `SurfaceError::Unsupported`
    /// when the adapter cannot present to it.
    ///
    /// # Safety
    /// The surface came from the instance this adapter came from.
    unsafe fn surface_capabilities(
        &self,
        surface: &<Self::A as Api>::Surface,
    ) -> Result<SurfaceCapabilities, SurfaceError>;
}

/// A logical device: creates and destroys resources.
///
/// Every `destroy_*` takes the object by value; the caller must have waited
/// for the GPU to finish with it, and must destroy everything before
/// dropping the device.
pub trait Device: Send + Sync + std::fmt::Debug + 'static {
    /// The backend.
    type A: Api<Device = Self>;

    /// Creates a buffer. Its initial state is `BufferUses::empty()`; its
    /// bytes are undefined until written.
    ///
    /// # Safety
    /// None beyond a live device.
    unsafe fn create_buffer(
        &self,
        desc: &BufferDescriptor,
    ) -> Result<<Self::A as Api>::Buffer, BufferError>;
    /// Destroys a buffer.
    ///
    /// # Safety
    /// The buffer came from this device, and no pending GPU work uses it.
    unsafe fn destroy_buffer(&self, buffer: <Self::A as Api>::Buffer);
    /// Returns the CPU view of a mappable buffer (`Memory::Upload` or
    /// `Memory::Readback`). Mappings are persistent: mapping twice returns the
    /// same pointer, and `unmap_buffer` is optional.
    ///
    /// # Safety
    /// The buffer came from this device. The caller must not access bytes
    /// through the pointer while pending GPU work writes them (or, for
    /// writes, reads them), nor after the buffer is destroyed. Reading what
    /// the GPU wrote follows the [host-visibility rule](BufferMapping#host-visibility).
    unsafe fn map_buffer(
        &self,
        buffer: &<Self::A as Api>::Buffer,
    ) -> Result<BufferMapping, MapError>;
    /// Ends the CPU's use of a mapping. A no-op for persistent mappings,
    /// kept so callers can state intent.
    ///
    /// # Safety
    /// The buffer came from this device; pointers from `map_buffer` are not
    /// used afterwards.
    unsafe fn unmap_buffer(&self, buffer: &<Self::A as Api>::Buffer);

    /// Creates a texture, in state [`TextureUses::UNINITIALIZED`].
    ///
    /// # Safety
    /// None beyond a live device.
    unsafe fn create_texture(
        &self,
        desc: &TextureDescriptor,
    ) -> Result<<Self::A as Api>::Texture, TextureError>;
    /// Destroys a texture.
    ///
    /// # Safety
    /// Came from this device; no pending GPU work uses it; its views were destroyed.
    unsafe fn destroy_texture(&self, texture: <Self::A as Api>::Texture);
    /// Creates a view of a texture.
    ///
    /// # Safety
    /// The texture came from this device and outlives the view.
    unsafe fn create_texture_view(
        &self,
        texture: &<Self::A as Api>::Texture,
        desc: &TextureViewDescriptor,
    ) -> Result<<Self::A as Api>::TextureView, TextureError>;
    /// Destroys a texture view.
    ///
    /// # Safety
    /// Came from this device; no pending GPU work uses it.
    unsafe fn destroy_texture_view(&self, view: <Self::A as Api>::TextureView);
    /// Creates a sampler.
    ///
    /// # Safety
    /// None beyond a live device.
    unsafe fn create_sampler(
        &self,
        desc: &SamplerDescriptor,
    ) -> Result<<Self::A as Api>::Sampler, SamplerError>;
    /// Destroys a sampler.
    ///
    /// # Safety
    /// Came from this device; no pending GPU work uses it.
    unsafe fn destroy_sampler(&self, sampler: <Self::A as Api>::Sampler);

    /// Creates a command encoder for this device's queue.
    ///
    /// # Safety
    /// None beyond a live device.
    unsafe fn create_command_encoder(
        &self,
        desc: &CommandEncoderDescriptor,
    ) -> Result<<Self::A as Api>::CommandEncoder, DeviceError>;
    /// Destroys a command encoder and every command buffer it produced.
    ///
    /// # Safety
    /// Came from this device; none of its command buffers is pending on the
    /// GPU or used afterwards.
    unsafe fn destroy_command_encoder(&self, encoder: <Self::A as Api>::CommandEncoder);

    /// Creates a query set. Queries start unavailable: reset them in a
    /// command buffer before first use.
    ///
    /// # Safety
    /// None beyond a live device.
    unsafe fn create_query_set(
        &self,
        desc: &QuerySetDescriptor,
    ) -> Result<<Self::A as Api>::QuerySet, QuerySetError>;
    /// Destroys a query set.
    ///
    /// # Safety
    /// Came from this device; no pending GPU work uses it.
    unsafe fn destroy_query_set(&self, set: <Self::A as Api>::QuerySet);

    /// Creates a fence with value 0.
    ///
    /// # Safety
    /// None beyond a live device.
    unsafe fn create_fence(&self) -> Result<<Self::A as Api>::Fence, DeviceError>;
    /// Destroys a fence.
    ///
    /// # Safety
    /// Came from this device; no pending submission signals it.
    unsafe fn destroy_fence(&self, fence: <Self::A as Api>::Fence);
    /// The fence's current value.
    ///
    /// # Safety
    /// The fence came from this device.
    unsafe fn get_fence_value(
        &self,
        fence: &<Self::A as Api>::Fence,
    ) -> Result<FenceValue, DeviceError>;
    /// Waits until the fence reaches `value`. Returns `Ok(false)` on timeout;
    /// `None` waits without limit.
    ///
    /// # Safety
    /// The fence came from this device, and a submission that will signal
    /// `value` (or more) has been made or will be made by another thread.
    unsafe fn wait(
        &self,
        fence: &<Self::A as Api>::Fence,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, DeviceError>;
    /// Waits until the device is idle.
    ///
    /// # Safety
    /// None beyond a live device.
    unsafe fn wait_idle(&self) -> Result<(), DeviceError>;

    /// Creates a bind group layout.
    ///
    /// # Safety
    /// None beyond a live device.
    unsafe fn create_bind_group_layout(
        &self,
        desc: &BindGroupLayoutDescriptor,
    ) -> Result<<Self::A as Api>::BindGroupLayout, BindingError>;
    /// Destroys a bind group layout.
    ///
    /// # Safety
    /// Came from this device; its bind groups and the pipeline layouts using
    /// it were destroyed.
    unsafe fn destroy_bind_group_layout(&self, layout: <Self::A as Api>::BindGroupLayout);
    /// Creates a bind group. Entries are checked against the layout (every
    /// binding present, types match, buffer ranges inside their buffers).
    ///
    /// # Safety
    /// The layout and every resource came from this device and outlive the group.
    unsafe fn create_bind_group(
        &self,
        desc: &BindGroupDescriptor<Self::A>,
    ) -> Result<<Self::A as Api>::BindGroup, BindingError>;
    /// Destroys a bind group.
    ///
    /// # Safety
    /// Came from this device; no pending GPU work uses it.
    unsafe fn destroy_bind_group(&self, group: <Self::A as Api>::BindGroup);
    /// Creates a pipeline layout.
    ///
    /// # Safety
    /// The bind group layouts came from this device.
    unsafe fn create_pipeline_layout(
        &self,
        desc: &PipelineLayoutDescriptor<Self::A>,
    ) -> Result<<Self::A as Api>::PipelineLayout, BindingError>;
    /// Destroys a pipeline layout.
    ///
    /// # Safety
    /// Came from this device; pipelines using it were destroyed and no
    /// recording in progress uses it.
    unsafe fn destroy_pipeline_layout(&self, layout: <Self::A as Api>::PipelineLayout);
    /// Creates a shader module: WGSL and naga modules are validated with
    /// naga and translated; SPIR-V gets a structural check.
    ///
    /// # Safety
    /// None beyond a live device.
    unsafe fn create_shader_module(
        &self,
        desc: &ShaderModuleDescriptor,
    ) -> Result<<Self::A as Api>::ShaderModule, ShaderError>;
    /// Destroys a shader module (pipelines made from it stay valid).
    ///
    /// # Safety
    /// Came from this device.
    unsafe fn destroy_shader_module(&self, module: <Self::A as Api>::ShaderModule);
    /// Creates a render pipeline. For naga-based modules the shader
    /// interface is checked against the layout.
    ///
    /// # Safety
    /// The layout and modules came from this device.
    unsafe fn create_render_pipeline(
        &self,
        desc: &RenderPipelineDescriptor<Self::A>,
    ) -> Result<<Self::A as Api>::RenderPipeline, PipelineError>;
    /// Creates a mesh pipeline (`EXPERIMENTAL_MESH_SHADER`): a render
    /// pipeline whose geometry comes from task and mesh stages, drawn only
    /// with the `draw_mesh_tasks` commands. Destroyed as any render
    /// pipeline. For naga-based modules the shader interface is checked
    /// against the layout.
    ///
    /// # Errors
    /// [`PipelineError::MissingFeature`] on a device not opened with
    /// `EXPERIMENTAL_MESH_SHADER` (or, for a view mask, with
    /// `EXPERIMENTAL_MESH_SHADER_MULTIVIEW`); the render pipeline's errors
    /// otherwise.
    ///
    /// # Safety
    /// The layout and modules came from this device.
    unsafe fn create_mesh_pipeline(
        &self,
        desc: &MeshPipelineDescriptor<Self::A>,
    ) -> Result<<Self::A as Api>::RenderPipeline, PipelineError>;
    /// Destroys a render pipeline.
    ///
    /// # Safety
    /// Came from this device; no pending GPU work uses it.
    unsafe fn destroy_render_pipeline(&self, pipeline: <Self::A as Api>::RenderPipeline);
    /// Creates a compute pipeline. For naga-based modules the shader
    /// interface is checked against the layout.
    ///
    /// # Safety
    /// The layout and module came from this device.
    unsafe fn create_compute_pipeline(
        &self,
        desc: &ComputePipelineDescriptor<Self::A>,
    ) -> Result<<Self::A as Api>::ComputePipeline, PipelineError>;
    /// Destroys a compute pipeline.
    ///
    /// # Safety
    /// Came from this device; no pending GPU work uses it.
    unsafe fn destroy_compute_pipeline(&self, pipeline: <Self::A as Api>::ComputePipeline);

    // Pipeline caches (`PIPELINE_CACHE`; `pipeline_cache.rs` holds the data
    // format both backends share).

    /// Makes a pipeline cache, empty or from an earlier cache's data.
    ///
    /// # Errors
    /// [`PipelineCacheError::MissingFeature`] on a device not opened with
    /// `PIPELINE_CACHE`; [`PipelineCacheError::Invalid`] when `data` is not
    /// what [`Device::pipeline_cache_get_data`] gave on a device of this
    /// adapter and driver (damaged, truncated, another adapter or driver),
    /// unless `fallback` asks for an empty cache instead. Data is checked
    /// before the driver sees it.
    ///
    /// # Safety
    /// The device is live.
    unsafe fn create_pipeline_cache(
        &self,
        desc: &PipelineCacheDescriptor,
    ) -> Result<<Self::A as Api>::PipelineCache, PipelineCacheError>;
    /// What the cache holds, to store and give to a later
    /// [`Device::create_pipeline_cache`]: keel-hal's header (the adapter's
    /// [`Adapter::pipeline_cache_validation_key`], the length and a
    /// checksum) and the driver's data.
    ///
    /// # Safety
    /// The cache came from this device; no pipeline creation uses it meanwhile.
    unsafe fn pipeline_cache_get_data(
        &self,
        cache: &<Self::A as Api>::PipelineCache,
    ) -> Result<Vec<u8>, DeviceError>;
    /// Destroys a pipeline cache (pipelines made with it stay valid).
    ///
    /// # Safety
    /// Came from this device; no pipeline creation uses it.
    unsafe fn destroy_pipeline_cache(&self, cache: <Self::A as Api>::PipelineCache);

    // Acceleration structures and ray tracing (HalFeatures::ACCELERATION_STRUCTURE,
    // RAY_TRACING_PIPELINE; without them these return `Unsupported`).

    /// Sizes of a structure and its scratch buffers for the given geometry.
    ///
    /// # Safety
    /// Buffers named in the entries, if any, came from this device.
    unsafe fn get_acceleration_structure_build_sizes(
        &self,
        desc: &GetAccelerationStructureBuildSizesDescriptor<Self::A>,
    ) -> Result<AccelerationStructureBuildSizes, AccelerationStructureError>;
    /// Creates an acceleration structure (contents undefined until built; state
    /// `AccelerationStructureUses::empty()`).
    ///
    /// # Safety
    /// A placement buffer came from this device and outlives the structure.
    unsafe fn create_acceleration_structure(
        &self,
        desc: &AccelerationStructureDescriptor<Self::A>,
    ) -> Result<<Self::A as Api>::AccelerationStructure, AccelerationStructureError>;
    /// Destroys an acceleration structure (and its owned buffer).
    ///
    /// # Safety
    /// Came from this device; no pending GPU work uses it, and no TLAS that
    /// will still be traced or built references it.
    unsafe fn destroy_acceleration_structure(
        &self,
        structure: <Self::A as Api>::AccelerationStructure,
    );
    /// The structure's device address, for [`TlasInstance::blas_address`].
    ///
    /// # Safety
    /// Came from this device.
    unsafe fn get_acceleration_structure_device_address(
        &self,
        structure: &<Self::A as Api>::AccelerationStructure,
    ) -> u64;
    /// The structure's size in bytes, as created.
    ///
    /// # Safety
    /// Came from this device.
    unsafe fn get_acceleration_structure_size(
        &self,
        structure: &<Self::A as Api>::AccelerationStructure,
    ) -> u64;
    /// Creates a ray-tracing pipeline. For naga-based modules each stage's
    /// interface is checked against the layout.
    ///
    /// # Safety
    /// The layout and modules came from this device.
    unsafe fn create_ray_tracing_pipeline(
        &self,
        desc: &RayTracingPipelineDescriptor<Self::A>,
    ) -> Result<<Self::A as Api>::RayTracingPipeline, PipelineError>;
    /// Destroys a ray-tracing pipeline.
    ///
    /// # Safety
    /// Came from this device; no pending GPU work uses it.
    unsafe fn destroy_ray_tracing_pipeline(&self, pipeline: <Self::A as Api>::RayTracingPipeline);
    /// Builds a shader binding table for `pipeline`: fetches its group
    /// handles and lays them out with the adapter's handle size and
    /// alignments in a new buffer (state `BufferUses::empty()`, ready for
    /// `trace_rays` after the submit that uses it).
    ///
    /// # Safety
    /// The pipeline came from this device and outlives the table's use.
    unsafe fn create_shader_binding_table(
        &self,
        pipeline: &<Self::A as Api>::RayTracingPipeline,
        desc: &ShaderBindingTableDescriptor,
    ) -> Result<ShaderBindingTable<<Self::A as Api>::Buffer>, PipelineError>;
    /// Destroys a shader binding table.
    ///
    /// # Safety
    /// Came from this device; no pending GPU work uses it.
    unsafe fn destroy_shader_binding_table(
        &self,
        table: ShaderBindingTable<<Self::A as Api>::Buffer>,
    );

    /// Counts of live objects of this device.
    fn live_counts(&self) -> LiveCounts;

    /// The naga capabilities shader modules of this device may use: those
    /// of its enabled features, and of what the device itself supports
    /// (cube arrays, per-sample shading, `pack2x16float`, …). A module that
    /// needs more fails with [`ShaderError::MissingCapabilities`] naming
    /// what it lacks; ask here before creating one.
    fn shader_capabilities(&self) -> naga::valid::Capabilities;

    /// What the device's memory holds now: live, retained and reserved
    /// bytes, blocks, per memory type and heap, and the heap budgets where
    /// the driver reports them. See [`MemoryReport`].
    fn memory_report(&self) -> MemoryReport;

    /// Where `buffer`'s memory lies: its block and range, for an upper
    /// layer's allocator report (a query of the allocator, nothing kept per
    /// resource). `None` for memory the device does not allocate (a buffer
    /// wrapped from a raw handle).
    ///
    /// # Safety
    /// The buffer came from this device and is alive.
    unsafe fn buffer_placement(&self, buffer: &<Self::A as Api>::Buffer)
        -> Option<MemoryPlacement>;

    /// As [`Device::buffer_placement`], for a texture.
    ///
    /// # Safety
    /// The texture came from this device and is alive.
    unsafe fn texture_placement(
        &self,
        texture: &<Self::A as Api>::Texture,
    ) -> Option<MemoryPlacement>;

    /// Releases every piece of memory the device keeps for reuse and every
    /// block left empty by that, and the idle query pools it keeps for
    /// compacted-size reads; returns the memory bytes given back to the
    /// driver. Live resources are untouched. Call it after a burst that
    /// will not come back, or when the process is asked to use less memory.
    fn trim_memory(&self) -> u64;

    /// Sets the most bytes of destroyed buffers' memory the device keeps
    /// for the next buffers of the same description (see the backend's
    /// memory docs: `vulkan/memory.rs`); memory kept beyond a lower limit
    /// is released at once. `0` keeps nothing. The default is a quarter of
    /// the largest memory heap; noop keeps nothing whatever the limit.
    fn set_memory_retention(&self, limit_bytes: u64);

    /// Whether the device was lost. Once lost, a device stays lost: every
    /// later fallible call of it, its queue and its encoders returns
    /// [`DeviceError::Lost`] without reaching the driver, while every
    /// `destroy_*` still frees what it is given. Waits return `Lost` too,
    /// so the caller cannot see a pending submission end: the first destroy
    /// after the loss retires the driver's work itself (on Vulkan one
    /// `vkDeviceWaitIdle`, answered at once by a lost device), and objects
    /// used by submissions made before the loss may then be destroyed.
    /// Drop everything and open a new device.
    fn is_lost(&self) -> bool;

    // External memory and semaphores (src/external.rs). Export: create the
    // resource with `Memory::External(ExternalMemory::export(..))`.

    /// Imports a buffer of `desc.size` bytes from `handle` (`desc.memory` is
    /// ignored; the buffer reports `Memory::External(ExternalMemory::imported(..))`).
    /// The handle is consumed on success and on every error.
    ///
    /// # Safety
    /// `handle`'s memory holds at least `desc.size` bytes where the hal
    /// cannot check it (opaque fds whose size the kernel does not report).
    /// For [`ExternalHandle::HostPointer`], the memory stays allocated,
    /// mapped and otherwise untouched by the CPU while the GPU uses it,
    /// until the buffer is destroyed and the GPU is done with it.
    unsafe fn import_buffer(
        &self,
        desc: &BufferDescriptor,
        handle: ExternalHandle,
    ) -> Result<<Self::A as Api>::Buffer, BufferError>;
    /// Imports a texture described by `desc` from `handle` (`desc.memory`
    /// is ignored). Dma-bufs carry the layout (modifier and planes); opaque
    /// fds must come from a texture created with the same description on
    /// the same driver and physical device. Consumes the handle always.
    ///
    /// # Safety
    /// The memory holds a texture of this description in that layout;
    /// ownership is acquired before use ([`CommandEncoder::transfer_ownership`]).
    unsafe fn import_texture(
        &self,
        desc: &TextureDescriptor,
        handle: ExternalHandle,
    ) -> Result<<Self::A as Api>::Texture, TextureError>;
    /// Exports a buffer created with `Memory::External(ExternalMemory::export(handle_type))`:
    /// a new file descriptor per call, owned by the caller.
    ///
    /// # Safety
    /// The buffer came from this device and is alive.
    unsafe fn export_buffer_memory(
        &self,
        buffer: &<Self::A as Api>::Buffer,
        handle_type: ExternalHandleType,
    ) -> Result<ExportedMemory, ExternalError>;
    /// Exports a texture created for export as `handle_type`; dma-bufs come
    /// with their DRM format modifier and plane layouts.
    ///
    /// # Safety
    /// The texture came from this device and is alive.
    unsafe fn export_texture_memory(
        &self,
        texture: &<Self::A as Api>::Texture,
        handle_type: ExternalHandleType,
    ) -> Result<ExportedMemory, ExternalError>;
    /// Creates an exportable semaphore (binary: unsignalled; timeline: at
    /// its initial value).
    ///
    /// # Safety
    /// None beyond a live device.
    unsafe fn create_external_semaphore(
        &self,
        desc: &ExternalSemaphoreDescriptor,
    ) -> Result<<Self::A as Api>::ExternalSemaphore, ExternalError>;
    /// Imports a semaphore from `fd`, consumed on success and on every
    /// error. A sync fd is imported temporarily: it serves one wait.
    ///
    /// # Safety
    /// `fd` is a handle of `desc.handle_type` and `desc.kind`.
    unsafe fn import_semaphore(
        &self,
        desc: &ExternalSemaphoreDescriptor,
        fd: std::os::fd::OwnedFd,
    ) -> Result<<Self::A as Api>::ExternalSemaphore, ExternalError>;
    /// Exports a semaphore as its handle type: a new fd per call. A sync fd
    /// needs a signal submitted before, and unsignals the semaphore.
    ///
    /// # Safety
    /// The semaphore came from this device.
    unsafe fn export_semaphore(
        &self,
        semaphore: &<Self::A as Api>::ExternalSemaphore,
    ) -> Result<std::os::fd::OwnedFd, ExternalError>;
    /// Destroys an external semaphore.
    ///
    /// # Safety
    /// Came from this device; no pending submission waits on or signals it.
    unsafe fn destroy_external_semaphore(&self, semaphore: <Self::A as Api>::ExternalSemaphore);
    /// A timeline semaphore's current value, whoever signalled it (this
    /// device, another one, another API). A binary semaphore is
    /// [`ExternalError::NotTimeline`].
    ///
    /// # Safety
    /// The semaphore came from this device.
    unsafe fn semaphore_value(
        &self,
        semaphore: &<Self::A as Api>::ExternalSemaphore,
    ) -> Result<FenceValue, ExternalError>;
    /// Sets a timeline semaphore to `value` from the host, releasing every
    /// wait for `value` or less (on any device or API sharing it). `value`
    /// must be above the current value ([`ExternalError::ValueNotIncreasing`]
    /// otherwise); a binary semaphore is [`ExternalError::NotTimeline`].
    ///
    /// # Safety
    /// The semaphore came from this device; `value` is below the value of
    /// every signal pending on it (submitted, not yet executed).
    unsafe fn signal_semaphore(
        &self,
        semaphore: &<Self::A as Api>::ExternalSemaphore,
        value: FenceValue,
    ) -> Result<(), ExternalError>;
    /// Waits on the host until a timeline semaphore reaches `value`.
    /// Returns `Ok(false)` on timeout; `None` waits without limit. A binary
    /// semaphore is [`ExternalError::NotTimeline`].
    ///
    /// # Safety
    /// The semaphore came from this device. With no timeout, a signal of
    /// `value` (or more) has been made or will be made by someone.
    unsafe fn wait_semaphore(
        &self,
        semaphore: &<Self::A as Api>::ExternalSemaphore,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, ExternalError>;
}

/// A presentation surface.
pub trait Surface: Send + Sync + std::fmt::Debug + 'static {
    /// The backend.
    type A: Api<Surface = Self>;

    /// (Re)creates the swapchain. Textures acquired before must have been
    /// presented or discarded.
    ///
    /// # Safety
    /// The device came from an adapter that can present to this surface; no
    /// pending GPU work uses the surface's textures.
    unsafe fn configure(
        &self,
        device: &<Self::A as Api>::Device,
        config: &SurfaceConfiguration,
    ) -> Result<(), SurfaceError>;
    /// Drops the swapchain.
    ///
    /// # Safety
    /// As `configure`; the surface is configured with this device.
    unsafe fn unconfigure(&self, device: &<Self::A as Api>::Device);
    /// Acquires the next texture to render into, in state
    /// [`TextureUses::UNINITIALIZED`]. `None` timeout waits without limit.
    ///
    /// # Safety
    /// Configured; at most `maximum_frame_latency` textures are held at once.
    unsafe fn acquire_texture(
        &self,
        timeout: Option<Duration>,
    ) -> Result<AcquiredSurfaceTexture<<Self::A as Api>::SurfaceTexture>, SurfaceError>;
    /// Gives an acquired texture back without presenting it.
    ///
    /// # Safety
    /// The texture came from this surface and no pending GPU work uses it.
    unsafe fn discard_texture(&self, texture: <Self::A as Api>::SurfaceTexture);
}

/// The device's queue.
pub trait Queue: Send + Sync + std::fmt::Debug + 'static {
    /// The backend.
    type A: Api<Queue = Self>;

    /// Submits command buffers in order, then sets `fence` to `value` when
    /// they are all done. Surface textures written by the command buffers
    /// are listed in `surface_textures` (their acquire is waited on before,
    /// and their presentation ordered after).
    ///
    /// # Safety
    /// The command buffers and fence came from this queue's device; every
    /// resource they use stays alive until the fence reaches `value`;
    /// `value` is greater than any value the fence was signalled with before;
    /// a command buffer is not submitted again before its previous
    /// submission completed.
    unsafe fn submit(
        &self,
        command_buffers: &[&<Self::A as Api>::CommandBuffer],
        surface_textures: &[&<Self::A as Api>::SurfaceTexture],
        fence: &<Self::A as Api>::Fence,
        value: FenceValue,
    ) -> Result<(), DeviceError>;

    /// Presents a surface texture. It must be in [`TextureUses::PRESENT`]
    /// and have been named in the `surface_textures` of the submit that
    /// wrote it last.
    ///
    /// # Safety
    /// The surface is configured with this queue's device; the texture came
    /// from it.
    unsafe fn present(
        &self,
        surface: &<Self::A as Api>::Surface,
        texture: <Self::A as Api>::SurfaceTexture,
    ) -> Result<(), SurfaceError>;

    /// Nanoseconds per timestamp tick.
    fn timestamp_period(&self) -> f32;

    /// Submits command buffers that wait on and signal external semaphores,
    /// and optionally set a fence.
    ///
    /// It names no surface textures: command buffers that write a surface
    /// texture go through [`Queue::submit`], which orders them with the
    /// acquire and present. To present what external work produced, wait
    /// for it here (or on its fence) and record the copy or draw into the
    /// surface texture in a normal submit.
    ///
    /// # Safety
    /// As [`Queue::submit`]; every semaphore came from this queue's device;
    /// each binary wait has a signal submitted before it (here or by the
    /// other side) and no other wait; each timeline value signalled is
    /// greater than the semaphore's current value.
    unsafe fn submit_external(
        &self,
        submission: &ExternalSubmissionOf<'_, Self::A>,
    ) -> Result<(), DeviceError>;
}
