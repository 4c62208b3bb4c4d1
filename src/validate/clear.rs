//! `clear_texture`: what both backends check before zeroing a texture's
//! subresources, in this order (each a [`TextureError`]):
//!
//! 1. a device not opened with `CLEAR_TEXTURE` (`MissingFeature`);
//! 2. a texture without `COPY_DST` usage (`MissingUsage`);
//! 3. a block-compressed or multi-planar format (`NotClearable`: those are
//!    zeroed by copying zeros from a buffer, `copy_buffer_to_texture`);
//! 4. an aspect the format lacks (`InvalidAspect`);
//! 5. mip levels or array layers outside the texture, or none
//!    (`InvalidRange`, as for views).

use super::TextureFacts;
use crate::TextureError;

/// A checked clear: the range with both counts resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CheckedClear {
    /// First mip level and how many.
    pub(crate) mips: (u32, u32),
    /// First array layer and how many (0 and 1 for a 3D texture, whose
    /// depth slices are all cleared).
    pub(crate) layers: (u32, u32),
}

/// Checks a `clear_texture` of `range` of `texture` on a device opened
/// with `features` (see the module docs).
pub(crate) fn check_clear(
    texture: &TextureFacts<'_>,
    range: &wgt::ImageSubresourceRange,
    features: wgt::Features,
) -> Result<CheckedClear, TextureError> {
    if !features.contains(wgt::Features::CLEAR_TEXTURE) {
        return Err(TextureError::MissingFeature {
            feature: wgt::Features::CLEAR_TEXTURE,
            enabled: features,
        });
    }
    if !texture.usage.contains(wgt::TextureUsages::COPY_DST) {
        return Err(TextureError::MissingUsage {
            needed: wgt::TextureUsages::COPY_DST,
            usage: texture.usage,
        });
    }
    if texture.format.is_compressed() || texture.format.is_multi_planar_format() {
        return Err(TextureError::NotClearable(texture.format));
    }
    if !super::view::has_aspect(texture.format, range.aspect) {
        return Err(TextureError::InvalidAspect {
            aspect: range.aspect,
            format: texture.format,
        });
    }
    let mips = super::view::resolve(
        "mip levels",
        range.base_mip_level,
        range.mip_level_count,
        texture.mip_level_count,
    )?;
    let layers = super::view::resolve(
        "array layers",
        range.base_array_layer,
        range.array_layer_count,
        texture.layer_count(),
    )?;
    Ok(CheckedClear {
        mips: (range.base_mip_level, mips),
        layers: (range.base_array_layer, layers),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(format: wgt::TextureFormat, usage: wgt::TextureUsages) -> TextureFacts<'static> {
        TextureFacts {
            format,
            dimension: wgt::TextureDimension::D2,
            size: wgt::Extent3d {
                width: 8,
                height: 8,
                depth_or_array_layers: 4,
            },
            mip_level_count: 3,
            sample_count: 1,
            usage,
            view_formats: &[],
        }
    }

    #[test]
    fn clears_resolve_their_range_and_refuse_what_they_cannot_do() {
        let f = wgt::Features::CLEAR_TEXTURE;
        let dst = wgt::TextureUsages::COPY_DST;
        let color = facts(wgt::TextureFormat::Rgba8Unorm, dst);
        let all = wgt::ImageSubresourceRange::default();
        assert_eq!(
            check_clear(&color, &all, f),
            Ok(CheckedClear {
                mips: (0, 3),
                layers: (0, 4)
            })
        );
        let some = wgt::ImageSubresourceRange {
            base_mip_level: 1,
            base_array_layer: 2,
            ..Default::default()
        };
        assert_eq!(
            check_clear(&color, &some, f),
            Ok(CheckedClear {
                mips: (1, 2),
                layers: (2, 2)
            })
        );
        assert!(matches!(
            check_clear(&color, &all, wgt::Features::empty()),
            Err(TextureError::MissingFeature { .. })
        ));
        let sampled = facts(
            wgt::TextureFormat::Rgba8Unorm,
            wgt::TextureUsages::TEXTURE_BINDING,
        );
        assert!(matches!(
            check_clear(&sampled, &all, f),
            Err(TextureError::MissingUsage { .. })
        ));
        let bc = facts(wgt::TextureFormat::Bc1RgbaUnorm, dst);
        assert_eq!(
            check_clear(&bc, &all, f),
            Err(TextureError::NotClearable(wgt::TextureFormat::Bc1RgbaUnorm))
        );
        let depth = wgt::ImageSubresourceRange {
            aspect: wgt::TextureAspect::DepthOnly,
            ..Default::default()
        };
        assert!(matches!(
            check_clear(&color, &depth, f),
            Err(TextureError::InvalidAspect { .. })
        ));
        let past = wgt::ImageSubresourceRange {
            base_array_layer: 4,
            ..Default::default()
        };
        assert!(matches!(
            check_clear(&color, &past, f),
            Err(TextureError::InvalidRange { .. })
        ));
    }
}
