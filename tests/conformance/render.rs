//! Render passes: clears (everywhere, noop included), and with shader
//! execution a triangle of three vertex colours on a 64×64 `Rgba8Unorm`
//! target: inside pixels interpolate the colours, outside pixels keep the
//! clear colour; indexed and indirect draws give the same image; a 4×
//! multisampled target resolves to it; a depth test keeps the nearer of two
//! triangles.

use keel_hal::wgt;
use keel_hal::{
    Api, Attachment, AttachmentOps, BufferBinding, BufferUses, ColorAttachment, CommandEncoder,
    DepthStencilAttachment, Device, Memory, ProgrammableStage, RenderPassDescriptor,
    RenderPipelineDescriptor, TextureCopyBase, TextureDescriptor, TextureUses,
    TextureViewDescriptor, VertexBufferLayout,
};

use crate::harness::{Ctx, Failure, Outcome, TestResult};
use crate::helpers::{
    buffer_barrier, create_buffer, read_texture, submit, texture_barrier, write_mapped,
};
use crate::pipelines::{floats_to_bytes, needs_shaders, wgsl, words_to_bytes, Layouts};

conformance_tests!(
    render_pass_clears_attachments,
    triangle_renders,
    indexed_and_indirect_draws_match,
    msaa_resolve_matches,
    depth_test_keeps_the_nearer_triangle,
);

const SIZE: u32 = 64;
const FORMAT: wgt::TextureFormat = wgt::TextureFormat::Rgba8Unorm;
const DEPTH: wgt::TextureFormat = wgt::TextureFormat::Depth32Float;
const CLEAR: wgt::Color = wgt::Color {
    r: 0.25,
    g: 0.5,
    b: 0.75,
    a: 1.0,
};
/// `CLEAR` in `Rgba8Unorm` bytes.
const CLEAR_BYTES: [u8; 4] = [64, 128, 191, 255];

const SHADER: &str = "
struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec3<f32>,
}

@vertex
fn vs(@location(0) position: vec3<f32>, @location(1) color: vec3<f32>) -> Out {
    var out: Out;
    out.position = vec4<f32>(position, 1.0);
    out.color = color;
    return out;
}

@fragment
fn fs(in: Out) -> @location(0) vec4<f32> {
    return vec4<f32>(in.color, 1.0);
}
";

/// A triangle: clip-space positions (x, y, z) and colours.
struct Tri {
    position: [[f32; 3]; 3],
    color: [[f32; 3]; 3],
}

/// The three-colour triangle, at depth 0.5.
const TRIANGLE: Tri = Tri {
    position: [[-0.5, -0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.5, 0.5]],
    color: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
};
/// A small red triangle at depth 0.2.
const NEAR: Tri = Tri {
    position: [[-0.3, -0.3, 0.2], [0.3, -0.3, 0.2], [0.0, 0.3, 0.2]],
    color: [[1.0, 0.0, 0.0]; 3],
};
/// A large green triangle at depth 0.8.
const FAR: Tri = Tri {
    position: [[-0.9, -0.9, 0.8], [0.9, -0.9, 0.8], [0.0, 0.9, 0.8]],
    color: [[0.0, 1.0, 0.0]; 3],
};

/// Where the geometry buffer holds what.
const INDICES_AT: u64 = 256;
const INDIRECT_AT: u64 = 512;
const INDEXED_INDIRECT_AT: u64 = 528;
/// A count of 1 (the count draws' `u32`).
const COUNT_AT: u64 = 600;
/// Indirect arguments for the first triangle as instance 1 (the vertex
/// buffer steps per vertex, so the same triangle).
const FIRST_INSTANCE_AT: u64 = 640;
const GEOMETRY_SIZE: u64 = 1024;

