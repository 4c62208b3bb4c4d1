//! wgpu `tests/tests/wgpu-gpu/regression/issue_4024.rs`, `issue_4122.rs`
//! and `issue_6317.rs`.

use std::ops::Range;
use std::sync::Arc;

use parking_lot::Mutex;
use wgpu::*;

use crate::wgpu_gpu::harness::*;

// issue_4024: every map_async callback initiated before an
// on_submitted_work_done callback is invoked before it (the latter was
// once invoked at once when no submission was active).
gpu_test!(
    queue_submitted_callback_ordering,
    TestParameters::default(),
    |ctx| {
        let buffer = ctx.device.create_buffer(&BufferDescriptor {
            label: Some("mappable buffer"),
            size: 4,
            usage: BufferUsages::MAP_READ | BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        // Some work using the buffer; what it is does not matter.
        let mut encoder = ctx
            .device
            .create_command_encoder(&CommandEncoderDescriptor {
                label: Some("encoder"),
            });
        encoder.clear_buffer(&buffer, 0, None);
        ctx.queue.submit(Some(encoder.finish()));
        ctx.poll_wait();

        #[derive(Debug)]
        struct OrderingContext {
            /// Incremented by each callback, which so learns its place.
            counter: u8,
            value_read_map_async: Option<u8>,
            value_read_queue_submitted: Option<u8>,
        }
        let ordering = Arc::new(Mutex::new(OrderingContext {
            counter: 0,
            value_read_map_async: None,
            value_read_queue_submitted: None,
        }));
        let ordering_clone_map_async = Arc::clone(&ordering);
        let ordering_clone_queue_submitted = Arc::clone(&ordering);

        buffer.slice(..).map_async(MapMode::Read, move |_| {
            let mut guard = ordering_clone_map_async.lock();
            guard.value_read_map_async = Some(guard.counter);
            guard.counter += 1;
        });
        // With the bug, invoked at once despite the outstanding map_async.
        ctx.queue.on_submitted_work_done(move || {
            let mut guard = ordering_clone_queue_submitted.lock();
            guard.value_read_queue_submitted = Some(guard.counter);
            guard.counter += 1;
        });
        // No GPU work now, but the callbacks are processed.
        ctx.device.poll(PollType::Poll).unwrap();

        let ordering = Arc::into_inner(ordering).unwrap().into_inner();
        assert_eq!(ordering.counter, 2);
        assert_eq!(ordering.value_read_map_async, Some(0));
        assert_eq!(ordering.value_read_queue_submitted, Some(1));
    }
);

fn fill_test(ctx: &TestingContext, range: Range<u64>, size: u64) -> bool {
    let gpu_buffer = ctx.device.create_buffer(&BufferDescriptor {
        label: Some("gpu_buffer"),
        size,
        usage: BufferUsages::COPY_DST | BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let cpu_buffer = ctx.device.create_buffer(&BufferDescriptor {
        label: Some("cpu_buffer"),
        size,
        usage: BufferUsages::COPY_DST | BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    // The whole buffer set to a value.
    let buffer_contents = vec![0xFF_u8; size as usize];
    ctx.queue.write_buffer(&gpu_buffer, 0, &buffer_contents);
    let mut encoder = ctx
        .device
        .create_command_encoder(&CommandEncoderDescriptor {
            label: Some("encoder"),
        });
    encoder.clear_buffer(&gpu_buffer, range.start, Some(range.end - range.start));
    encoder.copy_buffer_to_buffer(&gpu_buffer, 0, &cpu_buffer, 0, size);
    ctx.queue.submit(Some(encoder.finish()));
    cpu_buffer.slice(..).map_async(MapMode::Read, |_| ());
    ctx.poll_wait();

    let buffer_slice = cpu_buffer.slice(..);
    let buffer_data = buffer_slice.get_mapped_range().unwrap();
    let first_clear_byte = buffer_data
        .iter()
        .enumerate()
        .find_map(|(index, byte)| (*byte == 0x00).then_some(index))
        .expect("No clear happened at all");
    let first_dirty_byte = buffer_data
        .iter()
        .enumerate()
        .skip(first_clear_byte)
        .find_map(|(index, byte)| (*byte != 0x00).then_some(index))
        .unwrap_or(size as usize);
    let second_clear_byte = buffer_data
        .iter()
        .enumerate()
        .skip(first_dirty_byte)
        .find_map(|(index, byte)| (*byte == 0x00).then_some(index));
    if second_clear_byte.is_some() {
        eprintln!(
            "Found multiple cleared ranges instead of a single clear range of {}..{} on a buffer of size {}.",
            range.start, range.end, size
        );
        return false;
    }
    let cleared_range = first_clear_byte as u64..first_dirty_byte as u64;
    if cleared_range != range {
        eprintln!(
            "Cleared range is {}..{}, but the clear range is {}..{} on a buffer of size {}.",
            cleared_range.start, cleared_range.end, range.start, range.end, size
        );
        return false;
    }
    true
}

// issue_4122: Nvidia's vkCmdFillBuffer does not always respect the clear
// range (gfx-rs/wgpu#4122); this hits most of its cases.
gpu_test!(
    clear_buffer_range_respected,
    TestParameters::default(),
    |ctx| {
        let mut succeeded = true;
        for power in 4..14 {
            let size = 1 << power;
            for start_offset in (0..=36).step_by(4) {
                for size_offset in (0..=36).step_by(4) {
                    let range = start_offset..size + size_offset + start_offset;
                    succeeded &= fill_test(&ctx, range, 1 << 16);
                }
            }
        }
        assert!(succeeded);
    }
);

// issue_6317: a validation error in a submitted command buffer is not
// fatal.
gpu_test!(
    non_fatal_errors_in_queue_submit,
    TestParameters::default()
        .downlevel_flags(DownlevelFlags::COMPUTE_SHADERS)
        .limits(Limits::downlevel_defaults()),
    |ctx| {
        let shader_with_trivial_bind_group = concat!(
            "@group(0) @binding(0) var<storage, read_write> stuff: u32;\n",
            "\n",
            "@compute @workgroup_size(1) fn main() { stuff = 2u; }\n"
        );
        let module = ctx.device.create_shader_module(ShaderModuleDescriptor {
            label: None,
            source: ShaderSource::Wgsl(shader_with_trivial_bind_group.into()),
        });
        let compute_pipeline = ctx
            .device
            .create_compute_pipeline(&ComputePipelineDescriptor {
                label: None,
                layout: None,
                module: &module,
                entry_point: None,
                compilation_options: Default::default(),
                cache: Default::default(),
            });
        fail(
            &ctx.device,
            || {
                let mut command_encoder = ctx.device.create_command_encoder(&Default::default());
                {
                    let mut pass = command_encoder.begin_compute_pass(&Default::default());
                    pass.set_pipeline(&compute_pipeline);
                    // No bind group, deliberately: a validation error.
                    pass.dispatch_workgroups(1, 1, 1);
                }
                let _idx = ctx.queue.submit([command_encoder.finish()]);
            },
            Some(concat!(
                "The current set ComputePipeline with '' label ",
                "expects a BindGroup to be set at index 0"
            )),
        )
    }
);
