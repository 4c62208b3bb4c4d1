//! wgpu `tests/tests/wgpu-gpu/draw_indirect.rs`.
//!
//! Every case draws a quad (or four instanced quads) covering the whole
//! 256x256 R8Unorm target through `draw_indirect`/`draw_indexed_indirect`.
//! A case whose arguments are in range must cover every texel; one whose
//! arguments reach past its vertex, index or instance data (or has a first
//! instance without `INDIRECT_FIRST_INSTANCE`) must be dropped whole by the
//! GPU check of indirect arguments, leaving the cleared target untouched.
//! Those last cases also run on keel noop (upstream's `enable_noop()`),
//! where nothing is ever drawn; the covering ones need shaders.

use wgpu::util::DeviceExt;

use crate::wgpu_gpu::harness::*;

const SIZE: u32 = 256;

/// Two triangles over all of clip space.
const FULL_QUAD: &[f32] = &[
    -1.0, -1.0, 1.0, 1.0, -1.0, 1.0, //
    -1.0, -1.0, 1.0, -1.0, 1.0, 1.0,
];

/// Two triangles over the middle quarter of clip space.
const SMALL_QUAD: &[f32] = &[
    -0.5, -0.5, 0.5, 0.5, -0.5, 0.5, //
    -0.5, -0.5, 0.5, -0.5, 0.5, 0.5,
];

/// Per-instance offsets moving `SMALL_QUAD` to each quarter of the target
/// (bottom left, top right, top left, bottom right).
const QUAD_OFFSETS: &[f32] = &[-0.5, -0.5, 0.5, 0.5, -0.5, 0.5, 0.5, -0.5];

/// `QUAD_OFFSETS` after an offset that would move a quad off the target:
/// drawn from first instance 1.
const QUAD_OFFSETS_AFTER_UNUSED: &[f32] = &[
    10.0, 10.0, //
    -0.5, -0.5, 0.5, 0.5, -0.5, 0.5, 0.5, -0.5,
];

/// The corners of clip space (bottom left, top right, top left, bottom
/// right), for `QUAD_INDICES`.
const FULL_CORNERS: &[f32] = &[-1.0, -1.0, 1.0, 1.0, -1.0, 1.0, 1.0, -1.0];

/// The corners of the middle quarter, in `FULL_CORNERS`' order.
const SMALL_CORNERS: &[f32] = &[-0.5, -0.5, 0.5, 0.5, -0.5, 0.5, 0.5, -0.5];

const QUAD_INDICES: &[u32] = &[0, 1, 2, 0, 3, 1];

/// Positions straight through.
const SHADER_PLAIN: &str = "
@vertex
fn vs_main(@location(0) position: vec2f) -> @builtin(position) vec4f {
    return vec4f(position, 0.0, 1.0);
}

@fragment
fn fs_main() -> @location(0) vec4f {
    return vec4f(1.0);
}
";

/// Positions moved by a per-instance offset.
const SHADER_OFFSET: &str = "
@vertex
fn vs_main(@location(0) position: vec2f, @location(1) position_offset: vec2f) -> @builtin(position) vec4f {
    return vec4f(position + position_offset, 0.0, 1.0);
}

@fragment
fn fs_main() -> @location(0) vec4f {
    return vec4f(1.0);
}
";

/// What one case draws and with which indirect arguments.
struct Case {
    vertices: &'static [f32],
    /// `Some` for an indexed draw (`Uint32`).
    indices: Option<&'static [u32]>,
    /// `Some` for an instanced draw: per-instance offsets at location 1.
    instances: Option<&'static [f32]>,
    /// First vertex, or first index of an indexed draw.
    first: u32,
    /// Vertex count, or index count of an indexed draw.
    count: u32,
    first_instance: u32,
    instance_count: u32,
}

impl Case {
    /// One set of indirect arguments (16 bytes, or 20 indexed).
    fn args(&self) -> Vec<u8> {
        match self.indices {
            None => wgpu::util::DrawIndirectArgs {
                vertex_count: self.count,
                instance_count: self.instance_count,
                first_vertex: self.first,
                first_instance: self.first_instance,
            }
            .as_bytes()
            .to_vec(),
            Some(_) => wgpu::util::DrawIndexedIndirectArgs {
                index_count: self.count,
                instance_count: self.instance_count,
                first_index: self.first,
                base_vertex: 0,
                first_instance: self.first_instance,
            }
            .as_bytes()
            .to_vec(),
        }
    }
}

fn draw(first_vertex: u32, vertex_count: u32) -> Case {
    Case {
        vertices: FULL_QUAD,
        indices: None,
        instances: None,
        first: first_vertex,
        count: vertex_count,
        first_instance: 0,
        instance_count: 1,
    }
}

