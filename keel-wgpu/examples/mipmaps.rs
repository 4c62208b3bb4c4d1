//! Mipmap generation by render passes: level 0 of a 64×64 texture is
//! uploaded, and each next level is drawn from the one before it with a
//! linear sampler (a full-screen triangle per level, each level a render
//! target while the previous one is sampled). Every level is read back.
//!
//! ```text
//! cargo run -p keel-wgpu --example mipmaps [-- --stock | --noop]
//! ```

mod common;

const SHADER: &str = "
struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
};

@vertex
fn vs(@builtin(vertex_index) i: u32) -> Out {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    var out: Out;
    out.position = vec4<f32>(uv * vec2<f32>(2.0, -2.0) + vec2<f32>(-1.0, 1.0), 0.0, 1.0);
    out.uv = uv;
    return out;
}

@group(0) @binding(0) var source: texture_2d<f32>;
@group(0) @binding(1) var linear: sampler;

@fragment
fn fs(in: Out) -> @location(0) vec4<f32> {
    return textureSample(source, linear, in.uv);
}
";

const SIZE: u32 = 64;
const LEVELS: u32 = 7;

/// Generates the chain and returns every level's texels, level 0 first.
pub fn run(gpu: &common::Gpu) -> Vec<u8> {
    let device = &gpu.device;
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let usage = wgpu::TextureUsages::TEXTURE_BINDING
        | wgpu::TextureUsages::RENDER_ATTACHMENT
        | wgpu::TextureUsages::COPY_DST
        | wgpu::TextureUsages::COPY_SRC;
    let texture = common::texture(gpu, "mipmapped", SIZE, format, usage, LEVELS, 1);
    let texels: Vec<u8> = (0..SIZE * SIZE)
        .flat_map(|i| {
            let (x, y) = (i % SIZE, i / SIZE);
            [
                (x * 4) as u8,
                (y * 4) as u8,
                if (x / 8 + y / 8) % 2 == 0 { 255 } else { 0 },
                255,
            ]
        })
        .collect();
    gpu.queue.write_texture(
        texture.as_image_copy(),
        &texels,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(SIZE * 4),
            rows_per_image: None,
        },
        texture.size(),
    );
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("blit"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("blit"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
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
    let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
        mag_filter: wgpu::FilterMode::Linear,
        min_filter: wgpu::FilterMode::Linear,
        ..Default::default()
    });
    let views: Vec<wgpu::TextureView> = (0..LEVELS)
        .map(|mip| {
            texture.create_view(&wgpu::TextureViewDescriptor {
                base_mip_level: mip,
                mip_level_count: Some(1),
                ..Default::default()
            })
        })
        .collect();
    let layout = pipeline.get_bind_group_layout(0);
    let mut encoder = device.create_command_encoder(&Default::default());
    for mip in 1..LEVELS as usize {
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&views[mip - 1]),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&sampler),
                },
            ],
        });
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("mip"),
            color_attachments: &[Some(common::clear_attachment(
                &views[mip],
                wgpu::Color::BLACK,
            ))],
            ..Default::default()
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.draw(0..3, 0..1);
    }
    gpu.queue.submit([encoder.finish()]);
    (0..LEVELS)
        .flat_map(|mip| common::read_mip(gpu, &texture, mip, 4))
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    common::main_with("mipmaps", wgpu::Features::empty(), run)
}
