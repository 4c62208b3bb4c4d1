//! The first compute dispatch, start to finish: instance → adapter → device
//! → WGSL → storage buffers with upload and readback → bind group →
//! pipeline → dispatch → submit → wait → check → destroy everything.
//!
//! ```text
//! cargo run --example first_dispatch
//! RUST_LOG=warn cargo run --example first_dispatch   # show validation messages
//! ```
//!
//! It runs on Vulkan with the validation layer on, squares 4096 numbers and
//! fails unless every result is right and the layer reported no error. The
//! CPU writes the input through a mapping and the submit makes it visible;
//! the GPU's output is read after a barrier to `MAP_READ` and the fence
//! wait: the host-visibility rule of `keel_hal::BufferMapping`.

use keel_hal::wgt::{BufferUsages as B, ShaderStages};
use keel_hal::{layout, vulkan, BindGroupEntry as E, BufferUses as U, Memory};
use keel_hal::{Adapter as _, CommandEncoder as _, Device as _, Instance as _, Queue as _};
use keel_hal::{BindGroupDescriptor, BindGroupLayoutDescriptor, BufferBarrier, BufferDescriptor};
use keel_hal::{ComputePipelineDescriptor, InstanceDescriptor, InstanceFlags};
use keel_hal::{PipelineLayoutDescriptor, ShaderModuleDescriptor};

const SHADER: &str = "
@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    output[id.x] = input[id.x] * input[id.x];
}
";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let input: Vec<u32> = (0..4096).collect();
    let size = 4 * input.len() as u64;
    // SAFETY: every object comes from this device and is destroyed below,
    // after the fence wait, before the device is dropped.
    unsafe {
        let desc = InstanceDescriptor::with_flags(InstanceFlags::VALIDATION);
        let instance = vulkan::Instance::init(&desc)?;
        if !instance.validation_enabled() {
            return Err("the Vulkan validation layer is not installed (scripts/setup.sh)".into());
        }
        let validation = instance.validation_counter();
        let adapters = instance.enumerate_adapters();
        let adapter = adapters.first().ok_or("no Vulkan adapter")?;
        let open = adapter.adapter.open(&Default::default())?;
        let (device, queue) = (open.device, open.queue);

        let buffer =
            |usage, memory| device.create_buffer(&BufferDescriptor::new(size, usage, memory));
        let src = buffer(B::STORAGE | B::MAP_WRITE, Memory::Upload)?;
        let dst = buffer(B::STORAGE | B::MAP_READ, Memory::Readback)?;
        // The CPU writes the input; the submit makes it visible to the GPU.
        device.map_buffer(&src)?.write_slice(0, &input)?;

        let entries = [
            layout::storage_buffer(0, ShaderStages::COMPUTE, true),
            layout::storage_buffer(1, ShaderStages::COMPUTE, false),
        ];
        let group_layout =
            device.create_bind_group_layout(&BindGroupLayoutDescriptor::new(&entries))?;
        let pipeline_layout =
            device.create_pipeline_layout(&PipelineLayoutDescriptor::new(&[&group_layout]))?;
        let bindings = [E::buffer(0, &src), E::buffer(1, &dst)];
        let group =
            device.create_bind_group(&BindGroupDescriptor::new(&group_layout, &bindings))?;
        let module = device.create_shader_module(&ShaderModuleDescriptor::wgsl(SHADER))?;
        let desc = ComputePipelineDescriptor::new(&pipeline_layout, &module, "main");
        let pipeline = device.create_compute_pipeline(&desc)?;

        let mut encoder = device.create_command_encoder(&Default::default())?;
        encoder.begin_encoding(Some("first dispatch"))?;
        encoder.transition_buffers(&[
            BufferBarrier::new(&src, U::empty(), U::STORAGE_READ_ONLY),
            BufferBarrier::new(&dst, U::empty(), U::STORAGE_READ_WRITE),
        ]);
        encoder.begin_compute_pass(&Default::default());
        encoder.set_compute_pipeline(&pipeline);
        encoder.set_bind_group(&pipeline_layout, 0, &group, &[]);
        encoder.dispatch([input.len() as u32 / 64, 1, 1]);
        encoder.end_compute_pass();
        // For the CPU to read what the GPU wrote: a barrier to MAP_READ, then the fence wait.
        let to_cpu = BufferBarrier::new(&dst, U::STORAGE_READ_WRITE, U::MAP_READ);
        encoder.transition_buffers(&[to_cpu]);
        let commands = encoder.end_encoding()?;
        let fence = device.create_fence()?;
        queue.submit(&[&commands], &[], &fence, 1)?;
        device.wait(&fence, 1, None)?;
        let output: Vec<u32> = device.map_buffer(&dst)?.read_vec(0, input.len())?;
        let right = output == input.iter().map(|i| i * i).collect::<Vec<_>>();

        encoder.reset_all([commands]);
        device.destroy_command_encoder(encoder);
        device.destroy_fence(fence);
        device.destroy_compute_pipeline(pipeline);
        device.destroy_shader_module(module);
        device.destroy_bind_group(group);
        device.destroy_pipeline_layout(pipeline_layout);
        device.destroy_bind_group_layout(group_layout);
        device.destroy_buffer(src);
        device.destroy_buffer(dst);
        // Dropping the device and the instance lets the layer report leaks too.
        drop((device, queue, adapters, instance));
        let errors = validation.errors();
        println!(
            "{} squares right: {right}; validation errors: {errors}",
            input.len()
        );
        if !right || errors != 0 {
            return Err("wrong results or validation errors (see the log above)".into());
        }
    }
    Ok(())
}