fn instanced_draw(
    first_vertex: u32,
    vertex_count: u32,
    first_instance: u32,
    instance_count: u32,
) -> Case {
    Case {
        vertices: SMALL_QUAD,
        indices: None,
        instances: Some(QUAD_OFFSETS),
        first: first_vertex,
        count: vertex_count,
        first_instance,
        instance_count,
    }
}

/// Four instances from first instance 1, past an unused offset.
fn instanced_draw_from_instance_1() -> Case {
    Case {
        vertices: SMALL_QUAD,
        indices: None,
        instances: Some(QUAD_OFFSETS_AFTER_UNUSED),
        first: 0,
        count: 6,
        first_instance: 1,
        instance_count: 4,
    }
}

fn indexed_draw(first_index: u32, index_count: u32) -> Case {
    Case {
        vertices: FULL_CORNERS,
        indices: Some(QUAD_INDICES),
        instances: None,
        first: first_index,
        count: index_count,
        first_instance: 0,
        instance_count: 1,
    }
}

fn instanced_indexed_draw(
    first_index: u32,
    index_count: u32,
    first_instance: u32,
    instance_count: u32,
) -> Case {
    Case {
        vertices: SMALL_CORNERS,
        indices: Some(QUAD_INDICES),
        instances: Some(QUAD_OFFSETS),
        first: first_index,
        count: index_count,
        first_instance,
        instance_count,
    }
}

fn parameters(features: wgpu::Features) -> TestParameters {
    TestParameters::default()
        .downlevel_flags(wgpu::DownlevelFlags::INDIRECT_EXECUTION)
        .features(features)
        .limits(wgpu::Limits::downlevel_defaults())
}

/// A pipeline of `SHADER_PLAIN`, or of `SHADER_OFFSET` with a second,
/// per-instance vertex buffer, drawing into R8Unorm.
fn pipeline(ctx: &TestingContext, instanced: bool) -> wgpu::RenderPipeline {
    let source = if instanced {
        SHADER_OFFSET
    } else {
        SHADER_PLAIN
    };
    let shader = ctx
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
    let position_attributes = wgpu::vertex_attr_array![0 => Float32x2];
    let offset_attributes = wgpu::vertex_attr_array![1 => Float32x2];
    let mut layouts = vec![Some(wgpu::VertexBufferLayout {
        array_stride: 8,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &position_attributes,
    })];
    if instanced {
        layouts.push(Some(wgpu::VertexBufferLayout {
            array_stride: 8,
            step_mode: wgpu::VertexStepMode::Instance,
            attributes: &offset_attributes,
        }));
    }
    ctx.device
        .create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: None,
            layout: None,
            vertex: wgpu::VertexState {
                module: &shader,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &layouts,
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &shader,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: wgpu::TextureFormat::R8Unorm,
                    blend: None,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        })
}

/// The 256x256 R8Unorm texture drawn into, and a buffer to read it back.
struct Target {
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    readback: wgpu::Buffer,
}

impl Target {
    fn new(ctx: &TestingContext) -> Self {
        let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d {
                width: SIZE,
                height: SIZE,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::R8Unorm,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        let readback = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: u64::from(SIZE * SIZE),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        Self {
            texture,
            view,
            readback,
        }
    }

    /// A render pass into the target, cleared to zero (the default
    /// operations).
    fn pass<'e>(&self, encoder: &'e mut wgpu::CommandEncoder) -> wgpu::RenderPass<'e> {
        encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: None,
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &self.view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations::default(),
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        })
    }

    /// Copies the target out after what `encoder` recorded, submits, and
    /// returns its texels, one byte each, row by row.
    fn read(&self, ctx: &TestingContext, mut encoder: wgpu::CommandEncoder) -> Vec<u8> {
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: &self.texture,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &self.readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(SIZE),
                    rows_per_image: None,
                },
            },
            wgpu::Extent3d {
                width: SIZE,
                height: SIZE,
                depth_or_array_layers: 1,
            },
        );
        ctx.queue.submit([encoder.finish()]);
        let slice = self.readback.slice(..);
        slice.map_async(wgpu::MapMode::Read, |_| ());
        ctx.poll_wait();
        let view = slice.get_mapped_range().unwrap();
        let texels = view.to_vec();
        drop(view);
        self.readback.unmap();
        texels
    }
}

fn buffer_init(ctx: &TestingContext, contents: &[u8], usage: wgpu::BufferUsages) -> wgpu::Buffer {
    ctx.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents,
            usage,
        })
}

