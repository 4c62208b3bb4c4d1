//! The feature table: one row per feature keel-hal can offer, the single
//! source of truth for it.
//!
//! A row names the feature (a `wgt::Features` flag or a [`HalFeatures`]
//! one), the naga capabilities a device opened with it gives shaders, whether
//! the noop backend offers it, the `wgt::Limits` it sets, and what a Vulkan
//! adapter needs for it ([`Need`]: feature bits, extensions, format
//! support, timestamps, subgroup operations, cooperative-matrix
//! configurations). From the rows:
//!
//! The Vulkan column's vocabulary (feature bits, [`Need`]) is
//! `vulkan_column.rs`, beside the table: the backend reads both, and the
//! table imports nothing from a backend.
//!
//! - the Vulkan adapter advertises the features whose needs hold
//!   (`vulkan::features::offered`);
//! - a Vulkan device enables the bits and extensions of the features it is
//!   opened with, and reports the hal features they give
//!   (`vulkan::features::DeviceRequest`);
//! - shaders get the naga capabilities of the device's features
//!   ([`naga_capabilities`], both backends);
//! - noop advertises its column ([`noop_offers`]);
//! - the Vulkan limits of a feature are set only where it is offered
//!   (`vulkan::conv::map_limits`).
//!
//! Per-use checks (a sampler's border, a polygon mode, a query type) test
//! the device's `wgt::Features`, which the table enabled. Adding a feature is
//! one row here plus its implementation.

use naga::valid::Capabilities as C;
use wgt::Features as F;

#[cfg(feature = "vulkan")]
pub(crate) mod vulkan_column;

use crate::HalFeatures as H;
#[cfg(feature = "vulkan")]
use vulkan_column::{formats, Bit as B, Need, Need::*};

/// The feature a row stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Feature {
    /// A `wgpu-types` feature.
    Wgt(wgt::Features),
    /// A keel-hal capability.
    Hal(crate::HalFeatures),
}

/// One feature: see the module documentation.
#[derive(Debug)]
pub(crate) struct Row {
    /// The feature.
    pub(crate) feature: Feature,
    /// The naga capabilities shaders get on a device opened with it.
    pub(crate) naga: naga::valid::Capabilities,
    /// Whether the noop backend offers it (noop checks what it records and
    /// executes no shaders: it offers what it can check).
    pub(crate) noop: bool,
    /// The `wgt::Limits` fields the feature sets (left at their defaults
    /// where it is not offered).
    #[cfg_attr(not(feature = "vulkan"), allow(dead_code))]
    pub(crate) limits: &'static [&'static str],
    /// What a Vulkan adapter needs for it; a device opened with it enables
    /// the bits and extensions named.
    #[cfg(feature = "vulkan")]
    pub(crate) vulkan: &'static [Need],
}

/// Declares [`TABLE`]; the Vulkan column is left out of builds without
/// the Vulkan backend.
macro_rules! table {
    ($( $feature:expr => $naga:expr, noop: $noop:expr, limits: [$($limit:expr),*], vulkan: [$($need:expr),* $(,)?]; )*) => {
        /// The feature table (see the module documentation).
        pub(crate) static TABLE: &[Row] = &[$(
            Row {
                feature: $feature,
                naga: $naga,
                noop: $noop,
                limits: &[$($limit),*],
                #[cfg(feature = "vulkan")]
                vulkan: &[$($need),*],
            },
        )*];
    };
}

use Feature::{Hal, Wgt};

/// No naga capability.
const NONE: C = C::empty();

