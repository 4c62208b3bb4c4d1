//! Resource creation and destruction on a Vulkan device.
//!
//! Each `create_*` checks what is cheap to check (docs/design.md §1), then makes
//! the driver calls; a raw handle is released on every error path after it
//! exists. Every create and destroy updates the device's live counters.

use std::time::Duration;

use ash::vk;

use super::conv::map_err;
use super::object_name::set_object_name;
use super::texture_checks::view_usage;
use super::{conv, memory::AllocError, DeviceShared};
use crate::validate::view::cube_compatible;
use crate::{
    BufferDescriptor, BufferError, BufferMapping, CommandEncoderDescriptor, DeviceError,
    FenceValue, LiveCounts, MapError, Memory, QuerySetDescriptor, QuerySetError, SamplerDescriptor,
    SamplerError, TextureDescriptor, TextureError, TextureViewDescriptor,
};

impl Drop for DeviceShared {
    fn drop(&mut self) {
        // Known driver bugs: some drivers must not destroy a device while
        // another thread creates a ray-tracing pipeline (`workarounds.rs`).
        let _serial = self.physical.workarounds.serialize_device_lifetime();
        self.instance
            .note_newer_extension_device(self.raw.handle(), self.features, false);
        // SAFETY: this is the last owner of the device: no encoder, queue or
        // device handle remains, and the caller destroyed every resource
        // (contract of `Device`). Descriptor pools of layouts the caller
        // leaked, then VMA's blocks, go before the device.
        unsafe {
            self.descriptors.destroy_all(&self.raw);
            self.compaction_pools
                .get_mut()
                .destroy_all(&self.raw, &self.counters.compaction_query_pools);
            self.memory.destroy(self.counters.memory_allocations.read());
            self.raw.destroy_device(None);
        }
    }
}

/// Checks a buffer description (the shared checks of `validate/buffer.rs`)
/// and returns its Vulkan usage.
pub(super) fn buffer_usage(
    shared: &DeviceShared,
    desc: &BufferDescriptor,
) -> Result<vk::BufferUsageFlags, BufferError> {
    crate::validate::buffer::check_buffer(desc, &shared.limits)?;
    let accel = shared
        .hal_features
        .contains(crate::HalFeatures::ACCELERATION_STRUCTURE);
    let usage = conv::map_buffer_usage(desc.usage, accel);
    // Vulkan needs some usage; a buffer only mapped can still be copied.
    Ok(if usage.is_empty() {
        vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST
    } else {
        usage
    })
}

impl From<AllocError> for TextureError {
    fn from(e: AllocError) -> Self {
        match e {
            AllocError::NoSuitableMemory => TextureError::NoSuitableMemory,
            AllocError::Device(d) => TextureError::Device(d),
        }
    }
}

impl crate::Device for super::Device {
    type A = super::Api;

    unsafe fn create_buffer(&self, desc: &BufferDescriptor) -> Result<super::Buffer, BufferError> {
        self.shared.guard(|| {
            let shared = &*self.shared;
            let usage = buffer_usage(shared, desc)?;
            let info = vk::BufferCreateInfo::default()
                .size(desc.size)
                .usage(usage)
                .sharing_mode(vk::SharingMode::EXCLUSIVE);
            if let Memory::External(external) = desc.memory {
                // Dedicated, exportable memory outside VMA (external.rs).
                // SAFETY: `info` is valid, as below.
                return unsafe { super::external::create_buffer(shared, desc, info, external) };
            }
            // SAFETY: `info` is valid: non-zero size within maxBufferSize, usage non-empty.
            let created = unsafe {
                shared
                    .memory
                    .create_buffer(&info, desc.memory, &shared.counters.memory_allocations)
            };
            let (raw, block, mapped) = created.map_err(|e| match e {
                AllocError::NoSuitableMemory => BufferError::NoSuitableMemory {
                    memory: desc.memory,
                },
                AllocError::Device(d) => BufferError::Device(d),
            })?;
            shared.counters.buffers.add();
            if let Some(label) = desc.label {
                // SAFETY: `raw` is live.
                unsafe { set_object_name(shared, raw, label) };
            }
            Ok(super::Buffer {
                raw,
                block,
                size: desc.size,
                usage: desc.usage,
                memory: desc.memory,
                mapped,
                address: Default::default(),
            })
        })
    }

    unsafe fn destroy_buffer(&self, buffer: super::Buffer) {
        self.shared.retire_after_loss();
        let shared = &*self.shared;
        // SAFETY: the caller guarantees the buffer is ours and idle.
        unsafe {
            shared.memory.destroy_buffer(
                buffer.raw,
                buffer.block,
                &shared.counters.memory_allocations,
            )
        };
        shared.counters.buffers.sub();
    }

