//! Multiview: a view mask renders view `i` to layer `i` of a 3-layer
//! target, the fragment shader telling the views apart by
//! `@builtin(view_index)`; with `SELECTIVE_MULTIVIEW` a mask that skips view
//! 1 leaves layer 1 untouched (zeroed by `clear_texture` before each pass:
//! neither drawn nor cleared by the pass's load op, which covers only the
//! mask's views). Without `MULTIVIEW` a pipeline with a mask is refused with
//! the feature named (every adapter, noop too).

use std::num::NonZeroU32;

use keel_hal::wgt;
use keel_hal::{
    Adapter, Api, Attachment, AttachmentOps, ColorAttachment, CommandEncoder, Device,
    DeviceDescriptor, PipelineError, PipelineLayoutDescriptor, ProgrammableStage,
    RenderPassDescriptor, RenderPipelineDescriptor, ShaderModuleDescriptor, TextureCopyBase,
    TextureUses, TextureViewDescriptor,
};

use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::helpers::{read_texture, submit, texture_barrier, texture_desc};
use crate::pipelines::{needs_shaders, wgsl, Layouts};

conformance_tests!(
    multiview_renders_each_view_to_its_layer,
    multiview_needs_its_feature,
);

const SIZE: u32 = 8;
const LAYERS: u32 = 3;
const SHADER: &str = "
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    var p = array(vec2<f32>(-1.0, -1.0), vec2<f32>(3.0, -1.0), vec2<f32>(-1.0, 3.0));
    return vec4<f32>(p[i], 0.0, 1.0);
}
@fragment fn fs(@builtin(view_index) view: u32) -> @location(0) vec4<f32> {
    return vec4<f32>(f32(view) * 0.5, 1.0, 0.0, 1.0);
}
";
/// A shader without `view_index`, for the refusal (which is the mask's,
/// not the shader's: `view_index` alone needs the feature too).
const PLAIN: &str = "
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    return vec4<f32>(f32(i), 0.0, 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
";
/// What `clear_texture` leaves in a layer the pass does not reach.
const UNTOUCHED: [u8; 4] = [0, 0, 0, 0];

/// Layer `view`'s colour as the shader writes it.
fn drawn(view: u32) -> [u8; 4] {
    [(view as f32 * 0.5 * 255.0).round() as u8, 255, 0, 255]
}

/// A render pipeline of [`SHADER`] into `Rgba8Unorm` with `mask`.
fn pipeline_desc<'a, A: Api>(
    layout: &'a A::PipelineLayout,
    module: &'a A::ShaderModule,
    targets: &'a [Option<wgt::ColorTargetState>],
    mask: Option<NonZeroU32>,
) -> RenderPipelineDescriptor<'a, A> {
    RenderPipelineDescriptor {
        label: Some("multiview"),
        layout,
        vertex_buffers: &[],
        vertex_stage: ProgrammableStage::new(module, "vs"),
        primitive: wgt::PrimitiveState::default(),
        depth_stencil: None,
        multisample: wgt::MultisampleState::default(),
        fragment_stage: Some(ProgrammableStage::new(module, "fs")),
        color_targets: targets,
        multiview_mask: mask,
        cache: None,
    }
}

const TARGETS: [Option<wgt::ColorTargetState>; 1] = [Some(wgt::ColorTargetState {
    format: wgt::TextureFormat::Rgba8Unorm,
    blend: None,
    write_mask: wgt::ColorWrites::ALL,
})];

