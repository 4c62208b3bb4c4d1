//! Mesh shaders (`EXPERIMENTAL_MESH_SHADER`): a task stage passes a colour
//! in its payload to the mesh stage, which writes one triangle covering an
//! 8×8 target; a mesh-only pipeline draws the same through
//! `draw_mesh_tasks_indirect`; with `EXPERIMENTAL_MESH_SHADER_POINTS` a mesh
//! stage writes one point at one pixel's centre; with
//! `EXPERIMENTAL_MESH_SHADER_MULTIVIEW` a mesh pipeline with a view mask
//! draws each view to its layer. Draws that do not fit the
//! bound pipeline (a vertex draw with a mesh pipeline, a mesh draw with a
//! vertex pipeline, counts past the limits) are skipped: the target keeps
//! its clear colour, and the validation layer sees nothing. Without the
//! feature, mesh pipelines and task/mesh visibility are refused with the
//! feature named (every adapter, noop too).

use std::num::NonZeroU32;

use keel_hal::wgt;
use keel_hal::{
    Adapter, Api, Attachment, AttachmentOps, BindGroupLayoutDescriptor, BindingError, BufferUses,
    ColorAttachment, CommandEncoder, Device, DeviceDescriptor, Memory, MeshPipelineDescriptor,
    PipelineError, PipelineLayoutDescriptor, ProgrammableStage, RenderPassDescriptor,
    RenderPipelineDescriptor, ShaderModuleDescriptor, TextureCopyBase, TextureUses,
    TextureViewDescriptor,
};

use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::helpers::{
    buffer_barrier, create_buffer, read_texture, submit, texture_barrier, texture_desc,
    write_mapped,
};
use crate::pipelines::{needs_shaders, wgsl, words_to_bytes, Layouts};

conformance_tests!(
    mesh_shaders_draw_what_their_stages_write,
    mesh_shaders_need_their_feature,
    mesh_topology_must_be_the_mesh_stages,
);

const SIZE: u32 = 8;
const FORMAT: wgt::TextureFormat = wgt::TextureFormat::Rgba8Unorm;
const CLEAR: [u8; 4] = [0, 0, 255, 255];

/// Task + mesh (payload: the colour), mesh alone, and a fragment stage.
const SHADER: &str = "
enable wgpu_mesh_shader;

struct Vertex {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
}
struct Triangle {
    @builtin(triangle_indices) indices: vec3<u32>,
}
struct Output {
    @builtin(vertex_count) vertex_count: u32,
    @builtin(vertices) vertices: array<Vertex, 3>,
    @builtin(primitive_count) primitive_count: u32,
    @builtin(primitives) primitives: array<Triangle, 1>,
}
var<workgroup> output: Output;
var<task_payload> payload: vec4<f32>;

const corners = array<vec4<f32>, 3>(
    vec4(-1.0, -1.0, 0.0, 1.0), vec4(3.0, -1.0, 0.0, 1.0), vec4(-1.0, 3.0, 0.0, 1.0));

@task @payload(payload) @workgroup_size(1)
fn task() -> @builtin(mesh_task_size) vec3<u32> {
    payload = vec4(1.0, 0.0, 0.0, 1.0);
    return vec3(1u, 1u, 1u);
}

fn triangle(color: vec4<f32>) {
    output.vertex_count = 3u;
    output.primitive_count = 1u;
    for (var i = 0u; i < 3u; i++) {
        output.vertices[i].position = corners[i];
        output.vertices[i].color = color;
    }
    output.primitives[0].indices = vec3(0u, 1u, 2u);
}

@mesh(output) @payload(payload) @workgroup_size(1)
fn mesh_from_task() { triangle(payload); }

@mesh(output) @workgroup_size(1)
fn mesh_alone() { triangle(vec4(0.0, 1.0, 0.0, 1.0)); }

@fragment fn fs(@location(0) color: vec4<f32>) -> @location(0) vec4<f32> { return color; }

