//! wgpu `tests/tests/wgpu-gpu/write_texture.rs`: texture writes.

use wgpu::*;

use crate::wgpu_gpu::harness::*;

fn read_back(ctx: &TestingContext, buffer: &Buffer) -> Vec<u8> {
    let slice = buffer.slice(..);
    slice.map_async(MapMode::Read, |_| ());
    ctx.poll_wait();
    slice.get_mapped_range().unwrap().to_vec()
}

fn write_texture_subset(ctx: TestingContext, dimension: TextureDimension, depth: u32) {
    let size = 256;
    let tex = ctx.device.create_texture(&TextureDescriptor {
        label: None,
        dimension,
        size: Extent3d {
            width: size,
            height: size,
            depth_or_array_layers: depth,
        },
        format: TextureFormat::R8Uint,
        usage: TextureUsages::COPY_DST | TextureUsages::COPY_SRC | TextureUsages::TEXTURE_BINDING,
        mip_level_count: 1,
        sample_count: 1,
        view_formats: &[],
    });
    // 2D: the first two rows; 3D: the first two slices.
    let (written, write_size) = if dimension == TextureDimension::D2 {
        (
            size as usize * 2,
            Extent3d {
                width: size,
                height: 2,
                depth_or_array_layers: 1,
            },
        )
    } else {
        (
            (size * size) as usize * 2,
            Extent3d {
                width: size,
                height: size,
                depth_or_array_layers: 2,
            },
        )
    };
    let data = vec![1u8; written];
    ctx.queue.write_texture(
        TexelCopyTextureInfo {
            texture: &tex,
            mip_level: 0,
            origin: Origin3d::ZERO,
            aspect: TextureAspect::All,
        },
        &data,
        TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(size),
            rows_per_image: Some(size),
        },
        write_size,
    );
    ctx.queue.submit(None);

    let read_buffer = ctx.device.create_buffer(&BufferDescriptor {
        label: None,
        size: (size * size * depth) as u64,
        usage: BufferUsages::MAP_READ | BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = ctx
        .device
        .create_command_encoder(&CommandEncoderDescriptor { label: None });
    encoder.copy_texture_to_buffer(
        TexelCopyTextureInfo {
            texture: &tex,
            mip_level: 0,
            origin: Origin3d::ZERO,
            aspect: TextureAspect::All,
        },
        TexelCopyBufferInfo {
            buffer: &read_buffer,
            layout: TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(size),
                rows_per_image: Some(size),
            },
        },
        Extent3d {
            width: size,
            height: size,
            depth_or_array_layers: depth,
        },
    );
    ctx.queue.submit(Some(encoder.finish()));

    let data = read_back(&ctx, &read_buffer);
    for byte in &data[..written] {
        assert_eq!(*byte, 1);
    }
    for byte in &data[written..] {
        assert_eq!(*byte, 0);
    }
}

gpu_test!(write_texture_subset_2d, TestParameters::default(), |ctx| {
    write_texture_subset(ctx, TextureDimension::D2, 1)
});

gpu_test!(write_texture_subset_3d, TestParameters::default(), |ctx| {
    write_texture_subset(ctx, TextureDimension::D3, 4)
});

gpu_test!(write_texture_no_oob, TestParameters::default(), |ctx| {
    let size = 256;
    let tex = ctx.device.create_texture(&TextureDescriptor {
        label: None,
        dimension: TextureDimension::D2,
        size: Extent3d {
            width: size,
            height: size,
            depth_or_array_layers: 1,
        },
        format: TextureFormat::R8Uint,
        usage: TextureUsages::COPY_DST,
        mip_level_count: 1,
        sample_count: 1,
        view_formats: &[],
    });
    // 100 bytes more than needed: nothing may be copied out of bounds.
    let data = vec![1u8; size as usize * 2 + 100];
    ctx.queue.write_texture(
        TexelCopyTextureInfo {
            texture: &tex,
            mip_level: 0,
            origin: Origin3d::ZERO,
            aspect: TextureAspect::All,
        },
        &data,
        TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(size),
            rows_per_image: Some(size),
        },
        Extent3d {
            width: size,
            height: 2,
            depth_or_array_layers: 1,
        },
    );
});

// A write through the staging buffer (regression test for gfx-rs/wgpu#7893
// under the address sanitizer).
gpu_test!(
    write_texture_via_staging_buffer,
    TestParameters::default(),
    |ctx| {
        let width = 89;
        let height = 17;
        let tex = ctx.device.create_texture(&TextureDescriptor {
            label: None,
            dimension: TextureDimension::D2,
            size: Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            format: TextureFormat::R8Uint,
            usage: TextureUsages::COPY_DST
                | TextureUsages::COPY_SRC
                | TextureUsages::TEXTURE_BINDING,
            mip_level_count: 1,
            sample_count: 1,
            view_formats: &[],
        });
        let write_width: u32 = 31;
        let write_height: u32 = 5;
        let write_bytes_per_row: u32 = 113;
        let write_data = (0..(write_height - 1) * write_bytes_per_row + write_width)
            .map(|b| (b % 256) as u8)
            .collect::<Vec<_>>();
        ctx.queue.write_texture(
            TexelCopyTextureInfo {
                texture: &tex,
                mip_level: 0,
                origin: Origin3d::ZERO,
                aspect: TextureAspect::All,
            },
            &write_data,
            TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(write_bytes_per_row),
                rows_per_image: Some(19),
            },
            Extent3d {
                width: write_width,
                height: write_height,
                depth_or_array_layers: 1,
            },
        );
        ctx.queue.submit(None);

        let read_bytes_per_row = COPY_BYTES_PER_ROW_ALIGNMENT;
        let read_buffer = ctx.device.create_buffer(&BufferDescriptor {
            label: None,
            size: (height * read_bytes_per_row) as u64,
            usage: BufferUsages::MAP_READ | BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = ctx
            .device
            .create_command_encoder(&CommandEncoderDescriptor { label: None });
        encoder.copy_texture_to_buffer(
            TexelCopyTextureInfo {
                texture: &tex,
                mip_level: 0,
                origin: Origin3d::ZERO,
                aspect: TextureAspect::All,
            },
            TexelCopyBufferInfo {
                buffer: &read_buffer,
                layout: TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(read_bytes_per_row),
                    rows_per_image: Some(height),
                },
            },
            Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
        );
        ctx.queue.submit(Some(encoder.finish()));

        let read_data = read_back(&ctx, &read_buffer);
        for x in 0..write_width {
            for y in 0..write_height {
                assert_eq!(
                    read_data[(y * read_bytes_per_row + x) as usize],
                    write_data[(y * write_bytes_per_row + x) as usize]
                );
            }
        }
    }
);
