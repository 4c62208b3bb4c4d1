//! Cheap checks of texture descriptions, and the flags and usages they
//! imply. Pure functions of the description and the device limits: no
//! driver calls. (Views are checked in `validate/view.rs`, shared with
//! every backend; cube compatibility is decided there too.)

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
}
