//! Render and compute passes on noop.
//!
//! Passes are recorded and checked, and every pass command is accepted;
//! noop runs no shaders, so draws and dispatches do nothing (the adapter
//! lacks [`crate::HalFeatures::SHADER_EXECUTION`]). What a pass does
//! without shaders is done: a colour, depth or stencil attachment whose
//! load op clears (`AttachmentOps` without `LOAD`) is filled with its clear
//! value when the command buffer executes, over the render area, every
//! sample and every layer of the view. Upper-layer tests can so read back a
//! cleared target on noop. Resolves do nothing (the resolve target keeps
//! its bytes), and the store op is ignored (contents stay defined).
//!
//! Formats whose clear value noop cannot encode (see `clear.rs`) are left
//! as they were, with a debug log.
//!
//! Misuse the hal's contract makes undefined on a GPU and that noop can
//! see cheaply (a pass begun inside a pass, a draw outside a render pass, a
//! dynamic offset count or range that does not fit, push constants outside
//! the layout's ranges) is logged with `log::error!` and the command skipped.

use std::sync::Arc;

use super::clear::{encode_color, encode_depth, encode_stencil, Texel};
use super::memory::HostBytes;
use super::texel::{plan_fill, CopyPlan};
use super::{Api, BindGroup, PipelineLayout, TextureView};
use crate::{AttachmentOps, DeviceError, RenderPassDescriptor, TextureCopyBase};

/// Which pass a recording is in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Pass {
    /// Outside any pass.
    #[default]
    None,
    /// Between `begin_render_pass` and `end_render_pass`.
    Render,
    /// Between `begin_compute_pass` and `end_compute_pass`.
    Compute,
    /// Between `begin_ray_tracing_pass` and `end_ray_tracing_pass`.
    RayTracing,
}

/// A fill of texels: one source row (the clear texel repeated) copied over
/// every row of the destination region.
#[derive(Debug)]
pub(super) struct Fill {
    pub(super) src: Arc<HostBytes>,
    pub(super) dst: Arc<HostBytes>,
    pub(super) plan: CopyPlan,
}

/// Calls `record` with the fill of every attachment aspect the pass clears.
/// Fails only when host memory for a fill's source row runs out.
pub(super) fn attachment_clears(
    desc: &RenderPassDescriptor<Api>,
    mut record: impl FnMut(Fill),
) -> Result<(), DeviceError> {
    let extent = desc.extent;
    for attachment in desc.color_attachments.iter().flatten() {
        if attachment.ops.contains(AttachmentOps::LOAD) {
            continue;
        }
        let view = attachment.target.view;
        let texel = encode_color(view.format, attachment.clear_value);
        if let Some(fill) = fill(view, wgt::TextureAspect::All, texel, extent)? {
            record(fill);
        }
    }
    if let Some(ds) = &desc.depth_stencil_attachment {
        let view = ds.target.view;
        let format = view.layout.format;
        let aspect = view.range.aspect;
        let (depth, stencil) = ds.clear_value;
        let clears_depth = format.has_depth_aspect()
            && aspect != wgt::TextureAspect::StencilOnly
            && !ds.depth_ops.contains(AttachmentOps::LOAD);
        if clears_depth {
            let texel = encode_depth(format, depth);
            if let Some(fill) = fill(view, wgt::TextureAspect::DepthOnly, texel, extent)? {
                record(fill);
            }
        }
        let clears_stencil = format.has_stencil_aspect()
            && aspect != wgt::TextureAspect::DepthOnly
            && !ds.stencil_ops.contains(AttachmentOps::LOAD);
        if clears_stencil {
            let texel = Some(encode_stencil(stencil));
            if let Some(fill) = fill(view, wgt::TextureAspect::StencilOnly, texel, extent)? {
                record(fill);
            }
        }
    }
    Ok(())
}

