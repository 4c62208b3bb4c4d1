//! A physical device: what it can do, and opening a logical device on it.
//!
//! Probing reads properties, features and extensions once, into plain data
//! ([`PhysicalInfo`]); capabilities are derived from that, and `open` enables
//! exactly the Vulkan 1.3 baseline plus what the caller asked for.

use std::ffi::{CStr, CString};
use std::sync::Arc;

use ash::vk;

pub(crate) use super::physical_features::{DescriptorIndexing, PhysicalFeatures};
use super::{conv, instance::InstanceShared, memory::MemoryAllocator};
use crate::{
    AdapterInfo, Backend, Capabilities, DeviceDescriptor, ExposedAdapter, HalFeatures, OpenDevice,
    OpenError,
};

/// Ray-tracing limits, where the extensions exist.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RayLimits {
    pub(crate) max_geometry_count: u64,
    pub(crate) max_instance_count: u64,
    pub(crate) max_primitive_count: u64,
    pub(crate) max_per_stage_acceleration_structures: u32,
    /// `maxPerStageDescriptorUpdateAfterBindAccelerationStructures`.
    pub(crate) max_per_stage_update_after_bind_acceleration_structures: u32,
    pub(crate) max_ray_recursion_depth: u32,
    pub(crate) max_ray_dispatch_invocation_count: u32,
    /// `minAccelerationStructureScratchOffsetAlignment` (0 without the extension).
    pub(crate) min_scratch_offset_alignment: u32,
    /// Bytes of one shader group handle.
    pub(crate) shader_group_handle_size: u32,
    /// Alignment of each shader binding table record.
    pub(crate) shader_group_handle_alignment: u32,
    /// Alignment of each shader binding table region's start.
    pub(crate) shader_group_base_alignment: u32,
    /// Largest stride between shader binding table records.
    pub(crate) max_shader_group_stride: u32,
}

/// `VK_EXT_mesh_shader`'s limits (zeros without the extension), as
/// `wgpu-types` names them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MeshLimits {
    pub(crate) max_task_workgroup_total_count: u32,
    /// The least of `maxTaskWorkGroupCount`'s three.
    pub(crate) max_task_workgroups_per_dimension: u32,
    pub(crate) max_mesh_workgroup_total_count: u32,
    /// The least of `maxMeshWorkGroupCount`'s three.
    pub(crate) max_mesh_workgroups_per_dimension: u32,
    pub(crate) max_task_invocations_per_workgroup: u32,
    /// The least of `maxTaskWorkGroupSize`'s three.
    pub(crate) max_task_invocations_per_dimension: u32,
    pub(crate) max_mesh_invocations_per_workgroup: u32,
    /// The least of `maxMeshWorkGroupSize`'s three.
    pub(crate) max_mesh_invocations_per_dimension: u32,
    pub(crate) max_task_payload_size: u32,
    pub(crate) max_mesh_output_vertices: u32,
    pub(crate) max_mesh_output_primitives: u32,
    pub(crate) max_mesh_output_layers: u32,
    pub(crate) max_mesh_multiview_view_count: u32,
}

impl MeshLimits {
    fn from_properties(p: &vk::PhysicalDeviceMeshShaderPropertiesEXT<'_>) -> Self {
        let least = |v: [u32; 3]| v.into_iter().min().unwrap_or(0);
        Self {
            max_task_workgroup_total_count: p.max_task_work_group_total_count,
            max_task_workgroups_per_dimension: least(p.max_task_work_group_count),
            max_mesh_workgroup_total_count: p.max_mesh_work_group_total_count,
            max_mesh_workgroups_per_dimension: least(p.max_mesh_work_group_count),
            max_task_invocations_per_workgroup: p.max_task_work_group_invocations,
            max_task_invocations_per_dimension: least(p.max_task_work_group_size),
            max_mesh_invocations_per_workgroup: p.max_mesh_work_group_invocations,
            max_mesh_invocations_per_dimension: least(p.max_mesh_work_group_size),
            max_task_payload_size: p.max_task_payload_size,
            max_mesh_output_vertices: p.max_mesh_output_vertices,
            max_mesh_output_primitives: p.max_mesh_output_primitives,
            max_mesh_output_layers: p.max_mesh_output_layers,
            max_mesh_multiview_view_count: p.max_mesh_multiview_view_count,
        }
    }
}

/// Everything keel-hal reads from a physical device, read once.
#[derive(Clone, Debug)]
pub(crate) struct PhysicalInfo {
    pub(crate) properties: vk::PhysicalDeviceProperties,
    /// maintenance4's `maxBufferSize`.
    pub(crate) max_buffer_size: u64,
    pub(crate) driver_name: String,
    pub(crate) driver_info: String,
    pub(crate) features: PhysicalFeatures,
    pub(crate) extensions: Vec<CString>,
    pub(crate) ray_limits: RayLimits,
    pub(crate) mesh_limits: MeshLimits,
    /// The cooperative-matrix configurations shaders can name
    /// (`cooperative_matrix.rs`; empty without the extension).
    pub(crate) cooperative_matrices: Vec<wgt::CooperativeMatrixProperties>,
    /// Stages that may run subgroup operations, and the operations
    /// (`VkPhysicalDeviceVulkan11Properties`).
    pub(crate) subgroup_stages: vk::ShaderStageFlags,
    pub(crate) subgroup_operations: vk::SubgroupFeatureFlags,
    /// `maxMultiviewViewCount` (`VkPhysicalDeviceVulkan11Properties`).
    pub(crate) max_multiview_views: u32,
    /// The graphics + compute queue family used.
    pub(crate) queue_family_index: u32,
    pub(crate) timestamp_valid_bits: u32,
    /// Known driver bugs keel-hal works around on it (`workarounds.rs`).
    pub(crate) workarounds: super::workarounds::Workarounds,
}

impl PhysicalInfo {
    /// Whether the device has the extension.
    pub(crate) fn has(&self, name: &CStr) -> bool {
        self.extensions.iter().any(|e| e.as_c_str() == name)
    }
}