/// The geometry buffer: the three triangles' vertices (first vertex 0, 3,
/// 6), indices `0, 1, 2`, and indirect arguments for the first triangle.
fn geometry() -> Vec<u8> {
    let mut bytes = vec![0u8; GEOMETRY_SIZE as usize];
    let mut floats = Vec::new();
    for tri in [&TRIANGLE, &NEAR, &FAR] {
        for v in 0..3 {
            floats.extend_from_slice(&tri.position[v]);
            floats.extend_from_slice(&tri.color[v]);
        }
    }
    let vertices = floats_to_bytes(&floats);
    bytes[..vertices.len()].copy_from_slice(&vertices);
    let indices: Vec<u8> = [0u16, 1, 2].iter().flat_map(|i| i.to_le_bytes()).collect();
    let at = INDICES_AT as usize;
    bytes[at..at + indices.len()].copy_from_slice(&indices);
    let at = INDIRECT_AT as usize;
    bytes[at..at + 16].copy_from_slice(&words_to_bytes(&[3, 1, 0, 0]));
    let at = INDEXED_INDIRECT_AT as usize;
    bytes[at..at + 20].copy_from_slice(&words_to_bytes(&[3, 1, 0, 0, 0]));
    let at = COUNT_AT as usize;
    bytes[at..at + 4].copy_from_slice(&words_to_bytes(&[1]));
    let at = FIRST_INSTANCE_AT as usize;
    bytes[at..at + 16].copy_from_slice(&words_to_bytes(&[3, 1, 0, 1]));
    bytes
}

/// The screen position (pixels, y down) of a clip-space position.
fn screen(p: [f32; 3]) -> [f32; 2] {
    let s = SIZE as f32;
    [(p[0] + 1.0) / 2.0 * s, (1.0 - p[1]) / 2.0 * s]
}

