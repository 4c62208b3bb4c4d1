//! Render to a texture and read it back: a triangle with per-vertex
//! colours from a vertex buffer, cleared background, 64×64 RGBA8.
//!
//! ```text
//! cargo run -p keel-wgpu --example render_to_texture            # keel-wgpu
//! cargo run -p keel-wgpu --example render_to_texture -- --stock # stock wgpu
//! ```

mod common;

use wgpu::util::DeviceExt;

const SHADER: &str = "
struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec3<f32>,
};

@vertex
fn vs(@location(0) position: vec2<f32>, @location(1) color: vec3<f32>) -> Out {
    return Out(vec4<f32>(position, 0.0, 1.0), color);
}

@fragment
fn fs(in: Out) -> @location(0) vec4<f32> {
    return vec4<f32>(in.color, 1.0);
}
";

/// The size of the target.
pub const SIZE: u32 = 64;

/// Renders and returns the texels (RGBA8, rows packed).
pub fn run(gpu: &common::Gpu) -> Vec<u8> {
    let device = &gpu.device;
    #[rustfmt::skip]
    let vertices: [f32; 15] = [
        0.0, 0.8, 1.0, 0.0, 0.0,
        -0.8, -0.8, 0.0, 1.0, 0.0,
        0.8, -0.8, 0.0, 0.0, 1.0,
    ];
    let bytes: Vec<u8> = vertices.iter().flat_map(|v| v.to_le_bytes()).collect();
    let vertex_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("vertices"),
        contents: &bytes,
        usage: wgpu::BufferUsages::VERTEX,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("triangle"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("triangle"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[Some(wgpu::VertexBufferLayout {
                array_stride: 20,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![0 => Float32x2, 1 => Float32x3],
            })],
        },
        primitive: Default::default(),
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
    let target = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("target"),
        size: wgpu::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("triangle"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: 0.1,
                        g: 0.2,
                        b: 0.3,
                        a: 1.0,
                    }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            ..Default::default()
        });
        pass.set_pipeline(&pipeline);
        pass.set_vertex_buffer(0, vertex_buffer.slice(..));
        pass.draw(0..3, 0..1);
    }
    gpu.queue.submit([encoder.finish()]);
    common::read_texture(gpu, &target, 4)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    common::main_with("render_to_texture", wgpu::Features::empty(), run)
}
