//! wgpu `tests/tests/wgpu-gpu/device.rs`.

use std::sync::atomic::AtomicBool;

use crate::wgpu_gpu::harness::*;

gpu_test!(
    cross_device_bind_group_usage,
    TestParameters::default().expect_fail(
        On::ALL,
        "upstream FailureCase::always(): a layout of another device is an error \
         (uncaptured here: wgpu's default handler panics)"
    ),
    |ctx| {
        // A bind group with a layout of another device.
        let (device2, _) =
            pollster::block_on(ctx.adapter.request_device(&Default::default())).unwrap();
        {
            let bind_group_layout =
                device2.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: None,
                    entries: &[],
                });
            let _bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &bind_group_layout,
                entries: &[],
            });
        }
        ctx.device.poll(wgpu::PollType::Poll).unwrap();
    }
);

gpu_test!(
    device_lifetime_check,
    TestParameters::default()
        .expect_fail(
            On::KEEL,
            "Instance::generate_report is wgpu-core's: None on a custom backend \
             (keel's equivalent, live_counts, is checked after every keel run)"
        )
        .expect_fail(
            On::STOCK,
            "wgpu 30: the report is the same after the device and queue are dropped"
        ),
    |ctx| {
        ctx.instance.poll_all(false);
        let pre_report = ctx.instance.generate_report().unwrap();
        let TestingContext {
            instance,
            device,
            queue,
            ..
        } = ctx;
        drop(queue);
        drop(device);
        let post_report = instance.generate_report().unwrap();
        assert_ne!(
            pre_report, post_report,
            "Queue and Device has not been dropped as expected"
        );
    }
);

gpu_test!(multiple_devices, TestParameters::default(), |ctx| {
    use pollster::FutureExt as _;
    ctx.adapter
        .request_device(&wgpu::DeviceDescriptor::default())
        .block_on()
        .expect("failed to create device");
    ctx.adapter
        .request_device(&wgpu::DeviceDescriptor::default())
        .block_on()
        .expect("failed to create device");
});

// `RequestDeviceError`s carry some diagnostic information.
gpu_test!(
    request_device_error_message_native,
    TestParameters::default(),
    |ctx| {
        let device_error =
            pollster::block_on(ctx.adapter.request_device(&wgpu::DeviceDescriptor {
                // Absurd limits force a failure.
                required_features: wgpu::Features::all(),
                required_limits: wgpu::Limits {
                    max_texture_dimension_1d: u32::MAX,
                    max_texture_dimension_2d: u32::MAX,
                    max_texture_dimension_3d: u32::MAX,
                    max_bind_groups: u32::MAX,
                    max_immediate_size: u32::MAX,
                    ..Default::default()
                },
                ..Default::default()
            }))
            .unwrap_err();
        let device_error = device_error.to_string();
        // The message whenever wgpu-core is the implementation (wgpu 30
        // prints the features' names, no longer "Features {").
        let expected = "Unsupported features were requested: ";
        assert!(device_error.contains(expected), "{device_error}");
    }
);