/// A Vulkan physical device that meets keel-hal's baseline.
#[derive(Debug)]
pub struct Adapter {
    pub(crate) raw: vk::PhysicalDevice,
    pub(crate) instance: Arc<InstanceShared>,
    pub(crate) info: PhysicalInfo,
    pub(crate) capabilities: Capabilities,
}

impl Adapter {
    /// The raw `VkPhysicalDevice`.
    pub fn raw(&self) -> vk::PhysicalDevice {
        self.raw
    }
}

/// Probes a physical device; `None` (logged) when it is below the baseline.
///
/// # Safety
/// `pd` was enumerated from `instance`.
pub(super) unsafe fn expose(
    instance: &Arc<InstanceShared>,
    pd: vk::PhysicalDevice,
) -> Option<ExposedAdapter<super::Api>> {
    // SAFETY: forwarded contract.
    let info = match unsafe { probe(&instance.entry, &instance.raw, pd) } {
        Ok(info) => info,
        Err(reason) => {
            log::info!("skipping Vulkan adapter: {reason}");
            return None;
        }
    };
    let p = &info.properties;
    let v = p.api_version;
    // SAFETY: forwarded contract.
    let ids = unsafe { device_ids(&instance.raw, pd) };
    let adapter_info = AdapterInfo {
        name: name_string(p.device_name_as_c_str()),
        vendor: p.vendor_id,
        device: p.device_id,
        device_type: match p.device_type {
            vk::PhysicalDeviceType::DISCRETE_GPU => wgt::DeviceType::DiscreteGpu,
            vk::PhysicalDeviceType::INTEGRATED_GPU => wgt::DeviceType::IntegratedGpu,
            vk::PhysicalDeviceType::VIRTUAL_GPU => wgt::DeviceType::VirtualGpu,
            vk::PhysicalDeviceType::CPU => wgt::DeviceType::Cpu,
            _ => wgt::DeviceType::Other,
        },
        driver: info.driver_name.clone(),
        driver_info: info.driver_info.clone(),
        api_version: (
            vk::api_version_major(v),
            vk::api_version_minor(v),
            vk::api_version_patch(v),
        ),
        backend: Backend::Vulkan,
        device_uuid: ids.device_uuid,
        driver_uuid: ids.driver_uuid,
        device_luid: (ids.device_luid_valid == vk::TRUE).then_some(ids.device_luid),
        device_node_mask: if ids.device_luid_valid == vk::TRUE {
            ids.device_node_mask
        } else {
            0
        },
    };
    let capabilities = Capabilities {
        features: conv::map_features(&info, |f| {
            // SAFETY: `pd` belongs to this instance.
            unsafe { optimal_format_features(&instance.raw, pd, f) }
        }),
        hal_features: hal_features(&info),
        limits: conv::map_limits(&info),
        timestamp_period: info.properties.limits.timestamp_period,
        cooperative_matrix_properties: if info.features.cooperative_matrix {
            info.cooperative_matrices.clone()
        } else {
            Vec::new()
        },
    };
    Some(ExposedAdapter {
        adapter: Adapter {
            raw: pd,
            instance: instance.clone(),
            info,
            capabilities: capabilities.clone(),
        },
        info: adapter_info,
        capabilities,
    })
}

/// The device's identity (`VkPhysicalDeviceIDProperties`, core 1.1): the
/// UUIDs and LUID another API matches its device with.
///
/// # Safety
/// `pd` was enumerated from `instance`.
unsafe fn device_ids(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
) -> vk::PhysicalDeviceIDProperties<'static> {
    let mut ids = vk::PhysicalDeviceIDProperties::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut ids);
    // SAFETY: forwarded contract; a core 1.1 struct in the chain.
    unsafe { instance.get_physical_device_properties2(pd, &mut props2) };
    // A copy without the chain's lifetime.
    vk::PhysicalDeviceIDProperties {
        device_uuid: ids.device_uuid,
        driver_uuid: ids.driver_uuid,
        device_luid: ids.device_luid,
        device_node_mask: ids.device_node_mask,
        device_luid_valid: ids.device_luid_valid,
        ..Default::default()
    }
}

