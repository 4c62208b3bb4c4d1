//! A textured, depth-tested, instanced mesh: a cube drawn four times
//! (per-instance offsets in a second vertex buffer), indexed, with a
//! checkerboard uploaded by `Queue::write_texture`, a uniform matrix
//! written by `Queue::write_buffer`, and a depth buffer.
//!
//! ```text
//! cargo run -p keel-wgpu --example textured_mesh [-- --stock | --noop]
//! ```

mod common;

use wgpu::util::DeviceExt;

const SHADER: &str = "
struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
    @location(1) shade: f32,
};

@group(0) @binding(0) var<uniform> transform: mat4x4<f32>;
@group(0) @binding(1) var checker: texture_2d<f32>;
@group(0) @binding(2) var nearest: sampler;

@vertex
fn vs(@location(0) position: vec3<f32>, @location(1) uv: vec2<f32>, @location(2) offset: vec3<f32>) -> Out {
    let world = position * 0.35 + offset;
    var out: Out;
    out.position = transform * vec4<f32>(world, 1.0);
    out.uv = uv;
    out.shade = 0.6 + 0.4 * (position.z * 0.5 + 0.5);
    return out;
}

@fragment
fn fs(in: Out) -> @location(0) vec4<f32> {
    let c = textureSample(checker, nearest, in.uv);
    return vec4<f32>(c.rgb * in.shade, 1.0);
}
";

const SIZE: u32 = 96;

fn cube() -> (Vec<f32>, Vec<u16>) {
    let faces: [([f32; 3], [f32; 3], [f32; 3]); 6] = [
        ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]),
        ([-1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
        ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]),
        ([0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
    ];
    let mut vertices = Vec::new();
    let mut indices = Vec::new();
    for (n, u, v) in faces {
        let base = (vertices.len() / 5) as u16;
        for (su, sv) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            for k in 0..3 {
                vertices.push(n[k] + su * u[k] + sv * v[k]);
            }
            vertices.push((su + 1.0) * 0.5);
            vertices.push((sv + 1.0) * 0.5);
        }
        indices.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    (vertices, indices)
}

/// A rotation about Y then X, scaled into clip space (column-major).
fn transform() -> [f32; 16] {
    let (a, b) = (0.6f32, 0.45f32);
    let (ca, sa, cb, sb) = (a.cos(), a.sin(), b.cos(), b.sin());
    // x' = ca*x + sa*z; z1 = -sa*x + ca*z; y' = cb*y - sb*z1; z' = sb*y + cb*z1
    let s = 0.8;
    [
        s * ca,
        s * sb * sa,
        0.25 * (-cb * sa),
        0.0,
        0.0,
        s * cb,
        0.25 * sb,
        0.0,
        s * sa,
        s * -sb * ca,
        0.25 * (cb * ca),
        0.0,
        0.0,
        0.0,
        0.5,
        1.0,
    ]
}

/// Draws the scene and returns the colour target's texels.
pub fn run(gpu: &common::Gpu) -> Vec<u8> {
    let device = &gpu.device;
    let (vertices, indices) = cube();
    let vertex_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("cube"),
        contents: &common::bytes_of_f32(&vertices),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let index_bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    let index_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("cube indices"),
        contents: &index_bytes,
        usage: wgpu::BufferUsages::INDEX,
    });
    let offsets = [
        -0.45f32, -0.45, 0.0, 0.45, -0.45, 0.0, -0.45, 0.45, 0.0, 0.45, 0.45, 0.0,
    ];
    let instance_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("instances"),
        contents: &common::bytes_of_f32(&offsets),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let uniform = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("transform"),
        size: 64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    gpu.queue
        .write_buffer(&uniform, 0, &common::bytes_of_f32(&transform()));

    let checker = common::texture(
        gpu,
        "checker",
        8,
        wgpu::TextureFormat::Rgba8Unorm,
        wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        1,
        1,
    );
    let texels: Vec<u8> = (0..64)
        .flat_map(|i| {
            let on = ((i % 8) + (i / 8)) % 2 == 0;
            if on {
                [230, 180, 40, 255]
            } else {
                [40, 90, 200, 255]
            }
        })
        .collect();
    gpu.queue.write_texture(
        checker.as_image_copy(),
        &texels,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(32),
            rows_per_image: None,
        },
        checker.size(),
    );
    let checker_view = checker.create_view(&Default::default());
    let sampler = device.create_sampler(&wgpu::SamplerDescriptor::default());

    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("mesh"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let color_format = wgpu::TextureFormat::Rgba8Unorm;
    let depth_format = wgpu::TextureFormat::Depth32Float;
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("mesh"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[
                Some(wgpu::VertexBufferLayout {
                    array_stride: 20,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x2],
                }),
                Some(wgpu::VertexBufferLayout {
                    array_stride: 12,
                    step_mode: wgpu::VertexStepMode::Instance,
                    attributes: &wgpu::vertex_attr_array![2 => Float32x3],
                }),
            ],
        },
        primitive: wgpu::PrimitiveState {
            cull_mode: Some(wgpu::Face::Back),
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
            targets: &[Some(color_format.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("mesh"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: uniform.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::TextureView(&checker_view),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::Sampler(&sampler),
            },
        ],
    });
    let usage = wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC;
    let color = common::texture(gpu, "color", SIZE, color_format, usage, 1, 1);
    let depth = common::texture(
        gpu,
        "depth",
        SIZE,
        depth_format,
        wgpu::TextureUsages::RENDER_ATTACHMENT,
        1,
        1,
    );
    let color_view = color.create_view(&Default::default());
    let depth_view = depth.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("mesh"),
            color_attachments: &[Some(common::clear_attachment(
                &color_view,
                wgpu::Color::BLACK,
            ))],
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
        pass.set_bind_group(0, &group, &[]);
        pass.set_vertex_buffer(0, vertex_buffer.slice(..));
        pass.set_vertex_buffer(1, instance_buffer.slice(..));
        pass.set_index_buffer(index_buffer.slice(..), wgpu::IndexFormat::Uint16);
        pass.draw_indexed(0..indices.len() as u32, 0, 0..4);
    }
    gpu.queue.submit([encoder.finish()]);
    common::read_texture(gpu, &color, 4)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    common::main_with("textured_mesh", wgpu::Features::empty(), run)
}
