//! Texture mistakes the hal checks cheaply: each returns its typed error and
//! leaves no object behind. The checks are the shared ones of
//! `src/validate/texture.rs`, so each is the same error, message included,
//! on noop and on Vulkan.

use keel_hal::wgt;
use keel_hal::{Api, Device, Memory, TextureDescriptor, TextureError};

use crate::harness::{Ctx, Failure, Outcome, TestResult};
use crate::helpers::texture_desc;

conformance_tests!(
    zero_extent,
    texture_over_max_dimension,
    invalid_mip_count,
    invalid_sample_count,
    multisampling_rules,
    view_formats_beyond_srgb,
    textures_in_mappable_memory,
    texture_messages_name_the_numbers,
);

/// Creates a texture that must fail; `check` judges the error. Checks
/// nothing was left alive.
fn expect_texture_error<A: Api>(
    ctx: &Ctx<A>,
    desc: &TextureDescriptor,
    check: impl FnOnce(&TextureError) -> bool,
    expected: &str,
) -> Result<(), Failure> {
    let before = ctx.device.live_counts();
    // SAFETY: live device; a texture that should not exist is destroyed at once.
    match unsafe { ctx.device.create_texture(desc) } {
        Ok(texture) => {
            // SAFETY: never used.
            unsafe { ctx.device.destroy_texture(texture) };
            return Err(format!("{desc:?} was created; expected {expected}").into());
        }
        Err(e) => check!(check(&e), "{desc:?}: expected {expected}, got {e:?}"),
    }
    check_eq!(
        ctx.device.live_counts(),
        before,
        "live objects after the failed create_texture"
    );
    Ok(())
}

fn extent(width: u32, height: u32, depth_or_array_layers: u32) -> wgt::Extent3d {
    wgt::Extent3d {
        width,
        height,
        depth_or_array_layers,
    }
}

fn zero_extent<A: Api>(ctx: &Ctx<A>) -> TestResult {
    for size in [extent(0, 16, 1), extent(16, 0, 1), extent(16, 16, 0)] {
        let desc = TextureDescriptor {
            size,
            ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 1, 1, 1, 1)
        };
        expect_texture_error(
            ctx,
            &desc,
            |e| *e == TextureError::ZeroExtent(size),
            &format!("ZeroExtent({size:?})"),
        )?;
    }
    Ok(Outcome::Pass)
}

fn texture_over_max_dimension<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let max = ctx.limits().max_texture_dimension_2d;
    for size in [extent(max + 1, 1, 1), extent(1, max + 1, 1)] {
        let desc = TextureDescriptor {
            size,
            ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 1, 1, 1, 1)
        };
        expect_texture_error(
            ctx,
            &desc,
            |e| {
                *e == TextureError::TooLarge {
                    extent: size,
                    limit: "max_texture_dimension_2d",
                    max,
                }
            },
            &format!("TooLarge {{ extent: {size:?}, max_texture_dimension_2d: {max} }}"),
        )?;
    }
    let layers = ctx.limits().max_texture_array_layers;
    let size = extent(4, 4, layers + 1);
    let desc = TextureDescriptor {
        size,
        ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 1, 1, 1, 1)
    };
    expect_texture_error(
        ctx,
        &desc,
        |e| {
            *e == TextureError::TooLarge {
                extent: size,
                limit: "max_texture_array_layers",
                max: layers,
            }
        },
        &format!("TooLarge for {} layers (max {layers})", layers + 1),
    )?;
    Ok(Outcome::Pass)
}

fn invalid_mip_count<A: Api>(ctx: &Ctx<A>) -> TestResult {
    // 64x16: the longest side allows log2(64) + 1 = 7 levels.
    for requested in [0, 8, 100] {
        let desc = texture_desc(wgt::TextureFormat::Rgba8Unorm, 64, 16, 1, requested);
        expect_texture_error(
            ctx,
            &desc,
            |e| *e == TextureError::InvalidMipCount { requested, max: 7 },
            &format!("InvalidMipCount {{ requested: {requested}, max: 7 }}"),
        )?;
    }
    // The full chain is accepted.
    let desc = texture_desc(wgt::TextureFormat::Rgba8Unorm, 64, 16, 1, 7);
    // SAFETY: live device; the texture is destroyed at once.
    unsafe {
        let texture = ctx.device.create_texture(&desc)?;
        ctx.device.destroy_texture(texture);
    }
    Ok(Outcome::Pass)
}

fn invalid_sample_count<A: Api>(ctx: &Ctx<A>) -> TestResult {
    // Not a count Vulkan knows: refused by the shared check.
    for samples in [0, 3, 5, 128] {
        let desc = TextureDescriptor {
            sample_count: samples,
            usage: wgt::TextureUsages::RENDER_ATTACHMENT,
            ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 16, 16, 1, 1)
        };
        let expected = TextureError::InvalidSampleCount {
            count: samples,
            reason: "sample counts are 1, 2, 4, 8, 16, 32 or 64",
        };
        expect_texture_error(ctx, &desc, |e| *e == expected, &format!("{expected:?}"))?;
    }
    // A count Vulkan knows that the format does not support (no adapter
    // here multisamples 64 times): the backend's check, worded alike.
    let desc = TextureDescriptor {
        sample_count: 64,
        usage: wgt::TextureUsages::RENDER_ATTACHMENT,
        ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 16, 16, 1, 1)
    };
    let expected = TextureError::InvalidSampleCount {
        count: 64,
        reason: "the format does not support this sample count on this adapter",
    };
    expect_texture_error(ctx, &desc, |e| *e == expected, &format!("{expected:?}"))?;
    Ok(Outcome::Pass)
}

