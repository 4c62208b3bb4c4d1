//! Render, compute and ray-tracing passes: dynamic rendering, the pass state, bind
//! groups and push constants. `command.rs` forwards the trait's pass
//! methods here; the commands recorded inside passes (pipelines, buffers,
//! dynamic state, draws, dispatches) are in `draw.rs`.
//!
//! Render passes are `vkCmdBeginRendering`/`vkCmdEndRendering`. Clip space
//! follows wgpu's convention (Y up): every viewport has a negative height
//! (core since VK_KHR_maintenance1), so shaders are not flipped.
//! `begin_render_pass` sets a full-extent viewport and scissor, stencil
//! reference 0 and blend constants 0, so none must be set before drawing.
//!
//! Recording stays cheap: attachments are gathered on the stack, nothing is
//! allocated, no lock is taken. The encoder remembers which pass is open
//! ([`PassState`]): it gives `set_bind_group` its bind point, and a command
//! recorded outside the pass it belongs to is logged and skipped (the trait
//! contract is broken; the driver never sees it).

use arrayvec::ArrayVec;
use ash::vk;

use super::command::with_c_label;
use super::pipeline_state::MAX_COLOR_ATTACHMENTS;
use super::{barrier, conv, BindGroup, CommandEncoder, PipelineLayout, TextureView};
use crate::{AttachmentOps, ColorAttachment, ComputePassDescriptor, Rect, RenderPassDescriptor};

/// Which pass is open on an encoder.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum PassKind {
    /// Outside any pass.
    #[default]
    None,
    /// A render pass. `rendering` is false when its description was
    /// rejected (logged): no `vkCmdBeginRendering` was recorded, and the
    /// pass's commands are skipped until `end_render_pass`.
    Render {
        /// `vkCmdBeginRendering` was recorded.
        rendering: bool,
    },
    /// A compute pass.
    Compute,
    /// A ray-tracing pass (only begun on a device with ray-tracing pipelines).
    RayTracing,
}

/// The encoder's pass state (kept in `command::Temp`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PassState {
    /// The pass in progress.
    pub(super) kind: PassKind,
    /// The pass opened a debug label region that its end closes.
    pub(super) label_open: bool,
    /// The device's `max_compute_workgroups_per_dimension`, copied at the
    /// pass's start so `dispatch` checks it without leaving the encoder.
    pub(super) max_workgroups: u32,
    /// A render pass's view mask (0: none); pipelines set in it match it.
    pub(super) view_mask: u32,
    /// Where the bound render pipeline's geometry comes from (`None`:
    /// none bound yet in this pass): vertex and mesh draws check it.
    pub(super) geometry: Option<crate::validate::draw::Geometry>,
    /// Where `set_bind_group` binds in this pass and into which command
    /// buffer (`None`: nowhere, outside a pass or in a skipped render pass),
    /// worked out when `kind` is set ([`bind_point`]) so the per-command
    /// check is one comparison that also yields the command buffer.
    pub(super) bind: Option<(vk::CommandBuffer, vk::PipelineBindPoint)>,
    /// The command buffer, when a vertex draw may be recorded: a render
    /// pass that began rendering, no mesh pipeline bound. Worked out
    /// whenever `kind` or `geometry` changes ([`PassState::refresh`]), so a
    /// draw checks one tag.
    pub(super) vertex_draw: Option<vk::CommandBuffer>,
    /// The command buffer, inside a compute pass: a dispatch checks one tag.
    pub(super) dispatch: Option<vk::CommandBuffer>,
}

impl PassState {
    /// Works out the fields derived from `kind` and `geometry` again, with
    /// `raw`, the command buffer the pass records into. A pass lives inside
    /// one recording: every way a recording ends resets the pass state
    /// (`CommandEncoder::end_recording`), so these never outlive it.
    pub(super) fn refresh(&mut self, raw: vk::CommandBuffer) {
        self.bind = bind_point(self.kind).map(|point| (raw, point));
        self.vertex_draw = (self.kind == (PassKind::Render { rendering: true })
            && crate::validate::draw::vertex_draw_problem(self.geometry).is_none())
        .then_some(raw);
        self.dispatch = (self.kind == PassKind::Compute).then_some(raw);
    }
}

