//! [`DynApi`]: the dyn mirror seen as one more backend.
//!
//! Implementing [`crate::Api`] for boxed dyn objects means code written once,
//! generic over `A: Api`, runs on a statically chosen backend *and* on a
//! backend chosen at run time. The conformance suite uses this to run every
//! test through both paths.

use std::time::Duration;

use super::convert::{self, Unbox};
use super::{
    DynAccelerationStructure, DynAdapter, DynBindGroup, DynBindGroupLayout, DynBuffer,
    DynCommandBuffer, DynCommandEncoder, DynComputePipeline, DynDevice, DynFence, DynInstance,
    DynPipelineCache, DynPipelineLayout, DynQuerySet, DynQueue, DynRayTracingPipeline,
    DynRenderPipeline, DynSampler, DynShaderModule, DynSurface, DynTexture, DynTextureView,
    SurfaceTextureBox,
};
use super::{DynExternalSemaphore, DynExternalSubmission};
use crate::*;

/// The backend chosen at run time. `Instance::init` picks with
/// [`BackendChoice::Auto`]; wrap an instance from [`crate::instance`] to choose.
#[derive(Clone, Debug)]
pub struct DynApi;

impl Api for DynApi {
    type Instance = Box<dyn DynInstance>;
    type Adapter = Box<dyn DynAdapter>;
    type Device = Box<dyn DynDevice>;
    type Queue = Box<dyn DynQueue>;
    type CommandEncoder = Box<dyn DynCommandEncoder>;
    type CommandBuffer = Box<dyn DynCommandBuffer>;
    type Buffer = Box<dyn DynBuffer>;
    type Texture = Box<dyn DynTexture>;
    type TextureView = Box<dyn DynTextureView>;
    type Sampler = Box<dyn DynSampler>;
    type QuerySet = Box<dyn DynQuerySet>;
    type Fence = Box<dyn DynFence>;
    type ExternalSemaphore = Box<dyn DynExternalSemaphore>;
    type BindGroupLayout = Box<dyn DynBindGroupLayout>;
    type BindGroup = Box<dyn DynBindGroup>;
    type PipelineLayout = Box<dyn DynPipelineLayout>;
    type ShaderModule = Box<dyn DynShaderModule>;
    type RenderPipeline = Box<dyn DynRenderPipeline>;
    type ComputePipeline = Box<dyn DynComputePipeline>;
    type Surface = Box<dyn DynSurface>;
    type AccelerationStructure = Box<dyn DynAccelerationStructure>;
    type RayTracingPipeline = Box<dyn DynRayTracingPipeline>;
    type PipelineCache = Box<dyn DynPipelineCache>;
    type SurfaceTexture = SurfaceTextureBox;
}

impl DynBuffer for Box<dyn DynBuffer> {}
impl DynTexture for Box<dyn DynTexture> {}
impl DynTextureView for Box<dyn DynTextureView> {}
impl DynSampler for Box<dyn DynSampler> {}
impl DynQuerySet for Box<dyn DynQuerySet> {}
impl DynPipelineCache for Box<dyn DynPipelineCache> {}
impl DynFence for Box<dyn DynFence> {}
impl DynCommandBuffer for Box<dyn DynCommandBuffer> {}
impl DynExternalSemaphore for Box<dyn DynExternalSemaphore> {}
impl DynBindGroupLayout for Box<dyn DynBindGroupLayout> {}
impl DynBindGroup for Box<dyn DynBindGroup> {}
impl DynPipelineLayout for Box<dyn DynPipelineLayout> {}
impl DynShaderModule for Box<dyn DynShaderModule> {}
impl DynRenderPipeline for Box<dyn DynRenderPipeline> {}
impl DynComputePipeline for Box<dyn DynComputePipeline> {}
impl DynAccelerationStructure for Box<dyn DynAccelerationStructure> {}
impl DynRayTracingPipeline for Box<dyn DynRayTracingPipeline> {}

/// A conversion of `DynApi` boxes to the objects inside cannot meet a
/// foreign resource; only allocating its list can fail.
fn unboxed(e: convert::ConvertError) -> DeviceError {
    e.into()
}

