//! Vulkan's columns of the feature table (`crate::features`): the device
//! feature bits keel-hal reads and enables ([`Bit`]: one row per Vulkan
//! feature field, probed and enabled through the same [`Chain`]), what a
//! table row needs of an adapter ([`Need`]), and what probing, advertising
//! and device creation derive from the table ([`offered`],
//! [`DeviceRequest`]).

use std::ffi::CStr;

use ash::vk;

use super::adapter::PhysicalInfo;
use crate::features::{Feature, Row, TABLE};
use crate::HalFeatures;

/// The Vulkan feature structs keel-hal reads and enables, one of each:
/// probing fills them (`vkGetPhysicalDeviceFeatures2`) and device creation
/// chains them, so a [`Bit`] names the same field both ways.
#[derive(Default)]
pub(super) struct Chain {
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

/// Bits every device enables: the Vulkan 1.3 baseline keel-hal runs on (an
/// adapter lacking one is not exposed).
pub(super) const REQUIRED: &[Bit] = &[
    Bit::TimelineSemaphore,
    Bit::Synchronization2,
    Bit::DynamicRendering,
    Bit::Maintenance4,
];

/// Bits every device enables wherever supported, whatever it was opened
/// with: what samplers, pipelines and draws use without a feature of their
/// own (anisotropy, cube arrays, per-sample shading, polygon modes, depth
/// clamp and bias clamp, independent blending, multi-draw, first instances,
/// stage stores), device addresses for acceleration structures, and zeroed
/// workgroup memory (naga's polyfill for task and mesh stages declares a
/// second `LocalInvocationIndex`, which SPIR-V forbids:
/// `VUID-StandaloneSpirv-OpEntryPoint-09658`).
pub(super) const WHERE_SUPPORTED: &[Bit] = &[
    Bit::SamplerAnisotropy,
    Bit::ImageCubeArray,
    Bit::SampleRateShading,
    Bit::FillModeNonSolid,
    Bit::DepthClamp,
    Bit::DepthBiasClamp,
    Bit::IndependentBlend,
    Bit::MultiDrawIndirect,
    Bit::DrawIndirectFirstInstance,
    Bit::VertexPipelineStoresAndAtomics,
    Bit::FragmentStoresAndAtomics,
    Bit::BufferDeviceAddress,
    Bit::ZeroInitializeWorkgroupMemory,
    // naga writes `pack4xI8`, `unpack4xU8` and friends with 8-bit integers
    // (SPIR-V `Int8`; VUID-VkShaderModuleCreateInfo-pCode-08740 without it).
    Bit::ShaderInt8,
];

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

/// The subgroup operations a `Need::Subgroups` row needs: every kind naga
/// emits.
const SUBGROUP_OPERATIONS: vk::SubgroupFeatureFlags = vk::SubgroupFeatureFlags::from_raw(
    vk::SubgroupFeatureFlags::BASIC.as_raw()
        | vk::SubgroupFeatureFlags::VOTE.as_raw()
        | vk::SubgroupFeatureFlags::ARITHMETIC.as_raw()
        | vk::SubgroupFeatureFlags::BALLOT.as_raw()
        | vk::SubgroupFeatureFlags::SHUFFLE.as_raw()
        | vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE.as_raw()
        | vk::SubgroupFeatureFlags::QUAD.as_raw(),
);

impl Chain {
    /// The chain's structs linked for `vkGetPhysicalDeviceFeatures2` or
    /// `VkDeviceCreateInfo`: the core 1.1–1.3 ones always, an extension's
    /// only where `has` says it exists (probing) or is enabled (creation).
    pub(super) fn link(&mut self, has: impl Fn(&CStr) -> bool) -> vk::PhysicalDeviceFeatures2<'_> {
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
    pub(super) fn probe(
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
    pub(super) fn with(bits: Bits) -> Self {
        let mut chain = Self::default();
        for &bit in Bit::ALL {
            if bits.has(bit) {
                *bit.field(&mut chain) = vk::TRUE;
            }
        }
        chain
    }
}

/// Whether `info`'s adapter meets `need`.
fn meets(
    info: &PhysicalInfo,
    format_features: &impl Fn(wgt::TextureFormat) -> vk::FormatFeatureFlags,
    need: &Need,
) -> bool {
    match *need {
        Need::Bit(bit) => info.features.has(bit),
        Need::OneOf(bits) => bits.iter().any(|&b| info.features.has(b)),
        Need::WhereSupported(_) => true,
        Need::Extension(name) => info.has(name),
        Need::Formats(list, needed) => list.iter().all(|&f| format_features(f).contains(needed)),
        Need::Timestamps => {
            info.properties.limits.timestamp_compute_and_graphics == vk::TRUE
                && info.timestamp_valid_bits > 0
        }
        Need::Subgroups(stages) => {
            info.subgroup_operations.contains(SUBGROUP_OPERATIONS)
                && info.subgroup_stages.contains(stages)
        }
        Need::CooperativeMatrices => !info.cooperative_matrices.is_empty(),
    }
}

/// What the adapter offers: the rows of the feature table whose Vulkan
/// needs all hold on it. `format_features` gives a format's optimal-tiling
/// features.
pub(super) fn offered(
    info: &PhysicalInfo,
    format_features: impl Fn(wgt::TextureFormat) -> vk::FormatFeatureFlags,
) -> (wgt::Features, HalFeatures) {
    let mut features = wgt::Features::empty();
    let mut hal = HalFeatures::empty();
    for row in TABLE {
        if row.vulkan.iter().all(|n| meets(info, &format_features, n)) {
            match row.feature {
                Feature::Wgt(f) => features |= f,
                Feature::Hal(h) => hal |= h,
            }
        }
    }
    (features, hal)
}

/// What a device opened with some features enables: its extensions (in
/// table order, each once) and its feature bits.
#[derive(Debug, Default)]
pub(super) struct DeviceRequest {
    /// Device extensions to enable.
    pub(super) extensions: Vec<&'static CStr>,
    /// Feature bits to enable.
    pub(super) bits: Bits,
}

impl DeviceRequest {
    /// What `features` and `hal` need on `info`'s adapter (which offers
    /// them: `check_request` ran), with the baseline bits.
    pub(super) fn new(info: &PhysicalInfo, features: wgt::Features, hal: HalFeatures) -> Self {
        let mut out = Self::default();
        for &bit in REQUIRED {
            out.bits.insert(bit);
        }
        for &bit in WHERE_SUPPORTED {
            if info.features.has(bit) {
                out.bits.insert(bit);
            }
        }
        let asked = |row: &Row| match row.feature {
            Feature::Wgt(f) => features.contains(f),
            Feature::Hal(h) => hal.contains(h),
        };
        for row in TABLE.iter().filter(|r| asked(r)) {
            for need in row.vulkan {
                match *need {
                    Need::Bit(bit) => out.enable(bit),
                    Need::OneOf(bits) => {
                        if !bits.iter().any(|&b| out.bits.has(b)) {
                            if let Some(&bit) = bits.iter().find(|&&b| info.features.has(b)) {
                                out.enable(bit);
                            }
                        }
                    }
                    Need::WhereSupported(bit) => {
                        if info.features.has(bit) {
                            out.enable(bit);
                        }
                    }
                    Need::Extension(name) => out.extension(name),
                    Need::Formats(..)
                    | Need::Timestamps
                    | Need::Subgroups(_)
                    | Need::CooperativeMatrices => {}
                }
            }
        }
        out
    }