/// Where bind groups bind in a pass of `kind` (`None`: nowhere).
fn bind_point(kind: PassKind) -> Option<vk::PipelineBindPoint> {
    match kind {
        PassKind::Render { rendering: true } => Some(vk::PipelineBindPoint::GRAPHICS),
        PassKind::Compute => Some(vk::PipelineBindPoint::COMPUTE),
        PassKind::RayTracing => Some(vk::PipelineBindPoint::RAY_TRACING_KHR),
        PassKind::Render { rendering: false } | PassKind::None => None,
    }
}

fn load_op(ops: AttachmentOps) -> vk::AttachmentLoadOp {
    if ops.contains(AttachmentOps::LOAD) {
        vk::AttachmentLoadOp::LOAD
    } else {
        vk::AttachmentLoadOp::CLEAR
    }
}

fn store_op(ops: AttachmentOps) -> vk::AttachmentStoreOp {
    if ops.contains(AttachmentOps::STORE) {
        vk::AttachmentStoreOp::STORE
    } else {
        vk::AttachmentStoreOp::DONT_CARE
    }
}

/// Whether texels of `format` read as integers (no averaging, no float clears).
fn is_integer(format: wgt::TextureFormat) -> bool {
    matches!(
        format.sample_type(None, None),
        Some(wgt::TextureSampleType::Sint | wgt::TextureSampleType::Uint)
    )
}

/// A clear colour in the numeric type of the attachment's format.
fn clear_color(format: wgt::TextureFormat, c: wgt::Color) -> vk::ClearColorValue {
    // Float-to-integer `as` saturates, which is what a clear of an
    // out-of-range value should do.
    match format.sample_type(None, None) {
        Some(wgt::TextureSampleType::Sint) => vk::ClearColorValue {
            int32: [c.r as i32, c.g as i32, c.b as i32, c.a as i32],
        },
        Some(wgt::TextureSampleType::Uint) => vk::ClearColorValue {
            uint32: [c.r as u32, c.g as u32, c.b as u32, c.a as u32],
        },
        _ => vk::ClearColorValue {
            float32: [c.r as f32, c.g as f32, c.b as f32, c.a as f32],
        },
    }
}

/// A colour attachment: load/store, clear value, and the resolve (average
/// for float formats, sample 0 for integer ones) with its layout.
fn color_attachment(
    attachment: &ColorAttachment<'_, TextureView>,
    swapchain: bool,
) -> vk::RenderingAttachmentInfo<'static> {
    let view = attachment.target.view;
    let mut info = vk::RenderingAttachmentInfo::default()
        .image_view(view.raw)
        .image_layout(barrier::texture_layout(attachment.target.usage, swapchain))
        .load_op(load_op(attachment.ops))
        .store_op(store_op(attachment.ops))
        .clear_value(vk::ClearValue {
            color: clear_color(view.format, attachment.clear_value),
        });
    if let Some(resolve) = &attachment.resolve_target {
        let mode = if is_integer(view.format) {
            vk::ResolveModeFlags::SAMPLE_ZERO
        } else {
            vk::ResolveModeFlags::AVERAGE
        };
        info = info
            .resolve_mode(mode)
            .resolve_image_view(resolve.view.raw)
            .resolve_image_layout(barrier::texture_layout(resolve.usage, swapchain));
    }
    info
}

/// The full-extent viewport, flipped (negative height: Y up in clip space).
pub(super) fn flipped_viewport(rect: &Rect<f32>, depth: std::ops::Range<f32>) -> vk::Viewport {
    vk::Viewport {
        x: rect.x,
        y: rect.y + rect.h,
        width: rect.w,
        height: -rect.h,
        min_depth: depth.start,
        max_depth: depth.end,
    }
}