impl Instance for Box<dyn DynInstance> {
    type A = DynApi;
    unsafe fn init(desc: &InstanceDescriptor) -> Result<Self, InstanceError> {
        Ok(crate::instance(BackendChoice::Auto, desc)?.instance)
    }
    fn backend(&self) -> Backend {
        DynInstance::backend(&**self)
    }
    unsafe fn enumerate_adapters(&self) -> Vec<ExposedAdapter<DynApi>> {
        // SAFETY: forwarded contract.
        unsafe { DynInstance::enumerate_adapters(&**self) }
            .into_iter()
            .map(|e| ExposedAdapter {
                adapter: e.adapter,
                info: e.info,
                capabilities: e.capabilities,
            })
            .collect()
    }
    fn validation_error_count(&self) -> u64 {
        DynInstance::validation_error_count(&**self)
    }
    unsafe fn create_surface(
        &self,
        display: raw_window_handle::RawDisplayHandle,
        window: raw_window_handle::RawWindowHandle,
    ) -> Result<Box<dyn DynSurface>, InstanceError> {
        // SAFETY: forwarded contract.
        unsafe { DynInstance::create_surface(&**self, display, window) }
    }
    unsafe fn destroy_surface(&self, surface: Box<dyn DynSurface>) {
        // SAFETY: forwarded contract.
        unsafe { DynInstance::destroy_surface(&**self, surface) }
    }
}

impl Adapter for Box<dyn DynAdapter> {
    type A = DynApi;
    unsafe fn open(&self, desc: &DeviceDescriptor) -> Result<OpenDevice<DynApi>, OpenError> {
        // SAFETY: forwarded contract.
        let open = unsafe { DynAdapter::open(&**self, desc) }?;
        Ok(OpenDevice {
            device: open.device,
            queue: open.queue,
        })
    }
    fn texture_format_capabilities(
        &self,
        format: wgt::TextureFormat,
    ) -> wgt::TextureFormatFeatures {
        DynAdapter::texture_format_capabilities(&**self, format)
    }
    fn external_buffer_capabilities(
        &self,
        desc: &BufferDescriptor,
        handle_type: ExternalHandleType,
    ) -> ExternalCapabilities {
        DynAdapter::external_buffer_capabilities(&**self, desc, handle_type)
    }
    fn external_texture_capabilities(
        &self,
        desc: &TextureDescriptor,
        handle_type: ExternalHandleType,
    ) -> Result<ExternalCapabilities, DeviceError> {
        DynAdapter::external_texture_capabilities(&**self, desc, handle_type)
    }
    fn external_semaphore_capabilities(
        &self,
        desc: &ExternalSemaphoreDescriptor,
    ) -> ExternalCapabilities {
        DynAdapter::external_semaphore_capabilities(&**self, desc)
    }
    fn drm_format_modifiers(&self, format: wgt::TextureFormat) -> Vec<DrmModifierInfo> {
        DynAdapter::drm_format_modifiers(&**self, format)
    }
    fn pipeline_cache_validation_key(&self) -> Option<[u8; 16]> {
        DynAdapter::pipeline_cache_validation_key(&**self)
    }
    unsafe fn surface_capabilities(
        &self,
        surface: &Box<dyn DynSurface>,
    ) -> Result<SurfaceCapabilities, SurfaceError> {
        // SAFETY: forwarded contract.
        unsafe { DynAdapter::surface_capabilities(&**self, &**surface) }
    }
}

