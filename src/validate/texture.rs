//! Texture descriptions, before any memory or driver object exists: the
//! checks every backend runs first, in this order (each the typed error
//! named):
//!
//! 1. memory other than `Device` or external (`UnsupportedMemory`);
//! 2. a zero dimension (`ZeroExtent`); a dimension over its limit
//!    (`TooLarge`, naming the `wgt::Limits` field);
//! 3. a mip count of 0 or past the full chain of the largest dimension
//!    (`InvalidMipCount`);
//! 4. a format, or a usage of it, that needs a feature the device was not
//!    opened with (`UnsupportedFormat`: BC/ETC2/ASTC, 16-bit norm, …;
//!    storage on Bgra8Unorm, rendering to Rg11b10Ufloat; a block-compressed
//!    3D texture);
//! 5. a sample count that is not 1, 2, 4, 8, 16, 32 or 64, or above 1 on a
//!    texture that is not 2D, has more than one mip level, has
//!    `STORAGE_BINDING` usage, or has several layers on a device not opened
//!    with `MULTISAMPLE_ARRAY` (`InvalidSampleCount`);
//! 6. a view format differing from the format in more than sRGB-ness
//!    (`IncompatibleViewFormat`);
//! 7. for a multi-planar format (NV12, P010): not 2D, more than one mip
//!    level, layer or sample, an odd width or height, a usage other than
//!    sampling and copies, or view formats (`InvalidPlanar`; views name a
//!    plane and take its format, `validate/view.rs`).
//!
//! What needs the adapter's answer (which usages and sample counts the
//! format supports, the format's image limits) stays in the backends and
//! runs after; a sample count the format does not support is
//! `InvalidSampleCount` with [`FORMAT_SAMPLES`] on every backend.

use crate::{Memory, TextureDescriptor, TextureError};

/// The reason of an `InvalidSampleCount` the format (not the description)
/// refuses: the backends' own check, worded once.
pub(crate) const FORMAT_SAMPLES: &str =
    "the format does not support this sample count on this adapter";

/// The most mip levels an extent allows: the full chain of its largest
/// dimension (wgt counts one for 1D; Vulkan, and so keel-hal, allows a
/// chain there too).
pub(crate) fn max_mips(dimension: wgt::TextureDimension, size: wgt::Extent3d) -> u32 {
    use wgt::TextureDimension as D;
    let largest = match dimension {
        D::D1 => size.width,
        D::D2 => size.width.max(size.height),
        D::D3 => size.width.max(size.height).max(size.depth_or_array_layers),
    };
    u32::BITS - largest.max(1).leading_zeros()
}

/// Checks a texture description against the device's limits and features
/// (see the module docs for the order).
pub(crate) fn check_texture(
    desc: &TextureDescriptor,
    limits: &wgt::Limits,
    features: wgt::Features,
) -> Result<(), TextureError> {
    use wgt::TextureDimension as D;
    // External memory is checked where it is made (each backend's external code).
    if !matches!(desc.memory, Memory::Device | Memory::External(_)) {
        return Err(TextureError::UnsupportedMemory(desc.memory));
    }
    let extent = desc.size;
    if extent.width == 0 || extent.height == 0 || extent.depth_or_array_layers == 0 {
        return Err(TextureError::ZeroExtent(extent));
    }
    // Per dimension: the limits on width, height and depth or layers.
    let layers = (limits.max_texture_array_layers, "max_texture_array_layers");
    let maxima = match desc.dimension {
        D::D1 => [
            (limits.max_texture_dimension_1d, "max_texture_dimension_1d"),
            (1, "the height of a 1D texture"),
            layers,
        ],
        D::D2 => [
            (limits.max_texture_dimension_2d, "max_texture_dimension_2d"),
            (limits.max_texture_dimension_2d, "max_texture_dimension_2d"),
            layers,
        ],
        D::D3 => [(limits.max_texture_dimension_3d, "max_texture_dimension_3d"); 3],
    };
    let sizes = [extent.width, extent.height, extent.depth_or_array_layers];
    if let Some((_, &(max, limit))) = sizes.iter().zip(&maxima).find(|(s, (m, _))| *s > m) {
        return Err(TextureError::TooLarge { extent, limit, max });
    }
    let max = max_mips(desc.dimension, extent);
    if desc.mip_level_count == 0 || desc.mip_level_count > max {
        return Err(TextureError::InvalidMipCount {
            requested: desc.mip_level_count,
            max,
        });
    }
    // BC/ETC2/ASTC, 16-bit norm, … need their feature on the device, and
    // so do a few usages of formats every device has.
    let mut usage_needs = USAGE_FEATURES
        .iter()
        .filter(|(format, usage, _)| *format == desc.format && desc.usage.intersects(*usage))
        .fold(wgt::Features::empty(), |acc, (_, _, feature)| {
            acc | *feature
        });
    // Block-compressed 3D textures need their "sliced 3D" feature.
    if desc.dimension == D::D3 && desc.format.is_compressed() {
        usage_needs |= if desc.format.is_bcn() {
            wgt::Features::TEXTURE_COMPRESSION_BC_SLICED_3D
        } else {
            wgt::Features::TEXTURE_COMPRESSION_ASTC_SLICED_3D
        };
    }
    if !features.contains(desc.format.required_features() | usage_needs) {
        return Err(TextureError::UnsupportedFormat {
            format: desc.format,
            usage: desc.usage,
        });
    }
    if desc.format.is_multi_planar_format() {
        check_planar(desc)?;
    }
    check_sample_count(desc, features)?;
    if let Some(&view_format) = desc
        .view_formats
        .iter()
        .find(|f| f.remove_srgb_suffix() != desc.format.remove_srgb_suffix())
    {
        return Err(TextureError::IncompatibleViewFormat {
            format: desc.format,
            view_format,
        });
    }
    Ok(())
}