    unsafe fn map_buffer(&self, buffer: &super::Buffer) -> Result<BufferMapping, MapError> {
        self.shared.guard(|| match buffer.mapped {
            Some(ptr) => Ok(BufferMapping {
                ptr,
                size: buffer.size,
            }),
            None => Err(MapError::NotMappable(buffer.memory)),
        })
    }

    unsafe fn unmap_buffer(&self, _buffer: &super::Buffer) {
        // Mappings are persistent and coherent: nothing to do.
    }

    unsafe fn create_texture(
        &self,
        desc: &TextureDescriptor,
    ) -> Result<super::Texture, TextureError> {
        self.shared.guard(|| {
            let shared = &*self.shared;
            // SAFETY: live device. (The shared checks refuse memory other
            // than `Device` or external.)
            let plan = unsafe { texture_plan(shared, desc) }?;
            if let Memory::External(external) = desc.memory {
                // Dedicated, exportable memory outside VMA (external.rs).
                // SAFETY: the plan was checked against the format's image properties.
                return unsafe {
                    super::external_texture::create_texture(shared, desc, &plan, external)
                };
            }
            let mut list_info = vk::ImageFormatListCreateInfo::default();
            let info = plan.info(vk::ImageTiling::OPTIMAL, &mut list_info);
            // SAFETY: `info` was checked against the format's image properties.
            let (raw, block) = unsafe {
                shared
                    .memory
                    .create_image(&info, &shared.counters.memory_allocations)
            }?;
            shared.counters.textures.add();
            if let Some(label) = desc.label {
                // SAFETY: `raw` is live.
                unsafe { set_object_name(shared, raw, label) };
            }
            Ok(super::Texture {
                raw,
                block,
                format: desc.format,
                dimension: desc.dimension,
                size: desc.size,
                mip_level_count: desc.mip_level_count,
                sample_count: desc.sample_count,
                usage: desc.usage,
                view_formats: desc.view_formats.to_vec(),
            })
        })
    }

    unsafe fn destroy_texture(&self, texture: super::Texture) {
        self.shared.retire_after_loss();
        let shared = &*self.shared;
        if let super::memory::Block::External(_) = texture.block {
            shared.instance.note_external_image(texture.raw, false);
        }
        // SAFETY: the caller guarantees the texture is ours, idle and viewless.
        unsafe {
            shared.memory.destroy_image(
                texture.raw,
                texture.block,
                &shared.counters.memory_allocations,
            )
        };
        shared.counters.textures.sub();
    }

    unsafe fn create_texture_view(
        &self,
        texture: &super::Texture,
        desc: &TextureViewDescriptor,
    ) -> Result<super::TextureView, TextureError> {
        self.shared.guard(|| {
            let shared = &*self.shared;
            let facts = texture.facts();
            let cube_arrays = shared
                .enabled
                .has(crate::features::vulkan_column::Bit::ImageCubeArray);
            let view = crate::validate::view::check_view(&facts, desc, cube_arrays)?;
            let aspect = conv::map_aspect(texture.format, desc.range.aspect);
            let view_format = view.format;
            // Set for a view in another format whose features lack some of the
            // image's usages: the view is restricted to the usages it supports.
            let mut restricted_usage = None;
            let mut view_usages = texture.usage;
            // A plane's view takes the plane's format (the image is
            // MUTABLE_FORMAT | EXTENDED_USAGE); other aspect views keep the
            // image's.
            let planar = texture.format.is_multi_planar_format();
            let vk_format = if !planar
                && (view_format == texture.format
                    || texture.format.aspect_specific_format(desc.range.aspect)
                        == Some(view_format))
            {
                // Depth or stencil views of a combined format use the combined format.
                conv::map_texture_format(texture.format)
            } else {
                // One of the texture's view formats (checked above).
                let vk_format = conv::map_texture_format(view_format);
                let image_usage = conv::map_texture_usage(texture.usage, texture.format);
                // SAFETY: the physical device belongs to this instance.
                let features = unsafe {
                    shared.formats.format_properties(
                        &shared.instance.raw,
                        shared.physical_device,
                        vk_format,
                    )
                }
                .optimal_tiling_features;
                let usage = view_usage(image_usage, features);
                if usage.is_empty() {
                    return Err(TextureError::IncompatibleView {
                        asked: format!("view format {view_format:?}"),
                        allowed: format!(
                            "formats supporting one of the texture's usages {} here",
                            crate::validate::flag_names(texture.usage)
                        ),
                    });
                }
                if usage != image_usage {
                    restricted_usage = Some(usage);
                    if !usage.contains(vk::ImageUsageFlags::STORAGE) {
                        view_usages -= wgt::TextureUsages::STORAGE_BINDING;
                    }
                    if !usage.contains(vk::ImageUsageFlags::SAMPLED) {
                        view_usages -= wgt::TextureUsages::TEXTURE_BINDING;
                    }
                }
                vk_format
            };
            let (base_mip, mips) = (desc.range.base_mip_level, view.mip_level_count);
            let (base_layer, layers) = (desc.range.base_array_layer, view.array_layer_count);
            let dimension = view.dimension;
            let mut usage_info =
                vk::ImageViewUsageCreateInfo::default().usage(restricted_usage.unwrap_or_default());
            let mut info = vk::ImageViewCreateInfo::default()
                .image(texture.raw)
                .view_type(conv::map_view_dimension(dimension))
                .format(vk_format)
                .subresource_range(vk::ImageSubresourceRange {
                    aspect_mask: aspect,
                    base_mip_level: base_mip,
                    level_count: mips,
                    base_array_layer: base_layer,
                    layer_count: layers,
                });
            if restricted_usage.is_some() {
                info = info.push_next(&mut usage_info);
            }
            // SAFETY: the range, dimension, format and usage were checked against the texture.
            let raw = unsafe { shared.raw.create_image_view(&info, None) }.map_err(map_err)?;
            shared.counters.texture_views.add();
            if let Some(label) = desc.label {
                // SAFETY: `raw` is live.
                unsafe { set_object_name(shared, raw, label) };
            }
            let sample_type =
                crate::validate::view_sample_type(view_format, view.range.aspect, shared.features);
            Ok(super::TextureView {
                raw,
                format: view_format,
                range: view.range,
                dimension,
                sample_count: texture.sample_count,
                usage: view_usages,
                sample_type,
                key: crate::validate::binding::ViewKey::of(
                    view_usages,
                    dimension,
                    texture.sample_count,
                    sample_type,
                ),
            })
        })
    }

