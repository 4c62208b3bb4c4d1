//! Texture views against their texture: the checks both backends run before
//! making a view, in this order (each a [`TextureError`]):
//!
//! 1. a texture without texture-binding, storage or render-attachment usage
//!    (`IncompatibleView`);
//! 2. an aspect the texture's format lacks, e.g. the depth aspect of a
//!    colour texture (`InvalidAspect`); every plane of a multi-planar
//!    texture at once (`IncompatibleView`: a view names one plane);
//! 3. a format that is neither the texture's, one of its view formats, nor
//!    its aspect's; for a plane, other than the plane's (`IncompatibleView`);
//! 4. mip levels or array layers outside the texture, or none (`InvalidRange`);
//! 5. a dimension of another texture dimension, a 1D/2D/3D view of more than
//!    one layer, cube views of a texture that is not square, single-sampled
//!    and sampleable or of a layer count that is not 6 (a multiple of 6 for
//!    cube arrays), cube arrays where the device has none (`IncompatibleView`).
//!
//! What needs the driver (whether the view format supports the texture's
//! usages) stays in the backend.

use super::TextureFacts;
use crate::{TextureError, TextureViewDescriptor};

/// The usages that make a texture viewable.
pub(crate) const VIEWABLE: wgt::TextureUsages = wgt::TextureUsages::TEXTURE_BINDING
    .union(wgt::TextureUsages::STORAGE_BINDING)
    .union(wgt::TextureUsages::RENDER_ATTACHMENT);

/// A checked view: its format and dimension, and its range with both counts
/// resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CheckedView {
    /// The view's format (the texture's when the descriptor gave none).
    pub(crate) format: wgt::TextureFormat,
    /// The view's dimension (derived when the descriptor gave none).
    pub(crate) dimension: wgt::TextureViewDimension,
    /// The range, `mip_level_count` and `array_layer_count` resolved to `Some`.
    pub(crate) range: wgt::ImageSubresourceRange,
    /// Resolved mip level count.
    pub(crate) mip_level_count: u32,
    /// Resolved array layer count.
    pub(crate) array_layer_count: u32,
}