/// A Vulkan name as a `String` (empty if the driver did not terminate it).
fn name_string(name: Result<&CStr, std::ffi::FromBytesUntilNulError>) -> String {
    name.map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Reads the device; `Err` explains why it does not meet the baseline.
///
/// # Safety
/// `pd` was enumerated from `instance`.
unsafe fn probe(
    entry: &ash::Entry,
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
) -> Result<PhysicalInfo, String> {
    // SAFETY: valid physical device of this instance (all calls below).
    let properties = unsafe { instance.get_physical_device_properties(pd) };
    let name = name_string(properties.device_name_as_c_str());
    let v = properties.api_version;
    if v < super::instance::API_VERSION {
        return Err(format!(
            "{name} supports Vulkan {}.{}.{}, keel-hal needs 1.3",
            vk::api_version_major(v),
            vk::api_version_minor(v),
            vk::api_version_patch(v)
        ));
    }
    // SAFETY: as above.
    let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
    let wanted = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE;
    let Some((family, family_props)) = families
        .iter()
        .enumerate()
        .find(|(_, f)| f.queue_flags.contains(wanted) && f.queue_count > 0)
    else {
        return Err(format!("{name} has no graphics + compute queue family"));
    };
    // SAFETY: as above.
    let ext_props = unsafe { instance.enumerate_device_extension_properties(pd) }
        .map_err(|e| format!("{name}: vkEnumerateDeviceExtensionProperties failed: {e:?}"))?;
    let extensions: Vec<CString> = ext_props
        .iter()
        .filter_map(|e| e.extension_name_as_c_str().ok().map(CStr::to_owned))
        .collect();
    let has = |n: &CStr| extensions.iter().any(|e| e.as_c_str() == n);
    let has_as = has(ash::khr::acceleration_structure::NAME);
    let has_rq = has(ash::khr::ray_query::NAME);
    let has_rt = has(ash::khr::ray_tracing_pipeline::NAME);
    let has_atomic_float = has(ash::ext::shader_atomic_float::NAME);
    let has_conservative = has(ash::ext::conservative_rasterization::NAME);
    let has_position_fetch = has(ash::khr::ray_tracing_position_fetch::NAME);
    let has_barycentric = has(ash::khr::fragment_shader_barycentric::NAME);
    let has_image_int64 = has(ash::ext::shader_image_atomic_int64::NAME);
    let has_mesh = has(ash::ext::mesh_shader::NAME);
    let has_coop = has(ash::khr::cooperative_matrix::NAME);

    // Properties.
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut p11 = vk::PhysicalDeviceVulkan11Properties::default();
    let mut p13 = vk::PhysicalDeviceVulkan13Properties::default();
    let mut as_props = vk::PhysicalDeviceAccelerationStructurePropertiesKHR::default();
    let mut rt_props = vk::PhysicalDeviceRayTracingPipelinePropertiesKHR::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut driver)
        .push_next(&mut p11)
        .push_next(&mut p13);
    if has_as {
        props2 = props2.push_next(&mut as_props);
    }
    if has_rt {
        props2 = props2.push_next(&mut rt_props);
    }
    let mut ms_props = vk::PhysicalDeviceMeshShaderPropertiesEXT::default();
    if has_mesh {
        props2 = props2.push_next(&mut ms_props);
    }
    // SAFETY: the chain holds only structs of core 1.3 or supported extensions.
    unsafe { instance.get_physical_device_properties2(pd, &mut props2) };

    // Features.
    let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
    let mut as_f = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default();
    let mut rq_f = vk::PhysicalDeviceRayQueryFeaturesKHR::default();
    let mut rt_f = vk::PhysicalDeviceRayTracingPipelineFeaturesKHR::default();
    let mut af_f = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
    let mut pf_f = vk::PhysicalDeviceRayTracingPositionFetchFeaturesKHR::default();
    let mut fb_f = vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR::default();
    let mut ia_f = vk::PhysicalDeviceShaderImageAtomicInt64FeaturesEXT::default();
    let mut features2 = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut f11)
        .push_next(&mut f12)
        .push_next(&mut f13);
    if has_as {
        features2 = features2.push_next(&mut as_f);
    }
    if has_rq {
        features2 = features2.push_next(&mut rq_f);
    }
    if has_rt {
        features2 = features2.push_next(&mut rt_f);
    }
    if has_atomic_float {
        features2 = features2.push_next(&mut af_f);
    }
    if has_position_fetch {
        features2 = features2.push_next(&mut pf_f);
    }
    if has_barycentric {
        features2 = features2.push_next(&mut fb_f);
    }
    if has_image_int64 {
        features2 = features2.push_next(&mut ia_f);
    }
    let mut ms_f = vk::PhysicalDeviceMeshShaderFeaturesEXT::default();
    if has_mesh {
        features2 = features2.push_next(&mut ms_f);
    }
    let mut cm_f = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
    if has_coop {
        features2 = features2.push_next(&mut cm_f);
    }
    // SAFETY: as above.
    unsafe { instance.get_physical_device_features2(pd, &mut features2) };
    let core = features2.features;

    let b = |v: vk::Bool32| v == vk::TRUE;
    let features = PhysicalFeatures {
        sampler_anisotropy: b(core.sampler_anisotropy),
        image_cube_array: b(core.image_cube_array),
        sample_rate_shading: b(core.sample_rate_shading),
        texture_compression_bc: b(core.texture_compression_bc),
        texture_compression_etc2: b(core.texture_compression_etc2),
        texture_compression_astc_ldr: b(core.texture_compression_astc_ldr),
        texture_compression_astc_hdr: b(f13.texture_compression_astc_hdr),
        shader_float64: b(core.shader_float64),
        shader_int16: b(core.shader_int16),
        shader_int64: b(core.shader_int64),
        shader_float16: b(f12.shader_float16),
        timeline_semaphore: b(f12.timeline_semaphore),
        buffer_device_address: b(f12.buffer_device_address),
        synchronization2: b(f13.synchronization2),
        dynamic_rendering: b(f13.dynamic_rendering),
        maintenance4: b(f13.maintenance4),
        acceleration_structure: has_as && b(as_f.acceleration_structure),
        ray_query: has_rq && b(rq_f.ray_query),
        ray_tracing_pipeline: has_rt && b(rt_f.ray_tracing_pipeline),
        indexing: DescriptorIndexing::from_features(&core, &f12),
        fill_mode_non_solid: b(core.fill_mode_non_solid),
        depth_clamp: b(core.depth_clamp),
        depth_bias_clamp: b(core.depth_bias_clamp),
        independent_blend: b(core.independent_blend),
        multi_draw_indirect: b(core.multi_draw_indirect),
        draw_indirect_first_instance: b(core.draw_indirect_first_instance),
        vertex_pipeline_stores_and_atomics: b(core.vertex_pipeline_stores_and_atomics),
        fragment_stores_and_atomics: b(core.fragment_stores_and_atomics),
        storage_buffer_16bit_access: b(f11.storage_buffer16_bit_access),
        uniform_and_storage_buffer_16bit_access: b(f11.uniform_and_storage_buffer16_bit_access),
        storage_input_output16: b(f11.storage_input_output16),
        shader_clip_distance: b(core.shader_clip_distance),
        geometry_shader: b(core.geometry_shader),
        dual_src_blend: b(core.dual_src_blend),
        pipeline_statistics_query: b(core.pipeline_statistics_query),
        shader_draw_parameters: b(f11.shader_draw_parameters),
        multiview: b(f11.multiview),
        draw_indirect_count: b(f12.draw_indirect_count),
        float32_atomics: has_atomic_float
            && b(af_f.shader_buffer_float32_atomics)
            && b(af_f.shader_buffer_float32_atomic_add),
        buffer_int64_atomics: b(f12.shader_buffer_int64_atomics),
        shared_int64_atomics: b(f12.shader_shared_int64_atomics),
        conservative_rasterization: has_conservative,
        position_fetch: has_position_fetch && b(pf_f.ray_tracing_position_fetch),
        fragment_barycentric: has_barycentric && b(fb_f.fragment_shader_barycentric),
        image_int64_atomics: has_image_int64 && b(ia_f.shader_image_int64_atomics),
        zero_initialize_workgroup_memory: b(f13.shader_zero_initialize_workgroup_memory),
        sampler_ycbcr_conversion: b(f11.sampler_ycbcr_conversion),
        mesh_shader: has_mesh
            && b(ms_f.task_shader)
            && b(ms_f.mesh_shader)
            && b(f13.shader_zero_initialize_workgroup_memory),
        multiview_mesh_shader: has_mesh && b(ms_f.multiview_mesh_shader),
        cooperative_matrix: has_coop
            && b(cm_f.cooperative_matrix)
            && b(f12.vulkan_memory_model)
            && b(f12.vulkan_memory_model_device_scope),
        acceleration_structure_update_after_bind: has_as
            && b(as_f.descriptor_binding_acceleration_structure_update_after_bind),
    };
    if !(features.synchronization2
        && features.dynamic_rendering
        && features.timeline_semaphore
        && features.maintenance4)
    {
        return Err(format!(
            "{name} lacks a Vulkan 1.3 baseline feature (synchronization2, dynamicRendering, \
             timelineSemaphore, maintenance4)"
        ));
    }
    let ray_limits = RayLimits {
        max_geometry_count: as_props.max_geometry_count,
        max_instance_count: as_props.max_instance_count,
        max_primitive_count: as_props.max_primitive_count,
        max_per_stage_acceleration_structures: as_props
            .max_per_stage_descriptor_acceleration_structures,
        max_per_stage_update_after_bind_acceleration_structures: as_props
            .max_per_stage_descriptor_update_after_bind_acceleration_structures,
        max_ray_recursion_depth: rt_props.max_ray_recursion_depth,
        max_ray_dispatch_invocation_count: rt_props.max_ray_dispatch_invocation_count,
        min_scratch_offset_alignment: as_props.min_acceleration_structure_scratch_offset_alignment,
        shader_group_handle_size: rt_props.shader_group_handle_size,
        shader_group_handle_alignment: rt_props.shader_group_handle_alignment,
        shader_group_base_alignment: rt_props.shader_group_base_alignment,
        max_shader_group_stride: rt_props.max_shader_group_stride,
    };
    Ok(PhysicalInfo {
        properties,
        max_buffer_size: p13.max_buffer_size,
        driver_name: name_string(driver.driver_name_as_c_str()),
        driver_info: name_string(driver.driver_info_as_c_str()),
        features,
        extensions,
        ray_limits,
        mesh_limits: MeshLimits::from_properties(&ms_props),
        cooperative_matrices: if has_coop {
            // SAFETY: `pd` came from `instance`, and has the extension.
            unsafe { super::cooperative_matrix::configurations(entry, instance, pd) }
        } else {
            Vec::new()
        },
        subgroup_stages: p11.subgroup_supported_stages,
        subgroup_operations: p11.subgroup_supported_operations,
        max_multiview_views: p11.max_multiview_view_count,
        queue_family_index: family as u32,
        timestamp_valid_bits: family_props.timestamp_valid_bits,
        workarounds: super::workarounds::Workarounds::for_driver(
            driver.driver_id,
            properties.vendor_id,
            properties.driver_version,
        ),
    })
}