    unsafe fn destroy_texture_view(&self, view: super::TextureView) {
        self.shared.retire_after_loss();
        // SAFETY: the caller guarantees the view is ours and idle.
        unsafe { self.shared.raw.destroy_image_view(view.raw, None) };
        self.shared.counters.texture_views.sub();
    }

    unsafe fn create_sampler(
        &self,
        desc: &SamplerDescriptor,
    ) -> Result<super::Sampler, SamplerError> {
        self.shared.guard(|| {
            let shared = &*self.shared;
            let anisotropy = shared
                .enabled
                .has(crate::features::vulkan_column::Bit::SamplerAnisotropy);
            crate::validate::sampler::check_sampler(desc, anisotropy, shared.features)?;
            let lod = &desc.lod_clamp;
            let aniso = desc.anisotropy_clamp;
            let max_aniso = shared.physical.properties.limits.max_sampler_anisotropy;
            let [u, v, w] = desc.address_modes.map(conv::map_address_mode);
            let mut info = vk::SamplerCreateInfo::default()
                .mag_filter(conv::map_filter(desc.mag_filter))
                .min_filter(conv::map_filter(desc.min_filter))
                .mipmap_mode(conv::map_mipmap_filter(desc.mipmap_filter))
                .address_mode_u(u)
                .address_mode_v(v)
                .address_mode_w(w)
                .min_lod(lod.start)
                .max_lod(lod.end)
                .border_color(conv::map_border_color(
                    desc.border_color
                        .unwrap_or(wgt::SamplerBorderColor::TransparentBlack),
                ));
            if aniso > 1 {
                info = info
                    .anisotropy_enable(true)
                    .max_anisotropy(f32::from(aniso).min(max_aniso));
            }
            if let Some(compare) = desc.compare {
                info = info
                    .compare_enable(true)
                    .compare_op(conv::map_compare_function(compare));
            }
            // SAFETY: the description was checked above.
            let raw = unsafe { shared.raw.create_sampler(&info, None) }.map_err(map_err)?;
            shared.counters.samplers.add();
            if let Some(label) = desc.label {
                // SAFETY: `raw` is live.
                unsafe { set_object_name(shared, raw, label) };
            }
            Ok(super::Sampler {
                raw,
                facts: crate::validate::SamplerFacts::of(desc),
            })
        })
    }

    unsafe fn destroy_sampler(&self, sampler: super::Sampler) {
        self.shared.retire_after_loss();
        // SAFETY: the caller guarantees the sampler is ours and idle.
        unsafe { self.shared.raw.destroy_sampler(sampler.raw, None) };
        self.shared.counters.samplers.sub();
    }