/// Whether `stages` may push `len` bytes at `offset` under `layout`: every
/// range the bytes touch is one of `stages`' ranges, and each stage has a
/// range holding all the bytes (Vulkan's rule for `vkCmdPushConstants`).
fn push_constants_fit(
    layout: &PipelineLayout,
    stages: wgt::ShaderStages,
    offset: u32,
    len: u32,
) -> bool {
    let Some(end) = offset.checked_add(len) else {
        return false;
    };
    let mut covered = wgt::ShaderStages::empty();
    for r in layout.push_constant_ranges.iter() {
        let overlaps = r.range.start < end && offset < r.range.end;
        if overlaps && !stages.contains(r.stages) {
            return false;
        }
        if r.range.start <= offset && end <= r.range.end {
            covered |= r.stages;
        }
    }
    offset % 4 == 0 && covered.contains(stages)
}

/// Logs a pass command recorded outside its kind of pass (out of line: the
/// per-command path is only the test).
#[cold]
#[inline(never)]
fn outside_pass(render: bool, what: &str) {
    let pass = if render { "a render" } else { "a compute" };
    crate::refusal::refused!(
        "keel-hal: {what} outside {pass} pass (or in a rejected one); skipped"
    );
}

/// Logs a command recorded outside any pass (out of line).
#[cold]
#[inline(never)]
fn outside_any_pass(what: &str) {
    crate::refusal::refused!("keel-hal: {what} outside a pass; skipped");
}

/// Logs a `set_bind_group` that does not fit its layout (out of line).
#[cold]
#[inline(never)]
fn bind_group_mismatch(index: u32, groups: usize, offsets: usize, dynamic: u32) {
    crate::refusal::refused!(
        "keel-hal: set_bind_group: index {index} of a layout of {groups} groups, or {offsets} \
         dynamic offsets for a group with {dynamic}; skipped"
    );
}

impl CommandEncoder {
    /// The command buffer, when recording inside a pass of `kind` (for a
    /// render pass: one that began rendering); logs otherwise.
    #[inline]
    pub(super) fn in_pass(&self, render: bool, what: &str) -> Option<vk::CommandBuffer> {
        let raw = self.recording()?;
        let ok = match self.temp.pass.kind {
            PassKind::Render { rendering } => render && rendering,
            PassKind::Compute => !render,
            PassKind::RayTracing | PassKind::None => false,
        };
        if !ok {
            outside_pass(render, what);
            return None;
        }
        Some(raw)
    }

    /// Logs why `set_bind_group` binds nowhere: no recording, or no pass
    /// (out of line).
    #[cold]
    #[inline(never)]
    fn bind_refused(&self) {
        if self.recording().is_some() {
            outside_any_pass("set_bind_group");
        }
    }

    /// The command buffer for a barrier (`what`): recording, outside a
    /// render pass (a pipeline barrier inside dynamic rendering is invalid,
    /// `VUID-vkCmdPipelineBarrier2-None-06191`); logs otherwise.
    pub(super) fn barrier_allowed(&self, what: &str) -> Option<vk::CommandBuffer> {
        let raw = self.recording()?;
        if matches!(self.temp.pass.kind, PassKind::Render { .. }) {
            crate::refusal::refused!(
                "keel-hal: {what} inside a render pass; skipped (record it before the pass)"
            );
            return None;
        }
        Some(raw)
    }

    /// The command buffer, when recording inside a ray-tracing pass; logs otherwise.
    pub(super) fn in_ray_tracing_pass(&self, what: &str) -> Option<vk::CommandBuffer> {
        let raw = self.recording()?;
        if self.temp.pass.kind != PassKind::RayTracing {
            crate::refusal::refused!("keel-hal: {what} outside a ray-tracing pass; skipped");
            return None;
        }
        Some(raw)
    }