    fn enable(&mut self, bit: Bit) {
        self.bits.insert(bit);
        if let Some(name) = bit.extension() {
            self.extension(name);
        }
    }

    /// Adds an extension (once).
    pub(super) fn extension(&mut self, name: &'static CStr) {
        if !self.extensions.contains(&name) {
            self.extensions.push(name);
        }
    }

    /// Whether the extension is enabled.
    pub(super) fn has(&self, name: &CStr) -> bool {
        self.extensions.contains(&name)
    }

    /// The keel-hal capabilities the device has: the hal rows whose bits
    /// and extensions it enables (whether the caller asked through a hal
    /// feature or a `wgpu-types` one).
    pub(super) fn hal_features(&self) -> HalFeatures {
        let mut hal = HalFeatures::empty();
        for row in TABLE {
            let Feature::Hal(h) = row.feature else {
                continue;
            };
            let on = row.vulkan.iter().all(|need| match *need {
                Need::Bit(bit) => self.bits.has(bit),
                Need::OneOf(bits) => bits.iter().any(|&b| self.bits.has(b)),
                Need::Extension(name) => self.has(name),
                _ => true,
            });
            if on {
                hal |= h;
            }
        }
        hal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A physical device with `bits`, `extensions`, every subgroup
    /// operation in every stage, and timestamps.
    fn info(bits: &[Bit], extensions: &[&CStr]) -> PhysicalInfo {
        let mut features = Bits::default();
        for &bit in bits {
            features.insert(bit);
        }
        let mut properties = vk::PhysicalDeviceProperties::default();
        properties.limits.timestamp_compute_and_graphics = vk::TRUE;
        PhysicalInfo {
            properties,
            max_buffer_size: 0,
            driver_name: String::new(),
            driver_info: String::new(),
            features,
            extensions: extensions.iter().map(|e| (*e).to_owned()).collect(),
            ray_limits: Default::default(),
            mesh_limits: Default::default(),
            cooperative_matrices: Vec::new(),
            subgroup_stages: vk::ShaderStageFlags::ALL,
            subgroup_operations: vk::SubgroupFeatureFlags::from_raw(u32::MAX),
            max_multiview_views: 0,
            queue_family_index: 0,
            timestamp_valid_bits: 64,
            workarounds: Default::default(),
        }
    }

    fn every_format(_: wgt::TextureFormat) -> vk::FormatFeatureFlags {
        vk::FormatFeatureFlags::from_raw(u32::MAX)
    }

    #[test]
    fn stage_stores_are_enabled_wherever_supported() {
        let none = DeviceRequest::new(
            &info(&[], &[]),
            wgt::Features::empty(),
            HalFeatures::empty(),
        );
        assert!(!none.bits.has(Bit::VertexPipelineStoresAndAtomics));
        let with = info(
            &[
                Bit::VertexPipelineStoresAndAtomics,
                Bit::FragmentStoresAndAtomics,
            ],
            &[],
        );
        let request = DeviceRequest::new(&with, wgt::Features::empty(), HalFeatures::empty());
        assert!(request.bits.has(Bit::VertexPipelineStoresAndAtomics));
        assert!(request.bits.has(Bit::FragmentStoresAndAtomics));
        for &bit in REQUIRED {
            assert!(none.bits.has(bit), "{bit:?} is always enabled");
        }
    }

    #[test]
    fn sixteen_bit_types_need_and_enable_16bit_storage() {
        use wgt::Features as F;
        let without = info(&[Bit::ShaderFloat16, Bit::ShaderInt16], &[]);
        let (offered_without, _) = offered(&without, every_format);
        assert!(!offered_without.intersects(F::SHADER_F16 | F::SHADER_I16));
        let storage = [
            Bit::ShaderFloat16,
            Bit::ShaderInt16,
            Bit::StorageBuffer16BitAccess,
            Bit::UniformAndStorageBuffer16BitAccess,
        ];
        let with = info(&storage, &[]);
        let (offered_with, _) = offered(&with, every_format);
        assert!(offered_with.contains(F::SHADER_F16 | F::SHADER_I16));
        let off = DeviceRequest::new(&with, F::empty(), HalFeatures::empty());
        assert!(!off.bits.has(Bit::StorageBuffer16BitAccess));
        for feature in [F::SHADER_F16, F::SHADER_I16] {
            let on = DeviceRequest::new(&with, feature, HalFeatures::empty());
            assert!(on.bits.has(Bit::StorageBuffer16BitAccess));
            assert!(on.bits.has(Bit::UniformAndStorageBuffer16BitAccess));
            assert!(!on.bits.has(Bit::StorageInputOutput16), "not supported");
        }
        let mut io = storage.to_vec();
        io.push(Bit::StorageInputOutput16);
        let on = DeviceRequest::new(&info(&io, &[]), F::SHADER_F16, HalFeatures::empty());
        assert!(on.bits.has(Bit::StorageInputOutput16));
    }

    #[test]
    fn ray_query_enables_acceleration_structures() {
        let rq = info(
            &[
                Bit::AccelerationStructure,
                Bit::BufferDeviceAddress,
                Bit::RayQuery,
            ],
            &[ash::khr::deferred_host_operations::NAME],
        );
        let (features, hal) = offered(&rq, every_format);
        assert!(features.contains(wgt::Features::EXPERIMENTAL_RAY_QUERY));
        assert!(hal.contains(HalFeatures::ACCELERATION_STRUCTURE | HalFeatures::RAY_QUERY));
        let request = DeviceRequest::new(
            &rq,
            wgt::Features::EXPERIMENTAL_RAY_QUERY,
            HalFeatures::empty(),
        );
        let hal = request.hal_features();
        assert!(hal.contains(HalFeatures::ACCELERATION_STRUCTURE | HalFeatures::RAY_QUERY));
        assert!(!hal.contains(HalFeatures::RAY_TRACING_PIPELINE));
        assert!(request.has(ash::khr::acceleration_structure::NAME));
        assert!(request.has(ash::khr::ray_query::NAME));
        assert!(request.has(ash::khr::deferred_host_operations::NAME));
        // Asked for structures alone, the device gets ray query for sizes.
        let alone = DeviceRequest::new(
            &rq,
            wgt::Features::empty(),
            HalFeatures::ACCELERATION_STRUCTURE,
        );
        assert!(alone.bits.has(Bit::RayQuery));
        let plain = DeviceRequest::new(&rq, wgt::Features::empty(), HalFeatures::SHADER_EXECUTION);
        assert_eq!(plain.hal_features(), HalFeatures::SHADER_EXECUTION);
        assert!(plain.extensions.is_empty());
    }

    #[test]
    fn format_rows_need_every_format_feature() {
        use vk::FormatFeatureFlags as V;
        use wgt::Features as F;
        use wgt::TextureFormat as T;
        let none = info(&[], &[]);
        let probed = |f: &dyn Fn(T) -> V| offered(&none, f).0;
        assert!(probed(&every_format)
            .contains(F::DEPTH32FLOAT_STENCIL8 | F::TEXTURE_FORMAT_16BIT_NORM | F::TEXTURE_ATOMIC));
        // D32S8 sampled but not a depth-stencil attachment: not offered.
        let sampled_only = |f: T| match f {
            T::Depth32FloatStencil8 => V::SAMPLED_IMAGE,
            _ => V::from_raw(u32::MAX),
        };
        assert!(!probed(&sampled_only).contains(F::DEPTH32FLOAT_STENCIL8));
        // Every 16-bit norm format counts, not just R16Unorm and Rgba16Snorm.
        for missing in [
            T::R16Unorm,
            T::R16Snorm,
            T::Rg16Unorm,
            T::Rg16Snorm,
            T::Rgba16Unorm,
            T::Rgba16Snorm,
        ] {
            let without = |f: T| {
                if f == missing {
                    V::SAMPLED_IMAGE | V::TRANSFER_SRC | V::TRANSFER_DST
                } else {
                    V::from_raw(u32::MAX)
                }
            };
            assert!(
                !probed(&without).contains(F::TEXTURE_FORMAT_16BIT_NORM),
                "{missing:?}"
            );
        }
        let no_atomics = |f: T| match f {
            T::R32Sint => V::STORAGE_IMAGE,
            _ => V::from_raw(u32::MAX),
        };
        assert!(!probed(&no_atomics).contains(F::TEXTURE_ATOMIC));
        // Multi-planar formats need sampler Y′CbCr conversion too.
        assert!(!probed(&every_format).contains(F::TEXTURE_FORMAT_NV12));
        let ycbcr = info(&[Bit::SamplerYcbcrConversion], &[]);
        assert!(offered(&ycbcr, every_format)
            .0
            .contains(F::TEXTURE_FORMAT_NV12 | F::TEXTURE_FORMAT_P010));
    }

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

    #[test]
    fn every_row_names_the_extension_of_its_bits_or_none() {
        // A row's bits bring their extension; a row never needs to name it.
        for row in TABLE {
            for need in row.vulkan {
                if let Need::Extension(name) = need {
                    let implied = row.vulkan.iter().any(|n| match n {
                        Need::Bit(b) | Need::WhereSupported(b) => b.extension() == Some(name),
                        _ => false,
                    });
                    assert!(
                        !implied,
                        "{:?} names {name:?}, which its bits bring",
                        row.feature
                    );
                }
            }
        }
    }
}