    unsafe fn create_command_encoder(
        &self,
        desc: &CommandEncoderDescriptor,
    ) -> Result<super::CommandEncoder, DeviceError> {
        self.shared.guard(|| {
            let shared = &self.shared;
            // Transient: command buffers are short-lived and recycled by resetting the pool.
            let info = vk::CommandPoolCreateInfo::default()
                .flags(vk::CommandPoolCreateFlags::TRANSIENT)
                .queue_family_index(shared.queue_family_index);
            // SAFETY: valid description for this device's queue family.
            let pool = unsafe { shared.raw.create_command_pool(&info, None) }.map_err(map_err)?;
            shared.counters.command_encoders.add();
            if let Some(label) = desc.label {
                // SAFETY: `pool` is live.
                unsafe { set_object_name(shared, pool, label) };
            }
            Ok(super::CommandEncoder {
                device: shared.clone(),
                fns: shared.raw.clone(),
                pool,
                active: None,
                free: Vec::new(),
                allocated: Vec::new(),
                temp: Default::default(),
                compaction_slots: Vec::new(),
            })
        })
    }

    unsafe fn destroy_command_encoder(&self, mut encoder: super::CommandEncoder) {
        self.shared.retire_after_loss();
        // SAFETY: the same contract: none of its recordings is pending.
        unsafe { encoder.release_compaction_slots() };
        // SAFETY: the caller guarantees none of the pool's command buffers is
        // pending; destroying the pool frees them all.
        unsafe { self.shared.raw.destroy_command_pool(encoder.pool, None) };
        self.shared.counters.command_encoders.sub();
    }

    unsafe fn create_query_set(
        &self,
        desc: &QuerySetDescriptor,
    ) -> Result<super::QuerySet, QuerySetError> {
        self.shared.guard(|| {
            let shared = &*self.shared;
            crate::validate::query::check_query_set(desc, shared.features)?;
            let (query_type, statistics) = conv::map_query_type(desc.ty);
            let info = vk::QueryPoolCreateInfo::default()
                .query_type(query_type)
                .pipeline_statistics(statistics)
                .query_count(desc.count);
            // SAFETY: valid description; timestamp and pipeline-statistics
            // support were checked (the device enabled
            // `pipelineStatisticsQuery` with the feature).
            let raw = unsafe { shared.raw.create_query_pool(&info, None) }.map_err(map_err)?;
            shared.counters.query_sets.add();
            if let Some(label) = desc.label {
                // SAFETY: `raw` is live.
                unsafe { set_object_name(shared, raw, label) };
            }
            Ok(super::QuerySet {
                raw,
                ty: desc.ty,
                count: desc.count,
            })
        })
    }

    unsafe fn destroy_query_set(&self, set: super::QuerySet) {
        self.shared.retire_after_loss();
        // SAFETY: the caller guarantees the set is ours and idle.
        unsafe { self.shared.raw.destroy_query_pool(set.raw, None) };
        self.shared.counters.query_sets.sub();
    }

    unsafe fn create_fence(&self) -> Result<super::Fence, DeviceError> {
        self.shared.guard(|| {
            let mut ty = vk::SemaphoreTypeCreateInfo::default()
                .semaphore_type(vk::SemaphoreType::TIMELINE)
                .initial_value(0);
            let info = vk::SemaphoreCreateInfo::default().push_next(&mut ty);
            // SAFETY: timeline semaphores are enabled on every keel-hal device.
            let raw = unsafe { self.shared.raw.create_semaphore(&info, None) }.map_err(map_err)?;
            self.shared.counters.fences.add();
            Ok(super::Fence { raw })
        })
    }

    unsafe fn destroy_fence(&self, fence: super::Fence) {
        self.shared.retire_after_loss();
        // SAFETY: the caller guarantees no pending submission signals it.
        unsafe { self.shared.raw.destroy_semaphore(fence.raw, None) };
        self.shared.counters.fences.sub();
    }

    unsafe fn get_fence_value(&self, fence: &super::Fence) -> Result<FenceValue, DeviceError> {
        self.shared.guard(|| {
            // SAFETY: the fence is a timeline semaphore of this device.
            unsafe { self.shared.raw.get_semaphore_counter_value(fence.raw) }.map_err(map_err)
        })
    }

