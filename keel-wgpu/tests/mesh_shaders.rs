//! Mesh pipelines through wgpu's API (`EXPERIMENTAL_MESH_SHADER`):
//! `create_mesh_pipeline` with and without a task stage, `draw_mesh_tasks`,
//! `draw_mesh_tasks_indirect`, `multi_draw_mesh_tasks_indirect(_count)`, run
//! on keel-wgpu (noop, Vulkan) and stock wgpu: the same pixels, and the same
//! validation errors for the misuse wgpu-core reports.
//!
//! Skips (and says so) where the adapter has no mesh shaders; lavapipe has
//! them (`VK_EXT_mesh_shader`).

mod common;

use common::{caught, each_backend_limits, Backend, Gpu};
use wgpu::util::DeviceExt;

const SIZE: u32 = 64;
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// A task stage that launches four mesh workgroups with a colour in its
/// payload; a mesh stage that draws workgroup `i`'s triangle in column
/// `base + i` of the top half (from the task) or the bottom half (alone);
/// a fragment stage writing the interpolated colour.
const SHADER: &str = "
enable wgpu_mesh_shader;

override base: u32 = 0u;

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

@task @payload(payload) @workgroup_size(1)
fn task() -> @builtin(mesh_task_size) vec3<u32> {
    payload = vec4(1.0, 0.5, 0.25, 1.0);
    return vec3(4u, 1u, 1u);
}

// Column `column` of eight, top half or bottom half.
fn triangle(column: u32, top: bool, color: vec4<f32>) {
    let x0 = -1.0 + f32(column) * 0.25;
    var y0 = -1.0;
    if top { y0 = 0.0; }
    output.vertex_count = 3u;
    output.primitive_count = 1u;
    output.vertices[0].position = vec4(x0, y0, 0.0, 1.0);
    output.vertices[1].position = vec4(x0 + 0.25, y0, 0.0, 1.0);
    output.vertices[2].position = vec4(x0, y0 + 1.0, 0.0, 1.0);
    output.vertices[0].color = color;
    output.vertices[1].color = color * 0.5;
    output.vertices[2].color = vec4(0.0, 0.0, 1.0, 1.0);
    output.primitives[0].indices = vec3(0u, 1u, 2u);
}

@mesh(output) @payload(payload) @workgroup_size(1)
fn mesh_from_task(@builtin(workgroup_id) id: vec3<u32>) {
    triangle(id.x * 2u, true, payload * (f32(id.x + 1u) / 4.0));
}

@mesh(output) @workgroup_size(1)
fn mesh_alone(@builtin(workgroup_id) id: vec3<u32>) {
    triangle(base + id.x, false, vec4(0.0, f32(base + id.x + 1u) / 8.0, 0.5, 1.0));
}

@fragment fn fs(@location(0) color: vec4<f32>) -> @location(0) vec4<f32> { return color; }

@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    return vec4(f32(i), 0.0, 0.0, 1.0);
}
";

fn limits(adapter: &wgpu::Adapter) -> wgpu::Limits {
    let wanted = wgpu::Limits::default().using_recommended_minimum_mesh_shader_values();
    // Within what the adapter has (lavapipe's output counts are 256).
    let has = adapter.limits();
    wgpu::Limits {
        max_mesh_output_vertices: wanted
            .max_mesh_output_vertices
            .min(has.max_mesh_output_vertices),
        max_mesh_output_primitives: wanted
            .max_mesh_output_primitives
            .min(has.max_mesh_output_primitives),
        ..wanted
    }
}

fn each_mesh_backend(f: impl Fn(&Gpu)) {
    each_backend_limits(
        wgpu::Features::EXPERIMENTAL_MESH_SHADER,
        wgpu::Features::MULTI_DRAW_INDIRECT_COUNT | wgpu::Features::PRIMITIVE_INDEX,
        limits,
        f,
    );
}

