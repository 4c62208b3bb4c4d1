//! Shadow mapping in two passes: a depth-only pass renders the scene from
//! the light into a depth texture; the second pass renders it from the
//! camera and samples that texture through a comparison sampler
//! (`textureSampleCompare`) to darken what the light cannot see.
//!
//! ```text
//! cargo run -p keel-wgpu --example shadow [-- --stock | --noop]
//! ```

mod common;

use wgpu::util::DeviceExt;

const SHADER: &str = "
struct Light { view_proj: mat4x4<f32> };
@group(0) @binding(0) var<uniform> light: Light;

// The scene lies in [-1, 1]²; z in [0, 1] is height above the floor.
// The light looks straight down: clip = (x, y, 1 - z) scaled.
fn to_light(p: vec3<f32>) -> vec4<f32> {
    return light.view_proj * vec4<f32>(p, 1.0);
}

@vertex
fn vs_shadow(@location(0) p: vec3<f32>) -> @builtin(position) vec4<f32> {
    return to_light(p);
}

@group(0) @binding(1) var shadow_map: texture_depth_2d;
@group(0) @binding(2) var shadow_sampler: sampler_comparison;

struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) light_pos: vec4<f32>,
    @location(1) height: f32,
};

@vertex
fn vs_main(@location(0) p: vec3<f32>) -> Out {
    var out: Out;
    // The camera looks from the side and above: a fixed oblique view.
    out.position = vec4<f32>(p.x * 0.8, p.y * 0.6 + p.z * 0.5 - 0.1, 0.5 - p.z * 0.25, 1.0);
    out.light_pos = to_light(p);
    out.height = p.z;
    return out;
}

@fragment
fn fs_main(in: Out) -> @location(0) vec4<f32> {
    let ndc = in.light_pos.xyz / in.light_pos.w;
    let uv = vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5);
    let lit = textureSampleCompare(shadow_map, shadow_sampler, uv, ndc.z - 0.01);
    let base = select(vec3<f32>(0.3, 0.7, 0.3), vec3<f32>(0.9, 0.3, 0.2), in.height > 0.01);
    return vec4<f32>(base * (0.35 + 0.65 * lit), 1.0);
}
";

const SIZE: u32 = 64;
const SHADOW_SIZE: u32 = 128;