/// Whether a texture is cube-compatible: a square, single-sampled 2D
/// texture with at least 6 layers that can be sampled (cube views are only
/// for sampling).
pub(crate) fn cube_compatible(
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

/// Whether `format` has `aspect`.
pub(crate) fn has_aspect(format: wgt::TextureFormat, aspect: wgt::TextureAspect) -> bool {
    match aspect {
        wgt::TextureAspect::All => true,
        wgt::TextureAspect::DepthOnly => format.has_depth_aspect(),
        wgt::TextureAspect::StencilOnly => format.has_stencil_aspect(),
        wgt::TextureAspect::Plane0 => format.planes().is_some_and(|n| n > 0),
        wgt::TextureAspect::Plane1 => format.planes().is_some_and(|n| n > 1),
        wgt::TextureAspect::Plane2 => format.planes().is_some_and(|n| n > 2),
    }
}

/// Checks a view descriptor against its texture (see the module docs).
/// `cube_arrays`: the device can make cube-array views.
pub(crate) fn check_view(
    texture: &TextureFacts<'_>,
    desc: &TextureViewDescriptor,
    cube_arrays: bool,
) -> Result<CheckedView, TextureError> {
    use wgt::TextureViewDimension as V;
    let r = &desc.range;
    if !texture.usage.intersects(VIEWABLE) {
        return Err(TextureError::IncompatibleView {
            asked: format!(
                "a view of a texture with usage {}",
                super::flag_names(texture.usage)
            ),
            allowed: format!(
                "textures with one of {} (the usages a view serves)",
                super::flag_names(VIEWABLE)
            ),
        });
    }
    if !has_aspect(texture.format, r.aspect) {
        return Err(TextureError::InvalidAspect {
            aspect: r.aspect,
            format: texture.format,
        });
    }
    let planar = texture.format.is_multi_planar_format();
    if planar && r.aspect == wgt::TextureAspect::All {
        return Err(TextureError::IncompatibleView {
            asked: format!("a view of every plane of a {:?} texture", texture.format),
            allowed: "a view of one plane (aspect Plane0 or Plane1), in its format".to_owned(),
        });
    }
    // A plane's view is in the plane's format.
    let plane_format = texture
        .format
        .aspect_specific_format(r.aspect)
        .filter(|_| planar);
    let format = desc.format.or(plane_format).unwrap_or(texture.format);
    let format_ok = if planar {
        plane_format == Some(format)
    } else {
        format == texture.format
            || texture.view_formats.contains(&format)
            || texture.format.aspect_specific_format(r.aspect) == Some(format)
    };
    if !format_ok {
        let mut allowed = vec![format!("{:?}", texture.format)];
        allowed.extend(texture.view_formats.iter().map(|f| format!("{f:?}")));
        if let Some(aspect) = texture.format.aspect_specific_format(r.aspect) {
            allowed.push(format!("{aspect:?} (the {:?} aspect's)", r.aspect));
        }
        return Err(TextureError::IncompatibleView {
            asked: format!("format {format:?}"),
            allowed: format!(
                "the texture's format, its view formats or its aspect's: {}",
                allowed.join(", ")
            ),
        });
    }
    let mips = resolve(
        "mip levels",
        r.base_mip_level,
        r.mip_level_count,
        texture.mip_level_count,
    )?;
    let layers = resolve(
        "array layers",
        r.base_array_layer,
        r.array_layer_count,
        texture.layer_count(),
    )?;
    let dimension = desc.dimension.unwrap_or(match texture.dimension {
        wgt::TextureDimension::D1 => V::D1,
        wgt::TextureDimension::D2 if layers == 1 => V::D2,
        wgt::TextureDimension::D2 => V::D2Array,
        wgt::TextureDimension::D3 => V::D3,
    });
    if dimension.compatible_texture_dimension() != texture.dimension {
        return Err(TextureError::IncompatibleView {
            asked: format!("dimension {dimension:?}"),
            allowed: format!(
                "dimensions of a {:?} texture: {}",
                texture.dimension,
                match texture.dimension {
                    wgt::TextureDimension::D1 => "D1",
                    wgt::TextureDimension::D2 => "D2, D2Array, Cube, CubeArray",
                    wgt::TextureDimension::D3 => "D3",
                }
            ),
        });
    }
    let cube = cube_compatible(
        texture.dimension,
        texture.size,
        texture.sample_count,
        texture.usage,
    );
    let incompatible = |allowed: String| {
        Err(TextureError::IncompatibleView {
            asked: format!("a {dimension:?} view of {layers} layers"),
            allowed,
        })
    };
    let cube_texture = "a square, single-sampled 2D texture of at least 6 layers with \
                        TEXTURE_BINDING usage";
    // Only for an error: no allocation on the way to a view.
    let texture_shape = || {
        format!(
            "this texture: {}x{}x{}, {} samples, usage {}",
            texture.size.width,
            texture.size.height,
            texture.size.depth_or_array_layers,
            texture.sample_count,
            super::flag_names(texture.usage)
        )
    };
    match dimension {
        V::D1 | V::D2 | V::D3 if layers != 1 => {
            incompatible("1D, 2D and 3D views cover exactly 1 layer".to_owned())
        }
        V::CubeArray if !cube_arrays => incompatible(
            "D2, D2Array or Cube: cube arrays are not supported by this device".to_owned(),
        ),
        V::Cube if !cube || layers != 6 => incompatible(format!(
            "cube views of {cube_texture}, 6 layers ({})",
            texture_shape()
        )),
        V::CubeArray if !cube || layers % 6 != 0 => incompatible(format!(
            "cube-array views of {cube_texture}, a multiple of 6 layers ({})",
            texture_shape()
        )),
        _ => Ok(CheckedView {
            format,
            dimension,
            range: wgt::ImageSubresourceRange {
                mip_level_count: Some(mips),
                array_layer_count: Some(layers),
                ..*r
            },
            mip_level_count: mips,
            array_layer_count: layers,
        }),
    }
}

/// Resolves `count` (`None`: to the end) from `base` against `total`.
pub(crate) fn resolve(
    what: &'static str,
    base: u32,
    count: Option<u32>,
    total: u32,
) -> Result<u32, TextureError> {
    let resolved = count.unwrap_or(total.saturating_sub(base));
    match base.checked_add(resolved) {
        Some(end) if resolved > 0 && end <= total => Ok(resolved),
        _ => Err(TextureError::InvalidRange {
            what,
            base,
            count,
            total,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texture(format: wgt::TextureFormat) -> TextureFacts<'static> {
        TextureFacts {
            format,
            dimension: wgt::TextureDimension::D2,
            size: wgt::Extent3d {
                width: 8,
                height: 8,
                depth_or_array_layers: 6,
            },
            mip_level_count: 2,
            sample_count: 1,
            usage: wgt::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        }
    }

    fn desc(aspect: wgt::TextureAspect) -> TextureViewDescriptor<'static> {
        TextureViewDescriptor {
            label: None,
            format: None,
            dimension: None,
            range: wgt::ImageSubresourceRange {
                aspect,
                ..Default::default()
            },
        }
    }

    #[test]
    fn the_depth_aspect_of_a_colour_texture_is_refused() {
        let colour = texture(wgt::TextureFormat::Rgba8Unorm);
        let e = check_view(&colour, &desc(wgt::TextureAspect::DepthOnly), true);
        assert_eq!(
            e,
            Err(TextureError::InvalidAspect {
                aspect: wgt::TextureAspect::DepthOnly,
                format: wgt::TextureFormat::Rgba8Unorm,
            })
        );
        let depth = texture(wgt::TextureFormat::Depth32Float);
        let view =
            check_view(&depth, &desc(wgt::TextureAspect::DepthOnly), true).expect("test setup");
        assert_eq!(view.dimension, wgt::TextureViewDimension::D2Array);
        assert_eq!((view.mip_level_count, view.array_layer_count), (2, 6));
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

    #[test]
    fn ranges_past_the_texture_name_the_numbers() {
        let e = resolve("mip levels", 1, Some(4), 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "view mip levels 1..5 are outside the texture's 0..2"
        );
        let e = resolve("array layers", 3, None, 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "view array layers from 3 to the end are outside the texture's 0..2"
        );
    }
}
