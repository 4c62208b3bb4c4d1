//! What the Vulkan backend derives from the feature table
//! (`crate::features`, whose Vulkan column is `crate::features::vulkan_column`):
//! the bits every device enables, what an adapter offers ([`offered`]) and
//! what a device opened with some features enables ([`DeviceRequest`]).

use std::ffi::CStr;

use ash::vk;

use super::physical::PhysicalInfo;
use crate::features::vulkan_column::{Bit, Bits, Need};
use crate::features::{Feature, Row, TABLE};
use crate::HalFeatures;

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
