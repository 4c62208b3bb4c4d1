//! Commands inside passes: pipelines, vertex and index buffers, dynamic
//! state, draws and dispatches (the passes themselves are in `pass.rs`).
//!
//! Each command checks, in a comparison or two, that it is recorded inside
//! the kind of pass it belongs to, and that a buffer range or indirect
//! argument set lies in its buffer (`bounds.rs`); otherwise it is logged
//! and skipped, never handed to the driver. Nothing is allocated.

use ash::vk;

use super::pass::flipped_viewport;
use super::{bounds, conv, Buffer, CommandEncoder, ComputePipeline, RenderPipeline};
use crate::{BufferBinding, Rect};

/// Bytes of one `VkDrawIndirectCommand`.
const DRAW_ARGS: u64 = 16;
/// Bytes of one `VkDrawIndexedIndirectCommand`.
const DRAW_INDEXED_ARGS: u64 = 20;
/// Bytes of one `VkDispatchIndirectCommand`.
const DISPATCH_ARGS: u64 = 12;

fn scissor(rect: &Rect<u32>) -> vk::Rect2D {
    let clamp = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
    vk::Rect2D {
        offset: vk::Offset2D {
            x: clamp(rect.x),
            y: clamp(rect.y),
        },
        extent: vk::Extent2D {
            width: rect.w,
            height: rect.h,
        },
    }
}

/// Whether `count` argument sets of `size` bytes at `offset` (a multiple of
/// 4) lie in the buffer; logs when they do not.
fn indirect_fits(buffer: &Buffer, offset: u64, count: u32, size: u64, what: &str) -> bool {
    let fits = offset % 4 == 0
        && u64::from(count)
            .checked_mul(size)
            .is_some_and(|len| bounds::byte_range_fits(buffer.size, offset, len));
    if !fits {
        log::error!(
            "keel-hal: {what}: {count} argument sets of {size} bytes at offset {offset} do not \
             fit the buffer of {} bytes (or the offset is not a multiple of 4); skipped",
            buffer.size
        );
    }
    fits
}

