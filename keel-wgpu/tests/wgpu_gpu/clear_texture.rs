//! wgpu `tests/tests/wgpu-gpu/clear_texture.rs`.

use wgpu::{AstcBlock, AstcChannel, TextureFormat as F};

use crate::wgpu_gpu::harness::*;
use crate::wgpu_gpu::readback::ReadbackBuffers;

static TEXTURE_FORMATS_UNCOMPRESSED_GLES_COMPAT: &[F] = &[
    F::R8Unorm,
    F::R8Snorm,
    F::R8Uint,
    F::R8Sint,
    F::R16Uint,
    F::R16Sint,
    F::R16Float,
    F::R32Uint,
    F::R32Sint,
    F::R32Float,
    F::Rg16Uint,
    F::Rg16Sint,
    F::Rg16Float,
    F::Rgba8Unorm,
    F::Rgba8UnormSrgb,
    F::Rgba8Snorm,
    F::Rgba8Uint,
    F::Rgba8Sint,
    F::Bgra8Unorm,
    F::Bgra8UnormSrgb,
    F::Rgb10a2Uint,
    F::Rgb10a2Unorm,
    F::Rg11b10Ufloat,
    F::Rg32Uint,
    F::Rg32Sint,
    F::Rg32Float,
    F::Rgba16Uint,
    F::Rgba16Sint,
    F::Rgba16Float,
    F::Rgba32Uint,
    F::Rgba32Sint,
    F::Rgba32Float,
];

static TEXTURE_FORMATS_UNCOMPRESSED: &[F] = &[
    F::Rg8Unorm,
    F::Rg8Snorm,
    F::Rg8Uint,
    F::Rg8Sint,
    F::Rgb9e5Ufloat,
];

static TEXTURE_FORMATS_DEPTH: &[F] = &[
    F::Stencil8,
    F::Depth16Unorm,
    F::Depth24Plus,
    F::Depth24PlusStencil8,
    F::Depth32Float,
];

// needs TEXTURE_COMPRESSION_BC
static TEXTURE_FORMATS_BC: &[F] = &[
    F::Bc1RgbaUnorm,
    F::Bc1RgbaUnormSrgb,
    F::Bc2RgbaUnorm,
    F::Bc2RgbaUnormSrgb,
    F::Bc3RgbaUnorm,
    F::Bc3RgbaUnormSrgb,
    F::Bc4RUnorm,
    F::Bc4RSnorm,
    F::Bc5RgUnorm,
    F::Bc5RgSnorm,
    F::Bc6hRgbUfloat,
    F::Bc6hRgbFloat,
    F::Bc7RgbaUnorm,
    F::Bc7RgbaUnormSrgb,
];

// needs TEXTURE_COMPRESSION_ETC2
static TEXTURE_FORMATS_ETC2: &[F] = &[
    F::Etc2Rgb8Unorm,
    F::Etc2Rgb8UnormSrgb,
    F::Etc2Rgb8A1Unorm,
    F::Etc2Rgb8A1UnormSrgb,
    F::Etc2Rgba8Unorm,
    F::Etc2Rgba8UnormSrgb,
    F::EacR11Unorm,
    F::EacR11Snorm,
    F::EacRg11Unorm,
    F::EacRg11Snorm,
];

// needs TEXTURE_COMPRESSION_ASTC: every block size, Unorm then UnormSrgb.
fn texture_formats_astc() -> Vec<F> {
    use AstcBlock::*;
    let blocks = [
        B4x4, B5x4, B5x5, B6x5, B6x6, B8x5, B8x6, B8x8, B10x5, B10x6, B10x8, B10x10, B12x10, B12x12,
    ];
    [AstcChannel::Unorm, AstcChannel::UnormSrgb]
        .into_iter()
        .flat_map(|channel| blocks.map(|block| F::Astc { block, channel }))
        .collect()
}

fn single_texture_clear_test(
    ctx: &TestingContext,
    format: F,
    size: wgpu::Extent3d,
    dimension: wgpu::TextureDimension,
) {
    let extra_usages = match format {
        F::Depth24Plus | F::Depth24PlusStencil8 => wgpu::TextureUsages::TEXTURE_BINDING,
        _ => wgpu::TextureUsages::empty(),
    };
    let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: Some(&format!("texture {format:?}")),
        size,
        mip_level_count: if dimension == wgpu::TextureDimension::D1 {
            1
        } else {
            // arbitrary value between 2 and max
            3
        },
        sample_count: 1, // multisampling is not supported for clear
        dimension,
        format,
        usage: wgpu::TextureUsages::COPY_SRC | extra_usages,
        view_formats: &[],
    });
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    encoder.clear_texture(
        &texture,
        &wgpu::ImageSubresourceRange {
            aspect: wgpu::TextureAspect::All,
            base_mip_level: 0,
            mip_level_count: None,
            base_array_layer: 0,
            array_layer_count: None,
        },
    );
    let readback_buffers = ReadbackBuffers::new(&ctx.device, &texture);
    readback_buffers.copy_from(&ctx.device, &mut encoder, &texture);
    ctx.queue.submit([encoder.finish()]);
    assert!(
        readback_buffers.are_zero(ctx),
        "texture with format {format:?} was not fully cleared"
    );
}