fn module(device: &wgpu::Device, source: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("mesh"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}

const TARGET: [Option<wgpu::ColorTargetState>; 1] = [Some(wgpu::ColorTargetState {
    format: FORMAT,
    blend: None,
    write_mask: wgpu::ColorWrites::ALL,
})];

/// A mesh pipeline of SHADER: from the task stage, or the mesh stage
/// alone with `base` set; `topology` as given.
fn mesh_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    task: bool,
    base: f64,
    topology: wgpu::PrimitiveTopology,
) -> wgpu::RenderPipeline {
    let constants = [("base", base)];
    let options = wgpu::PipelineCompilationOptions {
        constants: if task { &[] } else { &constants },
        ..Default::default()
    };
    device.create_mesh_pipeline(&wgpu::MeshPipelineDescriptor {
        label: Some(if task { "task+mesh" } else { "mesh" }),
        layout: None,
        task: task.then(|| wgpu::TaskState {
            module,
            entry_point: Some("task"),
            compilation_options: Default::default(),
        }),
        mesh: wgpu::MeshState {
            module,
            entry_point: Some(if task { "mesh_from_task" } else { "mesh_alone" }),
            compilation_options: options,
        },
        primitive: wgpu::PrimitiveState {
            topology,
            ..Default::default()
        },
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &TARGET,
        }),
        multiview: None,
        cache: None,
    })
}

fn target(device: &wgpu::Device) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some("target"),
        size: wgpu::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    })
}

fn begin<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    view: &'e wgpu::TextureView,
) -> wgpu::RenderPass<'e> {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("mesh pass"),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                store: wgpu::StoreOp::Store,
            },
        })],
        ..Default::default()
    })
}

/// Draws the scene: the task pipeline directly (top half), the mesh-only
/// pipeline indirectly at columns 0–1 and through a count draw (or a
/// multi-draw without the count feature) at columns 2–3; returns the
/// pixels (`None` on noop, which runs no shaders).
fn scene(gpu: &Gpu) -> Option<Vec<u8>> {
    let device = &gpu.device;
    let shader = module(device, SHADER);
    let list = wgpu::PrimitiveTopology::TriangleList;
    let from_task = mesh_pipeline(device, &shader, true, 0.0, list);
    let first = mesh_pipeline(device, &shader, false, 0.0, list);
    let second = mesh_pipeline(device, &shader, false, 2.0, list);
    // Two argument sets (12 bytes each) and a count of one.
    let args = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("mesh args"),
        contents: bytemuck::cast_slice(&[2u32, 1, 1, 2, 1, 1, 1]),
        usage: wgpu::BufferUsages::INDIRECT,
    });
    let texture = target(device);
    let view = texture.create_view(&Default::default());
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: (SIZE * SIZE * 4) as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let count_draws = device
        .features()
        .contains(wgpu::Features::MULTI_DRAW_INDIRECT_COUNT);
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = begin(&mut encoder, &view);
        pass.set_pipeline(&from_task);
        pass.draw_mesh_tasks(1, 1, 1);
        pass.set_pipeline(&first);
        pass.draw_mesh_tasks_indirect(&args, 0);
        pass.set_pipeline(&second);
        if count_draws {
            pass.multi_draw_mesh_tasks_indirect_count(&args, 12, &args, 24, 1);
        } else {
            pass.multi_draw_mesh_tasks_indirect(&args, 12, 1);
        }
    }
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(SIZE * 4),
                rows_per_image: None,
            },
        },
        texture.size(),
    );
    gpu.queue.submit([encoder.finish()]);
    readback
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let pixels = readback
        .slice(..)
        .get_mapped_range()
        .expect("range")
        .to_vec();
    readback.unmap();
    (gpu.backend != Backend::Noop).then_some(pixels)
}

