//! Conversion tables between `wgpu-types` and Vulkan.
//!
//! Pure functions, no driver calls. Formats the table does not know map to
//! `vk::Format::UNDEFINED`; callers turn that into a typed error.

use ash::vk;

/// The Vulkan format of a `wgpu-types` format, or `UNDEFINED` when there is none.
///
/// `Depth24Plus` maps to `D32_SFLOAT` and `Depth24PlusStencil8` to
/// `D32_SFLOAT_S8_UINT`: WebGPU's "24 bits or more" allows it, and unlike
/// the 24-bit formats these are supported by every desktop driver keel-hal
/// targets (lavapipe, NVIDIA, AMD, Intel).
pub(super) fn map_texture_format(format: wgt::TextureFormat) -> vk::Format {
    use vk::Format as F;
    use wgt::TextureFormat as T;
    match format {
        T::R8Unorm => F::R8_UNORM,
        T::R8Snorm => F::R8_SNORM,
        T::R8Uint => F::R8_UINT,
        T::R8Sint => F::R8_SINT,
        T::R16Uint => F::R16_UINT,
        T::R16Sint => F::R16_SINT,
        T::R16Unorm => F::R16_UNORM,
        T::R16Snorm => F::R16_SNORM,
        T::R16Float => F::R16_SFLOAT,
        T::Rg8Unorm => F::R8G8_UNORM,
        T::Rg8Snorm => F::R8G8_SNORM,
        T::Rg8Uint => F::R8G8_UINT,
        T::Rg8Sint => F::R8G8_SINT,
        T::R32Uint => F::R32_UINT,
        T::R32Sint => F::R32_SINT,
        T::R32Float => F::R32_SFLOAT,
        T::Rg16Uint => F::R16G16_UINT,
        T::Rg16Sint => F::R16G16_SINT,
        T::Rg16Unorm => F::R16G16_UNORM,
        T::Rg16Snorm => F::R16G16_SNORM,
        T::Rg16Float => F::R16G16_SFLOAT,
        T::Rgba8Unorm => F::R8G8B8A8_UNORM,
        T::Rgba8UnormSrgb => F::R8G8B8A8_SRGB,
        T::Rgba8Snorm => F::R8G8B8A8_SNORM,
        T::Rgba8Uint => F::R8G8B8A8_UINT,
        T::Rgba8Sint => F::R8G8B8A8_SINT,
        T::Bgra8Unorm => F::B8G8R8A8_UNORM,
        T::Bgra8UnormSrgb => F::B8G8R8A8_SRGB,
        T::Rgb9e5Ufloat => F::E5B9G9R9_UFLOAT_PACK32,
        T::Rgb10a2Uint => F::A2B10G10R10_UINT_PACK32,
        T::Rgb10a2Unorm => F::A2B10G10R10_UNORM_PACK32,
        T::Rg11b10Ufloat => F::B10G11R11_UFLOAT_PACK32,
        T::R64Uint => F::R64_UINT,
        T::Rg32Uint => F::R32G32_UINT,
        T::Rg32Sint => F::R32G32_SINT,
        T::Rg32Float => F::R32G32_SFLOAT,
        T::Rgba16Uint => F::R16G16B16A16_UINT,
        T::Rgba16Sint => F::R16G16B16A16_SINT,
        T::Rgba16Unorm => F::R16G16B16A16_UNORM,
        T::Rgba16Snorm => F::R16G16B16A16_SNORM,
        T::Rgba16Float => F::R16G16B16A16_SFLOAT,
        T::Rgba32Uint => F::R32G32B32A32_UINT,
        T::Rgba32Sint => F::R32G32B32A32_SINT,
        T::Rgba32Float => F::R32G32B32A32_SFLOAT,
        T::Stencil8 => F::S8_UINT,
        T::Depth16Unorm => F::D16_UNORM,
        T::Depth24Plus => F::D32_SFLOAT,
        T::Depth24PlusStencil8 => F::D32_SFLOAT_S8_UINT,
        T::Depth32Float => F::D32_SFLOAT,
        T::Depth32FloatStencil8 => F::D32_SFLOAT_S8_UINT,
        T::NV12 => F::G8_B8R8_2PLANE_420_UNORM,
        T::P010 => F::G10X6_B10X6R10X6_2PLANE_420_UNORM_3PACK16,
        T::Bc1RgbaUnorm => F::BC1_RGBA_UNORM_BLOCK,
        T::Bc1RgbaUnormSrgb => F::BC1_RGBA_SRGB_BLOCK,
        T::Bc2RgbaUnorm => F::BC2_UNORM_BLOCK,
        T::Bc2RgbaUnormSrgb => F::BC2_SRGB_BLOCK,
        T::Bc3RgbaUnorm => F::BC3_UNORM_BLOCK,
        T::Bc3RgbaUnormSrgb => F::BC3_SRGB_BLOCK,
        T::Bc4RUnorm => F::BC4_UNORM_BLOCK,
        T::Bc4RSnorm => F::BC4_SNORM_BLOCK,
        T::Bc5RgUnorm => F::BC5_UNORM_BLOCK,
        T::Bc5RgSnorm => F::BC5_SNORM_BLOCK,
        T::Bc6hRgbUfloat => F::BC6H_UFLOAT_BLOCK,
        T::Bc6hRgbFloat => F::BC6H_SFLOAT_BLOCK,
        T::Bc7RgbaUnorm => F::BC7_UNORM_BLOCK,
        T::Bc7RgbaUnormSrgb => F::BC7_SRGB_BLOCK,
        T::Etc2Rgb8Unorm => F::ETC2_R8G8B8_UNORM_BLOCK,
        T::Etc2Rgb8UnormSrgb => F::ETC2_R8G8B8_SRGB_BLOCK,
        T::Etc2Rgb8A1Unorm => F::ETC2_R8G8B8A1_UNORM_BLOCK,
        T::Etc2Rgb8A1UnormSrgb => F::ETC2_R8G8B8A1_SRGB_BLOCK,
        T::Etc2Rgba8Unorm => F::ETC2_R8G8B8A8_UNORM_BLOCK,
        T::Etc2Rgba8UnormSrgb => F::ETC2_R8G8B8A8_SRGB_BLOCK,
        T::EacR11Unorm => F::EAC_R11_UNORM_BLOCK,
        T::EacR11Snorm => F::EAC_R11_SNORM_BLOCK,
        T::EacRg11Unorm => F::EAC_R11G11_UNORM_BLOCK,
        T::EacRg11Snorm => F::EAC_R11G11_SNORM_BLOCK,
        T::Astc { block, channel } => map_astc(block, channel),
    }
}

