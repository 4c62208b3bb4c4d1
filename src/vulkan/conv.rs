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
        // Two-plane 4:2:0 formats: sampled through views of one plane
        // (R8/Rg8, R16/Rg16), copied plane by plane (`TEXTURE_FORMAT_NV12`,
        // `TEXTURE_FORMAT_P010`).
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

/// The aspects a barrier on `aspect` of `format` names. keel-hal does not
/// enable `separateDepthStencilLayouts`, so a barrier on either aspect of a
/// combined depth-stencil format must name both
/// (VUID-VkImageMemoryBarrier2-image-03320); the two aspects then always
/// share a layout. Empty when `aspect` selects nothing of the format.
pub(super) fn map_barrier_aspect(
    format: wgt::TextureFormat,
    aspect: wgt::TextureAspect,
) -> vk::ImageAspectFlags {
    let selected = map_aspect(format, aspect);
    if selected.intersects(vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL) {
        format_aspects(format)
    } else {
        selected
    }
}

/// A barrier's subresource range (aspects by [`map_barrier_aspect`]);
/// `None` counts become `REMAINING_*`.
pub(super) fn map_barrier_range(
    range: &wgt::ImageSubresourceRange,
    format: wgt::TextureFormat,
) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: map_barrier_aspect(format, range.aspect),
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

/// Buffer usage flags. `BLAS_INPUT`/`TLAS_INPUT` need acceleration
/// structures enabled (`accel`); without them they add nothing.
pub(super) fn map_buffer_usage(usage: wgt::BufferUsages, accel: bool) -> vk::BufferUsageFlags {
    use vk::BufferUsageFlags as V;
    use wgt::BufferUsages as U;
    let mut out = V::empty();
    let pairs = [
        (U::COPY_SRC, V::TRANSFER_SRC),
        (U::COPY_DST, V::TRANSFER_DST),
        (U::INDEX, V::INDEX_BUFFER),
        (U::VERTEX, V::VERTEX_BUFFER),
        (U::UNIFORM, V::UNIFORM_BUFFER),
        (U::STORAGE, V::STORAGE_BUFFER),
        (U::INDIRECT, V::INDIRECT_BUFFER),
        // Query results are copied into the buffer with vkCmdCopyQueryPoolResults.
        (U::QUERY_RESOLVE, V::TRANSFER_DST),
    ];
    for (wgt_flag, vk_flag) in pairs {
        if usage.contains(wgt_flag) {
            out |= vk_flag;
        }
    }
    // On devices with acceleration structures: build inputs are read by
    // address and may also be scratch (which Vulkan wants STORAGE_BUFFER
    // for); storage buffers may be scratch or hold structures.
    if accel && usage.intersects(U::BLAS_INPUT | U::TLAS_INPUT) {
        out |= V::SHADER_DEVICE_ADDRESS
            | V::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR
            | V::STORAGE_BUFFER;
    }
    if accel && usage.contains(U::STORAGE) {
        out |= V::SHADER_DEVICE_ADDRESS | V::ACCELERATION_STRUCTURE_STORAGE_KHR;
    }
    out
}

/// Image usage flags for a texture of `format`.
pub(super) fn map_texture_usage(
    usage: wgt::TextureUsages,
    format: wgt::TextureFormat,
) -> vk::ImageUsageFlags {
    use vk::ImageUsageFlags as V;
    use wgt::TextureUsages as U;
    let mut out = V::empty();
    if usage.contains(U::COPY_SRC) {
        out |= V::TRANSFER_SRC;
    }
    if usage.contains(U::COPY_DST) {
        out |= V::TRANSFER_DST;
    }
    if usage.contains(U::TEXTURE_BINDING) {
        out |= V::SAMPLED;
    }
    if usage.intersects(U::STORAGE_BINDING | U::STORAGE_ATOMIC) {
        out |= V::STORAGE;
    }
    if usage.contains(U::RENDER_ATTACHMENT) {
        out |= if format.is_depth_stencil_format() {
            V::DEPTH_STENCIL_ATTACHMENT
        } else {
            V::COLOR_ATTACHMENT
        };
    }
    if usage.contains(U::TRANSIENT_ATTACHMENT) {
        out |= V::TRANSIENT_ATTACHMENT;
    }
    out
}

