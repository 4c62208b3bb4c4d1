//! Two-plane 4:2:0 textures (`TEXTURE_FORMAT_NV12`, `TEXTURE_FORMAT_P010`):
//! each plane is filled and read back by copies that name it (the chroma
//! plane is half as wide and high), and a compute shader samples both
//! planes through views in the planes' formats (R8/Rg8, R16/Rg16) and
//! writes what it read. Refused everywhere with a typed error: a view of
//! every plane at once, a plane view in another format, a render-attachment
//! usage, an odd size, more than one mip level (on adapters without the
//! feature, the format itself).

use keel_hal::wgt;
use keel_hal::{
    Api, BindGroupDescriptor, BindGroupEntry, BindingResource, BufferBinding, BufferUses,
    CommandEncoder, ComputePassDescriptor, ComputePipelineDescriptor, Device, Memory,
    TextureCopyBase, TextureDescriptor, TextureError, TextureUses, TextureViewDescriptor,
};

use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::helpers::{
    buffer_barrier, create_buffer, read_mapped, readback_buffer, submit, texture_barrier,
    write_texture, Texels,
};
use crate::pipelines::{entry, needs_shaders, storage, wgsl, Layouts};

conformance_tests!(
    planar_textures_copy_and_sample_each_plane,
    planar_misuse_is_refused
);

const SIZE: u32 = 8;

/// Reads every luma texel and every chroma texel's two channels, as the
/// float bits the views give.
const SAMPLE: &str = "
@group(0) @binding(0) var luma: texture_2d<f32>;
@group(0) @binding(1) var chroma: texture_2d<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(1)
fn main() {
    for (var y = 0u; y < 8u; y++) {
        for (var x = 0u; x < 8u; x++) {
            out[y * 8u + x] = bitcast<u32>(textureLoad(luma, vec2(x, y), 0).r);
        }
    }
    for (var y = 0u; y < 4u; y++) {
        for (var x = 0u; x < 4u; x++) {
            let c = textureLoad(chroma, vec2(x, y), 0);
            out[64u + (y * 4u + x) * 2u] = bitcast<u32>(c.r);
            out[64u + (y * 4u + x) * 2u + 1u] = bitcast<u32>(c.g);
        }
    }
}
";

/// A format under test: its feature (and its name) and bytes per luma sample.
const FORMATS: [(wgt::TextureFormat, wgt::Features, &str, u32); 2] = [
    (
        wgt::TextureFormat::NV12,
        wgt::Features::TEXTURE_FORMAT_NV12,
        "TEXTURE_FORMAT_NV12",
        1,
    ),
    (
        wgt::TextureFormat::P010,
        wgt::Features::TEXTURE_FORMAT_P010,
        "TEXTURE_FORMAT_P010",
        2,
    ),
];

fn planar_desc(format: wgt::TextureFormat) -> TextureDescriptor<'static> {
    TextureDescriptor {
        label: Some("planar"),
        size: wgt::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgt::TextureDimension::D2,
        format,
        usage: wgt::TextureUsages::TEXTURE_BINDING
            | wgt::TextureUsages::COPY_SRC
            | wgt::TextureUsages::COPY_DST,
        memory: Memory::Device,
        view_formats: &[],
    }
}

/// Samples of `bytes` bytes each, every one's 10 high bits only for 16-bit
/// samples (P010 keeps 10 bits a sample).
fn samples(count: usize, bytes: u32, seed: u32) -> Vec<u8> {
    (0..count as u32)
        .flat_map(|i| {
            let v = i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 7;
            if bytes == 1 {
                vec![v as u8]
            } else {
                ((v as u16) & 0xffc0).to_le_bytes().to_vec()
            }
        })
        .collect()
}

/// The unorm values of `bytes`-byte samples, as a view reads them.
fn unorm(data: &[u8], bytes: u32) -> Vec<f32> {
    if bytes == 1 {
        data.iter().map(|&b| f32::from(b) / 255.0).collect()
    } else {
        data.chunks_exact(2)
            .map(|c| f32::from(u16::from_le_bytes([c[0], c[1]])) / 65535.0)
            .collect()
    }
}

fn plane(aspect: wgt::TextureAspect) -> TextureCopyBase {
    TextureCopyBase {
        aspect,
        ..Default::default()
    }
}

fn planar_textures_copy_and_sample_each_plane<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let mut tested = 0;
    for (format, feature, name, bytes) in FORMATS {
        if !ctx.features.contains(feature) {
            ctx.note(format!("{format:?}: the adapter lacks {name}"));
            continue;
        }
        tested += 1;
        // SAFETY: everything made is destroyed below, after the waits.
        unsafe {
            let texture = ctx.device.create_texture(&planar_desc(format))?;
            let result = copy_and_sample(ctx, &texture, format, bytes);
            ctx.device.destroy_texture(texture);
            result?;
        }
        ctx.note(format!("{format:?}: both planes copied and sampled"));
    }
    if tested == 0 {
        return skip("the adapter has neither TEXTURE_FORMAT_NV12 nor TEXTURE_FORMAT_P010");
    }
    Ok(Outcome::Pass)
}

