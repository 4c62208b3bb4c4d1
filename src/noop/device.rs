//! The noop device: resource creation with the cheap descriptor checks every
//! backend makes, the memory budget, and the live-object counters.
//!
//! The descriptor checks are the shared ones of `src/validate/` (buffers:
//! `buffer.rs`, textures: `texture.rs`, views: `view.rs`, samplers:
//! `sampler.rs`, query sets: `query.rs`), so a mistake is the same typed
//! error here and on Vulkan. What noop adds in the place of a driver's
//! answer, after them: a sample count its format does not support
//! (`InvalidSampleCount`, `validate::texture::FORMAT_SAMPLES`), a usage
//! the format does not allow or a multi-planar format (`UnsupportedFormat`).
//!
//! Then memory: the bytes are charged to the instance's budget and
//! allocated; either failing is `DeviceError::OutOfMemory`. External
//! memory (exports, imports) is made and checked in `external.rs`.
//!
//! Bind group layouts, bind groups and pipeline layouts are checked in
//! `binding.rs`, shader modules and pipelines in `pipeline.rs`, acceleration
//! structures in `acceleration.rs`; this file only counts them. Ray-tracing
//! pipelines are never made: noop lacks `RAY_TRACING_PIPELINE`.

use std::sync::Arc;
use std::time::Duration;

use std::os::fd::OwnedFd;

use super::command::{QueryKind, QueryResults};
use super::external::{self, ExternalSemaphore};
use super::memory::HostBytes;
use super::texel::{LayoutError, TexelLayout};
use super::{
    acceleration, binding, pipeline, AccelerationStructure, Api, BindGroup, BindGroupLayout,
    Buffer, CommandEncoder, ComputePipeline, Device, DeviceShared, Fence, PipelineLayout, QuerySet,
    RayTracingPipeline, RenderPipeline, Sampler, ShaderModule, Texture, TextureView,
};
use crate::{
    AccelerationStructureBuildSizes, AccelerationStructureDescriptor, AccelerationStructureError,
    BindGroupDescriptor, BindGroupLayoutDescriptor, BindingError, BufferDescriptor, BufferError,
    BufferMapping, CommandEncoderDescriptor, ComputePipelineDescriptor, DeviceError,
    ExportedMemory, ExternalError, ExternalHandle, ExternalHandleType, ExternalSemaphoreDescriptor,
    FenceValue, GetAccelerationStructureBuildSizesDescriptor, LiveCounts, MapError, Memory,
    PipelineError, PipelineLayoutDescriptor, QuerySetDescriptor, QuerySetError,
    RayTracingPipelineDescriptor, RenderPipelineDescriptor, SamplerDescriptor, SamplerError,
    ShaderBindingTable, ShaderBindingTableDescriptor, ShaderError, ShaderModuleDescriptor,
    TextureDescriptor, TextureError, TextureViewDescriptor,
};

impl crate::Device for Device {
    type A = Api;

    unsafe fn create_buffer(&self, desc: &BufferDescriptor) -> Result<Buffer, BufferError> {
        self.shared.lost.guard(|| {
            crate::validate::buffer::check_buffer(desc, &self.shared.limits)?;
            // Charge first, then allocate: if the allocation fails, dropping the
            // charge returns the bytes to the budget.
            let charge = self.shared.budget.charge(desc.size)?;
            let bytes = external::new_bytes(&self.shared, desc.memory, desc.size)
                .map_err(external::buffer_err)?;
            let c = &self.shared.counters;
            c.buffers.add();
            c.memory_allocations.add();
            Ok(Buffer {
                bytes: Arc::new(bytes),
                memory: desc.memory,
                usage: desc.usage,
                _charge: charge,
            })
        })
    }

    unsafe fn destroy_buffer(&self, buffer: Buffer) {
        let c = &self.shared.counters;
        c.buffers.sub();
        c.memory_allocations.sub();
        // Dropping returns the budget; the bytes are freed once no recorded
        // command holds them any more.
        drop(buffer);
    }

    unsafe fn map_buffer(&self, buffer: &Buffer) -> Result<BufferMapping, MapError> {
        self.shared.lost.guard(|| {
            if !buffer.memory.is_mappable() {
                return Err(MapError::NotMappable(buffer.memory));
            }
            // The allocation never moves: every mapping returns the same pointer.
            Ok(BufferMapping {
                ptr: buffer.bytes.as_ptr(),
                size: buffer.bytes.len(),
            })
        })
    }

