//! The feature table's Vulkan column (`crate::features`): the Vulkan
//! device feature fields keel-hal reads and enables ([`Bit`], probed and
//! enabled through the same [`Chain`] of feature structs) and what a row
//! needs of a Vulkan adapter ([`Need`]). The table names these; the Vulkan
//! backend reads them (`vulkan::features`: what an adapter offers, what a
//! device enables), so the arrows run from the backend to the table.

use std::ffi::CStr;

use ash::vk;

/// The Vulkan feature structs keel-hal reads and enables, one of each:
/// probing fills them (`vkGetPhysicalDeviceFeatures2`) and device creation
/// chains them, so a [`Bit`] names the same field both ways.
#[derive(Default)]
pub(crate) struct Chain {
    core: vk::PhysicalDeviceFeatures,
    v11: vk::PhysicalDeviceVulkan11Features<'static>,
    v12: vk::PhysicalDeviceVulkan12Features<'static>,
    v13: vk::PhysicalDeviceVulkan13Features<'static>,
    accel: vk::PhysicalDeviceAccelerationStructureFeaturesKHR<'static>,
    ray_query: vk::PhysicalDeviceRayQueryFeaturesKHR<'static>,
    ray_tracing: vk::PhysicalDeviceRayTracingPipelineFeaturesKHR<'static>,
    atomic_float: vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT<'static>,
    position_fetch: vk::PhysicalDeviceRayTracingPositionFetchFeaturesKHR<'static>,
    barycentric: vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR<'static>,
    image_int64: vk::PhysicalDeviceShaderImageAtomicInt64FeaturesEXT<'static>,
    mesh: vk::PhysicalDeviceMeshShaderFeaturesEXT<'static>,
    cooperative_matrix: vk::PhysicalDeviceCooperativeMatrixFeaturesKHR<'static>,
}

