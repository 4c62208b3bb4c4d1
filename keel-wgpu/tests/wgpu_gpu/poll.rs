//! wgpu `tests/tests/wgpu-gpu/poll.rs`.

use std::num::NonZeroU64;

use wgpu::{
    BindGroupDescriptor, BindGroupEntry, BindGroupLayoutDescriptor, BindGroupLayoutEntry,
    BindingResource, BindingType, BufferBindingType, BufferDescriptor, BufferUsages, CommandBuffer,
    CommandEncoderDescriptor, ComputePassDescriptor, PollType, ShaderStages,
};

use crate::wgpu_gpu::harness::*;

fn generate_dummy_work(ctx: &TestingContext) -> CommandBuffer {
    let buffer = ctx.device.create_buffer(&BufferDescriptor {
        label: None,
        size: 16,
        usage: BufferUsages::UNIFORM,
        mapped_at_creation: false,
    });
    let bind_group_layout = ctx
        .device
        .create_bind_group_layout(&BindGroupLayoutDescriptor {
            label: None,
            entries: &[BindGroupLayoutEntry {
                binding: 0,
                visibility: ShaderStages::COMPUTE,
                ty: BindingType::Buffer {
                    ty: BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: Some(NonZeroU64::new(16).unwrap()),
                },
                count: None,
            }],
        });
    let bind_group = ctx.device.create_bind_group(&BindGroupDescriptor {
        label: None,
        layout: &bind_group_layout,
        entries: &[BindGroupEntry {
            binding: 0,
            resource: BindingResource::Buffer(buffer.as_entire_buffer_binding()),
        }],
    });
    let mut cmd_buf = ctx
        .device
        .create_command_encoder(&CommandEncoderDescriptor::default());
    let mut cpass = cmd_buf.begin_compute_pass(&ComputePassDescriptor::default());
    cpass.set_bind_group(0, &bind_group, &[]);
    drop(cpass);
    cmd_buf.finish()
}

fn wait_for(index: wgpu::SubmissionIndex) -> PollType {
    PollType::Wait {
        submission_index: Some(index),
        timeout: None,
    }
}

gpu_test!(wait, TestParameters::default(), |ctx| {
    let cmd_buf = generate_dummy_work(&ctx);
    ctx.queue.submit(Some(cmd_buf));
    ctx.poll_wait();
});

gpu_test!(double_wait, TestParameters::default(), |ctx| {
    let cmd_buf = generate_dummy_work(&ctx);
    ctx.queue.submit(Some(cmd_buf));
    ctx.poll_wait();
    ctx.poll_wait();
});

gpu_test!(wait_on_submission, TestParameters::default(), |ctx| {
    let cmd_buf = generate_dummy_work(&ctx);
    let index = ctx.queue.submit(Some(cmd_buf));
    ctx.device.poll(wait_for(index)).unwrap();
});

gpu_test!(
    double_wait_on_submission,
    TestParameters::default(),
    |ctx| {
        let cmd_buf = generate_dummy_work(&ctx);
        let index = ctx.queue.submit(Some(cmd_buf));
        ctx.device.poll(wait_for(index.clone())).unwrap();
        ctx.device.poll(wait_for(index)).unwrap();
    }
);

gpu_test!(wait_out_of_order, TestParameters::default(), |ctx| {
    let cmd_buf1 = generate_dummy_work(&ctx);
    let cmd_buf2 = generate_dummy_work(&ctx);
    let index1 = ctx.queue.submit(Some(cmd_buf1));
    let index2 = ctx.queue.submit(Some(cmd_buf2));
    ctx.device.poll(wait_for(index2)).unwrap();
    ctx.device.poll(wait_for(index1)).unwrap();
});

// A command buffer submitted to the wrong device: a wait poll must not hang.
gpu_test!(
    wait_after_bad_submission,
    TestParameters::default(),
    |ctx| {
        let (device2, queue2) = ctx.another_device();
        let command_buffer1 = ctx
            .device
            .create_command_encoder(&CommandEncoderDescriptor::default())
            .finish();
        // Panics: the command buffer is of the wrong device, and queue
        // submission errors are fatal.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            queue2.submit([command_buffer1]);
        }));
        assert!(result.is_err());
        // Must not hang: the failed submission allocated no fence value that
        // only later work would signal.
        device2.poll(PollType::wait_indefinitely()).unwrap();
    }
);