// After `device.destroy()` every operation is a no-op, per spec.
gpu_test!(
    device_destroy_then_more,
    TestParameters::default().features(wgpu::Features::CLEAR_TEXTURE),
    |ctx| {
        let texture_extent = wgpu::Extent3d {
            width: 512,
            height: 512,
            depth_or_array_layers: 1,
        };
        let texture = |usage| {
            ctx.device.create_texture(&wgpu::TextureDescriptor {
                label: None,
                size: texture_extent,
                mip_level_count: 2,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Rg8Uint,
                usage,
                view_formats: &[],
            })
        };
        let texture_for_view = texture(wgpu::TextureUsages::RENDER_ATTACHMENT);
        let target_view = texture_for_view.create_view(&wgpu::TextureViewDescriptor::default());
        let texture_for_read = texture(wgpu::TextureUsages::COPY_SRC);
        let texture_for_write = texture(wgpu::TextureUsages::COPY_DST);

        let buffer = |usage, mapped_at_creation| {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 256,
                usage,
                mapped_at_creation,
            })
        };
        let buffer_source = buffer(
            wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            false,
        );
        let buffer_dest = buffer(
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            false,
        );
        let buffer_for_map = buffer(
            wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            false,
        );
        let buffer_for_unmap = buffer(
            wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            true,
        );

        let shader_module = ctx
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(std::borrow::Cow::Borrowed("")),
            });

        let encoder = || {
            ctx.device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor::default())
        };
        let mut encoder_for_clear = encoder();
        let mut encoder_for_compute_pass = encoder();
        let mut encoder_for_render_pass = encoder();
        let mut encoder_for_buffer_buffer_copy = encoder();
        let mut encoder_for_buffer_texture_copy = encoder();
        let mut encoder_for_texture_buffer_copy = encoder();
        let mut encoder_for_texture_texture_copy = encoder();

        // Destroy the device: everything after becomes a no-op.
        ctx.device.destroy();

        // Each of these would fail on a live device; on a lost one they
        // must not.
        let _ = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: ctx.device.limits().max_buffer_size * 2,
            usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });

        let _ = ctx.device.create_texture(&wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d {
                width: ctx.device.limits().max_texture_dimension_2d * 2,
                height: ctx.device.limits().max_texture_dimension_2d * 2,
                depth_or_array_layers: 1,
            },
            mip_level_count: 2,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rg8Uint,
            usage: wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });

        encoder_for_clear.clear_texture(
            &texture_for_write,
            &wgpu::ImageSubresourceRange {
                aspect: wgpu::TextureAspect::StencilOnly, // no stencil here
                base_mip_level: 0,
                mip_level_count: None,
                base_array_layer: 0,
                array_layer_count: None,
            },
        );
        ctx.queue.submit([encoder_for_clear.finish()]);

        let query_set = ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: None,
            ty: wgpu::QueryType::Occlusion,
            count: u32::MAX, // can be at most 4096
        });

        let pass = encoder_for_compute_pass.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: &query_set,
                beginning_of_pass_write_index: None,
                end_of_pass_write_index: None,
            }),
        });
        drop(pass);
        ctx.queue.submit([encoder_for_compute_pass.finish()]);

        let pass = encoder_for_render_pass.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: None,
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                ops: wgpu::Operations::default(),
                resolve_target: None,
                view: &target_view,
                depth_slice: Some(u32::MAX), // not for 2D views
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        drop(pass);
        ctx.queue.submit([encoder_for_render_pass.finish()]);

        encoder_for_buffer_buffer_copy.copy_buffer_to_buffer(
            &buffer_source,
            0,
            &buffer_dest,
            0,
            u64::MAX, // out of bounds for both buffers
        );
        ctx.queue.submit([encoder_for_buffer_buffer_copy.finish()]);

        encoder_for_buffer_texture_copy.copy_buffer_to_texture(
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer_source,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: u64::MAX, // out of bounds for the buffer
                    bytes_per_row: Some(4),
                    rows_per_image: None,
                },
            },
            texture_for_write.as_image_copy(),
            texture_extent,
        );
        ctx.queue.submit([encoder_for_buffer_texture_copy.finish()]);

        encoder_for_texture_buffer_copy.copy_texture_to_buffer(
            texture_for_read.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer_source,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: u64::MAX, // out of bounds for the buffer
                    bytes_per_row: Some(4),
                    rows_per_image: None,
                },
            },
            texture_extent,
        );
        ctx.queue.submit([encoder_for_texture_buffer_copy.finish()]);

        encoder_for_texture_texture_copy.copy_texture_to_texture(
            texture_for_read.as_image_copy(),
            texture_for_write.as_image_copy(),
            wgpu::Extent3d {
                width: 512,
                height: 512,
                depth_or_array_layers: u32::MAX, // out of bounds for both
            },
        );
        ctx.queue
            .submit([encoder_for_texture_texture_copy.finish()]);

        let invalid_bind_group_layout =
            ctx.device
                .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: None,
                    entries: &[wgpu::BindGroupLayoutEntry {
                        binding: 0,
                        visibility: wgpu::ShaderStages::all(),
                        ty: wgpu::BindingType::Buffer {
                            ty: wgpu::BufferBindingType::Uniform,
                            has_dynamic_offset: false,
                            min_binding_size: std::num::NonZeroU64::new(
                                ctx.device.limits().max_uniform_buffer_binding_size * 2,
                            ),
                        },
                        count: None,
                    }],
                });

        let _ = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &invalid_bind_group_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(buffer_source.as_entire_buffer_binding()),
            }],
        });

        let invalid_pipeline_layout =
            ctx.device
                .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label: None,
                    bind_group_layouts: &[Some(&invalid_bind_group_layout)],
                    immediate_size: 0,
                });

        let _ = ctx
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(std::borrow::Cow::Borrowed(
                    "not a valid shader source",
                )),
            });

        let _ = ctx
            .device
            .create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: None,
                layout: Some(&invalid_pipeline_layout),
                vertex: wgpu::VertexState {
                    module: &shader_module,
                    entry_point: Some(""),
                    compilation_options: Default::default(),
                    buffers: &[],
                },
                primitive: wgpu::PrimitiveState::default(),
                depth_stencil: None,
                multisample: wgpu::MultisampleState::default(),
                fragment: None,
                multiview_mask: None,
                cache: None,
            });

        let _ = ctx
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: None,
                layout: Some(&invalid_pipeline_layout),
                module: &shader_module,
                entry_point: None,
                compilation_options: Default::default(),
                cache: None,
            });

        buffer_for_map
            .slice(..)
            .map_async(wgpu::MapMode::Write, |_| ());

        buffer_for_unmap.unmap();
    }
);