/// keel-hal capabilities, from extension presence and feature bits.
fn hal_features(info: &PhysicalInfo) -> HalFeatures {
    let mut f = HalFeatures::SHADER_EXECUTION;
    // Size queries (and tracing) need the rayQuery or rayTracingPipeline
    // feature too: see `open`.
    let has_as = info.features.acceleration_structure
        && info.features.buffer_device_address
        && info.has(ash::khr::deferred_host_operations::NAME)
        && (info.features.ray_query || info.features.ray_tracing_pipeline);
    f.set(HalFeatures::ACCELERATION_STRUCTURE, has_as);
    f.set(HalFeatures::RAY_QUERY, has_as && info.features.ray_query);
    f.set(
        HalFeatures::RAY_TRACING_PIPELINE,
        has_as && info.features.ray_tracing_pipeline,
    );
    let fd = info.has(ash::khr::external_memory_fd::NAME);
    f.set(HalFeatures::EXTERNAL_MEMORY_FD, fd);
    f.set(
        HalFeatures::EXTERNAL_MEMORY_DMA_BUF,
        fd && info.has(ash::ext::external_memory_dma_buf::NAME),
    );
    f.set(
        HalFeatures::EXTERNAL_MEMORY_HOST,
        info.has(ash::ext::external_memory_host::NAME),
    );
    f.set(
        HalFeatures::EXTERNAL_SEMAPHORE_FD,
        info.has(ash::khr::external_semaphore_fd::NAME),
    );
    f.set(
        HalFeatures::DRM_FORMAT_MODIFIER,
        info.has(ash::ext::image_drm_format_modifier::NAME),
    );
    f
}

/// A format's features with optimal tiling (empty for a format without a
/// Vulkan equivalent), for the format probes of `conv::map_features`.
///
/// # Safety
/// `pd` belongs to `instance`.
unsafe fn optimal_format_features(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    format: wgt::TextureFormat,
) -> vk::FormatFeatureFlags {
    let vk_format = conv::map_texture_format(format);
    if vk_format == vk::Format::UNDEFINED {
        return vk::FormatFeatureFlags::empty();
    }
    // SAFETY: forwarded contract.
    let props = unsafe { instance.get_physical_device_format_properties(pd, vk_format) };
    props.optimal_tiling_features
}