    unsafe fn wait(
        &self,
        fence: &super::Fence,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, DeviceError> {
        self.shared.guard(|| {
            let timeout_ns = timeout.map_or(u64::MAX, |d| {
                u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
            });
            let semaphores = [fence.raw];
            let values = [value];
            let info = vk::SemaphoreWaitInfo::default()
                .semaphores(&semaphores)
                .values(&values);
            // SAFETY: the fence is a timeline semaphore of this device.
            match unsafe { self.shared.raw.wait_semaphores(&info, timeout_ns) } {
                Ok(()) => Ok(true),
                Err(vk::Result::TIMEOUT) => Ok(false),
                Err(e) => Err(map_err(e)),
            }
        })
    }

    unsafe fn wait_idle(&self) -> Result<(), DeviceError> {
        self.shared.guard(|| {
            // vkDeviceWaitIdle needs the queue externally synchronised.
            let _queue = self.shared.queue_lock.lock();
            // SAFETY: live device; the queue lock is held.
            unsafe { self.shared.raw.device_wait_idle() }.map_err(map_err)
        })
    }

    // Bindings live in binding.rs, shaders and pipelines in pipeline.rs.

    unsafe fn create_bind_group_layout(
        &self,
        desc: &crate::BindGroupLayoutDescriptor,
    ) -> Result<super::BindGroupLayout, crate::BindingError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::binding::create_bind_group_layout(self, desc) }
        })
    }

    unsafe fn destroy_bind_group_layout(&self, layout: super::BindGroupLayout) {
        self.shared.retire_after_loss();
        // SAFETY: forwarded contract.
        unsafe { super::binding::destroy_bind_group_layout(self, layout) }
    }

    unsafe fn create_bind_group(
        &self,
        desc: &crate::BindGroupDescriptor<super::Api>,
    ) -> Result<super::BindGroup, crate::BindingError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::binding::create_bind_group(self, desc) }
        })
    }

    unsafe fn destroy_bind_group(&self, group: super::BindGroup) {
        self.shared.retire_after_loss();
        // SAFETY: forwarded contract.
        unsafe { super::binding::destroy_bind_group(self, group) }
    }

    unsafe fn create_pipeline_layout(
        &self,
        desc: &crate::PipelineLayoutDescriptor<super::Api>,
    ) -> Result<super::PipelineLayout, crate::BindingError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::binding::create_pipeline_layout(self, desc) }
        })
    }

    unsafe fn destroy_pipeline_layout(&self, layout: super::PipelineLayout) {
        self.shared.retire_after_loss();
        // SAFETY: forwarded contract.
        unsafe { super::binding::destroy_pipeline_layout(self, layout) }
    }

    unsafe fn create_shader_module(
        &self,
        desc: &crate::ShaderModuleDescriptor,
    ) -> Result<super::ShaderModule, crate::ShaderError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::pipeline::create_shader_module(self, desc) }
        })
    }

    unsafe fn destroy_shader_module(&self, module: super::ShaderModule) {
        self.shared.retire_after_loss();
        // SAFETY: forwarded contract.
        unsafe { super::pipeline::destroy_shader_module(self, module) }
    }

    unsafe fn create_render_pipeline(
        &self,
        desc: &crate::RenderPipelineDescriptor<super::Api>,
    ) -> Result<super::RenderPipeline, crate::PipelineError> {
        self.shared.guard(|| {
            crate::adapter::check_shader_execution(self.shared.hal_features, false)?;
            // SAFETY: forwarded contract.
            unsafe { super::pipeline::create_render_pipeline(self, desc) }
        })
    }

    unsafe fn create_mesh_pipeline(
        &self,
        desc: &crate::MeshPipelineDescriptor<super::Api>,
    ) -> Result<super::RenderPipeline, crate::PipelineError> {
        self.shared.guard(|| {
            crate::adapter::check_shader_execution(self.shared.hal_features, false)?;
            // SAFETY: forwarded contract.
            unsafe { super::pipeline::create_mesh_pipeline(self, desc) }
        })
    }

    unsafe fn destroy_render_pipeline(&self, pipeline: super::RenderPipeline) {
        self.shared.retire_after_loss();
        // SAFETY: forwarded contract.
        unsafe { super::pipeline::destroy_render_pipeline(self, pipeline) }
    }

    unsafe fn create_compute_pipeline(
        &self,
        desc: &crate::ComputePipelineDescriptor<super::Api>,
    ) -> Result<super::ComputePipeline, crate::PipelineError> {
        self.shared.guard(|| {
            crate::adapter::check_shader_execution(self.shared.hal_features, false)?;
            // SAFETY: forwarded contract.
            unsafe { super::pipeline::create_compute_pipeline(self, desc) }
        })
    }

    unsafe fn destroy_compute_pipeline(&self, pipeline: super::ComputePipeline) {
        self.shared.retire_after_loss();
        // SAFETY: forwarded contract.
        unsafe { super::pipeline::destroy_compute_pipeline(self, pipeline) }
    }

    unsafe fn create_pipeline_cache(
        &self,
        desc: &crate::PipelineCacheDescriptor,
    ) -> Result<super::PipelineCache, crate::PipelineCacheError> {
        // SAFETY: forwarded contract.
        self.shared
            .guard(|| unsafe { super::pipeline_cache::create(self, desc) })
    }

    unsafe fn pipeline_cache_get_data(
        &self,
        cache: &super::PipelineCache,
    ) -> Result<Vec<u8>, DeviceError> {
        // SAFETY: forwarded contract.
        self.shared
            .guard(|| unsafe { super::pipeline_cache::data(self, cache) })
    }

    unsafe fn destroy_pipeline_cache(&self, cache: super::PipelineCache) {
        self.shared.retire_after_loss();
        // SAFETY: forwarded contract.
        unsafe { super::pipeline_cache::destroy(self, cache) }
    }

    // Acceleration structures live in acceleration.rs, ray-tracing pipelines in ray_tracing.rs.

    unsafe fn get_acceleration_structure_build_sizes(
        &self,
        desc: &crate::GetAccelerationStructureBuildSizesDescriptor<super::Api>,
    ) -> Result<crate::AccelerationStructureBuildSizes, crate::AccelerationStructureError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::acceleration::build_sizes(self, desc) }
        })
    }

    unsafe fn create_acceleration_structure(
        &self,
        desc: &crate::AccelerationStructureDescriptor<super::Api>,
    ) -> Result<super::AccelerationStructure, crate::AccelerationStructureError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::acceleration::create(self, desc) }
        })
    }

    unsafe fn destroy_acceleration_structure(&self, structure: super::AccelerationStructure) {
        self.shared.retire_after_loss();
        // SAFETY: forwarded contract.
        unsafe { super::acceleration::destroy(self, structure) }
    }

    unsafe fn get_acceleration_structure_device_address(
        &self,
        structure: &super::AccelerationStructure,
    ) -> u64 {
        // SAFETY: forwarded contract.
        unsafe { super::acceleration::device_address(self, structure) }
    }

    unsafe fn get_acceleration_structure_size(
        &self,
        structure: &super::AccelerationStructure,
    ) -> u64 {
        // SAFETY: forwarded contract.
        unsafe { super::acceleration::size(structure) }
    }

    unsafe fn create_ray_tracing_pipeline(
        &self,
        desc: &crate::RayTracingPipelineDescriptor<super::Api>,
    ) -> Result<super::RayTracingPipeline, crate::PipelineError> {
        self.shared.guard(|| {
            crate::adapter::check_shader_execution(self.shared.hal_features, false)?;
            // SAFETY: forwarded contract.
            unsafe { super::ray_tracing::create_pipeline(self, desc) }
        })
    }

    unsafe fn destroy_ray_tracing_pipeline(&self, pipeline: super::RayTracingPipeline) {
        self.shared.retire_after_loss();
        // SAFETY: forwarded contract.
        unsafe { super::ray_tracing::destroy_pipeline(self, pipeline) }
    }

    unsafe fn create_shader_binding_table(
        &self,
        pipeline: &super::RayTracingPipeline,
        desc: &crate::ShaderBindingTableDescriptor,
    ) -> Result<crate::ShaderBindingTable<super::Buffer>, crate::PipelineError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::ray_tracing::create_shader_binding_table(self, pipeline, desc) }
        })
    }

    unsafe fn destroy_shader_binding_table(&self, table: crate::ShaderBindingTable<super::Buffer>) {
        self.shared.retire_after_loss();
        // SAFETY: forwarded contract.
        unsafe { super::ray_tracing::destroy_shader_binding_table(self, table) }
    }

    fn live_counts(&self) -> LiveCounts {
        let mut counts = self.shared.counters.snapshot();
        // Bind groups are counted by the descriptor allocator, under the
        // lock their creation takes anyway (no atomic of their own).
        let live = self.shared.descriptors.live_sets();
        counts.bind_groups = isize::try_from(live).unwrap_or(isize::MAX);
        counts
    }

    fn shader_capabilities(&self) -> naga::valid::Capabilities {
        super::pipeline::shader_capabilities(&self.shared)
    }

    fn memory_report(&self) -> crate::MemoryReport {
        self.shared.memory.report()
    }

    unsafe fn buffer_placement(&self, buffer: &super::Buffer) -> Option<crate::MemoryPlacement> {
        self.shared.memory.placement(&buffer.block)
    }

    unsafe fn texture_placement(&self, texture: &super::Texture) -> Option<crate::MemoryPlacement> {
        self.shared.memory.placement(&texture.block)
    }

    fn trim_memory(&self) -> u64 {
        // SAFETY: the pools are this device's.
        let pools = unsafe { self.shared.compaction_pools.lock().trim(&self.shared.raw) };
        if pools > 0 {
            log::debug!("keel-hal: trim_memory destroyed {pools} idle compaction query pool(s)");
        }
        self.shared.memory.trim()
    }

    fn set_memory_retention(&self, limit_bytes: u64) {
        self.shared.memory.set_retention_limit(limit_bytes)
    }

    fn is_lost(&self) -> bool {
        self.shared.lost.is_lost()
    }
    // External memory and semaphores: external.rs, external_texture.rs, external_sync.rs.

    unsafe fn import_buffer(
        &self,
        desc: &BufferDescriptor,
        handle: crate::ExternalHandle,
    ) -> Result<super::Buffer, BufferError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::external::import_buffer(&self.shared, desc, handle) }
        })
    }

    unsafe fn import_texture(
        &self,
        desc: &TextureDescriptor,
        handle: crate::ExternalHandle,
    ) -> Result<super::Texture, TextureError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::external_texture::import_texture(&self.shared, desc, handle) }
        })
    }

    unsafe fn export_buffer_memory(
        &self,
        buffer: &super::Buffer,
        handle_type: crate::ExternalHandleType,
    ) -> Result<crate::ExportedMemory, crate::ExternalError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::external::export_buffer(&self.shared, buffer, handle_type) }
        })
    }

    unsafe fn export_texture_memory(
        &self,
        texture: &super::Texture,
        handle_type: crate::ExternalHandleType,
    ) -> Result<crate::ExportedMemory, crate::ExternalError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::external_texture::export_texture(&self.shared, texture, handle_type) }
        })
    }

    unsafe fn create_external_semaphore(
        &self,
        desc: &crate::ExternalSemaphoreDescriptor,
    ) -> Result<super::ExternalSemaphore, crate::ExternalError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::external_sync::create_semaphore(&self.shared, desc) }
        })
    }

    unsafe fn import_semaphore(
        &self,
        desc: &crate::ExternalSemaphoreDescriptor,
        fd: std::os::fd::OwnedFd,
    ) -> Result<super::ExternalSemaphore, crate::ExternalError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::external_sync::import_semaphore(&self.shared, desc, fd) }
        })
    }

    unsafe fn export_semaphore(
        &self,
        semaphore: &super::ExternalSemaphore,
    ) -> Result<std::os::fd::OwnedFd, crate::ExternalError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::external_sync::export_semaphore(&self.shared, semaphore) }
        })
    }

    unsafe fn destroy_external_semaphore(&self, semaphore: super::ExternalSemaphore) {
        self.shared.retire_after_loss();
        // SAFETY: forwarded contract.
        unsafe { super::external_sync::destroy_semaphore(&self.shared, semaphore) }
    }

    unsafe fn semaphore_value(
        &self,
        semaphore: &super::ExternalSemaphore,
    ) -> Result<FenceValue, crate::ExternalError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::external_sync::semaphore_value(&self.shared, semaphore) }
        })
    }

    unsafe fn signal_semaphore(
        &self,
        semaphore: &super::ExternalSemaphore,
        value: FenceValue,
    ) -> Result<(), crate::ExternalError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::external_sync::signal_semaphore(&self.shared, semaphore, value) }
        })
    }

    unsafe fn wait_semaphore(
        &self,
        semaphore: &super::ExternalSemaphore,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, crate::ExternalError> {
        self.shared.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::external_sync::wait_semaphore(&self.shared, semaphore, value, timeout) }
        })
    }
}