    unsafe fn unmap_buffer(&self, _buffer: &Buffer) {
        // Host memory is always visible: nothing to flush or unmap.
    }

    unsafe fn create_texture(&self, desc: &TextureDescriptor) -> Result<Texture, TextureError> {
        self.shared.lost.guard(|| {
            let texture = new_texture(&self.shared, desc)?;
            let c = &self.shared.counters;
            c.textures.add();
            c.memory_allocations.add();
            Ok(texture)
        })
    }

    unsafe fn destroy_texture(&self, texture: Texture) {
        let c = &self.shared.counters;
        c.textures.sub();
        c.memory_allocations.sub();
        drop(texture);
    }

    unsafe fn create_texture_view(
        &self,
        texture: &Texture,
        desc: &TextureViewDescriptor,
    ) -> Result<TextureView, TextureError> {
        self.shared.lost.guard(|| {
            let view = resolve_view(texture, desc, self.shared.features)?;
            self.shared.counters.texture_views.add();
            Ok(view)
        })
    }

    unsafe fn destroy_texture_view(&self, _view: TextureView) {
        // A view owns no memory: only the count changes.
        self.shared.counters.texture_views.sub();
    }

    unsafe fn create_sampler(&self, desc: &SamplerDescriptor) -> Result<Sampler, SamplerError> {
        self.shared.lost.guard(|| {
            // Noop filters anisotropically wherever the filters are linear.
            crate::validate::sampler::check_sampler(desc, true, self.shared.features)?;
            self.shared.counters.samplers.add();
            Ok(Sampler {
                facts: crate::validate::SamplerFacts::of(desc),
            })
        })
    }

    unsafe fn destroy_sampler(&self, _sampler: Sampler) {
        // A sampler owns nothing: only the count changes.
        self.shared.counters.samplers.sub();
    }

    unsafe fn create_command_encoder(
        &self,
        _desc: &CommandEncoderDescriptor,
    ) -> Result<CommandEncoder, DeviceError> {
        self.shared.lost.guard(|| {
            self.shared.counters.command_encoders.add();
            Ok(CommandEncoder::new(
                &self.shared.limits,
                self.shared.features,
            ))
        })
    }

    unsafe fn destroy_command_encoder(&self, encoder: CommandEncoder) {
        self.shared.counters.command_encoders.sub();
        drop(encoder);
    }

    unsafe fn create_query_set(
        &self,
        desc: &QuerySetDescriptor,
    ) -> Result<QuerySet, QuerySetError> {
        self.shared.lost.guard(|| {
            crate::validate::query::check_query_set(desc, self.shared.features)?;
            let kind = match desc.ty {
                wgt::QueryType::Timestamp => QueryKind::Timestamp,
                // Pipeline statistics were refused by the check.
                _ => QueryKind::Occlusion,
            };
            let results = QueryResults::new(desc.count)?;
            self.shared.counters.query_sets.add();
            Ok(QuerySet {
                kind,
                results: Arc::new(results),
            })
        })
    }

    unsafe fn destroy_query_set(&self, set: QuerySet) {
        self.shared.counters.query_sets.sub();
        drop(set);
    }

    unsafe fn create_fence(&self) -> Result<Fence, DeviceError> {
        self.shared.lost.guard(|| {
            self.shared.counters.fences.add();
            Ok(Fence::new())
        })
    }

    unsafe fn destroy_fence(&self, _fence: Fence) {
        // A fence owns no memory beyond itself, freed as it goes out of scope.
        self.shared.counters.fences.sub();
    }

    unsafe fn get_fence_value(&self, fence: &Fence) -> Result<FenceValue, DeviceError> {
        self.shared.lost.guard(|| Ok(fence.value()))
    }

