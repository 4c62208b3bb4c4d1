//! MSAA with resolve: a triangle drawn into a 4× multisampled target that
//! resolves into a single-sampled texture, which is read back (the
//! multisampled contents are discarded).
//!
//! ```text
//! cargo run -p keel-wgpu --example msaa [-- --stock | --noop]
//! ```

mod common;

const SHADER: &str = "
@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    var p = array<vec2<f32>, 3>(vec2<f32>(-0.7, -0.6), vec2<f32>(0.8, -0.2), vec2<f32>(-0.1, 0.9));
    return vec4<f32>(p[i], 0.0, 1.0);
}

@fragment
fn fs() -> @location(0) vec4<f32> {
    return vec4<f32>(1.0, 0.8, 0.2, 1.0);
}
";

const SIZE: u32 = 48;

/// Draws and returns the resolved texels.
pub fn run(gpu: &common::Gpu) -> Vec<u8> {
    let device = &gpu.device;
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("msaa"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("msaa"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: wgpu::MultisampleState {
            count: 4,
            ..Default::default()
        },
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(format.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let multisampled = common::texture(
        gpu,
        "msaa",
        SIZE,
        format,
        wgpu::TextureUsages::RENDER_ATTACHMENT,
        1,
        4,
    );
    let usage = wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC;
    let resolved = common::texture(gpu, "resolved", SIZE, format, usage, 1, 1);
    let ms_view = multisampled.create_view(&Default::default());
    let resolved_view = resolved.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("msaa"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &ms_view,
                depth_slice: None,
                resolve_target: Some(&resolved_view),
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                    store: wgpu::StoreOp::Discard,
                },
            })],
            ..Default::default()
        });
        pass.set_pipeline(&pipeline);
        pass.draw(0..3, 0..1);
    }
    gpu.queue.submit([encoder.finish()]);
    common::read_texture(gpu, &resolved, 4)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    common::main_with("msaa", wgpu::Features::empty(), run)
}