/// What `create_texture` derived from a checked texture description: the
/// parts of its `VkImageCreateInfo`.
#[derive(Debug)]
pub(super) struct TexturePlan {
    pub(super) flags: vk::ImageCreateFlags,
    pub(super) image_type: vk::ImageType,
    pub(super) format: vk::Format,
    pub(super) extent: vk::Extent3D,
    pub(super) mip_levels: u32,
    pub(super) layers: u32,
    pub(super) samples: vk::SampleCountFlags,
    pub(super) usage: vk::ImageUsageFlags,
    /// The image format and its view formats, when views may differ (`MUTABLE_FORMAT`).
    pub(super) format_list: Vec<vk::Format>,
}

impl TexturePlan {
    /// The image's create info, with `list` chained when views may differ.
    pub(super) fn info<'a>(
        &'a self,
        tiling: vk::ImageTiling,
        list: &'a mut vk::ImageFormatListCreateInfo<'a>,
    ) -> vk::ImageCreateInfo<'a> {
        let info = vk::ImageCreateInfo::default()
            .flags(self.flags)
            .image_type(self.image_type)
            .format(self.format)
            .extent(self.extent)
            .mip_levels(self.mip_levels)
            .array_layers(self.layers)
            .samples(self.samples)
            .tiling(tiling)
            .usage(self.usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        if self.format_list.is_empty() {
            info
        } else {
            *list = vk::ImageFormatListCreateInfo::default().view_formats(&self.format_list);
            info.push_next(list)
        }
    }
}