/// Draws `case` and asserts that every texel is covered (`drawn`) or that
/// none is.
///
/// As upstream, two passes each issue two draws from each of two indirect
/// buffers (holding four copies of the arguments), so that the indirect
/// check sees several draws per buffer, several buffers and several passes;
/// in the second pass the second draw reads from offset 20.
fn run_case(ctx: &TestingContext, case: Case, drawn: bool) {
    const PASSES: u64 = 2;
    const DRAWS: u64 = 2;

    let pipeline = pipeline(ctx, case.instances.is_some());
    let vertex_buffer = buffer_init(
        ctx,
        bytemuck::cast_slice(case.vertices),
        wgpu::BufferUsages::VERTEX,
    );
    let index_buffer = case.indices.map(|indices| {
        buffer_init(
            ctx,
            bytemuck::cast_slice(indices),
            wgpu::BufferUsages::INDEX,
        )
    });
    let instance_buffer = case.instances.map(|offsets| {
        buffer_init(
            ctx,
            bytemuck::cast_slice(offsets),
            wgpu::BufferUsages::VERTEX,
        )
    });

    let args = case.args();
    let mut indirect_bytes = Vec::new();
    for _ in 0..PASSES * DRAWS {
        indirect_bytes.extend_from_slice(&args);
    }
    let indirect_a = buffer_init(ctx, &indirect_bytes, wgpu::BufferUsages::INDIRECT);
    let indirect_b = buffer_init(ctx, &indirect_bytes, wgpu::BufferUsages::INDIRECT);

    let target = Target::new(ctx);
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    for pass_index in 0..PASSES {
        let mut pass = target.pass(&mut encoder);
        pass.set_pipeline(&pipeline);
        pass.set_vertex_buffer(0, vertex_buffer.slice(..));
        if let Some(instance_buffer) = &instance_buffer {
            pass.set_vertex_buffer(1, instance_buffer.slice(..));
        }
        if let Some(index_buffer) = &index_buffer {
            pass.set_index_buffer(index_buffer.slice(..), wgpu::IndexFormat::Uint32);
        }
        for draw_index in 0..DRAWS {
            let offset = pass_index * draw_index * 20;
            for indirect in [&indirect_a, &indirect_b] {
                if index_buffer.is_some() {
                    pass.draw_indexed_indirect(indirect, offset);
                } else {
                    pass.draw_indirect(indirect, offset);
                }
            }
        }
    }
    let texels = target.read(ctx, encoder);

    let want = if drawn { u8::MAX } else { 0 };
    let wrong = texels.iter().filter(|&&texel| texel != want).count();
    assert!(
        wrong == 0,
        "{wrong} of {} texels are not {want} (drawn: {drawn})",
        texels.len()
    );
}

gpu_test!(
    draw,
    parameters(wgpu::Features::empty()).skip_noop_shaders(),
    |ctx| run_case(&ctx, draw(0, 6), true)
);

gpu_test!(draw_oob_start, parameters(wgpu::Features::empty()), |ctx| {
    run_case(&ctx, draw(1, 6), false)
});

gpu_test!(draw_oob_count, parameters(wgpu::Features::empty()), |ctx| {
    run_case(&ctx, draw(0, 7), false)
});

gpu_test!(
    instanced_draw,
    parameters(wgpu::Features::empty()).skip_noop_shaders(),
    |ctx| run_case(&ctx, instanced_draw(0, 6, 0, 4), true)
);

gpu_test!(
    instanced_draw_oob_start,
    parameters(wgpu::Features::empty()),
    |ctx| run_case(&ctx, instanced_draw(1, 6, 0, 4), false)
);

gpu_test!(
    instanced_draw_oob_count,
    parameters(wgpu::Features::empty()),
    |ctx| run_case(&ctx, instanced_draw(0, 7, 0, 4), false)
);

gpu_test!(
    instanced_draw_oob_instance_start,
    parameters(wgpu::Features::INDIRECT_FIRST_INSTANCE),
    |ctx| run_case(&ctx, instanced_draw(0, 6, 1, 4), false)
);

gpu_test!(
    instanced_draw_oob_instance_count,
    parameters(wgpu::Features::empty()),
    |ctx| run_case(&ctx, instanced_draw(0, 6, 0, 5), false)
);

gpu_test!(
    instanced_draw_with_non_zero_first_instance,
    parameters(wgpu::Features::INDIRECT_FIRST_INSTANCE).skip_noop_shaders(),
    |ctx| run_case(&ctx, instanced_draw_from_instance_1(), true)
);

// Without `INDIRECT_FIRST_INSTANCE` a non-zero first instance drops the
// draw.
gpu_test!(
    instanced_draw_with_non_zero_first_instance_missing_feature,
    parameters(wgpu::Features::empty()),
    |ctx| run_case(&ctx, instanced_draw_from_instance_1(), false)
);