/// Fills both planes, reads them back, and (with shaders) samples them.
///
/// # Safety
/// `texture` is a fresh planar texture of `ctx.device`, 8×8.
unsafe fn copy_and_sample<A: Api>(
    ctx: &Ctx<A>,
    texture: &A::Texture,
    format: wgt::TextureFormat,
    bytes: u32,
) -> Result<(), Failure> {
    let half = SIZE / 2;
    let luma = Texels::from_data(SIZE, SIZE, 1, bytes, samples(64, bytes, 1));
    let chroma = Texels::from_data(half, half, 1, 2 * bytes, samples(32, bytes, 7));
    let (p0, p1) = (wgt::TextureAspect::Plane0, wgt::TextureAspect::Plane1);
    // SAFETY: the texture is idle; the helpers wait for their submissions.
    unsafe {
        write_texture(ctx, texture, TextureUses::UNINITIALIZED, &luma, plane(p0))?;
        write_texture(ctx, texture, TextureUses::COPY_SRC, &chroma, plane(p1))?;
        let got = crate::helpers::read_texture(ctx, texture, plane(p0), (SIZE, SIZE, 1), bytes)?;
        check_eq!(got, luma.data, "{format:?} luma plane read back");
        let got =
            crate::helpers::read_texture(ctx, texture, plane(p1), (half, half, 1), 2 * bytes)?;
        check_eq!(got, chroma.data, "{format:?} chroma plane read back");
    }
    if needs_shaders(ctx).is_some() {
        return Ok(());
    }
    let views = [p0, p1].map(|aspect| {
        let desc = TextureViewDescriptor {
            range: wgt::ImageSubresourceRange {
                aspect,
                ..Default::default()
            },
            ..Default::default()
        };
        // SAFETY: the texture is live.
        unsafe { ctx.device.create_texture_view(texture, &desc) }
    });
    let sampled = match &views {
        [Ok(luma_view), Ok(chroma_view)] => {
            // SAFETY: the views are live; everything else is made and
            // destroyed inside.
            unsafe { sample(ctx, texture, luma_view, chroma_view) }
        }
        [Err(e), _] | [_, Err(e)] => Err(Failure::from(format!("plane view: {e}"))),
    };
    for view in views.into_iter().flatten() {
        // SAFETY: the sampling submission was waited on.
        unsafe { ctx.device.destroy_texture_view(view) };
    }
    let got: Vec<f32> = sampled?
        .chunks_exact(4)
        .map(|c| f32::from_bits(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect();
    let mut want = unorm(&luma.data, bytes);
    want.extend(unorm(&chroma.data, bytes));
    let off = got
        .iter()
        .zip(&want)
        .filter(|(g, w)| (*g - *w).abs() > 1e-6)
        .count();
    check_eq!(
        off,
        0,
        "{format:?} sampled values (first: {:?} vs {:?})",
        got.first(),
        want.first()
    );
    Ok(())
}

/// Runs [`SAMPLE`] over the two plane views and returns what it wrote.
///
/// # Safety
/// The views are of `texture`, in `COPY_SRC`; all live and idle.
unsafe fn sample<A: Api>(
    ctx: &Ctx<A>,
    texture: &A::Texture,
    luma: &A::TextureView,
    chroma: &A::TextureView,
) -> Result<Vec<u8>, Failure> {
    let size = 4 * (64 + 32);
    let texture_entry = |binding| {
        entry(
            binding,
            wgt::ShaderStages::COMPUTE,
            wgt::BindingType::Texture {
                sample_type: wgt::TextureSampleType::Float { filterable: true },
                view_dimension: wgt::TextureViewDimension::D2,
                multisampled: false,
            },
        )
    };
    let entries = [
        texture_entry(0),
        texture_entry(1),
        entry(2, wgt::ShaderStages::COMPUTE, storage(false, false)),
    ];
    // SAFETY: every object is destroyed below, after the wait.
    unsafe {
        let layouts = Layouts::new(ctx, Some(&entries), &[])?;
        let module = wgsl(ctx, SAMPLE);
        let out = create_buffer(
            ctx,
            size,
            wgt::BufferUsages::STORAGE | wgt::BufferUsages::COPY_SRC,
            Memory::Device,
        );
        let readback = readback_buffer(ctx, size);
        let result = (|| -> Result<Vec<u8>, Failure> {
            let (module, out, readback) = (
                module.as_ref().map_err(|e| Failure::from(e.to_string()))?,
                out.as_ref().map_err(|e| Failure::from(e.to_string()))?,
                readback
                    .as_ref()
                    .map_err(|e| Failure::from(e.to_string()))?,
            );
            let layout = layouts.group.as_ref().ok_or("no group layout")?;
            let group = ctx.device.create_bind_group(&BindGroupDescriptor {
                label: Some("planar"),
                layout,
                entries: &[
                    BindGroupEntry {
                        binding: 0,
                        resource: BindingResource::TextureView(luma),
                    },
                    BindGroupEntry {
                        binding: 1,
                        resource: BindingResource::TextureView(chroma),
                    },
                    BindGroupEntry {
                        binding: 2,
                        resource: BindingResource::Buffer(BufferBinding {
                            buffer: out,
                            offset: 0,
                            size: None,
                        }),
                    },
                ],
            })?;
            let pipeline = ctx
                .device
                .create_compute_pipeline(&ComputePipelineDescriptor::new(
                    &layouts.pipeline,
                    module,
                    "main",
                ));
            let ran = match &pipeline {
                Ok(pipeline) => submit(ctx, |enc| {
                    enc.transition_textures(&[texture_barrier(
                        texture,
                        TextureUses::COPY_SRC,
                        TextureUses::RESOURCE,
                    )]);
                    enc.transition_buffers(&[
                        buffer_barrier(out, BufferUses::empty(), BufferUses::STORAGE_READ_WRITE),
                        buffer_barrier(readback, BufferUses::empty(), BufferUses::COPY_DST),
                    ]);
                    enc.begin_compute_pass(&ComputePassDescriptor::default());
                    enc.set_compute_pipeline(pipeline);
                    enc.set_bind_group(&layouts.pipeline, 0, &group, &[]);
                    enc.dispatch([1, 1, 1]);
                    enc.end_compute_pass();
                    enc.transition_buffers(&[buffer_barrier(
                        out,
                        BufferUses::STORAGE_READ_WRITE,
                        BufferUses::COPY_SRC,
                    )]);
                    enc.copy_buffer_to_buffer(
                        out,
                        readback,
                        &[keel_hal::BufferCopy {
                            src_offset: 0,
                            dst_offset: 0,
                            size,
                        }],
                    );
                    enc.transition_buffers(&[buffer_barrier(
                        readback,
                        BufferUses::COPY_DST,
                        BufferUses::MAP_READ,
                    )]);
                }),
                Err(e) => Err(Failure::from(format!("pipeline: {e}"))),
            };
            if let Ok(pipeline) = pipeline {
                ctx.device.destroy_compute_pipeline(pipeline);
            }
            ctx.device.destroy_bind_group(group);
            ran?;
            read_mapped(ctx, readback)
        })();
        for buffer in [out, readback].into_iter().flatten() {
            ctx.device.destroy_buffer(buffer);
        }
        if let Ok(module) = module {
            ctx.device.destroy_shader_module(module);
        }
        layouts.destroy(ctx);
        result
    }
}

/// What planar textures refuse, each with its typed error; on an adapter
/// without the feature the texture itself is `UnsupportedFormat`.
fn planar_misuse_is_refused<A: Api>(ctx: &Ctx<A>) -> TestResult {
    for (format, feature, name, _) in FORMATS {
        // SAFETY: whatever is made is destroyed at once.
        unsafe {
            if !ctx.features.contains(feature) {
                match ctx.device.create_texture(&planar_desc(format)) {
                    Err(TextureError::UnsupportedFormat { .. }) => continue,
                    Err(e) => return Err(format!("{format:?} without {name}: {e}").into()),
                    Ok(t) => {
                        ctx.device.destroy_texture(t);
                        return Err(format!("{format:?} was made without {name}").into());
                    }
                }
            }
            let bad = [
                TextureDescriptor {
                    usage: wgt::TextureUsages::RENDER_ATTACHMENT,
                    ..planar_desc(format)
                },
                TextureDescriptor {
                    size: wgt::Extent3d {
                        width: 7,
                        height: 8,
                        depth_or_array_layers: 1,
                    },
                    ..planar_desc(format)
                },
                TextureDescriptor {
                    mip_level_count: 2,
                    ..planar_desc(format)
                },
            ];
            for desc in bad {
                match ctx.device.create_texture(&desc) {
                    Err(TextureError::InvalidPlanar { .. }) => {}
                    Err(e) => return Err(format!("{format:?}: refused with {e}").into()),
                    Ok(t) => {
                        ctx.device.destroy_texture(t);
                        return Err(format!(
                            "{format:?}: made with usage {:?}, size {:?}, {} mips",
                            desc.usage, desc.size, desc.mip_level_count
                        )
                        .into());
                    }
                }
            }
            let texture = ctx.device.create_texture(&planar_desc(format))?;
            let views = [
                TextureViewDescriptor::default(),
                TextureViewDescriptor {
                    format: Some(wgt::TextureFormat::Rgba8Unorm),
                    range: wgt::ImageSubresourceRange {
                        aspect: wgt::TextureAspect::Plane0,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            ];
            let mut made = None;
            for desc in &views {
                match ctx.device.create_texture_view(&texture, desc) {
                    Err(TextureError::IncompatibleView { .. }) => {}
                    Err(e) => made = Some(format!("view {desc:?} refused with {e}")),
                    Ok(view) => {
                        ctx.device.destroy_texture_view(view);
                        made = Some(format!("view {desc:?} was made"));
                    }
                }
            }
            ctx.device.destroy_texture(texture);
            if let Some(what) = made {
                return Err(format!("{format:?}: {what}").into());
            }
        }
    }
    Ok(Outcome::Pass)
}
