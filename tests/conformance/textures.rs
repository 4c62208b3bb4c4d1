//! Textures: buffer → texture → buffer round trips per format, mip levels,
//! array layers, 3D slices, texture-to-texture copies and sub-rectangles.

use keel_hal::wgt;
use keel_hal::{
    Adapter, Api, BufferUses, CommandEncoder, Device, TextureCopy, TextureDescriptor, TextureUses,
};

use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::helpers::{
    base, buffer_barrier, compare, pattern, read_mapped, read_texture, readback_buffer, submit,
    texture_barrier, texture_desc, upload_buffer, write_texture, Texels,
};

conformance_tests!(
    round_trip_formats,
    mip_levels_are_independent,
    array_layers,
    depth_slices_of_3d_texture,
    texture_to_texture_with_origins,
    sub_rectangle_copy_keeps_the_rest,
    clear_texture_zeroes_its_range,
    clear_texture_refusals,
);

const FORMATS: [wgt::TextureFormat; 6] = [
    wgt::TextureFormat::Rgba8Unorm,
    wgt::TextureFormat::R8Unorm,
    wgt::TextureFormat::Rg16Float,
    wgt::TextureFormat::Rgba32Float,
    wgt::TextureFormat::R32Uint,
    wgt::TextureFormat::Bgra8Unorm,
];

/// A pattern block for `format`; float formats get finite values only, so
/// no NaN payload question can blur a byte comparison.
fn format_texels(format: wgt::TextureFormat, width: u32, height: u32, seed: u64) -> Texels {
    let size = format.block_copy_size(None).unwrap_or(4);
    let mut texels = Texels::pattern(width, height, 1, size, seed);
    match format {
        wgt::TextureFormat::Rg16Float => {
            for half in texels.data.chunks_exact_mut(2) {
                let v = u16::from_le_bytes([half[0], half[1]]) % 0x7C00;
                half.copy_from_slice(&v.to_le_bytes());
            }
        }
        wgt::TextureFormat::Rgba32Float => {
            for float in texels.data.chunks_exact_mut(4) {
                let v = u32::from_le_bytes([float[0], float[1], float[2], float[3]]) % 0x7F80_0000;
                float.copy_from_slice(&v.to_le_bytes());
            }
        }
        _ => {}
    }
    texels
}

fn round_trip_formats<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let copy = wgt::TextureUsages::COPY_SRC | wgt::TextureUsages::COPY_DST;
    let mut tested = 0;
    for (seed, format) in FORMATS.into_iter().enumerate() {
        let caps = ctx.adapter.texture_format_capabilities(format);
        if !caps.allowed_usages.contains(copy) {
            ctx.note(format!(
                "{format:?} skipped: allowed usages {:?} lack COPY_SRC | COPY_DST",
                caps.allowed_usages
            ));
            continue;
        }
        // SAFETY: ctx is live.
        unsafe { round_trip_format(ctx, format, seed as u64) }?;
        tested += 1;
    }
    if tested == 0 {
        return skip("no format of the list can be copied");
    }
    Ok(Outcome::Pass)
}