    /// Opens the pass's debug label region, if it has a label and debug
    /// utils are on.
    fn open_pass_label(&mut self, raw: vk::CommandBuffer, label: Option<&str>) {
        let (Some(debug_utils), Some(label)) = (&self.device.debug_utils, label) else {
            return;
        };
        with_c_label(&mut self.temp.label, label, |name| {
            let info = vk::DebugUtilsLabelEXT::default().label_name(name);
            // SAFETY: recording; `info` and its name live across the call.
            unsafe { debug_utils.cmd_begin_debug_utils_label(raw, &info) };
        });
        self.temp.pass.label_open = true;
    }

    /// Closes the pass and its label region, if it opened one.
    fn close_pass(&mut self, raw: vk::CommandBuffer) {
        let state = std::mem::take(&mut self.temp.pass);
        if let (true, Some(debug_utils)) = (state.label_open, &self.device.debug_utils) {
            // SAFETY: recording; the pass's region is the innermost open one
            // (markers opened inside the pass are closed by the caller).
            unsafe { debug_utils.cmd_end_debug_utils_label(raw) };
        }
    }

    /// Starts a pass of `kind`, or logs when one is already open.
    fn start_pass(&mut self, kind: PassKind, what: &str) -> Option<vk::CommandBuffer> {
        let raw = self.recording()?;
        if self.temp.pass.kind != PassKind::None {
            crate::refusal::refused!("keel-hal: {what} inside another pass; skipped");
            return None;
        }
        self.temp.pass = PassState {
            kind,
            label_open: false,
            max_workgroups: self.device.limits.max_compute_workgroups_per_dimension,
            view_mask: 0,
            geometry: None,
            bind: None,
            vertex_draw: None,
            dispatch: None,
        };
        self.temp.pass.refresh(raw);
        Some(raw)
    }

