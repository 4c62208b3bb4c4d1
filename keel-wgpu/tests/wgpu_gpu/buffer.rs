//! wgpu `tests/tests/wgpu-gpu/buffer.rs`.

use crate::wgpu_gpu::harness::*;

fn test_empty_buffer_range(ctx: &TestingContext, buffer_size: u64, label: &str) {
    let r = wgpu::BufferUsages::MAP_READ;
    let rw = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::MAP_WRITE;
    for usage in [r, rw] {
        let b0 = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: buffer_size,
            usage,
            mapped_at_creation: false,
        });

        b0.slice(0..0)
            .map_async(wgpu::MapMode::Read, Result::unwrap);

        ctx.poll_wait();

        {
            let view = b0.slice(0..0).get_mapped_range().unwrap();
            assert!(view.is_empty());
        }

        b0.unmap();

        // Map and unmap right away.
        b0.slice(0..0).map_async(wgpu::MapMode::Read, move |_| {});
        b0.unmap();

        // Map multiple times before unmapping.
        b0.slice(0..0).map_async(wgpu::MapMode::Read, move |_| {});
        for _ in 0..3 {
            b0.slice(0..0)
                .map_async(wgpu::MapMode::Read, move |result| {
                    assert!(result.is_err());
                });
        }
        b0.unmap();

        // Write mode.
        if usage == rw {
            b0.slice(0..0)
                .map_async(wgpu::MapMode::Write, Result::unwrap);
            ctx.poll_wait();
            b0.unmap();

            // Map and unmap right away.
            b0.slice(0..0).map_async(wgpu::MapMode::Write, move |_| {});
            b0.unmap();
        }
    }

    let b1 = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: buffer_size,
        usage: rw,
        mapped_at_creation: true,
    });

    {
        let view = b1.slice(0..0).get_mapped_range_mut().unwrap();
        assert!(view.is_empty());
    }

    b1.unmap();

    ctx.poll_wait();
}

gpu_test!(
    empty_buffer,
    TestParameters::default().expect_fail(
        On::ALL,
        "upstream FailureCase::always(): MAP_READ | MAP_WRITE is refused without \
         MAPPABLE_PRIMARY_BUFFERS (an uncaptured validation error)"
    ),
    |ctx| {
        test_empty_buffer_range(&ctx, 2048, "regular buffer");
        test_empty_buffer_range(&ctx, 0, "zero-sized buffer");
    }
);

gpu_test!(map_offset, TestParameters::default(), |ctx| {
    // Writes 16 bytes at the beginning of a buffer mapped with an offset of
    // 32 bytes, copies it into another buffer that is read back, and checks
    // that the bytes are at 32..48: get_mapped_range must not double-count
    // the mapped offset.
    let write_buf = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 256,
        usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let read_buf = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 256,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });

    write_buf
        .slice(32..)
        .map_async(wgpu::MapMode::Write, move |result| {
            result.unwrap();
        });

    ctx.poll_wait();

    {
        let slice = write_buf.slice(32..48);
        let mut view = slice.get_mapped_range_mut().unwrap();
        view.slice(..).fill(2);
    }

    write_buf.unmap();

    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });

    encoder.copy_buffer_to_buffer(&write_buf, 0, &read_buf, 0, 256);

    ctx.queue.submit(Some(encoder.finish()));

    read_buf
        .slice(..)
        .map_async(wgpu::MapMode::Read, Result::unwrap);

    ctx.poll_wait();

    let slice = read_buf.slice(..);
    let view = slice.get_mapped_range().unwrap();
    for byte in &view[0..32] {
        assert_eq!(*byte, 0);
    }
    for byte in &view[32..48] {
        assert_eq!(*byte, 2);
    }
    for byte in &view[48..] {
        assert_eq!(*byte, 0);
    }
});

const ARRAY_SHADER: &str = r#"
    @group(0) @binding(0)
    var<storage, read_write> a: array<u32, 8>;
    @compute @workgroup_size(1)
    fn main() {
        a[0] = a[1];
    }