table! {
    // keel-hal's own capabilities.
    Hal(H::SHADER_EXECUTION) => NONE, noop: false, limits: [], vulkan: [];
    Hal(H::ACCELERATION_STRUCTURE) => NONE, noop: true,
        limits: ["max_blas_primitive_count", "max_blas_geometry_count",
            "max_tlas_instance_count", "max_acceleration_structures_per_shader_stage"],
        // Size queries need the rayQuery or rayTracingPipeline feature too.
        vulkan: [Bit(B::AccelerationStructure), Bit(B::BufferDeviceAddress),
            Extension(ash::khr::deferred_host_operations::NAME),
            OneOf(&[B::RayQuery, B::RayTracingPipeline])];
    Hal(H::RAY_QUERY) => C::RAY_QUERY, noop: false, limits: [],
        vulkan: [Bit(B::AccelerationStructure), Bit(B::BufferDeviceAddress),
            Extension(ash::khr::deferred_host_operations::NAME), Bit(B::RayQuery)];
    Hal(H::RAY_TRACING_PIPELINE) => C::RAY_TRACING_PIPELINE, noop: false,
        limits: ["max_ray_recursion_depth", "max_ray_dispatch_count"],
        vulkan: [Bit(B::AccelerationStructure), Bit(B::BufferDeviceAddress),
            Extension(ash::khr::deferred_host_operations::NAME), Bit(B::RayTracingPipeline)];
    Hal(H::EXTERNAL_MEMORY_FD) => NONE, noop: true, limits: [],
        vulkan: [Extension(ash::khr::external_memory_fd::NAME)];
    Hal(H::EXTERNAL_MEMORY_DMA_BUF) => NONE, noop: false, limits: [],
        vulkan: [Extension(ash::khr::external_memory_fd::NAME),
            Extension(ash::ext::external_memory_dma_buf::NAME)];
    Hal(H::EXTERNAL_MEMORY_HOST) => NONE, noop: true, limits: [],
        vulkan: [Extension(ash::ext::external_memory_host::NAME)];
    Hal(H::EXTERNAL_SEMAPHORE_FD) => NONE, noop: true, limits: [],
        vulkan: [Extension(ash::khr::external_semaphore_fd::NAME)];
    Hal(H::DRM_FORMAT_MODIFIER) => NONE, noop: false, limits: [],
        vulkan: [Extension(ash::ext::image_drm_format_modifier::NAME)];

    // Core Vulkan: nothing to probe or enable.
    Wgt(F::ADDRESS_MODE_CLAMP_TO_BORDER) => NONE, noop: true, limits: [], vulkan: [];
    Wgt(F::ADDRESS_MODE_CLAMP_TO_ZERO) => NONE, noop: true, limits: [], vulkan: [];
    // Push constants.
    Wgt(F::IMMEDIATES) => NONE, noop: true, limits: ["max_immediate_size"], vulkan: [];
    // vkCmdClearColorImage / vkCmdClearDepthStencilImage.
    Wgt(F::CLEAR_TEXTURE) => NONE, noop: true, limits: [], vulkan: [];
    // VkPipelineCache (`pipeline_cache.rs`).
    Wgt(F::PIPELINE_CACHE) => NONE, noop: true, limits: [], vulkan: [];
    // Unchecked SPIR-V goes to the driver as given (`UncheckedSpirV`).
    Wgt(F::PASSTHROUGH_SHADERS) => NONE, noop: true, limits: [], vulkan: [];
    Wgt(F::SHADER_EARLY_DEPTH_TEST) => NONE, noop: true, limits: [], vulkan: [];
    // Format capabilities are the adapter's own (`map_format_features`).
    Wgt(F::TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES) => NONE, noop: false, limits: [],
        vulkan: [];
    // `@coherent` / `@volatile` storage are plain SPIR-V decorations.
    Wgt(F::MEMORY_DECORATION_COHERENT) => C::MEMORY_DECORATION_COHERENT, noop: true,
        limits: [], vulkan: [];
    Wgt(F::MEMORY_DECORATION_VOLATILE) => C::MEMORY_DECORATION_VOLATILE, noop: true,
        limits: [], vulkan: [];
    // keel-hal allows every usage on mappable memory.
    Wgt(F::MAPPABLE_PRIMARY_BUFFERS) => NONE, noop: true, limits: [], vulkan: [];
    // Multisampled 2D arrays (only portability subsets lack them).
    Wgt(F::MULTISAMPLE_ARRAY) => NONE, noop: true, limits: [], vulkan: [];

    // Timestamps may be written anywhere in a recording, passes too.
    Wgt(F::TIMESTAMP_QUERY) => NONE, noop: true, limits: [], vulkan: [Timestamps];
    Wgt(F::TIMESTAMP_QUERY_INSIDE_ENCODERS) => NONE, noop: true, limits: [],
        vulkan: [Timestamps];
    Wgt(F::TIMESTAMP_QUERY_INSIDE_PASSES) => NONE, noop: true, limits: [],
        vulkan: [Timestamps];
    Wgt(F::PIPELINE_STATISTICS_QUERY) => NONE, noop: false, limits: [],
        vulkan: [Bit(B::PipelineStatisticsQuery)];

    // Compressed formats (textureCompressionBC covers 3D images too).
    Wgt(F::TEXTURE_COMPRESSION_BC) => NONE, noop: false, limits: [],
        vulkan: [Bit(B::TextureCompressionBc)];
    Wgt(F::TEXTURE_COMPRESSION_BC_SLICED_3D) => NONE, noop: false, limits: [],
        vulkan: [Bit(B::TextureCompressionBc)];
    Wgt(F::TEXTURE_COMPRESSION_ETC2) => NONE, noop: false, limits: [],
        vulkan: [Bit(B::TextureCompressionEtc2)];
    Wgt(F::TEXTURE_COMPRESSION_ASTC) => NONE, noop: false, limits: [],
        vulkan: [Bit(B::TextureCompressionAstcLdr)];
    Wgt(F::TEXTURE_COMPRESSION_ASTC_HDR) => NONE, noop: false, limits: [],
        vulkan: [Bit(B::TextureCompressionAstcHdr)];

    // Format support, as wgpu-hal probes it.
    Wgt(F::DEPTH32FLOAT_STENCIL8) => NONE, noop: false, limits: [],
        vulkan: [Formats(&[wgt::TextureFormat::Depth32FloatStencil8],
            formats(&[V::SAMPLED_IMAGE, V::DEPTH_STENCIL_ATTACHMENT]))];
    Wgt(F::TEXTURE_FORMAT_16BIT_NORM) => NONE, noop: false, limits: [],
        vulkan: [Formats(NORM16, formats(&[V::SAMPLED_IMAGE, V::STORAGE_IMAGE,
            V::TRANSFER_SRC, V::TRANSFER_DST]))];
    // 32-bit storage-texture atomics (naga's capability is always given:
    // `shader::capabilities`).
    Wgt(F::TEXTURE_ATOMIC) => NONE, noop: false, limits: [],
        vulkan: [Formats(&[wgt::TextureFormat::R32Uint, wgt::TextureFormat::R32Sint],
            formats(&[V::STORAGE_IMAGE, V::STORAGE_IMAGE_ATOMIC]))];
    Wgt(F::FLOAT32_FILTERABLE) => NONE, noop: true, limits: [],
        vulkan: [Formats(FLOAT32, V::SAMPLED_IMAGE_FILTER_LINEAR)];
    Wgt(F::FLOAT32_BLENDABLE) => NONE, noop: true, limits: [],
        vulkan: [Formats(FLOAT32, V::COLOR_ATTACHMENT_BLEND)];
    Wgt(F::RG11B10UFLOAT_RENDERABLE) => NONE, noop: true, limits: [],
        vulkan: [Formats(&[wgt::TextureFormat::Rg11b10Ufloat],
            formats(&[V::COLOR_ATTACHMENT, V::COLOR_ATTACHMENT_BLEND]))];
    Wgt(F::BGRA8UNORM_STORAGE) => NONE, noop: true, limits: [],
        vulkan: [Formats(&[wgt::TextureFormat::Bgra8Unorm], V::STORAGE_IMAGE)];
    // Multi-planar formats: sampled through plane views, filled and read by
    // copies, with sampler Y′CbCr conversion.
    Wgt(F::TEXTURE_FORMAT_NV12) => NONE, noop: false, limits: [],
        vulkan: [Formats(&[wgt::TextureFormat::NV12], PLANAR),
            Bit(B::SamplerYcbcrConversion)];
    Wgt(F::TEXTURE_FORMAT_P010) => NONE, noop: false, limits: [],
        vulkan: [Formats(&[wgt::TextureFormat::P010], PLANAR),
            Bit(B::SamplerYcbcrConversion)];

    // Pipeline state.
    Wgt(F::POLYGON_MODE_LINE) => NONE, noop: true, limits: [],
        vulkan: [Bit(B::FillModeNonSolid)];
    Wgt(F::POLYGON_MODE_POINT) => NONE, noop: true, limits: [],
        vulkan: [Bit(B::FillModeNonSolid)];
    Wgt(F::DEPTH_CLIP_CONTROL) => NONE, noop: true, limits: [], vulkan: [Bit(B::DepthClamp)];
    // Overestimation (the extension has no feature bits).
    Wgt(F::CONSERVATIVE_RASTERIZATION) => NONE, noop: false, limits: [],
        vulkan: [Extension(ash::ext::conservative_rasterization::NAME)];
    Wgt(F::DUAL_SOURCE_BLENDING) => C::DUAL_SOURCE_BLENDING, noop: true, limits: [],
        vulkan: [Bit(B::DualSrcBlend)];
    Wgt(F::VERTEX_WRITABLE_STORAGE) => NONE, noop: true, limits: [],
        vulkan: [Bit(B::VertexPipelineStoresAndAtomics)];

    // Draws.
    Wgt(F::INDIRECT_FIRST_INSTANCE) => NONE, noop: true, limits: [],
        vulkan: [Bit(B::DrawIndirectFirstInstance)];
    Wgt(F::MULTI_DRAW_INDIRECT_COUNT) => NONE, noop: true, limits: [],
        vulkan: [Bit(B::DrawIndirectCount)];
    // Any view mask: VkRenderingInfo and VkPipelineRenderingCreateInfo take
    // one as it is.
    Wgt(F::MULTIVIEW) => C::MULTIVIEW, noop: false, limits: ["max_multiview_view_count"],
        vulkan: [Bit(B::Multiview)];
    Wgt(F::SELECTIVE_MULTIVIEW) => C::MULTIVIEW, noop: false, limits: [],
        vulkan: [Bit(B::Multiview)];

    // Shader types and built-ins.
    Wgt(F::SHADER_F64) => C::FLOAT64, noop: false, limits: [],
        vulkan: [Bit(B::ShaderFloat64)];
    Wgt(F::SHADER_INT64) => C::SHADER_INT64, noop: false, limits: [],
        vulkan: [Bit(B::ShaderInt64)];
    // naga's SPIR-V declares 16-bit storage for any 16-bit type; where the
    // device lacks storageInputOutput16, naga passes f16 stage inputs and
    // outputs as f32 (`pipeline::storage_input_output_16`).
    Wgt(F::SHADER_F16) => C::SHADER_FLOAT16, noop: false, limits: [],
        vulkan: [Bit(B::ShaderFloat16), Bit(B::StorageBuffer16BitAccess),
            Bit(B::UniformAndStorageBuffer16BitAccess),
            WhereSupported(B::StorageInputOutput16)];
    Wgt(F::SHADER_I16) => C::SHADER_INT16, noop: false, limits: [],
        vulkan: [Bit(B::ShaderInt16), Bit(B::StorageBuffer16BitAccess),
            Bit(B::UniformAndStorageBuffer16BitAccess),
            WhereSupported(B::StorageInputOutput16)];
    Wgt(F::CLIP_DISTANCES) => C::CLIP_DISTANCES, noop: true, limits: [],
        vulkan: [Bit(B::ShaderClipDistance)];
    // SPIR-V's PrimitiveId in fragment shaders needs geometryShader.
    Wgt(F::PRIMITIVE_INDEX) => C::PRIMITIVE_INDEX, noop: true, limits: [],
        vulkan: [Bit(B::GeometryShader)];
    Wgt(F::SHADER_DRAW_INDEX) => C::DRAW_INDEX, noop: true, limits: [],
        vulkan: [Bit(B::ShaderDrawParameters)];
    // One Vulkan feature for both, as wgpu-hal reads it.
    Wgt(F::SHADER_BARYCENTRICS) => C::SHADER_BARYCENTRICS, noop: true, limits: [],
        vulkan: [Bit(B::FragmentShaderBarycentric)];
    Wgt(F::SHADER_PER_VERTEX) => C::PER_VERTEX, noop: true, limits: [],
        vulkan: [Bit(B::FragmentShaderBarycentric)];

    // Atomics (64-bit ones take and return 64-bit integers).
    Wgt(F::SHADER_INT64_ATOMIC_MIN_MAX) => C::SHADER_INT64.union(C::SHADER_INT64_ATOMIC_MIN_MAX),
        noop: true, limits: [],
        vulkan: [Bit(B::ShaderInt64), Bit(B::ShaderBufferInt64Atomics),
            Bit(B::ShaderSharedInt64Atomics)];
    Wgt(F::SHADER_INT64_ATOMIC_ALL_OPS) => C::SHADER_INT64
            .union(C::SHADER_INT64_ATOMIC_MIN_MAX)
            .union(C::SHADER_INT64_ATOMIC_ALL_OPS),
        noop: true, limits: [],
        vulkan: [Bit(B::ShaderInt64), Bit(B::ShaderBufferInt64Atomics),
            Bit(B::ShaderSharedInt64Atomics)];
    Wgt(F::SHADER_FLOAT32_ATOMIC) => C::SHADER_FLOAT32_ATOMIC, noop: true, limits: [],
        vulkan: [Bit(B::BufferFloat32Atomics), Bit(B::BufferFloat32AtomicAdd)];
    Wgt(F::TEXTURE_INT64_ATOMIC) => C::TEXTURE_INT64_ATOMIC.union(C::SHADER_INT64),
        noop: false, limits: [],
        vulkan: [Bit(B::ImageInt64Atomics), Bit(B::ShaderInt64),
            Formats(&[wgt::TextureFormat::R64Uint],
                formats(&[V::STORAGE_IMAGE, V::STORAGE_IMAGE_ATOMIC]))];

    // Subgroups: every operation kind naga emits, in these stages (subgroup
    // size control is core in the 1.3 baseline). naga 30's subgroupBarrier
    // is mended in `shader/spirv_fixups.rs` (VUID-04650).
    Wgt(F::SUBGROUP) => C::SUBGROUP, noop: true, limits: [],
        vulkan: [Subgroups(STAGES_CF)];
    Wgt(F::SUBGROUP_VERTEX) => C::SUBGROUP.union(C::SUBGROUP_VERTEX_STAGE), noop: true,
        limits: [], vulkan: [Subgroups(vk::ShaderStageFlags::VERTEX)];
    Wgt(F::SUBGROUP_BARRIER) => C::SUBGROUP.union(C::SUBGROUP_BARRIER), noop: true,
        limits: [], vulkan: [Subgroups(STAGES_CF)];

    // Binding arrays (descriptor indexing). With partially bound arrays, a
    // device enables every update-after-bind kind the adapter has
    // (`vulkan/binding.rs` reads which).
    Wgt(F::TEXTURE_BINDING_ARRAY) => C::TEXTURE_AND_SAMPLER_BINDING_ARRAY, noop: true,
        limits: ["max_binding_array_elements_per_shader_stage",
            "max_binding_array_sampler_elements_per_shader_stage"],
        vulkan: [Bit(B::SampledImageArrayDynamicIndexing),
            WhereSupported(B::RuntimeDescriptorArray)];
    // naga's BUFFER_BINDING_ARRAY is arrays of uniform buffers.
    Wgt(F::BUFFER_BINDING_ARRAY) => C::BUFFER_BINDING_ARRAY, noop: true, limits: [],
        vulkan: [Bit(B::StorageBufferArrayDynamicIndexing),
            Bit(B::UniformBufferArrayDynamicIndexing),
            WhereSupported(B::RuntimeDescriptorArray)];
    Wgt(F::STORAGE_RESOURCE_BINDING_ARRAY) => C::STORAGE_BUFFER_BINDING_ARRAY
            .union(C::STORAGE_TEXTURE_BINDING_ARRAY),
        noop: true, limits: [],
        vulkan: [Bit(B::StorageBufferArrayDynamicIndexing),
            Bit(B::StorageImageArrayDynamicIndexing),
            WhereSupported(B::RuntimeDescriptorArray)];
    Wgt(F::UNIFORM_BUFFER_BINDING_ARRAYS) => C::BUFFER_BINDING_ARRAY
            .union(C::BUFFER_BINDING_ARRAY_NON_UNIFORM_INDEXING),
        noop: false, limits: [],
        vulkan: [Bit(B::UniformBufferArrayDynamicIndexing),
            Bit(B::UniformBufferArrayNonUniformIndexing)];
    Wgt(F::SAMPLED_TEXTURE_AND_STORAGE_BUFFER_ARRAY_NON_UNIFORM_INDEXING) =>
        C::TEXTURE_AND_SAMPLER_BINDING_ARRAY_NON_UNIFORM_INDEXING
            .union(C::STORAGE_BUFFER_BINDING_ARRAY_NON_UNIFORM_INDEXING),
        noop: false, limits: [],
        vulkan: [Bit(B::SampledImageArrayNonUniformIndexing),
            Bit(B::StorageBufferArrayNonUniformIndexing)];
    Wgt(F::STORAGE_TEXTURE_ARRAY_NON_UNIFORM_INDEXING) =>
        C::STORAGE_TEXTURE_BINDING_ARRAY_NON_UNIFORM_INDEXING, noop: false, limits: [],
        vulkan: [Bit(B::StorageImageArrayNonUniformIndexing)];
    Wgt(F::PARTIALLY_BOUND_BINDING_ARRAY) => NONE, noop: true, limits: [],
        vulkan: [Bit(B::PartiallyBound),
            WhereSupported(B::SampledImageUpdateAfterBind),
            WhereSupported(B::StorageImageUpdateAfterBind),
            WhereSupported(B::StorageBufferUpdateAfterBind),
            WhereSupported(B::UniformBufferUpdateAfterBind)];

    // Task and mesh stages (workgroup memory zeroed by the driver: see
    // `vulkan::features::WHERE_SUPPORTED`), points among their outputs, and
    // with multiview where the driver lets mesh pipelines render several
    // views (VUID-VkPhysicalDeviceMeshShaderFeaturesEXT-multiviewMeshShader-07032).
    Wgt(F::EXPERIMENTAL_MESH_SHADER) => C::MESH_SHADER, noop: true,
        limits: ["max_task_workgroup_total_count", "max_task_workgroups_per_dimension",
            "max_mesh_workgroup_total_count", "max_mesh_workgroups_per_dimension",
            "max_task_invocations_per_workgroup", "max_task_invocations_per_dimension",
            "max_mesh_invocations_per_workgroup", "max_mesh_invocations_per_dimension",
            "max_task_payload_size", "max_mesh_output_vertices",
            "max_mesh_output_primitives", "max_mesh_output_layers"],
        vulkan: [Bit(B::TaskShader), Bit(B::MeshShader), Bit(B::ZeroInitializeWorkgroupMemory)];
    Wgt(F::EXPERIMENTAL_MESH_SHADER_POINTS) => C::MESH_SHADER.union(C::MESH_SHADER_POINT_TOPOLOGY),
        noop: true, limits: [],
        vulkan: [Bit(B::TaskShader), Bit(B::MeshShader), Bit(B::ZeroInitializeWorkgroupMemory)];
    Wgt(F::EXPERIMENTAL_MESH_SHADER_MULTIVIEW) => C::MESH_SHADER.union(C::MULTIVIEW),
        noop: false, limits: ["max_mesh_multiview_view_count"],
        vulkan: [Bit(B::TaskShader), Bit(B::MeshShader), Bit(B::ZeroInitializeWorkgroupMemory),
            Bit(B::Multiview), Bit(B::MultiviewMeshShader)];

    // Subgroup-scope matrix multiply-add, written under the Vulkan memory
    // model with device-scope atomics (VUID-RuntimeSpirv-vulkanMemoryModel-06265),
    // where a configuration shaders can name exists.
    Wgt(F::EXPERIMENTAL_COOPERATIVE_MATRIX) => C::COOPERATIVE_MATRIX, noop: false, limits: [],
        vulkan: [Bit(B::CooperativeMatrix), Bit(B::VulkanMemoryModel),
            Bit(B::VulkanMemoryModelDeviceScope), CooperativeMatrices];

    // Ray tracing (acceleration structures need device addresses and
    // deferred host operations).
    Wgt(F::EXPERIMENTAL_RAY_QUERY) => C::RAY_QUERY, noop: false,
        limits: ["max_blas_primitive_count", "max_blas_geometry_count",
            "max_tlas_instance_count", "max_acceleration_structures_per_shader_stage"],
        vulkan: [Bit(B::AccelerationStructure), Bit(B::BufferDeviceAddress),
            Extension(ash::khr::deferred_host_operations::NAME), Bit(B::RayQuery)];
    Wgt(F::ACCELERATION_STRUCTURE_BINDING_ARRAY) => C::ACCELERATION_STRUCTURE_BINDING_ARRAY,
        noop: false,
        limits: ["max_binding_array_acceleration_structure_elements_per_shader_stage"],
        vulkan: [Bit(B::AccelerationStructure), Bit(B::BufferDeviceAddress),
            Extension(ash::khr::deferred_host_operations::NAME), Bit(B::RayQuery),
            Bit(B::AccelerationStructureUpdateAfterBind)];
    // Position fetch from ray queries (`getCommittedHitVertexPositions`).
    Wgt(F::EXPERIMENTAL_RAY_HIT_VERTEX_RETURN) => C::RAY_QUERY.union(C::RAY_HIT_VERTEX_POSITION),
        noop: false, limits: [],
        vulkan: [Bit(B::AccelerationStructure), Bit(B::BufferDeviceAddress),
            Extension(ash::khr::deferred_host_operations::NAME), Bit(B::RayQuery),
            Bit(B::RayTracingPositionFetch)];
    // Vulkan requires these position formats (R32G32, R16G16(B16A16) float
    // and snorm) for builds wherever the extension exists.
    Wgt(F::EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS) => NONE, noop: false, limits: [],
        vulkan: [Bit(B::AccelerationStructure), Bit(B::BufferDeviceAddress),
            Extension(ash::khr::deferred_host_operations::NAME),
            OneOf(&[B::RayQuery, B::RayTracingPipeline])];
    Wgt(F::EXPERIMENTAL_RAY_TRACING_PIPELINES) => C::RAY_TRACING_PIPELINE, noop: false,
        limits: ["max_ray_recursion_depth", "max_ray_dispatch_count"],
        vulkan: [Bit(B::AccelerationStructure), Bit(B::BufferDeviceAddress),
            Extension(ash::khr::deferred_host_operations::NAME), Bit(B::RayTracingPipeline)];

    // External memory.
    Wgt(F::VULKAN_EXTERNAL_MEMORY_FD) => NONE, noop: false, limits: [],
        vulkan: [Extension(ash::khr::external_memory_fd::NAME)];
    Wgt(F::VULKAN_EXTERNAL_MEMORY_DMA_BUF) => NONE, noop: false, limits: [],
        vulkan: [Extension(ash::khr::external_memory_fd::NAME),
            Extension(ash::ext::external_memory_dma_buf::NAME)];
}