/// The barycentric coordinates of `p` in `tri`, and its distance in pixels
/// to the nearest edge (negative outside).
fn locate(tri: &Tri, p: [f32; 2]) -> ([f32; 3], f32) {
    let v = tri.position.map(screen);
    let cross = |a: [f32; 2], b: [f32; 2], c: [f32; 2]| {
        (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    };
    let area = cross(v[0], v[1], v[2]);
    let mut bary = [0.0; 3];
    let mut distance = f32::MAX;
    for (i, b) in bary.iter_mut().enumerate() {
        let (j, k) = ((i + 1) % 3, (i + 2) % 3);
        *b = cross(p, v[j], v[k]) / area;
        let edge = ((v[k][0] - v[j][0]).powi(2) + (v[k][1] - v[j][1]).powi(2)).sqrt();
        distance = distance.min(*b * area.abs() / edge);
    }
    (bary, distance)
}

/// How far (in 1/255 steps) two RGBA pixels differ at most.
fn diff(a: &[u8], b: &[u8]) -> u8 {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

/// Checks the image of `tri` over `CLEAR`: pixels more than a pixel inside
/// have the interpolated colour within 2/255, pixels more than a pixel
/// outside the clear colour. Returns how many pixels of each were checked.
fn check_triangle(image: &[u8], tri: &Tri, what: &str) -> Result<(usize, usize), Failure> {
    let (mut inside, mut outside) = (0, 0);
    for y in 0..SIZE {
        for x in 0..SIZE {
            let at = ((y * SIZE + x) * 4) as usize;
            let got = &image[at..at + 4];
            let (bary, distance) = locate(tri, [x as f32 + 0.5, y as f32 + 0.5]);
            let expected: [u8; 4] = if distance > 1.0 {
                inside += 1;
                let c = |ch: usize| {
                    let v: f32 = (0..3).map(|i| bary[i] * tri.color[i][ch]).sum();
                    (v * 255.0).round() as u8
                };
                [c(0), c(1), c(2), 255]
            } else if distance < -1.0 {
                outside += 1;
                CLEAR_BYTES
            } else {
                continue;
            };
            check!(
                diff(got, &expected) <= 2,
                "{what}: pixel ({x}, {y}) is {got:?}, expected {expected:?}"
            );
        }
    }
    Ok((inside, outside))
}

/// What to render.
#[derive(Clone, Copy)]
struct Setup {
    samples: u32,
    depth: bool,
}

/// Renders with `draw` (recorded after the pipeline and the geometry are
/// bound) into a cleared 64×64 target and reads it back.
fn render<A: Api>(
    ctx: &Ctx<A>,
    setup: Setup,
    draw: impl FnOnce(&mut A::CommandEncoder, &A::Buffer),
) -> Result<Vec<u8>, Failure> {
    let usage = wgt::BufferUsages::VERTEX
        | wgt::BufferUsages::INDEX
        | wgt::BufferUsages::INDIRECT
        | wgt::BufferUsages::MAP_WRITE;
    let draw_uses = BufferUses::VERTEX | BufferUses::INDEX | BufferUses::INDIRECT;
    // SAFETY: every object is destroyed below, after the submission's fence wait.
    unsafe {
        let layouts = Layouts::new(ctx, None, &[])?;
        let module = wgsl(ctx, SHADER)?;
        let pipeline = pipeline(ctx, &module, &layouts.pipeline, setup)?;
        let buffer = create_buffer(ctx, GEOMETRY_SIZE, usage, Memory::Upload)?;
        write_mapped(ctx, &buffer, 0, &geometry())?;
        let single = setup.samples == 1;
        let target_usage = if single {
            wgt::TextureUsages::RENDER_ATTACHMENT | wgt::TextureUsages::COPY_SRC
        } else {
            wgt::TextureUsages::RENDER_ATTACHMENT
        };
        let target = texture(ctx, FORMAT, setup.samples, target_usage)?;
        let target_view = ctx
            .device
            .create_texture_view(&target, &TextureViewDescriptor::default())?;
        let resolve = if single {
            None
        } else {
            let usage = wgt::TextureUsages::RENDER_ATTACHMENT | wgt::TextureUsages::COPY_SRC;
            let texture = texture(ctx, FORMAT, 1, usage)?;
            let view = ctx
                .device
                .create_texture_view(&texture, &TextureViewDescriptor::default())?;
            Some((texture, view))
        };
        let depth = if setup.depth {
            let texture = texture(
                ctx,
                DEPTH,
                setup.samples,
                wgt::TextureUsages::RENDER_ATTACHMENT,
            )?;
            let view = ctx
                .device
                .create_texture_view(&texture, &TextureViewDescriptor::default())?;
            Some((texture, view))
        } else {
            None
        };
        let result = (|| {
            let ready = TextureUses::UNINITIALIZED;
            let read_from = resolve.as_ref().map_or(&target, |(t, _)| t);
            submit(ctx, |enc| {
                enc.transition_buffers(&[buffer_barrier(&buffer, BufferUses::empty(), draw_uses)]);
                let mut barriers = vec![texture_barrier(&target, ready, TextureUses::COLOR_TARGET)];
                if let Some((t, _)) = &resolve {
                    barriers.push(texture_barrier(t, ready, TextureUses::COLOR_TARGET));
                }
                if let Some((t, _)) = &depth {
                    barriers.push(texture_barrier(t, ready, TextureUses::DEPTH_STENCIL_WRITE));
                }
                enc.transition_textures(&barriers);
                let colors = [Some(ColorAttachment {
                    target: Attachment {
                        view: &target_view,
                        usage: TextureUses::COLOR_TARGET,
                    },
                    resolve_target: resolve.as_ref().map(|(_, view)| Attachment {
                        view,
                        usage: TextureUses::COLOR_TARGET,
                    }),
                    ops: AttachmentOps::STORE,
                    clear_value: CLEAR,
                })];
                enc.begin_render_pass(&RenderPassDescriptor {
                    label: Some("conformance"),
                    extent: wgt::Extent3d {
                        width: SIZE,
                        height: SIZE,
                        depth_or_array_layers: 1,
                    },
                    sample_count: setup.samples,
                    color_attachments: &colors,
                    depth_stencil_attachment: depth.as_ref().map(|(_, view)| {
                        DepthStencilAttachment {
                            target: Attachment {
                                view,
                                usage: TextureUses::DEPTH_STENCIL_WRITE,
                            },
                            depth_ops: AttachmentOps::STORE,
                            stencil_ops: AttachmentOps::empty(),
                            clear_value: (1.0, 0),
                        }
                    }),
                    multiview_mask: None,
                });
                enc.set_render_pipeline(&pipeline);
                enc.set_vertex_buffer(0, BufferBinding::whole(&buffer));
                draw(enc, &buffer);
                enc.end_render_pass();
                enc.transition_textures(&[texture_barrier(
                    read_from,
                    TextureUses::COLOR_TARGET,
                    TextureUses::COPY_SRC,
                )]);
            })?;
            read_texture(
                ctx,
                read_from,
                TextureCopyBase::default(),
                (SIZE, SIZE, 1),
                4,
            )
        })();
        if let Some((texture, view)) = depth {
            ctx.device.destroy_texture_view(view);
            ctx.device.destroy_texture(texture);
        }
        if let Some((texture, view)) = resolve {
            ctx.device.destroy_texture_view(view);
            ctx.device.destroy_texture(texture);
        }
        ctx.device.destroy_texture_view(target_view);
        ctx.device.destroy_texture(target);
        ctx.device.destroy_buffer(buffer);
        ctx.device.destroy_render_pipeline(pipeline);
        ctx.device.destroy_shader_module(module);
        layouts.destroy(ctx);
        result
    }
}

/// A 64×64 texture.
///
/// # Safety
/// `ctx.device` is live; the caller destroys the texture.
unsafe fn texture<A: Api>(
    ctx: &Ctx<A>,
    format: wgt::TextureFormat,
    samples: u32,
    usage: wgt::TextureUsages,
) -> Result<A::Texture, Failure> {
    let desc = TextureDescriptor {
        label: Some("conformance"),
        size: wgt::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: samples,
        dimension: wgt::TextureDimension::D2,
        format,
        usage,
        memory: Memory::Device,
        view_formats: &[],
    };
    // SAFETY: live device.
    Ok(unsafe { ctx.device.create_texture(&desc) }?)
}

/// The vertex-colour pipeline, for `setup`'s sample count and depth.
///
/// # Safety
/// Module and layout came from `ctx.device`; the caller destroys the pipeline.
unsafe fn pipeline<A: Api>(
    ctx: &Ctx<A>,
    module: &A::ShaderModule,
    layout: &A::PipelineLayout,
    setup: Setup,
) -> Result<A::RenderPipeline, Failure> {
    let attributes = [
        wgt::VertexAttribute {
            format: wgt::VertexFormat::Float32x3,
            offset: 0,
            shader_location: 0,
        },
        wgt::VertexAttribute {
            format: wgt::VertexFormat::Float32x3,
            offset: 12,
            shader_location: 1,
        },
    ];
    let vertex_buffers = [VertexBufferLayout {
        array_stride: 24,
        step_mode: wgt::VertexStepMode::Vertex,
        attributes: &attributes,
    }];
    let targets = [Some(wgt::ColorTargetState {
        format: FORMAT,
        blend: None,
        write_mask: wgt::ColorWrites::ALL,
    })];
    let desc = RenderPipelineDescriptor {
        label: Some("conformance"),
        layout,
        vertex_buffers: &vertex_buffers,
        vertex_stage: ProgrammableStage {
            module,
            entry_point: "vs",
            constants: &[],
        },
        primitive: wgt::PrimitiveState::default(),
        depth_stencil: setup.depth.then(|| wgt::DepthStencilState {
            format: DEPTH,
            depth_write_enabled: Some(true),
            depth_compare: Some(wgt::CompareFunction::Less),
            stencil: wgt::StencilState::default(),
            bias: wgt::DepthBiasState::default(),
        }),
        multisample: wgt::MultisampleState {
            count: setup.samples,
            ..Default::default()
        },
        fragment_stage: Some(ProgrammableStage {
            module,
            entry_point: "fs",
            constants: &[],
        }),
        color_targets: &targets,
        cache: None,
        multiview_mask: None,
    };
    // SAFETY: forwarded contract.
    Ok(unsafe { ctx.device.create_render_pipeline(&desc) }?)
}

const PLAIN: Setup = Setup {
    samples: 1,
    depth: false,
};

/// Colour and depth attachments cleared by their load ops, with no draw:
/// every pixel holds the clear colour, every depth texel the clear depth.
/// Runs on noop too (noop executes clears).
fn render_pass_clears_attachments<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let extent = wgt::Extent3d {
        width: SIZE,
        height: SIZE,
        depth_or_array_layers: 1,
    };
    let usage = wgt::TextureUsages::RENDER_ATTACHMENT | wgt::TextureUsages::COPY_SRC;
    // SAFETY: every object is destroyed below, after the fence waits.
    unsafe {
        let color = texture(ctx, FORMAT, 1, usage)?;
        let depth = texture(ctx, DEPTH, 1, usage)?;
        let color_view = ctx
            .device
            .create_texture_view(&color, &TextureViewDescriptor::default())?;
        let depth_view = ctx
            .device
            .create_texture_view(&depth, &TextureViewDescriptor::default())?;
        let ready = TextureUses::UNINITIALIZED;
        let done = submit(ctx, |enc| {
            enc.transition_textures(&[
                texture_barrier(&color, ready, TextureUses::COLOR_TARGET),
                texture_barrier(&depth, ready, TextureUses::DEPTH_STENCIL_WRITE),
            ]);
            let colors = [Some(ColorAttachment {
                target: Attachment {
                    view: &color_view,
                    usage: TextureUses::COLOR_TARGET,
                },
                resolve_target: None,
                ops: AttachmentOps::STORE,
                clear_value: CLEAR,
            })];
            enc.begin_render_pass(&RenderPassDescriptor {
                label: Some("clear"),
                extent,
                sample_count: 1,
                color_attachments: &colors,
                depth_stencil_attachment: Some(DepthStencilAttachment {
                    target: Attachment {
                        view: &depth_view,
                        usage: TextureUses::DEPTH_STENCIL_WRITE,
                    },
                    depth_ops: AttachmentOps::STORE,
                    stencil_ops: AttachmentOps::empty(),
                    clear_value: (0.375, 0),
                }),
                multiview_mask: None,
            });
            enc.end_render_pass();
            enc.transition_textures(&[
                texture_barrier(&color, TextureUses::COLOR_TARGET, TextureUses::COPY_SRC),
                texture_barrier(
                    &depth,
                    TextureUses::DEPTH_STENCIL_WRITE,
                    TextureUses::COPY_SRC,
                ),
            ]);
        });
        let depth_base = TextureCopyBase {
            aspect: wgt::TextureAspect::DepthOnly,
            ..Default::default()
        };
        let colors = done.and_then(|()| {
            read_texture(ctx, &color, TextureCopyBase::default(), (SIZE, SIZE, 1), 4)
        });
        let depths = colors
            .as_ref()
            .map_err(|_| Failure::from("not read"))
            .and_then(|_| read_texture(ctx, &depth, depth_base, (SIZE, SIZE, 1), 4));
        ctx.device.destroy_texture_view(depth_view);
        ctx.device.destroy_texture_view(color_view);
        ctx.device.destroy_texture(depth);
        ctx.device.destroy_texture(color);
        let colors = colors?;
        if let Some(i) = colors
            .chunks_exact(4)
            .position(|px| diff(px, &CLEAR_BYTES) > 1)
        {
            return Err(format!(
                "pixel {i} is {:?}, not the clear colour",
                &colors[i * 4..i * 4 + 4]
            )
            .into());
        }
        let depths = depths?;
        if let Some(i) = depths
            .chunks_exact(4)
            .position(|d| f32::from_le_bytes([d[0], d[1], d[2], d[3]]) != 0.375)
        {
            return Err(format!("depth texel {i} is not the clear depth 0.375").into());
        }
    }
    Ok(Outcome::Pass)
}

/// The three-colour triangle: interpolated inside, clear colour outside.
fn triangle_renders<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if let Some(skipped) = needs_shaders(ctx) {
        return skipped;
    }
    // SAFETY: the encoder records a draw of the bound geometry.
    let image = render(ctx, PLAIN, |enc, _| unsafe { enc.draw(0, 3, 0, 1) })?;
    let (inside, outside) = check_triangle(&image, &TRIANGLE, "draw")?;
    check!(
        inside > 300 && outside > 2000,
        "only {inside} inside and {outside} outside pixels checked"
    );
    Ok(Outcome::Pass)
}

