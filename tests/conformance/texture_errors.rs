//! Texture mistakes the hal checks cheaply: each returns its typed error and
//! leaves no object behind.

use keel_hal::wgt;
use keel_hal::{Api, Device, TextureDescriptor, TextureError};

use crate::harness::{Ctx, Failure, Outcome, TestResult};
use crate::helpers::texture_desc;

conformance_tests!(
    zero_extent,
    texture_over_max_dimension,
    invalid_mip_count,
    invalid_sample_count,
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
            |e| *e == TextureError::TooLarge { extent: size, max },
            &format!("TooLarge {{ extent: {size:?}, max: {max} }}"),
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
        |e| matches!(e, TextureError::TooLarge { max, .. } if *max == layers),
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
    for samples in [0, 3, 5, 64] {
        let desc = TextureDescriptor {
            sample_count: samples,
            usage: wgt::TextureUsages::RENDER_ATTACHMENT,
            ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 16, 16, 1, 1)
        };
        expect_texture_error(
            ctx,
            &desc,
            |e| *e == TextureError::InvalidSampleCount(samples),
            &format!("InvalidSampleCount({samples})"),
        )?;
    }
    Ok(Outcome::Pass)
}