/// What multi-planar textures may be used for: sampling (through plane
/// views) and copies (plane by plane).
pub(crate) const PLANAR_USAGES: wgt::TextureUsages = wgt::TextureUsages::TEXTURE_BINDING
    .union(wgt::TextureUsages::COPY_SRC)
    .union(wgt::TextureUsages::COPY_DST);

/// The rules of multi-planar (4:2:0) textures: Vulkan's for formats that
/// need a sampler Y′CbCr conversion (2D, one mip level, layer and sample),
/// chroma planes of whole texels (an even width and height), and the
/// usages the adapter's probe checked.
fn check_planar(desc: &TextureDescriptor) -> Result<(), TextureError> {
    const ALLOWED: &str = "a 2D texture of 1 mip level, 1 layer and 1 sample, even width and \
                           height, usage within TEXTURE_BINDING | COPY_SRC | COPY_DST, no view \
                           formats";
    let invalid = |asked: String| {
        Err(TextureError::InvalidPlanar {
            asked,
            allowed: ALLOWED,
        })
    };
    let size = desc.size;
    let (w, h) = desc.format.size_multiple_requirement();
    if desc.dimension != wgt::TextureDimension::D2 {
        return invalid(format!("dimension {:?}", desc.dimension));
    }
    if desc.mip_level_count != 1 || size.depth_or_array_layers != 1 || desc.sample_count != 1 {
        return invalid(format!(
            "{} mip levels, {} layers, {} samples",
            desc.mip_level_count, size.depth_or_array_layers, desc.sample_count
        ));
    }
    if size.width % w.max(1) != 0 || size.height % h.max(1) != 0 {
        return invalid(format!("size {}x{}", size.width, size.height));
    }
    if !PLANAR_USAGES.contains(desc.usage) {
        return invalid(format!("usage {}", super::flag_names(desc.usage)));
    }
    if !desc.view_formats.is_empty() {
        return invalid(format!("view formats {:?}", desc.view_formats));
    }
    Ok(())
}

/// How much smaller than the texture `aspect`'s plane is, across and down:
/// (2, 2) for the chroma plane of a 4:2:0 format, (1, 1) otherwise.
pub(crate) fn plane_subsampling(
    format: wgt::TextureFormat,
    aspect: wgt::TextureAspect,
) -> (u32, u32) {
    match (format.planes(), aspect) {
        (Some(_), wgt::TextureAspect::Plane1 | wgt::TextureAspect::Plane2) => {
            format.size_multiple_requirement()
        }
        _ => (1, 1),
    }
}

/// Usages of formats every device has that need a feature (WebGPU's rule):
/// storage on Bgra8Unorm, rendering to Rg11b10Ufloat.
const USAGE_FEATURES: [(wgt::TextureFormat, wgt::TextureUsages, wgt::Features); 2] = [
    (
        wgt::TextureFormat::Bgra8Unorm,
        wgt::TextureUsages::STORAGE_BINDING,
        wgt::Features::BGRA8UNORM_STORAGE,
    ),
    (
        wgt::TextureFormat::Rg11b10Ufloat,
        wgt::TextureUsages::RENDER_ATTACHMENT,
        wgt::Features::RG11B10UFLOAT_RENDERABLE,
    ),
];

