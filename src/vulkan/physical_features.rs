//! The Vulkan device features keel-hal reads, as plain booleans
//! ([`PhysicalFeatures`], with descriptor indexing in
//! [`DescriptorIndexing`]), and the feature structs `open` enables from
//! them for the `wgpu-types` features a device is opened with.

use ash::vk;

/// Vulkan features keel-hal cares about, as plain booleans.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PhysicalFeatures {
    pub(crate) sampler_anisotropy: bool,
    pub(crate) image_cube_array: bool,
    /// Per-sample shading; enabled whenever supported (shaders may use it:
    /// `pipeline::shader_capabilities`).
    pub(crate) sample_rate_shading: bool,
    pub(crate) texture_compression_bc: bool,
    pub(crate) texture_compression_etc2: bool,
    pub(crate) texture_compression_astc_ldr: bool,
    pub(crate) texture_compression_astc_hdr: bool,
    pub(crate) shader_float64: bool,
    pub(crate) shader_int16: bool,
    pub(crate) shader_int64: bool,
    pub(crate) shader_float16: bool,
    pub(crate) timeline_semaphore: bool,
    pub(crate) buffer_device_address: bool,
    pub(crate) synchronization2: bool,
    pub(crate) dynamic_rendering: bool,
    pub(crate) maintenance4: bool,
    pub(crate) acceleration_structure: bool,
    pub(crate) ray_query: bool,
    pub(crate) ray_tracing_pipeline: bool,
    /// Descriptor indexing: binding arrays and update-after-bind.
    pub(crate) indexing: DescriptorIndexing,
    // Core features pipelines and draws use; enabled whenever supported.
    pub(crate) fill_mode_non_solid: bool,
    pub(crate) depth_clamp: bool,
    pub(crate) depth_bias_clamp: bool,
    pub(crate) independent_blend: bool,
    pub(crate) multi_draw_indirect: bool,
    pub(crate) draw_indirect_first_instance: bool,
    /// Storage writes and atomics in vertex / fragment shaders; enabled
    /// whenever supported (`pipeline::stage_stores` holds shaders to them).
    pub(crate) vertex_pipeline_stores_and_atomics: bool,
    pub(crate) fragment_stores_and_atomics: bool,
    /// 16-bit storage (`VkPhysicalDevice16BitStorageFeatures`, core 1.1),
    /// which naga's SPIR-V declares for any 16-bit type.
    pub(crate) storage_buffer_16bit_access: bool,
    pub(crate) uniform_and_storage_buffer_16bit_access: bool,
    pub(crate) storage_input_output16: bool,
    /// Shader features a device enables when opened with the `wgpu-types`
    /// feature that stands for it (`conv::map_features` advertises each):
    /// `shaderClipDistance` (`CLIP_DISTANCES`), `geometryShader`
    /// (`PRIMITIVE_INDEX`: SPIR-V's `PrimitiveId` in fragment shaders needs
    /// it), `dualSrcBlend` (`DUAL_SOURCE_BLENDING`) and
    /// `shaderDrawParameters` (`SHADER_DRAW_INDEX`).
    pub(crate) shader_clip_distance: bool,
    pub(crate) geometry_shader: bool,
    pub(crate) dual_src_blend: bool,
    pub(crate) shader_draw_parameters: bool,
    /// `multiview` (Vulkan 1.1): `MULTIVIEW` and `SELECTIVE_MULTIVIEW`.
    pub(crate) multiview: bool,
    /// `pipelineStatisticsQuery`: `PIPELINE_STATISTICS_QUERY`.
    pub(crate) pipeline_statistics_query: bool,
    /// `drawIndirectCount` (Vulkan 1.2): `MULTI_DRAW_INDIRECT_COUNT`.
    pub(crate) draw_indirect_count: bool,
    /// `shaderBufferInt64Atomics` and `shaderSharedInt64Atomics` (Vulkan
    /// 1.2): with `shaderInt64`, `SHADER_INT64_ATOMIC_MIN_MAX` and
    /// `SHADER_INT64_ATOMIC_ALL_OPS`.
    pub(crate) buffer_int64_atomics: bool,
    pub(crate) shared_int64_atomics: bool,
    /// `VK_EXT_shader_atomic_float`'s `shaderBufferFloat32Atomics` and
    /// `shaderBufferFloat32AtomicAdd`: `SHADER_FLOAT32_ATOMIC`.
    pub(crate) float32_atomics: bool,
    /// `VK_EXT_conservative_rasterization` (no feature bits: the extension
    /// is the capability): `CONSERVATIVE_RASTERIZATION`, overestimation.
    pub(crate) conservative_rasterization: bool,
    /// `VK_EXT_shader_image_atomic_int64`'s `shaderImageInt64Atomics`: with
    /// `shaderInt64` and R64Uint storage-image atomics,
    /// `TEXTURE_INT64_ATOMIC`.
    pub(crate) image_int64_atomics: bool,
    /// `VK_KHR_fragment_shader_barycentric`'s `fragmentShaderBarycentric`:
    /// `SHADER_BARYCENTRICS` and `SHADER_PER_VERTEX` (Vulkan has one
    /// feature for both, as wgpu-hal reads it).
    pub(crate) fragment_barycentric: bool,
    /// `samplerYcbcrConversion` (Vulkan 1.1): with the formats' support,
    /// `TEXTURE_FORMAT_NV12` and `TEXTURE_FORMAT_P010` (enabled with them).
    pub(crate) sampler_ycbcr_conversion: bool,
    /// `shaderZeroInitializeWorkgroupMemory` (Vulkan 1.3): enabled where
    /// supported; task and mesh stages then have their workgroup memory
    /// zeroed by the driver (naga's polyfill declares a second
    /// `LocalInvocationIndex` input beside the one its mesh output uses,
    /// which SPIR-V forbids: `VUID-StandaloneSpirv-OpEntryPoint-09658`).
    pub(crate) zero_initialize_workgroup_memory: bool,
    /// `VK_EXT_mesh_shader`'s `taskShader` and `meshShader`:
    /// `EXPERIMENTAL_MESH_SHADER` and `EXPERIMENTAL_MESH_SHADER_POINTS`
    /// (point output is part of the extension).
    pub(crate) mesh_shader: bool,
    /// `VK_EXT_mesh_shader`'s `multiviewMeshShader`: with mesh shaders and
    /// `multiview`, `EXPERIMENTAL_MESH_SHADER_MULTIVIEW`.
    pub(crate) multiview_mesh_shader: bool,
    /// `VK_KHR_cooperative_matrix`'s `cooperativeMatrix` with the Vulkan
    /// memory model and its device scope (`vulkanMemoryModel`,
    /// `vulkanMemoryModelDeviceScope`): with a configuration shaders can
    /// name (`cooperative_matrix.rs`), `EXPERIMENTAL_COOPERATIVE_MATRIX`.
    pub(crate) cooperative_matrix: bool,
    /// `descriptorBindingAccelerationStructureUpdateAfterBind`: with ray
    /// query, `ACCELERATION_STRUCTURE_BINDING_ARRAY` (as wgpu-hal decides).
    pub(crate) acceleration_structure_update_after_bind: bool,
    /// `VK_KHR_ray_tracing_position_fetch`'s `rayTracingPositionFetch`:
    /// with ray query, `EXPERIMENTAL_RAY_HIT_VERTEX_RETURN`.
    pub(crate) position_fetch: bool,
}