/// The optimal-tiling format features an image usage needs.
pub(super) fn usage_format_features(usage: vk::ImageUsageFlags) -> vk::FormatFeatureFlags {
    use vk::FormatFeatureFlags as F;
    use vk::ImageUsageFlags as V;
    let pairs = [
        (V::TRANSFER_SRC, F::TRANSFER_SRC),
        (V::TRANSFER_DST, F::TRANSFER_DST),
        (V::SAMPLED, F::SAMPLED_IMAGE),
        (V::STORAGE, F::STORAGE_IMAGE),
        (V::COLOR_ATTACHMENT, F::COLOR_ATTACHMENT),
        (V::DEPTH_STENCIL_ATTACHMENT, F::DEPTH_STENCIL_ATTACHMENT),
    ];
    pairs
        .iter()
        .filter(|(u, _)| usage.contains(*u))
        .fold(F::empty(), |acc, (_, f)| acc | *f)
}

/// The image type of a texture dimension.
pub(super) fn map_texture_dimension(dim: wgt::TextureDimension) -> vk::ImageType {
    match dim {
        wgt::TextureDimension::D1 => vk::ImageType::TYPE_1D,
        wgt::TextureDimension::D2 => vk::ImageType::TYPE_2D,
        wgt::TextureDimension::D3 => vk::ImageType::TYPE_3D,
    }
}

/// The image view type of a view dimension.
pub(super) fn map_view_dimension(dim: wgt::TextureViewDimension) -> vk::ImageViewType {
    match dim {
        wgt::TextureViewDimension::D1 => vk::ImageViewType::TYPE_1D,
        wgt::TextureViewDimension::D2 => vk::ImageViewType::TYPE_2D,
        wgt::TextureViewDimension::D2Array => vk::ImageViewType::TYPE_2D_ARRAY,
        wgt::TextureViewDimension::Cube => vk::ImageViewType::CUBE,
        wgt::TextureViewDimension::CubeArray => vk::ImageViewType::CUBE_ARRAY,
        wgt::TextureViewDimension::D3 => vk::ImageViewType::TYPE_3D,
    }
}

/// A sample count as Vulkan flags, or `None` if it is not a power of two up to 64.
pub(super) fn map_sample_count(count: u32) -> Option<vk::SampleCountFlags> {
    match count {
        1 => Some(vk::SampleCountFlags::TYPE_1),
        2 => Some(vk::SampleCountFlags::TYPE_2),
        4 => Some(vk::SampleCountFlags::TYPE_4),
        8 => Some(vk::SampleCountFlags::TYPE_8),
        16 => Some(vk::SampleCountFlags::TYPE_16),
        32 => Some(vk::SampleCountFlags::TYPE_32),
        64 => Some(vk::SampleCountFlags::TYPE_64),
        _ => None,
    }
}

/// A min/mag filter.
pub(super) fn map_filter(mode: wgt::FilterMode) -> vk::Filter {
    match mode {
        wgt::FilterMode::Nearest => vk::Filter::NEAREST,
        wgt::FilterMode::Linear => vk::Filter::LINEAR,
    }
}

/// A mipmap filter.
pub(super) fn map_mipmap_filter(mode: wgt::MipmapFilterMode) -> vk::SamplerMipmapMode {
    match mode {
        wgt::MipmapFilterMode::Nearest => vk::SamplerMipmapMode::NEAREST,
        wgt::MipmapFilterMode::Linear => vk::SamplerMipmapMode::LINEAR,
    }
}

/// An address mode.
pub(super) fn map_address_mode(mode: wgt::AddressMode) -> vk::SamplerAddressMode {
    match mode {
        wgt::AddressMode::ClampToEdge => vk::SamplerAddressMode::CLAMP_TO_EDGE,
        wgt::AddressMode::Repeat => vk::SamplerAddressMode::REPEAT,
        wgt::AddressMode::MirrorRepeat => vk::SamplerAddressMode::MIRRORED_REPEAT,
        wgt::AddressMode::ClampToBorder => vk::SamplerAddressMode::CLAMP_TO_BORDER,
    }
}