/// The scene draws the same pixels on keel-wgpu's Vulkan backend as on
/// stock wgpu (the same driver: at most 1 per channel apart), and every
/// draw drew (each column it covers is not the clear colour).
#[test]
fn mesh_draws_render_what_stock_renders() {
    let images = parking_lot::Mutex::new(Vec::new());
    each_mesh_backend(|gpu| {
        let mut pixels = None;
        let error = caught(&gpu.device, || pixels = scene(gpu));
        assert_eq!(error, None, "{}", gpu.name);
        if let Some(p) = pixels {
            images.lock().push((gpu.name, p));
        }
    });
    let images = images.into_inner();
    let [(_, keel), (_, stock)] = images.as_slice() else {
        eprintln!("skip the comparison: {} images", images.len());
        return;
    };
    // The first pixel row of each half, left of the covered columns'
    // diagonals: column c covers pixel x = 8c + 1 in the row just inside
    // its base (image row 0 is the top).
    let at = |x: u32, y: u32| ((y * SIZE + x) * 4) as usize;
    for (column, y) in [
        (0, 30),
        (2, 30),
        (4, 30),
        (6, 30),
        (0, 62),
        (1, 62),
        (2, 62),
        (3, 62),
    ] {
        let i = at(column * 8 + 1, y);
        assert_ne!(
            &keel[i..i + 4],
            &[0, 0, 0, 255],
            "column {column} row {y} not drawn"
        );
    }
    let worst = keel
        .iter()
        .zip(stock)
        .map(|(a, b)| a.abs_diff(*b))
        .max()
        .unwrap_or(0);
    assert!(worst <= 1, "keel-wgpu and stock differ by up to {worst}");
}

/// The first validation error `f` caused on `gpu`, which must have one.
fn error_of(gpu: &Gpu, what: &str, f: impl FnOnce()) -> String {
    caught(&gpu.device, f).unwrap_or_else(|| panic!("{}: {what} accepted", gpu.name))
}

/// Records `draw` in a pass on a fresh target and finishes it.
fn in_pass(gpu: &Gpu, draw: impl FnOnce(&mut wgpu::RenderPass<'_>)) {
    let texture = target(&gpu.device);
    let view = texture.create_view(&Default::default());
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = begin(&mut encoder, &view);
        draw(&mut pass);
    }
    let _ = encoder.finish();
}

/// Each mistake is a validation error on every backend, keel-wgpu's
/// naming what stock's names; none reaches the driver.
#[test]
fn mesh_misuse_is_what_stock_reports() {
    each_mesh_backend(|gpu| {
        let device = &gpu.device;
        let shader = module(device, SHADER);
        let list = wgpu::PrimitiveTopology::TriangleList;
        let mesh = mesh_pipeline(device, &shader, false, 0.0, list);
        let task = mesh_pipeline(device, &shader, true, 0.0, list);
        let vertex = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("vertex"),
            layout: None,
            vertex: wgpu::VertexState {
                module: &shader,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: Default::default(),
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module(
                    device,
                    "@fragment fn fs() -> @location(0) vec4<f32> { return vec4(1.0); }",
                ),
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &TARGET,
            }),
            multiview_mask: None,
            cache: None,
        });
        let expect = |what: &str, needle: &str, f: &dyn Fn()| {
            let e = error_of(gpu, what, f);
            assert!(e.contains(needle), "{}: {what}: {e}", gpu.name);
        };
        expect(
            "a vertex draw with a mesh pipeline",
            "Wrong pipeline type",
            &|| {
                in_pass(gpu, |p| {
                    p.set_pipeline(&mesh);
                    p.draw(0..3, 0..1);
                })
            },
        );
        expect(
            "a mesh draw with a vertex pipeline",
            "Wrong pipeline type",
            &|| {
                in_pass(gpu, |p| {
                    p.set_pipeline(&vertex);
                    p.draw_mesh_tasks(1, 1, 1);
                })
            },
        );
        expect("a mesh draw without a pipeline", "ipeline", &|| {
            in_pass(gpu, |p| p.draw_mesh_tasks(1, 1, 1))
        });
        let limits = device.limits();
        let over = limits.max_mesh_workgroups_per_dimension + 1;
        expect(
            "mesh workgroups past the mesh limit",
            "max_task_mesh_workgroups_per_dimension",
            &|| {
                in_pass(gpu, |p| {
                    p.set_pipeline(&mesh);
                    p.draw_mesh_tasks(over, 1, 1);
                })
            },
        );
        // The same count is within the task limit behind a task stage.
        assert_eq!(
            caught(device, || in_pass(gpu, |p| {
                p.set_pipeline(&task);
                p.draw_mesh_tasks(0, over, 1);
            })),
            None,
            "{}: a zero-size task draw within the task limits",
            gpu.name
        );
        let plain = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("not indirect"),
            size: 64,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        expect(
            "mesh arguments from a buffer without INDIRECT",
            "INDIRECT",
            &|| {
                in_pass(gpu, |p| {
                    p.set_pipeline(&mesh);
                    p.draw_mesh_tasks_indirect(&plain, 0);
                })
            },
        );
        let args = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("mesh args"),
            size: 24,
            usage: wgpu::BufferUsages::INDIRECT,
            mapped_at_creation: false,
        });
        expect("mesh arguments past the buffer", "overrun", &|| {
            in_pass(gpu, |p| {
                p.set_pipeline(&mesh);
                p.multi_draw_mesh_tasks_indirect(&args, 4, 2);
            })
        });
        expect(
            "an unaligned argument offset",
            "not a multiple of 4",
            &|| {
                in_pass(gpu, |p| {
                    p.set_pipeline(&mesh);
                    p.draw_mesh_tasks_indirect(&args, 2);
                })
            },
        );
        expect(
            "a line list for triangles",
            "must match with what the mesh shader declares",
            &|| {
                let _ = mesh_pipeline(
                    device,
                    &shader,
                    false,
                    0.0,
                    wgpu::PrimitiveTopology::LineList,
                );
            },
        );
    });
}