/// Stages a 37×19 block at offset 512 of an upload buffer, copies it into a
/// texture and back out to offset 256 of a readback buffer, in one submission.
///
/// # Safety
/// `ctx` is live.
unsafe fn round_trip_format<A: Api>(
    ctx: &Ctx<A>,
    format: wgt::TextureFormat,
    seed: u64,
) -> Result<(), Failure> {
    const IN: u64 = 512;
    const OUT: u64 = 256;
    let texels = format_texels(format, 37, 19, seed);
    let mut staged = pattern(IN as usize, 99);
    staged.extend(texels.staged());
    // SAFETY: objects come from ctx.device and are destroyed after the wait.
    unsafe {
        let upload = upload_buffer(ctx, &staged)?;
        let readback = readback_buffer(ctx, OUT + texels.staging_size())?;
        let texture = ctx
            .device
            .create_texture(&texture_desc(format, 37, 19, 1, 1));
        let texture = match texture {
            Ok(t) => t,
            Err(e) => {
                ctx.device.destroy_buffer(upload);
                ctx.device.destroy_buffer(readback);
                return Err(format!("{format:?}: {e}").into());
            }
        };
        let got = submit(ctx, |enc| {
            enc.transition_buffers(&[
                buffer_barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
            ]);
            enc.transition_textures(&[texture_barrier(
                &texture,
                TextureUses::UNINITIALIZED,
                TextureUses::COPY_DST,
            )]);
            enc.copy_buffer_to_texture(
                &upload,
                &texture,
                &[texels.region(IN, base(0, 0, 0, 0, 0))],
            );
            enc.transition_textures(&[texture_barrier(
                &texture,
                TextureUses::COPY_DST,
                TextureUses::COPY_SRC,
            )]);
            enc.copy_texture_to_buffer(
                &texture,
                TextureUses::COPY_SRC,
                &readback,
                &[texels.region(OUT, base(0, 0, 0, 0, 0))],
            );
            enc.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::COPY_DST,
                BufferUses::MAP_READ,
            )]);
        })
        .and_then(|()| read_mapped(ctx, &readback));
        ctx.device.destroy_texture(texture);
        ctx.device.destroy_buffer(upload);
        ctx.device.destroy_buffer(readback);

        let got = got?;
        compare(
            &got[..OUT as usize],
            &vec![crate::helpers::SENTINEL; OUT as usize],
            &format!("{format:?}: bytes before the copy's offset"),
        )?;
        compare(
            &texels.unstage(&got[OUT as usize..]),
            &texels.data,
            &format!("{format:?} texels"),
        )
    }
}

fn mip_levels_are_independent<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let format = wgt::TextureFormat::Rgba8Unorm;
    let top = Texels::pattern(64, 32, 1, 4, 1);
    let mip2 = Texels::pattern(16, 8, 1, 4, 2);
    // SAFETY: objects come from ctx.device and are destroyed after the waits.
    unsafe {
        let texture = ctx
            .device
            .create_texture(&texture_desc(format, 64, 32, 1, 4))?;
        let result = (|| -> Result<(), Failure> {
            write_texture(
                ctx,
                &texture,
                TextureUses::UNINITIALIZED,
                &top,
                base(0, 0, 0, 0, 0),
            )?;
            write_texture(
                ctx,
                &texture,
                TextureUses::COPY_SRC,
                &mip2,
                base(2, 0, 0, 0, 0),
            )?;
            let got2 = read_texture(ctx, &texture, base(2, 0, 0, 0, 0), (16, 8, 1), 4)?;
            compare(&got2, &mip2.data, "mip 2 (16x8)")?;
            let got0 = read_texture(ctx, &texture, base(0, 0, 0, 0, 0), (64, 32, 1), 4)?;
            compare(&got0, &top.data, "mip 0 after writing mip 2")?;
            // A block inside mip 2, read at an origin.
            let got_inner = read_texture(ctx, &texture, base(2, 0, 5, 3, 0), (7, 4, 1), 4)?;
            compare(
                &got_inner,
                &mip2.sub((5, 3, 0), (7, 4, 1)).data,
                "7x4 block at (5, 3) of mip 2",
            )
        })();
        ctx.device.destroy_texture(texture);
        result?;
    }
    Ok(Outcome::Pass)
}

fn array_layers<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let format = wgt::TextureFormat::Rgba8Unorm;
    let all = Texels::pattern(16, 16, 4, 4, 5);
    let layer2 = Texels::pattern(16, 16, 1, 4, 6);
    let mut expected = all.clone();
    expected.paste(&layer2, (0, 0, 2));
    // SAFETY: objects come from ctx.device and are destroyed after the waits.
    unsafe {
        let texture = ctx
            .device
            .create_texture(&texture_desc(format, 16, 16, 4, 1))?;
        let result = (|| -> Result<(), Failure> {
            write_texture(
                ctx,
                &texture,
                TextureUses::UNINITIALIZED,
                &all,
                base(0, 0, 0, 0, 0),
            )?;
            write_texture(
                ctx,
                &texture,
                TextureUses::COPY_SRC,
                &layer2,
                base(0, 2, 0, 0, 0),
            )?;
            for layer in 0..4 {
                let got = read_texture(ctx, &texture, base(0, layer, 0, 0, 0), (16, 16, 1), 4)?;
                let want = expected.sub((0, 0, layer), (16, 16, 1));
                compare(&got, &want.data, &format!("layer {layer} of 4"))?;
            }
            let got = read_texture(ctx, &texture, base(0, 0, 0, 0, 0), (16, 16, 4), 4)?;
            compare(&got, &expected.data, "all 4 layers in one copy")
        })();
        ctx.device.destroy_texture(texture);
        result?;
    }
    Ok(Outcome::Pass)
}