/// The Vulkan format of an ASTC block size and channel kind.
fn map_astc(block: wgt::AstcBlock, channel: wgt::AstcChannel) -> vk::Format {
    use vk::Format as F;
    use wgt::AstcBlock as B;
    use wgt::AstcChannel as C;
    // Each row: (unorm, srgb, hdr).
    let (unorm, srgb, hdr) = match block {
        B::B4x4 => (
            F::ASTC_4X4_UNORM_BLOCK,
            F::ASTC_4X4_SRGB_BLOCK,
            F::ASTC_4X4_SFLOAT_BLOCK,
        ),
        B::B5x4 => (
            F::ASTC_5X4_UNORM_BLOCK,
            F::ASTC_5X4_SRGB_BLOCK,
            F::ASTC_5X4_SFLOAT_BLOCK,
        ),
        B::B5x5 => (
            F::ASTC_5X5_UNORM_BLOCK,
            F::ASTC_5X5_SRGB_BLOCK,
            F::ASTC_5X5_SFLOAT_BLOCK,
        ),
        B::B6x5 => (
            F::ASTC_6X5_UNORM_BLOCK,
            F::ASTC_6X5_SRGB_BLOCK,
            F::ASTC_6X5_SFLOAT_BLOCK,
        ),
        B::B6x6 => (
            F::ASTC_6X6_UNORM_BLOCK,
            F::ASTC_6X6_SRGB_BLOCK,
            F::ASTC_6X6_SFLOAT_BLOCK,
        ),
        B::B8x5 => (
            F::ASTC_8X5_UNORM_BLOCK,
            F::ASTC_8X5_SRGB_BLOCK,
            F::ASTC_8X5_SFLOAT_BLOCK,
        ),
        B::B8x6 => (
            F::ASTC_8X6_UNORM_BLOCK,
            F::ASTC_8X6_SRGB_BLOCK,
            F::ASTC_8X6_SFLOAT_BLOCK,
        ),
        B::B8x8 => (
            F::ASTC_8X8_UNORM_BLOCK,
            F::ASTC_8X8_SRGB_BLOCK,
            F::ASTC_8X8_SFLOAT_BLOCK,
        ),
        B::B10x5 => (
            F::ASTC_10X5_UNORM_BLOCK,
            F::ASTC_10X5_SRGB_BLOCK,
            F::ASTC_10X5_SFLOAT_BLOCK,
        ),
        B::B10x6 => (
            F::ASTC_10X6_UNORM_BLOCK,
            F::ASTC_10X6_SRGB_BLOCK,
            F::ASTC_10X6_SFLOAT_BLOCK,
        ),
        B::B10x8 => (
            F::ASTC_10X8_UNORM_BLOCK,
            F::ASTC_10X8_SRGB_BLOCK,
            F::ASTC_10X8_SFLOAT_BLOCK,
        ),
        B::B10x10 => (
            F::ASTC_10X10_UNORM_BLOCK,
            F::ASTC_10X10_SRGB_BLOCK,
            F::ASTC_10X10_SFLOAT_BLOCK,
        ),
        B::B12x10 => (
            F::ASTC_12X10_UNORM_BLOCK,
            F::ASTC_12X10_SRGB_BLOCK,
            F::ASTC_12X10_SFLOAT_BLOCK,
        ),
        B::B12x12 => (
            F::ASTC_12X12_UNORM_BLOCK,
            F::ASTC_12X12_SRGB_BLOCK,
            F::ASTC_12X12_SFLOAT_BLOCK,
        ),
    };
    match channel {
        C::Unorm => unorm,
        C::UnormSrgb => srgb,
        C::Hdr => hdr,
    }
}