#[cfg(feature = "vulkan")]
use ash::vk::{self, FormatFeatureFlags as V};

/// The 16-bit norm formats `TEXTURE_FORMAT_16BIT_NORM` exposes.
#[cfg(feature = "vulkan")]
const NORM16: &[wgt::TextureFormat] = &[
    wgt::TextureFormat::R16Unorm,
    wgt::TextureFormat::R16Snorm,
    wgt::TextureFormat::Rg16Unorm,
    wgt::TextureFormat::Rg16Snorm,
    wgt::TextureFormat::Rgba16Unorm,
    wgt::TextureFormat::Rgba16Snorm,
];

/// The 32-bit float colour formats of `FLOAT32_FILTERABLE` / `_BLENDABLE`.
#[cfg(feature = "vulkan")]
const FLOAT32: &[wgt::TextureFormat] = &[
    wgt::TextureFormat::R32Float,
    wgt::TextureFormat::Rg32Float,
    wgt::TextureFormat::Rgba32Float,
];

/// What a multi-planar format needs: sampled, copy source and destination.
#[cfg(feature = "vulkan")]
const PLANAR: V = formats(&[V::SAMPLED_IMAGE, V::TRANSFER_SRC, V::TRANSFER_DST]);

/// Compute and fragment stages, where `SUBGROUP` runs.
#[cfg(feature = "vulkan")]
const STAGES_CF: vk::ShaderStageFlags = vk::ShaderStageFlags::from_raw(
    vk::ShaderStageFlags::COMPUTE.as_raw() | vk::ShaderStageFlags::FRAGMENT.as_raw(),
);

