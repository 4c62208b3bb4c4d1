//! Cheap checks of texture and view descriptions (design §1), and the
//! flags and usages they imply. Pure functions of the description, the
//! texture and the device limits: no driver calls.

use ash::vk;

use super::conv;
use crate::{TextureDescriptor, TextureError};

/// The most mip levels an extent allows.
fn max_mips(dimension: wgt::TextureDimension, size: wgt::Extent3d) -> u32 {
    let largest = match dimension {
        wgt::TextureDimension::D1 => size.width,
        wgt::TextureDimension::D2 => size.width.max(size.height),
        wgt::TextureDimension::D3 => size.width.max(size.height).max(size.depth_or_array_layers),
    };
    u32::BITS - largest.max(1).leading_zeros()
}

/// Array layers of a texture (1 for D3, whose third size is depth).
pub(super) fn layer_count(dimension: wgt::TextureDimension, size: wgt::Extent3d) -> u32 {
    match dimension {
        wgt::TextureDimension::D3 => 1,
        _ => size.depth_or_array_layers,
    }
}

/// Whether a texture is created cube-compatible: a square, single-sampled
/// 2D texture with ≥ 6 layers that can be sampled (cube views are only for
/// sampling; `CUBE_COMPATIBLE` on a multisampled image would make the
/// format query report one sample).
pub(super) fn cube_compatible(
    dimension: wgt::TextureDimension,
    size: wgt::Extent3d,
    sample_count: u32,
    usage: wgt::TextureUsages,
) -> bool {
    dimension == wgt::TextureDimension::D2
        && size.width == size.height
        && size.depth_or_array_layers >= 6
        && sample_count == 1
        && usage.contains(wgt::TextureUsages::TEXTURE_BINDING)
}

/// The usages a view may have: those of its image (`image_usage`) whose
/// format features the view's format has. An sRGB view of a storage
/// texture, for one, drops `STORAGE` (VUID-VkImageViewCreateInfo-usage-02275).
pub(super) fn view_usage(
    image_usage: vk::ImageUsageFlags,
    view_features: vk::FormatFeatureFlags,
) -> vk::ImageUsageFlags {
    let mut usage = vk::ImageUsageFlags::empty();
    for bit in 0..u32::BITS {
        let flag = vk::ImageUsageFlags::from_raw(image_usage.as_raw() & (1 << bit));
        if !flag.is_empty() && view_features.contains(conv::usage_format_features(flag)) {
            usage |= flag;
        }
    }
    usage
}

/// The usages that make a texture viewable.
pub(super) const VIEWABLE: wgt::TextureUsages = wgt::TextureUsages::TEXTURE_BINDING
    .union(wgt::TextureUsages::STORAGE_BINDING)
    .union(wgt::TextureUsages::RENDER_ATTACHMENT);

/// Checks a texture's extent against the device limits.
pub(super) fn check_extent(
    desc: &TextureDescriptor,
    limits: &wgt::Limits,
) -> Result<(), TextureError> {
    let s = desc.size;
    if s.width == 0 || s.height == 0 || s.depth_or_array_layers == 0 {
        return Err(TextureError::ZeroExtent(s));
    }
    let too_large = |max: u32| TextureError::TooLarge { extent: s, max };
    let layers = limits.max_texture_array_layers;
    match desc.dimension {
        wgt::TextureDimension::D1 => {
            let max = limits.max_texture_dimension_1d;
            if s.width > max {
                return Err(too_large(max));
            }
            if s.height != 1 {
                return Err(too_large(1));
            }
            if s.depth_or_array_layers > layers {
                return Err(too_large(layers));
            }
        }
        wgt::TextureDimension::D2 => {
            let max = limits.max_texture_dimension_2d;
            if s.width > max || s.height > max {
                return Err(too_large(max));
            }
            if s.depth_or_array_layers > layers {
                return Err(too_large(layers));
            }
        }
        wgt::TextureDimension::D3 => {
            let max = limits.max_texture_dimension_3d;
            if s.width > max || s.height > max || s.depth_or_array_layers > max {
                return Err(too_large(max));
            }
        }
    }
    let max = max_mips(desc.dimension, s);
    if desc.mip_level_count == 0 || desc.mip_level_count > max {
        return Err(TextureError::InvalidMipCount {
            requested: desc.mip_level_count,
            max,
        });
    }
    Ok(())
}

