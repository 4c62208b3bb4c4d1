//! Kinds of texture beyond plain colour: depth and stencil formats,
//! multisampling, cube arrays, sRGB views of storage textures, and 1D
//! arrays with mips. Each test skips, with its reason, where the adapter
//! lacks what it needs (`texture_format_capabilities`).

use keel_hal::wgt;
use keel_hal::{
    Adapter, Api, Device, TextureCopyBase, TextureDescriptor, TextureError, TextureUses,
    TextureViewDescriptor,
};

use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::helpers::{base, compare, read_texture, texture_desc, write_texture, Texels};

conformance_tests!(
    depth_and_stencil_textures,
    multisampled_render_attachment,
    cube_array_view,
    srgb_view_of_storage_texture,
    one_d_array_with_mips,
);

use wgt::TextureFormat as F;
use wgt::TextureUsages as U;

/// A view of `range` of a texture in `format` (`None`: the texture's) and `dimension`.
fn view_desc(
    format: Option<wgt::TextureFormat>,
    dimension: Option<wgt::TextureViewDimension>,
    range: wgt::ImageSubresourceRange,
) -> TextureViewDescriptor<'static> {
    TextureViewDescriptor {
        label: Some("conformance view"),
        format,
        dimension,
        range,
    }
}

/// The subresources of `aspect` from layer `base` on, `count` of them (`None`: all).
fn layers(aspect: wgt::TextureAspect, base: u32, count: Option<u32>) -> wgt::ImageSubresourceRange {
    wgt::ImageSubresourceRange {
        aspect,
        base_array_layer: base,
        array_layer_count: count,
        ..Default::default()
    }
}

/// Creates a view and destroys it again, naming `what` on failure.
///
/// # Safety
/// The texture came from `ctx.device` and is live.
unsafe fn view_once<A: Api>(
    ctx: &Ctx<A>,
    texture: &A::Texture,
    desc: &TextureViewDescriptor,
    what: &str,
) -> Result<(), Failure> {
    // SAFETY: forwarded contract; the view is never used.
    unsafe {
        let view = ctx
            .device
            .create_texture_view(texture, desc)
            .map_err(|e| format!("{what}: {e:?}"))?;
        ctx.device.destroy_texture_view(view);
    }
    Ok(())
}

/// Checks that creating a view fails with `IncompatibleView`.
///
/// # Safety
/// The texture came from `ctx.device` and is live.
unsafe fn view_rejected<A: Api>(
    ctx: &Ctx<A>,
    texture: &A::Texture,
    desc: &TextureViewDescriptor,
    what: &str,
) -> Result<(), Failure> {
    // SAFETY: forwarded contract; a view made by mistake is destroyed.
    match unsafe { ctx.device.create_texture_view(texture, desc) } {
        Err(TextureError::IncompatibleView { .. }) => Ok(()),
        Err(e) => Err(format!("{what}: expected IncompatibleView, got {e:?}").into()),
        Ok(view) => {
            // SAFETY: never used.
            unsafe { ctx.device.destroy_texture_view(view) };
            Err(format!("{what}: expected IncompatibleView, got a view").into())
        }
    }
}

/// Creates a texture, runs `body` on it, and destroys it whatever happened.
///
/// # Safety
/// `body` leaves no GPU work pending on the texture (every helper waits).
unsafe fn with_texture<A: Api>(
    ctx: &Ctx<A>,
    desc: &TextureDescriptor,
    body: impl FnOnce(&A::Texture) -> Result<(), Failure>,
) -> Result<(), Failure> {
    // SAFETY: live device.
    let texture = unsafe { ctx.device.create_texture(desc) }
        .map_err(|e| format!("create {:?} texture: {e:?}", desc.format))?;
    let result = body(&texture);
    // SAFETY: idle (contract); its views were destroyed by `body`.
    unsafe { ctx.device.destroy_texture(texture) };
    result
}

const DEPTH_FORMATS: [wgt::TextureFormat; 2] = [F::Depth32Float, F::Depth24PlusStencil8];

/// Per depth/stencil format: a texture viewed per aspect, and each aspect
/// with a copy footprint written and read back through a buffer.
fn depth_and_stencil_textures<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let needed = U::RENDER_ATTACHMENT | U::TEXTURE_BINDING;
    let mut tested = 0;
    for format in DEPTH_FORMATS {
        let caps = ctx.adapter.texture_format_capabilities(format);
        if !caps.allowed_usages.contains(needed) {
            ctx.note(format!(
                "{format:?} skipped: allowed usages {:?} lack {needed:?}",
                caps.allowed_usages
            ));
            continue;
        }
        let usage = caps.allowed_usages & (needed | U::COPY_SRC | U::COPY_DST);
        // SAFETY: ctx is live.
        unsafe { depth_stencil_format(ctx, format, usage) }?;
        tested += 1;
    }
    if tested == 0 {
        return skip("no depth/stencil format is a sampleable render attachment here");
    }
    Ok(Outcome::Pass)
}

