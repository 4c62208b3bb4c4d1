//! Texture views: every shape the hal promises, and ranges outside the texture.

use keel_hal::wgt;
use keel_hal::{Api, Device, TextureDescriptor, TextureError, TextureViewDescriptor};

use crate::harness::{Ctx, Outcome, TestResult};
use crate::helpers::texture_desc;

conformance_tests!(views_of_every_shape, view_outside_the_texture);

/// A 16×16 texture with 6 layers and 3 mips, sampleable.
fn cube_capable() -> TextureDescriptor<'static> {
    TextureDescriptor {
        usage: wgt::TextureUsages::TEXTURE_BINDING | wgt::TextureUsages::COPY_DST,
        ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 16, 16, 6, 3)
    }
}

fn view(
    dimension: Option<wgt::TextureViewDimension>,
    base_mip_level: u32,
    mip_level_count: Option<u32>,
    base_array_layer: u32,
    array_layer_count: Option<u32>,
) -> TextureViewDescriptor<'static> {
    TextureViewDescriptor {
        label: Some("conformance view"),
        format: None,
        dimension,
        range: wgt::ImageSubresourceRange {
            aspect: wgt::TextureAspect::All,
            base_mip_level,
            mip_level_count,
            base_array_layer,
            array_layer_count,
        },
    }
}

fn views_of_every_shape<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::TextureViewDimension as D;
    let descs = [
        ("2D of layer 0", view(Some(D::D2), 0, Some(1), 0, Some(1))),
        (
            "2D array of all layers",
            view(Some(D::D2Array), 0, None, 0, None),
        ),
        ("cube", view(Some(D::Cube), 0, None, 0, Some(6))),
        (
            "mips 1..3 of layers 2..4",
            view(Some(D::D2Array), 1, Some(2), 2, Some(2)),
        ),
        (
            "2D of layer 5, mip 2",
            view(Some(D::D2), 2, Some(1), 5, Some(1)),
        ),
        ("derived dimension", view(None, 0, None, 0, None)),
        (
            "explicit format",
            TextureViewDescriptor {
                format: Some(wgt::TextureFormat::Rgba8Unorm),
                ..view(Some(D::D2Array), 0, None, 0, None)
            },
        ),
    ];
    // SAFETY: objects come from ctx.device, are never submitted, and are destroyed.
    unsafe {
        let texture = ctx.device.create_texture(&cube_capable())?;
        let before = ctx.device.live_counts();
        let mut views = Vec::new();
        let mut failure = None;
        for (what, desc) in &descs {
            match ctx.device.create_texture_view(&texture, desc) {
                Ok(v) => views.push(v),
                Err(e) => {
                    failure = Some(format!("{what}: {e:?}"));
                    break;
                }
            }
        }
        let during = ctx.device.live_counts();
        let made = views.len() as isize;
        for v in views {
            ctx.device.destroy_texture_view(v);
        }
        let after = ctx.device.live_counts();
        ctx.device.destroy_texture(texture);
        if let Some(failure) = failure {
            return Err(failure.into());
        }
        check_eq!(
            during.texture_views - before.texture_views,
            made,
            "texture_views counted while {made} views live"
        );
        check_eq!(after, before, "live objects after destroying the views");
    }
    Ok(Outcome::Pass)
}

fn view_outside_the_texture<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::TextureViewDimension as D;
    let descs = [
        ("base mip 3 of 3", view(Some(D::D2Array), 3, None, 0, None)),
        (
            "mips 1..5 of 3",
            view(Some(D::D2Array), 1, Some(4), 0, None),
        ),
        (
            "base layer 6 of 6",
            view(Some(D::D2Array), 0, None, 6, None),
        ),
        (
            "layers 2..7 of 6",
            view(Some(D::D2Array), 0, None, 2, Some(5)),
        ),
        ("zero mips", view(Some(D::D2Array), 0, Some(0), 0, None)),
        ("zero layers", view(Some(D::D2Array), 0, None, 0, Some(0))),
    ];
    // SAFETY: objects come from ctx.device, are never submitted, and are destroyed.
    unsafe {
        let texture = ctx.device.create_texture(&cube_capable())?;
        let before = ctx.device.live_counts();
        let mut failure = None;
        for (what, desc) in &descs {
            match ctx.device.create_texture_view(&texture, desc) {
                Ok(v) => {
                    ctx.device.destroy_texture_view(v);
                    failure = Some(format!("{what}: view created; expected InvalidRange"));
                }
                Err(TextureError::InvalidRange { .. }) => {}
                Err(e) => failure = Some(format!("{what}: expected InvalidRange, got {e:?}")),
            }
            if failure.is_some() {
                break;
            }
        }
        let after = ctx.device.live_counts();
        ctx.device.destroy_texture(texture);
        if let Some(failure) = failure {
            return Err(failure.into());
        }
        check_eq!(after, before, "live objects after the failed views");
    }
    Ok(Outcome::Pass)
}
