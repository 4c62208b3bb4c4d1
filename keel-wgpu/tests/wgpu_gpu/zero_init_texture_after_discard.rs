//! wgpu `tests/tests/wgpu-gpu/zero_init_texture_after_discard.rs`.

use wgpu::*;

use crate::wgpu_gpu::harness::*;
use crate::wgpu_gpu::readback::ReadbackBuffers;

const DEPTH_FORMATS: [TextureFormat; 5] = [
    TextureFormat::Stencil8,
    TextureFormat::Depth16Unorm,
    TextureFormat::Depth24Plus,
    TextureFormat::Depth24PlusStencil8,
    TextureFormat::Depth32Float,
];

// Discarding a color target resets its init state: a copy after the
// encoder's submit reads zeros.
gpu_test!(
    discarding_color_target_resets_texture_init_state_check_visible_on_copy_after_submit,
    TestParameters::default(),
    |mut ctx| {
        let mut case = TestCase::new(&mut ctx, TextureFormat::Rgba8UnormSrgb);
        case.create_command_encoder();
        case.discard();
        case.submit_command_encoder();

        case.create_command_encoder();
        case.copy_texture_to_buffer();
        case.submit_command_encoder();

        case.assert_buffers_are_zero();
    }
);

gpu_test!(
    discarding_color_target_resets_texture_init_state_check_visible_on_copy_in_same_encoder,
    TestParameters::default(),
    |mut ctx| {
        let mut case = TestCase::new(&mut ctx, TextureFormat::Rgba8UnormSrgb);
        case.create_command_encoder();
        case.discard();
        case.copy_texture_to_buffer();
        case.submit_command_encoder();

        case.assert_buffers_are_zero();
    }
);

gpu_test!(
    discarding_depth_target_resets_texture_init_state_check_visible_on_copy_in_same_encoder,
    TestParameters::default()
        .downlevel_flags(
            DownlevelFlags::DEPTH_TEXTURE_AND_BUFFER_COPIES | DownlevelFlags::COMPUTE_SHADERS,
        )
        .limits(Limits::downlevel_defaults())
        .skip(
            On::NOOP,
            "keel noop runs no shaders: Depth24Plus is read back by a compute shader"
        ),
    |mut ctx| {
        for format in DEPTH_FORMATS {
            let mut case = TestCase::new(&mut ctx, format);
            case.create_command_encoder();
            case.discard();
            case.copy_texture_to_buffer();
            case.submit_command_encoder();

            case.assert_buffers_are_zero();
        }
    }
);

gpu_test!(
    discarding_either_depth_or_stencil_aspect_test,
    TestParameters::default()
        .expect_fail(
            On::ALL,
            "wgpu 30 refuses depth_ops for Stencil8 (upstream's version is of a later wgpu)"
        )
        .downlevel_flags(
            DownlevelFlags::DEPTH_TEXTURE_AND_BUFFER_COPIES | DownlevelFlags::COMPUTE_SHADERS,
        )
        .limits(Limits::downlevel_defaults())
        .skip(
            On::NOOP,
            "keel noop runs no shaders: Depth24Plus is read back by a compute shader"
        ),
    |mut ctx| {
        for format in DEPTH_FORMATS {
            let mut case = TestCase::new(&mut ctx, format);
            case.create_command_encoder();
            case.discard_depth();
            case.submit_command_encoder();

            case.create_command_encoder();
            case.discard_stencil();
            case.submit_command_encoder();

            case.create_command_encoder();
            case.copy_texture_to_buffer();
            case.submit_command_encoder();

            case.assert_buffers_are_zero();
        }
    }
);

struct TestCase<'ctx> {
    ctx: &'ctx mut TestingContext,
    format: TextureFormat,
    texture: Texture,
    readback_buffers: ReadbackBuffers,
    encoder: Option<CommandEncoder>,
}