/// A mesh stage's declared outputs over the device's limits, and a mesh
/// stage whose payload the task stage does not give, are errors at
/// creation.
#[test]
fn mesh_stages_are_checked_against_limits_and_each_other() {
    each_mesh_backend(|gpu| {
        let device = &gpu.device;
        let max = device.limits().max_mesh_output_vertices;
        let many = SHADER.replace("array<Vertex, 3>", &format!("array<Vertex, {}>", max + 1));
        let shader = module(device, &many);
        let e = error_of(gpu, "more output vertices than the limit", || {
            let _ = mesh_pipeline(
                device,
                &shader,
                false,
                0.0,
                wgpu::PrimitiveTopology::TriangleList,
            );
        });
        assert!(e.contains("max_mesh_output_vertices"), "{}: {e}", gpu.name);
        // The mesh stage that reads a payload, with no task stage.
        let shader = module(device, SHADER);
        let e = error_of(gpu, "a payload no task stage gives", || {
            let _ = mesh_only_pipeline(device, &shader, "mesh_from_task");
        });
        assert!(e.contains("task payload"), "{}: {e}", gpu.name);
        // A per-primitive output read as a per-vertex input.
        let shader = module(device, PER_PRIMITIVE);
        let e = error_of(gpu, "a per-primitive output read per vertex", || {
            let _ = mesh_only_pipeline(device, &shader, "mesh");
        });
        assert!(e.contains("per_primitive"), "{}: {e}", gpu.name);
        // A primitive index the mesh stage writes and the fragment stage
        // does not read.
        if device.features().contains(wgpu::Features::PRIMITIVE_INDEX) {
            let unread = PER_PRIMITIVE
                .replace(
                    "enable wgpu_mesh_shader;",
                    "enable wgpu_mesh_shader;\nenable primitive_index;",
                )
                .replace(
                    "@location(1) @per_primitive tint: vec4<f32>,",
                    "@builtin(primitive_index) id: u32,",
                )
                .replace(
                    "output.primitives[0].tint = vec4(1.0);",
                    "output.primitives[0].id = 0u;",
                )
                .replace("@location(1) tint: vec4<f32>", "")
                .replace("return tint;", "return vec4(1.0);");
            let shader = module(device, &unread);
            let e = error_of(
                gpu,
                "a primitive index the fragment stage does not read",
                || {
                    let _ = mesh_only_pipeline(device, &shader, "mesh");
                },
            );
            assert!(e.contains("primitive index"), "{}: {e}", gpu.name);
        }
    });
}

