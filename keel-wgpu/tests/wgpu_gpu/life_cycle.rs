//! wgpu `tests/tests/wgpu-gpu/life_cycle.rs`.

use wgpu::util::DeviceExt;

use crate::wgpu_gpu::harness::*;

gpu_test!(buffer_destroy, TestParameters::default(), |ctx| {
    let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("buffer"),
        size: 256,
        usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    buffer.destroy();
    buffer.destroy();
    ctx.poll_wait();
    fail(
        &ctx.device,
        || {
            buffer
                .slice(..)
                .map_async(wgpu::MapMode::Write, move |_| {});
        },
        Some("buffer with 'buffer' label has been destroyed"),
    );
    buffer.destroy();
    ctx.poll_wait();
    buffer.destroy();
    buffer.destroy();

    let descriptor = wgpu::BufferDescriptor {
        label: None,
        size: 256,
        usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    };
    // Scopes to mix up the drop/poll ordering.
    {
        let buffer = ctx.device.create_buffer(&descriptor);
        buffer.destroy();
        let buffer = ctx.device.create_buffer(&descriptor);
        buffer.destroy();
    }
    let buffer = ctx.device.create_buffer(&descriptor);
    buffer.destroy();
    ctx.poll_wait();
    let buffer = ctx.device.create_buffer(&descriptor);
    buffer.destroy();
    {
        let buffer = ctx.device.create_buffer(&descriptor);
        buffer.destroy();
        let buffer = ctx.device.create_buffer(&descriptor);
        buffer.destroy();
        let buffer = ctx.device.create_buffer(&descriptor);
        ctx.poll_wait();
        buffer.destroy();
    }
    let buffer = ctx.device.create_buffer(&descriptor);
    buffer.destroy();
    ctx.poll_wait();
});

gpu_test!(texture_destroy, TestParameters::default(), |ctx| {
    let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: None,
        size: wgpu::Extent3d {
            width: 128,
            height: 128,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Snorm,
        usage: wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::TEXTURE_BINDING,
        view_formats: &[],
    });
    texture.destroy();
    texture.destroy();
    ctx.poll_wait();
    texture.destroy();
    ctx.poll_wait();
    texture.destroy();
    texture.destroy();
});

// Destroying a buffer between recording and submission fails gracefully.
gpu_test!(
    buffer_destroy_before_submit,
    TestParameters::default().skip(
        On::STOCK,
        "upstream skips it on llvmpipe Vulkan (gfx-rs/wgpu#7854)"
    ),
    |ctx| {
        let buffer_source = ctx
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: &[0u8; 4],
                usage: wgpu::BufferUsages::COPY_SRC,
            });
        let buffer_dest = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 4,
            usage: wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        encoder.copy_buffer_to_buffer(&buffer_source, 0, &buffer_dest, 0, 4);
        buffer_source.destroy();
        buffer_dest.destroy();
        let cmd_buffer = encoder.finish();
        fail(
            &ctx.device,
            || ctx.queue.submit([cmd_buffer]),
            Some("Buffer with '' label has been destroyed"),
        );
    }
);

// Destroying a texture between recording and submission fails gracefully.
gpu_test!(
    texture_destroy_before_submit,
    TestParameters::default().skip(
        On::STOCK,
        "upstream skips it on llvmpipe Vulkan (gfx-rs/wgpu#7854)"
    ),
    |ctx| {
        let descriptor = wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d {
                width: 128,
                height: 128,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Snorm,
            usage: wgpu::TextureUsages::COPY_DST
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        };
        let texture_1 = ctx.device.create_texture(&descriptor);
        let texture_2 = ctx.device.create_texture(&descriptor);
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        encoder.copy_texture_to_texture(
            texture_1.as_image_copy(),
            texture_2.as_image_copy(),
            wgpu::Extent3d {
                width: 128,
                height: 128,
                depth_or_array_layers: 1,
            },
        );
        texture_1.destroy();
        texture_2.destroy();
        let cmd_buffer = encoder.finish();
        fail(
            &ctx.device,
            || ctx.queue.submit([cmd_buffer]),
            Some("Texture with '' label has been destroyed"),
        );
    }
);
