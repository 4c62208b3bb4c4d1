//! wgpu `tests/tests/wgpu-gpu/texture_view_creation.rs`.

use wgpu::*;

use crate::wgpu_gpu::harness::*;

fn texture(ctx: &TestingContext, format: TextureFormat, usage: TextureUsages) -> Texture {
    ctx.device.create_texture(&TextureDescriptor {
        label: None,
        size: Extent3d {
            width: 256,
            height: 256,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: TextureDimension::D2,
        format,
        usage,
        view_formats: if format == TextureFormat::Rgba8Unorm {
            &[TextureFormat::Rgba8UnormSrgb]
        } else {
            &[]
        },
    })
}

const COPY_AND_BIND: TextureUsages = TextureUsages::COPY_DST
    .union(TextureUsages::COPY_SRC)
    .union(TextureUsages::TEXTURE_BINDING);

gpu_test!(
    stencil_only_view_creation,
    TestParameters::default().limits(wgpu::Limits::downlevel_defaults()),
    |ctx| {
        for format in [TextureFormat::Stencil8, TextureFormat::Depth24PlusStencil8] {
            let texture = texture(&ctx, format, COPY_AND_BIND);
            let _view = texture.create_view(&TextureViewDescriptor {
                aspect: TextureAspect::StencilOnly,
                ..Default::default()
            });
        }
    }
);

gpu_test!(depth_only_view_creation, TestParameters::default(), |ctx| {
    for format in [
        TextureFormat::Depth16Unorm,
        TextureFormat::Depth24Plus,
        TextureFormat::Depth24PlusStencil8,
    ] {
        let texture = texture(&ctx, format, COPY_AND_BIND);
        let _view = texture.create_view(&TextureViewDescriptor {
            aspect: TextureAspect::DepthOnly,
            ..Default::default()
        });
    }
});

gpu_test!(
    shared_usage_view_creation,
    TestParameters::default().downlevel_flags(DownlevelFlags::VIEW_FORMATS),
    |ctx| {
        let texture = texture(
            &ctx,
            TextureFormat::Rgba8Unorm,
            TextureUsages::COPY_DST
                | TextureUsages::STORAGE_BINDING
                | TextureUsages::TEXTURE_BINDING
                | TextureUsages::RENDER_ATTACHMENT,
        );
        let _view = texture.create_view(&TextureViewDescriptor {
            aspect: TextureAspect::All,
            format: Some(TextureFormat::Rgba8UnormSrgb),
            usage: Some(
                TextureUsages::COPY_DST
                    | TextureUsages::TEXTURE_BINDING
                    | TextureUsages::RENDER_ATTACHMENT,
            ),
            ..Default::default()
        });
    }
);