/// The sample-count rules that need no adapter: a count Vulkan knows, and
/// multisampling only on single-mip 2D textures without storage usage
/// (multisampled storage needs `shaderStorageImageMultisample`, which
/// keel-hal does not enable).
fn check_sample_count(
    desc: &TextureDescriptor,
    features: wgt::Features,
) -> Result<(), TextureError> {
    let count = desc.sample_count;
    let fail = |reason| Err(TextureError::InvalidSampleCount { count, reason });
    if !count.is_power_of_two() || count > 64 {
        return fail("sample counts are 1, 2, 4, 8, 16, 32 or 64");
    }
    if count == 1 {
        return Ok(());
    }
    if desc.dimension != wgt::TextureDimension::D2 {
        return fail("only 2D textures may be multisampled");
    }
    if desc.mip_level_count != 1 {
        return fail("a multisampled texture has exactly 1 mip level");
    }
    if desc.usage.contains(wgt::TextureUsages::STORAGE_BINDING) {
        return fail("a multisampled texture cannot have STORAGE_BINDING usage");
    }
    if desc.size.depth_or_array_layers > 1 && !features.contains(wgt::Features::MULTISAMPLE_ARRAY) {
        return fail("a multisampled texture with several layers needs MULTISAMPLE_ARRAY");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planar_textures_follow_their_rules() {
        let nv12 = wgt::Features::TEXTURE_FORMAT_NV12;
        let ok = TextureDescriptor {
            format: wgt::TextureFormat::NV12,
            usage: PLANAR_USAGES,
            ..desc((8, 8, 1))
        };
        let limits = wgt::Limits::default();
        assert_eq!(check_texture(&ok, &limits, nv12), Ok(()));
        assert!(matches!(
            check_texture(&ok, &limits, wgt::Features::empty()),
            Err(TextureError::UnsupportedFormat { .. })
        ));
        let bad = [
            TextureDescriptor { ..desc((7, 8, 1)) },
            TextureDescriptor { ..desc((8, 8, 2)) },
            TextureDescriptor {
                mip_level_count: 2,
                ..desc((8, 8, 1))
            },
            TextureDescriptor {
                usage: wgt::TextureUsages::STORAGE_BINDING,
                ..desc((8, 8, 1))
            },
        ];
        for b in bad {
            let b = TextureDescriptor {
                format: wgt::TextureFormat::NV12,
                usage: if b.usage.is_empty() {
                    PLANAR_USAGES
                } else {
                    b.usage
                },
                ..b
            };
            assert!(
                matches!(
                    check_texture(&b, &limits, nv12),
                    Err(TextureError::InvalidPlanar { .. })
                ),
                "{b:?}"
            );
        }
        use wgt::TextureAspect as A;
        assert_eq!(
            plane_subsampling(wgt::TextureFormat::NV12, A::Plane0),
            (1, 1)
        );
        assert_eq!(
            plane_subsampling(wgt::TextureFormat::P010, A::Plane1),
            (2, 2)
        );
        assert_eq!(
            plane_subsampling(wgt::TextureFormat::R8Unorm, A::Plane1),
            (1, 1)
        );
    }

    fn desc(size: (u32, u32, u32)) -> TextureDescriptor<'static> {
        TextureDescriptor {
            size: wgt::Extent3d {
                width: size.0,
                height: size.1,
                depth_or_array_layers: size.2,
            },
            ..Default::default()
        }
    }

    #[test]
    fn limits_are_named() {
        let limits = wgt::Limits::default();
        let wide = desc((limits.max_texture_dimension_2d + 1, 1, 1));
        let e = check_texture(&wide, &limits, wgt::Features::empty()).unwrap_err();
        assert!(matches!(
            e,
            TextureError::TooLarge {
                limit: "max_texture_dimension_2d",
                ..
            }
        ));
        let text = e.to_string();
        assert!(text.contains("max_texture_dimension_2d"), "{text}");
        assert!(text.contains(&limits.max_texture_dimension_2d.to_string()));
        let tall_1d = TextureDescriptor {
            dimension: wgt::TextureDimension::D1,
            ..desc((4, 2, 1))
        };
        assert_eq!(
            check_texture(&tall_1d, &limits, wgt::Features::empty()),
            Err(TextureError::TooLarge {
                extent: tall_1d.size,
                limit: "the height of a 1D texture",
                max: 1,
            })
        );
    }

    #[test]
    fn sample_counts() {
        let limits = wgt::Limits::default();
        let check = |count, mips, usage| {
            let d = TextureDescriptor {
                sample_count: count,
                mip_level_count: mips,
                usage,
                ..desc((16, 16, 1))
            };
            check_texture(&d, &limits, wgt::Features::empty())
        };
        let attach = wgt::TextureUsages::RENDER_ATTACHMENT;
        assert_eq!(check(4, 1, attach), Ok(()));
        for bad in [0, 3, 128] {
            assert!(matches!(
                check(bad, 1, attach),
                Err(TextureError::InvalidSampleCount { count, .. }) if count == bad
            ));
        }
        let e = check(4, 2, attach).unwrap_err();
        assert!(e.to_string().contains("1 mip level"), "{e}");
        let e = check(4, 1, attach | wgt::TextureUsages::STORAGE_BINDING).unwrap_err();
        assert!(e.to_string().contains("STORAGE_BINDING"), "{e}");
    }

    #[test]
    fn view_formats_differ_only_in_srgb() {
        let limits = wgt::Limits::default();
        let formats = [wgt::TextureFormat::Rgba8UnormSrgb];
        let ok = TextureDescriptor {
            view_formats: &formats,
            ..desc((4, 4, 1))
        };
        assert_eq!(check_texture(&ok, &limits, wgt::Features::empty()), Ok(()));
        let formats = [wgt::TextureFormat::Rgba8Snorm];
        let bad = TextureDescriptor {
            view_formats: &formats,
            ..desc((4, 4, 1))
        };
        let e = check_texture(&bad, &limits, wgt::Features::empty()).unwrap_err();
        assert_eq!(
            e,
            TextureError::IncompatibleViewFormat {
                format: wgt::TextureFormat::Rgba8Unorm,
                view_format: wgt::TextureFormat::Rgba8Snorm,
            }
        );
        assert!(e.to_string().contains("Rgba8Snorm"), "{e}");
    }
}