/// A border colour (`Zero` is transparent black, which is what Vulkan has).
pub(super) fn map_border_color(color: wgt::SamplerBorderColor) -> vk::BorderColor {
    match color {
        wgt::SamplerBorderColor::TransparentBlack | wgt::SamplerBorderColor::Zero => {
            vk::BorderColor::FLOAT_TRANSPARENT_BLACK
        }
        wgt::SamplerBorderColor::OpaqueBlack => vk::BorderColor::FLOAT_OPAQUE_BLACK,
        wgt::SamplerBorderColor::OpaqueWhite => vk::BorderColor::FLOAT_OPAQUE_WHITE,
    }
}

/// A comparison function.
pub(super) fn map_compare_function(f: wgt::CompareFunction) -> vk::CompareOp {
    match f {
        wgt::CompareFunction::Never => vk::CompareOp::NEVER,
        wgt::CompareFunction::Less => vk::CompareOp::LESS,
        wgt::CompareFunction::Equal => vk::CompareOp::EQUAL,
        wgt::CompareFunction::LessEqual => vk::CompareOp::LESS_OR_EQUAL,
        wgt::CompareFunction::Greater => vk::CompareOp::GREATER,
        wgt::CompareFunction::NotEqual => vk::CompareOp::NOT_EQUAL,
        wgt::CompareFunction::GreaterEqual => vk::CompareOp::GREATER_OR_EQUAL,
        wgt::CompareFunction::Always => vk::CompareOp::ALWAYS,
    }
}

/// The Vulkan format of a vertex attribute format.
pub(super) fn map_vertex_format(format: wgt::VertexFormat) -> vk::Format {
    use vk::Format as F;
    use wgt::VertexFormat as V;
    match format {
        V::Uint8 => F::R8_UINT,
        V::Uint8x2 => F::R8G8_UINT,
        V::Uint8x4 => F::R8G8B8A8_UINT,
        V::Sint8 => F::R8_SINT,
        V::Sint8x2 => F::R8G8_SINT,
        V::Sint8x4 => F::R8G8B8A8_SINT,
        V::Unorm8 => F::R8_UNORM,
        V::Unorm8x2 => F::R8G8_UNORM,
        V::Unorm8x4 => F::R8G8B8A8_UNORM,
        V::Snorm8 => F::R8_SNORM,
        V::Snorm8x2 => F::R8G8_SNORM,
        V::Snorm8x4 => F::R8G8B8A8_SNORM,
        V::Uint16 => F::R16_UINT,
        V::Uint16x2 => F::R16G16_UINT,
        V::Uint16x4 => F::R16G16B16A16_UINT,
        V::Sint16 => F::R16_SINT,
        V::Sint16x2 => F::R16G16_SINT,
        V::Sint16x4 => F::R16G16B16A16_SINT,
        V::Unorm16 => F::R16_UNORM,
        V::Unorm16x2 => F::R16G16_UNORM,
        V::Unorm16x4 => F::R16G16B16A16_UNORM,
        V::Snorm16 => F::R16_SNORM,
        V::Snorm16x2 => F::R16G16_SNORM,
        V::Snorm16x4 => F::R16G16B16A16_SNORM,
        V::Float16 => F::R16_SFLOAT,
        V::Float16x2 => F::R16G16_SFLOAT,
        V::Float16x4 => F::R16G16B16A16_SFLOAT,
        V::Float32 => F::R32_SFLOAT,
        V::Float32x2 => F::R32G32_SFLOAT,
        V::Float32x3 => F::R32G32B32_SFLOAT,
        V::Float32x4 => F::R32G32B32A32_SFLOAT,
        V::Uint32 => F::R32_UINT,
        V::Uint32x2 => F::R32G32_UINT,
        V::Uint32x3 => F::R32G32B32_UINT,
        V::Uint32x4 => F::R32G32B32A32_UINT,
        V::Sint32 => F::R32_SINT,
        V::Sint32x2 => F::R32G32_SINT,
        V::Sint32x3 => F::R32G32B32_SINT,
        V::Sint32x4 => F::R32G32B32A32_SINT,
        V::Float64 => F::R64_SFLOAT,
        V::Float64x2 => F::R64G64_SFLOAT,
        V::Float64x3 => F::R64G64B64_SFLOAT,
        V::Float64x4 => F::R64G64B64A64_SFLOAT,
        V::Unorm10_10_10_2 => F::A2B10G10R10_UNORM_PACK32,
        V::Unorm8x4Bgra => F::B8G8R8A8_UNORM,
    }
}

