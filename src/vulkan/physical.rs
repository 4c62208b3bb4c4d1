//! What keel-hal reads from a physical device, once, as plain data
//! ([`PhysicalInfo`], with its ray-tracing and mesh limits): the adapter's
//! capabilities, the feature table's Vulkan needs and the limits are
//! derived from it (`adapter.rs`, `features.rs`, `conv.rs`).

use std::ffi::{CStr, CString};

use ash::vk;

use crate::features::vulkan_column::Bits;

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
    pub(crate) fn from_properties(p: &vk::PhysicalDeviceMeshShaderPropertiesEXT<'_>) -> Self {
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
    /// The feature bits the device has (`features.rs`).
    pub(crate) features: Bits,
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
