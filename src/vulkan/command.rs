//! Command recording: the life cycle of command buffers, barriers, copies,
//! debug markers and queries. Pass methods forward to `pass.rs`.
//!
//! An encoder owns one `VkCommandPool` and recycles its command buffers:
//! `begin_encoding` takes a reset buffer from `free` (or allocates one, and
//! remembers it in `allocated`), `end_encoding` hands it out, `reset_all`
//! resets the whole pool with one `vkResetCommandPool` and then makes *every*
//! buffer it ever allocated free again: returned, discarded and unreturned
//! ones alike (the contract says unreturned buffers are never submitted
//! again), so the pool never grows past the most buffers in flight at once.
//! Buffers handed back are only checked to come from this encoder's pool;
//! a foreign one is logged and left alone. Barriers and copy regions are converted into the vectors of
//! [`Temp`], which keep their capacity, so recording allocates nothing once
//! the encoder has warmed up. Barriers are synchronization2
//! (`vkCmdPipelineBarrier2`); their scopes and layouts come from `barrier.rs`.
//!
//! Recording calls are `void` in Vulkan and stay `void` here. One that is
//! made with no recording in progress (a broken contract), or a region that
//! falls outside its resource (`bounds.rs`), is logged and skipped rather
//! than handed to the driver.

use std::ffi::CStr;
use std::ops::Range;

use ash::vk;

use super::copy::{buffer_image_copy, copy_extent, image_side};
use super::pass::PassState;
use super::{barrier, bounds, conv, Buffer, CommandBuffer, CommandEncoder, QuerySet, Texture};
use super::{BindGroup, ComputePipeline, PipelineLayout, RenderPipeline};
use crate::{
    BufferBarrier, BufferBinding, BufferCopy, BufferTextureCopy, ComputePassDescriptor,
    DeviceError, Rect, RenderPassDescriptor, TextureBarrier, TextureCopy, TextureUses,
};

/// Scratch vectors reused across recording calls, plus the encoder's label state.
#[derive(Debug, Default)]
pub(crate) struct Temp {
    buffer_barriers: Vec<vk::BufferMemoryBarrier2<'static>>,
    image_barriers: Vec<vk::ImageMemoryBarrier2<'static>>,
    buffer_copies: Vec<vk::BufferCopy>,
    buffer_image_copies: Vec<vk::BufferImageCopy>,
    image_copies: Vec<vk::ImageCopy>,
    /// Null-terminated copy of a label too long for the stack buffer.
    pub(super) label: Vec<u8>,
    /// `begin_encoding` opened a debug label region that `end_encoding` closes.
    encoding_label_open: bool,
    /// The pass in progress (`pass.rs`).
    pub(super) pass: PassState,
    /// Build and compaction scratch (`acceleration_commands.rs`).
    pub(super) accel: super::acceleration_commands::AccelTemp,
}

// SAFETY: the only raw pointers in `Temp` are the `p_next` fields of the
// barrier structs, which this file never sets: they are always null.
// `accel` is `Send + Sync` itself (see `acceleration_commands.rs`). Every
// other field is plain data, and `&mut CommandEncoder` serialises all use.
unsafe impl Send for Temp {}
// SAFETY: as above; through a shared reference (only `Debug` uses one) the
// fields are plain data and null pointers.
unsafe impl Sync for Temp {}

/// Labels shorter than this are terminated in a stack buffer.
const INLINE_LABEL: usize = 64;

/// Calls `f` with `label` as a C string: in a stack buffer when it is short,
/// else in `scratch` (which keeps its capacity). An interior NUL ends the label.
pub(super) fn with_c_label<R>(scratch: &mut Vec<u8>, label: &str, f: impl FnOnce(&CStr) -> R) -> R {
    let bytes = label.as_bytes();
    let mut inline = [0u8; INLINE_LABEL];
    let terminated: &[u8] = if bytes.len() < INLINE_LABEL {
        inline[..bytes.len()].copy_from_slice(bytes);
        &inline
    } else {
        scratch.clear();
        scratch.extend_from_slice(bytes);
        scratch.push(0);
        scratch
    };
    // Both buffers hold a NUL, so this cannot fail; the empty label is a
    // harmless answer if it ever did.
    f(CStr::from_bytes_until_nul(terminated).unwrap_or_default())
}

/// Logs a command recorded with no recording in progress (kept out of line:
/// the per-command path is only the test).
#[cold]
#[inline(never)]
fn not_recording() {
    crate::refusal::refused!("keel-hal: command recorded with no recording in progress; ignored");
}

