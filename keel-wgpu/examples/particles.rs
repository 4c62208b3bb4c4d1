//! A compute-then-render particle simulation: 1,024 particles in a storage
//! buffer are advanced by eight compute dispatches (each reads what the
//! last wrote), then drawn as points with the same buffer bound as a
//! vertex buffer; the image and the final particle state are read back.
//!
//! ```text
//! cargo run -p keel-wgpu --example particles [-- --stock | --noop]
//! ```

mod common;

use wgpu::util::DeviceExt;

const SHADER: &str = "
struct Particle { pos: vec2<f32>, vel: vec2<f32> };
@group(0) @binding(0) var<storage, read_write> particles: array<Particle>;

@compute @workgroup_size(64)
fn step(@builtin(global_invocation_id) id: vec3<u32>) {
    var p = particles[id.x];
    p.vel = p.vel + vec2<f32>(0.0, -0.02);
    p.pos = p.pos + p.vel * 0.1;
    if (p.pos.y < -0.9) { p.pos.y = -0.9; p.vel.y = -p.vel.y * 0.5; }
    if (abs(p.pos.x) > 0.9) { p.vel.x = -p.vel.x; p.pos.x = clamp(p.pos.x, -0.9, 0.9); }
    particles[id.x] = p;
}

struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) speed: f32,
};

@vertex
fn vs(@location(0) pos: vec2<f32>, @location(1) vel: vec2<f32>) -> Out {
    return Out(vec4<f32>(pos, 0.0, 1.0), length(vel));
}

@fragment
fn fs(in: Out) -> @location(0) vec4<f32> {
    return vec4<f32>(1.0, clamp(in.speed * 2.0, 0.0, 1.0), 0.2, 1.0);
}
";

const COUNT: u32 = 1024;
const SIZE: u32 = 64;

/// Simulates and draws; returns the image followed by the particles.
pub fn run(gpu: &common::Gpu) -> Vec<u8> {
    let device = &gpu.device;
    let initial: Vec<f32> = (0..COUNT)
        .flat_map(|i| {
            let t = i as f32 / COUNT as f32;
            let x = t * 1.6 - 0.8;
            let y = ((i * 37) % 97) as f32 / 97.0 * 0.8;
            let vx = ((i * 13) % 29) as f32 / 29.0 * 0.2 - 0.1;
            [x, y, vx, 0.0]
        })
        .collect();
    let particles = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("particles"),
        contents: &common::bytes_of_f32(&initial),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::VERTEX
            | wgpu::BufferUsages::COPY_SRC,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("particles"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let compute = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("step"),
        layout: None,
        module: &module,
        entry_point: Some("step"),
        compilation_options: Default::default(),
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &compute.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: particles.as_entire_binding(),
        }],
    });
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let render = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("points"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[Some(wgpu::VertexBufferLayout {
                array_stride: 16,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![0 => Float32x2, 1 => Float32x2],
            })],
        },
        primitive: wgpu::PrimitiveState {
            topology: wgpu::PrimitiveTopology::PointList,
            ..Default::default()
        },
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(format.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let usage = wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC;
    let target = common::texture(gpu, "points", SIZE, format, usage, 1, 1);
    let view = target.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&compute);
        pass.set_bind_group(0, &group, &[]);
        for _ in 0..8 {
            pass.dispatch_workgroups(COUNT / 64, 1, 1);
        }
    }
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("points"),
            color_attachments: &[Some(common::clear_attachment(&view, wgpu::Color::BLACK))],
            ..Default::default()
        });
        pass.set_pipeline(&render);
        pass.set_vertex_buffer(0, particles.slice(..));
        pass.draw(0..COUNT, 0..1);
    }
    gpu.queue.submit([encoder.finish()]);
    let mut out = common::read_texture(gpu, &target, 4);
    out.extend(common::read_buffer(gpu, &particles, COUNT as u64 * 16));
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    common::main_with("particles", wgpu::Features::empty(), run)
}