/// Device extensions needed for the requested features, in enable order.
fn required_extensions(features: wgt::Features, hal: HalFeatures) -> Vec<&'static CStr> {
    let mut out = Vec::new();
    let rt = hal.contains(HalFeatures::RAY_TRACING_PIPELINE)
        || features.contains(wgt::Features::EXPERIMENTAL_RAY_TRACING_PIPELINES);
    // Vertex return is read through ray queries.
    let rq = hal.contains(HalFeatures::RAY_QUERY)
        || features.intersects(
            wgt::Features::EXPERIMENTAL_RAY_QUERY
                | wgt::Features::EXPERIMENTAL_RAY_HIT_VERTEX_RETURN,
        );
    if rt || rq || hal.contains(HalFeatures::ACCELERATION_STRUCTURE) {
        out.push(ash::khr::acceleration_structure::NAME);
        out.push(ash::khr::deferred_host_operations::NAME);
    }
    if rq {
        out.push(ash::khr::ray_query::NAME);
    }
    if rt {
        out.push(ash::khr::ray_tracing_pipeline::NAME);
    }
    let dma_buf = hal.contains(HalFeatures::EXTERNAL_MEMORY_DMA_BUF)
        || features.contains(wgt::Features::VULKAN_EXTERNAL_MEMORY_DMA_BUF);
    if dma_buf
        || hal.contains(HalFeatures::EXTERNAL_MEMORY_FD)
        || features.contains(wgt::Features::VULKAN_EXTERNAL_MEMORY_FD)
    {
        out.push(ash::khr::external_memory_fd::NAME);
    }
    if dma_buf {
        out.push(ash::ext::external_memory_dma_buf::NAME);
    }
    if hal.contains(HalFeatures::EXTERNAL_MEMORY_HOST) {
        out.push(ash::ext::external_memory_host::NAME);
    }
    if hal.contains(HalFeatures::EXTERNAL_SEMAPHORE_FD) {
        out.push(ash::khr::external_semaphore_fd::NAME);
    }
    if hal.contains(HalFeatures::DRM_FORMAT_MODIFIER) {
        out.push(ash::ext::image_drm_format_modifier::NAME);
    }
    if features.contains(wgt::Features::SHADER_FLOAT32_ATOMIC) {
        out.push(ash::ext::shader_atomic_float::NAME);
    }
    if features.contains(wgt::Features::CONSERVATIVE_RASTERIZATION) {
        out.push(ash::ext::conservative_rasterization::NAME);
    }
    if features.contains(wgt::Features::EXPERIMENTAL_RAY_HIT_VERTEX_RETURN) {
        out.push(ash::khr::ray_tracing_position_fetch::NAME);
    }
    if features.contains(wgt::Features::TEXTURE_INT64_ATOMIC) {
        out.push(ash::ext::shader_image_atomic_int64::NAME);
    }
    if features.intersects(wgt::Features::SHADER_BARYCENTRICS | wgt::Features::SHADER_PER_VERTEX) {
        out.push(ash::khr::fragment_shader_barycentric::NAME);
    }
    if features.intersects(
        wgt::Features::EXPERIMENTAL_MESH_SHADER
            | wgt::Features::EXPERIMENTAL_MESH_SHADER_POINTS
            | wgt::Features::EXPERIMENTAL_MESH_SHADER_MULTIVIEW,
    ) {
        out.push(ash::ext::mesh_shader::NAME);
    }
    if features.contains(wgt::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
        out.push(ash::khr::cooperative_matrix::NAME);
    }
    out
}

/// The keel-hal capabilities a device has, from the extensions enabled on it
/// (whether the caller asked through a hal feature or a `wgpu-types` one).
fn enabled_hal_features(extensions: &[&CStr]) -> HalFeatures {
    let has = |name: &CStr| extensions.contains(&name);
    let mut f = HalFeatures::SHADER_EXECUTION;
    let accel = has(ash::khr::acceleration_structure::NAME);
    f.set(HalFeatures::ACCELERATION_STRUCTURE, accel);
    f.set(
        HalFeatures::RAY_QUERY,
        accel && has(ash::khr::ray_query::NAME),
    );
    f.set(
        HalFeatures::RAY_TRACING_PIPELINE,
        accel && has(ash::khr::ray_tracing_pipeline::NAME),
    );
    let fd = has(ash::khr::external_memory_fd::NAME);
    f.set(HalFeatures::EXTERNAL_MEMORY_FD, fd);
    f.set(
        HalFeatures::EXTERNAL_MEMORY_DMA_BUF,
        fd && has(ash::ext::external_memory_dma_buf::NAME),
    );
    f.set(
        HalFeatures::EXTERNAL_MEMORY_HOST,
        has(ash::ext::external_memory_host::NAME),
    );
    f.set(
        HalFeatures::EXTERNAL_SEMAPHORE_FD,
        has(ash::khr::external_semaphore_fd::NAME),
    );
    f.set(
        HalFeatures::DRM_FORMAT_MODIFIER,
        has(ash::ext::image_drm_format_modifier::NAME),
    );
    f
}

/// Checks a device request against the adapter's capabilities.
fn check_request(caps: &Capabilities, desc: &DeviceDescriptor) -> Result<wgt::Limits, OpenError> {
    let missing = desc.required_features - caps.features;
    if !missing.is_empty() {
        return Err(OpenError::MissingFeatures(missing));
    }
    let missing = desc.required_hal_features - caps.hal_features;
    if !missing.is_empty() {
        return Err(OpenError::MissingCapabilities(missing));
    }
    let Some(limits) = &desc.required_limits else {
        return Ok(caps.limits.clone());
    };
    let mut exceeded = None;
    limits.check_limits_with_fail_fn(&caps.limits, true, |name, requested, allowed| {
        exceeded = Some(OpenError::LimitExceeded {
            name,
            requested,
            allowed,
        });
    });
    match exceeded {
        Some(e) => Err(e),
        None => Ok(limits.clone()),
    }
}

impl crate::Adapter for Adapter {
    type A = super::Api;