// SAFETY (all methods below): each forwards to the boxed object's method,
// whose contract is the same as the one the caller promised here.
impl Device for Box<dyn DynDevice> {
    type A = DynApi;
    unsafe fn create_buffer(
        &self,
        desc: &BufferDescriptor,
    ) -> Result<Box<dyn DynBuffer>, BufferError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_buffer(&**self, desc) }
    }
    unsafe fn destroy_buffer(&self, buffer: Box<dyn DynBuffer>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_buffer(&**self, buffer) }
    }
    unsafe fn map_buffer(&self, buffer: &Box<dyn DynBuffer>) -> Result<BufferMapping, MapError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::map_buffer(&**self, &**buffer) }
    }
    unsafe fn unmap_buffer(&self, buffer: &Box<dyn DynBuffer>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::unmap_buffer(&**self, &**buffer) }
    }
    unsafe fn create_texture(
        &self,
        desc: &TextureDescriptor,
    ) -> Result<Box<dyn DynTexture>, TextureError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_texture(&**self, desc) }
    }
    unsafe fn destroy_texture(&self, texture: Box<dyn DynTexture>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_texture(&**self, texture) }
    }
    unsafe fn create_texture_view(
        &self,
        texture: &Box<dyn DynTexture>,
        desc: &TextureViewDescriptor,
    ) -> Result<Box<dyn DynTextureView>, TextureError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_texture_view(&**self, &**texture, desc) }
    }
    unsafe fn destroy_texture_view(&self, view: Box<dyn DynTextureView>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_texture_view(&**self, view) }
    }
    unsafe fn create_sampler(
        &self,
        desc: &SamplerDescriptor,
    ) -> Result<Box<dyn DynSampler>, SamplerError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_sampler(&**self, desc) }
    }
    unsafe fn destroy_sampler(&self, sampler: Box<dyn DynSampler>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_sampler(&**self, sampler) }
    }
    unsafe fn create_command_encoder(
        &self,
        desc: &CommandEncoderDescriptor,
    ) -> Result<Box<dyn DynCommandEncoder>, DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_command_encoder(&**self, desc) }
    }
    unsafe fn destroy_command_encoder(&self, encoder: Box<dyn DynCommandEncoder>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_command_encoder(&**self, encoder) }
    }
    unsafe fn create_query_set(
        &self,
        desc: &QuerySetDescriptor,
    ) -> Result<Box<dyn DynQuerySet>, QuerySetError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_query_set(&**self, desc) }
    }
    unsafe fn destroy_query_set(&self, set: Box<dyn DynQuerySet>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_query_set(&**self, set) }
    }
    unsafe fn create_pipeline_cache(
        &self,
        desc: &PipelineCacheDescriptor,
    ) -> Result<Box<dyn DynPipelineCache>, PipelineCacheError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_pipeline_cache(&**self, desc) }
    }
    unsafe fn pipeline_cache_get_data(
        &self,
        cache: &Box<dyn DynPipelineCache>,
    ) -> Result<Vec<u8>, DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::pipeline_cache_get_data(&**self, &**cache) }
    }
    unsafe fn destroy_pipeline_cache(&self, cache: Box<dyn DynPipelineCache>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_pipeline_cache(&**self, cache) }
    }
    unsafe fn create_fence(&self) -> Result<Box<dyn DynFence>, DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_fence(&**self) }
    }
    unsafe fn destroy_fence(&self, fence: Box<dyn DynFence>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_fence(&**self, fence) }
    }
    unsafe fn get_fence_value(&self, fence: &Box<dyn DynFence>) -> Result<FenceValue, DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::get_fence_value(&**self, &**fence) }
    }
    unsafe fn wait(
        &self,
        fence: &Box<dyn DynFence>,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::wait(&**self, &**fence, value, timeout) }
    }
    unsafe fn wait_idle(&self) -> Result<(), DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::wait_idle(&**self) }
    }
    unsafe fn create_bind_group_layout(
        &self,
        desc: &BindGroupLayoutDescriptor,
    ) -> Result<Box<dyn DynBindGroupLayout>, BindingError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_bind_group_layout(&**self, desc) }
    }
    unsafe fn destroy_bind_group_layout(&self, layout: Box<dyn DynBindGroupLayout>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_bind_group_layout(&**self, layout) }
    }
    unsafe fn create_bind_group(
        &self,
        desc: &BindGroupDescriptor<DynApi>,
    ) -> Result<Box<dyn DynBindGroup>, BindingError> {
        let device = &**self;
        // SAFETY: forwarded contract.
        convert::bind_group(desc, &Unbox, |d| unsafe {
            DynDevice::create_bind_group(device, d)
        })
        .map_err(|e| BindingError::Device(unboxed(e)))?
    }
    unsafe fn destroy_bind_group(&self, group: Box<dyn DynBindGroup>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_bind_group(&**self, group) }
    }
    unsafe fn create_pipeline_layout(
        &self,
        desc: &PipelineLayoutDescriptor<DynApi>,
    ) -> Result<Box<dyn DynPipelineLayout>, BindingError> {
        let device = &**self;
        // SAFETY: forwarded contract.
        convert::pipeline_layout(desc, &Unbox, |d| unsafe {
            DynDevice::create_pipeline_layout(device, d)
        })
        .map_err(|e| BindingError::Device(unboxed(e)))?
    }
    unsafe fn destroy_pipeline_layout(&self, layout: Box<dyn DynPipelineLayout>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_pipeline_layout(&**self, layout) }
    }
    unsafe fn create_shader_module(
        &self,
        desc: &ShaderModuleDescriptor,
    ) -> Result<Box<dyn DynShaderModule>, ShaderError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_shader_module(&**self, desc) }
    }
    unsafe fn destroy_shader_module(&self, module: Box<dyn DynShaderModule>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_shader_module(&**self, module) }
    }
    unsafe fn create_render_pipeline(
        &self,
        desc: &RenderPipelineDescriptor<DynApi>,
    ) -> Result<Box<dyn DynRenderPipeline>, PipelineError> {
        let d = convert::render_pipeline(desc, &Unbox)
            .map_err(|e| PipelineError::Device(unboxed(e)))?;
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_render_pipeline(&**self, &d) }
    }
    unsafe fn create_mesh_pipeline(
        &self,
        desc: &MeshPipelineDescriptor<DynApi>,
    ) -> Result<Box<dyn DynRenderPipeline>, PipelineError> {
        let d =
            convert::mesh_pipeline(desc, &Unbox).map_err(|e| PipelineError::Device(unboxed(e)))?;
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_mesh_pipeline(&**self, &d) }
    }
    unsafe fn destroy_render_pipeline(&self, pipeline: Box<dyn DynRenderPipeline>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_render_pipeline(&**self, pipeline) }
    }
    unsafe fn create_compute_pipeline(
        &self,
        desc: &ComputePipelineDescriptor<DynApi>,
    ) -> Result<Box<dyn DynComputePipeline>, PipelineError> {
        let d = convert::compute_pipeline(desc, &Unbox)
            .map_err(|e| PipelineError::Device(unboxed(e)))?;
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_compute_pipeline(&**self, &d) }
    }
    unsafe fn destroy_compute_pipeline(&self, pipeline: Box<dyn DynComputePipeline>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_compute_pipeline(&**self, pipeline) }
    }
    unsafe fn get_acceleration_structure_build_sizes(
        &self,
        desc: &GetAccelerationStructureBuildSizesDescriptor<DynApi>,
    ) -> Result<AccelerationStructureBuildSizes, AccelerationStructureError> {
        let device = &**self;
        convert::build_sizes(desc, &Unbox, |d| {
            // SAFETY: forwarded contract.
            unsafe { DynDevice::get_acceleration_structure_build_sizes(device, d) }
        })
        .map_err(|e| AccelerationStructureError::Device(unboxed(e)))?
    }
    unsafe fn create_acceleration_structure(
        &self,
        desc: &AccelerationStructureDescriptor<DynApi>,
    ) -> Result<Box<dyn DynAccelerationStructure>, AccelerationStructureError> {
        let d = convert::acceleration_structure(desc, &Unbox)
            .map_err(|e| AccelerationStructureError::Device(unboxed(e)))?;
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_acceleration_structure(&**self, &d) }
    }
    unsafe fn destroy_acceleration_structure(&self, structure: Box<dyn DynAccelerationStructure>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_acceleration_structure(&**self, structure) }
    }
    unsafe fn get_acceleration_structure_device_address(
        &self,
        structure: &Box<dyn DynAccelerationStructure>,
    ) -> u64 {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::get_acceleration_structure_device_address(&**self, &**structure) }
    }
    unsafe fn get_acceleration_structure_size(
        &self,
        structure: &Box<dyn DynAccelerationStructure>,
    ) -> u64 {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::get_acceleration_structure_size(&**self, &**structure) }
    }
    unsafe fn create_ray_tracing_pipeline(
        &self,
        desc: &RayTracingPipelineDescriptor<DynApi>,
    ) -> Result<Box<dyn DynRayTracingPipeline>, PipelineError> {
        let device = &**self;
        convert::ray_tracing_pipeline(desc, &Unbox, |d| {
            // SAFETY: forwarded contract.
            unsafe { DynDevice::create_ray_tracing_pipeline(device, d) }
        })
        .map_err(|e| PipelineError::Device(unboxed(e)))?
    }
    unsafe fn destroy_ray_tracing_pipeline(&self, pipeline: Box<dyn DynRayTracingPipeline>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_ray_tracing_pipeline(&**self, pipeline) }
    }
    unsafe fn create_shader_binding_table(
        &self,
        pipeline: &Box<dyn DynRayTracingPipeline>,
        desc: &ShaderBindingTableDescriptor,
    ) -> Result<ShaderBindingTable<Box<dyn DynBuffer>>, PipelineError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_shader_binding_table(&**self, &**pipeline, desc) }
    }
    unsafe fn destroy_shader_binding_table(&self, table: ShaderBindingTable<Box<dyn DynBuffer>>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_shader_binding_table(&**self, table) }
    }
    fn live_counts(&self) -> LiveCounts {
        DynDevice::live_counts(&**self)
    }
    fn shader_capabilities(&self) -> naga::valid::Capabilities {
        DynDevice::shader_capabilities(&**self)
    }
    fn memory_report(&self) -> crate::MemoryReport {
        DynDevice::memory_report(&**self)
    }
    unsafe fn buffer_placement(
        &self,
        buffer: &Box<dyn DynBuffer>,
    ) -> Option<crate::MemoryPlacement> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::buffer_placement(&**self, &**buffer) }
    }
    unsafe fn texture_placement(
        &self,
        texture: &Box<dyn DynTexture>,
    ) -> Option<crate::MemoryPlacement> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::texture_placement(&**self, &**texture) }
    }
    fn trim_memory(&self) -> u64 {
        DynDevice::trim_memory(&**self)
    }
    fn set_memory_retention(&self, limit_bytes: u64) {
        DynDevice::set_memory_retention(&**self, limit_bytes)
    }
    fn is_lost(&self) -> bool {
        DynDevice::is_lost(&**self)
    }
    unsafe fn import_buffer(
        &self,
        desc: &BufferDescriptor,
        handle: ExternalHandle,
    ) -> Result<Box<dyn DynBuffer>, BufferError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::import_buffer(&**self, desc, handle) }
    }
    unsafe fn import_texture(
        &self,
        desc: &TextureDescriptor,
        handle: ExternalHandle,
    ) -> Result<Box<dyn DynTexture>, TextureError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::import_texture(&**self, desc, handle) }
    }
    unsafe fn export_buffer_memory(
        &self,
        buffer: &Box<dyn DynBuffer>,
        handle_type: ExternalHandleType,
    ) -> Result<ExportedMemory, ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::export_buffer_memory(&**self, &**buffer, handle_type) }
    }
    unsafe fn export_texture_memory(
        &self,
        texture: &Box<dyn DynTexture>,
        handle_type: ExternalHandleType,
    ) -> Result<ExportedMemory, ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::export_texture_memory(&**self, &**texture, handle_type) }
    }
    unsafe fn create_external_semaphore(
        &self,
        desc: &ExternalSemaphoreDescriptor,
    ) -> Result<Box<dyn DynExternalSemaphore>, ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_external_semaphore(&**self, desc) }
    }
    unsafe fn import_semaphore(
        &self,
        desc: &ExternalSemaphoreDescriptor,
        fd: std::os::fd::OwnedFd,
    ) -> Result<Box<dyn DynExternalSemaphore>, ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::import_semaphore(&**self, desc, fd) }
    }
    unsafe fn export_semaphore(
        &self,
        semaphore: &Box<dyn DynExternalSemaphore>,
    ) -> Result<std::os::fd::OwnedFd, ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::export_semaphore(&**self, &**semaphore) }
    }
    unsafe fn destroy_external_semaphore(&self, semaphore: Box<dyn DynExternalSemaphore>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_external_semaphore(&**self, semaphore) }
    }
    unsafe fn semaphore_value(
        &self,
        semaphore: &Box<dyn DynExternalSemaphore>,
    ) -> Result<FenceValue, ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::semaphore_value(&**self, &**semaphore) }
    }
    unsafe fn signal_semaphore(
        &self,
        semaphore: &Box<dyn DynExternalSemaphore>,
        value: FenceValue,
    ) -> Result<(), ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::signal_semaphore(&**self, &**semaphore, value) }
    }
    unsafe fn wait_semaphore(
        &self,
        semaphore: &Box<dyn DynExternalSemaphore>,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::wait_semaphore(&**self, &**semaphore, value, timeout) }
    }
}