impl PhysicalFeatures {
    /// Whether 64-bit integer atomics may be offered: 64-bit integers and
    /// their atomics on storage buffers and in workgroup memory.
    pub(crate) fn int64_atomics(&self) -> bool {
        self.shader_int64 && self.buffer_int64_atomics && self.shared_int64_atomics
    }

    /// Whether 16-bit types may be offered (`SHADER_F16` with
    /// `shaderFloat16`, `SHADER_I16` with `shaderInt16`): naga's SPIR-V
    /// declares `StorageBuffer16BitAccess` and
    /// `UniformAndStorageBuffer16BitAccess` for any 16-bit type.
    /// `storageInputOutput16` is not needed: where the device lacks it,
    /// naga passes `f16` entry-point inputs and outputs as `f32`.
    pub(crate) fn storage_16bit(&self) -> bool {
        self.storage_buffer_16bit_access && self.uniform_and_storage_buffer_16bit_access
    }

    /// Whether a device opened with `features` enables 16-bit storage:
    /// with `SHADER_F16` or `SHADER_I16` (each needs [`Self::storage_16bit`]).
    pub(crate) fn storage_16bit_enabled(&self, features: wgt::Features) -> bool {
        features.intersects(wgt::Features::SHADER_F16 | wgt::Features::SHADER_I16)
            && self.storage_16bit()
    }