/// Binds the geometry buffer's `u16` indices.
///
/// # Safety
/// Inside a render pass; `buffer` has INDEX usage and is in `INDEX`.
unsafe fn bind_indices<A: Api>(enc: &mut A::CommandEncoder, buffer: &A::Buffer) {
    let indices = BufferBinding {
        buffer,
        offset: INDICES_AT,
        size: None,
    };
    // SAFETY: forwarded contract.
    unsafe { enc.set_index_buffer(indices, wgt::IndexFormat::Uint16) };
}

/// `draw_indexed`, `draw_indirect` and `draw_indexed_indirect` give the
/// image `draw` gives; so do `draw_indirect_count` and
/// `draw_indexed_indirect_count` (a count of 1 under a maximum of 2) where
/// the device has `MULTI_DRAW_INDIRECT_COUNT`, and an indirect draw whose
/// first instance is 1 where it has `INDIRECT_FIRST_INSTANCE`.
fn indexed_and_indirect_draws_match<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if let Some(skipped) = needs_shaders(ctx) {
        return skipped;
    }
    // SAFETY: the encoder records draws of the bound geometry.
    let plain = render(ctx, PLAIN, |enc, _| unsafe { enc.draw(0, 3, 0, 1) })?;
    // SAFETY: as above.
    let indexed = render(ctx, PLAIN, |enc, buffer| unsafe {
        bind_indices::<A>(enc, buffer);
        enc.draw_indexed(0, 3, 0, 0, 1);
    })?;
    // SAFETY: as above.
    let indirect = render(ctx, PLAIN, |enc, buffer| unsafe {
        enc.draw_indirect(buffer, INDIRECT_AT, 1)
    })?;
    // SAFETY: as above.
    let indexed_indirect = render(ctx, PLAIN, |enc, buffer| unsafe {
        bind_indices::<A>(enc, buffer);
        enc.draw_indexed_indirect(buffer, INDEXED_INDIRECT_AT, 1);
    })?;
    let mut images = vec![
        (indexed, "draw_indexed"),
        (indirect, "draw_indirect"),
        (indexed_indirect, "draw_indexed_indirect"),
    ];
    if ctx
        .features
        .contains(wgt::Features::MULTI_DRAW_INDIRECT_COUNT)
    {
        // SAFETY: as above; the count buffer is the geometry buffer, in INDIRECT.
        let count = render(ctx, PLAIN, |enc, buffer| unsafe {
            enc.draw_indirect_count(buffer, INDIRECT_AT, buffer, COUNT_AT, 2)
        })?;
        // SAFETY: as above.
        let indexed_count = render(ctx, PLAIN, |enc, buffer| unsafe {
            bind_indices::<A>(enc, buffer);
            enc.draw_indexed_indirect_count(buffer, INDEXED_INDIRECT_AT, buffer, COUNT_AT, 2);
        })?;
        images.push((count, "draw_indirect_count"));
        images.push((indexed_count, "draw_indexed_indirect_count"));
    } else {
        ctx.note("no MULTI_DRAW_INDIRECT_COUNT: count draws not checked");
    }
    if ctx
        .features
        .contains(wgt::Features::INDIRECT_FIRST_INSTANCE)
    {
        // SAFETY: as above.
        let first_instance = render(ctx, PLAIN, |enc, buffer| unsafe {
            enc.draw_indirect(buffer, FIRST_INSTANCE_AT, 1)
        })?;
        images.push((first_instance, "draw_indirect, first instance 1"));
    } else {
        ctx.note("no INDIRECT_FIRST_INSTANCE: a first instance of 1 not checked");
    }
    check_triangle(&plain, &TRIANGLE, "draw")?;
    for (image, what) in &images {
        if let Some(i) = (0..plain.len() / 4)
            .find(|&i| diff(&image[i * 4..i * 4 + 4], &plain[i * 4..i * 4 + 4]) > 1)
        {
            return Err(format!(
                "{what}: pixel ({}, {}) is {:?}, draw gave {:?}",
                i as u32 % SIZE,
                i as u32 / SIZE,
                &image[i * 4..i * 4 + 4],
                &plain[i * 4..i * 4 + 4]
            )
            .into());
        }
    }
    Ok(Outcome::Pass)
}