fn depth_slices_of_3d_texture<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let all = Texels::pattern(8, 8, 4, 4, 7);
    let slice2 = Texels::pattern(8, 8, 1, 4, 8);
    let mut expected = all.clone();
    expected.paste(&slice2, (0, 0, 2));
    let desc = TextureDescriptor {
        dimension: wgt::TextureDimension::D3,
        ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 8, 8, 4, 1)
    };
    // SAFETY: objects come from ctx.device and are destroyed after the waits.
    unsafe {
        let texture = ctx.device.create_texture(&desc)?;
        let result = (|| -> Result<(), Failure> {
            write_texture(
                ctx,
                &texture,
                TextureUses::UNINITIALIZED,
                &all,
                base(0, 0, 0, 0, 0),
            )?;
            write_texture(
                ctx,
                &texture,
                TextureUses::COPY_SRC,
                &slice2,
                base(0, 0, 0, 0, 2),
            )?;
            for z in 0..4 {
                let got = read_texture(ctx, &texture, base(0, 0, 0, 0, z), (8, 8, 1), 4)?;
                compare(
                    &got,
                    &expected.sub((0, 0, z), (8, 8, 1)).data,
                    &format!("slice {z} of 4"),
                )?;
            }
            let got = read_texture(ctx, &texture, base(0, 0, 2, 1, 1), (5, 6, 3), 4)?;
            compare(
                &got,
                &expected.sub((2, 1, 1), (5, 6, 3)).data,
                "5x6x3 box at (2, 1, 1)",
            )
        })();
        ctx.device.destroy_texture(texture);
        result?;
    }
    Ok(Outcome::Pass)
}

fn texture_to_texture_with_origins<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let format = wgt::TextureFormat::Rgba8Unorm;
    let src_texels = Texels::pattern(32, 32, 1, 4, 9);
    let dst_texels = Texels::pattern(32, 32, 1, 4, 10);
    let regions = [
        TextureCopy {
            src_base: base(0, 0, 3, 5, 0),
            dst_base: base(0, 0, 17, 20, 0),
            size: wgt::Extent3d {
                width: 10,
                height: 6,
                depth_or_array_layers: 1,
            },
        },
        TextureCopy {
            src_base: base(0, 0, 28, 0, 0),
            dst_base: base(0, 0, 0, 0, 0),
            size: wgt::Extent3d {
                width: 4,
                height: 4,
                depth_or_array_layers: 1,
            },
        },
    ];
    let mut expected = dst_texels.clone();
    expected.paste(&src_texels.sub((3, 5, 0), (10, 6, 1)), (17, 20, 0));
    expected.paste(&src_texels.sub((28, 0, 0), (4, 4, 1)), (0, 0, 0));
    // SAFETY: objects come from ctx.device and are destroyed after the waits.
    unsafe {
        let src = ctx
            .device
            .create_texture(&texture_desc(format, 32, 32, 1, 1))?;
        let dst = match ctx
            .device
            .create_texture(&texture_desc(format, 32, 32, 1, 1))
        {
            Ok(dst) => dst,
            Err(e) => {
                ctx.device.destroy_texture(src);
                return Err(e.into());
            }
        };
        let result = (|| -> Result<(), Failure> {
            write_texture(
                ctx,
                &src,
                TextureUses::UNINITIALIZED,
                &src_texels,
                base(0, 0, 0, 0, 0),
            )?;
            write_texture(
                ctx,
                &dst,
                TextureUses::UNINITIALIZED,
                &dst_texels,
                base(0, 0, 0, 0, 0),
            )?;
            submit(ctx, |enc| {
                enc.transition_textures(&[texture_barrier(
                    &dst,
                    TextureUses::COPY_SRC,
                    TextureUses::COPY_DST,
                )]);
                enc.copy_texture_to_texture(&src, TextureUses::COPY_SRC, &dst, &regions);
                enc.transition_textures(&[texture_barrier(
                    &dst,
                    TextureUses::COPY_DST,
                    TextureUses::COPY_SRC,
                )]);
            })?;
            let got = read_texture(ctx, &dst, base(0, 0, 0, 0, 0), (32, 32, 1), 4)?;
            compare(
                &got,
                &expected.data,
                "destination after two texture-to-texture regions",
            )?;
            let got = read_texture(ctx, &src, base(0, 0, 0, 0, 0), (32, 32, 1), 4)?;
            compare(&got, &src_texels.data, "source after being copied from")
        })();
        ctx.device.destroy_texture(src);
        ctx.device.destroy_texture(dst);
        result?;
    }
    Ok(Outcome::Pass)
}