    /// The core features a device opened with `features` enables (before
    /// descriptor indexing, `DescriptorIndexing::enable`): what pipelines
    /// and draws use, and the stage stores, wherever supported; the rest
    /// as requested.
    pub(super) fn enabled_core(&self, features: wgt::Features) -> vk::PhysicalDeviceFeatures {
        use wgt::Features as F;
        vk::PhysicalDeviceFeatures::default()
            .sampler_anisotropy(self.sampler_anisotropy)
            .image_cube_array(self.image_cube_array)
            .sample_rate_shading(self.sample_rate_shading)
            .fill_mode_non_solid(self.fill_mode_non_solid)
            .depth_clamp(self.depth_clamp)
            .depth_bias_clamp(self.depth_bias_clamp)
            .independent_blend(self.independent_blend)
            .multi_draw_indirect(self.multi_draw_indirect)
            .draw_indirect_first_instance(self.draw_indirect_first_instance)
            .vertex_pipeline_stores_and_atomics(self.vertex_pipeline_stores_and_atomics)
            .fragment_stores_and_atomics(self.fragment_stores_and_atomics)
            .texture_compression_bc(features.contains(F::TEXTURE_COMPRESSION_BC))
            .texture_compression_etc2(features.contains(F::TEXTURE_COMPRESSION_ETC2))
            .texture_compression_astc_ldr(features.contains(F::TEXTURE_COMPRESSION_ASTC))
            .shader_float64(features.contains(F::SHADER_F64))
            .shader_int16(features.contains(F::SHADER_I16))
            .shader_int64(features.intersects(
                F::SHADER_INT64
                    | F::SHADER_INT64_ATOMIC_MIN_MAX
                    | F::SHADER_INT64_ATOMIC_ALL_OPS
                    | F::TEXTURE_INT64_ATOMIC,
            ))
            .shader_clip_distance(features.contains(F::CLIP_DISTANCES))
            .geometry_shader(features.contains(F::PRIMITIVE_INDEX))
            .dual_src_blend(features.contains(F::DUAL_SOURCE_BLENDING))
            .pipeline_statistics_query(features.contains(F::PIPELINE_STATISTICS_QUERY))
    }

    /// The 16-bit storage features a device opened with `features` enables:
    /// with [`Self::storage_16bit_enabled`], both buffer kinds, and
    /// `storageInputOutput16` where supported (`pipeline.rs` tells naga).
    pub(super) fn enabled_16bit_storage(
        &self,
        features: wgt::Features,
    ) -> vk::PhysicalDeviceVulkan11Features<'static> {
        let on = self.storage_16bit_enabled(features);
        vk::PhysicalDeviceVulkan11Features::default()
            .storage_buffer16_bit_access(on)
            .uniform_and_storage_buffer16_bit_access(on)
            .storage_input_output16(on && self.storage_input_output16)
    }
}

/// Descriptor-indexing support: array indexing in shaders (core dynamic,
/// Vulkan 1.2 non-uniform), partially bound arrays and update-after-bind
/// per descriptor type.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DescriptorIndexing {
    pub(crate) sampled_image_dynamic: bool,
    pub(crate) storage_image_dynamic: bool,
    pub(crate) storage_buffer_dynamic: bool,
    pub(crate) uniform_buffer_dynamic: bool,
    pub(crate) sampled_image_non_uniform: bool,
    pub(crate) storage_image_non_uniform: bool,
    pub(crate) storage_buffer_non_uniform: bool,
    pub(crate) uniform_buffer_non_uniform: bool,
    pub(crate) runtime_array: bool,
    pub(crate) partially_bound: bool,
    pub(crate) update_after_bind_sampled_image: bool,
    pub(crate) update_after_bind_storage_image: bool,
    pub(crate) update_after_bind_storage_buffer: bool,
    pub(crate) update_after_bind_uniform_buffer: bool,
}