impl CommandEncoder {
    /// The command buffer being recorded; logs and answers `None` when there
    /// is none (the caller broke the "recording" contract).
    #[inline]
    pub(super) fn recording(&self) -> Option<vk::CommandBuffer> {
        if self.active.is_none() {
            not_recording();
        }
        self.active
    }

    /// Ends the recording state, whatever ends it (end, discard, reset, a
    /// new begin): no command buffer and no pass, so the pass state's
    /// command buffers (`PassState::bind` and the rest) never outlive
    /// their recording.
    fn end_recording(&mut self) -> Option<vk::CommandBuffer> {
        self.temp.pass = PassState::default();
        self.active.take()
    }

    /// The command buffer being recorded, if any: an escape hatch for
    /// recording raw Vulkan commands between hal calls (docs/design.md §11.7).
    ///
    /// The hal still owns it: do not end, reset or free it. Raw commands
    /// must leave the state the hal relies on as they found it (no open
    /// render pass or query the hal does not know of).
    pub fn raw_command_buffer(&self) -> Option<vk::CommandBuffer> {
        self.active
    }

    /// The raw `VkCommandPool` the encoder records from. The hal still owns
    /// it: do not reset or destroy it.
    pub fn raw_pool(&self) -> vk::CommandPool {
        self.pool
    }

    /// How many command buffers the encoder has allocated so far (the pool
    /// only grows past the most buffers in flight at once).
    pub fn allocated_command_buffers(&self) -> usize {
        self.allocated.len()
    }

    /// Allocates one primary command buffer from the pool and remembers it.
    fn allocate(&mut self) -> Result<vk::CommandBuffer, DeviceError> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: `self.pool` is this device's live pool (the encoder owns
        // it until `destroy_command_encoder`), and `&self` reached through
        // the trait's `&mut self` methods serialises access to it.
        let raws = unsafe { self.device.raw.allocate_command_buffers(&info) }
            .map_err(|e| self.device.check(e))?;
        let raw = raws.first().copied().ok_or(DeviceError::Unexpected)?;
        // Freed with the pool; reused after every `reset_all`.
        self.allocated.push(raw);
        Ok(raw)
    }
}

impl crate::CommandEncoder for CommandEncoder {
    type A = super::Api;

    unsafe fn begin_encoding(&mut self, label: Option<&str>) -> Result<(), DeviceError> {
        // A lost device stays lost: the driver is not asked again.
        self.device.lost.check::<DeviceError>()?;
        // A recording thread calls the driver (`workarounds.rs`).
        self.device.physical.workarounds.enter_driver();
        if self.end_recording().is_some() {
            // It waits, like every buffer not on `free`, for the next pool reset.
            crate::refusal::refused!(
                "keel-hal: begin_encoding during a recording; the old one is discarded"
            );
        }
        let raw = match self.free.pop() {
            Some(raw) => raw,
            None => self.allocate()?,
        };
        // No ONE_TIME_SUBMIT: a command buffer may be submitted again once
        // its previous submission completed (the `Queue::submit` contract).
        let info = vk::CommandBufferBeginInfo::default();
        // SAFETY: `raw` came from `self.pool` and is in the initial state:
        // freshly allocated, or reset by `reset_all`'s pool reset, whose
        // contract says none of its buffers was pending.
        if let Err(err) = unsafe { self.device.raw.begin_command_buffer(raw, &info) } {
            // Its state after a failed begin is not specified: it is not put
            // back on `free`, so only the next pool reset makes it reusable.
            return Err(self.device.check(err));
        }
        self.active = Some(raw);
        self.temp.encoding_label_open = false;
        if let (Some(debug_utils), Some(label)) = (&self.device.debug_utils, label) {
            with_c_label(&mut self.temp.label, label, |name| {
                let info = vk::DebugUtilsLabelEXT::default().label_name(name);
                // SAFETY: `raw` is recording (begun above); `info` and the
                // name it points to live across the call.
                unsafe { debug_utils.cmd_begin_debug_utils_label(raw, &info) };
            });
            self.temp.encoding_label_open = true;
        }
        Ok(())
    }

    unsafe fn discard_encoding(&mut self) {
        self.temp.encoding_label_open = false;
        if self.recording().is_some() {
            // Reset with the pool, and reused, at the next `reset_all`.
            self.end_recording();
        }
    }