/// The index type of an index format.
pub(super) fn map_index_format(format: wgt::IndexFormat) -> vk::IndexType {
    match format {
        wgt::IndexFormat::Uint16 => vk::IndexType::UINT16,
        wgt::IndexFormat::Uint32 => vk::IndexType::UINT32,
    }
}

/// Format features with optimal tiling, in `wgpu-types` terms.
pub(super) fn map_format_features(
    features: vk::FormatFeatureFlags,
    sample_counts: vk::SampleCountFlags,
) -> wgt::TextureFormatFeatures {
    use vk::FormatFeatureFlags as F;
    use wgt::TextureFormatFeatureFlags as Ff;
    use wgt::TextureUsages as U;
    let mut usages = U::empty();
    let mut flags = Ff::empty();
    let has = |f: F| features.contains(f);
    if has(F::TRANSFER_SRC) {
        usages |= U::COPY_SRC;
    }
    if has(F::TRANSFER_DST) {
        usages |= U::COPY_DST;
    }
    if has(F::SAMPLED_IMAGE) {
        usages |= U::TEXTURE_BINDING;
    }
    if has(F::SAMPLED_IMAGE_FILTER_LINEAR) {
        flags |= Ff::FILTERABLE;
    }
    if has(F::STORAGE_IMAGE) {
        usages |= U::STORAGE_BINDING;
        flags |= Ff::STORAGE_READ_ONLY | Ff::STORAGE_WRITE_ONLY | Ff::STORAGE_READ_WRITE;
    }
    if has(F::STORAGE_IMAGE_ATOMIC) {
        usages |= U::STORAGE_ATOMIC;
        flags |= Ff::STORAGE_ATOMIC;
    }
    let color = has(F::COLOR_ATTACHMENT);
    if color || has(F::DEPTH_STENCIL_ATTACHMENT) {
        usages |= U::RENDER_ATTACHMENT;
    }
    if has(F::COLOR_ATTACHMENT_BLEND) {
        flags |= Ff::BLENDABLE;
    }
    let counts = [
        (vk::SampleCountFlags::TYPE_2, Ff::MULTISAMPLE_X2),
        (vk::SampleCountFlags::TYPE_4, Ff::MULTISAMPLE_X4),
        (vk::SampleCountFlags::TYPE_8, Ff::MULTISAMPLE_X8),
        (vk::SampleCountFlags::TYPE_16, Ff::MULTISAMPLE_X16),
    ];
    for (vk_count, flag) in counts {
        if sample_counts.contains(vk_count) {
            flags |= flag;
        }
    }
    if color && sample_counts.contains(vk::SampleCountFlags::TYPE_4) {
        flags |= Ff::MULTISAMPLE_RESOLVE;
    }
    wgt::TextureFormatFeatures {
        allowed_usages: usages,
        flags,
    }
}