impl DescriptorIndexing {
    pub(super) fn from_features(
        core: &vk::PhysicalDeviceFeatures,
        f12: &vk::PhysicalDeviceVulkan12Features<'_>,
    ) -> Self {
        let b = |v: vk::Bool32| v == vk::TRUE;
        Self {
            sampled_image_dynamic: b(core.shader_sampled_image_array_dynamic_indexing),
            storage_image_dynamic: b(core.shader_storage_image_array_dynamic_indexing),
            storage_buffer_dynamic: b(core.shader_storage_buffer_array_dynamic_indexing),
            uniform_buffer_dynamic: b(core.shader_uniform_buffer_array_dynamic_indexing),
            sampled_image_non_uniform: b(f12.shader_sampled_image_array_non_uniform_indexing),
            storage_image_non_uniform: b(f12.shader_storage_image_array_non_uniform_indexing),
            storage_buffer_non_uniform: b(f12.shader_storage_buffer_array_non_uniform_indexing),
            uniform_buffer_non_uniform: b(f12.shader_uniform_buffer_array_non_uniform_indexing),
            runtime_array: b(f12.runtime_descriptor_array),
            partially_bound: b(f12.descriptor_binding_partially_bound),
            update_after_bind_sampled_image: b(
                f12.descriptor_binding_sampled_image_update_after_bind
            ),
            update_after_bind_storage_image: b(
                f12.descriptor_binding_storage_image_update_after_bind
            ),
            update_after_bind_storage_buffer: b(
                f12.descriptor_binding_storage_buffer_update_after_bind
            ),
            update_after_bind_uniform_buffer: b(
                f12.descriptor_binding_uniform_buffer_update_after_bind
            ),
        }
    }

    /// Enables what the requested `features` need, and with
    /// `PARTIALLY_BOUND_BINDING_ARRAY` every update-after-bind feature the
    /// adapter has (binding.rs relies on that).
    pub(super) fn enable<'a>(
        &self,
        features: wgt::Features,
        core: vk::PhysicalDeviceFeatures,
        f12: vk::PhysicalDeviceVulkan12Features<'a>,
    ) -> (
        vk::PhysicalDeviceFeatures,
        vk::PhysicalDeviceVulkan12Features<'a>,
    ) {
        use wgt::Features as F;
        let textures = features.contains(F::TEXTURE_BINDING_ARRAY);
        let buffers = features.contains(F::BUFFER_BINDING_ARRAY);
        let storage = features.contains(F::STORAGE_RESOURCE_BINDING_ARRAY);
        let uniform = features.contains(F::UNIFORM_BUFFER_BINDING_ARRAYS);
        let non_uniform =
            features.contains(F::SAMPLED_TEXTURE_AND_STORAGE_BUFFER_ARRAY_NON_UNIFORM_INDEXING);
        let storage_non_uniform = features.contains(F::STORAGE_TEXTURE_ARRAY_NON_UNIFORM_INDEXING);
        let partial = features.contains(F::PARTIALLY_BOUND_BINDING_ARRAY);
        let core = core
            .shader_sampled_image_array_dynamic_indexing(textures)
            .shader_storage_image_array_dynamic_indexing(textures && storage)
            .shader_storage_buffer_array_dynamic_indexing(buffers && storage)
            .shader_uniform_buffer_array_dynamic_indexing(uniform);
        let f12 = f12
            .runtime_descriptor_array((textures || buffers) && self.runtime_array)
            .shader_sampled_image_array_non_uniform_indexing(non_uniform)
            .shader_storage_buffer_array_non_uniform_indexing(non_uniform)
            .shader_storage_image_array_non_uniform_indexing(storage_non_uniform)
            .shader_uniform_buffer_array_non_uniform_indexing(uniform)
            .descriptor_binding_partially_bound(partial)
            .descriptor_binding_sampled_image_update_after_bind(
                partial && self.update_after_bind_sampled_image,
            )
            .descriptor_binding_storage_image_update_after_bind(
                partial && self.update_after_bind_storage_image,
            )
            .descriptor_binding_storage_buffer_update_after_bind(
                partial && self.update_after_bind_storage_buffer,
            )
            .descriptor_binding_uniform_buffer_update_after_bind(
                partial && self.update_after_bind_uniform_buffer,
            );
        (core, f12)
    }
}