fn sub_rectangle_copy_keeps_the_rest<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let format = wgt::TextureFormat::Rgba8Unorm;
    let full = Texels::pattern(32, 24, 1, 4, 12);
    let patch = Texels::pattern(8, 5, 1, 4, 13);
    let mut expected = full.clone();
    expected.paste(&patch, (9, 7, 0));
    // SAFETY: objects come from ctx.device and are destroyed after the waits.
    unsafe {
        let texture = ctx
            .device
            .create_texture(&texture_desc(format, 32, 24, 1, 1))?;
        let result = (|| -> Result<(), Failure> {
            write_texture(
                ctx,
                &texture,
                TextureUses::UNINITIALIZED,
                &full,
                base(0, 0, 0, 0, 0),
            )?;
            write_texture(
                ctx,
                &texture,
                TextureUses::COPY_SRC,
                &patch,
                base(0, 0, 9, 7, 0),
            )?;
            let got = read_texture(ctx, &texture, base(0, 0, 0, 0, 0), (32, 24, 1), 4)?;
            compare(
                &got,
                &expected.data,
                "32x24 texture after an 8x5 copy at (9, 7)",
            )
        })();
        ctx.device.destroy_texture(texture);
        result?;
    }
    Ok(Outcome::Pass)
}

/// `clear_texture` of mip 1, layers 1..3 of a patterned 16×16×4 texture
/// with 2 mips zeroes exactly those subresources; then a clear of the
/// whole texture zeroes the rest; a Depth32Float clear reads back 0.0.
fn clear_texture_zeroes_its_range<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if !ctx.features.contains(wgt::Features::CLEAR_TEXTURE) {
        return skip("the adapter lacks CLEAR_TEXTURE");
    }
    let format = wgt::TextureFormat::Rgba8Unorm;
    let mip0 = Texels::pattern(16, 16, 4, 4, 21);
    let mip1 = Texels::pattern(8, 8, 4, 4, 22);
    let some = wgt::ImageSubresourceRange {
        base_mip_level: 1,
        mip_level_count: Some(1),
        base_array_layer: 1,
        array_layer_count: Some(2),
        ..Default::default()
    };
    // SAFETY: objects come from ctx.device and are destroyed after the waits.
    unsafe {
        let texture = ctx
            .device
            .create_texture(&texture_desc(format, 16, 16, 4, 2))?;
        let result = (|| -> Result<(), Failure> {
            write_texture(
                ctx,
                &texture,
                TextureUses::UNINITIALIZED,
                &mip0,
                base(0, 0, 0, 0, 0),
            )?;
            write_texture(
                ctx,
                &texture,
                TextureUses::COPY_SRC,
                &mip1,
                base(1, 0, 0, 0, 0),
            )?;
            clear_from_copy_src(ctx, &texture, some)?;
            let mut want1 = mip1.clone();
            want1.paste(
                &Texels::from_data(8, 8, 2, 4, vec![0; 8 * 8 * 2 * 4]),
                (0, 0, 1),
            );
            let got0 = read_texture(ctx, &texture, base(0, 0, 0, 0, 0), (16, 16, 4), 4)?;
            compare(&got0, &mip0.data, "mip 0, outside the cleared range")?;
            let got1 = read_texture(ctx, &texture, base(1, 0, 0, 0, 0), (8, 8, 4), 4)?;
            compare(&got1, &want1.data, "mip 1 with layers 1 and 2 cleared")?;
            clear_from_copy_src(ctx, &texture, wgt::ImageSubresourceRange::default())?;
            let got0 = read_texture(ctx, &texture, base(0, 0, 0, 0, 0), (16, 16, 4), 4)?;
            compare(
                &got0,
                &vec![0; got0.len()],
                "mip 0 after clearing everything",
            )?;
            let got1 = read_texture(ctx, &texture, base(1, 0, 0, 0, 0), (8, 8, 4), 4)?;
            compare(
                &got1,
                &vec![0; got1.len()],
                "mip 1 after clearing everything",
            )
        })();
        ctx.device.destroy_texture(texture);
        result?;

        // Depth: patterned, cleared, read back as 0.0.
        let depth = wgt::TextureFormat::Depth32Float;
        let texture = ctx
            .device
            .create_texture(&texture_desc(depth, 8, 8, 1, 1))?;
        let ones = Texels::from_data(8, 8, 1, 4, 1.0f32.to_le_bytes().repeat(64));
        let result = (|| -> Result<(), Failure> {
            let mut depth_base = base(0, 0, 0, 0, 0);
            depth_base.aspect = wgt::TextureAspect::DepthOnly;
            write_texture(ctx, &texture, TextureUses::UNINITIALIZED, &ones, depth_base)?;
            clear_from_copy_src(ctx, &texture, wgt::ImageSubresourceRange::default())?;
            let got = read_texture(ctx, &texture, depth_base, (8, 8, 1), 4)?;
            compare(&got, &vec![0; 256], "Depth32Float after clear_texture")
        })();
        ctx.device.destroy_texture(texture);
        result?;
    }
    Ok(Outcome::Pass)
}

