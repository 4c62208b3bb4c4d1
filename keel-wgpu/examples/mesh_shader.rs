//! Mesh shaders through plain wgpu (`EXPERIMENTAL_MESH_SHADER`): a task
//! stage per row of an 8×8 grid launches one mesh workgroup per cell with
//! the row in its payload, and each mesh workgroup writes a hexagon (7
//! vertices, 6 triangles) coloured by its cell; rows whose task stage
//! culls them (every fourth) launch nothing. A depth test lets the
//! hexagons, which overlap their neighbours, resolve by depth. 128×128
//! RGBA8, read back.
//!
//! ```text
//! cargo run -p keel-wgpu --example mesh_shader            # keel-wgpu
//! cargo run -p keel-wgpu --example mesh_shader -- --stock # stock wgpu
//! ```

mod common;

const SHADER: &str = "
enable wgpu_mesh_shader;

const GRID: u32 = 8u;

struct Vertex {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec3<f32>,
}
struct Triangle {
    @builtin(triangle_indices) indices: vec3<u32>,
}
struct Output {
    @builtin(vertex_count) vertex_count: u32,
    @builtin(vertices) vertices: array<Vertex, 7>,
    @builtin(primitive_count) primitive_count: u32,
    @builtin(primitives) primitives: array<Triangle, 6>,
}
var<workgroup> output: Output;
var<task_payload> row: u32;

@task @payload(row) @workgroup_size(1)
fn task(@builtin(workgroup_id) id: vec3<u32>) -> @builtin(mesh_task_size) vec3<u32> {
    row = id.x;
    // Every fourth row is culled: it launches no mesh workgroup.
    if id.x % 4u == 3u { return vec3(0u, 1u, 1u); }
    return vec3(GRID, 1u, 1u);
}

@mesh(output) @payload(row) @workgroup_size(1)
fn mesh(@builtin(workgroup_id) id: vec3<u32>) {
    let cell = 2.0 / f32(GRID);
    let centre = vec2(-1.0 + (f32(id.x) + 0.5) * cell, -1.0 + (f32(row) + 0.5) * cell);
    // A hexagon a little wider than its cell: neighbours overlap.
    let radius = cell * 0.62;
    let depth = f32((id.x * 5u + row * 3u) % 7u) / 8.0;
    let color = vec3(f32(id.x) / f32(GRID - 1u), f32(row) / f32(GRID - 1u), depth + 0.1);
    output.vertex_count = 7u;
    output.primitive_count = 6u;
    output.vertices[0].position = vec4(centre, depth, 1.0);
    output.vertices[0].color = color;
    for (var i = 0u; i < 6u; i++) {
        let angle = f32(i) * 1.0471975512;
        let p = centre + radius * vec2(cos(angle), sin(angle));
        output.vertices[i + 1u].position = vec4(p, depth, 1.0);
        output.vertices[i + 1u].color = color * 0.6;
        output.primitives[i].indices = vec3(0u, i + 1u, (i + 1u) % 6u + 1u);
    }
}

@fragment fn fs(@location(0) color: vec3<f32>) -> @location(0) vec4<f32> {
    return vec4(color, 1.0);
}
";

/// The size of the target.
pub const SIZE: u32 = 128;

/// Renders and returns the texels (RGBA8, rows packed).
pub fn run(gpu: &common::Gpu) -> Vec<u8> {
    let device = &gpu.device;
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("hexagons"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let depth_format = wgpu::TextureFormat::Depth32Float;
    let pipeline = device.create_mesh_pipeline(&wgpu::MeshPipelineDescriptor {
        label: Some("hexagons"),
        layout: None,
        task: Some(wgpu::TaskState {
            module: &module,
            entry_point: Some("task"),
            compilation_options: Default::default(),
        }),
        mesh: wgpu::MeshState {
            module: &module,
            entry_point: Some("mesh"),
            compilation_options: Default::default(),
        },
        primitive: wgpu::PrimitiveState {
            cull_mode: None,
            ..Default::default()
        },
        depth_stencil: Some(wgpu::DepthStencilState {
            format: depth_format,
            depth_write_enabled: Some(true),
            depth_compare: Some(wgpu::CompareFunction::Less),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(format.into())],
        }),
        multiview: None,
        cache: None,
    });
    let target = common::texture(
        gpu,
        "target",
        SIZE,
        format,
        wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        1,
        1,
    );
    let depth = common::texture(
        gpu,
        "depth",
        SIZE,
        depth_format,
        wgpu::TextureUsages::RENDER_ATTACHMENT,
        1,
        1,
    );
    let view = target.create_view(&Default::default());
    let depth_view = depth.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("hexagons"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: 0.05,
                        g: 0.05,
                        b: 0.1,
                        a: 1.0,
                    }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth_view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            ..Default::default()
        });
        pass.set_pipeline(&pipeline);
        // One task workgroup per row.
        pass.draw_mesh_tasks(8, 1, 1);
    }
    gpu.queue.submit([encoder.finish()]);
    common::read_texture(gpu, &target, 4)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    common::main_with("mesh_shader", wgpu::Features::EXPERIMENTAL_MESH_SHADER, run)
}