/// A mesh pipeline of `shader`'s mesh stage `mesh` (no task stage) and
/// its `fs`.
fn mesh_only_pipeline(
    device: &wgpu::Device,
    shader: &wgpu::ShaderModule,
    mesh: &str,
) -> wgpu::RenderPipeline {
    device.create_mesh_pipeline(&wgpu::MeshPipelineDescriptor {
        label: Some("mesh only"),
        layout: None,
        task: None,
        mesh: wgpu::MeshState {
            module: shader,
            entry_point: Some(mesh),
            compilation_options: Default::default(),
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: shader,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &TARGET,
        }),
        multiview: None,
        cache: None,
    })
}

/// A mesh stage writing a colour per primitive; a fragment stage reading
/// it as an interpolated input.
const PER_PRIMITIVE: &str = "
enable wgpu_mesh_shader;

struct Vertex {
    @builtin(position) position: vec4<f32>,
}
struct Triangle {
    @builtin(triangle_indices) indices: vec3<u32>,
    @location(1) @per_primitive tint: vec4<f32>,
}
struct Output {
    @builtin(vertex_count) vertex_count: u32,
    @builtin(vertices) vertices: array<Vertex, 3>,
    @builtin(primitive_count) primitive_count: u32,
    @builtin(primitives) primitives: array<Triangle, 1>,
}
var<workgroup> output: Output;

@mesh(output) @workgroup_size(1)
fn mesh() {
    output.vertex_count = 3u;
    output.primitive_count = 1u;
    output.vertices[0].position = vec4(-1.0, -1.0, 0.0, 1.0);
    output.vertices[1].position = vec4(3.0, -1.0, 0.0, 1.0);
    output.vertices[2].position = vec4(-1.0, 3.0, 0.0, 1.0);
    output.primitives[0].indices = vec3(0u, 1u, 2u);
    output.primitives[0].tint = vec4(1.0);
}

@fragment fn fs(@location(1) tint: vec4<f32>) -> @location(0) vec4<f32> { return tint; }
";

/// Without `EXPERIMENTAL_MESH_SHADER` a mesh pipeline is refused.
#[test]
fn mesh_pipelines_need_their_feature() {
    common::each_backend(wgpu::Features::empty(), |gpu| {
        let device = &gpu.device;
        let e = error_of(gpu, "a mesh pipeline without the feature", || {
            let shader = module(device, SHADER);
            let _ = mesh_pipeline(
                device,
                &shader,
                false,
                0.0,
                wgpu::PrimitiveTopology::TriangleList,
            );
        });
        assert!(!e.is_empty(), "{}", gpu.name);
    });
}

/// An experimental feature asked for without the program's opt-in
/// (`ExperimentalFeatures::enabled`) is refused by `request_device`, with
/// stock's words.
#[test]
fn experimental_features_need_the_opt_in() {
    let _one = common::ONE_AT_A_TIME.lock();
    for backend in [Backend::Noop, Backend::Vulkan, Backend::Stock] {
        let Some(gpu) = common::open(backend, wgpu::Features::empty(), wgpu::Features::empty())
        else {
            continue;
        };
        let wanted = wgpu::Features::EXPERIMENTAL_MESH_SHADER;
        if !gpu.adapter.features().contains(wanted) {
            eprintln!("skip {}: no mesh shaders", gpu.name);
            continue;
        }
        let refused = pollster::block_on(gpu.adapter.request_device(&wgpu::DeviceDescriptor {
            required_features: wanted,
            required_limits: limits(&gpu.adapter),
            ..Default::default()
        }));
        let e = refused.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains("experimental features are not enabled"),
            "{}: {e}",
            gpu.name
        );
    }
}
