//! Timestamps around passes: a compute pass and a render pass each write
//! a timestamp at their start and end (`timestamp_writes`), the four are
//! resolved into a buffer and read back. The output is what does not
//! depend on the clock: the compute result, and whether every pass ended
//! no earlier than it began. Needs `TIMESTAMP_QUERY`; adapters without it
//! say so and exit cleanly.
//!
//! ```text
//! cargo run -p keel-wgpu --example timestamps [-- --stock | --noop]
//! ```

mod common;

use wgpu::util::DeviceExt;

const SHADER: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;

@compute @workgroup_size(64)
fn double(@builtin(global_invocation_id) id: vec3<u32>) {
    data[id.x] = data[id.x] * 2u + 1u;
}

@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs() -> @location(0) vec4<f32> {
    return vec4<f32>(0.5, 0.25, 1.0, 1.0);
}
";

/// Runs the timed passes; returns the compute result and one byte per
/// pass (1 when its end is not before its start).
pub fn run(gpu: &common::Gpu) -> Vec<u8> {
    let device = &gpu.device;
    let input: Vec<u8> = (0..256u32).flat_map(|v| v.to_le_bytes()).collect();
    let data = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("data"),
        contents: &input,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    });
    let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("timestamps"),
        ty: wgpu::QueryType::Timestamp,
        count: 4,
    });
    let resolved = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("resolved"),
        size: 32,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("timed"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let compute = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("double"),
        layout: None,
        module: &module,
        entry_point: Some("double"),
        compilation_options: Default::default(),
        cache: None,
    });
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let render = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("fill"),
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
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &compute.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: data.as_entire_binding(),
        }],
    });
    let target = common::texture(
        gpu,
        "target",
        32,
        format,
        wgpu::TextureUsages::RENDER_ATTACHMENT,
        1,
        1,
    );
    let view = target.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("timed compute"),
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: &queries,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            }),
        });
        pass.set_pipeline(&compute);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(4, 1, 1);
    }
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("timed render"),
            color_attachments: &[Some(common::clear_attachment(&view, wgpu::Color::BLACK))],
            timestamp_writes: Some(wgpu::RenderPassTimestampWrites {
                query_set: &queries,
                beginning_of_pass_write_index: Some(2),
                end_of_pass_write_index: Some(3),
            }),
            ..Default::default()
        });
        pass.set_pipeline(&render);
        pass.draw(0..3, 0..1);
    }
    encoder.resolve_query_set(&queries, 0..4, &resolved, 0);
    gpu.queue.submit([encoder.finish()]);
    let stamps: Vec<u64> = common::read_buffer(gpu, &resolved, 32)
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect();
    println!(
        "compute pass {:.1} µs, render pass {:.1} µs",
        stamps[1].wrapping_sub(stamps[0]) as f64 * f64::from(gpu.queue.get_timestamp_period())
            / 1e3,
        stamps[3].wrapping_sub(stamps[2]) as f64 * f64::from(gpu.queue.get_timestamp_period())
            / 1e3,
    );
    let mut out = common::read_buffer(gpu, &data, input.len() as u64);
    out.push(u8::from(stamps[1] >= stamps[0]));
    out.push(u8::from(stamps[3] >= stamps[2]));
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    common::main_with("timestamps", wgpu::Features::TIMESTAMP_QUERY, run)
}