/// Saturates a `u64` to `u32`.
fn sat32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// The adapter's limits in `wgpu-types` terms. A limit the feature table
/// ties to a feature is set only where the adapter offers the feature
/// (`features` and `hal`); elsewhere it stays at its `Limits` default.
pub(super) fn map_limits(
    info: &super::physical::PhysicalInfo,
    features: wgt::Features,
    hal: crate::HalFeatures,
) -> wgt::Limits {
    let sets = |name: &str| crate::features::sets_limit(features, hal, name);
    let l = &info.properties.limits;
    let ray = &info.ray_limits;
    let max_bind_groups = l.max_bound_descriptor_sets.min(8);
    let max_vertex_buffers = l.max_vertex_input_bindings.min(16);
    let mut limits = wgt::Limits {
        max_texture_dimension_1d: l.max_image_dimension1_d,
        max_texture_dimension_2d: l.max_image_dimension2_d.min(l.max_image_dimension_cube),
        max_texture_dimension_3d: l.max_image_dimension3_d,
        max_texture_array_layers: l.max_image_array_layers,
        max_bind_groups,
        max_bind_groups_plus_vertex_buffers: max_bind_groups + max_vertex_buffers,
        max_dynamic_uniform_buffers_per_pipeline_layout: l
            .max_descriptor_set_uniform_buffers_dynamic,
        max_dynamic_storage_buffers_per_pipeline_layout: l
            .max_descriptor_set_storage_buffers_dynamic,
        max_sampled_textures_per_shader_stage: l.max_per_stage_descriptor_sampled_images,
        max_samplers_per_shader_stage: l.max_per_stage_descriptor_samplers,
        max_storage_buffers_per_shader_stage: l.max_per_stage_descriptor_storage_buffers,
        max_storage_textures_per_shader_stage: l.max_per_stage_descriptor_storage_images,
        max_uniform_buffers_per_shader_stage: l.max_per_stage_descriptor_uniform_buffers,
        max_uniform_buffer_binding_size: u64::from(l.max_uniform_buffer_range),
        max_storage_buffer_binding_size: u64::from(l.max_storage_buffer_range),
        max_vertex_buffers,
        max_buffer_size: info.max_buffer_size,
        max_vertex_attributes: l.max_vertex_input_attributes,
        max_vertex_buffer_array_stride: l.max_vertex_input_binding_stride,
        max_inter_stage_shader_variables: l.max_fragment_input_components / 4,
        min_uniform_buffer_offset_alignment: sat32(l.min_uniform_buffer_offset_alignment),
        min_storage_buffer_offset_alignment: sat32(l.min_storage_buffer_offset_alignment),
        max_color_attachments: l.max_color_attachments.min(8),
        max_compute_workgroup_storage_size: l.max_compute_shared_memory_size,
        max_compute_invocations_per_workgroup: l.max_compute_work_group_invocations,
        max_compute_workgroup_size_x: l.max_compute_work_group_size[0],
        max_compute_workgroup_size_y: l.max_compute_work_group_size[1],
        max_compute_workgroup_size_z: l.max_compute_work_group_size[2],
        max_compute_workgroups_per_dimension: l
            .max_compute_work_group_count
            .iter()
            .copied()
            .min()
            .unwrap_or(0),
        max_immediate_size: l.max_push_constants_size,
        ..wgt::Limits::default()
    };
    if sets("max_binding_array_elements_per_shader_stage") {
        // Binding arrays count against the plain per-stage limits.
        limits.max_binding_array_elements_per_shader_stage = l
            .max_per_stage_descriptor_sampled_images
            .min(l.max_per_stage_descriptor_storage_images)
            .min(l.max_per_stage_descriptor_storage_buffers)
            .min(l.max_per_stage_descriptor_uniform_buffers);
        limits.max_binding_array_sampler_elements_per_shader_stage =
            l.max_per_stage_descriptor_samplers;
    }
    if sets("max_multiview_view_count") {
        // A view mask is 32 bits.
        limits.max_multiview_view_count = info.max_multiview_views.min(32);
    }
    if sets("max_blas_primitive_count") {
        limits.max_blas_primitive_count = sat32(ray.max_primitive_count);
        limits.max_blas_geometry_count = sat32(ray.max_geometry_count);
        limits.max_tlas_instance_count = sat32(ray.max_instance_count);
        limits.max_acceleration_structures_per_shader_stage =
            ray.max_per_stage_acceleration_structures;
    }
    if sets("max_binding_array_acceleration_structure_elements_per_shader_stage") {
        // A binding array must fit both the plain and the update-after-bind
        // per-stage limit (layouts of either kind may hold one).
        limits.max_binding_array_acceleration_structure_elements_per_shader_stage = ray
            .max_per_stage_acceleration_structures
            .min(ray.max_per_stage_update_after_bind_acceleration_structures);
    }
    if sets("max_task_workgroup_total_count") {
        let m = &info.mesh_limits;
        limits.max_task_workgroup_total_count = m.max_task_workgroup_total_count;
        limits.max_task_workgroups_per_dimension = m.max_task_workgroups_per_dimension;
        limits.max_mesh_workgroup_total_count = m.max_mesh_workgroup_total_count;
        limits.max_mesh_workgroups_per_dimension = m.max_mesh_workgroups_per_dimension;
        limits.max_task_invocations_per_workgroup = m.max_task_invocations_per_workgroup;
        limits.max_task_invocations_per_dimension = m.max_task_invocations_per_dimension;
        limits.max_mesh_invocations_per_workgroup = m.max_mesh_invocations_per_workgroup;
        limits.max_mesh_invocations_per_dimension = m.max_mesh_invocations_per_dimension;
        limits.max_task_payload_size = m.max_task_payload_size;
        limits.max_mesh_output_vertices = m.max_mesh_output_vertices;
        limits.max_mesh_output_primitives = m.max_mesh_output_primitives;
        limits.max_mesh_output_layers = m.max_mesh_output_layers;
    }
    if sets("max_mesh_multiview_view_count") {
        let m = &info.mesh_limits;
        limits.max_mesh_multiview_view_count = m.max_mesh_multiview_view_count.min(32);
    }
    if sets("max_ray_recursion_depth") {
        limits.max_ray_recursion_depth = ray.max_ray_recursion_depth;
        limits.max_ray_dispatch_count = ray.max_ray_dispatch_invocation_count;
    }
    limits
}