@vertex fn vs(@builtin(vertex_index) i: u32) -> Vertex {
    return Vertex(corners[i], vec4(1.0, 1.0, 1.0, 1.0));
}
";

/// One point at the centre of pixel ([`POINT_X`], [`POINT_Y`]).
const POINTS: &str = "
enable wgpu_mesh_shader;

struct Vertex {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
}
struct Point {
    @builtin(point_index) index: u32,
}
struct Output {
    @builtin(vertex_count) vertex_count: u32,
    @builtin(vertices) vertices: array<Vertex, 1>,
    @builtin(primitive_count) primitive_count: u32,
    @builtin(primitives) primitives: array<Point, 1>,
}
var<workgroup> output: Output;

@mesh(output) @workgroup_size(1)
fn mesh_point() {
    output.vertex_count = 1u;
    output.primitive_count = 1u;
    // Pixel (2, 5) of 8×8, row 0 at the top.
    output.vertices[0].position = vec4(-0.375, -0.375, 0.0, 1.0);
    output.vertices[0].color = vec4(1.0, 1.0, 0.0, 1.0);
    output.primitives[0].index = 0u;
}

@fragment fn fs(@location(0) color: vec4<f32>) -> @location(0) vec4<f32> { return color; }
";
/// A mesh stage alone; the fragment stage colours each view apart.
const VIEWS: &str = "
enable wgpu_mesh_shader;

struct Vertex {
    @builtin(position) position: vec4<f32>,
}
struct Triangle {
    @builtin(triangle_indices) indices: vec3<u32>,
}
struct Output {
    @builtin(vertex_count) vertex_count: u32,
    @builtin(vertices) vertices: array<Vertex, 3>,
    @builtin(primitive_count) primitive_count: u32,
    @builtin(primitives) primitives: array<Triangle, 1>,
}
var<workgroup> output: Output;

@mesh(output) @workgroup_size(1)
fn mesh_views() {
    output.vertex_count = 3u;
    output.primitive_count = 1u;
    output.vertices[0].position = vec4(-1.0, -1.0, 0.0, 1.0);
    output.vertices[1].position = vec4(3.0, -1.0, 0.0, 1.0);
    output.vertices[2].position = vec4(-1.0, 3.0, 0.0, 1.0);
    output.primitives[0].indices = vec3(0u, 1u, 2u);
}

@fragment fn fs(@builtin(view_index) view: u32) -> @location(0) vec4<f32> {
    return vec4(f32(view), 1.0, 0.0, 1.0);
}
";
const POINT_X: u32 = 2;
const POINT_Y: u32 = 5;

const TARGETS: [Option<wgt::ColorTargetState>; 1] = [Some(wgt::ColorTargetState {
    format: FORMAT,
    blend: None,
    write_mask: wgt::ColorWrites::ALL,
})];

/// A mesh pipeline of `module`'s stages.
fn mesh_desc<'a, A: Api>(
    layout: &'a A::PipelineLayout,
    module: &'a A::ShaderModule,
    task: Option<&'a str>,
    mesh: &'a str,
    topology: wgt::PrimitiveTopology,
) -> MeshPipelineDescriptor<'a, A> {
    MeshPipelineDescriptor {
        label: Some("mesh"),
        layout,
        task_stage: task.map(|name| ProgrammableStage::new(module, name)),
        mesh_stage: ProgrammableStage::new(module, mesh),
        primitive: wgt::PrimitiveState {
            topology,
            ..Default::default()
        },
        depth_stencil: None,
        multisample: wgt::MultisampleState::default(),
        fragment_stage: Some(ProgrammableStage::new(module, "fs")),
        color_targets: &TARGETS,
        multiview_mask: None,
        cache: None,
    }
}

/// Clears an 8×8 target to [`CLEAR`], records `draw` in a render pass,
/// and reads the target back (4 bytes a pixel, rows from the top).
///
/// # Safety
/// What `draw` uses came from `ctx.device` and is live.
unsafe fn render<A: Api>(
    ctx: &Ctx<A>,
    draw: impl FnOnce(&mut A::CommandEncoder),
) -> Result<Vec<u8>, Failure> {
    // SAFETY: forwarded contract.
    unsafe { render_views(ctx, None, draw) }.map(|mut layers| layers.swap_remove(0))
}

