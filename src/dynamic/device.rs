//! `DynDevice` and `DynQueue`: the device and queue traits with boxed resources.

use std::any::Any;
use std::time::Duration;

use std::os::fd::OwnedFd;

use super::convert::{self, Downcast};
use super::encoder_impl::DynEncoder;
use super::shader_table;
use super::surface::{cast_surface_texture, cast_texture, take_surface_texture};
use super::{
    cast, cast_box, map_inline, DynAccelerationStructure, DynBindGroup, DynBindGroupLayout,
    DynBuffer, DynCommandBuffer, DynCommandEncoder, DynComputePipeline, DynFence, DynPipelineCache,
    DynPipelineLayout, DynQuerySet, DynRayTracingPipeline, DynRenderPipeline, DynResource,
    DynResources, DynSampler, DynShaderModule, DynSurface, DynTexture, DynTextureView,
    SurfaceTextureBox,
};
use super::{DynExternalSemaphore, DynExternalSubmission};
use crate::{
    AccelerationStructureBuildSizes, AccelerationStructureDescriptor, AccelerationStructureError,
    Api, BindGroupDescriptor, BindGroupLayoutDescriptor, BindingError, BufferDescriptor,
    BufferError, BufferMapping, CommandEncoderDescriptor, ComputePipelineDescriptor, Device,
    DeviceError, FenceValue, GetAccelerationStructureBuildSizesDescriptor, LiveCounts, MapError,
    MeshPipelineDescriptor, PipelineCacheDescriptor, PipelineCacheError, PipelineError,
    PipelineLayoutDescriptor, QuerySetDescriptor, QuerySetError, Queue,
    RayTracingPipelineDescriptor, RenderPipelineDescriptor, SamplerDescriptor, SamplerError,
    ShaderBindingTable, ShaderBindingTableDescriptor, ShaderError, ShaderModuleDescriptor,
    SurfaceError, TextureDescriptor, TextureError, TextureViewDescriptor,
};
use crate::{
    ExportedMemory, ExternalError, ExternalHandle, ExternalHandleType, ExternalSemaphoreDescriptor,
};

const FOREIGN: DeviceError = DeviceError::ForeignResource;