gpu_test!(
    indexed_draw,
    parameters(wgpu::Features::empty()).skip_noop_shaders(),
    |ctx| run_case(&ctx, indexed_draw(0, 6), true)
);

gpu_test!(
    indexed_draw_oob_start,
    parameters(wgpu::Features::empty()),
    |ctx| run_case(&ctx, indexed_draw(1, 6), false)
);

gpu_test!(
    indexed_draw_oob_count,
    parameters(wgpu::Features::empty()),
    |ctx| run_case(&ctx, indexed_draw(0, 7), false)
);

gpu_test!(
    instanced_indexed_draw,
    parameters(wgpu::Features::empty()).skip_noop_shaders(),
    |ctx| run_case(&ctx, instanced_indexed_draw(0, 6, 0, 4), true)
);

gpu_test!(
    instanced_indexed_draw_oob_start,
    parameters(wgpu::Features::empty()),
    |ctx| run_case(&ctx, instanced_indexed_draw(1, 6, 0, 4), false)
);

gpu_test!(
    instanced_indexed_draw_oob_count,
    parameters(wgpu::Features::empty()),
    |ctx| run_case(&ctx, instanced_indexed_draw(0, 7, 0, 4), false)
);

gpu_test!(
    instanced_indexed_draw_oob_instance_start,
    parameters(wgpu::Features::INDIRECT_FIRST_INSTANCE),
    |ctx| run_case(&ctx, instanced_indexed_draw(0, 6, 1, 4), false)
);

gpu_test!(
    instanced_indexed_draw_oob_instance_count,
    parameters(wgpu::Features::empty()),
    |ctx| run_case(&ctx, instanced_indexed_draw(0, 6, 0, 5), false)
);

// Draws whose 16 bytes of arguments start at offsets 0, 4 and 8 of one
// buffer, so that the second and third straddle the 16-byte argument
// size. The first two cover the top half of the target (its left and
// right quarters); the third draws nothing, leaving the bottom half
// cleared.
gpu_test!(
    indirect_buffer_offsets,
    parameters(wgpu::Features::INDIRECT_FIRST_INSTANCE).skip_noop_shaders(),
    |ctx| {
        // Read at offset 0: 9 vertices, 9 instances, first vertex 1, first
        // instance 0 (the top left quad, from the three triangles after
        // the leading vertex). At offset 4: 9 vertices, 1 instance, first
        // vertex 0, first instance 9 (the top right quad). At offset 8: 1
        // vertex, 0 instances, first vertex 9, first instance 10: no
        // triangle.
        let indirect_args: [u32; 6] = [9, 9, 1, 0, 9, 10];
        let offsets: [u64; 3] = [0, 4, 8];

        let vertices: [f32; 20] = [
            // A leading top left vertex: drawn from vertex 0 it makes the
            // first triangle the top left half of the quad.
            -0.5, 0.5, //
            -0.5, -0.5, 0.5, 0.5, -0.5, 0.5, //
            -0.5, -0.5, 0.5, -0.5, 0.5, 0.5, //
            // The previous triangle again.
            -0.5, -0.5, 0.5, -0.5, 0.5, 0.5,
        ];
        // Nine instances to the top left quarter, then one to the top
        // right.
        let mut instance_offsets = [-0.5f32, 0.5].repeat(9);
        instance_offsets.extend_from_slice(&[0.5, 0.5]);

        let pipeline = pipeline(&ctx, true);
        let vertex_buffer = buffer_init(
            &ctx,
            bytemuck::cast_slice(&vertices),
            wgpu::BufferUsages::VERTEX,
        );
        let instance_buffer = buffer_init(
            &ctx,
            bytemuck::cast_slice(&instance_offsets),
            wgpu::BufferUsages::VERTEX,
        );
        let indirect_buffer = buffer_init(
            &ctx,
            bytemuck::cast_slice(&indirect_args),
            wgpu::BufferUsages::INDIRECT,
        );

        let target = Target::new(&ctx);
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        {
            let mut pass = target.pass(&mut encoder);
            pass.set_pipeline(&pipeline);
            pass.set_vertex_buffer(0, vertex_buffer.slice(..));
            pass.set_vertex_buffer(1, instance_buffer.slice(..));
            for offset in offsets {
                pass.draw_indirect(&indirect_buffer, offset);
            }
        }
        let texels = target.read(&ctx, encoder);

        let (top, bottom) = texels.split_at(texels.len() / 2);
        let top_wrong = top.iter().filter(|&&texel| texel != u8::MAX).count();
        let bottom_wrong = bottom.iter().filter(|&&texel| texel != 0).count();
        assert!(
            top_wrong == 0 && bottom_wrong == 0,
            "{top_wrong} texels of the top half not covered, \
             {bottom_wrong} of the bottom half covered"
        );
    }
);
