//! Compute on storage buffers with readback: the Collatz step counts of
//! 1..=4096 (times a pipeline-overridable constant, set to 3), from a
//! buffer made with `create_buffer_init`, through a pipeline whose layout
//! is derived from the shader (`layout: None`).
//!
//! ```text
//! cargo run -p keel-wgpu --example compute_readback            # keel-wgpu, Vulkan
//! cargo run -p keel-wgpu --example compute_readback -- --stock # stock wgpu
//! ```

mod common;

use wgpu::util::DeviceExt;

const SHADER: &str = "
@group(0) @binding(0) var<storage, read_write> values: array<u32>;
override scale: u32 = 1u;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    var n = values[id.x];
    var steps = 0u;
    while (n > 1u && steps < 1000u) {
        if (n % 2u == 0u) { n = n / 2u; } else { n = 3u * n + 1u; }
        steps = steps + 1u;
    }
    values[id.x] = steps * scale;
}
";

/// The example's work; returns the step counts as bytes.
pub fn run(gpu: &common::Gpu) -> Vec<u8> {
    let device = &gpu.device;
    let input: Vec<u32> = (1..=4096).collect();
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
    let values = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("values"),
        contents: &bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("collatz"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("collatz"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &[("scale", 3.0)],
            ..Default::default()
        },
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: values.as_entire_binding(),
        }],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(input.len() as u32 / 64, 1, 1);
    }
    gpu.queue.submit([encoder.finish()]);
    common::read_buffer(gpu, &values, bytes.len() as u64)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    common::main_with("compute_readback", wgpu::Features::empty(), |gpu| {
        let out = run(gpu);
        // Collatz(27) takes 111 steps; the override makes it 333.
        let steps = u32::from_le_bytes([
            out[26 * 4],
            out[26 * 4 + 1],
            out[26 * 4 + 2],
            out[26 * 4 + 3],
        ]);
        if gpu.which != common::Which::KeelNoop {
            assert_eq!(steps, 333, "collatz(27) × scale");
        }
        out
    })
}