/// A device of some backend. Methods mirror [`crate::Device`]; see there for
/// each contract. Descriptors that name resources take the dyn objects
/// ([`DynResources`]); a resource of another backend fails the call with
/// the area's `Device(DeviceError::ForeignResource)`.
pub trait DynDevice: DynResource {
    /// See [`Device::create_buffer`].
    ///
    /// # Safety
    /// As [`Device::create_buffer`].
    unsafe fn create_buffer(
        &self,
        desc: &BufferDescriptor,
    ) -> Result<Box<dyn DynBuffer>, BufferError>;
    /// See [`Device::destroy_buffer`]. A foreign buffer is logged and leaked.
    ///
    /// # Safety
    /// As [`Device::destroy_buffer`].
    unsafe fn destroy_buffer(&self, buffer: Box<dyn DynBuffer>);
    /// See [`Device::map_buffer`].
    ///
    /// # Safety
    /// As [`Device::map_buffer`].
    unsafe fn map_buffer(&self, buffer: &dyn DynBuffer) -> Result<BufferMapping, MapError>;
    /// See [`Device::unmap_buffer`].
    ///
    /// # Safety
    /// As [`Device::unmap_buffer`].
    unsafe fn unmap_buffer(&self, buffer: &dyn DynBuffer);
    /// See [`Device::create_texture`].
    ///
    /// # Safety
    /// As [`Device::create_texture`].
    unsafe fn create_texture(
        &self,
        desc: &TextureDescriptor,
    ) -> Result<Box<dyn DynTexture>, TextureError>;
    /// See [`Device::destroy_texture`].
    ///
    /// # Safety
    /// As [`Device::destroy_texture`].
    unsafe fn destroy_texture(&self, texture: Box<dyn DynTexture>);
    /// See [`Device::create_texture_view`].
    ///
    /// # Safety
    /// As [`Device::create_texture_view`].
    unsafe fn create_texture_view(
        &self,
        texture: &dyn DynTexture,
        desc: &TextureViewDescriptor,
    ) -> Result<Box<dyn DynTextureView>, TextureError>;
    /// See [`Device::destroy_texture_view`].
    ///
    /// # Safety
    /// As [`Device::destroy_texture_view`].
    unsafe fn destroy_texture_view(&self, view: Box<dyn DynTextureView>);
    /// See [`Device::create_sampler`].
    ///
    /// # Safety
    /// As [`Device::create_sampler`].
    unsafe fn create_sampler(
        &self,
        desc: &SamplerDescriptor,
    ) -> Result<Box<dyn DynSampler>, SamplerError>;
    /// See [`Device::destroy_sampler`].
    ///
    /// # Safety
    /// As [`Device::destroy_sampler`].
    unsafe fn destroy_sampler(&self, sampler: Box<dyn DynSampler>);
    /// See [`Device::create_command_encoder`].
    ///
    /// # Safety
    /// As [`Device::create_command_encoder`].
    unsafe fn create_command_encoder(
        &self,
        desc: &CommandEncoderDescriptor,
    ) -> Result<Box<dyn DynCommandEncoder>, DeviceError>;
    /// See [`Device::destroy_command_encoder`].
    ///
    /// # Safety
    /// As [`Device::destroy_command_encoder`].
    unsafe fn destroy_command_encoder(&self, encoder: Box<dyn DynCommandEncoder>);
    /// See [`Device::create_query_set`].
    ///
    /// # Safety
    /// As [`Device::create_query_set`].
    unsafe fn create_query_set(
        &self,
        desc: &QuerySetDescriptor,
    ) -> Result<Box<dyn DynQuerySet>, QuerySetError>;
    /// See [`Device::destroy_query_set`].
    ///
    /// # Safety
    /// As [`Device::destroy_query_set`].
    unsafe fn destroy_query_set(&self, set: Box<dyn DynQuerySet>);
    /// See [`Device::create_pipeline_cache`].
    ///
    /// # Safety
    /// As [`Device::create_pipeline_cache`].
    unsafe fn create_pipeline_cache(
        &self,
        desc: &PipelineCacheDescriptor,
    ) -> Result<Box<dyn DynPipelineCache>, PipelineCacheError>;
    /// See [`Device::pipeline_cache_get_data`]; `ForeignResource` for a
    /// cache of another backend.
    ///
    /// # Safety
    /// As [`Device::pipeline_cache_get_data`].
    unsafe fn pipeline_cache_get_data(
        &self,
        cache: &dyn DynPipelineCache,
    ) -> Result<Vec<u8>, DeviceError>;
    /// See [`Device::destroy_pipeline_cache`].
    ///
    /// # Safety
    /// As [`Device::destroy_pipeline_cache`].
    unsafe fn destroy_pipeline_cache(&self, cache: Box<dyn DynPipelineCache>);
    /// See [`Device::create_fence`].
    ///
    /// # Safety
    /// As [`Device::create_fence`].
    unsafe fn create_fence(&self) -> Result<Box<dyn DynFence>, DeviceError>;
    /// See [`Device::destroy_fence`].
    ///
    /// # Safety
    /// As [`Device::destroy_fence`].
    unsafe fn destroy_fence(&self, fence: Box<dyn DynFence>);
    /// See [`Device::get_fence_value`].
    ///
    /// # Safety
    /// As [`Device::get_fence_value`].
    unsafe fn get_fence_value(&self, fence: &dyn DynFence) -> Result<FenceValue, DeviceError>;
    /// See [`Device::wait`].
    ///
    /// # Safety
    /// As [`Device::wait`].
    unsafe fn wait(
        &self,
        fence: &dyn DynFence,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, DeviceError>;
    /// See [`Device::wait_idle`].
    ///
    /// # Safety
    /// As [`Device::wait_idle`].
    unsafe fn wait_idle(&self) -> Result<(), DeviceError>;
    /// See [`Device::create_bind_group_layout`].
    ///
    /// # Safety
    /// As [`Device::create_bind_group_layout`].
    unsafe fn create_bind_group_layout(
        &self,
        desc: &BindGroupLayoutDescriptor,
    ) -> Result<Box<dyn DynBindGroupLayout>, BindingError>;
    /// See [`Device::destroy_bind_group_layout`].
    ///
    /// # Safety
    /// As [`Device::destroy_bind_group_layout`].
    unsafe fn destroy_bind_group_layout(&self, layout: Box<dyn DynBindGroupLayout>);
    /// See [`Device::create_bind_group`].
    ///
    /// # Safety
    /// As [`Device::create_bind_group`].
    unsafe fn create_bind_group(
        &self,
        desc: &BindGroupDescriptor<DynResources>,
    ) -> Result<Box<dyn DynBindGroup>, BindingError>;
    /// See [`Device::destroy_bind_group`].
    ///
    /// # Safety
    /// As [`Device::destroy_bind_group`].
    unsafe fn destroy_bind_group(&self, group: Box<dyn DynBindGroup>);
    /// See [`Device::create_pipeline_layout`].
    ///
    /// # Safety
    /// As [`Device::create_pipeline_layout`].
    unsafe fn create_pipeline_layout(
        &self,
        desc: &PipelineLayoutDescriptor<DynResources>,
    ) -> Result<Box<dyn DynPipelineLayout>, BindingError>;
    /// See [`Device::destroy_pipeline_layout`].
    ///
    /// # Safety
    /// As [`Device::destroy_pipeline_layout`].
    unsafe fn destroy_pipeline_layout(&self, layout: Box<dyn DynPipelineLayout>);
    /// See [`Device::create_shader_module`].
    ///
    /// # Safety
    /// As [`Device::create_shader_module`].
    unsafe fn create_shader_module(
        &self,
        desc: &ShaderModuleDescriptor,
    ) -> Result<Box<dyn DynShaderModule>, ShaderError>;
    /// See [`Device::destroy_shader_module`].
    ///
    /// # Safety
    /// As [`Device::destroy_shader_module`].
    unsafe fn destroy_shader_module(&self, module: Box<dyn DynShaderModule>);
    /// See [`Device::create_render_pipeline`].
    ///
    /// # Safety
    /// As [`Device::create_render_pipeline`].
    unsafe fn create_render_pipeline(
        &self,
        desc: &RenderPipelineDescriptor<DynResources>,
    ) -> Result<Box<dyn DynRenderPipeline>, PipelineError>;
    /// See [`Device::create_mesh_pipeline`].
    ///
    /// # Safety
    /// As [`Device::create_mesh_pipeline`].
    unsafe fn create_mesh_pipeline(
        &self,
        desc: &MeshPipelineDescriptor<DynResources>,
    ) -> Result<Box<dyn DynRenderPipeline>, PipelineError>;
    /// See [`Device::destroy_render_pipeline`].
    ///
    /// # Safety
    /// As [`Device::destroy_render_pipeline`].
    unsafe fn destroy_render_pipeline(&self, pipeline: Box<dyn DynRenderPipeline>);
    /// See [`Device::create_compute_pipeline`].
    ///
    /// # Safety
    /// As [`Device::create_compute_pipeline`].
    unsafe fn create_compute_pipeline(
        &self,
        desc: &ComputePipelineDescriptor<DynResources>,
    ) -> Result<Box<dyn DynComputePipeline>, PipelineError>;
    /// See [`Device::destroy_compute_pipeline`].
    ///
    /// # Safety
    /// As [`Device::destroy_compute_pipeline`].
    unsafe fn destroy_compute_pipeline(&self, pipeline: Box<dyn DynComputePipeline>);
    /// See [`Device::get_acceleration_structure_build_sizes`].
    ///
    /// # Safety
    /// As [`Device::get_acceleration_structure_build_sizes`].
    unsafe fn get_acceleration_structure_build_sizes(
        &self,
        desc: &GetAccelerationStructureBuildSizesDescriptor<DynResources>,
    ) -> Result<AccelerationStructureBuildSizes, AccelerationStructureError>;
    /// See [`Device::create_acceleration_structure`].
    ///
    /// # Safety
    /// As [`Device::create_acceleration_structure`].
    unsafe fn create_acceleration_structure(
        &self,
        desc: &AccelerationStructureDescriptor<DynResources>,
    ) -> Result<Box<dyn DynAccelerationStructure>, AccelerationStructureError>;
    /// See [`Device::destroy_acceleration_structure`]. A foreign structure
    /// is logged and leaked.
    ///
    /// # Safety
    /// As [`Device::destroy_acceleration_structure`].
    unsafe fn destroy_acceleration_structure(&self, structure: Box<dyn DynAccelerationStructure>);
    /// See [`Device::get_acceleration_structure_device_address`]. A foreign
    /// structure is logged and has address 0 (which no structure has).
    ///
    /// # Safety
    /// As [`Device::get_acceleration_structure_device_address`].
    unsafe fn get_acceleration_structure_device_address(
        &self,
        structure: &dyn DynAccelerationStructure,
    ) -> u64;
    /// See [`Device::get_acceleration_structure_size`]. A foreign structure
    /// is logged and has size 0.
    ///
    /// # Safety
    /// As [`Device::get_acceleration_structure_size`].
    unsafe fn get_acceleration_structure_size(
        &self,
        structure: &dyn DynAccelerationStructure,
    ) -> u64;
    /// See [`Device::create_ray_tracing_pipeline`].
    ///
    /// # Safety
    /// As [`Device::create_ray_tracing_pipeline`].
    unsafe fn create_ray_tracing_pipeline(
        &self,
        desc: &RayTracingPipelineDescriptor<DynResources>,
    ) -> Result<Box<dyn DynRayTracingPipeline>, PipelineError>;
    /// See [`Device::destroy_ray_tracing_pipeline`].
    ///
    /// # Safety
    /// As [`Device::destroy_ray_tracing_pipeline`].
    unsafe fn destroy_ray_tracing_pipeline(&self, pipeline: Box<dyn DynRayTracingPipeline>);
    /// See [`Device::create_shader_binding_table`]. The table's `buffer`
    /// holds the backend's table: it serves `trace_rays`,
    /// `map_buffer`/`unmap_buffer` and `destroy_shader_binding_table`, and
    /// any other call taking a buffer sees it as a foreign resource.
    /// `trace_rays` traces with the regions of the table it is given.
    ///
    /// # Safety
    /// As [`Device::create_shader_binding_table`].
    unsafe fn create_shader_binding_table(
        &self,
        pipeline: &dyn DynRayTracingPipeline,
        desc: &ShaderBindingTableDescriptor,
    ) -> Result<ShaderBindingTable<Box<dyn DynBuffer>>, PipelineError>;
    /// See [`Device::destroy_shader_binding_table`]. A table this device's
    /// `create_shader_binding_table` did not make is logged and leaked.
    ///
    /// # Safety
    /// As [`Device::destroy_shader_binding_table`].
    unsafe fn destroy_shader_binding_table(&self, table: ShaderBindingTable<Box<dyn DynBuffer>>);
    /// See [`Device::live_counts`].
    fn live_counts(&self) -> LiveCounts;
    /// See [`Device::shader_capabilities`].
    fn shader_capabilities(&self) -> naga::valid::Capabilities;
    /// See [`Device::memory_report`].
    fn memory_report(&self) -> crate::MemoryReport;
    /// See [`Device::buffer_placement`]; `None` for a buffer of another
    /// backend.
    ///
    /// # Safety
    /// As [`Device::buffer_placement`].
    unsafe fn buffer_placement(&self, buffer: &dyn DynBuffer) -> Option<crate::MemoryPlacement>;
    /// See [`Device::texture_placement`]; `None` for a texture of another
    /// backend.
    ///
    /// # Safety
    /// As [`Device::texture_placement`].
    unsafe fn texture_placement(&self, texture: &dyn DynTexture) -> Option<crate::MemoryPlacement>;
    /// See [`Device::trim_memory`].
    fn trim_memory(&self) -> u64;
    /// See [`Device::set_memory_retention`].
    fn set_memory_retention(&self, limit_bytes: u64);
    /// See [`Device::is_lost`].
    fn is_lost(&self) -> bool;
    /// See [`Device::import_buffer`].
    ///
    /// # Safety
    /// As [`Device::import_buffer`].
    unsafe fn import_buffer(
        &self,
        desc: &BufferDescriptor,
        handle: ExternalHandle,
    ) -> Result<Box<dyn DynBuffer>, BufferError>;
    /// See [`Device::import_texture`].
    ///
    /// # Safety
    /// As [`Device::import_texture`].
    unsafe fn import_texture(
        &self,
        desc: &TextureDescriptor,
        handle: ExternalHandle,
    ) -> Result<Box<dyn DynTexture>, TextureError>;
    /// See [`Device::export_buffer_memory`].
    ///
    /// # Safety
    /// As [`Device::export_buffer_memory`].
    unsafe fn export_buffer_memory(
        &self,
        buffer: &dyn DynBuffer,
        handle_type: ExternalHandleType,
    ) -> Result<ExportedMemory, ExternalError>;
    /// See [`Device::export_texture_memory`].
    ///
    /// # Safety
    /// As [`Device::export_texture_memory`].
    unsafe fn export_texture_memory(
        &self,
        texture: &dyn DynTexture,
        handle_type: ExternalHandleType,
    ) -> Result<ExportedMemory, ExternalError>;
    /// See [`Device::create_external_semaphore`].
    ///
    /// # Safety
    /// As [`Device::create_external_semaphore`].
    unsafe fn create_external_semaphore(
        &self,
        desc: &ExternalSemaphoreDescriptor,
    ) -> Result<Box<dyn DynExternalSemaphore>, ExternalError>;
    /// See [`Device::import_semaphore`].
    ///
    /// # Safety
    /// As [`Device::import_semaphore`].
    unsafe fn import_semaphore(
        &self,
        desc: &ExternalSemaphoreDescriptor,
        fd: OwnedFd,
    ) -> Result<Box<dyn DynExternalSemaphore>, ExternalError>;
    /// See [`Device::export_semaphore`].
    ///
    /// # Safety
    /// As [`Device::export_semaphore`].
    unsafe fn export_semaphore(
        &self,
        semaphore: &dyn DynExternalSemaphore,
    ) -> Result<OwnedFd, ExternalError>;
    /// See [`Device::destroy_external_semaphore`]. A foreign one is logged and leaked.
    ///
    /// # Safety
    /// As [`Device::destroy_external_semaphore`].
    unsafe fn destroy_external_semaphore(&self, semaphore: Box<dyn DynExternalSemaphore>);
    /// See [`Device::semaphore_value`].
    ///
    /// # Safety
    /// As [`Device::semaphore_value`].
    unsafe fn semaphore_value(
        &self,
        semaphore: &dyn DynExternalSemaphore,
    ) -> Result<FenceValue, ExternalError>;
    /// See [`Device::signal_semaphore`].
    ///
    /// # Safety
    /// As [`Device::signal_semaphore`].
    unsafe fn signal_semaphore(
        &self,
        semaphore: &dyn DynExternalSemaphore,
        value: FenceValue,
    ) -> Result<(), ExternalError>;
    /// See [`Device::wait_semaphore`].
    ///
    /// # Safety
    /// As [`Device::wait_semaphore`].
    unsafe fn wait_semaphore(
        &self,
        semaphore: &dyn DynExternalSemaphore,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, ExternalError>;
}

/// Destroys a boxed resource if it belongs to this backend; logs and leaks it otherwise.
fn destroy_owned<T: 'static>(obj: Box<dyn Any>, what: &str, destroy: impl FnOnce(T)) {
    match cast_box::<T>(obj) {
        Some(obj) => destroy(obj),
        None => log::error!("destroy_{what}: the object belongs to another backend; leaked"),
    }
}

impl<D: Device> DynDevice for D {
    unsafe fn create_buffer(
        &self,
        desc: &BufferDescriptor,
    ) -> Result<Box<dyn DynBuffer>, BufferError> {
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe { Device::create_buffer(self, desc) }?))
    }
    unsafe fn destroy_buffer(&self, buffer: Box<dyn DynBuffer>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(buffer, "buffer", |b| unsafe {
            Device::destroy_buffer(self, b)
        })
    }
    unsafe fn map_buffer(&self, buffer: &dyn DynBuffer) -> Result<BufferMapping, MapError> {
        if let Some(buffer) = cast::<<D::A as Api>::Buffer>(buffer) {
            // SAFETY: forwarded contract.
            return unsafe { Device::map_buffer(self, buffer) };
        }
        // A shader binding table's buffer (see `shader_table.rs`).
        // SAFETY: forwarded contract.
        shader_table::with_table_buffer::<D::A, _>(buffer, |b| unsafe {
            Device::map_buffer(self, b)
        })
        .unwrap_or(Err(MapError::Device(FOREIGN)))
    }
    unsafe fn unmap_buffer(&self, buffer: &dyn DynBuffer) {
        if let Some(buffer) = cast::<<D::A as Api>::Buffer>(buffer) {
            // SAFETY: forwarded contract.
            return unsafe { Device::unmap_buffer(self, buffer) };
        }
        // A shader binding table's buffer (see `shader_table.rs`).
        // SAFETY: forwarded contract.
        shader_table::with_table_buffer::<D::A, _>(buffer, |b| unsafe {
            Device::unmap_buffer(self, b)
        });
    }
    unsafe fn create_texture(
        &self,
        desc: &TextureDescriptor,
    ) -> Result<Box<dyn DynTexture>, TextureError> {
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe { Device::create_texture(self, desc) }?))
    }
    unsafe fn destroy_texture(&self, texture: Box<dyn DynTexture>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(texture, "texture", |t| unsafe {
            Device::destroy_texture(self, t)
        })
    }
    unsafe fn create_texture_view(
        &self,
        texture: &dyn DynTexture,
        desc: &TextureViewDescriptor,
    ) -> Result<Box<dyn DynTextureView>, TextureError> {
        let texture = cast_texture::<D::A>(texture).ok_or(TextureError::Device(FOREIGN))?;
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe {
            Device::create_texture_view(self, texture, desc)
        }?))
    }
    unsafe fn destroy_texture_view(&self, view: Box<dyn DynTextureView>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(view, "texture_view", |v| unsafe {
            Device::destroy_texture_view(self, v)
        })
    }
    unsafe fn create_sampler(
        &self,
        desc: &SamplerDescriptor,
    ) -> Result<Box<dyn DynSampler>, SamplerError> {
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe { Device::create_sampler(self, desc) }?))
    }
    unsafe fn destroy_sampler(&self, sampler: Box<dyn DynSampler>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(sampler, "sampler", |s| unsafe {
            Device::destroy_sampler(self, s)
        })
    }
    unsafe fn create_command_encoder(
        &self,
        desc: &CommandEncoderDescriptor,
    ) -> Result<Box<dyn DynCommandEncoder>, DeviceError> {
        // SAFETY: forwarded contract.
        let inner = unsafe { Device::create_command_encoder(self, desc) }?;
        Ok(Box::new(DynEncoder::<D::A>::new(inner)))
    }
    unsafe fn destroy_command_encoder(&self, encoder: Box<dyn DynCommandEncoder>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(encoder, "command_encoder", |e: DynEncoder<D::A>| unsafe {
            Device::destroy_command_encoder(self, e.inner)
        })
    }
    unsafe fn create_query_set(
        &self,
        desc: &QuerySetDescriptor,
    ) -> Result<Box<dyn DynQuerySet>, QuerySetError> {
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe { Device::create_query_set(self, desc) }?))
    }
    unsafe fn destroy_query_set(&self, set: Box<dyn DynQuerySet>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(set, "query_set", |s| unsafe {
            Device::destroy_query_set(self, s)
        })
    }
    unsafe fn create_pipeline_cache(
        &self,
        desc: &PipelineCacheDescriptor,
    ) -> Result<Box<dyn DynPipelineCache>, PipelineCacheError> {
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe {
            Device::create_pipeline_cache(self, desc)
        }?))
    }
    unsafe fn pipeline_cache_get_data(
        &self,
        cache: &dyn DynPipelineCache,
    ) -> Result<Vec<u8>, DeviceError> {
        let cache = cast(cache).ok_or(FOREIGN)?;
        // SAFETY: forwarded contract.
        unsafe { Device::pipeline_cache_get_data(self, cache) }
    }
    unsafe fn destroy_pipeline_cache(&self, cache: Box<dyn DynPipelineCache>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(cache, "pipeline_cache", |c| unsafe {
            Device::destroy_pipeline_cache(self, c)
        })
    }
    unsafe fn create_fence(&self) -> Result<Box<dyn DynFence>, DeviceError> {
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe { Device::create_fence(self) }?))
    }
    unsafe fn destroy_fence(&self, fence: Box<dyn DynFence>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(fence, "fence", |f| unsafe {
            Device::destroy_fence(self, f)
        })
    }
    unsafe fn get_fence_value(&self, fence: &dyn DynFence) -> Result<FenceValue, DeviceError> {
        let fence = cast::<<D::A as Api>::Fence>(fence).ok_or(FOREIGN)?;
        // SAFETY: forwarded contract.
        unsafe { Device::get_fence_value(self, fence) }
    }
    unsafe fn wait(
        &self,
        fence: &dyn DynFence,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, DeviceError> {
        let fence = cast::<<D::A as Api>::Fence>(fence).ok_or(FOREIGN)?;
        // SAFETY: forwarded contract.
        unsafe { Device::wait(self, fence, value, timeout) }
    }
    unsafe fn wait_idle(&self) -> Result<(), DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { Device::wait_idle(self) }
    }
    unsafe fn create_bind_group_layout(
        &self,
        desc: &BindGroupLayoutDescriptor,
    ) -> Result<Box<dyn DynBindGroupLayout>, BindingError> {
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe {
            Device::create_bind_group_layout(self, desc)
        }?))
    }
    unsafe fn destroy_bind_group_layout(&self, layout: Box<dyn DynBindGroupLayout>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(layout, "bind_group_layout", |l| unsafe {
            Device::destroy_bind_group_layout(self, l)
        })
    }
    unsafe fn create_bind_group(
        &self,
        desc: &BindGroupDescriptor<DynResources>,
    ) -> Result<Box<dyn DynBindGroup>, BindingError> {
        let made = convert::bind_group(desc, &Downcast::<D::A>::NEW, |own| {
            // SAFETY: forwarded contract.
            unsafe { Device::create_bind_group(self, own) }
        })
        .map_err(|e| BindingError::Device(e.into()))?;
        Ok(Box::new(made?))
    }
    unsafe fn destroy_bind_group(&self, group: Box<dyn DynBindGroup>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(group, "bind_group", |g| unsafe {
            Device::destroy_bind_group(self, g)
        })
    }
    unsafe fn create_pipeline_layout(
        &self,
        desc: &PipelineLayoutDescriptor<DynResources>,
    ) -> Result<Box<dyn DynPipelineLayout>, BindingError> {
        let made = convert::pipeline_layout(desc, &Downcast::<D::A>::NEW, |own| {
            // SAFETY: forwarded contract.
            unsafe { Device::create_pipeline_layout(self, own) }
        })
        .map_err(|e| BindingError::Device(e.into()))?;
        Ok(Box::new(made?))
    }
    unsafe fn destroy_pipeline_layout(&self, layout: Box<dyn DynPipelineLayout>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(layout, "pipeline_layout", |l| unsafe {
            Device::destroy_pipeline_layout(self, l)
        })
    }
    unsafe fn create_shader_module(
        &self,
        desc: &ShaderModuleDescriptor,
    ) -> Result<Box<dyn DynShaderModule>, ShaderError> {
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe {
            Device::create_shader_module(self, desc)
        }?))
    }
    unsafe fn destroy_shader_module(&self, module: Box<dyn DynShaderModule>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(module, "shader_module", |m| unsafe {
            Device::destroy_shader_module(self, m)
        })
    }
    unsafe fn create_render_pipeline(
        &self,
        desc: &RenderPipelineDescriptor<DynResources>,
    ) -> Result<Box<dyn DynRenderPipeline>, PipelineError> {
        let own = convert::render_pipeline(desc, &Downcast::<D::A>::NEW)
            .map_err(|e| PipelineError::Device(e.into()))?;
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe {
            Device::create_render_pipeline(self, &own)
        }?))
    }
    unsafe fn create_mesh_pipeline(
        &self,
        desc: &MeshPipelineDescriptor<DynResources>,
    ) -> Result<Box<dyn DynRenderPipeline>, PipelineError> {
        let own = convert::mesh_pipeline(desc, &Downcast::<D::A>::NEW)
            .map_err(|e| PipelineError::Device(e.into()))?;
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe {
            Device::create_mesh_pipeline(self, &own)
        }?))
    }
    unsafe fn destroy_render_pipeline(&self, pipeline: Box<dyn DynRenderPipeline>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(pipeline, "render_pipeline", |p| unsafe {
            Device::destroy_render_pipeline(self, p)
        })
    }
    unsafe fn create_compute_pipeline(
        &self,
        desc: &ComputePipelineDescriptor<DynResources>,
    ) -> Result<Box<dyn DynComputePipeline>, PipelineError> {
        let own = convert::compute_pipeline(desc, &Downcast::<D::A>::NEW)
            .map_err(|e| PipelineError::Device(e.into()))?;
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe {
            Device::create_compute_pipeline(self, &own)
        }?))
    }
    unsafe fn destroy_compute_pipeline(&self, pipeline: Box<dyn DynComputePipeline>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(pipeline, "compute_pipeline", |p| unsafe {
            Device::destroy_compute_pipeline(self, p)
        })
    }
    unsafe fn get_acceleration_structure_build_sizes(
        &self,
        desc: &GetAccelerationStructureBuildSizesDescriptor<DynResources>,
    ) -> Result<AccelerationStructureBuildSizes, AccelerationStructureError> {
        convert::build_sizes(desc, &Downcast::<D::A>::NEW, |own| {
            // SAFETY: forwarded contract.
            unsafe { Device::get_acceleration_structure_build_sizes(self, own) }
        })
        .map_err(|e| AccelerationStructureError::Device(e.into()))?
    }
    unsafe fn create_acceleration_structure(
        &self,
        desc: &AccelerationStructureDescriptor<DynResources>,
    ) -> Result<Box<dyn DynAccelerationStructure>, AccelerationStructureError> {
        let own = convert::acceleration_structure(desc, &Downcast::<D::A>::NEW)
            .map_err(|e| AccelerationStructureError::Device(e.into()))?;
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe {
            Device::create_acceleration_structure(self, &own)
        }?))
    }
    unsafe fn destroy_acceleration_structure(&self, structure: Box<dyn DynAccelerationStructure>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(structure, "acceleration_structure", |s| unsafe {
            Device::destroy_acceleration_structure(self, s)
        })
    }
    unsafe fn get_acceleration_structure_device_address(
        &self,
        structure: &dyn DynAccelerationStructure,
    ) -> u64 {
        match cast::<<D::A as Api>::AccelerationStructure>(structure) {
            // SAFETY: forwarded contract.
            Some(s) => unsafe { Device::get_acceleration_structure_device_address(self, s) },
            None => {
                log::error!("get_acceleration_structure_device_address: a foreign structure");
                0
            }
        }
    }
    unsafe fn get_acceleration_structure_size(
        &self,
        structure: &dyn DynAccelerationStructure,
    ) -> u64 {
        match cast::<<D::A as Api>::AccelerationStructure>(structure) {
            // SAFETY: forwarded contract.
            Some(s) => unsafe { Device::get_acceleration_structure_size(self, s) },
            None => {
                log::error!("get_acceleration_structure_size: a foreign structure");
                0
            }
        }
    }
    unsafe fn create_ray_tracing_pipeline(
        &self,
        desc: &RayTracingPipelineDescriptor<DynResources>,
    ) -> Result<Box<dyn DynRayTracingPipeline>, PipelineError> {
        let made = convert::ray_tracing_pipeline(desc, &Downcast::<D::A>::NEW, |own| {
            // SAFETY: forwarded contract.
            unsafe { Device::create_ray_tracing_pipeline(self, own) }
        })
        .map_err(|e| PipelineError::Device(e.into()))?;
        Ok(Box::new(made?))
    }
    unsafe fn destroy_ray_tracing_pipeline(&self, pipeline: Box<dyn DynRayTracingPipeline>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(pipeline, "ray_tracing_pipeline", |p| unsafe {
            Device::destroy_ray_tracing_pipeline(self, p)
        })
    }
    unsafe fn create_shader_binding_table(
        &self,
        pipeline: &dyn DynRayTracingPipeline,
        desc: &ShaderBindingTableDescriptor,
    ) -> Result<ShaderBindingTable<Box<dyn DynBuffer>>, PipelineError> {
        let pipeline = cast::<<D::A as Api>::RayTracingPipeline>(pipeline)
            .ok_or(PipelineError::Device(FOREIGN))?;
        // SAFETY: forwarded contract.
        let table = unsafe { Device::create_shader_binding_table(self, pipeline, desc) }?;
        Ok(shader_table::wrap::<D::A>(table))
    }
    unsafe fn destroy_shader_binding_table(&self, table: ShaderBindingTable<Box<dyn DynBuffer>>) {
        match shader_table::unwrap::<D::A>(table) {
            // SAFETY: forwarded contract; the type was checked by the downcast.
            Some(table) => unsafe { Device::destroy_shader_binding_table(self, table) },
            None => log::error!(
                "destroy_shader_binding_table: the table belongs to another backend; leaked"
            ),
        }
    }
    fn live_counts(&self) -> LiveCounts {
        Device::live_counts(self)
    }
    fn shader_capabilities(&self) -> naga::valid::Capabilities {
        Device::shader_capabilities(self)
    }
    fn memory_report(&self) -> crate::MemoryReport {
        Device::memory_report(self)
    }
    unsafe fn buffer_placement(&self, buffer: &dyn DynBuffer) -> Option<crate::MemoryPlacement> {
        let buffer = cast::<<D::A as Api>::Buffer>(buffer)?;
        // SAFETY: forwarded contract.
        unsafe { Device::buffer_placement(self, buffer) }
    }
    unsafe fn texture_placement(&self, texture: &dyn DynTexture) -> Option<crate::MemoryPlacement> {
        let texture = cast::<<D::A as Api>::Texture>(texture)?;
        // SAFETY: forwarded contract.
        unsafe { Device::texture_placement(self, texture) }
    }
    fn trim_memory(&self) -> u64 {
        Device::trim_memory(self)
    }
    fn set_memory_retention(&self, limit_bytes: u64) {
        Device::set_memory_retention(self, limit_bytes)
    }
    fn is_lost(&self) -> bool {
        Device::is_lost(self)
    }
    unsafe fn import_buffer(
        &self,
        desc: &BufferDescriptor,
        handle: ExternalHandle,
    ) -> Result<Box<dyn DynBuffer>, BufferError> {
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe {
            Device::import_buffer(self, desc, handle)
        }?))
    }
    unsafe fn import_texture(
        &self,
        desc: &TextureDescriptor,
        handle: ExternalHandle,
    ) -> Result<Box<dyn DynTexture>, TextureError> {
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe {
            Device::import_texture(self, desc, handle)
        }?))
    }
    unsafe fn export_buffer_memory(
        &self,
        buffer: &dyn DynBuffer,
        handle_type: ExternalHandleType,
    ) -> Result<ExportedMemory, ExternalError> {
        let buffer = cast::<<D::A as Api>::Buffer>(buffer).ok_or(FOREIGN)?;
        // SAFETY: forwarded contract.
        unsafe { Device::export_buffer_memory(self, buffer, handle_type) }
    }
    unsafe fn export_texture_memory(
        &self,
        texture: &dyn DynTexture,
        handle_type: ExternalHandleType,
    ) -> Result<ExportedMemory, ExternalError> {
        let texture = cast::<<D::A as Api>::Texture>(texture).ok_or(FOREIGN)?;
        // SAFETY: forwarded contract.
        unsafe { Device::export_texture_memory(self, texture, handle_type) }
    }
    unsafe fn create_external_semaphore(
        &self,
        desc: &ExternalSemaphoreDescriptor,
    ) -> Result<Box<dyn DynExternalSemaphore>, ExternalError> {
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe {
            Device::create_external_semaphore(self, desc)
        }?))
    }
    unsafe fn import_semaphore(
        &self,
        desc: &ExternalSemaphoreDescriptor,
        fd: OwnedFd,
    ) -> Result<Box<dyn DynExternalSemaphore>, ExternalError> {
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe {
            Device::import_semaphore(self, desc, fd)
        }?))
    }
    unsafe fn export_semaphore(
        &self,
        semaphore: &dyn DynExternalSemaphore,
    ) -> Result<OwnedFd, ExternalError> {
        let semaphore = cast::<<D::A as Api>::ExternalSemaphore>(semaphore).ok_or(FOREIGN)?;
        // SAFETY: forwarded contract.
        unsafe { Device::export_semaphore(self, semaphore) }
    }
    unsafe fn destroy_external_semaphore(&self, semaphore: Box<dyn DynExternalSemaphore>) {
        // SAFETY: forwarded contract; the type was checked by the downcast.
        destroy_owned(semaphore, "external_semaphore", |s| unsafe {
            Device::destroy_external_semaphore(self, s)
        })
    }
    unsafe fn semaphore_value(
        &self,
        semaphore: &dyn DynExternalSemaphore,
    ) -> Result<FenceValue, ExternalError> {
        let semaphore = cast::<<D::A as Api>::ExternalSemaphore>(semaphore).ok_or(FOREIGN)?;
        // SAFETY: forwarded contract.
        unsafe { Device::semaphore_value(self, semaphore) }
    }
    unsafe fn signal_semaphore(
        &self,
        semaphore: &dyn DynExternalSemaphore,
        value: FenceValue,
    ) -> Result<(), ExternalError> {
        let semaphore = cast::<<D::A as Api>::ExternalSemaphore>(semaphore).ok_or(FOREIGN)?;
        // SAFETY: forwarded contract.
        unsafe { Device::signal_semaphore(self, semaphore, value) }
    }
    unsafe fn wait_semaphore(
        &self,
        semaphore: &dyn DynExternalSemaphore,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, ExternalError> {
        let semaphore = cast::<<D::A as Api>::ExternalSemaphore>(semaphore).ok_or(FOREIGN)?;
        // SAFETY: forwarded contract.
        unsafe { Device::wait_semaphore(self, semaphore, value, timeout) }
    }
}