    unsafe fn wait(
        &self,
        fence: &Fence,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, DeviceError> {
        self.shared.lost.guard(|| Ok(fence.wait(value, timeout)))
    }

    unsafe fn wait_idle(&self) -> Result<(), DeviceError> {
        self.shared.lost.guard(|| {
            // Submissions execute synchronously; taking the lock waits for one
            // that another thread has in flight.
            drop(self.shared.submit_lock.lock());
            Ok(())
        })
    }

    unsafe fn create_bind_group_layout(
        &self,
        desc: &BindGroupLayoutDescriptor,
    ) -> Result<BindGroupLayout, BindingError> {
        self.shared.lost.guard(|| {
            let layout = binding::create_bind_group_layout(&self.shared, desc)?;
            self.shared.counters.bind_group_layouts.add();
            Ok(layout)
        })
    }

    unsafe fn destroy_bind_group_layout(&self, layout: BindGroupLayout) {
        self.shared.counters.bind_group_layouts.sub();
        drop(layout);
    }

    unsafe fn create_bind_group(
        &self,
        desc: &BindGroupDescriptor<Api>,
    ) -> Result<BindGroup, BindingError> {
        self.shared.lost.guard(|| {
            let group = binding::create_bind_group(desc)?;
            self.shared.counters.bind_groups.add();
            Ok(group)
        })
    }

    unsafe fn destroy_bind_group(&self, group: BindGroup) {
        self.shared.counters.bind_groups.sub();
        drop(group);
    }

    unsafe fn create_pipeline_layout(
        &self,
        desc: &PipelineLayoutDescriptor<Api>,
    ) -> Result<PipelineLayout, BindingError> {
        self.shared.lost.guard(|| {
            let layout = binding::create_pipeline_layout(&self.shared, desc)?;
            self.shared.counters.pipeline_layouts.add();
            Ok(layout)
        })
    }

    unsafe fn destroy_pipeline_layout(&self, layout: PipelineLayout) {
        self.shared.counters.pipeline_layouts.sub();
        drop(layout);
    }

    unsafe fn create_shader_module(
        &self,
        desc: &ShaderModuleDescriptor,
    ) -> Result<ShaderModule, ShaderError> {
        self.shared.lost.guard(|| {
            let module = pipeline::create_shader_module(&self.shared, desc)?;
            self.shared.counters.shader_modules.add();
            Ok(module)
        })
    }

    unsafe fn destroy_shader_module(&self, module: ShaderModule) {
        self.shared.counters.shader_modules.sub();
        drop(module);
    }

    unsafe fn create_render_pipeline(
        &self,
        desc: &RenderPipelineDescriptor<Api>,
    ) -> Result<RenderPipeline, PipelineError> {
        self.shared.lost.guard(|| {
            let pipeline = pipeline::create_render_pipeline(&self.shared, desc)?;
            self.shared.counters.render_pipelines.add();
            Ok(pipeline)
        })
    }

    unsafe fn create_mesh_pipeline(
        &self,
        desc: &crate::MeshPipelineDescriptor<Api>,
    ) -> Result<RenderPipeline, PipelineError> {
        self.shared.lost.guard(|| {
            let pipeline = pipeline::create_mesh_pipeline(&self.shared, desc)?;
            self.shared.counters.render_pipelines.add();
            Ok(pipeline)
        })
    }

    unsafe fn destroy_render_pipeline(&self, _pipeline: RenderPipeline) {
        // A pipeline owns nothing: only the count changes.
        self.shared.counters.render_pipelines.sub();
    }

    unsafe fn create_compute_pipeline(
        &self,
        desc: &ComputePipelineDescriptor<Api>,
    ) -> Result<ComputePipeline, PipelineError> {
        self.shared.lost.guard(|| {
            let pipeline = pipeline::create_compute_pipeline(&self.shared, desc)?;
            self.shared.counters.compute_pipelines.add();
            Ok(pipeline)
        })
    }

    unsafe fn destroy_compute_pipeline(&self, _pipeline: ComputePipeline) {
        // A pipeline owns nothing: only the count changes.
        self.shared.counters.compute_pipelines.sub();
    }

    unsafe fn create_pipeline_cache(
        &self,
        desc: &crate::PipelineCacheDescriptor,
    ) -> Result<super::PipelineCache, crate::PipelineCacheError> {
        use crate::validate::pipeline_cache as format;
        self.shared.lost.guard(|| {
            format::check_feature(self.shared.features)?;
            // Noop's data holds no bytes past the header; it is checked all
            // the same, so a bad blob fails here as on any backend.
            format::initial_data(super::PIPELINE_CACHE_KEY, desc.data, desc.fallback)?;
            self.shared.counters.pipeline_caches.add();
            Ok(super::PipelineCache { _private: () })
        })
    }

    unsafe fn pipeline_cache_get_data(
        &self,
        _cache: &super::PipelineCache,
    ) -> Result<Vec<u8>, DeviceError> {
        self.shared.lost.guard(|| {
            Ok(crate::validate::pipeline_cache::wrap(
                super::PIPELINE_CACHE_KEY,
                &[],
            ))
        })
    }

    unsafe fn destroy_pipeline_cache(&self, _cache: super::PipelineCache) {
        self.shared.counters.pipeline_caches.sub();
    }

    unsafe fn get_acceleration_structure_build_sizes(
        &self,
        desc: &GetAccelerationStructureBuildSizesDescriptor<Api>,
    ) -> Result<AccelerationStructureBuildSizes, AccelerationStructureError> {
        self.shared
            .lost
            .guard(|| acceleration::build_sizes(&self.shared, desc))
    }

    unsafe fn create_acceleration_structure(
        &self,
        desc: &AccelerationStructureDescriptor<Api>,
    ) -> Result<AccelerationStructure, AccelerationStructureError> {
        self.shared
            .lost
            .guard(|| acceleration::create(&self.shared, desc))
    }

    unsafe fn destroy_acceleration_structure(&self, structure: AccelerationStructure) {
        acceleration::destroy(&self.shared, structure);
    }

    unsafe fn get_acceleration_structure_device_address(
        &self,
        structure: &AccelerationStructure,
    ) -> u64 {
        structure.address
    }

    unsafe fn get_acceleration_structure_size(&self, structure: &AccelerationStructure) -> u64 {
        structure.size
    }

    unsafe fn create_ray_tracing_pipeline(
        &self,
        _desc: &RayTracingPipelineDescriptor<Api>,
    ) -> Result<RayTracingPipeline, PipelineError> {
        self.shared.lost.guard(|| {
            Err(PipelineError::Unsupported(
                "ray-tracing pipelines need HalFeatures::RAY_TRACING_PIPELINE, which noop lacks"
                    .into(),
            ))
        })
    }

    unsafe fn destroy_ray_tracing_pipeline(&self, pipeline: RayTracingPipeline) {
        // No value of the type exists: creation always fails.
        match pipeline {}
    }

    unsafe fn create_shader_binding_table(
        &self,
        pipeline: &RayTracingPipeline,
        _desc: &ShaderBindingTableDescriptor,
    ) -> Result<ShaderBindingTable<Buffer>, PipelineError> {
        self.shared.lost.guard(|| match *pipeline {})
    }

    unsafe fn destroy_shader_binding_table(&self, table: ShaderBindingTable<Buffer>) {
        // No table is ever made on noop; one assembled by hand owns its
        // buffer, which goes with it.
        // SAFETY: forwarded contract (the buffer came from this device).
        unsafe { crate::Device::destroy_buffer(self, table.buffer) };
    }

    fn live_counts(&self) -> LiveCounts {
        self.shared.counters.snapshot()
    }

    fn shader_capabilities(&self) -> naga::valid::Capabilities {
        super::pipeline::naga_capabilities(&self.shared)
    }

    fn memory_report(&self) -> crate::MemoryReport {
        // Every live byte is its own allocation, returned when its resource
        // goes: nothing is retained, and reserved is live.
        let live = self.shared.budget.used();
        crate::MemoryReport {
            live_bytes: live,
            retained_bytes: 0,
            reserved_bytes: live,
            block_count: u64::try_from(self.shared.counters.snapshot().memory_allocations)
                .unwrap_or(0),
            retention_limit: 0,
            memory_types: Vec::new(),
            heaps: Vec::new(),
        }
    }

    unsafe fn buffer_placement(&self, buffer: &super::Buffer) -> Option<crate::MemoryPlacement> {
        Some(own_block(&buffer.bytes))
    }

    unsafe fn texture_placement(&self, texture: &super::Texture) -> Option<crate::MemoryPlacement> {
        Some(own_block(&texture.bytes))
    }

    fn trim_memory(&self) -> u64 {
        // Nothing is kept (noop/memory.rs).
        0
    }

    fn set_memory_retention(&self, _limit_bytes: u64) {
        // Noop keeps no freed memory, whatever the limit.
    }

    fn is_lost(&self) -> bool {
        self.shared.lost.is_lost()
    }
    // External memory and semaphores: shared files (external.rs).

    unsafe fn import_buffer(
        &self,
        desc: &BufferDescriptor,
        handle: ExternalHandle,
    ) -> Result<Buffer, BufferError> {
        self.shared.lost.guard(|| {
            // Checked as any buffer, but never as mappable. Every error drops
            // (closes) the handle's fd.
            crate::validate::buffer::check_buffer(
                &BufferDescriptor {
                    memory: Memory::Device,
                    ..desc.clone()
                },
                &self.shared.limits,
            )?;
            // Host memory is the caller's: only imported fds cost budget.
            let host = matches!(handle, ExternalHandle::HostPointer { .. });
            let charge = self
                .shared
                .budget
                .charge(if host { 0 } else { desc.size })?;
            // SAFETY: forwarded contract (a host pointer stays valid).
            let (bytes, memory) =
                unsafe { external::import_bytes(&self.shared, handle, desc.size) }
                    .map_err(external::buffer_err)?;
            let c = &self.shared.counters;
            c.buffers.add();
            c.memory_allocations.add();
            Ok(Buffer {
                bytes: Arc::new(bytes),
                memory,
                usage: desc.usage,
                _charge: charge,
            })
        })
    }

    unsafe fn import_texture(
        &self,
        desc: &TextureDescriptor,
        handle: ExternalHandle,
    ) -> Result<Texture, TextureError> {
        self.shared.lost.guard(|| {
            crate::validate::external::check_texture_handle(handle.handle_type())?;
            // `desc.memory` is ignored: the shared rule, as on Vulkan.
            let desc =
                &crate::validate::external::imported_texture_desc(desc, handle.handle_type());
            let texture = new_texture_with(&self.shared, desc, |len| {
                // SAFETY: not a host pointer (checked above).
                unsafe { external::import_bytes(&self.shared, handle, len) }
                    .map_err(external::texture_err)
            })?;
            let c = &self.shared.counters;
            c.textures.add();
            c.memory_allocations.add();
            Ok(texture)
        })
    }

    unsafe fn export_buffer_memory(
        &self,
        buffer: &Buffer,
        handle_type: ExternalHandleType,
    ) -> Result<ExportedMemory, ExternalError> {
        self.shared
            .lost
            .guard(|| external::export(&buffer.bytes, buffer.memory, handle_type))
    }

    unsafe fn export_texture_memory(
        &self,
        texture: &Texture,
        handle_type: ExternalHandleType,
    ) -> Result<ExportedMemory, ExternalError> {
        self.shared
            .lost
            .guard(|| external::export(&texture.bytes, texture.memory, handle_type))
    }

    unsafe fn create_external_semaphore(
        &self,
        desc: &ExternalSemaphoreDescriptor,
    ) -> Result<ExternalSemaphore, ExternalError> {
        self.shared
            .lost
            .guard(|| external::create_semaphore(&self.shared, desc))
    }

    unsafe fn import_semaphore(
        &self,
        desc: &ExternalSemaphoreDescriptor,
        fd: OwnedFd,
    ) -> Result<ExternalSemaphore, ExternalError> {
        self.shared
            .lost
            .guard(|| external::import_semaphore(&self.shared, desc, fd))
    }

    unsafe fn export_semaphore(
        &self,
        semaphore: &ExternalSemaphore,
    ) -> Result<OwnedFd, ExternalError> {
        self.shared
            .lost
            .guard(|| external::export_semaphore(semaphore))
    }

    unsafe fn destroy_external_semaphore(&self, semaphore: ExternalSemaphore) {
        external::destroy_semaphore(&self.shared, semaphore);
    }

    unsafe fn semaphore_value(
        &self,
        semaphore: &ExternalSemaphore,
    ) -> Result<FenceValue, ExternalError> {
        self.shared
            .lost
            .guard(|| external::semaphore_value(semaphore))
    }

    unsafe fn signal_semaphore(
        &self,
        semaphore: &ExternalSemaphore,
        value: FenceValue,
    ) -> Result<(), ExternalError> {
        self.shared
            .lost
            .guard(|| external::signal_semaphore(semaphore, value))
    }

    unsafe fn wait_semaphore(
        &self,
        semaphore: &ExternalSemaphore,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, ExternalError> {
        self.shared
            .lost
            .guard(|| external::wait_semaphore(semaphore, value, timeout))
    }
}

/// Checks a texture descriptor, charges the budget and allocates the bytes;
/// counts nothing (surface textures belong to their surface).
pub(crate) fn new_texture(
    shared: &DeviceShared,
    desc: &TextureDescriptor,
) -> Result<Texture, TextureError> {
    new_texture_with(shared, desc, |len| {
        let bytes = external::new_bytes(shared, desc.memory, len).map_err(external::texture_err)?;
        Ok((bytes, desc.memory))
    })
}

/// [`new_texture`] with the memory from `bytes` (given the size), which
/// also says what memory the texture reports.
fn new_texture_with(
    shared: &DeviceShared,
    desc: &TextureDescriptor,
    bytes: impl FnOnce(u64) -> Result<(HostBytes, Memory), TextureError>,
) -> Result<Texture, TextureError> {
    crate::validate::texture::check_texture(desc, &shared.limits, shared.features)?;
    check_format(desc, shared.features)?;
    let layout = TexelLayout::new(
        desc.format,
        desc.dimension,
        desc.size,
        desc.mip_level_count,
        desc.sample_count,
    )
    .map_err(|e| match e {
        LayoutError::UnsupportedFormat => TextureError::UnsupportedFormat {
            format: desc.format,
            usage: desc.usage,
        },
        LayoutError::Overflow => TextureError::Device(DeviceError::OutOfMemory),
    })?;
    let mut view_formats = Vec::new();
    view_formats
        .try_reserve_exact(desc.view_formats.len())
        .map_err(|_| DeviceError::OutOfMemory)?;
    view_formats.extend_from_slice(desc.view_formats);
    let charge = shared.budget.charge(layout.total_bytes())?;
    let (bytes, memory) = bytes(layout.total_bytes())?;
    Ok(Texture {
        bytes: Arc::new(bytes),
        layout,
        view_formats,
        usage: desc.usage,
        memory,
        _charge: charge,
    })
}

/// What noop's formats allow (where a driver would answer): the sample
/// count and the usages. Runs after the shared checks.
fn check_format(desc: &TextureDescriptor, features: wgt::Features) -> Result<(), TextureError> {
    let caps = super::instance::format_features(desc.format, features);
    if desc.sample_count > 1 && !caps.flags.sample_count_supported(desc.sample_count) {
        return Err(TextureError::InvalidSampleCount {
            count: desc.sample_count,
            reason: crate::validate::texture::FORMAT_SAMPLES,
        });
    }
    if caps.allowed_usages.is_empty() || !caps.allowed_usages.contains(desc.usage) {
        return Err(TextureError::UnsupportedFormat {
            format: desc.format,
            usage: desc.usage,
        });
    }
    Ok(())
}

fn resolve_view(
    texture: &Texture,
    desc: &TextureViewDescriptor,
    features: wgt::Features,
) -> Result<TextureView, TextureError> {
    let layout = &texture.layout;
    let facts = texture.facts();
    // Noop makes cube-array views wherever a texture can be a cube.
    let view = crate::validate::view::check_view(&facts, desc, true)?;
    let sample_type = crate::validate::view_sample_type(view.format, view.range.aspect, features);
    Ok(TextureView {
        bytes: Arc::clone(&texture.bytes),
        layout: *layout,
        format: view.format,
        dimension: view.dimension,
        sample_type,
        key: crate::validate::binding::ViewKey::of(
            texture.usage,
            view.dimension,
            layout.sample_count,
            sample_type,
        ),
        range: view.range,
        usage: texture.usage,
    })
}

/// A noop resource's memory: a block of its own (its bytes' address is
/// the block's identity), the whole of it.
fn own_block(bytes: &Arc<HostBytes>) -> crate::MemoryPlacement {
    let size = bytes.len();
    crate::MemoryPlacement {
        block: Arc::as_ptr(bytes) as usize as u64,
        block_size: size,
        offset: 0,
        size,
    }
}