/// [`render`] into a target of one layer per view of `mask` (one layer
/// without), each layer read back.
///
/// # Safety
/// As [`render`].
unsafe fn render_views<A: Api>(
    ctx: &Ctx<A>,
    mask: Option<NonZeroU32>,
    draw: impl FnOnce(&mut A::CommandEncoder),
) -> Result<Vec<Vec<u8>>, Failure> {
    let layers = mask.map_or(1, |m| 32 - m.get().leading_zeros());
    let mut desc = texture_desc(FORMAT, SIZE, SIZE, layers, 1);
    desc.usage = wgt::TextureUsages::RENDER_ATTACHMENT | wgt::TextureUsages::COPY_SRC;
    // SAFETY: destroyed below, after the submission's wait.
    unsafe {
        let texture = ctx.device.create_texture(&desc)?;
        let view_desc = TextureViewDescriptor {
            dimension: mask.map(|_| wgt::TextureViewDimension::D2Array),
            ..Default::default()
        };
        let view = match ctx.device.create_texture_view(&texture, &view_desc) {
            Ok(view) => view,
            Err(e) => {
                ctx.device.destroy_texture(texture);
                return Err(e.into());
            }
        };
        let ran = submit(ctx, |enc| {
            enc.transition_textures(&[texture_barrier(
                &texture,
                TextureUses::UNINITIALIZED,
                TextureUses::COLOR_TARGET,
            )]);
            let colors = [Some(ColorAttachment {
                target: Attachment {
                    view: &view,
                    usage: TextureUses::COLOR_TARGET,
                },
                resolve_target: None,
                ops: AttachmentOps::STORE,
                clear_value: wgt::Color::BLUE,
            })];
            enc.begin_render_pass(&RenderPassDescriptor {
                label: Some("mesh"),
                extent: wgt::Extent3d {
                    width: SIZE,
                    height: SIZE,
                    depth_or_array_layers: 1,
                },
                sample_count: 1,
                color_attachments: &colors,
                depth_stencil_attachment: None,
                multiview_mask: mask,
            });
            draw(enc);
            enc.end_render_pass();
            enc.transition_textures(&[texture_barrier(
                &texture,
                TextureUses::COLOR_TARGET,
                TextureUses::COPY_SRC,
            )]);
        });
        let read = ran.and_then(|()| {
            (0..layers)
                .map(|layer| {
                    let base = TextureCopyBase {
                        array_layer: layer,
                        ..Default::default()
                    };
                    read_texture(ctx, &texture, base, (SIZE, SIZE, 1), 4)
                })
                .collect()
        });
        ctx.device.destroy_texture_view(view);
        ctx.device.destroy_texture(texture);
        read
    }
}

/// Pixels of `got` that are not `want`.
fn wrong(got: &[u8], want: [u8; 4]) -> usize {
    got.chunks_exact(4).filter(|p| *p != want).count()
}

