//! Most of what a render pass records, in one frame: dynamic uniform
//! offsets, immediates, a stencil write and test, scissor, viewport and
//! blend constant, direct, indexed, indirect and multi-draw-indirect draws,
//! a render bundle, occlusion queries resolved into a buffer, debug groups
//! and markers; then `clear_buffer`, `copy_texture_to_texture` and the
//! readbacks. Needs `IMMEDIATES`.
//!
//! ```text
//! cargo run -p keel-wgpu --example pass_commands [-- --stock | --noop]
//! ```

mod common;

use wgpu::util::DeviceExt;

const SHADER: &str = "
struct Tint { color: vec4<f32> };
@group(0) @binding(0) var<uniform> tint: Tint;
var<immediate> shift: vec4<f32>;

@vertex
fn vs(@location(0) p: vec2<f32>) -> @builtin(position) vec4<f32> {
    return vec4<f32>(p + shift.xy, shift.z, 1.0);
}

@fragment
fn fs() -> @location(0) vec4<f32> {
    return tint.color;
}
";

const SIZE: u32 = 64;

/// Records the frame; returns the image, the copied image, the occlusion
/// results (one byte each: any sample passed) and the cleared buffer.
pub fn run(gpu: &common::Gpu) -> Vec<u8> {
    let device = &gpu.device;
    let queue = &gpu.queue;
    #[rustfmt::skip]
    let quad: [f32; 8] = [-0.5, -0.5, 0.5, -0.5, 0.5, 0.5, -0.5, 0.5];
    let vertices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("quad"),
        contents: &common::bytes_of_f32(&quad),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let indices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("quad indices"),
        contents: &[0u16, 1, 2, 0, 2, 3]
            .iter()
            .flat_map(|i| i.to_le_bytes())
            .collect::<Vec<u8>>(),
        usage: wgpu::BufferUsages::INDEX,
    });
    // Two 256-byte slots read through a dynamic offset.
    let mut tints = vec![0u8; 512];
    tints[..16].copy_from_slice(&common::bytes_of_f32(&[1.0, 0.2, 0.2, 1.0]));
    tints[256..272].copy_from_slice(&common::bytes_of_f32(&[0.2, 0.4, 1.0, 0.5]));
    let uniforms = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("tints"),
        size: 512,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&uniforms, 0, &tints);
    // draw_indirect: 4 vertices of a fan? no: 6 of the indexed quad below.
    let mut args = Vec::new();
    for word in [3u32, 1, 0, 0] {
        args.extend(word.to_le_bytes()); // draw: 3 vertices, 1 instance
    }
    for _ in 0..2 {
        for word in [6u32, 1, 0, 0, 0] {
            args.extend(word.to_le_bytes()); // draw_indexed: 6 indices
        }
    }
    let indirect = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("indirect"),
        contents: &args,
        usage: wgpu::BufferUsages::INDIRECT,
    });
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("tint"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: true,
                min_binding_size: wgpu::BufferSize::new(16),
            },
            count: None,
        }],
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("tint"),
        layout: &layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &uniforms,
                offset: 0,
                size: wgpu::BufferSize::new(16),
            }),
        }],
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("tint"),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 16,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("commands"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let color_format = wgpu::TextureFormat::Rgba8Unorm;
    let depth_format = wgpu::TextureFormat::Depth24PlusStencil8;
    let stencil = |compare, pass_op| wgpu::StencilFaceState {
        compare,
        fail_op: wgpu::StencilOperation::Keep,
        depth_fail_op: wgpu::StencilOperation::Keep,
        pass_op,
    };
    let pipeline = |label, blend, face: wgpu::StencilFaceState| {
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(label),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: 8,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &wgpu::vertex_attr_array![0 => Float32x2],
                })],
            },
            primitive: Default::default(),
            depth_stencil: Some(wgpu::DepthStencilState {
                format: depth_format,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: wgpu::StencilState {
                    front: face,
                    back: face,
                    read_mask: 0xff,
                    write_mask: 0xff,
                },
                bias: Default::default(),
            }),
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: color_format,
                    blend,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        })
    };
    let writes_stencil = pipeline(
        "writes stencil",
        None,
        stencil(
            wgpu::CompareFunction::Always,
            wgpu::StencilOperation::Replace,
        ),
    );
    let constant_blend = Some(wgpu::BlendState {
        color: wgpu::BlendComponent {
            src_factor: wgpu::BlendFactor::Constant,
            dst_factor: wgpu::BlendFactor::OneMinusConstant,
            operation: wgpu::BlendOperation::Add,
        },
        alpha: wgpu::BlendComponent::OVER,
    });
    let tests_stencil = pipeline(
        "tests stencil",
        constant_blend,
        stencil(
            wgpu::CompareFunction::NotEqual,
            wgpu::StencilOperation::Keep,
        ),
    );
    let plain = pipeline(
        "plain",
        None,
        stencil(wgpu::CompareFunction::Always, wgpu::StencilOperation::Keep),
    );

    let mut bundle_encoder =
        device.create_render_bundle_encoder(&wgpu::RenderBundleEncoderDescriptor {
            label: Some("bundle"),
            color_formats: &[Some(color_format)],
            depth_stencil: Some(wgpu::RenderBundleDepthStencil {
                format: depth_format,
                depth_read_only: false,
                stencil_read_only: false,
            }),
            sample_count: 1,
            multiview: None,
        });
    bundle_encoder.set_pipeline(&plain);
    bundle_encoder.set_bind_group(0, &group, &[256]);
    bundle_encoder.set_immediates(0, &common::bytes_of_f32(&[0.5, 0.5, 0.2, 0.0]));
    bundle_encoder.set_vertex_buffer(0, vertices.slice(..));
    bundle_encoder.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint16);
    bundle_encoder.draw_indexed(0..6, 0, 0..1);
    let bundle = bundle_encoder.finish(&wgpu::RenderBundleDescriptor {
        label: Some("bundle"),
    });

    let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("occlusion"),
        ty: wgpu::QueryType::Occlusion,
        count: 2,
    });
    let resolved = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("occlusion results"),
        size: 16,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let usage = wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC;
    let color = common::texture(gpu, "color", SIZE, color_format, usage, 1, 1);
    let copy_usage = wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::COPY_SRC;
    let copy = common::texture(gpu, "copy", SIZE, color_format, copy_usage, 1, 1);
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
    let scratch = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("scratch"),
        contents: &[0xabu8; 64],
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
    });

    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.push_debug_group("frame");
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("commands"),
            color_attachments: &[Some(common::clear_attachment(
                &color_view,
                wgpu::Color::BLACK,
            ))],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth_view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Store,
                }),
                stencil_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(0),
                    store: wgpu::StoreOp::Store,
                }),
            }),
            occlusion_query_set: Some(&queries),
            ..Default::default()
        });
        pass.push_debug_group("stencil");
        // 1: the quad, left-shifted, writes stencil 1 (occlusion query 0).
        pass.set_pipeline(&writes_stencil);
        pass.set_stencil_reference(1);
        pass.set_bind_group(0, &group, &[0]);
        pass.set_immediates(0, &common::bytes_of_f32(&[-0.3, 0.0, 0.5, 0.0]));
        pass.set_vertex_buffer(0, vertices.slice(..));
        pass.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint16);
        pass.begin_occlusion_query(0);
        pass.draw_indexed(0..6, 0, 0..1);
        pass.end_occlusion_query();
        pass.pop_debug_group();
        // 2: a triangle behind it (depth 0.9), scissored and viewported,
        // blended by the constant where stencil is not 1.
        pass.insert_debug_marker("blend");
        pass.set_pipeline(&tests_stencil);
        pass.set_blend_constant(wgpu::Color {
            r: 0.5,
            g: 0.5,
            b: 0.5,
            a: 0.5,
        });
        pass.set_immediates(0, &common::bytes_of_f32(&[0.2, 0.2, 0.9, 0.0]));
        pass.set_viewport(8.0, 8.0, 48.0, 48.0, 0.0, 1.0);
        pass.set_scissor_rect(0, 0, 48, 64);
        pass.draw_indirect(&indirect, 0);
        // 3: fully hidden behind quad 1 (occlusion query 1 stays 0).
        pass.set_scissor_rect(0, 0, SIZE, SIZE);
        pass.set_viewport(0.0, 0.0, SIZE as f32, SIZE as f32, 0.0, 1.0);
        pass.set_pipeline(&plain);
        pass.set_immediates(0, &common::bytes_of_f32(&[-0.3, 0.0, 0.95, 0.0]));
        pass.begin_occlusion_query(1);
        pass.draw_indexed(0..6, 0, 0..1);
        pass.end_occlusion_query();
        // 4: two indexed draws from the indirect buffer, bottom right.
        pass.set_immediates(0, &common::bytes_of_f32(&[0.6, -0.6, 0.1, 0.0]));
        pass.multi_draw_indexed_indirect(&indirect, 16, 2);
        // 5: the bundle (its own pipeline, offset and immediates).
        pass.execute_bundles([&bundle]);
    }
    encoder.resolve_query_set(&queries, 0..2, &resolved, 0);
    encoder.clear_buffer(&scratch, 16, Some(32));
    encoder.copy_texture_to_texture(color.as_image_copy(), copy.as_image_copy(), color.size());
    encoder.pop_debug_group();
    queue.submit([encoder.finish()]);

    let mut out = common::read_texture(gpu, &color, 4);
    out.extend(common::read_texture(gpu, &copy, 4));
    let occlusion = common::read_buffer(gpu, &resolved, 16);
    for result in occlusion.chunks(8) {
        out.push(u8::from(result.iter().any(|b| *b != 0)));
    }
    out.extend(common::read_buffer(gpu, &scratch, 64));
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    common::main_with(
        "pass_commands",
        wgpu::Features::IMMEDIATES | wgpu::Features::MULTI_DRAW_INDIRECT_COUNT,
        run,
    )
}