impl Queue for Box<dyn DynQueue> {
    type A = DynApi;
    unsafe fn submit(
        &self,
        command_buffers: &[&Box<dyn DynCommandBuffer>],
        surface_textures: &[&SurfaceTextureBox],
        fence: &Box<dyn DynFence>,
        value: FenceValue,
    ) -> Result<(), DeviceError> {
        let queue = &**self;
        super::map_inline(
            command_buffers,
            |cb| Some::<&dyn DynCommandBuffer>(&***cb),
            // SAFETY: forwarded contract.
            |buffers| unsafe {
                DynQueue::submit(queue, buffers, surface_textures, &**fence, value)
            },
        )
        // The mapping above never fails, so this fallback is never taken.
        .unwrap_or(Err(DeviceError::ForeignResource))
    }
    unsafe fn present(
        &self,
        surface: &Box<dyn DynSurface>,
        texture: SurfaceTextureBox,
    ) -> Result<(), SurfaceError> {
        // SAFETY: forwarded contract.
        unsafe { DynQueue::present(&**self, &**surface, texture) }
    }
    fn timestamp_period(&self) -> f32 {
        DynQueue::timestamp_period(&**self)
    }
    unsafe fn submit_external(
        &self,
        submission: &ExternalSubmissionOf<'_, DynApi>,
    ) -> Result<(), DeviceError> {
        let queue = &**self;
        let fence = submission.fence.map(|(f, v)| (&**f as &dyn DynFence, v));
        super::map_inline(
            submission.command_buffers,
            |cb| Some::<&dyn DynCommandBuffer>(&***cb),
            |command_buffers| {
                super::map_inline(
                    submission.waits,
                    |w| {
                        Some(SemaphoreWait::<'_, dyn DynExternalSemaphore> {
                            semaphore: &**w.semaphore,
                            value: w.value,
                            stages: w.stages,
                        })
                    },
                    |waits| {
                        super::map_inline(
                            submission.signals,
                            |s| {
                                Some(SemaphoreSignal::<'_, dyn DynExternalSemaphore> {
                                    semaphore: &**s.semaphore,
                                    value: s.value,
                                    stages: s.stages,
                                })
                            },
                            |signals| {
                                let own: DynExternalSubmission<'_> = ExternalSubmission {
                                    command_buffers,
                                    waits,
                                    signals,
                                    fence,
                                };
                                // SAFETY: forwarded contract.
                                unsafe { DynQueue::submit_external(queue, &own) }
                            },
                        )
                    },
                )
            },
        )
        .flatten()
        .flatten()
        // The mappings above never fail, so this fallback is never taken.
        .unwrap_or(Err(DeviceError::ForeignResource))
    }
}

impl Surface for Box<dyn DynSurface> {
    type A = DynApi;
    unsafe fn configure(
        &self,
        device: &Box<dyn DynDevice>,
        config: &SurfaceConfiguration,
    ) -> Result<(), SurfaceError> {
        // SAFETY: forwarded contract.
        unsafe { DynSurface::configure(&**self, &**device, config) }
    }
    unsafe fn unconfigure(&self, device: &Box<dyn DynDevice>) {
        // SAFETY: forwarded contract.
        unsafe { DynSurface::unconfigure(&**self, &**device) }
    }
    unsafe fn acquire_texture(
        &self,
        timeout: Option<Duration>,
    ) -> Result<AcquiredSurfaceTexture<SurfaceTextureBox>, SurfaceError> {
        // SAFETY: forwarded contract.
        unsafe { DynSurface::acquire_texture(&**self, timeout) }
    }
    unsafe fn discard_texture(&self, texture: SurfaceTextureBox) {
        // SAFETY: forwarded contract.
        unsafe { DynSurface::discard_texture(&**self, texture) }
    }
}