fn multiview_renders_each_view_to_its_layer<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if !ctx.features.contains(wgt::Features::MULTIVIEW) {
        return skip("the adapter lacks MULTIVIEW");
    }
    if let Some(skipped) = needs_shaders(ctx) {
        return skipped;
    }
    if ctx.caps.limits.max_multiview_view_count < LAYERS {
        return skip("the adapter has fewer than 3 views");
    }
    if !ctx.features.contains(wgt::Features::CLEAR_TEXTURE) {
        return skip("the adapter lacks CLEAR_TEXTURE (the test zeroes the layers with it)");
    }
    let selective = ctx.features.contains(wgt::Features::SELECTIVE_MULTIVIEW);
    let mut masks = vec![0b111];
    if selective {
        masks.push(0b101);
    }
    // SAFETY: every object is destroyed below, after the waits.
    unsafe {
        let layouts = Layouts::new(ctx, None, &[])?;
        let module = wgsl(ctx, SHADER)?;
        let mut desc = texture_desc(wgt::TextureFormat::Rgba8Unorm, SIZE, SIZE, LAYERS, 1);
        desc.usage = wgt::TextureUsages::RENDER_ATTACHMENT
            | wgt::TextureUsages::COPY_SRC
            | wgt::TextureUsages::COPY_DST;
        let texture = ctx.device.create_texture(&desc)?;
        let view = ctx.device.create_texture_view(
            &texture,
            &TextureViewDescriptor {
                dimension: Some(wgt::TextureViewDimension::D2Array),
                ..Default::default()
            },
        )?;
        let result = (|| -> Result<(), Failure> {
            for &bits in &masks {
                let mask = NonZeroU32::new(bits);
                let desc = pipeline_desc::<A>(&layouts.pipeline, &module, &TARGETS, mask);
                let pipeline = ctx.device.create_render_pipeline(&desc)?;
                let mut zeroed = Ok(());
                let ran = submit(ctx, |enc| {
                    enc.transition_textures(&[texture_barrier(
                        &texture,
                        TextureUses::UNINITIALIZED,
                        TextureUses::COPY_DST,
                    )]);
                    zeroed = enc.clear_texture(&texture, &wgt::ImageSubresourceRange::default());
                    enc.transition_textures(&[texture_barrier(
                        &texture,
                        TextureUses::COPY_DST,
                        TextureUses::COLOR_TARGET,
                    )]);
                    let colors = [Some(ColorAttachment {
                        target: Attachment {
                            view: &view,
                            usage: TextureUses::COLOR_TARGET,
                        },
                        resolve_target: None,
                        ops: AttachmentOps::STORE,
                        clear_value: wgt::Color::BLUE,
                    })];
                    enc.begin_render_pass(&RenderPassDescriptor {
                        label: Some("multiview"),
                        extent: wgt::Extent3d {
                            width: SIZE,
                            height: SIZE,
                            depth_or_array_layers: 1,
                        },
                        sample_count: 1,
                        color_attachments: &colors,
                        depth_stencil_attachment: None,
                        multiview_mask: mask,
                    });
                    enc.set_render_pipeline(&pipeline);
                    enc.draw(0, 3, 0, 1);
                    enc.end_render_pass();
                    enc.transition_textures(&[texture_barrier(
                        &texture,
                        TextureUses::COLOR_TARGET,
                        TextureUses::COPY_SRC,
                    )]);
                });
                ctx.device.destroy_render_pipeline(pipeline);
                ran?;
                zeroed?;
                for layer in 0..LAYERS {
                    let base = TextureCopyBase {
                        array_layer: layer,
                        ..Default::default()
                    };
                    let got = read_texture(ctx, &texture, base, (SIZE, SIZE, 1), 4)?;
                    let want = if bits & (1 << layer) != 0 {
                        drawn(layer)
                    } else {
                        UNTOUCHED
                    };
                    // Within 1/255: 0.5 becomes 127 or 128 by the device's rounding.
                    let off = |p: &[u8]| p.iter().zip(want).any(|(&a, b)| a.abs_diff(b) > 1);
                    let wrong = got.chunks_exact(4).filter(|p| off(p)).count();
                    check_eq!(
                        wrong,
                        0,
                        "pixels of layer {layer} not {want:?} (±1) with view mask {bits:#b} \
                         (first: {:?})",
                        got.get(..4)
                    );
                }
                ctx.note(format!("view mask {bits:#b}: every layer as expected"));
            }
            Ok(())
        })();
        ctx.device.destroy_texture_view(view);
        ctx.device.destroy_texture(texture);
        ctx.device.destroy_shader_module(module);
        layouts.destroy(ctx);
        result?;
    }
    Ok(Outcome::Pass)
}

/// On a device opened without `MULTIVIEW`, a pipeline with a view mask is
/// `PipelineError::MissingFeature` naming it, and nothing is left alive.
fn multiview_needs_its_feature<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let desc = DeviceDescriptor {
        label: Some("conformance multiview"),
        allow_no_shader_execution: true,
        ..Default::default()
    };
    // SAFETY: the adapter is live; everything made is destroyed.
    unsafe {
        let open = ctx.adapter.open(&desc)?;
        let d = &open.device;
        let layout = d.create_pipeline_layout(&PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[],
            push_constant_ranges: &[],
        })?;
        let module = match d.create_shader_module(&ShaderModuleDescriptor::wgsl(PLAIN)) {
            Ok(module) => module,
            Err(e) => {
                d.destroy_pipeline_layout(layout);
                return Err(e.into());
            }
        };
        let mask = NonZeroU32::new(0b11);
        let made = d.create_render_pipeline(&pipeline_desc::<A>(&layout, &module, &TARGETS, mask));
        let outcome = match made {
            Ok(pipeline) => {
                d.destroy_render_pipeline(pipeline);
                Err(Failure::from("a view mask was accepted without MULTIVIEW"))
            }
            Err(PipelineError::MissingFeature { feature, .. }) => {
                if feature == wgt::Features::MULTIVIEW {
                    Ok(())
                } else {
                    Err(Failure::from(format!(
                        "refused for {feature:?}, not MULTIVIEW"
                    )))
                }
            }
            Err(e) => Err(Failure::from(format!(
                "refused with {e}, not MissingFeature"
            ))),
        };
        d.destroy_shader_module(module);
        d.destroy_pipeline_layout(layout);
        outcome?;
        check_eq!(
            d.live_counts(),
            keel_hal::LiveCounts::default(),
            "live objects of the plain device"
        );
    }
    Ok(Outcome::Pass)
}