    unsafe fn open(&self, desc: &DeviceDescriptor) -> Result<OpenDevice<super::Api>, OpenError> {
        let limits = check_request(&self.capabilities, desc)?;
        let features = desc.required_features;
        let requested_hal = desc.required_hal_features | HalFeatures::SHADER_EXECUTION;
        let mut extensions = required_extensions(features, requested_hal);
        // vkGetAccelerationStructureBuildSizesKHR needs the rayQuery or
        // rayTracingPipeline feature: a device asked only for acceleration
        // structures gets ray query (or, lacking it, pipelines) as well.
        let has_ext = |e: &[&CStr], n: &CStr| e.contains(&n);
        if has_ext(&extensions, ash::khr::acceleration_structure::NAME)
            && !has_ext(&extensions, ash::khr::ray_query::NAME)
            && !has_ext(&extensions, ash::khr::ray_tracing_pipeline::NAME)
        {
            if self.info.features.ray_query {
                extensions.push(ash::khr::ray_query::NAME);
            } else if self.info.features.ray_tracing_pipeline {
                extensions.push(ash::khr::ray_tracing_pipeline::NAME);
            }
        }
        // Presentation: wherever the instance can make surfaces and the
        // device can present (`DeviceShared::swapchain` records it).
        if self.instance.surface.is_some() && self.info.has(ash::khr::swapchain::NAME) {
            extensions.push(ash::khr::swapchain::NAME);
        }
        // Heap budgets for the memory report and retention (memory.rs),
        // wherever the driver has them.
        let memory_budget = self.info.has(ash::ext::memory_budget::NAME);
        if memory_budget {
            extensions.push(ash::ext::memory_budget::NAME);
        }
        // What the device really has: e.g. `EXPERIMENTAL_RAY_QUERY` enables
        // the acceleration-structure extension, so `ACCELERATION_STRUCTURE`.
        let hal = enabled_hal_features(&extensions);
        let ext_ptrs: Vec<_> = extensions.iter().map(|e| e.as_ptr()).collect();
        let enabled_as = extensions.contains(&ash::khr::acceleration_structure::NAME);
        let enabled_rq = extensions.contains(&ash::khr::ray_query::NAME);
        let enabled_rt = extensions.contains(&ash::khr::ray_tracing_pipeline::NAME);
        let enabled_af = extensions.contains(&ash::ext::shader_atomic_float::NAME);
        let enabled_pf = extensions.contains(&ash::khr::ray_tracing_position_fetch::NAME);
        let enabled_fb = extensions.contains(&ash::khr::fragment_shader_barycentric::NAME);
        let enabled_ia = extensions.contains(&ash::ext::shader_image_atomic_int64::NAME);
        let enabled_ms = extensions.contains(&ash::ext::mesh_shader::NAME);
        let enabled_cm = extensions.contains(&ash::khr::cooperative_matrix::NAME);
        let pf = &self.info.features;

        let core = pf.enabled_core(features);
        let int64_atomics = features.intersects(
            wgt::Features::SHADER_INT64_ATOMIC_MIN_MAX | wgt::Features::SHADER_INT64_ATOMIC_ALL_OPS,
        );
        let mut f11 = pf
            .enabled_16bit_storage(features)
            .shader_draw_parameters(features.contains(wgt::Features::SHADER_DRAW_INDEX))
            .sampler_ycbcr_conversion(features.intersects(
                wgt::Features::TEXTURE_FORMAT_NV12 | wgt::Features::TEXTURE_FORMAT_P010,
            ))
            // Mesh multiview needs multiview itself enabled
            // (VUID-VkPhysicalDeviceMeshShaderFeaturesEXT-multiviewMeshShader-07032).
            .multiview(features.intersects(
                wgt::Features::MULTIVIEW
                    | wgt::Features::SELECTIVE_MULTIVIEW
                    | wgt::Features::EXPERIMENTAL_MESH_SHADER_MULTIVIEW,
            ));
        let f12 = vk::PhysicalDeviceVulkan12Features::default()
            .timeline_semaphore(true)
            .buffer_device_address(pf.buffer_device_address)
            .shader_float16(features.contains(wgt::Features::SHADER_F16))
            .draw_indirect_count(features.contains(wgt::Features::MULTI_DRAW_INDIRECT_COUNT))
            .shader_buffer_int64_atomics(int64_atomics)
            .shader_shared_int64_atomics(int64_atomics)
            // Cooperative-matrix SPIR-V is written under the Vulkan memory
            // model, with device-scope atomics
            // (VUID-RuntimeSpirv-vulkanMemoryModel-06265).
            .vulkan_memory_model(enabled_cm)
            .vulkan_memory_model_device_scope(enabled_cm);
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default()
            .synchronization2(true)
            .dynamic_rendering(true)
            .maintenance4(true)
            .shader_zero_initialize_workgroup_memory(pf.zero_initialize_workgroup_memory)
            .texture_compression_astc_hdr(
                features.contains(wgt::Features::TEXTURE_COMPRESSION_ASTC_HDR),
            );
        let (core, mut f12) = pf.indexing.enable(features, core, f12);
        let mut as_f = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default()
            .acceleration_structure(true)
            .descriptor_binding_acceleration_structure_update_after_bind(
                features.contains(wgt::Features::ACCELERATION_STRUCTURE_BINDING_ARRAY),
            );
        let mut rq_f = vk::PhysicalDeviceRayQueryFeaturesKHR::default().ray_query(true);
        let mut rt_f =
            vk::PhysicalDeviceRayTracingPipelineFeaturesKHR::default().ray_tracing_pipeline(true);
        let mut af_f = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default()
            .shader_buffer_float32_atomics(true)
            .shader_buffer_float32_atomic_add(true);
        let mut pf_f = vk::PhysicalDeviceRayTracingPositionFetchFeaturesKHR::default()
            .ray_tracing_position_fetch(true);
        let mut fb_f = vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR::default()
            .fragment_shader_barycentric(true);
        let mut ia_f = vk::PhysicalDeviceShaderImageAtomicInt64FeaturesEXT::default()
            .shader_image_int64_atomics(true);
        let mut cm_f =
            vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default().cooperative_matrix(true);
        let mut ms_f = vk::PhysicalDeviceMeshShaderFeaturesEXT::default()
            .task_shader(true)
            .mesh_shader(true)
            .multiview_mesh_shader(
                features.contains(wgt::Features::EXPERIMENTAL_MESH_SHADER_MULTIVIEW),
            );

        let priorities = [1.0f32];
        let queue_info = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(self.info.queue_family_index)
            .queue_priorities(&priorities)];
        let mut create_info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_info)
            .enabled_extension_names(&ext_ptrs)
            .enabled_features(&core)
            .push_next(&mut f11)
            .push_next(&mut f12)
            .push_next(&mut f13);
        if enabled_as {
            create_info = create_info.push_next(&mut as_f);
        }
        if enabled_rq {
            create_info = create_info.push_next(&mut rq_f);
        }
        if enabled_rt {
            create_info = create_info.push_next(&mut rt_f);
        }
        if enabled_af {
            create_info = create_info.push_next(&mut af_f);
        }
        if enabled_pf {
            create_info = create_info.push_next(&mut pf_f);
        }
        if enabled_fb {
            create_info = create_info.push_next(&mut fb_f);
        }
        if enabled_ia {
            create_info = create_info.push_next(&mut ia_f);
        }
        if enabled_ms {
            create_info = create_info.push_next(&mut ms_f);
        }
        if enabled_cm {
            create_info = create_info.push_next(&mut cm_f);
        }

        let instance = &self.instance;
        // SAFETY: `self.raw` belongs to this instance; every pointer in
        // `create_info` outlives the call; features and extensions were
        // checked against the adapter.
        let raw = {
            // Some drivers deadlock creating a device beside a ray-tracing
            // pipeline creation (`workarounds.rs`).
            let _serial = self.info.workarounds.serialize_device_lifetime();
            // SAFETY: as above.
            let raw = unsafe { instance.raw.create_device(self.raw, &create_info, None) };
            // This thread called the driver: its exit is serialised too.
            // (After the device exists, so keel-hal's pthread key comes
            // after the driver's: `workarounds.rs`.)
            self.info.workarounds.enter_driver();
            raw
        }
        .map_err(|e| match e {
            vk::Result::ERROR_EXTENSION_NOT_PRESENT | vk::Result::ERROR_FEATURE_NOT_PRESENT => {
                OpenError::Unsupported(format!("vkCreateDevice: {e:?}"))
            }
            other => OpenError::Device(super::map_err(other)),
        })?;
        #[cfg(feature = "fault-injection")]
        // SAFETY: `raw` was just created from this instance.
        let raw = unsafe { super::fault::wrap_device(instance, raw.handle()) };
        instance.note_newer_extension_device(raw.handle(), features, true);

        // Nothing fallible may run between here and `DeviceShared` except
        // the allocator, whose failure destroys the device.
        let api_version = instance.api_version.min(self.info.properties.api_version);
        // SAFETY: `raw` is a live device of this physical device and instance.
        let memory = match unsafe {
            MemoryAllocator::new(
                instance,
                &raw,
                self.raw,
                api_version,
                pf.buffer_device_address,
                memory_budget,
            )
        } {
            Ok(memory) => memory,
            Err(e) => {
                let _serial = self.info.workarounds.serialize_device_lifetime();
                instance.note_newer_extension_device(raw.handle(), features, false);
                // SAFETY: nothing was created from the device yet.
                unsafe { raw.destroy_device(None) };
                return Err(OpenError::Device(super::map_err(e)));
            }
        };
        let debug_utils = match &instance.debug_utils {
            Some(_)
                if instance
                    .flags
                    .intersects(crate::InstanceFlags::DEBUG | crate::InstanceFlags::VALIDATION) =>
            {
                Some(ash::ext::debug_utils::Device::new(&instance.raw, &raw))
            }
            _ => None,
        };
        // SAFETY: the family was created with one queue.
        let queue = unsafe { raw.get_device_queue(self.info.queue_family_index, 0) };
        let ray_tracing = enabled_rt.then(|| {
            // SAFETY: `raw` is live and has `VK_KHR_ray_tracing_pipeline` enabled.
            unsafe { super::ray_tracing::RayTracingFns::load(instance, &raw) }
        });
        let accel = enabled_as.then(|| {
            // SAFETY: `raw` is live and has `VK_KHR_acceleration_structure` enabled.
            unsafe { super::acceleration::AccelerationFns::load(instance, &raw) }
        });
        let mesh = enabled_ms.then(|| ash::ext::mesh_shader::Device::new(&instance.raw, &raw));
        // SAFETY: `raw` is a live device of this physical device and instance.
        let external = unsafe { super::external::ExternalFns::load(instance, &raw, self.raw, hal) };
        let shared = Arc::new(super::DeviceShared {
            raw,
            instance: instance.clone(),
            physical_device: self.raw,
            queue_family_index: self.info.queue_family_index,
            memory,
            debug_utils,
            features,
            hal_features: hal,
            swapchain: extensions.contains(&ash::khr::swapchain::NAME),
            formats: Default::default(),
            limits,
            timestamp_period: self.capabilities.timestamp_period,
            counters: Default::default(),
            physical: self.info.clone(),
            ray_tracing,
            queue_lock: parking_lot::Mutex::new(()),
            external,
            descriptors: Default::default(),
            accel,
            mesh,
            compaction_pools: Default::default(),
            lost: Default::default(),
        });
        if let Some(label) = desc.label {
            // SAFETY: the device handle is live.
            unsafe { super::device::set_object_name(&shared, shared.raw.handle(), label) };
        }
        Ok(OpenDevice {
            device: super::Device {
                shared: shared.clone(),
            },
            queue: super::Queue {
                raw: queue,
                device: shared,
            },
        })
    }

    fn pipeline_cache_validation_key(&self) -> Option<[u8; 16]> {
        Some(self.info.properties.pipeline_cache_uuid)
    }

    fn texture_format_capabilities(
        &self,
        format: wgt::TextureFormat,
    ) -> wgt::TextureFormatFeatures {
        // SAFETY: `self.raw` belongs to this instance.
        unsafe { texture_format_features(&self.instance.raw, self.raw, format) }
    }
    // External memory and semaphores: external.rs, external_texture.rs, external_sync.rs.

    fn external_buffer_capabilities(
        &self,
        desc: &crate::BufferDescriptor,
        handle_type: crate::ExternalHandleType,
    ) -> crate::ExternalCapabilities {
        super::external::buffer_capabilities(self, desc, handle_type)
    }

    fn external_texture_capabilities(
        &self,
        desc: &crate::TextureDescriptor,
        handle_type: crate::ExternalHandleType,
    ) -> Result<crate::ExternalCapabilities, crate::DeviceError> {
        super::external_texture::texture_capabilities(self, desc, handle_type)
    }

    fn external_semaphore_capabilities(
        &self,
        desc: &crate::ExternalSemaphoreDescriptor,
    ) -> crate::ExternalCapabilities {
        super::external_sync::semaphore_capabilities(self, desc)
    }

    fn drm_format_modifiers(&self, format: wgt::TextureFormat) -> Vec<crate::DrmModifierInfo> {
        super::external_texture::drm_format_modifiers(self, format)
    }

    unsafe fn surface_capabilities(
        &self,
        surface: &super::Surface,
    ) -> Result<crate::SurfaceCapabilities, crate::SurfaceError> {
        // SAFETY: forwarded contract.
        unsafe { self.query_surface(surface) }
    }
}