impl<'ctx> TestCase<'ctx> {
    pub fn new(ctx: &'ctx mut TestingContext, format: TextureFormat) -> Self {
        let extra_usages = match format {
            TextureFormat::Depth24Plus | TextureFormat::Depth24PlusStencil8 => {
                TextureUsages::TEXTURE_BINDING
            }
            _ => TextureUsages::empty(),
        };
        let texture = ctx.device.create_texture(&TextureDescriptor {
            label: Some("RenderTarget"),
            size: Extent3d {
                width: COPY_BYTES_PER_ROW_ALIGNMENT,
                height: COPY_BYTES_PER_ROW_ALIGNMENT,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: TextureDimension::D2,
            format,
            usage: TextureUsages::COPY_DST
                | TextureUsages::COPY_SRC
                | TextureUsages::RENDER_ATTACHMENT
                | extra_usages,
            view_formats: &[],
        });

        // Filled through write_texture (a render pass clear would do too;
        // either way the discard below must yield zeros), but depth/stencil
        // textures need a clear.
        if format.is_depth_stencil_format() {
            let mut encoder = ctx
                .device
                .create_command_encoder(&CommandEncoderDescriptor::default());
            encoder.begin_render_pass(&RenderPassDescriptor {
                label: Some("Depth/Stencil setup"),
                color_attachments: &[],
                depth_stencil_attachment: Some(RenderPassDepthStencilAttachment {
                    view: &texture.create_view(&TextureViewDescriptor::default()),
                    depth_ops: format.has_depth_aspect().then_some(Operations {
                        load: LoadOp::Clear(1.0),
                        store: StoreOp::Store,
                    }),
                    stencil_ops: format.has_stencil_aspect().then_some(Operations {
                        load: LoadOp::Clear(0xFFFFFFFF),
                        store: StoreOp::Store,
                    }),
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            ctx.queue.submit([encoder.finish()]);
        } else {
            let block_size = format.block_copy_size(None).unwrap();
            let bytes_per_row = texture.width() * block_size;
            // Sized so that buffer alignments don't matter.
            assert!(!format.is_compressed());
            assert_eq!(bytes_per_row % COPY_BYTES_PER_ROW_ALIGNMENT, 0);
            let buffer_size = texture.height() * bytes_per_row;
            let data = vec![255; buffer_size as usize];
            ctx.queue.write_texture(
                TexelCopyTextureInfo {
                    texture: &texture,
                    mip_level: 0,
                    origin: Origin3d { x: 0, y: 0, z: 0 },
                    aspect: TextureAspect::All,
                },
                &data,
                TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(bytes_per_row),
                    rows_per_image: None,
                },
                texture.size(),
            );
        }
        let readback_buffers = ReadbackBuffers::new(&ctx.device, &texture);
        Self {
            ctx,
            format,
            texture,
            readback_buffers,
            encoder: None,
        }
    }

    pub fn create_command_encoder(&mut self) {
        self.encoder = Some(
            self.ctx
                .device
                .create_command_encoder(&CommandEncoderDescriptor::default()),
        )
    }

    pub fn submit_command_encoder(&mut self) {
        self.ctx
            .queue
            .submit([self.encoder.take().unwrap().finish()]);
    }

    fn pass(
        &mut self,
        label: &str,
        color: bool,
        depth_ops: Option<Operations<f32>>,
        stencil_ops: Option<Operations<u32>>,
    ) {
        let view = self.texture.create_view(&TextureViewDescriptor::default());
        self.encoder
            .as_mut()
            .unwrap()
            .begin_render_pass(&RenderPassDescriptor {
                label: Some(label),
                color_attachments: &[color.then_some(RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: Operations {
                        load: LoadOp::Load,
                        store: StoreOp::Discard,
                    },
                })],
                depth_stencil_attachment: self.format.is_depth_stencil_format().then_some(
                    RenderPassDepthStencilAttachment {
                        view: &view,
                        depth_ops,
                        stencil_ops,
                    },
                ),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
    }

    pub fn discard(&mut self) {
        self.pass(
            "Discard",
            self.format.has_color_aspect(),
            self.format.has_depth_aspect().then_some(Operations {
                load: LoadOp::Load,
                store: StoreOp::Discard,
            }),
            self.format.has_stencil_aspect().then_some(Operations {
                load: LoadOp::Load,
                store: StoreOp::Discard,
            }),
        );
    }

    pub fn discard_depth(&mut self) {
        self.pass(
            "Discard Depth",
            false,
            Some(Operations {
                load: LoadOp::Load,
                store: StoreOp::Discard,
            }),
            self.format.has_stencil_aspect().then_some(Operations {
                load: LoadOp::Clear(0),
                store: StoreOp::Store,
            }),
        );
    }

    pub fn discard_stencil(&mut self) {
        self.pass(
            "Discard Stencil",
            false,
            self.format.has_depth_aspect().then_some(Operations {
                load: LoadOp::Clear(0.0),
                store: StoreOp::Store,
            }),
            Some(Operations {
                load: LoadOp::Load,
                store: StoreOp::Discard,
            }),
        );
    }

    pub fn copy_texture_to_buffer(&mut self) {
        self.readback_buffers.copy_from(
            &self.ctx.device,
            self.encoder.as_mut().unwrap(),
            &self.texture,
        );
    }

    pub fn assert_buffers_are_zero(&mut self) {
        assert!(
            self.readback_buffers.are_zero(self.ctx),
            "texture was not fully cleared"
        );
    }
}