/// Checks a texture description (the shared checks of `validate/texture.rs`,
/// then the format's optimal-tiling features and image properties on this
/// adapter) and plans the image.
///
/// # Safety
/// `shared` is a live device.
pub(super) unsafe fn texture_plan(
    shared: &DeviceShared,
    desc: &TextureDescriptor,
) -> Result<TexturePlan, TextureError> {
    crate::validate::texture::check_texture(desc, &shared.limits, shared.features)?;
    let unsupported = TextureError::UnsupportedFormat {
        format: desc.format,
        usage: desc.usage,
    };
    let format = conv::map_texture_format(desc.format);
    if format == vk::Format::UNDEFINED {
        return Err(unsupported);
    }
    let format_samples = TextureError::InvalidSampleCount {
        count: desc.sample_count,
        reason: crate::validate::texture::FORMAT_SAMPLES,
    };
    // Every count the shared check lets through has a Vulkan flag.
    let samples = conv::map_sample_count(desc.sample_count).ok_or(format_samples.clone())?;
    let mut usage = conv::map_texture_usage(desc.usage, desc.format);
    if usage.is_empty() {
        // Vulkan needs some usage; an unused texture can still be a copy target.
        usage = vk::ImageUsageFlags::TRANSFER_DST;
    }
    let instance = &shared.instance.raw;
    let pd = shared.physical_device;
    // SAFETY: the physical device belongs to this instance.
    let props = unsafe { shared.formats.format_properties(instance, pd, format) };
    let needed = conv::usage_format_features(usage);
    if !props.optimal_tiling_features.contains(needed) {
        return Err(unsupported);
    }

    let mut flags = vk::ImageCreateFlags::empty();
    let mut format_list: Vec<vk::Format> = Vec::new();
    if desc.view_formats.iter().any(|f| *f != desc.format) {
        flags |= vk::ImageCreateFlags::MUTABLE_FORMAT;
        format_list.push(format);
        for f in desc.view_formats {
            // Each differs from the format in sRGB-ness at most (checked).
            let vf = conv::map_texture_format(*f);
            if vf == vk::Format::UNDEFINED {
                return Err(TextureError::UnsupportedFormat {
                    format: *f,
                    usage: desc.usage,
                });
            }
            if !format_list.contains(&vf) {
                format_list.push(vf);
            }
        }
    }
    if desc.format.is_multi_planar_format() {
        // Plane views take the plane's format (R8, Rg8, …), whose features
        // the multi-planar format need not list for every usage.
        flags |= vk::ImageCreateFlags::MUTABLE_FORMAT | vk::ImageCreateFlags::EXTENDED_USAGE;
    }
    if cube_compatible(desc.dimension, desc.size, desc.sample_count, desc.usage) {
        flags |= vk::ImageCreateFlags::CUBE_COMPATIBLE;
    }
    let image_type = conv::map_texture_dimension(desc.dimension);
    // SAFETY: as above; the arguments are valid enum values.
    let image_props = unsafe {
        shared
            .formats
            .image_properties(instance, pd, (format, image_type, usage, flags))
    }
    .map_err(|e| TextureError::Device(map_err(e)))?
    .ok_or(unsupported)?;
    let (extent, layers) = match desc.dimension {
        wgt::TextureDimension::D3 => (conv::map_extent(desc.size), 1),
        _ => (
            vk::Extent3D {
                width: desc.size.width,
                height: desc.size.height,
                depth: 1,
            },
            desc.size.depth_or_array_layers,
        ),
    };
    let m = image_props.max_extent;
    for (size, max) in [
        (extent.width, m.width),
        (extent.height, m.height),
        (extent.depth, m.depth),
    ] {
        if size > max {
            return Err(TextureError::TooLarge {
                extent: desc.size,
                limit: "the format's maxExtent on this adapter",
                max,
            });
        }
    }
    if layers > image_props.max_array_layers {
        return Err(TextureError::TooLarge {
            extent: desc.size,
            limit: "the format's maxArrayLayers on this adapter",
            max: image_props.max_array_layers,
        });
    }
    if desc.mip_level_count > image_props.max_mip_levels {
        return Err(TextureError::InvalidMipCount {
            requested: desc.mip_level_count,
            max: image_props.max_mip_levels,
        });
    }
    if !image_props.sample_counts.contains(samples) {
        return Err(format_samples);
    }

    Ok(TexturePlan {
        flags,
        image_type,
        format,
        extent,
        mip_levels: desc.mip_level_count,
        layers,
        samples,
        usage,
        format_list,
    })
}