/// Resolves a view's range against its texture: `(mip base, mip count, layer base, layer count)`.
pub(super) fn resolve_range(
    texture: &super::Texture,
    range: &wgt::ImageSubresourceRange,
) -> Result<(u32, u32, u32, u32), TextureError> {
    let mips = texture.mip_level_count;
    let layers = layer_count(texture.dimension, texture.size);
    let resolve = |base: u32, count: Option<u32>, total: u32| {
        let count = count.unwrap_or(total.saturating_sub(base));
        match base.checked_add(count) {
            Some(end) if count > 0 && end <= total => Ok(count),
            _ => Err(TextureError::InvalidRange),
        }
    };
    let mip_count = resolve(range.base_mip_level, range.mip_level_count, mips)?;
    let layer_count = resolve(range.base_array_layer, range.array_layer_count, layers)?;
    Ok((
        range.base_mip_level,
        mip_count,
        range.base_array_layer,
        layer_count,
    ))
}

/// Checks a view dimension against its texture and layer count.
pub(super) fn check_view_dimension(
    texture: &super::Texture,
    dim: wgt::TextureViewDimension,
    layers: u32,
    cube_arrays: bool,
) -> Result<(), TextureError> {
    use wgt::TextureDimension as T;
    use wgt::TextureViewDimension as V;
    let cube = cube_compatible(
        texture.dimension,
        texture.size,
        texture.sample_count,
        texture.usage,
    );
    match (dim, texture.dimension) {
        (V::D1, T::D1) | (V::D2, T::D2) if layers == 1 => Ok(()),
        (V::D1 | V::D2, _) if layers != 1 => Err(TextureError::IncompatibleView(
            "a 1D or 2D view covers exactly one layer",
        )),
        (V::D2Array, T::D2) | (V::D3, T::D3) => Ok(()),
        (V::Cube, T::D2) if cube && layers == 6 => Ok(()),
        (V::CubeArray, T::D2) if cube && layers % 6 == 0 && cube_arrays => Ok(()),
        (V::CubeArray, T::D2) if !cube_arrays => Err(TextureError::IncompatibleView(
            "cube arrays are not supported by this device",
        )),
        (V::Cube | V::CubeArray, _) => Err(TextureError::IncompatibleView(
            "cube views need a square 2D texture and a multiple of 6 layers",
        )),
        _ => Err(TextureError::IncompatibleView(
            "view dimension does not match the texture dimension",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srgb_views_of_storage_textures_drop_storage() {
        use vk::FormatFeatureFlags as F;
        use vk::ImageUsageFlags as U;
        let image = U::SAMPLED | U::STORAGE | U::TRANSFER_DST;
        let srgb = F::SAMPLED_IMAGE | F::TRANSFER_DST | F::COLOR_ATTACHMENT;
        assert_eq!(view_usage(image, srgb), U::SAMPLED | U::TRANSFER_DST);
        assert_eq!(view_usage(image, srgb | F::STORAGE_IMAGE), image);
    }

    #[test]
    fn only_sampled_single_sampled_squares_are_cube_compatible() {
        let size = wgt::Extent3d {
            width: 8,
            height: 8,
            depth_or_array_layers: 6,
        };
        let d2 = wgt::TextureDimension::D2;
        let sampled = wgt::TextureUsages::TEXTURE_BINDING;
        assert!(cube_compatible(d2, size, 1, sampled));
        assert!(!cube_compatible(
            d2,
            size,
            4,
            sampled | wgt::TextureUsages::RENDER_ATTACHMENT
        ));
        assert!(!cube_compatible(d2, size, 1, wgt::TextureUsages::COPY_DST));
        let narrow = wgt::Extent3d { width: 4, ..size };
        assert!(!cube_compatible(d2, narrow, 1, sampled));
    }
}