/// A query type's pool type, and for pipeline statistics the counters, in
/// the same order as `wgpu-types`' bits (Vulkan writes the enabled counters
/// in its bit order, which keeps theirs).
pub(super) fn map_query_type(
    ty: wgt::QueryType,
) -> (vk::QueryType, vk::QueryPipelineStatisticFlags) {
    use vk::QueryPipelineStatisticFlags as V;
    use wgt::PipelineStatisticsTypes as W;
    match ty {
        wgt::QueryType::Occlusion => (vk::QueryType::OCCLUSION, V::empty()),
        wgt::QueryType::Timestamp => (vk::QueryType::TIMESTAMP, V::empty()),
        wgt::QueryType::PipelineStatistics(types) => {
            let rows = [
                (W::VERTEX_SHADER_INVOCATIONS, V::VERTEX_SHADER_INVOCATIONS),
                (W::CLIPPER_INVOCATIONS, V::CLIPPING_INVOCATIONS),
                (W::CLIPPER_PRIMITIVES_OUT, V::CLIPPING_PRIMITIVES),
                (
                    W::FRAGMENT_SHADER_INVOCATIONS,
                    V::FRAGMENT_SHADER_INVOCATIONS,
                ),
                (W::COMPUTE_SHADER_INVOCATIONS, V::COMPUTE_SHADER_INVOCATIONS),
            ];
            let flags = rows
                .iter()
                .filter(|(w, _)| types.contains(*w))
                .fold(V::empty(), |acc, (_, v)| acc | *v);
            (vk::QueryType::PIPELINE_STATISTICS, flags)
        }
    }
}

/// The Vulkan descriptor type of a binding type; `None` for external
/// textures, which have no single Vulkan descriptor.
pub(super) fn map_binding_type(ty: &wgt::BindingType) -> Option<vk::DescriptorType> {
    use vk::DescriptorType as D;
    Some(match *ty {
        wgt::BindingType::Buffer {
            ty,
            has_dynamic_offset,
            ..
        } => match (ty, has_dynamic_offset) {
            (wgt::BufferBindingType::Uniform, false) => D::UNIFORM_BUFFER,
            (wgt::BufferBindingType::Uniform, true) => D::UNIFORM_BUFFER_DYNAMIC,
            (wgt::BufferBindingType::Storage { .. }, false) => D::STORAGE_BUFFER,
            (wgt::BufferBindingType::Storage { .. }, true) => D::STORAGE_BUFFER_DYNAMIC,
        },
        wgt::BindingType::Sampler(_) => D::SAMPLER,
        wgt::BindingType::Texture { .. } => D::SAMPLED_IMAGE,
        wgt::BindingType::StorageTexture { .. } => D::STORAGE_IMAGE,
        wgt::BindingType::AccelerationStructure { .. } => D::ACCELERATION_STRUCTURE_KHR,
        wgt::BindingType::ExternalTexture => return None,
    })
}

/// Shader stages in Vulkan terms (ray-tracing stages map to their `_KHR` bits).
pub(super) fn map_shader_stages(stages: wgt::ShaderStages) -> vk::ShaderStageFlags {
    use vk::ShaderStageFlags as V;
    use wgt::ShaderStages as S;
    let table = [
        (S::VERTEX, V::VERTEX),
        (S::FRAGMENT, V::FRAGMENT),
        (S::COMPUTE, V::COMPUTE),
        (S::TASK, V::TASK_EXT),
        (S::MESH, V::MESH_EXT),
        (S::RAY_GENERATION, V::RAYGEN_KHR),
        (S::ANY_HIT, V::ANY_HIT_KHR),
        (S::CLOSEST_HIT, V::CLOSEST_HIT_KHR),
        (S::MISS, V::MISS_KHR),
    ];
    table
        .into_iter()
        .filter(|&(s, _)| stages.contains(s))
        .fold(V::empty(), |acc, (_, v)| acc | v)
}