/// Multisampling only on single-mip 2D textures without storage usage:
/// the same error, reason included, on every backend.
fn multisampling_rules<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let base = TextureDescriptor {
        sample_count: 4,
        usage: wgt::TextureUsages::RENDER_ATTACHMENT,
        ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 16, 16, 1, 1)
    };
    let cases = [
        (
            TextureDescriptor {
                usage: wgt::TextureUsages::RENDER_ATTACHMENT | wgt::TextureUsages::STORAGE_BINDING,
                ..base.clone()
            },
            "a multisampled texture cannot have STORAGE_BINDING usage",
        ),
        (
            TextureDescriptor {
                mip_level_count: 2,
                ..base.clone()
            },
            "a multisampled texture has exactly 1 mip level",
        ),
        (
            TextureDescriptor {
                dimension: wgt::TextureDimension::D3,
                usage: wgt::TextureUsages::TEXTURE_BINDING,
                ..base.clone()
            },
            "only 2D textures may be multisampled",
        ),
        (
            TextureDescriptor {
                dimension: wgt::TextureDimension::D1,
                size: wgt::Extent3d {
                    width: 16,
                    height: 1,
                    depth_or_array_layers: 1,
                },
                usage: wgt::TextureUsages::TEXTURE_BINDING,
                ..base.clone()
            },
            "only 2D textures may be multisampled",
        ),
    ];
    for (desc, reason) in cases {
        let expected = TextureError::InvalidSampleCount { count: 4, reason };
        expect_texture_error(ctx, &desc, |e| *e == expected, &format!("{expected:?}"))?;
    }
    Ok(Outcome::Pass)
}

/// A view format that differs in more than sRGB-ness is refused when the
/// texture is made, naming both formats.
fn view_formats_beyond_srgb<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let desc = TextureDescriptor {
        usage: wgt::TextureUsages::TEXTURE_BINDING,
        view_formats: &[
            wgt::TextureFormat::Rgba8UnormSrgb,
            wgt::TextureFormat::Bgra8Unorm,
        ],
        ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 16, 16, 1, 1)
    };
    let expected = TextureError::IncompatibleViewFormat {
        format: wgt::TextureFormat::Rgba8Unorm,
        view_format: wgt::TextureFormat::Bgra8Unorm,
    };
    expect_texture_error(ctx, &desc, |e| *e == expected, &format!("{expected:?}"))?;
    let text = expected.to_string();
    check!(
        text.contains("Bgra8Unorm") && text.contains("Rgba8Unorm"),
        "message: {text}"
    );
    Ok(Outcome::Pass)
}

/// Textures live in device (or external) memory only.
fn textures_in_mappable_memory<A: Api>(ctx: &Ctx<A>) -> TestResult {
    for memory in [Memory::Upload, Memory::Readback] {
        let desc = TextureDescriptor {
            memory,
            usage: wgt::TextureUsages::COPY_DST,
            ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 16, 16, 1, 1)
        };
        expect_texture_error(
            ctx,
            &desc,
            |e| *e == TextureError::UnsupportedMemory(memory),
            &format!("UnsupportedMemory({memory:?})"),
        )?;
    }
    Ok(Outcome::Pass)
}

/// The messages name what was asked and what is allowed.
fn texture_messages_name_the_numbers<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let error = |desc: &TextureDescriptor| -> Result<TextureError, Failure> {
        // SAFETY: live device; a texture that should not exist is destroyed at once.
        match unsafe { ctx.device.create_texture(desc) } {
            Ok(texture) => {
                // SAFETY: never used.
                unsafe { ctx.device.destroy_texture(texture) };
                Err(format!("{desc:?} was created").into())
            }
            Err(e) => Ok(e),
        }
    };
    let mips = error(&texture_desc(wgt::TextureFormat::Rgba8Unorm, 64, 16, 1, 8))?;
    let text = mips.to_string();
    check!(
        text.contains('8') && text.contains("1..=7"),
        "message: {text}"
    );

    let max = ctx.limits().max_texture_dimension_2d;
    let wide = TextureDescriptor {
        size: extent(max + 1, 1, 1),
        ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 1, 1, 1, 1)
    };
    let text = error(&wide)?.to_string();
    check!(
        text.contains(&format!("{}x1x1", max + 1))
            && text.contains(&format!("max_texture_dimension_2d = {max}")),
        "message: {text}"
    );

    let storage_msaa = TextureDescriptor {
        sample_count: 4,
        usage: wgt::TextureUsages::STORAGE_BINDING,
        ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 16, 16, 1, 1)
    };
    let text = error(&storage_msaa)?.to_string();
    check!(
        text.contains("sample count 4") && text.contains("STORAGE_BINDING"),
        "message: {text}"
    );
    Ok(Outcome::Pass)
}