"#;

fn storage_layout(ctx: &TestingContext, min: Option<u64>) -> wgpu::BindGroupLayout {
    ctx.device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: None,
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: false },
                    has_dynamic_offset: false,
                    min_binding_size: min.and_then(std::num::NonZeroU64::new),
                },
                count: None,
            }],
        })
}

// A pipeline of a shader with a 32-byte variable and a layout whose
// min_binding_size for it is 16: pipeline creation must fail.
gpu_test!(
    minimum_buffer_binding_size_layout,
    TestParameters::default().test_features_limits(),
    |ctx| {
        let shader_module = ctx
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(ARRAY_SHADER.into()),
            });
        let bind_group_layout = storage_layout(&ctx, Some(16));
        let pipeline_layout = ctx
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: &[Some(&bind_group_layout)],
                immediate_size: 0,
            });

        fail(
            &ctx.device,
            || {
                let _ = ctx
                    .device
                    .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: None,
                        layout: Some(&pipeline_layout),
                        module: &shader_module,
                        entry_point: Some("main"),
                        compilation_options: Default::default(),
                        cache: None,
                    });
            },
            Some("shader global resourcebinding { group: 0, binding: 0 } is not available in the pipeline layout"),
        );
    }
);

// A 32-byte variable, a layout with min_binding_size zero ("validate at
// dispatch") and a 16-byte binding: command recording must fail.
gpu_test!(
    minimum_buffer_binding_size_dispatch,
    TestParameters::default().test_features_limits(),
    |ctx| {
        let shader_module = ctx
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(ARRAY_SHADER.into()),
            });
        let bind_group_layout = storage_layout(&ctx, None);
        let pipeline_layout = ctx
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: &[Some(&bind_group_layout)],
                immediate_size: 0,
            });
        let pipeline = ctx
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: None,
                layout: Some(&pipeline_layout),
                module: &shader_module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
        let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 16, // too small for the 32-byte `a`
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &bind_group_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: buffer.as_entire_binding(),
            }],
        });

        fail(
            &ctx.device,
            || {
                let mut encoder = ctx.device.create_command_encoder(&Default::default());
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: None,
                    timestamp_writes: None,
                });
                pass.set_bind_group(0, &bind_group, &[]);
                pass.set_pipeline(&pipeline);
                pass.dispatch_workgroups(1, 1, 1);
                drop(pass);
                let _ = encoder.finish();
            },
            // wgpu 30's words (upstream's, of a later wgpu-core: "buffer is
            // bound with size 16 where the shader expects 32 in group[0]
            // compact index 0").
            Some("the buffer bound at binding index 0 is bound with size 16 where the shader expects 32"),
        );
    }
);

gpu_test!(
    clear_offset_outside_resource_bounds,
    TestParameters::default(),
    |ctx| {
        let size = 16;
        let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let out_of_bounds = size.checked_add(wgpu::COPY_BUFFER_ALIGNMENT).unwrap();
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        encoder.clear_buffer(&buffer, out_of_bounds, None);
        fail(
            &ctx.device,
            || encoder.finish(),
            Some("Clear of 20..20 would end up overrunning the bounds of the buffer of size 16"),
        );
    }
);

gpu_test!(
    clear_offset_plus_size_outside_u64_bounds,
    TestParameters::default(),
    |ctx| {
        let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 16, // unimportant for this test
            usage: wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let max_valid_offset = u64::MAX - (u64::MAX % wgpu::COPY_BUFFER_ALIGNMENT);
        let smallest_aligned_invalid_size = wgpu::COPY_BUFFER_ALIGNMENT;
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        encoder.clear_buffer(
            &buffer,
            max_valid_offset,
            Some(smallest_aligned_invalid_size),
        );
        fail(
            &ctx.device,
            || encoder.finish(),
            Some(concat!(
                "Clear starts at offset 18446744073709551612 with size of 4, ",
                "but these added together exceed `u64::MAX`"
            )),
        );
    }
);