/// The fill of one aspect of a view's render area with `texel`; `None`
/// (logged) where noop cannot encode or locate it.
fn fill(
    view: &TextureView,
    aspect: wgt::TextureAspect,
    texel: Option<Texel>,
    extent: wgt::Extent3d,
) -> Result<Option<Fill>, DeviceError> {
    let Some(texel) = texel else {
        log::debug!(
            "noop: cannot encode a clear value for {:?}; attachment left as it was",
            view.format
        );
        return Ok(None);
    };
    let layout = &view.layout;
    let mip = view.range.base_mip_level;
    let mip_size = layout.size.mip_level_size(mip, layout.dimension);
    let (array_layer, images) = match layout.dimension {
        wgt::TextureDimension::D3 => (0, mip_size.depth_or_array_layers),
        _ => {
            let layers = view.range.array_layer_count.unwrap_or(1);
            (
                view.range.base_array_layer,
                layers.min(extent.depth_or_array_layers.max(1)),
            )
        }
    };
    let base = TextureCopyBase {
        mip_level: mip,
        array_layer,
        origin: wgt::Origin3d::ZERO,
        aspect,
    };
    let size = wgt::Extent3d {
        width: extent.width.min(mip_size.width),
        height: extent.height.min(mip_size.height),
        depth_or_array_layers: images,
    };
    let (plan, block_bytes) = match plan_fill(layout, &base, size) {
        Ok(found) => found,
        Err(e) => {
            log::debug!("noop: attachment clear skipped: {e}");
            return Ok(None);
        }
    };
    let texel_len = texel.len() as u64;
    if texel_len == 0 || block_bytes % texel_len != 0 || plan.row_bytes % texel_len != 0 {
        log::debug!(
            "noop: clear value does not tile {:?} blocks; skipped",
            view.format
        );
        return Ok(None);
    }
    if plan.is_empty() {
        return Ok(None);
    }
    let src = HostBytes::new_zeroed(plan.row_bytes)?;
    let mut at = 0;
    while at < plan.row_bytes {
        if src.write(at, &texel).is_err() {
            return Ok(None);
        }
        at += texel_len;
    }
    Ok(Some(Fill {
        src: Arc::new(src),
        dst: Arc::clone(&view.bytes),
        plan,
    }))
}

/// Whether `offsets` fit the group's dynamic bindings: one per binding,
/// aligned, keeping each range inside its buffer. Logs why not.
pub(super) fn dynamic_offsets_ok(
    group: &BindGroup,
    offsets: &[wgt::DynamicOffset],
    alignment: u32,
) -> bool {
    if offsets.len() != group.dynamic.len() {
        crate::refusal::refused!(
            "noop: set_bind_group with {} dynamic offsets for {} dynamic bindings; skipped",
            offsets.len(),
            group.dynamic.len()
        );
        return false;
    }
    for (range, &offset) in group.dynamic.iter().zip(offsets) {
        let fits = range
            .end
            .checked_add(u64::from(offset))
            .is_some_and(|end| end <= range.buffer_size);
        if offset % alignment.max(1) != 0 || !fits {
            crate::refusal::refused!(
                "noop: dynamic offset {offset} is unaligned or moves a range past its \
                 {}-byte buffer; skipped",
                range.buffer_size
            );
            return false;
        }
    }
    true
}

/// Whether `len` bytes of push constants at `offset` lie in one of the
/// layout's ranges that covers `stages`. Logs why not.
pub(super) fn push_constants_ok(
    layout: &PipelineLayout,
    stages: wgt::ShaderStages,
    offset: u32,
    len: usize,
) -> bool {
    let end = u32::try_from(len)
        .ok()
        .and_then(|words| words.checked_mul(4))
        .and_then(|bytes| bytes.checked_add(offset));
    let ok = offset % 4 == 0
        && end.is_some_and(|end| {
            layout
                .push_constant_ranges
                .iter()
                .any(|r| r.stages.contains(stages) && r.range.start <= offset && end <= r.range.end)
        });
    if !ok {
        crate::refusal::refused!(
            "noop: set_push_constants of {len} words at {offset} for {stages:?} lies in no \
             push-constant range of the layout; skipped"
        );
    }
    ok
}