/// Every aspect a format has.
pub(super) fn format_aspects(format: wgt::TextureFormat) -> vk::ImageAspectFlags {
    if let Some(planes) = format.planes() {
        return match planes {
            2 => vk::ImageAspectFlags::PLANE_0 | vk::ImageAspectFlags::PLANE_1,
            _ => {
                vk::ImageAspectFlags::PLANE_0
                    | vk::ImageAspectFlags::PLANE_1
                    | vk::ImageAspectFlags::PLANE_2
            }
        };
    }
    let mut aspects = vk::ImageAspectFlags::empty();
    if format.has_color_aspect() {
        aspects |= vk::ImageAspectFlags::COLOR;
    }
    if format.has_depth_aspect() {
        aspects |= vk::ImageAspectFlags::DEPTH;
    }
    if format.has_stencil_aspect() {
        aspects |= vk::ImageAspectFlags::STENCIL;
    }
    aspects
}

/// The aspects of `format` that `aspect` selects (empty if it selects none).
pub(super) fn map_aspect(
    format: wgt::TextureFormat,
    aspect: wgt::TextureAspect,
) -> vk::ImageAspectFlags {
    let all = format_aspects(format);
    let selected = match aspect {
        wgt::TextureAspect::All => return all,
        wgt::TextureAspect::DepthOnly => vk::ImageAspectFlags::DEPTH,
        wgt::TextureAspect::StencilOnly => vk::ImageAspectFlags::STENCIL,
        wgt::TextureAspect::Plane0 => vk::ImageAspectFlags::PLANE_0,
        wgt::TextureAspect::Plane1 => vk::ImageAspectFlags::PLANE_1,
        wgt::TextureAspect::Plane2 => vk::ImageAspectFlags::PLANE_2,
    };
    all & selected
}

/// A subresource range; `None` counts become `REMAINING_*`.
pub(super) fn map_subresource_range(
    range: &wgt::ImageSubresourceRange,
    format: wgt::TextureFormat,
) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: map_aspect(format, range.aspect),
        base_mip_level: range.base_mip_level,
        level_count: range.mip_level_count.unwrap_or(vk::REMAINING_MIP_LEVELS),
        base_array_layer: range.base_array_layer,
        layer_count: range
            .array_layer_count
            .unwrap_or(vk::REMAINING_ARRAY_LAYERS),
    }
}

/// An extent, field for field.
pub(super) fn map_extent(extent: wgt::Extent3d) -> vk::Extent3D {
    vk::Extent3D {
        width: extent.width,
        height: extent.height,
        depth: extent.depth_or_array_layers,
    }
}

/// An origin as a Vulkan offset. Coordinates above `i32::MAX` saturate
/// (they are outside every texture anyway; validation rejects them).
pub(super) fn map_origin(origin: wgt::Origin3d) -> vk::Offset3D {
    let clamp = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
    vk::Offset3D {
        x: clamp(origin.x),
        y: clamp(origin.y),
        z: clamp(origin.z),
    }
}