/// Submits a `clear_texture` of `range`, moving the whole texture
/// `COPY_SRC → COPY_DST` before and back after; its error as the test's.
///
/// # Safety
/// The texture came from `ctx.device`, is idle and in `COPY_SRC`.
unsafe fn clear_from_copy_src<A: Api>(
    ctx: &Ctx<A>,
    texture: &A::Texture,
    range: wgt::ImageSubresourceRange,
) -> Result<(), Failure> {
    let mut done = Ok(());
    // SAFETY: forwarded contract.
    unsafe {
        submit(ctx, |enc| {
            enc.transition_textures(&[texture_barrier(
                texture,
                TextureUses::COPY_SRC,
                TextureUses::COPY_DST,
            )]);
            done = enc.clear_texture(texture, &range);
            enc.transition_textures(&[texture_barrier(
                texture,
                TextureUses::COPY_DST,
                TextureUses::COPY_SRC,
            )]);
        })
    }?;
    Ok(done?)
}

/// The shared refusals of `clear_texture`, each recording nothing.
fn clear_texture_refusals<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if !ctx.features.contains(wgt::Features::CLEAR_TEXTURE) {
        return skip("the adapter lacks CLEAR_TEXTURE");
    }
    let format = wgt::TextureFormat::Rgba8Unorm;
    // SAFETY: objects come from ctx.device and are destroyed after the wait.
    unsafe {
        let mut desc = texture_desc(format, 8, 8, 2, 1);
        desc.usage = wgt::TextureUsages::TEXTURE_BINDING;
        let sampled = ctx.device.create_texture(&desc)?;
        let texture = ctx
            .device
            .create_texture(&texture_desc(format, 8, 8, 2, 1))?;
        let mut got = Vec::new();
        let result = submit(ctx, |enc| {
            let past = wgt::ImageSubresourceRange {
                base_array_layer: 2,
                ..Default::default()
            };
            let depth = wgt::ImageSubresourceRange {
                aspect: wgt::TextureAspect::DepthOnly,
                ..Default::default()
            };
            got.push(enc.clear_texture(&sampled, &wgt::ImageSubresourceRange::default()));
            got.push(enc.clear_texture(&texture, &past));
            got.push(enc.clear_texture(&texture, &depth));
        });
        ctx.device.destroy_texture(sampled);
        ctx.device.destroy_texture(texture);
        result?;
        let expected = [
            Err(keel_hal::TextureError::MissingUsage {
                needed: wgt::TextureUsages::COPY_DST,
                usage: wgt::TextureUsages::TEXTURE_BINDING,
            }),
            Err(keel_hal::TextureError::InvalidRange {
                what: "array layers",
                base: 2,
                count: None,
                total: 2,
            }),
            Err(keel_hal::TextureError::InvalidAspect {
                aspect: wgt::TextureAspect::DepthOnly,
                format,
            }),
        ];
        check_eq!(got.as_slice(), &expected[..], "clear_texture refusals");
    }
    Ok(Outcome::Pass)
}