fn mesh_shaders_draw_what_their_stages_write<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if !ctx
        .features
        .contains(wgt::Features::EXPERIMENTAL_MESH_SHADER)
    {
        return skip("the adapter lacks EXPERIMENTAL_MESH_SHADER");
    }
    // Without shader execution (noop) the pipelines are made and checked,
    // and nothing is drawn.
    let draws = needs_shaders(ctx).is_none();
    let triangles = wgt::PrimitiveTopology::TriangleList;
    // SAFETY: every object is destroyed below, after the waits.
    unsafe {
        // A group visible to the task and mesh stages (the shaders use none
        // of it): a device with the feature takes the visibility.
        let visible = [wgt::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgt::ShaderStages::TASK | wgt::ShaderStages::MESH,
            ty: wgt::BindingType::Buffer {
                ty: wgt::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }];
        let layouts = Layouts::new(ctx, Some(&visible), &[])?;
        let module = wgsl(ctx, SHADER)?;
        let args = create_buffer(
            ctx,
            12,
            wgt::BufferUsages::INDIRECT | wgt::BufferUsages::MAP_WRITE,
            Memory::Upload,
        );
        let result = (|| -> Result<(), Failure> {
            let args = args.as_ref().map_err(|e| Failure::from(e.to_string()))?;
            write_mapped(ctx, args, 0, &words_to_bytes(&[1, 1, 1]))?;
            let pl = &layouts.pipeline;
            let tasked = ctx.device.create_mesh_pipeline(&mesh_desc::<A>(
                pl,
                &module,
                Some("task"),
                "mesh_from_task",
                triangles,
            ))?;
            let alone = ctx.device.create_mesh_pipeline(&mesh_desc::<A>(
                pl,
                &module,
                None,
                "mesh_alone",
                triangles,
            ));
            let vertex = ctx
                .device
                .create_render_pipeline(&RenderPipelineDescriptor {
                    label: Some("vertex"),
                    layout: pl,
                    vertex_buffers: &[],
                    vertex_stage: ProgrammableStage::new(&module, "vs"),
                    primitive: wgt::PrimitiveState::default(),
                    depth_stencil: None,
                    multisample: wgt::MultisampleState::default(),
                    fragment_stage: Some(ProgrammableStage::new(&module, "fs")),
                    color_targets: &TARGETS,
                    multiview_mask: None,
                    cache: None,
                });
            let checks = (|| -> Result<(), Failure> {
                if !draws {
                    return Ok(());
                }
                let made = |r: &Result<A::RenderPipeline, PipelineError>| {
                    r.as_ref()
                        .map_err(|e| Failure::from(e.to_string()))
                        .map(|_| ())
                };
                made(&alone)?;
                made(&vertex)?;
                let (Ok(alone), Ok(vertex)) = (&alone, &vertex) else {
                    return Err(Failure::from("unreachable: both pipelines were made"));
                };
                // Task → mesh: the payload's red.
                let got = render(ctx, |enc| {
                    enc.set_render_pipeline(&tasked);
                    enc.draw_mesh_tasks(1, 1, 1);
                })?;
                check_eq!(
                    wrong(&got, [255, 0, 0, 255]),
                    0,
                    "task+mesh: pixels not red"
                );
                // Mesh alone, indirect: green.
                submit(ctx, |enc| {
                    enc.transition_buffers(&[buffer_barrier(
                        args,
                        BufferUses::MAP_WRITE,
                        BufferUses::INDIRECT,
                    )]);
                })?;
                let got = render(ctx, |enc| {
                    enc.set_render_pipeline(alone);
                    enc.draw_mesh_tasks_indirect(args, 0, 1);
                })?;
                check_eq!(
                    wrong(&got, [0, 255, 0, 255]),
                    0,
                    "indirect mesh: pixels not green"
                );
                // Draws that do not fit the bound pipeline, or counts past
                // the limits: skipped, the clear colour stays.
                let limit = ctx.caps.limits.max_task_workgroups_per_dimension;
                let got = render(ctx, |enc| {
                    enc.set_render_pipeline(&tasked);
                    enc.draw(0, 3, 0, 1);
                    enc.draw_mesh_tasks(limit.saturating_add(1), 1, 1);
                    enc.set_render_pipeline(vertex);
                    enc.draw_mesh_tasks(1, 1, 1);
                    enc.draw_mesh_tasks_indirect(args, 4, 1);
                })?;
                check_eq!(wrong(&got, CLEAR), 0, "skipped draws changed pixels");
                Ok(())
            })();
            ctx.device.destroy_render_pipeline(tasked);
            if let Ok(p) = alone {
                ctx.device.destroy_render_pipeline(p);
            }
            if let Ok(p) = vertex {
                ctx.device.destroy_render_pipeline(p);
            }
            checks?;
            if !draws {
                return Ok(());
            }
            ctx.note("task+mesh, indirect mesh and skipped misuse as expected");
            if ctx
                .features
                .contains(wgt::Features::EXPERIMENTAL_MESH_SHADER_POINTS)
            {
                let points = wgsl(ctx, POINTS)?;
                let made = ctx.device.create_mesh_pipeline(&mesh_desc::<A>(
                    pl,
                    &points,
                    None,
                    "mesh_point",
                    wgt::PrimitiveTopology::PointList,
                ));
                let drawn = match made {
                    Ok(pipeline) => {
                        let got = render(ctx, |enc| {
                            enc.set_render_pipeline(&pipeline);
                            enc.draw_mesh_tasks(1, 1, 1);
                        });
                        ctx.device.destroy_render_pipeline(pipeline);
                        got
                    }
                    Err(e) => Err(e.into()),
                };
                ctx.device.destroy_shader_module(points);
                let got = drawn?;
                let at = ((POINT_Y * SIZE + POINT_X) * 4) as usize;
                check_eq!(
                    got.get(at..at + 4),
                    Some(&[255u8, 255, 0, 255][..]),
                    "the point's pixel"
                );
                check_eq!(wrong(&got, CLEAR), 1, "pixels besides the point's");
                ctx.note("a mesh stage's point drew one pixel");
            }
            let multiview =
                wgt::Features::EXPERIMENTAL_MESH_SHADER_MULTIVIEW | wgt::Features::MULTIVIEW;
            if ctx.features.contains(multiview)
                && ctx.caps.limits.max_mesh_multiview_view_count >= 2
            {
                let views = wgsl(ctx, VIEWS)?;
                let mask = NonZeroU32::new(0b11);
                let mut desc = mesh_desc::<A>(pl, &views, None, "mesh_views", triangles);
                desc.multiview_mask = mask;
                let drawn = match ctx.device.create_mesh_pipeline(&desc) {
                    Ok(pipeline) => {
                        let got = render_views(ctx, mask, |enc| {
                            enc.set_render_pipeline(&pipeline);
                            enc.draw_mesh_tasks(1, 1, 1);
                        });
                        ctx.device.destroy_render_pipeline(pipeline);
                        got
                    }
                    Err(e) => Err(e.into()),
                };
                ctx.device.destroy_shader_module(views);
                let layers = drawn?;
                for (view, got) in layers.iter().enumerate() {
                    let want = [if view == 0 { 0 } else { 255 }, 255, 0, 255];
                    check_eq!(wrong(got, want), 0, "view {view}: pixels not {want:?}");
                }
                ctx.note("a multiview mesh pipeline drew both views");
            }
            Ok(())
        })();
        if let Ok(args) = args {
            ctx.device.destroy_buffer(args);
        }
        ctx.device.destroy_shader_module(module);
        layouts.destroy(ctx);
        result?;
    }
    if !draws {
        return skip("mesh pipelines made; no SHADER_EXECUTION to draw with them");
    }
    Ok(Outcome::Pass)
}

