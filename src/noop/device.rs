//! The noop device: resource creation with the cheap descriptor checks every
//! backend makes, the memory budget, and the live-object counters.
//!
//! The checks, in the order they run (each returns the typed error named):
//!
//! - buffers: size 0 (`ZeroSize`), above `max_buffer_size` (`TooLarge`),
//!   `MAP_READ`/`MAP_WRITE` on unmappable memory (`MapUsageNeedsHostMemory`);
//! - textures: memory other than `Device` or external (`UnsupportedMemory`), a zero
//!   dimension (`ZeroExtent`), a dimension over its limit (`TooLarge`), mip
//!   count 0 or past the full chain (`InvalidMipCount`), a sample count the
//!   format does not support, or above 1 on anything but a single-mip 2D
//!   texture without storage usage (`InvalidSampleCount`), a usage the
//!   format does not allow or a multi-planar format (`UnsupportedFormat`),
//!   a view format differing from the format in more than sRGB-ness
//!   (`IncompatibleView`);
//! - views: the checks of `validate/view.rs`, shared with every backend
//!   (`IncompatibleView`, `InvalidAspect`, `InvalidRange`);
//! - samplers: anisotropy 0, or above 1 without linear filters everywhere
//!   (`InvalidAnisotropy`); LOD clamp not `0 <= min <= max` (`InvalidLodClamp`);
//! - query sets: count 0 or above `MAX_QUERIES` (`InvalidCount`); pipeline
//!   statistics, or timestamps without `TIMESTAMP_QUERY` (`MissingFeature`).
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
    TextureDescriptor, TextureError, TextureViewDescriptor, MAX_QUERIES,
};

impl crate::Device for Device {
    type A = Api;