/// Declares [`Bit`]: each row is a variant, the [`Chain`] field it reads
/// and writes, and the extension that field belongs to (none for core).
macro_rules! bits {
    ($( $(#[$doc:meta])* $name:ident => $part:ident . $field:ident $(@ $ext:expr)? ;)*) => {
        /// One Vulkan device feature field keel-hal reads or enables.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum Bit {
            $( $(#[$doc])* #[doc = concat!("`", stringify!($part), ".", stringify!($field), "`.")] $name, )*
        }

        impl Bit {
            /// Every bit, in declaration order.
            pub(crate) const ALL: &'static [Bit] = &[$(Bit::$name),*];

            /// The field in `chain` this bit reads and writes.
            fn field(self, chain: &mut Chain) -> &mut vk::Bool32 {
                match self {
                    $( Bit::$name => &mut chain.$part.$field, )*
                }
            }

            /// The extension whose struct holds the field (`None`: core).
            pub(crate) fn extension(self) -> Option<&'static CStr> {
                match self {
                    $( Bit::$name => None $( .or(Some($ext)) )?, )*
                }
            }
        }
    };
}

bits! {
    SamplerAnisotropy => core.sampler_anisotropy;
    ImageCubeArray => core.image_cube_array;
    SampleRateShading => core.sample_rate_shading;
    TextureCompressionBc => core.texture_compression_bc;
    TextureCompressionEtc2 => core.texture_compression_etc2;
    TextureCompressionAstcLdr => core.texture_compression_astc_ldr;
    ShaderFloat64 => core.shader_float64;
    ShaderInt16 => core.shader_int16;
    ShaderInt64 => core.shader_int64;
    FillModeNonSolid => core.fill_mode_non_solid;
    DepthClamp => core.depth_clamp;
    DepthBiasClamp => core.depth_bias_clamp;
    IndependentBlend => core.independent_blend;
    MultiDrawIndirect => core.multi_draw_indirect;
    DrawIndirectFirstInstance => core.draw_indirect_first_instance;
    VertexPipelineStoresAndAtomics => core.vertex_pipeline_stores_and_atomics;
    FragmentStoresAndAtomics => core.fragment_stores_and_atomics;
    ShaderClipDistance => core.shader_clip_distance;
    GeometryShader => core.geometry_shader;
    DualSrcBlend => core.dual_src_blend;
    PipelineStatisticsQuery => core.pipeline_statistics_query;
    SampledImageArrayDynamicIndexing => core.shader_sampled_image_array_dynamic_indexing;
    StorageImageArrayDynamicIndexing => core.shader_storage_image_array_dynamic_indexing;
    StorageBufferArrayDynamicIndexing => core.shader_storage_buffer_array_dynamic_indexing;
    UniformBufferArrayDynamicIndexing => core.shader_uniform_buffer_array_dynamic_indexing;
    StorageBuffer16BitAccess => v11.storage_buffer16_bit_access;
    UniformAndStorageBuffer16BitAccess => v11.uniform_and_storage_buffer16_bit_access;
    StorageInputOutput16 => v11.storage_input_output16;
    ShaderDrawParameters => v11.shader_draw_parameters;
    Multiview => v11.multiview;
    SamplerYcbcrConversion => v11.sampler_ycbcr_conversion;
    TimelineSemaphore => v12.timeline_semaphore;
    BufferDeviceAddress => v12.buffer_device_address;
    ShaderFloat16 => v12.shader_float16;
    ShaderInt8 => v12.shader_int8;
    DrawIndirectCount => v12.draw_indirect_count;
    ShaderBufferInt64Atomics => v12.shader_buffer_int64_atomics;
    ShaderSharedInt64Atomics => v12.shader_shared_int64_atomics;
    VulkanMemoryModel => v12.vulkan_memory_model;
    VulkanMemoryModelDeviceScope => v12.vulkan_memory_model_device_scope;
    RuntimeDescriptorArray => v12.runtime_descriptor_array;
    SampledImageArrayNonUniformIndexing => v12.shader_sampled_image_array_non_uniform_indexing;
    StorageImageArrayNonUniformIndexing => v12.shader_storage_image_array_non_uniform_indexing;
    StorageBufferArrayNonUniformIndexing => v12.shader_storage_buffer_array_non_uniform_indexing;
    UniformBufferArrayNonUniformIndexing => v12.shader_uniform_buffer_array_non_uniform_indexing;
    PartiallyBound => v12.descriptor_binding_partially_bound;
    SampledImageUpdateAfterBind => v12.descriptor_binding_sampled_image_update_after_bind;
    StorageImageUpdateAfterBind => v12.descriptor_binding_storage_image_update_after_bind;
    StorageBufferUpdateAfterBind => v12.descriptor_binding_storage_buffer_update_after_bind;
    UniformBufferUpdateAfterBind => v12.descriptor_binding_uniform_buffer_update_after_bind;
    Synchronization2 => v13.synchronization2;
    DynamicRendering => v13.dynamic_rendering;
    Maintenance4 => v13.maintenance4;
    ZeroInitializeWorkgroupMemory => v13.shader_zero_initialize_workgroup_memory;
    TextureCompressionAstcHdr => v13.texture_compression_astc_hdr;
    AccelerationStructure => accel.acceleration_structure
        @ ash::khr::acceleration_structure::NAME;
    AccelerationStructureUpdateAfterBind =>
        accel.descriptor_binding_acceleration_structure_update_after_bind
        @ ash::khr::acceleration_structure::NAME;
    RayQuery => ray_query.ray_query @ ash::khr::ray_query::NAME;
    RayTracingPipeline => ray_tracing.ray_tracing_pipeline
        @ ash::khr::ray_tracing_pipeline::NAME;
    BufferFloat32Atomics => atomic_float.shader_buffer_float32_atomics
        @ ash::ext::shader_atomic_float::NAME;
    BufferFloat32AtomicAdd => atomic_float.shader_buffer_float32_atomic_add
        @ ash::ext::shader_atomic_float::NAME;
    RayTracingPositionFetch => position_fetch.ray_tracing_position_fetch
        @ ash::khr::ray_tracing_position_fetch::NAME;
    FragmentShaderBarycentric => barycentric.fragment_shader_barycentric
        @ ash::khr::fragment_shader_barycentric::NAME;
    ImageInt64Atomics => image_int64.shader_image_int64_atomics
        @ ash::ext::shader_image_atomic_int64::NAME;
    TaskShader => mesh.task_shader @ ash::ext::mesh_shader::NAME;
    MeshShader => mesh.mesh_shader @ ash::ext::mesh_shader::NAME;
    MultiviewMeshShader => mesh.multiview_mesh_shader @ ash::ext::mesh_shader::NAME;
    CooperativeMatrix => cooperative_matrix.cooperative_matrix
        @ ash::khr::cooperative_matrix::NAME;
}

/// A set of [`Bit`]s: what a physical device has, or what a device enabled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bits(u128);

impl Bits {
    /// Whether the set holds `bit`.
    pub(crate) fn has(self, bit: Bit) -> bool {
        self.0 & (1 << bit as u32) != 0
    }

    /// Adds `bit`.
    pub(crate) fn insert(&mut self, bit: Bit) {
        self.0 |= 1 << bit as u32;
    }
}

/// What one row of the feature table needs of a Vulkan adapter. Every need
/// of a row must hold for the adapter to offer the feature; a device opened
/// with it enables the bits and extensions named.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Need {
    /// The feature bit (enabled with the feature, and with it the
    /// extension that holds it: [`Bit::extension`]).
    Bit(Bit),
    /// One of these bits; the first the adapter has is enabled.
    OneOf(&'static [Bit]),
    /// Not needed: enabled with the feature where the adapter has it.
    WhereSupported(Bit),
    /// The device extension (enabled with the feature).
    Extension(&'static CStr),
    /// Every format with these optimal-tiling features.
    Formats(&'static [wgt::TextureFormat], vk::FormatFeatureFlags),
    /// Timestamps on the queue keel-hal uses, in every pass kind.
    Timestamps,
    /// Every subgroup operation kind naga emits, in these stages.
    Subgroups(vk::ShaderStageFlags),
    /// A cooperative-matrix configuration shaders can name
    /// (`cooperative_matrix.rs`).
    CooperativeMatrices,
}

/// The union of format feature flags, for [`Need::Formats`] rows.
pub(crate) const fn formats(flags: &[vk::FormatFeatureFlags]) -> vk::FormatFeatureFlags {
    let mut raw = 0;
    let mut i = 0;
    while i < flags.len() {
        raw |= flags[i].as_raw();
        i += 1;
    }
    vk::FormatFeatureFlags::from_raw(raw)
}

impl Chain {
    /// The chain's structs linked for `vkGetPhysicalDeviceFeatures2` or
    /// `VkDeviceCreateInfo`: the core 1.1–1.3 ones always, an extension's
    /// only where `has` says it exists (probing) or is enabled (creation).
    pub(crate) fn link(&mut self, has: impl Fn(&CStr) -> bool) -> vk::PhysicalDeviceFeatures2<'_> {
        let mut f = vk::PhysicalDeviceFeatures2::default()
            .features(self.core)
            .push_next(&mut self.v11)
            .push_next(&mut self.v12)
            .push_next(&mut self.v13);
        if has(ash::khr::acceleration_structure::NAME) {
            f = f.push_next(&mut self.accel);
        }
        if has(ash::khr::ray_query::NAME) {
            f = f.push_next(&mut self.ray_query);
        }
        if has(ash::khr::ray_tracing_pipeline::NAME) {
            f = f.push_next(&mut self.ray_tracing);
        }
        if has(ash::ext::shader_atomic_float::NAME) {
            f = f.push_next(&mut self.atomic_float);
        }
        if has(ash::khr::ray_tracing_position_fetch::NAME) {
            f = f.push_next(&mut self.position_fetch);
        }
        if has(ash::khr::fragment_shader_barycentric::NAME) {
            f = f.push_next(&mut self.barycentric);
        }
        if has(ash::ext::shader_image_atomic_int64::NAME) {
            f = f.push_next(&mut self.image_int64);
        }
        if has(ash::ext::mesh_shader::NAME) {
            f = f.push_next(&mut self.mesh);
        }
        if has(ash::khr::cooperative_matrix::NAME) {
            f = f.push_next(&mut self.cooperative_matrix);
        }
        f
    }

    /// The bits an adapter has: `query` fills the chain
    /// (`vkGetPhysicalDeviceFeatures2`), linked with the structs of the
    /// extensions `has` says exist.
    pub(crate) fn probe(
        has: impl Fn(&CStr) -> bool,
        query: impl FnOnce(&mut vk::PhysicalDeviceFeatures2<'_>),
    ) -> Bits {
        let mut chain = Self::default();
        let mut linked = chain.link(has);
        query(&mut linked);
        // The core struct is copied into `VkPhysicalDeviceFeatures2`, not
        // linked: read it back.
        chain.core = linked.features;
        chain.bits()
    }

    /// The bits set in the chain.
    fn bits(&mut self) -> Bits {
        let mut bits = Bits::default();
        for &bit in Bit::ALL {
            if *bit.field(self) == vk::TRUE {
                bits.insert(bit);
            }
        }
        bits
    }

    /// A chain with exactly `bits` set (for device creation).
    pub(crate) fn with(bits: Bits) -> Self {
        let mut chain = Self::default();
        for &bit in Bit::ALL {
            if bits.has(bit) {
                *bit.field(&mut chain) = vk::TRUE;
            }
        }
        chain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_writes_and_reads_every_bit_in_its_own_field() {
        for &bit in Bit::ALL {
            let mut only = Bits::default();
            only.insert(bit);
            let mut chain = Chain::with(only);
            assert_eq!(chain.bits(), only, "{bit:?} round trip");
        }
        assert!(Bit::ALL.len() <= 128, "Bits holds at most 128");
    }
}