fn clear_texture_tests(ctx: TestingContext, formats: &[F]) {
    for &format in formats {
        let (block_width, block_height) = format.block_dimensions();
        let rounded_width = block_width * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let rounded_height = block_height * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;

        let is_compressed_or_depth_stencil_format =
            format.is_compressed() || format.is_depth_stencil_format();
        let supports_1d = !is_compressed_or_depth_stencil_format;
        let supports_3d = format.is_bcn() || !is_compressed_or_depth_stencil_format;

        let extent = |height, depth_or_array_layers| wgpu::Extent3d {
            width: rounded_width,
            height,
            depth_or_array_layers,
        };
        if supports_1d {
            single_texture_clear_test(&ctx, format, extent(1, 1), wgpu::TextureDimension::D1);
        }
        // 2D texture
        single_texture_clear_test(
            &ctx,
            format,
            extent(rounded_height, 1),
            wgpu::TextureDimension::D2,
        );
        // 2D array texture
        single_texture_clear_test(
            &ctx,
            format,
            extent(rounded_height, 4),
            wgpu::TextureDimension::D2,
        );
        if supports_3d {
            // volume texture
            single_texture_clear_test(
                &ctx,
                format,
                extent(rounded_height, 16),
                wgpu::TextureDimension::D3,
            );
        }
    }
}

gpu_test!(
    clear_texture_uncompressed_gles,
    TestParameters::default().features(wgpu::Features::CLEAR_TEXTURE),
    |ctx| clear_texture_tests(ctx, TEXTURE_FORMATS_UNCOMPRESSED_GLES_COMPAT)
);

gpu_test!(
    clear_texture_uncompressed,
    TestParameters::default().features(wgpu::Features::CLEAR_TEXTURE),
    |ctx| clear_texture_tests(ctx, TEXTURE_FORMATS_UNCOMPRESSED)
);

gpu_test!(
    clear_texture_depth,
    TestParameters::default()
        .downlevel_flags(
            wgpu::DownlevelFlags::DEPTH_TEXTURE_AND_BUFFER_COPIES
                | wgpu::DownlevelFlags::COMPUTE_SHADERS,
        )
        .limits(wgpu::Limits::downlevel_defaults())
        .features(wgpu::Features::CLEAR_TEXTURE)
        .skip(
            On::NOOP,
            "keel noop runs no shaders: Depth24Plus is read back by a compute shader"
        ),
    |ctx| clear_texture_tests(ctx, TEXTURE_FORMATS_DEPTH)
);

gpu_test!(
    clear_texture_depth32_stencil8,
    TestParameters::default()
        .features(wgpu::Features::CLEAR_TEXTURE | wgpu::Features::DEPTH32FLOAT_STENCIL8)
        .downlevel_flags(wgpu::DownlevelFlags::DEPTH_TEXTURE_AND_BUFFER_COPIES),
    |ctx| clear_texture_tests(ctx, &[F::Depth32FloatStencil8])
);

gpu_test!(
    clear_texture_compressed_bcn,
    TestParameters::default()
        .features(
            wgpu::Features::CLEAR_TEXTURE
                | wgpu::Features::TEXTURE_COMPRESSION_BC
                | wgpu::Features::TEXTURE_COMPRESSION_BC_SLICED_3D,
        )
        .limits(wgpu::Limits {
            max_texture_dimension_3d: 1024,
            ..wgpu::Limits::downlevel_defaults()
        }),
    |ctx| clear_texture_tests(ctx, TEXTURE_FORMATS_BC)
);

gpu_test!(
    clear_texture_compressed_astc,
    TestParameters::default()
        .features(
            wgpu::Features::CLEAR_TEXTURE
                | wgpu::Features::TEXTURE_COMPRESSION_ASTC
                | wgpu::Features::TEXTURE_COMPRESSION_ASTC_SLICED_3D,
        )
        .limits(wgpu::Limits {
            max_texture_dimension_2d: wgpu::COPY_BYTES_PER_ROW_ALIGNMENT * 12,
            max_texture_dimension_3d: wgpu::COPY_BYTES_PER_ROW_ALIGNMENT * 12,
            ..wgpu::Limits::downlevel_defaults()
        }),
    |ctx| clear_texture_tests(ctx, &texture_formats_astc())
);

gpu_test!(
    clear_texture_compressed_etc2,
    TestParameters::default()
        .features(wgpu::Features::CLEAR_TEXTURE | wgpu::Features::TEXTURE_COMPRESSION_ETC2),
    |ctx| clear_texture_tests(ctx, TEXTURE_FORMATS_ETC2)
);