/// Texels for one aspect of a depth/stencil format: depth as `f32`s in
/// [0, 1] (exactly representable, so no conversion can change them),
/// stencil as bytes.
fn aspect_texels(aspect: wgt::TextureAspect, texel_size: u32, seed: u64) -> Texels {
    let (width, height) = (8, 8);
    match aspect {
        wgt::TextureAspect::DepthOnly if texel_size == 4 => {
            let data = (0..width * height)
                .flat_map(|i| ((i as f32 + seed as f32) / 128.0).to_le_bytes())
                .collect();
            Texels::from_data(width, height, 1, 4, data)
        }
        _ => Texels::pattern(width, height, 1, texel_size, seed),
    }
}

/// # Safety
/// `ctx` is live.
unsafe fn depth_stencil_format<A: Api>(
    ctx: &Ctx<A>,
    format: wgt::TextureFormat,
    usage: wgt::TextureUsages,
) -> Result<(), Failure> {
    use wgt::TextureAspect as Aspect;
    let desc = TextureDescriptor {
        usage,
        ..texture_desc(format, 8, 8, 1, 1)
    };
    let mut aspects = vec![Aspect::All];
    if format.has_depth_aspect() {
        aspects.push(Aspect::DepthOnly);
    }
    if format.has_stencil_aspect() {
        aspects.push(Aspect::StencilOnly);
    }
    // SAFETY: every helper below waits for its submission.
    unsafe {
        with_texture(ctx, &desc, |texture| {
            for &aspect in &aspects {
                let view = view_desc(None, None, layers(aspect, 0, None));
                view_once(ctx, texture, &view, &format!("{format:?} {aspect:?} view"))?;
            }
            if !usage.contains(U::COPY_SRC | U::COPY_DST) {
                ctx.note(format!("{format:?}: copies skipped, usage {usage:?}"));
                return Ok(());
            }
            let mut state = TextureUses::UNINITIALIZED;
            for (seed, &aspect) in aspects[1..].iter().enumerate() {
                let Some(size) = format.block_copy_size(Some(aspect)) else {
                    ctx.note(format!(
                        "{format:?} {aspect:?}: no copy footprint, not copied"
                    ));
                    continue;
                };
                let texels = aspect_texels(aspect, size, seed as u64 + 3);
                let at = TextureCopyBase {
                    aspect,
                    ..base(0, 0, 0, 0, 0)
                };
                write_texture(ctx, texture, state, &texels, at)?;
                state = TextureUses::COPY_SRC;
                let got = read_texture(ctx, texture, at, (8, 8, 1), size)?;
                compare(
                    &got,
                    &texels.data,
                    &format!("{format:?} {aspect:?} round trip"),
                )?;
            }
            Ok(())
        })
    }
}

/// A 4× multisampled colour target: created and viewed (nothing renders
/// yet); with mips it is refused.
fn multisampled_render_attachment<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let format = F::Rgba8Unorm;
    let caps = ctx.adapter.texture_format_capabilities(format);
    if !caps.flags.sample_count_supported(4) || !caps.allowed_usages.contains(U::RENDER_ATTACHMENT)
    {
        return skip(format!(
            "{format:?} is not a 4× multisampled render attachment here"
        ));
    }
    let desc = TextureDescriptor {
        sample_count: 4,
        usage: U::RENDER_ATTACHMENT,
        ..texture_desc(format, 16, 16, 1, 1)
    };
    // SAFETY: the texture and its view are never submitted.
    unsafe {
        with_texture(ctx, &desc, |texture| {
            let all = layers(wgt::TextureAspect::All, 0, None);
            view_once(ctx, texture, &view_desc(None, None, all), "derived view")?;
            let d2 = view_desc(None, Some(wgt::TextureViewDimension::D2), all);
            view_once(ctx, texture, &d2, "2D view")
        })?;
        let with_mips = TextureDescriptor {
            mip_level_count: 2,
            ..desc
        };
        match ctx.device.create_texture(&with_mips) {
            Err(TextureError::InvalidSampleCount {
                count: 4,
                reason: "a multisampled texture has exactly 1 mip level",
            }) => {}
            Err(e) => return Err(format!("4× with 2 mips: {e:?}").into()),
            Ok(texture) => {
                ctx.device.destroy_texture(texture);
                return Err("4× with 2 mips was accepted".into());
            }
        }
    }
    Ok(Outcome::Pass)
}

/// A square texture of 12 layers seen as an array of two cubes, as its
/// second cube alone, and (refused) as 9 layers.
fn cube_array_view<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::TextureViewDimension as D;
    let desc = TextureDescriptor {
        usage: U::TEXTURE_BINDING | U::COPY_DST,
        ..texture_desc(F::Rgba8Unorm, 16, 16, 12, 1)
    };
    let all = wgt::TextureAspect::All;
    let mut unsupported = None;
    // SAFETY: the texture and its views are never submitted.
    unsafe {
        with_texture(ctx, &desc, |texture| {
            let array = view_desc(None, Some(D::CubeArray), layers(all, 0, None));
            match ctx.device.create_texture_view(texture, &array) {
                Ok(view) => ctx.device.destroy_texture_view(view),
                Err(TextureError::IncompatibleView { allowed, .. })
                    if allowed.contains("not supported") =>
                {
                    unsupported = Some(allowed);
                    return Ok(());
                }
                Err(e) => return Err(format!("cube array of 12 layers: {e:?}").into()),
            }
            let second = view_desc(None, Some(D::CubeArray), layers(all, 6, Some(6)));
            view_once(ctx, texture, &second, "cube array of layers 6..12")?;
            let cube = view_desc(None, Some(D::Cube), layers(all, 6, Some(6)));
            view_once(ctx, texture, &cube, "cube of layers 6..12")?;
            let nine = view_desc(None, Some(D::CubeArray), layers(all, 0, Some(9)));
            view_rejected(ctx, texture, &nine, "cube array of 9 layers")
        })?;
    }
    match unsupported {
        Some(why) => skip(format!("cube arrays: {why}")),
        None => Ok(Outcome::Pass),
    }
}

