//! A physical device: what it can do, and opening a logical device on it.
//!
//! Probing reads properties, features and extensions once, into plain data
//! ([`PhysicalInfo`]); capabilities are derived from that, and `open` enables
//! exactly the Vulkan 1.3 baseline plus what the caller asked for.

use std::ffi::{CStr, CString};
use std::sync::Arc;

use ash::vk;

use super::features::{DeviceRequest, REQUIRED};
use super::instance_shared::InstanceShared;
use super::physical::{MeshLimits, PhysicalInfo, RayLimits};
use super::{conv, memory::MemoryAllocator};
use crate::features::vulkan_column::{Bit, Chain};
use crate::{
    AdapterInfo, Backend, Capabilities, DeviceDescriptor, ExposedAdapter, HalFeatures, OpenDevice,
    OpenError,
};

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
    let (features, hal_features) = super::features::offered(&info, |f| {
        // SAFETY: `pd` belongs to this instance.
        unsafe { optimal_format_features(&instance.raw, pd, f) }
    });
    let capabilities = Capabilities {
        features,
        hal_features,
        limits: conv::map_limits(&info, features, hal_features),
        timestamp_period: info.properties.limits.timestamp_period,
        cooperative_matrix_properties: if features
            .contains(wgt::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
        {
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
    if v < super::instance_shared::API_VERSION {
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
    let has_rt = has(ash::khr::ray_tracing_pipeline::NAME);
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

    // Features: every struct of the chain whose extension exists.
    let features = Chain::probe(
        |name| has(name),
        // SAFETY: as above.
        |features2| unsafe { instance.get_physical_device_features2(pd, features2) },
    );
    if !REQUIRED.iter().all(|&bit| features.has(bit)) {
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
        // The table's bits and extensions for what was asked.
        let mut request = DeviceRequest::new(&self.info, features, requested_hal);
        // Presentation: wherever the instance can make surfaces and the
        // device can present (`DeviceShared::swapchain` records it).
        if self.instance.surface.is_some() && self.info.has(ash::khr::swapchain::NAME) {
            request.extension(ash::khr::swapchain::NAME);
        }
        // Heap budgets for the memory report and retention (memory.rs),
        // wherever the driver has them.
        let memory_budget = self.info.has(ash::ext::memory_budget::NAME);
        if memory_budget {
            request.extension(ash::ext::memory_budget::NAME);
        }
        // What the device really has: e.g. `EXPERIMENTAL_RAY_QUERY` enables
        // the acceleration-structure extension, so `ACCELERATION_STRUCTURE`.
        let hal = request.hal_features();
        let ext_ptrs: Vec<_> = request.extensions.iter().map(|e| e.as_ptr()).collect();
        let enabled_as = request.has(ash::khr::acceleration_structure::NAME);
        let enabled_rt = request.has(ash::khr::ray_tracing_pipeline::NAME);
        let enabled_ms = request.has(ash::ext::mesh_shader::NAME);
        let mut chain = Chain::with(request.bits);
        let mut enabled = chain.link(|name| request.has(name));

        let priorities = [1.0f32];
        let queue_info = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(self.info.queue_family_index)
            .queue_priorities(&priorities)];
        let create_info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_info)
            .enabled_extension_names(&ext_ptrs)
            .push_next(&mut enabled);

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
            other => OpenError::Device(super::conv::map_err(other)),
        })?;
        #[cfg(feature = "fault-injection")]
        // SAFETY: `raw` was just created from this instance.
        let raw =
            unsafe { super::fault::wrap_device(&instance.entry, &instance.raw, raw.handle()) };
        instance.note_newer_extension_device(raw.handle(), features, true);

        // Nothing fallible may run between here and `DeviceShared` except
        // the allocator, whose failure destroys the device.
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
        let api_version = instance.api_version.min(self.info.properties.api_version);
        // SAFETY: `raw` is a live device of this physical device and instance.
        let memory = match unsafe {
            MemoryAllocator::new(
                instance,
                &raw,
                self.raw,
                api_version,
                request.bits.has(Bit::BufferDeviceAddress),
                memory_budget,
                debug_utils.clone(),
            )
        } {
            Ok(memory) => memory,
            Err(e) => {
                let _serial = self.info.workarounds.serialize_device_lifetime();
                instance.note_newer_extension_device(raw.handle(), features, false);
                // SAFETY: nothing was created from the device yet.
                unsafe { raw.destroy_device(None) };
                return Err(OpenError::Device(super::conv::map_err(e)));
            }
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
            swapchain: request.has(ash::khr::swapchain::NAME),
            enabled: request.bits,
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
            unsafe { super::object_name::set_object_name(&shared, shared.raw.handle(), label) };
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