    unsafe fn end_encoding(&mut self) -> Result<CommandBuffer, DeviceError> {
        // A lost device stays lost: the recording is dropped, to be reset
        // with the pool.
        if let Err(lost) = self.device.lost.check() {
            self.end_recording();
            self.temp.encoding_label_open = false;
            return Err(lost);
        }
        let Some(raw) = self.recording() else {
            return Err(DeviceError::InvalidState(
                "end_encoding without begin_encoding",
            ));
        };
        self.end_recording();
        if std::mem::take(&mut self.temp.encoding_label_open) {
            if let Some(debug_utils) = &self.device.debug_utils {
                // SAFETY: `raw` is recording, and the region `begin_encoding`
                // opened is the innermost one (the trait contract pairs
                // every `begin_debug_marker` with an `end_debug_marker`).
                unsafe { debug_utils.cmd_end_debug_utils_label(raw) };
            }
        }
        // SAFETY: `raw` is in the recording state (the trait contract: a
        // recording is in progress), and the encoder serialises its pool.
        match unsafe { self.device.raw.end_command_buffer(raw) } {
            Ok(()) => Ok(CommandBuffer {
                raw,
                pool: self.pool,
            }),
            // Now invalid: only the next pool reset makes it usable again.
            Err(err) => Err(self.device.check(err)),
        }
    }

    /// Resets the whole pool once, then makes every buffer it allocated
    /// free again: returned, discarded and unreturned ones (the contract
    /// says unreturned buffers are never submitted again). Returned buffers
    /// only have their pool checked: one from another encoder is logged and
    /// left alone, never reused here. Allocates nothing.
    unsafe fn reset_all<I>(&mut self, command_buffers: I)
    where
        I: IntoIterator<Item = CommandBuffer>,
    {
        // Resetting frees what a pending submission holds, as a destroy does.
        self.device.retire_after_loss();
        for foreign in command_buffers
            .into_iter()
            .filter(|cb| cb.pool != self.pool)
        {
            crate::refusal::refused!(
                "keel-hal: reset_all was handed command buffer {:?} of another encoder; ignored",
                foreign.raw
            );
        }
        if self.end_recording().is_some() {
            crate::refusal::refused!(
                "keel-hal: reset_all during a recording; the recording is discarded"
            );
            self.temp.encoding_label_open = false;
        }
        // SAFETY: the trait contract says no buffer from this encoder is
        // pending, so the GPU is done with their compacted-size queries.
        unsafe { self.release_compaction_slots() };
        // SAFETY: the pool is this encoder's and `&mut self` serialises it;
        // the trait contract says no buffer from this encoder is pending.
        let reset = unsafe {
            self.device
                .raw
                .reset_command_pool(self.pool, vk::CommandPoolResetFlags::empty())
        };
        match reset {
            Ok(()) => {
                self.free.clear();
                self.free.extend_from_slice(&self.allocated);
            }
            // Nothing was reset: `free` still holds only initial-state
            // buffers, and the rest wait for the next successful reset.
            Err(err) => log::error!("keel-hal: vkResetCommandPool failed: {err:?}"),
        }
    }