/// What a format supports with optimal tiling, in `wgpu-types` terms.
///
/// # Safety
/// `pd` belongs to `instance`.
pub(super) unsafe fn texture_format_features(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    format: wgt::TextureFormat,
) -> wgt::TextureFormatFeatures {
    let vk_format = conv::map_texture_format(format);
    if vk_format == vk::Format::UNDEFINED {
        return wgt::TextureFormatFeatures {
            allowed_usages: wgt::TextureUsages::empty(),
            flags: wgt::TextureFormatFeatureFlags::empty(),
        };
    }
    // SAFETY: forwarded contract.
    let props = unsafe { instance.get_physical_device_format_properties(pd, vk_format) };
    let features = props.optimal_tiling_features;
    let attachment =
        vk::FormatFeatureFlags::COLOR_ATTACHMENT | vk::FormatFeatureFlags::DEPTH_STENCIL_ATTACHMENT;
    let sample_counts = if features.intersects(attachment) {
        let usage = if features.contains(vk::FormatFeatureFlags::COLOR_ATTACHMENT) {
            vk::ImageUsageFlags::COLOR_ATTACHMENT
        } else {
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT
        };
        // SAFETY: forwarded contract; the format and usage are valid.
        unsafe {
            instance.get_physical_device_image_format_properties(
                pd,
                vk_format,
                vk::ImageType::TYPE_2D,
                vk::ImageTiling::OPTIMAL,
                usage,
                vk::ImageCreateFlags::empty(),
            )
        }
        .map(|p| p.sample_counts)
        .unwrap_or(vk::SampleCountFlags::TYPE_1)
    } else {
        vk::SampleCountFlags::TYPE_1
    };
    conv::map_format_features(features, sample_counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_stores_are_enabled_wherever_supported() {
        let none = PhysicalFeatures::default().enabled_core(wgt::Features::empty());
        assert_eq!(none.vertex_pipeline_stores_and_atomics, vk::FALSE);
        assert_eq!(none.fragment_stores_and_atomics, vk::FALSE);
        let pf = PhysicalFeatures {
            vertex_pipeline_stores_and_atomics: true,
            fragment_stores_and_atomics: true,
            ..Default::default()
        };
        let core = pf.enabled_core(wgt::Features::empty());
        assert_eq!(core.vertex_pipeline_stores_and_atomics, vk::TRUE);
        assert_eq!(core.fragment_stores_and_atomics, vk::TRUE);
    }

    #[test]
    fn sixteen_bit_types_need_and_enable_16bit_storage() {
        use wgt::Features as F;
        let mut pf = PhysicalFeatures {
            shader_float16: true,
            shader_int16: true,
            ..Default::default()
        };
        assert!(!pf.storage_16bit(), "no 16-bit storage: no SHADER_F16/I16");
        pf.storage_buffer_16bit_access = true;
        pf.uniform_and_storage_buffer_16bit_access = true;
        assert!(pf.storage_16bit());
        let off = pf.enabled_16bit_storage(F::empty());
        assert_eq!(off.storage_buffer16_bit_access, vk::FALSE);
        for feature in [F::SHADER_F16, F::SHADER_I16] {
            let on = pf.enabled_16bit_storage(feature);
            assert_eq!(on.storage_buffer16_bit_access, vk::TRUE);
            assert_eq!(on.uniform_and_storage_buffer16_bit_access, vk::TRUE);
            assert_eq!(on.storage_input_output16, vk::FALSE, "not supported");
        }
        pf.storage_input_output16 = true;
        let io = pf.enabled_16bit_storage(F::SHADER_F16);
        assert_eq!(io.storage_input_output16, vk::TRUE);
    }

    #[test]
    fn ray_query_enables_acceleration_structures() {
        let ext = required_extensions(wgt::Features::EXPERIMENTAL_RAY_QUERY, HalFeatures::empty());
        let hal = enabled_hal_features(&ext);
        assert!(hal.contains(HalFeatures::ACCELERATION_STRUCTURE | HalFeatures::RAY_QUERY));
        assert!(!hal.contains(HalFeatures::RAY_TRACING_PIPELINE));
        let plain = enabled_hal_features(&required_extensions(
            wgt::Features::empty(),
            HalFeatures::SHADER_EXECUTION,
        ));
        assert_eq!(plain, HalFeatures::SHADER_EXECUTION);
    }
}