    unsafe fn create_buffer(&self, desc: &BufferDescriptor) -> Result<Buffer, BufferError> {
        self.shared.lost.guard(|| {
            check_buffer(desc, &self.shared.limits)?;
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
            let view = resolve_view(texture, desc)?;
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
            check_sampler(desc)?;
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
            Ok(CommandEncoder::new(&self.shared.limits))
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
            if desc.count == 0 || desc.count > MAX_QUERIES {
                return Err(QuerySetError::InvalidCount(desc.count));
            }
            let kind = match desc.ty {
                wgt::QueryType::Occlusion => QueryKind::Occlusion,
                wgt::QueryType::Timestamp => {
                    if !self
                        .shared
                        .features
                        .contains(wgt::Features::TIMESTAMP_QUERY)
                    {
                        return Err(QuerySetError::MissingFeature {
                            feature: wgt::Features::TIMESTAMP_QUERY,
                            enabled: self.shared.features,
                        });
                    }
                    QueryKind::Timestamp
                }
                wgt::QueryType::PipelineStatistics(_) => {
                    return Err(QuerySetError::MissingFeature {
                        feature: wgt::Features::PIPELINE_STATISTICS_QUERY,
                        enabled: self.shared.features,
                    });
                }
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
            let group = binding::create_bind_group(&self.shared, desc)?;
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
            check_buffer(
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
            if let ExternalHandle::HostPointer { .. } = handle {
                return Err(TextureError::External(ExternalError::Unsupported {
                    handle: ExternalHandleType::HostAllocation.name(),
                    reason: "textures cannot be imported from host allocations",
                }));
            }
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
    check_texture(desc, &shared.limits, shared.features)?;
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

fn check_buffer(desc: &BufferDescriptor, limits: &wgt::Limits) -> Result<(), BufferError> {
    if desc.size == 0 {
        return Err(BufferError::ZeroSize);
    }
    if desc.size > limits.max_buffer_size {
        return Err(BufferError::TooLarge {
            size: desc.size,
            max: limits.max_buffer_size,
        });
    }
    let map_usage = desc.usage & (wgt::BufferUsages::MAP_READ | wgt::BufferUsages::MAP_WRITE);
    if !map_usage.is_empty() && !desc.memory.is_mappable() {
        return Err(BufferError::MapUsageNeedsHostMemory {
            usage: map_usage,
            memory: desc.memory,
        });
    }
    Ok(())
}

fn check_texture(
    desc: &TextureDescriptor,
    limits: &wgt::Limits,
    features: wgt::Features,
) -> Result<(), TextureError> {
    use wgt::TextureDimension as D;
    // External memory is checked where it is made (`external.rs`).
    if !matches!(desc.memory, Memory::Device | Memory::External(_)) {
        return Err(TextureError::UnsupportedMemory(desc.memory));
    }
    let extent = desc.size;
    if extent.width == 0 || extent.height == 0 || extent.depth_or_array_layers == 0 {
        return Err(TextureError::ZeroExtent(extent));
    }
    // Per dimension: the limits on width, height and depth/layers.
    let maxima = match desc.dimension {
        D::D1 => [
            limits.max_texture_dimension_1d,
            1,
            limits.max_texture_array_layers,
        ],
        D::D2 => [
            limits.max_texture_dimension_2d,
            limits.max_texture_dimension_2d,
            limits.max_texture_array_layers,
        ],
        D::D3 => [limits.max_texture_dimension_3d; 3],
    };
    let sizes = [extent.width, extent.height, extent.depth_or_array_layers];
    if let Some((_, &max)) = sizes.iter().zip(&maxima).find(|(size, max)| size > max) {
        return Err(TextureError::TooLarge { extent, max });
    }
    // The full chain of the largest dimension (wgt counts 1D as one mip;
    // Vulkan, and so keel-hal, allows a chain there too).
    let largest = match desc.dimension {
        D::D1 => extent.width,
        D::D2 => extent.width.max(extent.height),
        D::D3 => extent
            .width
            .max(extent.height)
            .max(extent.depth_or_array_layers),
    };
    let max_mips = u32::BITS - largest.leading_zeros();
    if desc.mip_level_count == 0 || desc.mip_level_count > max_mips {
        return Err(TextureError::InvalidMipCount {
            requested: desc.mip_level_count,
            max: max_mips,
        });
    }
    let caps = super::instance::format_features(desc.format, features);
    match desc.sample_count {
        1 => {}
        n if desc.dimension == D::D2
            && desc.mip_level_count == 1
            && !desc.usage.contains(wgt::TextureUsages::STORAGE_BINDING)
            && caps.flags.sample_count_supported(n) => {}
        other => return Err(TextureError::InvalidSampleCount(other)),
    }
    if caps.allowed_usages.is_empty() || !caps.allowed_usages.contains(desc.usage) {
        return Err(TextureError::UnsupportedFormat {
            format: desc.format,
            usage: desc.usage,
        });
    }
    let linear = desc.format.remove_srgb_suffix();
    if desc
        .view_formats
        .iter()
        .any(|f| f.remove_srgb_suffix() != linear)
    {
        return Err(TextureError::IncompatibleView(
            "view formats may differ from the texture format only in sRGB-ness",
        ));
    }
    Ok(())
}

fn resolve_view(
    texture: &Texture,
    desc: &TextureViewDescriptor,
) -> Result<TextureView, TextureError> {
    let layout = &texture.layout;
    let facts = crate::validate::TextureFacts {
        format: layout.format,
        dimension: layout.dimension,
        size: layout.size,
        mip_level_count: layout.mip_level_count,
        sample_count: layout.sample_count,
        usage: texture.usage,
        view_formats: &texture.view_formats,
    };
    // Noop makes cube-array views wherever a texture can be a cube.
    let view = crate::validate::view::check_view(&facts, desc, true)?;
    Ok(TextureView {
        bytes: Arc::clone(&texture.bytes),
        layout: *layout,
        format: view.format,
        dimension: view.dimension,
        range: view.range,
        usage: texture.usage,
    })
}

fn check_sampler(desc: &SamplerDescriptor) -> Result<(), SamplerError> {
    let all_linear = desc.mag_filter == wgt::FilterMode::Linear
        && desc.min_filter == wgt::FilterMode::Linear
        && desc.mipmap_filter == wgt::MipmapFilterMode::Linear;
    if desc.anisotropy_clamp == 0 || (desc.anisotropy_clamp > 1 && !all_linear) {
        return Err(SamplerError::InvalidAnisotropy(desc.anisotropy_clamp));
    }
    // WebGPU's rule: 0 <= min <= max (equal bounds are allowed). Written so
    // that NaN fails too.
    let (min, max) = (desc.lod_clamp.start, desc.lod_clamp.end);
    if !(min >= 0.0 && max >= min) {
        return Err(SamplerError::InvalidLodClamp);
    }
    Ok(())
}