/// On a device opened without `EXPERIMENTAL_MESH_SHADER`: a mesh pipeline is
/// `PipelineError::MissingFeature` naming it, a layout entry or push-constant
/// range visible to task or mesh stages is refused, a module with mesh
/// stages does not validate, and nothing is left alive.
fn mesh_shaders_need_their_feature<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let desc = DeviceDescriptor {
        label: Some("conformance mesh"),
        allow_no_shader_execution: true,
        ..Default::default()
    };
    // SAFETY: the adapter is live; everything made is destroyed.
    unsafe {
        let open = ctx.adapter.open(&desc)?;
        let d = &open.device;
        let entry = wgt::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgt::ShaderStages::MESH,
            ty: wgt::BindingType::Buffer {
                ty: wgt::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let group = d.create_bind_group_layout(&BindGroupLayoutDescriptor {
            label: None,
            entries: &[entry],
            ..Default::default()
        });
        let group_refused = match group {
            Ok(layout) => {
                d.destroy_bind_group_layout(layout);
                false
            }
            Err(BindingError::Unsupported { .. }) => true,
            Err(e) => return Err(Failure::from(format!("mesh visibility refused with {e}"))),
        };
        check!(
            group_refused,
            "a mesh-visible layout entry was accepted without the feature"
        );
        let ranges = [keel_hal::PushConstantRange {
            stages: wgt::ShaderStages::TASK,
            range: 0..16,
        }];
        let layout = d.create_pipeline_layout(&PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[],
            push_constant_ranges: &ranges,
        });
        if let Ok(layout) = layout {
            d.destroy_pipeline_layout(layout);
            return Err(Failure::from("a task push-constant range was accepted"));
        }
        check!(
            d.create_shader_module(&ShaderModuleDescriptor::wgsl(SHADER))
                .is_err(),
            "a module with mesh stages validated without the feature"
        );
        let layout = d.create_pipeline_layout(&PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[],
            push_constant_ranges: &[],
        })?;
        let plain = "@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0); }
                     @fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }";
        let module = match d.create_shader_module(&ShaderModuleDescriptor::wgsl(plain)) {
            Ok(module) => module,
            Err(e) => {
                d.destroy_pipeline_layout(layout);
                return Err(e.into());
            }
        };
        let made = d.create_mesh_pipeline(&mesh_desc::<A>(
            &layout,
            &module,
            None,
            "vs",
            wgt::PrimitiveTopology::TriangleList,
        ));
        let outcome = match made {
            Ok(pipeline) => {
                d.destroy_render_pipeline(pipeline);
                Err(Failure::from(
                    "a mesh pipeline was made without the feature",
                ))
            }
            Err(PipelineError::MissingFeature { feature, .. })
                if feature == wgt::Features::EXPERIMENTAL_MESH_SHADER =>
            {
                Ok(())
            }
            Err(e) => Err(Failure::from(format!(
                "refused with {e}, not MissingFeature(EXPERIMENTAL_MESH_SHADER)"
            ))),
        };
        d.destroy_shader_module(module);
        d.destroy_pipeline_layout(layout);
        outcome?;
        check_eq!(
            d.live_counts(),
            keel_hal::LiveCounts::default(),
            "objects left alive"
        );
    }
    Ok(Outcome::Pass)
}