/// A queue of some backend.
pub trait DynQueue: Send + Sync + std::fmt::Debug {
    /// See [`Queue::submit`].
    ///
    /// # Safety
    /// As [`Queue::submit`].
    unsafe fn submit(
        &self,
        command_buffers: &[&dyn DynCommandBuffer],
        surface_textures: &[&SurfaceTextureBox],
        fence: &dyn DynFence,
        value: FenceValue,
    ) -> Result<(), DeviceError>;
    /// See [`Queue::present`]; a surface or texture of another backend is
    /// `SurfaceError::Device(DeviceError::ForeignResource)` (the texture is
    /// dropped).
    ///
    /// # Safety
    /// As [`Queue::present`].
    unsafe fn present(
        &self,
        surface: &dyn DynSurface,
        texture: SurfaceTextureBox,
    ) -> Result<(), SurfaceError>;
    /// See [`Queue::timestamp_period`].
    fn timestamp_period(&self) -> f32;
    /// See [`Queue::submit_external`].
    ///
    /// # Safety
    /// As [`Queue::submit_external`].
    unsafe fn submit_external(
        &self,
        submission: &DynExternalSubmission<'_>,
    ) -> Result<(), DeviceError>;
}

impl<Q: Queue> DynQueue for Q {
    unsafe fn submit(
        &self,
        command_buffers: &[&dyn DynCommandBuffer],
        surface_textures: &[&SurfaceTextureBox],
        fence: &dyn DynFence,
        value: FenceValue,
    ) -> Result<(), DeviceError> {
        let fence = cast::<<Q::A as Api>::Fence>(fence).ok_or(FOREIGN)?;
        map_inline(
            command_buffers,
            |&cb| cast::<<Q::A as Api>::CommandBuffer>(cb),
            |buffers| {
                map_inline(
                    surface_textures,
                    |&st| {
                        let object: &dyn Any = st.texture();
                        cast_surface_texture::<Q::A>(object)
                    },
                    // SAFETY: forwarded contract.
                    |textures| unsafe { Queue::submit(self, buffers, textures, fence, value) },
                )
                .ok_or(FOREIGN)?
            },
        )
        .ok_or(FOREIGN)?
    }
    unsafe fn present(
        &self,
        surface: &dyn DynSurface,
        texture: SurfaceTextureBox,
    ) -> Result<(), SurfaceError> {
        let foreign = SurfaceError::Device(FOREIGN);
        let surface = cast::<<Q::A as Api>::Surface>(surface).ok_or(foreign.clone())?;
        let texture = take_surface_texture::<Q::A>(texture).ok_or(foreign)?;
        // SAFETY: forwarded contract.
        unsafe { Queue::present(self, surface, texture) }
    }
    fn timestamp_period(&self) -> f32 {
        Queue::timestamp_period(self)
    }
    unsafe fn submit_external(
        &self,
        submission: &DynExternalSubmission<'_>,
    ) -> Result<(), DeviceError> {
        super::external::with_backend_submission::<Q::A, _>(submission, |own| {
            // SAFETY: forwarded contract.
            unsafe { Queue::submit_external(self, own) }
        })
    }
}