    /// See `CommandEncoder::begin_render_pass`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_begin_render(&mut self, desc: &RenderPassDescriptor<super::Api>) {
        let Some(raw) = self.start_pass(PassKind::Render { rendering: false }, "begin_render_pass")
        else {
            return;
        };
        if desc.color_attachments.len() > MAX_COLOR_ATTACHMENTS {
            crate::refusal::refused!(
                "keel-hal: begin_render_pass: {} colour attachments, at most {}; the pass is \
                 skipped",
                desc.color_attachments.len(),
                MAX_COLOR_ATTACHMENTS
            );
            return;
        }
        let view_mask = match crate::validate::multiview::check_pass(
            desc,
            self.device.features,
            self.device.limits.max_multiview_view_count,
        ) {
            Ok(mask) => mask,
            Err(e) => {
                crate::refusal::refused!("keel-hal: begin_render_pass: {e}; the pass is skipped");
                return;
            }
        };
        self.temp.pass.view_mask = view_mask;
        let swapchain = self.device.swapchain;
        let colors: ArrayVec<_, MAX_COLOR_ATTACHMENTS> = desc
            .color_attachments
            .iter()
            .map(|slot| match slot {
                Some(attachment) => color_attachment(attachment, swapchain),
                None => vk::RenderingAttachmentInfo::default(),
            })
            .collect();
        let (mut depth, mut stencil) = (None, None);
        if let Some(ds) = &desc.depth_stencil_attachment {
            let view = ds.target.view;
            let aspects = conv::map_aspect(view.format, view.range.aspect);
            let base = vk::RenderingAttachmentInfo::default()
                .image_view(view.raw)
                .image_layout(barrier::texture_layout(ds.target.usage, swapchain))
                .clear_value(vk::ClearValue {
                    depth_stencil: vk::ClearDepthStencilValue {
                        depth: ds.clear_value.0,
                        stencil: ds.clear_value.1,
                    },
                });
            let with_ops = |ops| base.load_op(load_op(ops)).store_op(store_op(ops));
            depth = aspects
                .contains(vk::ImageAspectFlags::DEPTH)
                .then(|| with_ops(ds.depth_ops));
            stencil = aspects
                .contains(vk::ImageAspectFlags::STENCIL)
                .then(|| with_ops(ds.stencil_ops));
        }
        let extent = vk::Extent2D {
            width: desc.extent.width,
            height: desc.extent.height,
        };
        let mut info = vk::RenderingInfo::default()
            .render_area(vk::Rect2D {
                offset: vk::Offset2D::default(),
                extent,
            })
            .layer_count(desc.extent.depth_or_array_layers.max(1))
            .view_mask(view_mask)
            .color_attachments(&colors);
        if let Some(depth) = &depth {
            info = info.depth_attachment(depth);
        }
        if let Some(stencil) = &stencil {
            info = info.stencil_attachment(stencil);
        }
        self.open_pass_label(raw, desc.label);
        self.temp.pass.kind = PassKind::Render { rendering: true };
        self.temp.pass.refresh(raw);
        let full = Rect {
            x: 0.0,
            y: 0.0,
            w: extent.width as f32,
            h: extent.height as f32,
        };
        let viewport = flipped_viewport(&full, 0.0..1.0);
        let area = info.render_area;
        let d = &self.device.raw;
        // SAFETY: recording, outside any pass (checked); the views came
        // from this device, are in the usages named and cover the extent
        // (the trait contract); every pointer in `info` outlives the call.
        unsafe {
            d.cmd_begin_rendering(raw, &info);
            d.cmd_set_viewport(raw, 0, &[viewport]);
            d.cmd_set_scissor(raw, 0, &[area]);
            d.cmd_set_stencil_reference(raw, vk::StencilFaceFlags::FRONT_AND_BACK, 0);
            d.cmd_set_blend_constants(raw, &[0.0; 4]);
        }
    }

    /// See `CommandEncoder::end_render_pass`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_end_render(&mut self) {
        let Some(raw) = self.recording() else { return };
        let PassKind::Render { rendering } = self.temp.pass.kind else {
            crate::refusal::refused!("keel-hal: end_render_pass outside a render pass; ignored");
            return;
        };
        if rendering {
            // SAFETY: recording, inside the rendering this pass began.
            unsafe { self.fns.cmd_end_rendering(raw) };
        }
        self.close_pass(raw);
    }

    /// See `CommandEncoder::begin_compute_pass`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_begin_compute(&mut self, desc: &ComputePassDescriptor) {
        if let Some(raw) = self.start_pass(PassKind::Compute, "begin_compute_pass") {
            self.open_pass_label(raw, desc.label);
        }
    }

    /// See `CommandEncoder::end_compute_pass`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_end_compute(&mut self) {
        let Some(raw) = self.recording() else { return };
        if self.temp.pass.kind != PassKind::Compute {
            crate::refusal::refused!("keel-hal: end_compute_pass outside a compute pass; ignored");
            return;
        }
        self.close_pass(raw);
    }

    /// See `CommandEncoder::begin_ray_tracing_pass`. On a device without
    /// ray-tracing pipelines no pass begins (logged): the ray-tracing bind
    /// point does not exist there, and the pass's commands are skipped.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_begin_ray_tracing(&mut self, desc: &ComputePassDescriptor) {
        if self.device.ray_tracing.is_none() {
            crate::refusal::refused!(
                "keel-hal: begin_ray_tracing_pass on a device without ray-tracing pipelines; \
                 skipped"
            );
            return;
        }
        if let Some(raw) = self.start_pass(PassKind::RayTracing, "begin_ray_tracing_pass") {
            self.open_pass_label(raw, desc.label);
        }
    }

    /// See `CommandEncoder::end_ray_tracing_pass`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_end_ray_tracing(&mut self) {
        let Some(raw) = self.recording() else { return };
        if self.temp.pass.kind != PassKind::RayTracing {
            crate::refusal::refused!(
                "keel-hal: end_ray_tracing_pass outside a ray-tracing pass; ignored"
            );
            return;
        }
        self.close_pass(raw);
    }

    /// See `CommandEncoder::set_bind_group`.
    ///
    /// # Safety
    /// As the trait method.
    #[inline]
    pub(super) unsafe fn pass_set_bind_group(
        &mut self,
        layout: &PipelineLayout,
        index: u32,
        group: &BindGroup,
        dynamic_offsets: &[wgt::DynamicOffset],
    ) {
        // Set only inside a pass of the recording in progress, so this is
        // also the "recording" check.
        let Some((raw, bind_point)) = self.temp.pass.bind else {
            self.bind_refused();
            return;
        };
        // Both tests, one branch: a call that fits takes neither.
        if (index as usize >= layout.groups.len())
            | (dynamic_offsets.len() != group.dynamic_count as usize)
        {
            bind_group_mismatch(
                index,
                layout.groups.len(),
                dynamic_offsets.len(),
                group.dynamic_count,
            );
            return;
        }
        // SAFETY: recording inside a pass (checked); the group's layout is
        // the layout's `index`-th and the offsets keep every range in its
        // buffer (the trait contract); the offset count matches (checked).
        unsafe {
            self.fns.cmd_bind_descriptor_sets(
                raw,
                bind_point,
                layout.raw,
                index,
                group.set.raw_slice(),
                dynamic_offsets,
            )
        };
    }

    /// See `CommandEncoder::set_push_constants`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_push_constants(
        &mut self,
        layout: &PipelineLayout,
        stages: wgt::ShaderStages,
        offset: u32,
        data: &[u32],
    ) {
        let Some(raw) = self.recording() else { return };
        if self.temp.pass.kind == PassKind::None {
            crate::refusal::refused!("keel-hal: set_push_constants outside a pass; skipped");
            return;
        }
        let len = u32::try_from(std::mem::size_of_val(data)).unwrap_or(u32::MAX);
        if !push_constants_fit(layout, stages, offset, len) {
            crate::refusal::refused!(
                "keel-hal: set_push_constants: {len} bytes at {offset} for {stages:?} do not lie \
                 in the layout's push-constant ranges for those stages; skipped"
            );
            return;
        }
        if data.is_empty() {
            return;
        }
        // SAFETY: `data` is `len` initialised bytes; `u8` has no alignment
        // or validity requirement.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), len as usize) };
        // SAFETY: recording inside a pass; the range lies in the layout's
        // ranges for `stages` (checked).
        unsafe {
            self.fns.cmd_push_constants(
                raw,
                layout.raw,
                conv::map_shader_stages(stages),
                offset,
                bytes,
            )
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viewports_are_flipped() {
        let rect = Rect {
            x: 10.0,
            y: 20.0,
            w: 100.0,
            h: 50.0,
        };
        let v = flipped_viewport(&rect, 0.0..1.0);
        assert_eq!((v.x, v.y, v.width, v.height), (10.0, 70.0, 100.0, -50.0));
        assert_eq!((v.min_depth, v.max_depth), (0.0, 1.0));
    }

    #[test]
    fn clear_values_follow_the_format() {
        let c = wgt::Color {
            r: 1.5,
            g: -1.0,
            b: 3.0,
            a: 1e20,
        };
        // SAFETY: each union field read is the one written for that format.
        unsafe {
            assert_eq!(
                clear_color(wgt::TextureFormat::Rgba8Unorm, c).float32,
                [1.5, -1.0, 3.0, 1e20]
            );
            assert_eq!(
                clear_color(wgt::TextureFormat::Rgba8Uint, c).uint32,
                [1, 0, 3, u32::MAX]
            );
            assert_eq!(
                clear_color(wgt::TextureFormat::Rgba8Sint, c).int32,
                [1, -1, 3, i32::MAX]
            );
        }
        assert!(is_integer(wgt::TextureFormat::R32Uint));
        assert!(!is_integer(wgt::TextureFormat::Rgba16Float));
    }

    #[test]
    fn ops_map_to_load_clear_store_discard() {
        assert_eq!(load_op(AttachmentOps::LOAD), vk::AttachmentLoadOp::LOAD);
        assert_eq!(load_op(AttachmentOps::STORE), vk::AttachmentLoadOp::CLEAR);
        assert_eq!(store_op(AttachmentOps::STORE), vk::AttachmentStoreOp::STORE);
        assert_eq!(
            store_op(AttachmentOps::empty()),
            vk::AttachmentStoreOp::DONT_CARE
        );
    }
}