// `device.destroy()` calls the device-lost callback with `Destroyed`.
gpu_test!(device_destroy_then_lost, TestParameters::default(), |ctx| {
    static WAS_CALLED: AtomicBool = AtomicBool::new(false);
    WAS_CALLED.store(false, std::sync::atomic::Ordering::SeqCst);
    ctx.device.set_device_lost_callback(|reason, _m| {
        WAS_CALLED.store(true, std::sync::atomic::Ordering::SeqCst);
        assert!(
            matches!(reason, wgpu::DeviceLostReason::Destroyed),
            "Device lost info reason should match DeviceLostReason::Destroyed."
        );
    });
    ctx.device.destroy();
    // Empty queues: the closure has been called.
    assert!(ctx.poll_wait().is_queue_empty());
    assert!(
        WAS_CALLED.load(std::sync::atomic::Ordering::SeqCst),
        "Device lost callback should have been called."
    );
});

gpu_test!(
    different_bgl_order_bw_shader_and_api,
    TestParameters::default(),
    |ctx| {
        // Shader bindings in another order than the bind group's entries,
        // with more of one kind of resource than another: internals must
        // not index one kind's list with another's index.
        let trivial_shaders_with_some_reversed_bindings = concat!(
            "@group(0) @binding(3) var myTexture2: texture_2d<f32>;\n",
            "@group(0) @binding(2) var myTexture1: texture_2d<f32>;\n",
            "@group(0) @binding(1) var mySampler: sampler;\n",
            "\n",
            "@fragment\n",
            "fn fs_main(@builtin(position) pos: vec4<f32>) -> @location(0) vec4f {\n",
            "  return textureSample(myTexture1, mySampler, pos.xy) \n",
            "    + textureSample(myTexture2, mySampler, pos.xy);\n",
            "}\n",
            "\n",
            "@vertex\n",
            "fn vs_main() -> @builtin(position) vec4<f32> {\n",
            "  return vec4<f32>(0.0, 0.0, 0.0, 1.0);\n",
            "}\n",
        );
        let module = ctx
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(
                    trivial_shaders_with_some_reversed_bindings.into(),
                ),
            });
        let my_texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d {
                width: 1024,
                height: 512,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let my_texture_view = my_texture.create_view(&wgpu::TextureViewDescriptor::default());
        let my_sampler = ctx
            .device
            .create_sampler(&wgpu::SamplerDescriptor::default());
        let render_pipeline = ctx
            .device
            .create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some("fs_main"),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::ColorTargetState {
                        format: wgpu::TextureFormat::Bgra8Unorm,
                        blend: None,
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                layout: None,
                label: None,
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some("vs_main"),
                    compilation_options: Default::default(),
                    buffers: &[],
                },
                primitive: wgpu::PrimitiveState::default(),
                depth_stencil: None,
                multisample: wgpu::MultisampleState::default(),
                multiview_mask: None,
                cache: None,
            });
        let _ = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &render_pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&my_sampler),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::TextureView(&my_texture_view),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: wgpu::BindingResource::TextureView(&my_texture_view),
                },
            ],
        });
    }
);

gpu_test!(
    device_destroy_then_buffer_cleanup,
    TestParameters::default(),
    |ctx| {
        // A destroyed device's resources are released without deadlock.
        let _buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 256,
            usage: wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let _texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d {
                width: 512,
                height: 512,
                depth_or_array_layers: 1,
            },
            mip_level_count: 2,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rg8Uint,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        ctx.device.destroy();
        // Poll the device, which should try to clean up its resources.
        ctx.instance.poll_all(true);
    }
);

gpu_test!(
    device_and_queue_have_different_ids,
    TestParameters::default(),
    |ctx| {
        let (device2, queue2) = ctx.another_device();
        let TestingContext { device, queue, .. } = ctx;
        drop(device);
        drop(queue);
        drop(device2);
        drop(queue2); // once panicked: the Queue was dropped by the Device's ID
    }
);