/// A linear storage texture viewed as sRGB (sRGB formats have no storage
/// use: the view must drop it), and view formats beyond sRGB-ness refused.
fn srgb_view_of_storage_texture<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let usage = U::STORAGE_BINDING | U::TEXTURE_BINDING;
    let linear = ctx.adapter.texture_format_capabilities(F::Rgba8Unorm);
    let srgb = ctx.adapter.texture_format_capabilities(F::Rgba8UnormSrgb);
    if !linear.allowed_usages.contains(usage) {
        return skip(format!(
            "Rgba8Unorm allows {:?}, not {usage:?}",
            linear.allowed_usages
        ));
    }
    if !srgb.allowed_usages.contains(U::TEXTURE_BINDING) {
        return skip("Rgba8UnormSrgb cannot be sampled here");
    }
    const VIEW_FORMATS: &[wgt::TextureFormat] = &[F::Rgba8UnormSrgb];
    let desc = TextureDescriptor {
        usage,
        view_formats: VIEW_FORMATS,
        ..texture_desc(F::Rgba8Unorm, 16, 16, 1, 1)
    };
    let all = layers(wgt::TextureAspect::All, 0, None);
    // SAFETY: the textures and views are never submitted.
    unsafe {
        with_texture(ctx, &desc, |texture| {
            let srgb_view = view_desc(Some(F::Rgba8UnormSrgb), None, all);
            view_once(ctx, texture, &srgb_view, "sRGB view")?;
            let linear_view = view_desc(Some(F::Rgba8Unorm), None, all);
            view_once(ctx, texture, &linear_view, "linear view")?;
            let other = view_desc(Some(F::Rgba8Snorm), None, all);
            view_rejected(ctx, texture, &other, "Rgba8Snorm view, not a view format")
        })?;
        let beyond_srgb = TextureDescriptor {
            view_formats: &[F::Rgba8Snorm],
            ..desc
        };
        match ctx.device.create_texture(&beyond_srgb) {
            Err(TextureError::IncompatibleViewFormat {
                format: F::Rgba8Unorm,
                view_format: F::Rgba8Snorm,
            }) => {}
            Err(e) => return Err(format!("view format Rgba8Snorm: {e:?}").into()),
            Ok(texture) => {
                ctx.device.destroy_texture(texture);
                return Err("view format Rgba8Snorm of Rgba8Unorm was accepted".into());
            }
        }
    }
    Ok(Outcome::Pass)
}

/// A 1D texture of 4 layers and its full chain of 7 mips: viewed per
/// layer and mip, and one row written to layer 2, mip 3 and read back.
fn one_d_array_with_mips<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let desc = TextureDescriptor {
        dimension: wgt::TextureDimension::D1,
        usage: U::TEXTURE_BINDING | U::COPY_SRC | U::COPY_DST,
        ..texture_desc(F::Rgba8Unorm, 64, 1, 4, 7)
    };
    // SAFETY: every helper below waits for its submission.
    unsafe {
        with_texture(ctx, &desc, |texture| {
            let one = wgt::ImageSubresourceRange {
                base_mip_level: 3,
                mip_level_count: Some(1),
                base_array_layer: 2,
                array_layer_count: Some(1),
                ..Default::default()
            };
            let d1 = view_desc(None, Some(wgt::TextureViewDimension::D1), one);
            view_once(ctx, texture, &d1, "1D view of layer 2, mip 3")?;
            let row = Texels::pattern(64 >> 3, 1, 1, 4, 17);
            let at = base(3, 2, 0, 0, 0);
            write_texture(ctx, texture, TextureUses::UNINITIALIZED, &row, at)?;
            let got = read_texture(ctx, texture, at, (8, 1, 1), 4)?;
            compare(&got, &row.data, "1D layer 2, mip 3")
        })?;
        let too_many = TextureDescriptor {
            mip_level_count: 8,
            ..desc
        };
        match ctx.device.create_texture(&too_many) {
            Err(TextureError::InvalidMipCount {
                requested: 8,
                max: 7,
            }) => {}
            Err(e) => return Err(format!("1D with 8 mips: {e:?}").into()),
            Ok(texture) => {
                ctx.device.destroy_texture(texture);
                return Err("a 1D texture of width 64 with 8 mips was accepted".into());
            }
        }
    }
    Ok(Outcome::Pass)
}