/// Renders both passes and returns the camera's texels.
pub fn run(gpu: &common::Gpu) -> Vec<u8> {
    let device = &gpu.device;
    // A floor quad (z = 0) and a small raised quad (z = 0.5) over it.
    #[rustfmt::skip]
    let vertices: [f32; 24] = [
        -1.0, -1.0, 0.0,  1.0, -1.0, 0.0,  1.0, 1.0, 0.0,  -1.0, 1.0, 0.0,
        -0.3, -0.3, 0.5,  0.3, -0.3, 0.5,  0.3, 0.3, 0.5,  -0.3, 0.3, 0.5,
    ];
    let indices: [u32; 12] = [0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7];
    let vertex_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("scene"),
        contents: &common::bytes_of_f32(&vertices),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let index_bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    let index_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("scene indices"),
        contents: &index_bytes,
        usage: wgpu::BufferUsages::INDEX,
    });
    // Light: orthographic from above, slightly tilted so the shadow falls aside.
    #[rustfmt::skip]
    let light: [f32; 16] = [
        0.9, 0.0, 0.0, 0.0,
        0.0, 0.9, 0.0, 0.0,
        0.35, 0.35, -0.8, 0.0,
        0.0, 0.0, 0.9, 1.0,
    ];
    let light_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("light"),
        contents: &common::bytes_of_f32(&light),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let depth_format = wgpu::TextureFormat::Depth32Float;
    let usage = wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING;
    let shadow_map = common::texture(gpu, "shadow map", SHADOW_SIZE, depth_format, usage, 1, 1);
    let shadow_view = shadow_map.create_view(&Default::default());
    let compare = device.create_sampler(&wgpu::SamplerDescriptor {
        label: Some("shadow"),
        mag_filter: wgpu::FilterMode::Linear,
        min_filter: wgpu::FilterMode::Linear,
        compare: Some(wgpu::CompareFunction::LessEqual),
        ..Default::default()
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("shadow"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let entries = [
        wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::VERTEX,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        },
        wgpu::BindGroupLayoutEntry {
            binding: 1,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Depth,
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        },
        wgpu::BindGroupLayoutEntry {
            binding: 2,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Comparison),
            count: None,
        },
    ];
    let light_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("light"),
        entries: &entries[..1],
    });
    let scene_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("scene"),
        entries: &entries,
    });
    let vertex_layout = [Some(wgpu::VertexBufferLayout {
        array_stride: 12,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &wgpu::vertex_attr_array![0 => Float32x3],
    })];
    let depth_state = |write| wgpu::DepthStencilState {
        format: depth_format,
        depth_write_enabled: Some(write),
        depth_compare: Some(wgpu::CompareFunction::LessEqual),
        stencil: Default::default(),
        bias: Default::default(),
    };
    let shadow_pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("shadow pass"),
        layout: Some(
            &device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: &[Some(&light_layout)],
                immediate_size: 0,
            }),
        ),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs_shadow"),
            compilation_options: Default::default(),
            buffers: &vertex_layout,
        },
        primitive: Default::default(),
        depth_stencil: Some(depth_state(true)),
        multisample: Default::default(),
        fragment: None,
        multiview_mask: None,
        cache: None,
    });
    let color_format = wgpu::TextureFormat::Rgba8Unorm;
    let main_pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("main pass"),
        layout: Some(
            &device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: &[Some(&scene_layout)],
                immediate_size: 0,
            }),
        ),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs_main"),
            compilation_options: Default::default(),
            buffers: &vertex_layout,
        },
        primitive: Default::default(),
        depth_stencil: Some(depth_state(true)),
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs_main"),
            compilation_options: Default::default(),
            targets: &[Some(color_format.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let light_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("light"),
        layout: &light_layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: light_buffer.as_entire_binding(),
        }],
    });
    let scene_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("scene"),
        layout: &scene_layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: light_buffer.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::TextureView(&shadow_view),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::Sampler(&compare),
            },
        ],
    });
    let color = common::texture(
        gpu,
        "color",
        SIZE,
        color_format,
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
    let color_view = color.create_view(&Default::default());
    let depth_view = depth.create_view(&Default::default());
    let depth_attachment = |view| wgpu::RenderPassDepthStencilAttachment {
        view,
        depth_ops: Some(wgpu::Operations {
            load: wgpu::LoadOp::Clear(1.0),
            store: wgpu::StoreOp::Store,
        }),
        stencil_ops: None,
    };
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("shadow pass"),
            depth_stencil_attachment: Some(depth_attachment(&shadow_view)),
            ..Default::default()
        });
        pass.set_pipeline(&shadow_pipeline);
        pass.set_bind_group(0, &light_group, &[]);
        pass.set_vertex_buffer(0, vertex_buffer.slice(..));
        pass.set_index_buffer(index_buffer.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..12, 0, 0..1);
    }
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("main pass"),
            color_attachments: &[Some(common::clear_attachment(
                &color_view,
                wgpu::Color::BLACK,
            ))],
            depth_stencil_attachment: Some(depth_attachment(&depth_view)),
            ..Default::default()
        });
        pass.set_pipeline(&main_pipeline);
        pass.set_bind_group(0, &scene_group, &[]);
        pass.set_vertex_buffer(0, vertex_buffer.slice(..));
        pass.set_index_buffer(index_buffer.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..12, 0, 0..1);
    }
    gpu.queue.submit([encoder.finish()]);
    common::read_texture(gpu, &color, 4)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    common::main_with("shadow", wgpu::Features::empty(), run)
}