    unsafe fn transition_buffers(&mut self, barriers: &[BufferBarrier<'_, Buffer>]) {
        let Some(raw) = self.barrier_allowed("transition_buffers") else {
            return;
        };
        let shaders = barrier::shader_stages(self.device.ray_tracing.is_some());
        let temp = &mut self.temp.buffer_barriers;
        temp.clear();
        temp.extend(
            barriers
                .iter()
                .filter(|b| barrier::buffer_needs_barrier(b.usage.from, b.usage.to))
                .map(|b| {
                    let (src_stage, src_access) = barrier::buffer_scope(b.usage.from, shaders);
                    let (dst_stage, dst_access) = barrier::buffer_scope(b.usage.to, shaders);
                    vk::BufferMemoryBarrier2::default()
                        .src_stage_mask(src_stage)
                        .src_access_mask(barrier::writes(src_access))
                        .dst_stage_mask(dst_stage)
                        .dst_access_mask(dst_access)
                        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                        .buffer(b.buffer.raw)
                        .offset(0)
                        .size(vk::WHOLE_SIZE)
                }),
        );
        if temp.is_empty() {
            return;
        }
        let info = vk::DependencyInfo::default().buffer_memory_barriers(temp);
        // SAFETY: recording (checked above); every buffer is alive and in
        // `usage.from` (the trait contract), so the scopes are the real ones.
        unsafe { self.fns.cmd_pipeline_barrier2(raw, &info) };
    }

    unsafe fn transition_textures(&mut self, barriers: &[TextureBarrier<'_, Texture>]) {
        let Some(raw) = self.barrier_allowed("transition_textures") else {
            return;
        };
        let swapchain = self.device.swapchain;
        let shaders = barrier::shader_stages(self.device.ray_tracing.is_some());
        let temp = &mut self.temp.image_barriers;
        temp.clear();
        temp.extend(
            barriers
                .iter()
                .filter(|b| barrier::texture_needs_barrier(b.usage.from, b.usage.to, swapchain))
                .filter(|b| {
                    let fits = bounds::barrier_range_fits(b.texture, &b.range)
                        && !conv::map_barrier_aspect(b.texture.format, b.range.aspect).is_empty();
                    if !fits {
                        crate::refusal::refused!(
                            "keel-hal: transition_textures: range {:?} is not in the texture \
                             ({:?}, {} mips); barrier skipped",
                            b.range,
                            b.texture.format,
                            b.texture.mip_level_count
                        );
                    }
                    fits
                })
                .map(|b| {
                    let (src_stage, src_access) = barrier::texture_scope(b.usage.from, shaders);
                    let (dst_stage, dst_access) = barrier::texture_scope(b.usage.to, shaders);
                    vk::ImageMemoryBarrier2::default()
                        .src_stage_mask(src_stage)
                        .src_access_mask(barrier::writes(src_access))
                        .dst_stage_mask(dst_stage)
                        .dst_access_mask(dst_access)
                        .old_layout(barrier::texture_layout(b.usage.from, swapchain))
                        .new_layout(barrier::texture_layout(b.usage.to, swapchain))
                        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                        .image(b.texture.raw)
                        .subresource_range(conv::map_barrier_range(&b.range, b.texture.format))
                }),
        );
        if temp.is_empty() {
            return;
        }
        let info = vk::DependencyInfo::default().image_memory_barriers(temp);
        // SAFETY: recording (checked above); every texture is alive and each
        // range really is in `usage.from` (the trait contract), so the old
        // layouts and source scopes are the real ones.
        unsafe { self.fns.cmd_pipeline_barrier2(raw, &info) };
    }

    unsafe fn clear_buffer(&mut self, buffer: &Buffer, range: Range<u64>) {
        let Some(raw) = self.recording() else { return };
        let len = range.end.checked_sub(range.start);
        if !len.is_some_and(|len| bounds::byte_range_fits(buffer.size, range.start, len)) {
            crate::refusal::refused!(
                "keel-hal: clear_buffer range {range:?} is outside the buffer of {} bytes; skipped",
                buffer.size
            );
            return;
        }
        if range.is_empty() {
            return;
        }
        // SAFETY: recording; the buffer is alive and in `COPY_DST`, the range
        // lies inside it (checked) and is 4-byte aligned (the trait contract).
        unsafe {
            self.fns
                .cmd_fill_buffer(raw, buffer.raw, range.start, range.end - range.start, 0)
        };
    }

    unsafe fn clear_texture(
        &mut self,
        texture: &Texture,
        range: &wgt::ImageSubresourceRange,
    ) -> Result<(), crate::TextureError> {
        let facts = texture.facts();
        let clear = crate::validate::clear::check_clear(&facts, range, self.device.features)?;
        let raw =
            self.recording()
                .ok_or(crate::TextureError::Device(DeviceError::InvalidState(
                    "clear_texture outside begin_encoding/end_encoding",
                )))?;
        let subresource = vk::ImageSubresourceRange {
            aspect_mask: conv::map_aspect(texture.format, range.aspect),
            base_mip_level: clear.mips.0,
            level_count: clear.mips.1,
            base_array_layer: clear.layers.0,
            layer_count: clear.layers.1,
        };
        let layout = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
        // SAFETY: recording, outside a render pass, the subresources in
        // `COPY_DST` (the trait contract); the image has `TRANSFER_DST`
        // usage, an uncompressed single-plane format with the aspect, and
        // the range lies in it (checked).
        unsafe {
            if texture.format.is_depth_stencil_format() {
                let zero = vk::ClearDepthStencilValue::default();
                self.fns.cmd_clear_depth_stencil_image(
                    raw,
                    texture.raw,
                    layout,
                    &zero,
                    &[subresource],
                )
            } else {
                let zero = vk::ClearColorValue::default();
                self.fns
                    .cmd_clear_color_image(raw, texture.raw, layout, &zero, &[subresource])
            }
        };
        Ok(())
    }

    unsafe fn copy_buffer_to_buffer(&mut self, src: &Buffer, dst: &Buffer, regions: &[BufferCopy]) {
        let Some(raw) = self.recording() else { return };
        let temp = &mut self.temp.buffer_copies;
        temp.clear();
        temp.extend(
            regions
                .iter()
                .filter(|r| {
                    let fits = bounds::buffer_copy_fits(src, dst, r);
                    if !fits {
                        crate::refusal::refused!(
                            "keel-hal: copy_buffer_to_buffer region {r:?} is outside a buffer \
                             (src {} bytes, dst {} bytes); skipped",
                            src.size,
                            dst.size
                        );
                    }
                    fits && r.size != 0
                })
                .map(|r| vk::BufferCopy {
                    src_offset: r.src_offset,
                    dst_offset: r.dst_offset,
                    size: r.size,
                }),
        );
        if temp.is_empty() {
            return;
        }
        // SAFETY: recording; both buffers alive, `src` in `COPY_SRC`, `dst`
        // in `COPY_DST` and regions not overlapping (the trait contract);
        // regions inside both (checked).
        unsafe { self.fns.cmd_copy_buffer(raw, src.raw, dst.raw, temp) };
    }

    unsafe fn copy_buffer_to_texture(
        &mut self,
        src: &Buffer,
        dst: &Texture,
        regions: &[BufferTextureCopy],
    ) {
        let Some(raw) = self.recording() else { return };
        let temp = &mut self.temp.buffer_image_copies;
        temp.clear();
        temp.extend(
            regions
                .iter()
                .filter_map(|r| buffer_image_copy("copy_buffer_to_texture", dst, src, r)),
        );
        if temp.is_empty() {
            return;
        }
        let layout = barrier::texture_layout(TextureUses::COPY_DST, self.device.swapchain);
        // SAFETY: recording; `src` in `COPY_SRC`, `dst` in `COPY_DST` (so in
        // `layout`), regions block-aligned (the trait contract); regions
        // inside both, one aspect each (checked).
        unsafe {
            self.fns
                .cmd_copy_buffer_to_image(raw, src.raw, dst.raw, layout, temp)
        };
    }

    unsafe fn copy_texture_to_buffer(
        &mut self,
        src: &Texture,
        src_usage: TextureUses,
        dst: &Buffer,
        regions: &[BufferTextureCopy],
    ) {
        let Some(raw) = self.recording() else { return };
        let temp = &mut self.temp.buffer_image_copies;
        temp.clear();
        temp.extend(
            regions
                .iter()
                .filter_map(|r| buffer_image_copy("copy_texture_to_buffer", src, dst, r)),
        );
        if temp.is_empty() {
            return;
        }
        let layout = barrier::texture_layout(src_usage, self.device.swapchain);
        // SAFETY: recording; `src` is in `src_usage` (so in `layout`), `dst`
        // in `COPY_DST` (the trait contract); regions inside both, one
        // aspect each (checked).
        unsafe {
            self.fns
                .cmd_copy_image_to_buffer(raw, src.raw, layout, dst.raw, temp)
        };
    }

    unsafe fn copy_texture_to_texture(
        &mut self,
        src: &Texture,
        src_usage: TextureUses,
        dst: &Texture,
        regions: &[TextureCopy],
    ) {
        let Some(raw) = self.recording() else { return };
        let any_3d = src.dimension == wgt::TextureDimension::D3
            || dst.dimension == wgt::TextureDimension::D3;
        let temp = &mut self.temp.image_copies;
        temp.clear();
        temp.extend(regions.iter().filter_map(|r| {
            let fits = bounds::texture_region_fits(src, &r.src_base, r.size)
                && bounds::texture_region_fits(dst, &r.dst_base, r.size);
            if !fits {
                crate::refusal::refused!(
                    "keel-hal: copy_texture_to_texture region {:?} from {:?} to {:?} is outside \
                     a texture; skipped",
                    r.size,
                    r.src_base,
                    r.dst_base
                );
                return None;
            }
            let layers = r.size.depth_or_array_layers;
            let (src_subresource, src_offset) = image_side(src, &r.src_base, layers);
            let (dst_subresource, dst_offset) = image_side(dst, &r.dst_base, layers);
            Some(vk::ImageCopy {
                src_subresource,
                src_offset,
                dst_subresource,
                dst_offset,
                extent: copy_extent(
                    bounds::clamp_to_level(dst, &r.dst_base, {
                        bounds::clamp_to_level(src, &r.src_base, r.size)
                    }),
                    any_3d,
                ),
            })
        }));
        if temp.is_empty() {
            return;
        }
        let swapchain = self.device.swapchain;
        let src_layout = barrier::texture_layout(src_usage, swapchain);
        let dst_layout = barrier::texture_layout(TextureUses::COPY_DST, swapchain);
        // SAFETY: recording; `src` in `src_usage`, `dst` in `COPY_DST` (so in
        // the layouts given), formats copy-compatible (the trait contract);
        // regions inside both (checked).
        unsafe {
            self.fns
                .cmd_copy_image(raw, src.raw, src_layout, dst.raw, dst_layout, temp)
        };
    }

    unsafe fn begin_debug_marker(&mut self, label: &str) {
        let Some(raw) = self.recording() else { return };
        let Some(debug_utils) = &self.device.debug_utils else {
            return;
        };
        with_c_label(&mut self.temp.label, label, |name| {
            let info = vk::DebugUtilsLabelEXT::default().label_name(name);
            // SAFETY: recording; `info` and its name live across the call.
            unsafe { debug_utils.cmd_begin_debug_utils_label(raw, &info) };
        });
    }

    unsafe fn end_debug_marker(&mut self) {
        let Some(raw) = self.recording() else { return };
        if let Some(debug_utils) = &self.device.debug_utils {
            // SAFETY: recording, with a region open (the trait contract).
            unsafe { debug_utils.cmd_end_debug_utils_label(raw) };
        }
    }

    unsafe fn insert_debug_marker(&mut self, label: &str) {
        let Some(raw) = self.recording() else { return };
        let Some(debug_utils) = &self.device.debug_utils else {
            return;
        };
        with_c_label(&mut self.temp.label, label, |name| {
            let info = vk::DebugUtilsLabelEXT::default().label_name(name);
            // SAFETY: recording; `info` and its name live across the call.
            unsafe { debug_utils.cmd_insert_debug_utils_label(raw, &info) };
        });
    }

    unsafe fn reset_queries(&mut self, set: &QuerySet, range: Range<u32>) {
        let Some(raw) = self.recording() else { return };
        if !bounds::query_range_fits(set, &range) {
            crate::refusal::refused!(
                "keel-hal: reset_queries range {range:?} is outside the set of {}; skipped",
                set.count
            );
            return;
        }
        if range.is_empty() {
            return;
        }
        // SAFETY: recording; the set is alive (the trait contract) and the
        // range lies in it (checked).
        unsafe {
            self.fns
                .cmd_reset_query_pool(raw, set.raw, range.start, range.end - range.start)
        };
    }

    unsafe fn begin_query(&mut self, set: &QuerySet, index: u32) {
        let Some(raw) = self.recording() else { return };
        if !query_index_ok(set, index, "begin_query") || !counting_set(set, "begin_query") {
            return;
        }
        // SAFETY: recording; an occlusion or statistics set (checked), the
        // query reset and not active (the trait contract).
        unsafe {
            self.fns
                .cmd_begin_query(raw, set.raw, index, vk::QueryControlFlags::empty())
        };
    }

    unsafe fn end_query(&mut self, set: &QuerySet, index: u32) {
        let Some(raw) = self.recording() else { return };
        if !query_index_ok(set, index, "end_query") || !counting_set(set, "end_query") {
            return;
        }
        // SAFETY: recording; the query is active (the trait contract).
        unsafe { self.fns.cmd_end_query(raw, set.raw, index) };
    }

    unsafe fn write_timestamp(&mut self, set: &QuerySet, index: u32) {
        let Some(raw) = self.recording() else { return };
        if !query_index_ok(set, index, "write_timestamp") {
            return;
        }
        if !matches!(set.ty, wgt::QueryType::Timestamp) {
            crate::refusal::refused!(
                "keel-hal: write_timestamp on a {:?} query set; skipped",
                set.ty
            );
            return;
        }
        // SAFETY: recording; a timestamp set whose query was reset (the
        // trait contract).
        unsafe {
            self.fns.cmd_write_timestamp2(
                raw,
                vk::PipelineStageFlags2::ALL_COMMANDS,
                set.raw,
                index,
            )
        };
    }

    unsafe fn copy_query_results(
        &mut self,
        set: &QuerySet,
        range: Range<u32>,
        buffer: &Buffer,
        offset: u64,
        stride: u64,
    ) {
        let Some(raw) = self.recording() else { return };
        if !bounds::query_range_fits(set, &range) {
            crate::refusal::refused!(
                "keel-hal: copy_query_results range {range:?} is outside the set of {}; skipped",
                set.count
            );
            return;
        }
        let count = range.end - range.start;
        if !crate::validate::query::results_fit(buffer.size, set.ty, count, offset, stride) {
            crate::refusal::refused!(
                "keel-hal: copy_query_results of {count} {:?} queries at offset {offset}, \
                 stride {stride} does not fit the buffer of {} bytes (several queries need a \
                 stride of at least one result); skipped",
                set.ty,
                buffer.size
            );
            return;
        }
        if count == 0 {
            return;
        }
        // SAFETY: recording; every query in the range was written, the buffer
        // is in `QUERY_RESOLVE`/`COPY_DST`, `offset` and `stride` are
        // multiples of 8 (the trait contract); the range lies in the set and
        // the results fit the buffer (checked).
        unsafe {
            self.fns.cmd_copy_query_pool_results(
                raw,
                set.raw,
                range.start,
                count,
                buffer.raw,
                offset,
                stride,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        };
    }

    unsafe fn transfer_ownership(
        &mut self,
        direction: crate::OwnershipTransfer,
        buffers: &[BufferBarrier<'_, Buffer>],
        textures: &[TextureBarrier<'_, Texture>],
    ) {
        // SAFETY: forwarded contract.
        unsafe { super::external_sync::transfer_ownership(self, direction, buffers, textures) }
    }

    // Passes: implemented in pass.rs.

    unsafe fn begin_render_pass(&mut self, desc: &RenderPassDescriptor<super::Api>) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_begin_render(desc) }
    }

    unsafe fn end_render_pass(&mut self) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_end_render() }
    }

    unsafe fn begin_compute_pass(&mut self, desc: &ComputePassDescriptor) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_begin_compute(desc) }
    }

    unsafe fn end_compute_pass(&mut self) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_end_compute() }
    }

    #[inline]
    unsafe fn set_bind_group(
        &mut self,
        layout: &PipelineLayout,
        index: u32,
        group: &BindGroup,
        dynamic_offsets: &[wgt::DynamicOffset],
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_set_bind_group(layout, index, group, dynamic_offsets) }
    }

    unsafe fn set_push_constants(
        &mut self,
        layout: &PipelineLayout,
        stages: wgt::ShaderStages,
        offset: u32,
        data: &[u32],
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_set_push_constants(layout, stages, offset, data) }
    }

    #[inline]
    unsafe fn set_render_pipeline(&mut self, pipeline: &RenderPipeline) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_set_render_pipeline(pipeline) }
    }

    unsafe fn set_index_buffer(
        &mut self,
        binding: BufferBinding<'_, Buffer>,
        format: wgt::IndexFormat,
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_set_index_buffer(binding, format) }
    }

    unsafe fn set_vertex_buffer(&mut self, index: u32, binding: BufferBinding<'_, Buffer>) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_set_vertex_buffer(index, binding) }
    }

    unsafe fn set_viewport(&mut self, rect: &Rect<f32>, depth_range: Range<f32>) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_set_viewport(rect, depth_range) }
    }

    unsafe fn set_scissor_rect(&mut self, rect: &Rect<u32>) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_set_scissor_rect(rect) }
    }

    unsafe fn set_stencil_reference(&mut self, value: u32) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_set_stencil_reference(value) }
    }

    unsafe fn set_blend_constants(&mut self, color: &[f32; 4]) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_set_blend_constants(color) }
    }

    #[inline]
    unsafe fn draw(
        &mut self,
        first_vertex: u32,
        vertex_count: u32,
        first_instance: u32,
        instance_count: u32,
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_draw(first_vertex, vertex_count, first_instance, instance_count) }
    }

    #[inline]
    unsafe fn draw_indexed(
        &mut self,
        first_index: u32,
        index_count: u32,
        base_vertex: i32,
        first_instance: u32,
        instance_count: u32,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            self.pass_draw_indexed(
                first_index,
                index_count,
                base_vertex,
                first_instance,
                instance_count,
            )
        }
    }

    unsafe fn draw_indirect(&mut self, buffer: &Buffer, offset: u64, draw_count: u32) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_draw_indirect(buffer, offset, draw_count) }
    }

    unsafe fn draw_indexed_indirect(&mut self, buffer: &Buffer, offset: u64, draw_count: u32) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_draw_indexed_indirect(buffer, offset, draw_count) }
    }

    unsafe fn draw_indirect_count(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count_buffer: &Buffer,
        count_offset: u64,
        max_count: u32,
    ) {
        let count = (count_offset, max_count);
        // SAFETY: forwarded contract.
        unsafe { self.pass_draw_indirect_count(buffer, offset, count_buffer, count, false) }
    }

    unsafe fn draw_indexed_indirect_count(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count_buffer: &Buffer,
        count_offset: u64,
        max_count: u32,
    ) {
        let count = (count_offset, max_count);
        // SAFETY: forwarded contract.
        unsafe { self.pass_draw_indirect_count(buffer, offset, count_buffer, count, true) }
    }

    unsafe fn draw_mesh_tasks(&mut self, x: u32, y: u32, z: u32) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_draw_mesh_tasks(x, y, z) }
    }

    unsafe fn draw_mesh_tasks_indirect(&mut self, buffer: &Buffer, offset: u64, draw_count: u32) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_draw_mesh_tasks_indirect(buffer, offset, draw_count) }
    }

    unsafe fn draw_mesh_tasks_indirect_count(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count_buffer: &Buffer,
        count_offset: u64,
        max_count: u32,
    ) {
        let count = (count_offset, max_count);
        // SAFETY: forwarded contract.
        unsafe { self.pass_draw_mesh_tasks_indirect_count(buffer, offset, count_buffer, count) }
    }

    #[inline]
    unsafe fn set_compute_pipeline(&mut self, pipeline: &ComputePipeline) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_set_compute_pipeline(pipeline) }
    }

    #[inline]
    unsafe fn dispatch(&mut self, count: [u32; 3]) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_dispatch(count) }
    }

    unsafe fn dispatch_indirect(&mut self, buffer: &Buffer, offset: u64) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_dispatch_indirect(buffer, offset) }
    }

    // Acceleration structures: implemented in acceleration_commands.rs.

    unsafe fn build_acceleration_structures(
        &mut self,
        descriptors: &[crate::BuildAccelerationStructureDescriptor<super::Api>],
    ) -> Result<(), crate::AccelerationStructureError> {
        // SAFETY: forwarded contract.
        unsafe { self.accel_build(descriptors) }
    }

    unsafe fn place_acceleration_structure_barrier(
        &mut self,
        barrier: crate::AccelerationStructureBarrier<'_, super::AccelerationStructure>,
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.accel_barrier(barrier) }
    }

    unsafe fn copy_acceleration_structure(
        &mut self,
        src: &super::AccelerationStructure,
        dst: &super::AccelerationStructure,
        mode: crate::AccelerationStructureCopy,
    ) -> Result<(), crate::AccelerationStructureError> {
        // SAFETY: forwarded contract.
        unsafe { self.accel_copy(src, dst, mode) }
    }

    unsafe fn read_acceleration_structure_compacted_sizes(
        &mut self,
        structures: &[&super::AccelerationStructure],
        buffer: &Buffer,
        offset: u64,
    ) -> Result<(), crate::AccelerationStructureError> {
        // SAFETY: forwarded contract.
        unsafe { self.accel_read_compacted_sizes(structures, buffer, offset) }
    }

    // Ray-tracing passes: pass.rs (begin, end) and draw.rs (pipeline, trace).

    unsafe fn begin_ray_tracing_pass(&mut self, desc: &ComputePassDescriptor) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_begin_ray_tracing(desc) }
    }

    unsafe fn end_ray_tracing_pass(&mut self) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_end_ray_tracing() }
    }

    unsafe fn set_ray_tracing_pipeline(&mut self, pipeline: &super::RayTracingPipeline) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_set_ray_tracing_pipeline(pipeline) }
    }

    unsafe fn trace_rays(&mut self, table: &crate::ShaderBindingTable<Buffer>, size: [u32; 3]) {
        // SAFETY: forwarded contract.
        unsafe { self.pass_trace_rays(table, size) }
    }
}