/// A mesh pipeline whose topology is not the one its mesh stage writes
/// (triangles drawn as a line list, a strip, a point list) is refused with
/// `InterfaceMismatch`, before any driver object is made for it.
fn mesh_topology_must_be_the_mesh_stages<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if !ctx
        .features
        .contains(wgt::Features::EXPERIMENTAL_MESH_SHADER)
    {
        return skip("the adapter lacks EXPERIMENTAL_MESH_SHADER");
    }
    // SAFETY: everything made is destroyed below.
    unsafe {
        let layouts = Layouts::new(ctx, None, &[])?;
        let module = match wgsl(ctx, SHADER) {
            Ok(m) => m,
            Err(e) => {
                layouts.destroy(ctx);
                return Err(e);
            }
        };
        let mut outcome = Ok(());
        for topology in [
            wgt::PrimitiveTopology::LineList,
            wgt::PrimitiveTopology::TriangleStrip,
            wgt::PrimitiveTopology::PointList,
        ] {
            let made = ctx.device.create_mesh_pipeline(&mesh_desc::<A>(
                &layouts.pipeline,
                &module,
                None,
                "mesh_alone",
                topology,
            ));
            match made {
                Err(PipelineError::InterfaceMismatch(_)) => {}
                Err(e) => outcome = Err(format!("{topology:?}: refused with {e}")),
                Ok(pipeline) => {
                    ctx.device.destroy_render_pipeline(pipeline);
                    outcome = Err(format!(
                        "{topology:?} accepted for a triangle-writing mesh stage"
                    ));
                }
            }
        }
        ctx.device.destroy_shader_module(module);
        layouts.destroy(ctx);
        outcome.map_err(Failure::from)?;
    }
    Ok(Outcome::Pass)
}