/// A 4× multisampled target resolved: the single-sampled image where
/// pixels are fully inside or outside the triangle.
fn msaa_resolve_matches<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if let Some(skipped) = needs_shaders(ctx) {
        return skipped;
    }
    let msaa = Setup {
        samples: 4,
        depth: false,
    };
    // SAFETY: the encoder records a draw of the bound geometry.
    let resolved = render(ctx, msaa, |enc, _| unsafe { enc.draw(0, 3, 0, 1) })?;
    check_triangle(&resolved, &TRIANGLE, "4x resolved")?;
    Ok(Outcome::Pass)
}

/// The near red triangle drawn first hides the far green one drawn second
/// (depth compare `Less`); where only the far one covers, it is green.
fn depth_test_keeps_the_nearer_triangle<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if let Some(skipped) = needs_shaders(ctx) {
        return skipped;
    }
    let setup = Setup {
        samples: 1,
        depth: true,
    };
    // SAFETY: the encoder records draws of the bound geometry.
    let image = render(ctx, setup, |enc, _| unsafe {
        enc.draw(3, 3, 0, 1);
        enc.draw(6, 3, 0, 1);
    })?;
    let (mut near, mut far) = (0, 0);
    for y in 0..SIZE {
        for x in 0..SIZE {
            let p = [x as f32 + 0.5, y as f32 + 0.5];
            let (_, in_near) = locate(&NEAR, p);
            let (_, in_far) = locate(&FAR, p);
            let expected = if in_near > 1.0 {
                near += 1;
                [255, 0, 0, 255]
            } else if in_near < -1.0 && in_far > 1.0 {
                far += 1;
                [0, 255, 0, 255]
            } else if in_far < -1.0 {
                CLEAR_BYTES
            } else {
                continue;
            };
            let at = ((y * SIZE + x) * 4) as usize;
            let got = &image[at..at + 4];
            check!(
                diff(got, &expected) <= 1,
                "pixel ({x}, {y}) is {got:?}, expected {expected:?}"
            );
        }
    }
    check!(
        near > 50 && far > 500,
        "only {near} near and {far} far pixels checked"
    );
    Ok(Outcome::Pass)
}