/// Whether `index` names a query of `set`; logs when it does not.
/// Whether `set` counts between a begin and an end (occlusion and pipeline
/// statistics; timestamps are written, not begun): logs when not.
fn counting_set(set: &QuerySet, what: &str) -> bool {
    let ok = !matches!(set.ty, wgt::QueryType::Timestamp);
    if !ok {
        crate::refusal::refused!("keel-hal: {what} on a timestamp query set; skipped");
    }
    ok
}

fn query_index_ok(set: &QuerySet, index: u32, what: &str) -> bool {
    let ok = index < set.count;
    if !ok {
        crate::refusal::refused!(
            "keel-hal: {what}: query {index} is outside the set of {}; skipped",
            set.count
        );
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_nul_terminated_short_and_long() {
        let mut scratch = Vec::new();
        with_c_label(&mut scratch, "short", |c| {
            assert_eq!(c.to_bytes(), b"short")
        });
        assert!(scratch.is_empty(), "short labels stay on the stack");
        let long = "x".repeat(INLINE_LABEL);
        with_c_label(&mut scratch, &long, |c| {
            assert_eq!(c.to_bytes(), long.as_bytes())
        });
        with_c_label(&mut scratch, "a\0b", |c| assert_eq!(c.to_bytes(), b"a"));
    }
}