/// Whether a vertex or index buffer binding lies in its buffer; logs when not.
fn binding_fits(binding: &BufferBinding<'_, Buffer>, what: &str) -> bool {
    let size = binding.buffer.size;
    let fits = match binding.size {
        Some(len) => bounds::byte_range_fits(size, binding.offset, len.get()),
        None => binding.offset < size,
    };
    if !fits {
        log::error!(
            "keel-hal: {what}: range {}+{:?} is outside the buffer of {size} bytes; skipped",
            binding.offset,
            binding.size
        );
    }
    fits
}
impl CommandEncoder {
    /// See `CommandEncoder::set_render_pipeline`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_render_pipeline(&mut self, pipeline: &RenderPipeline) {
        let Some(raw) = self.in_pass(true, "set_render_pipeline") else {
            return;
        };
        // SAFETY: inside a render pass whose formats match the pipeline's
        // (the trait contract).
        unsafe {
            self.fns
                .cmd_bind_pipeline(raw, vk::PipelineBindPoint::GRAPHICS, pipeline.raw)
        };
    }

    /// See `CommandEncoder::set_index_buffer`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_index_buffer(
        &mut self,
        binding: BufferBinding<'_, Buffer>,
        format: wgt::IndexFormat,
    ) {
        let Some(raw) = self.in_pass(true, "set_index_buffer") else {
            return;
        };
        if !binding_fits(&binding, "set_index_buffer") {
            return;
        }
        // SAFETY: inside a render pass; the buffer has INDEX usage and is
        // in `INDEX` (the trait contract); the offset lies in it (checked).
        unsafe {
            self.fns.cmd_bind_index_buffer(
                raw,
                binding.buffer.raw,
                binding.offset,
                conv::map_index_format(format),
            )
        };
    }

    /// See `CommandEncoder::set_vertex_buffer`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_vertex_buffer(
        &mut self,
        index: u32,
        binding: BufferBinding<'_, Buffer>,
    ) {
        let Some(raw) = self.in_pass(true, "set_vertex_buffer") else {
            return;
        };
        if !binding_fits(&binding, "set_vertex_buffer") {
            return;
        }
        // The size to the end, rather than VK_WHOLE_SIZE, which validation
        // layers before 1.3.250 or so reject here.
        let buffer = binding.buffer;
        let size = binding
            .size
            .map_or(buffer.size - binding.offset, |s| s.get());
        // SAFETY: inside a render pass; the buffer has VERTEX usage and is
        // in `VERTEX` (the trait contract); the range lies in it (checked).
        unsafe {
            self.fns.cmd_bind_vertex_buffers2(
                raw,
                index,
                &[binding.buffer.raw],
                &[binding.offset],
                Some(&[size]),
                None,
            )
        };
    }

    /// See `CommandEncoder::set_viewport`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_viewport(
        &mut self,
        rect: &Rect<f32>,
        depth_range: std::ops::Range<f32>,
    ) {
        let Some(raw) = self.in_pass(true, "set_viewport") else {
            return;
        };
        let viewport = flipped_viewport(rect, depth_range);
        // SAFETY: inside a render pass; negative heights are core (1.1).
        unsafe { self.fns.cmd_set_viewport(raw, 0, &[viewport]) };
    }

    /// See `CommandEncoder::set_scissor_rect`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_scissor_rect(&mut self, rect: &Rect<u32>) {
        let Some(raw) = self.in_pass(true, "set_scissor_rect") else {
            return;
        };
        // SAFETY: inside a render pass; the rectangle lies in the render
        // area (the trait contract), so its offsets fit an i32.
        unsafe { self.fns.cmd_set_scissor(raw, 0, &[scissor(rect)]) };
    }

    /// See `CommandEncoder::set_stencil_reference`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_stencil_reference(&mut self, value: u32) {
        let Some(raw) = self.in_pass(true, "set_stencil_reference") else {
            return;
        };
        // SAFETY: inside a render pass.
        unsafe {
            self.fns
                .cmd_set_stencil_reference(raw, vk::StencilFaceFlags::FRONT_AND_BACK, value)
        };
    }

    /// See `CommandEncoder::set_blend_constants`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_blend_constants(&mut self, color: &[f32; 4]) {
        let Some(raw) = self.in_pass(true, "set_blend_constants") else {
            return;
        };
        // SAFETY: inside a render pass.
        unsafe { self.fns.cmd_set_blend_constants(raw, color) };
    }

    /// See `CommandEncoder::draw`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_draw(
        &mut self,
        first_vertex: u32,
        vertex_count: u32,
        first_instance: u32,
        instance_count: u32,
    ) {
        let Some(raw) = self.in_pass(true, "draw") else {
            return;
        };
        // SAFETY: inside a render pass with the pipeline, bind groups and
        // vertex buffers bound and the vertices in range (the trait contract).
        unsafe {
            self.fns.cmd_draw(
                raw,
                vertex_count,
                instance_count,
                first_vertex,
                first_instance,
            )
        };
    }

    /// See `CommandEncoder::draw_indexed`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_draw_indexed(
        &mut self,
        first_index: u32,
        index_count: u32,
        base_vertex: i32,
        first_instance: u32,
        instance_count: u32,
    ) {
        let Some(raw) = self.in_pass(true, "draw_indexed") else {
            return;
        };
        // SAFETY: as `pass_draw`, plus an index buffer bound with the
        // indices in range (the trait contract).
        unsafe {
            self.fns.cmd_draw_indexed(
                raw,
                index_count,
                instance_count,
                first_index,
                base_vertex,
                first_instance,
            )
        };
    }

    /// Records `draw_count` indirect draws of `size`-byte arguments: one
    /// call per `maxDrawIndirectCount` with multiDrawIndirect, else one
    /// call per draw.
    ///
    /// # Safety
    /// As `draw_indirect`/`draw_indexed_indirect`; `indexed` picks which.
    unsafe fn indirect_draws(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        draw_count: u32,
        indexed: bool,
    ) {
        let (what, size) = if indexed {
            ("draw_indexed_indirect", DRAW_INDEXED_ARGS)
        } else {
            ("draw_indirect", DRAW_ARGS)
        };
        let Some(raw) = self.in_pass(true, what) else {
            return;
        };
        if !indirect_fits(buffer, offset, draw_count, size, what) {
            return;
        }
        let device = &self.device;
        let per_call = if device.physical.features.multi_draw_indirect {
            device
                .physical
                .properties
                .limits
                .max_draw_indirect_count
                .max(1)
        } else {
            1
        };
        let (mut done, mut at) = (0u32, offset);
        while done < draw_count {
            let count = per_call.min(draw_count - done);
            // SAFETY: inside a render pass with everything bound and the
            // buffer in `INDIRECT` (the trait contract); `count` argument
            // sets at `at` lie in the buffer (checked above); `count` is 1
            // without multiDrawIndirect and at most maxDrawIndirectCount;
            // the stride is the argument size (>= the struct, a multiple of 4).
            unsafe {
                if indexed {
                    device
                        .raw
                        .cmd_draw_indexed_indirect(raw, buffer.raw, at, count, size as u32)
                } else {
                    device
                        .raw
                        .cmd_draw_indirect(raw, buffer.raw, at, count, size as u32)
                }
            };
            done += count;
            at += u64::from(count) * size;
        }
    }

    /// See `CommandEncoder::draw_indirect`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_draw_indirect(&mut self, buffer: &Buffer, offset: u64, count: u32) {
        // SAFETY: forwarded contract.
        unsafe { self.indirect_draws(buffer, offset, count, false) };
    }

    /// See `CommandEncoder::draw_indexed_indirect`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_draw_indexed_indirect(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count: u32,
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.indirect_draws(buffer, offset, count, true) };
    }

    /// See `CommandEncoder::set_compute_pipeline`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_compute_pipeline(&mut self, pipeline: &ComputePipeline) {
        let Some(raw) = self.in_pass(false, "set_compute_pipeline") else {
            return;
        };
        // SAFETY: inside a compute pass.
        unsafe {
            self.fns
                .cmd_bind_pipeline(raw, vk::PipelineBindPoint::COMPUTE, pipeline.raw)
        };
    }

    /// See `CommandEncoder::dispatch`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_dispatch(&mut self, count: [u32; 3]) {
        let Some(raw) = self.in_pass(false, "dispatch") else {
            return;
        };
        let max = self.device.limits.max_compute_workgroups_per_dimension;
        if count.iter().any(|&n| n > max) {
            log::error!(
                "keel-hal: dispatch of {count:?} workgroups exceeds {max} per dimension; skipped"
            );
            return;
        }
        let [x, y, z] = count;
        // SAFETY: inside a compute pass with the pipeline and its bind
        // groups bound (the trait contract); counts within the limit (checked).
        unsafe { self.fns.cmd_dispatch(raw, x, y, z) };
    }

    /// See `CommandEncoder::dispatch_indirect`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_dispatch_indirect(&mut self, buffer: &Buffer, offset: u64) {
        let Some(raw) = self.in_pass(false, "dispatch_indirect") else {
            return;
        };
        if !indirect_fits(buffer, offset, 1, DISPATCH_ARGS, "dispatch_indirect") {
            return;
        }
        // SAFETY: inside a compute pass with everything bound, the buffer in
        // `INDIRECT` (the trait contract); the counts lie in it (checked).
        unsafe { self.fns.cmd_dispatch_indirect(raw, buffer.raw, offset) };
    }
}