/// Whether a device opened with `features` and `hal` has the row's feature.
fn opened_with(row: &Row, features: wgt::Features, hal: crate::HalFeatures) -> bool {
    match row.feature {
        Feature::Wgt(f) => features.contains(f),
        Feature::Hal(h) => hal.contains(h),
    }
}

/// The naga capabilities the features of a device opened with `features`
/// and `hal` give shaders (the union of their rows).
pub(crate) fn naga_capabilities(
    features: wgt::Features,
    hal: crate::HalFeatures,
) -> naga::valid::Capabilities {
    TABLE
        .iter()
        .filter(|row| opened_with(row, features, hal))
        .fold(C::empty(), |caps, row| caps | row.naga)
}

/// What the noop backend offers: the rows of its column.
pub(crate) fn noop_offers() -> (wgt::Features, crate::HalFeatures) {
    TABLE
        .iter()
        .filter(|row| row.noop)
        .fold((F::empty(), H::empty()), |(f, h), row| match row.feature {
            Feature::Wgt(w) => (f | w, h),
            Feature::Hal(x) => (f, h | x),
        })
}

/// Whether any row offered in `features` / `hal` sets the limit `name`.
#[cfg_attr(not(feature = "vulkan"), allow(dead_code))]
pub(crate) fn sets_limit(features: wgt::Features, hal: crate::HalFeatures, name: &str) -> bool {
    TABLE
        .iter()
        .any(|row| opened_with(row, features, hal) && row.limits.contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_feature_has_one_row() {
        let mut seen_f = F::empty();
        let mut seen_h = H::empty();
        for row in TABLE {
            match row.feature {
                Feature::Wgt(f) => {
                    assert_eq!(f.iter().count(), 1, "{f:?}: one flag per row");
                    assert!(!seen_f.contains(f), "{f:?} has two rows");
                    seen_f |= f;
                }
                Feature::Hal(h) => {
                    assert_eq!(h.iter().count(), 1, "{h:?}: one flag per row");
                    assert!(!seen_h.contains(h), "{h:?} has two rows");
                    seen_h |= h;
                }
            }
        }
        assert_eq!(seen_h, H::all(), "every hal feature has a row");
    }

    #[test]
    fn every_named_limit_is_a_wgt_limit() {
        // wgt names every limit it compares; compare both ways so that each
        // limit differs in one direction.
        let mut names = Vec::new();
        let (low, high) = (
            wgt::Limits::downlevel_webgl2_defaults(),
            wgt::Limits::unlimited(),
        );
        high.check_limits_with_fail_fn(&low, false, |name, _, _| names.push(name));
        low.check_limits_with_fail_fn(&high, false, |name, _, _| names.push(name));
        for row in TABLE {
            for limit in row.limits {
                assert!(names.contains(limit), "{:?}: no limit {limit}", row.feature);
            }
        }
    }

    #[test]
    fn naga_capabilities_are_the_union_of_the_rows() {
        assert_eq!(naga_capabilities(F::empty(), H::empty()), C::empty());
        assert_eq!(naga_capabilities(F::SHADER_F64, H::empty()), C::FLOAT64);
        assert_eq!(
            naga_capabilities(F::SUBGROUP | F::SUBGROUP_BARRIER, H::RAY_QUERY),
            C::SUBGROUP | C::SUBGROUP_BARRIER | C::RAY_QUERY
        );
    }

    #[test]
    fn noop_offers_no_feature_it_cannot_check() {
        let (features, hal) = noop_offers();
        // Noop executes no shaders and has no compressed formats.
        assert!(!hal.contains(H::SHADER_EXECUTION));
        assert!(!features.intersects(F::TEXTURE_COMPRESSION_BC | F::SHADER_F64));
        assert!(features.contains(F::IMMEDIATES | F::TIMESTAMP_QUERY));
    }
}