/// Maps a driver error to the hal's [`crate::DeviceError`].
pub(crate) fn map_err(result: vk::Result) -> crate::DeviceError {
    match result {
        vk::Result::ERROR_OUT_OF_HOST_MEMORY | vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => {
            crate::DeviceError::OutOfMemory
        }
        vk::Result::ERROR_DEVICE_LOST => crate::DeviceError::Lost,
        other => {
            log::warn!("unexpected Vulkan result {other:?}");
            crate::DeviceError::Unexpected
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wgt::TextureAspect as A;
    use wgt::TextureFormat as T;

    #[test]
    fn aspects_select_what_the_format_has() {
        let ds = T::Depth24PlusStencil8;
        let (d, s) = (vk::ImageAspectFlags::DEPTH, vk::ImageAspectFlags::STENCIL);
        assert_eq!(format_aspects(ds), d | s);
        assert_eq!(map_aspect(ds, A::DepthOnly), d);
        assert_eq!(map_aspect(ds, A::StencilOnly), s);
        assert_eq!(
            map_aspect(T::Depth32Float, A::StencilOnly),
            vk::ImageAspectFlags::empty()
        );
        assert_eq!(
            map_aspect(T::Rgba8Unorm, A::All),
            vk::ImageAspectFlags::COLOR
        );
        assert_eq!(
            format_aspects(T::NV12),
            vk::ImageAspectFlags::PLANE_0 | vk::ImageAspectFlags::PLANE_1
        );
    }

    #[test]
    fn barriers_on_combined_depth_stencil_name_both_aspects() {
        let (d, s) = (vk::ImageAspectFlags::DEPTH, vk::ImageAspectFlags::STENCIL);
        assert_eq!(
            map_barrier_aspect(T::Depth24PlusStencil8, A::DepthOnly),
            d | s
        );
        assert_eq!(
            map_barrier_aspect(T::Depth32FloatStencil8, A::StencilOnly),
            d | s
        );
        assert_eq!(map_barrier_aspect(T::Depth32Float, A::DepthOnly), d);
        assert_eq!(map_barrier_aspect(T::Stencil8, A::All), s);
        assert!(map_barrier_aspect(T::Depth32Float, A::StencilOnly).is_empty());
        assert_eq!(
            map_barrier_aspect(T::Rgba8Unorm, A::All),
            vk::ImageAspectFlags::COLOR
        );
    }

    #[test]
    fn multi_planar_formats_are_unsupported() {
        assert_eq!(
            map_texture_format(T::NV12),
            vk::Format::G8_B8R8_2PLANE_420_UNORM
        );
        assert_eq!(
            map_texture_format(T::P010),
            vk::Format::G10X6_B10X6R10X6_2PLANE_420_UNORM_3PACK16
        );
    }

    #[test]
    fn open_ranges_become_remaining() {
        let range = wgt::ImageSubresourceRange {
            base_mip_level: 2,
            base_array_layer: 1,
            ..Default::default()
        };
        let vk_range = map_barrier_range(&range, T::Rgba8Unorm);
        assert_eq!(vk_range.level_count, vk::REMAINING_MIP_LEVELS);
        assert_eq!(vk_range.layer_count, vk::REMAINING_ARRAY_LAYERS);
        assert_eq!((vk_range.base_mip_level, vk_range.base_array_layer), (2, 1));
    }

    #[test]
    fn origins_saturate() {
        let o = map_origin(wgt::Origin3d {
            x: 1,
            y: u32::MAX,
            z: 0,
        });
        assert_eq!((o.x, o.y, o.z), (1, i32::MAX, 0));
    }

    #[test]
    fn query_resolve_needs_transfer_dst() {
        let usage = map_buffer_usage(wgt::BufferUsages::QUERY_RESOLVE, false);
        assert_eq!(usage, vk::BufferUsageFlags::TRANSFER_DST);
    }
}
