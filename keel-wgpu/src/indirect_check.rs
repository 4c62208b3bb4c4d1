//! The GPU-side checks of indirect dispatch and draw arguments, as
//! wgpu-core makes them (`indirect_validation/`, on under wgpu's default
//! `InstanceFlags::VALIDATION_INDIRECT_CALL`).
//!
//! ## Dispatches
//!
//! The workgroup counts of a
//! `dispatch_workgroups_indirect` are only known on the GPU, so ahead of
//! each one a one-invocation compute shader reads the three counts at the
//! dispatch's offset of the program's buffer and writes them to a buffer
//! of the device's own, or zeros when any is over the device's
//! `max_compute_workgroups_per_dimension` (the dispatch then does nothing,
//! as wgpu-core makes it); the dispatch reads its counts from there.
//!
//! - **Where.** On adapters that run shaders (keel-hal's
//!   `HalFeatures::SHADER_EXECUTION`: Vulkan). Noop runs no shaders, so its
//!   dispatches do nothing whatever the counts, and there is nothing to
//!   check: no pipeline is made there and indirect dispatches read the
//!   program's buffer as before. The pipeline needs a few limits (two bind
//!   groups, two storage buffers, one with a dynamic offset, 4 bytes of
//!   immediates): [`hal_limits`] opens the keel-hal device with the
//!   program's immediates and storage-buffer counts raised to those where
//!   the adapter has them (the program still sees and is held to its own),
//!   and leaves the check off where they or the program's other limits
//!   fall short (a program with one bind group; one that cannot dispatch).
//! - **What is made.** Once per device, at the first indirect dispatch a
//!   command buffer encodes ([`IndirectSlot::get`]): the shader module,
//!   pipeline, its two bind group layouts and pipeline layout, and the
//!   12-byte buffer of checked counts with its bind group. They live as
//!   long as the device (`DeviceShared`'s drop destroys them after the GPU
//!   is idle), so no command buffer has to keep them; `live_counts` leaves
//!   them out ([`IndirectSlot::discount`]). Each indirect buffer gets one
//!   bind group over it, made at its first checked dispatch and kept with
//!   the buffer (`Buffer::indirect_source`, buried with it).
//! - **Offsets.** A dispatch's offset need only be 4-aligned, a storage
//!   binding's dynamic offset `min_storage_buffer_offset_alignment`-aligned:
//!   the group binds the whole buffer, or for one past
//!   `max_storage_buffer_binding_size` a window short of that limit from
//!   which an aligned dynamic offset reaches every argument, and the rest
//!   of the offset goes in the immediates, in words (wgpu-core's
//!   `calculate_src_buffer_binding_size`; [`window`], [`Source`]). An aligned offset
//!   past `u32::MAX` (a buffer over 4 GiB) cannot be a dynamic offset:
//!   such a dispatch reads the program's buffer unchecked.
//! - **Synchronisation.** The program's buffer is a `STORAGE_READ_ONLY`
//!   use of the check's own scope (the replay's tracker moves it there, and
//!   the dispatch itself no longer reads it); the checked-counts buffer,
//!   shared by every command buffer of the device and always left in
//!   `INDIRECT`, gets `INDIRECT → STORAGE_READ_WRITE` before the check and
//!   `STORAGE_READ_WRITE → INDIRECT` after it ([`IndirectCheck::record`]),
//!   which also orders it against the uses of earlier submissions. Barriers
//!   close keel-hal's compute pass, so the replay ends the program's pass,
//!   records the check in a pass of its own, and opens the program's again
//!   with its pipeline, bind groups and immediates set anew. Plain
//!   `dispatch_workgroups` is untouched.
//!
//! ## Draws
//!
//! `draw_indirect` and `draw_indexed_indirect` (and their `multi_`
//! forms; not the `_count` ones, which wgpu-core does not check either)
//! read vertex and instance ranges only the GPU knows. Each such draw
//! records, with its command, the vertex (or index) and instance limits
//! of the buffers bound at it (`pass_check.rs`, wgpu-core's
//! `VertexLimits`). Before a render pass begins the replay plans the
//! check of every indirect draw in it and in its bundles
//! ([`DrawPlan`], wgpu-core's `DrawBatcher`): the pass gets chunks of
//! checked arguments ([`DrawArgs`], 1 MiB at most each, kept with its
//! command buffer until its submission is done, then buried), and one
//! compute pass, ahead of the render pass, copies each draw's arguments
//! into them, or zeros (the draw then draws nothing) where a range ends
//! past its limit or a first instance is not zero without
//! `INDIRECT_FIRST_INSTANCE` (`DRAW_SHADER`, 64 draws a workgroup, one
//! dispatch per run of draws contiguous in the program's buffer and in a
//! chunk). The draws then read the chunks ([`CheckedDraws`]), a
//! multi-draw split where its run is. The program's buffers are read as
//! `STORAGE_READ_ONLY` in the pass's scope; the chunks are new, written
//! by the check and moved to `INDIRECT` after it.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::OnceLock;

use keel_hal::dynamic::{
    DynBindGroup, DynBindGroupLayout, DynBuffer, DynCommandEncoder, DynComputePipeline, DynDevice,
    DynPipelineLayout, DynResources, DynShaderModule,
};
use keel_hal::{BufferBarrier, BufferUses, LiveCounts, Memory};
use std::ops::Range;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::resource::{Buffer, LastUse};
use crate::shared::{Dead, DeviceShared};
use crate::tracker::Used;

/// The three `u32` workgroup counts of an indirect dispatch.
const ARGS_SIZE: u64 = 12;

/// The stages the check's immediates are visible to.
const STAGES: wgpu::ShaderStages = wgpu::ShaderStages::COMPUTE;

/// The draw check's immediates (`DRAW_SHADER`'s `Run`), in bytes.
const DRAW_IMMEDIATES: u32 = 24;

/// The draw check's workgroup size.
const DRAW_WORKGROUP: u32 = 64;

/// The size of a checked-arguments chunk (wgpu-core's `BUFFER_SIZE`):
/// 52,428 indexed draws.
const CHUNK: u64 = 1 << 20;

/// The keel-hal device's limits for a program that asked for `requested`
/// on an adapter with `adapter`'s, and whether the check is on. The
/// check's pipeline needs a few limits (wgpu-core's list in
/// `indirect_validation/dispatch.rs`). Those keel-wgpu holds the program
/// to itself (`create_check.rs`, `pass_check.rs`: immediates, storage
/// buffers per stage, dynamic storage buffers) are raised for keel-hal
/// where the adapter has them; the others keel-hal enforces for the
/// program, so they are not raised: the program's own must already allow
/// the check (they do wherever the program can dispatch at all, but for
/// `max_bind_groups` under 2). Off where the adapter runs no shaders or a
/// limit falls short; `requested` is then returned as it is.
pub(crate) fn hal_limits(
    requested: &wgpu::Limits,
    adapter: &wgpu::Limits,
    runs_shaders: bool,
) -> (wgpu::Limits, bool) {
    let mut raised = requested.clone();
    let mut fits = runs_shaders;
    macro_rules! raised {
        ($($field:ident: $min:expr),* $(,)?) => {$(
            if raised.$field < $min {
                if adapter.$field >= $min {
                    raised.$field = $min;
                } else {
                    fits = false;
                }
            }
        )*};
    }
    macro_rules! allowed {
        ($($field:ident: $min:expr),* $(,)?) => {$(
            fits &= requested.$field >= $min;
        )*};
    }
    raised!(
        max_immediate_size: DRAW_IMMEDIATES,
        max_storage_buffers_per_shader_stage: 2,
        max_dynamic_storage_buffers_per_pipeline_layout: 1,
    );
    // A source group's window (`window`) must hold an alignment's worth of
    // remainder and a draw's 20 bytes of arguments.
    let window = min_window(u64::from(requested.min_storage_buffer_offset_alignment));
    allowed!(
        max_bind_groups: 2,
        max_bindings_per_bind_group: 1,
        max_storage_buffer_binding_size: window,
        max_compute_invocations_per_workgroup: DRAW_WORKGROUP,
        max_compute_workgroup_size_x: DRAW_WORKGROUP,
        max_compute_workgroup_size_y: 1,
        max_compute_workgroup_size_z: 1,
        max_compute_workgroups_per_dimension: 1,
    );
    if fits {
        (raised, true)
    } else {
        (requested.clone(), false)
    }
}

/// The dispatch check's source: `dst` is the device's checked-counts
/// buffer, `src` the window of the program's buffer, `offset.words` the
/// counts' place in it past the dynamic offset.
fn dispatch_shader(max_workgroups: u32) -> String {
    format!(
        "
        @group(0) @binding(0)
        var<storage, read_write> dst: array<u32, 3>;
        @group(1) @binding(0)
        var<storage, read> src: array<u32>;
        struct Offset {{
            words: u32,
        }}
        var<immediate> offset: Offset;

        @compute @workgroup_size(1)
        fn main() {{
            let i = offset.words;
            let counts = vec3(src[i], src[i + 1u], src[i + 2u]);
            if (any(counts > vec3({max_workgroups}u))) {{
                dst = array(0u, 0u, 0u);
            }} else {{
                dst = array(counts.x, counts.y, counts.z);
            }}
        }}
        "
    )
}

/// The draw check's source: one invocation per draw of a run of `count`
/// draws whose arguments lie `src_words` into the source window and go
/// `dst_words` into a checked-arguments chunk. A draw fails when its
/// vertex (or index) range or its instance range ends past its limit, or
/// it has a first instance where the device has no
/// `INDIRECT_FIRST_INSTANCE`; a failed draw's arguments are written as
/// zeros (it draws nothing), as wgpu-core's `validate_draw.wgsl` does.
/// Limits are 33-bit (`split_limit`): `flags` carries their high parts.
const DRAW_SHADER: &str = "
    @group(0) @binding(0)
    var<storage, read_write> dst: array<u32>;
    @group(1) @binding(0)
    var<storage, read> src: array<u32>;
    struct Run {
        src_words: u32,
        dst_words: u32,
        count: u32,
        // bit 0: indexed; bit 1: first instances allowed; bits 2-3 and
        // 4-5: the high parts of the vertex and instance limits (2: none).
        flags: u32,
        vertex_limit: u32,
        instance_limit: u32,
    }
    var<immediate> run: Run;

    // Whether `first + count`, in 33 bits, is past the limit `hi:lo`.
    fn past(first: u32, count: u32, hi: u32, lo: u32) -> bool {
        let end = first + count;
        let carry = select(0u, 1u, end < first);
        return carry > hi || (carry == hi && end > lo);
    }

    @compute @workgroup_size(64)
    fn main(@builtin(global_invocation_id) id: vec3u) {
        if (id.x >= run.count) {
            return;
        }
        let indexed = (run.flags & 1u) != 0u;
        let n = select(4u, 5u, indexed);
        let s = run.src_words + id.x * n;
        let d = run.dst_words + id.x * n;
        let first_instance = src[s + n - 1u];
        var failed = past(src[s + 2u], src[s], (run.flags >> 2u) & 3u, run.vertex_limit)
            || past(first_instance, src[s + 1u], (run.flags >> 4u) & 3u, run.instance_limit);
        if ((run.flags & 2u) == 0u && first_instance != 0u) {
            failed = true;
        }
        for (var i = 0u; i < n; i++) {
            dst[d + i] = select(src[s + i], 0u, failed);
        }
    }
";

/// A 33-bit draw limit as the draw shader takes it: its high part (0, 1,
/// or 2 for a limit no draw can pass: a range ends at most at
/// `2 * u32::MAX`) and its low 32 bits.
fn split_limit(limit: u64) -> (u32, u32) {
    if limit >= 2 * u64::from(u32::MAX) {
        (2, 0)
    } else {
        ((limit >> 32) as u32, limit as u32)
    }
}

/// Where the check reads a program's buffer: its source group, bound at
/// `dynamic_offset`, and the arguments `words` past it.
pub(crate) struct Source<'b> {
    group: &'b dyn DynBindGroup,
    dynamic_offset: u32,
    words: u32,
}

/// The shortest window a source group may bind: an alignment's worth of
/// remainder, a draw's 20 bytes, and room to spare.
fn min_window(alignment: u64) -> u64 {
    3 * alignment.max(4) + 32
}

/// The window of a buffer of `size` bytes that its source group binds,
/// and the aligned offset and remainder that reach `len` bytes at
/// `offset` (wgpu-core's `calculate_src_buffer_binding_size` and
/// `calculate_src_offsets`, with `cap` the longest storage binding): the
/// whole buffer when it fits in `cap`, else the longest window under
/// `cap` whose length is `size % alignment` more than a multiple of the
/// alignment, so that `size` minus it is aligned. From the aligned offset
/// at or below `offset`, lowered to keep the window inside the buffer,
/// the arguments then stay inside it (`cap >= min_window(alignment)`).
/// `None` when `offset + len` is past `size` or the window is too short.
fn window(size: u64, alignment: u64, cap: u64, offset: u64, len: u64) -> Option<(u64, u64, u64)> {
    if offset.checked_add(len)? > size {
        return None;
    }
    let binding = if size <= cap {
        size
    } else {
        let tail = size % alignment;
        (cap.checked_sub(tail)? / alignment) * alignment + tail
    };
    let aligned = (offset - offset % alignment).min(size - binding);
    let remainder = offset - aligned;
    (remainder + len <= binding).then_some((binding, aligned, remainder))
}

/// The device's checks: their pipelines, and the buffer of checked
/// dispatch counts.
#[derive(Debug)]
pub(crate) struct IndirectCheck {
    src_layout: Box<dyn DynBindGroupLayout>,
    dst_layout: Box<dyn DynBindGroupLayout>,
    layout: Box<dyn DynPipelineLayout>,
    pipeline: Box<dyn DynComputePipeline>,
    /// The checked counts, `INDIRECT` between checks.
    dst: Box<dyn DynBuffer>,
    dst_group: Box<dyn DynBindGroup>,
    /// The draw check's chunk layout, pipeline layout and pipeline.
    draw_dst_layout: Box<dyn DynBindGroupLayout>,
    draw_layout: Box<dyn DynPipelineLayout>,
    draw_pipeline: Box<dyn DynComputePipeline>,
    /// `min_storage_buffer_offset_alignment`: dynamic offsets are multiples.
    alignment: u64,
    /// `max_storage_buffer_binding_size`: the longest source window.
    cap: u64,
    /// The size of a checked-arguments chunk.
    chunk: u64,
    /// The device has `INDIRECT_FIRST_INSTANCE`.
    first_instance: bool,
    /// The most draws one dispatch of the draw check covers.
    max_run: u64,
}

/// What [`IndirectCheck::new`] made so far; dropping it destroys that (a
/// creation that fails part way leaves nothing behind).
struct Parts<'d> {
    hal: &'d dyn DynDevice,
    module: Option<Box<dyn DynShaderModule>>,
    src_layout: Option<Box<dyn DynBindGroupLayout>>,
    dst_layout: Option<Box<dyn DynBindGroupLayout>>,
    layout: Option<Box<dyn DynPipelineLayout>>,
    pipeline: Option<Box<dyn DynComputePipeline>>,
    dst: Option<Box<dyn DynBuffer>>,
    dst_group: Option<Box<dyn DynBindGroup>>,
    draw_dst_layout: Option<Box<dyn DynBindGroupLayout>>,
    draw_layout: Option<Box<dyn DynPipelineLayout>>,
    draw_pipeline: Option<Box<dyn DynComputePipeline>>,
}

impl Drop for Parts<'_> {
    fn drop(&mut self) {
        let hal = self.hal;
        // SAFETY: every object came from `hal` and none was recorded into
        // a command buffer (they are only handed out once all are made).
        unsafe {
            if let Some(o) = self.dst_group.take() {
                hal.destroy_bind_group(o);
            }
            if let Some(o) = self.dst.take() {
                hal.destroy_buffer(o);
            }
            for o in [self.pipeline.take(), self.draw_pipeline.take()]
                .into_iter()
                .flatten()
            {
                hal.destroy_compute_pipeline(o);
            }
            for o in [self.layout.take(), self.draw_layout.take()]
                .into_iter()
                .flatten()
            {
                hal.destroy_pipeline_layout(o);
            }
            for o in [
                self.dst_layout.take(),
                self.src_layout.take(),
                self.draw_dst_layout.take(),
            ]
            .into_iter()
            .flatten()
            {
                hal.destroy_bind_group_layout(o);
            }
            if let Some(o) = self.module.take() {
                hal.destroy_shader_module(o);
            }
        }
    }
}

/// A compute pipeline of `source`'s `main` over `layout`, its module held
/// in `slot` while it is made (it goes once the pipeline is made: the
/// pipeline holds what it needs).
fn make_pipeline(
    hal: &dyn DynDevice,
    slot: &mut Option<Box<dyn DynShaderModule>>,
    what: &str,
    source: String,
    layout: &dyn DynPipelineLayout,
) -> Result<Box<dyn DynComputePipeline>, String> {
    let desc = keel_hal::ShaderModuleDescriptor {
        label: Some("keel-wgpu internal: indirect check"),
        source: keel_hal::ShaderSource::Wgsl(Cow::Owned(source)),
    };
    // SAFETY: a plain creation on a live device.
    let module = unsafe { hal.create_shader_module(&desc) }
        .map_err(|e| format!("making the {what} check's shader module: {e}"))?;
    let module = &**slot.insert(module);
    let desc = keel_hal::ComputePipelineDescriptor::<DynResources> {
        label: Some("keel-wgpu internal: indirect check"),
        layout,
        stage: keel_hal::ProgrammableStage {
            module,
            entry_point: "main",
            constants: &[],
        },
        cache: None,
    };
    // SAFETY: the module and layout came from `hal` and are alive.
    let made = unsafe { hal.create_compute_pipeline(&desc) }
        .map_err(|e| format!("making the {what} check's pipeline: {e}"));
    if let Some(module) = slot.take() {
        // SAFETY: from `hal`; no command buffer names a shader module.
        unsafe { hal.destroy_shader_module(module) };
    }
    made
}

impl IndirectCheck {
    /// Makes the checks for a device with `limits` and `features` (the
    /// program's: its `max_compute_workgroups_per_dimension` bounds
    /// dispatches; its `INDIRECT_FIRST_INSTANCE` allows first instances).
    fn new(
        hal: &dyn DynDevice,
        limits: &wgpu::Limits,
        features: wgpu::Features,
    ) -> Result<Self, String> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            format!("making the indirect check's {what}: {e}")
        };
        let mut parts = Parts {
            hal,
            module: None,
            src_layout: None,
            dst_layout: None,
            layout: None,
            pipeline: None,
            dst: None,
            dst_group: None,
            draw_dst_layout: None,
            draw_layout: None,
            draw_pipeline: None,
        };
        let storage = |read_only: bool, dynamic: bool, size: u64| wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: dynamic,
                min_binding_size: NonZeroU64::new(size),
            },
            count: None,
        };
        let group_layout = |label: &'static str, entry: wgpu::BindGroupLayoutEntry| {
            let entries = [entry];
            let desc = keel_hal::BindGroupLayoutDescriptor {
                label: Some(label),
                flags: keel_hal::BindGroupLayoutFlags::empty(),
                entries: &entries,
            };
            // SAFETY: a plain creation on a live device.
            unsafe { hal.create_bind_group_layout(&desc) }.map_err(|e| fail(label, &e))
        };
        let dst_layout = group_layout(
            "keel-wgpu internal: indirect check destination",
            storage(false, false, ARGS_SIZE),
        )?;
        let dst_layout = &**parts.dst_layout.insert(dst_layout);
        let src_layout = group_layout(
            "keel-wgpu internal: indirect check source",
            storage(true, true, ARGS_SIZE),
        )?;
        let src_layout = &**parts.src_layout.insert(src_layout);
        let draw_dst_layout = group_layout(
            "keel-wgpu internal: checked indirect draw arguments",
            storage(false, false, 4),
        )?;
        let draw_dst_layout = &**parts.draw_dst_layout.insert(draw_dst_layout);

        let pipeline_layout = |groups: &[&dyn DynBindGroupLayout], immediates: u32| {
            let ranges = [keel_hal::PushConstantRange {
                stages: STAGES,
                range: 0..immediates,
            }];
            let desc = keel_hal::PipelineLayoutDescriptor::<DynResources> {
                label: Some("keel-wgpu internal: indirect check"),
                bind_group_layouts: groups,
                push_constant_ranges: &ranges,
            };
            // SAFETY: a plain creation from live layouts of this device.
            unsafe { hal.create_pipeline_layout(&desc) }.map_err(|e| fail("pipeline layout", &e))
        };
        let layout = pipeline_layout(&[dst_layout, src_layout], 4)?;
        let layout = &**parts.layout.insert(layout);
        let draw_layout = pipeline_layout(&[draw_dst_layout, src_layout], DRAW_IMMEDIATES)?;
        let draw_layout = &**parts.draw_layout.insert(draw_layout);
        let pipeline = make_pipeline(
            hal,
            &mut parts.module,
            "indirect dispatch",
            dispatch_shader(limits.max_compute_workgroups_per_dimension),
            layout,
        )?;
        parts.pipeline = Some(pipeline);
        let draw_pipeline = make_pipeline(
            hal,
            &mut parts.module,
            "indirect draw",
            DRAW_SHADER.into(),
            draw_layout,
        )?;
        parts.draw_pipeline = Some(draw_pipeline);

        let desc = keel_hal::BufferDescriptor {
            label: Some("keel-wgpu internal: checked indirect dispatch counts"),
            size: ARGS_SIZE,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
            memory: Memory::Device,
        };
        // SAFETY: a plain creation on a live device.
        let dst = unsafe { hal.create_buffer(&desc) }.map_err(|e| fail("buffer", &e))?;
        let dst = &**parts.dst.insert(dst);
        let entries = [keel_hal::BindGroupEntry {
            binding: 0,
            resource: keel_hal::BindingResource::Buffer(keel_hal::BufferBinding {
                buffer: dst,
                offset: 0,
                size: NonZeroU64::new(ARGS_SIZE),
            }),
        }];
        let desc = keel_hal::BindGroupDescriptor::<DynResources> {
            label: Some("keel-wgpu internal: checked indirect dispatch counts"),
            layout: dst_layout,
            entries: &entries,
        };
        // SAFETY: the layout and buffer are this device's and alive.
        let dst_group =
            unsafe { hal.create_bind_group(&desc) }.map_err(|e| fail("destination group", &e))?;
        parts.dst_group = Some(dst_group);

        let alignment = u64::from(limits.min_storage_buffer_offset_alignment.max(4));
        let cap = limits
            .max_storage_buffer_binding_size
            .max(min_window(alignment));
        let chunk = (CHUNK.min(limits.max_storage_buffer_binding_size) / 4 * 4).max(20);
        let first_instance = features.contains(wgpu::Features::INDIRECT_FIRST_INSTANCE);
        let max_run =
            u64::from(limits.max_compute_workgroups_per_dimension) * u64::from(DRAW_WORKGROUP);
        macro_rules! taken {
            ($($field:ident),*) => {
                match ($(parts.$field.take(),)*) {
                    ($(Some($field),)*) => Ok(Self {
                        $($field,)*
                        alignment,
                        cap,
                        chunk,
                        first_instance,
                        max_run,
                    }),
                    // Unreachable (each was made above); whatever was
                    // taken goes back for `parts` to destroy.
                    ($($field,)*) => {
                        $(parts.$field = $field;)*
                        Err("making the indirect check: an object went missing".into())
                    }
                }
            };
        }
        taken!(
            src_layout,
            dst_layout,
            layout,
            pipeline,
            dst,
            dst_group,
            draw_dst_layout,
            draw_layout,
            draw_pipeline
        )
    }

    /// # Safety
    /// No pending submission and no command buffer that may still be
    /// submitted uses the check; every group made by
    /// [`IndirectCheck::reach`] is destroyed.
    unsafe fn destroy(self, hal: &dyn DynDevice) {
        // SAFETY: the caller's contract; every object came from `hal`.
        unsafe {
            hal.destroy_bind_group(self.dst_group);
            hal.destroy_buffer(self.dst);
            hal.destroy_compute_pipeline(self.pipeline);
            hal.destroy_compute_pipeline(self.draw_pipeline);
            hal.destroy_pipeline_layout(self.layout);
            hal.destroy_pipeline_layout(self.draw_layout);
            hal.destroy_bind_group_layout(self.dst_layout);
            hal.destroy_bind_group_layout(self.draw_dst_layout);
            hal.destroy_bind_group_layout(self.src_layout);
        }
    }

    /// Where the check of `len` bytes at `offset` of `buffer` reads: the
    /// buffer's source group (made at its first check, then kept with it),
    /// the offsets into it, and the window's length. `Ok(None)`: the
    /// offset cannot be reached through a dynamic offset (past 4 GiB), so
    /// the command is not checked. The range was checked when recorded
    /// (4-aligned, inside the buffer).
    fn reach<'b>(
        &self,
        buffer: &'b Buffer,
        offset: u64,
        len: u64,
    ) -> Result<Option<(Source<'b>, u64)>, String> {
        // The keel-hal buffer's size: the program's rounded up to 4 bytes
        // (`device::create_buffer`).
        let size = buffer.size.max(4).next_multiple_of(4);
        let (binding, aligned, remainder) = window(size, self.alignment, self.cap, offset, len)
            .ok_or_else(|| format!("offset {offset} is outside {}", buffer.ident()))?;
        let Ok(dynamic_offset) = u32::try_from(aligned) else {
            return Ok(None);
        };
        let group = match buffer.indirect_source.get() {
            Some(group) => &**group,
            None => self.make_source(buffer, binding)?,
        };
        let source = Source {
            group,
            dynamic_offset,
            // Under the window's length, itself under the binding cap of
            // a storage buffer, which is a `u32` for keel-hal.
            words: (remainder / 4) as u32,
        };
        Ok(Some((source, binding)))
    }

    /// Where the check of a dispatch at `offset` of `buffer` reads
    /// (`Ok(None)`: unchecked, as for [`IndirectCheck::reach`]).
    pub(crate) fn source<'b>(
        &self,
        buffer: &'b Buffer,
        offset: u64,
    ) -> Result<Option<Source<'b>>, String> {
        Ok(self
            .reach(buffer, offset, ARGS_SIZE)?
            .map(|(source, _)| source))
    }

    /// Makes `buffer`'s source group, binding its first `binding` bytes,
    /// and keeps it with the buffer.
    fn make_source<'b>(
        &self,
        buffer: &'b Buffer,
        binding: u64,
    ) -> Result<&'b dyn DynBindGroup, String> {
        let hal = buffer.shared.hal();
        let entries = [keel_hal::BindGroupEntry {
            binding: 0,
            resource: keel_hal::BindingResource::Buffer(keel_hal::BufferBinding {
                buffer: buffer.handle()?,
                offset: 0,
                size: NonZeroU64::new(binding),
            }),
        }];
        let desc = keel_hal::BindGroupDescriptor::<DynResources> {
            label: Some("keel-wgpu internal: indirect check source"),
            layout: &*self.src_layout,
            entries: &entries,
        };
        // SAFETY: the layout and the buffer (whose keel-hal usage has
        // STORAGE: `device::create_buffer`) came from this device and are
        // alive; the window lies inside the buffer (`window`).
        let group = unsafe { hal.create_bind_group(&desc) }
            .map_err(|e| format!("making the indirect check's source group: {e}"))?;
        if let Err(group) = buffer.indirect_source.set(group) {
            // Another thread's encoder made one first: this one was never
            // used.
            // SAFETY: from `hal`, named by no command buffer.
            unsafe { hal.destroy_bind_group(group) };
        }
        buffer
            .indirect_source
            .get()
            .map(|group| &**group)
            .ok_or_else(|| "the indirect check's source group went missing".into())
    }

    /// The buffer the checked dispatch reads its counts from, at offset 0
    /// (in `INDIRECT` outside [`IndirectCheck::record`]).
    pub(crate) fn checked(&self) -> &dyn DynBuffer {
        &*self.dst
    }

    /// Records the check of `source`'s counts into the checked-counts
    /// buffer, in a compute pass of its own, with the buffer's barriers
    /// around it.
    ///
    /// # Safety
    /// `enc` is recording, outside any pass, for this device; the program's
    /// buffer `source` reads is in `STORAGE_READ_ONLY`. After the call the
    /// encoder is outside any pass, with no pipeline, bind group or
    /// immediates of the program's set.
    pub(crate) unsafe fn record(&self, enc: &mut dyn DynCommandEncoder, source: &Source<'_>) {
        let dst = &*self.dst;
        // SAFETY: the caller's contract; the checked-counts buffer is in
        // `INDIRECT` between checks (its first use too: a barrier from a
        // usage nothing made orders nothing); the pipeline, layout and
        // groups are this device's and alive; the dynamic offset is
        // aligned and keeps the window inside the buffer, and the counts
        // lie inside the window (`window`).
        unsafe {
            enc.transition_buffers(&[BufferBarrier::new(
                dst,
                BufferUses::INDIRECT,
                BufferUses::STORAGE_READ_WRITE,
            )]);
            enc.begin_compute_pass(&keel_hal::ComputePassDescriptor {
                label: Some("keel-wgpu: indirect dispatch check"),
            });
            enc.set_compute_pipeline(&*self.pipeline);
            enc.set_push_constants(&*self.layout, STAGES, 0, &[source.words]);
            enc.set_bind_group(&*self.layout, 0, &*self.dst_group, &[]);
            enc.set_bind_group(&*self.layout, 1, source.group, &[source.dynamic_offset]);
            enc.dispatch([1, 1, 1]);
            enc.end_compute_pass();
            enc.transition_buffers(&[BufferBarrier::new(
                dst,
                BufferUses::STORAGE_READ_WRITE,
                BufferUses::INDIRECT,
            )]);
        }
    }
}

/// Where a run of checked draws reads its arguments: `count` draws from
/// `offset` of chunk `chunk` of the pass's [`DrawArgs`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Segment {
    pub chunk: usize,
    pub offset: u64,
    pub count: u32,
}

/// One dispatch of the draw check: a run of draws contiguous in the
/// program's buffer and in one chunk.
struct Run<'b> {
    source: Source<'b>,
    chunk: usize,
    immediates: [u32; 6],
}

/// The draw check of one render pass, planned before the pass begins
/// (every checked `draw_*indirect` of the pass and of its bundles, in the
/// order the replay records them): wgpu-core's `DrawBatcher`.
pub(crate) struct DrawPlan<'b> {
    check: &'b IndirectCheck,
    shared: &'b Arc<DeviceShared>,
    runs: Vec<Run<'b>>,
    segments: Vec<Segment>,
    /// Per indirect draw command: its segments, or `None` where it reads
    /// the program's buffer unchecked.
    cmds: Vec<Option<Range<usize>>>,
    /// The bytes each chunk holds; the last one is being filled.
    chunks: Vec<u64>,
}

impl<'b> DrawPlan<'b> {
    /// A plan for the device `shared`, whose check is `check`.
    pub(crate) fn new(check: &'b IndirectCheck, shared: &'b Arc<DeviceShared>) -> Self {
        Self {
            check,
            shared,
            runs: Vec::new(),
            segments: Vec::new(),
            cmds: Vec::new(),
            chunks: Vec::new(),
        }
    }

    /// Plans the check of the next indirect draw command: `count` draws
    /// from `offset` of `buffer` (recorded in range), with the vertex (or
    /// index) and instance limits of its bound buffers. Returns whether
    /// it is checked (its buffer is then read as `STORAGE_READ_ONLY`).
    pub(crate) fn add(
        &mut self,
        buffer: &'b Buffer,
        offset: u64,
        count: u32,
        indexed: bool,
        limits: [u64; 2],
    ) -> Result<bool, String> {
        let stride: u64 = if indexed { 20 } else { 16 };
        let (vertex_hi, vertex_lo) = split_limit(limits[0]);
        let (instance_hi, instance_lo) = split_limit(limits[1]);
        let flags = u32::from(indexed)
            | u32::from(self.check.first_instance) << 1
            | vertex_hi << 2
            | instance_hi << 4;
        let (runs, segments, chunks) = (self.runs.len(), self.segments.len(), self.chunks.len());
        let last = self.chunks.last().copied();
        let mut offset = offset;
        let mut left = u64::from(count);
        while left > 0 {
            let Some((source, binding)) = self.check.reach(buffer, offset, stride)? else {
                // Unchecked: what this command planned goes.
                self.runs.truncate(runs);
                self.segments.truncate(segments);
                self.chunks.truncate(chunks);
                if let (Some(bytes), Some(l)) = (last, self.chunks.last_mut()) {
                    *l = bytes;
                }
                self.cmds.push(None);
                return Ok(false);
            };
            let by_source = (binding - u64::from(source.words) * 4) / stride;
            let used = match self.chunks.last() {
                Some(&used) if used + stride <= self.check.chunk => used,
                _ => {
                    self.chunks.push(0);
                    0
                }
            };
            let by_chunk = (self.check.chunk - used) / stride;
            let n = left.min(by_source).min(by_chunk).min(self.check.max_run);
            let chunk = self.chunks.len() - 1;
            self.runs.push(Run {
                immediates: [
                    source.words,
                    // Under a chunk, itself at most `CHUNK` bytes.
                    (used / 4) as u32,
                    n as u32,
                    flags,
                    vertex_lo,
                    instance_lo,
                ],
                source,
                chunk,
            });
            self.segments.push(Segment {
                chunk,
                offset: used,
                count: n as u32,
            });
            self.chunks[chunk] = used + n * stride;
            offset += n * stride;
            left -= n;
        }
        self.cmds.push(Some(segments..self.segments.len()));
        Ok(true)
    }

    /// Whether no draw is checked.
    pub(crate) fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Makes the pass's chunks and records the check into them, in a
    /// compute pass of its own, leaving them in `INDIRECT` for the draws.
    ///
    /// # Safety
    /// `enc` is recording, outside any pass, for this device; every
    /// program buffer the plan reads is in `STORAGE_READ_ONLY`. After the
    /// call the encoder is outside any pass, with nothing of the
    /// program's set.
    pub(crate) unsafe fn record(
        self,
        enc: &mut dyn DynCommandEncoder,
    ) -> Result<CheckedDraws, String> {
        let check = self.check;
        let args = DrawArgs::new(self.shared, check, &self.chunks)?;
        let layout = &*check.draw_layout;
        // SAFETY: the caller's contract; the chunks are new (no earlier
        // use to order against), this device's, and bound whole by their
        // groups; each run's dynamic offset is aligned and its arguments
        // lie inside the source window and the chunk (`DrawPlan::add`).
        unsafe {
            enc.begin_compute_pass(&keel_hal::ComputePassDescriptor {
                label: Some("keel-wgpu: indirect draw check"),
            });
            enc.set_compute_pipeline(&*check.draw_pipeline);
            let mut bound = None;
            for run in &self.runs {
                if bound != Some(run.chunk) {
                    enc.set_bind_group(layout, 0, &*args.chunks[run.chunk].1, &[]);
                    bound = Some(run.chunk);
                }
                enc.set_bind_group(layout, 1, run.source.group, &[run.source.dynamic_offset]);
                enc.set_push_constants(layout, STAGES, 0, &run.immediates);
                enc.dispatch([run.immediates[2].div_ceil(DRAW_WORKGROUP), 1, 1]);
            }
            enc.end_compute_pass();
            let barriers: Vec<_> = args
                .chunks
                .iter()
                .map(|(buffer, _)| {
                    BufferBarrier::new(
                        &**buffer,
                        BufferUses::STORAGE_READ_WRITE,
                        BufferUses::INDIRECT,
                    )
                })
                .collect();
            enc.transition_buffers(&barriers);
        }
        Ok(CheckedDraws {
            args: Arc::new(args),
            segments: self.segments,
            cmds: self.cmds,
            next: 0,
        })
    }
}

/// A render pass's checked draw arguments: the chunks the check wrote,
/// kept until the submission that uses them is done (a [`Used`] object of
/// the command buffer), then buried.
#[derive(Debug)]
pub(crate) struct DrawArgs {
    shared: Arc<DeviceShared>,
    chunks: Vec<(Box<dyn DynBuffer>, Box<dyn DynBindGroup>)>,
    last_use: LastUse,
}

impl Used for DrawArgs {
    fn last_use(&self) -> &LastUse {
        &self.last_use
    }
}

impl DrawArgs {
    /// Chunks of `sizes` bytes with their groups (what was made goes if a
    /// creation fails).
    fn new(
        shared: &Arc<DeviceShared>,
        check: &IndirectCheck,
        sizes: &[u64],
    ) -> Result<Self, String> {
        let hal = shared.hal();
        let mut args = Self {
            shared: shared.clone(),
            chunks: Vec::with_capacity(sizes.len()),
            last_use: LastUse::default(),
        };
        for &size in sizes {
            let desc = keel_hal::BufferDescriptor {
                label: Some("keel-wgpu internal: checked indirect draw arguments"),
                size,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
                memory: Memory::Device,
            };
            // SAFETY: a plain creation on a live device.
            let buffer = unsafe { hal.create_buffer(&desc) }
                .map_err(|e| format!("making the indirect draw check's arguments: {e}"))?;
            let entries = [keel_hal::BindGroupEntry {
                binding: 0,
                resource: keel_hal::BindingResource::Buffer(keel_hal::BufferBinding {
                    buffer: &*buffer,
                    offset: 0,
                    size: NonZeroU64::new(size),
                }),
            }];
            let desc = keel_hal::BindGroupDescriptor::<DynResources> {
                label: Some("keel-wgpu internal: checked indirect draw arguments"),
                layout: &*check.draw_dst_layout,
                entries: &entries,
            };
            // SAFETY: the layout and the buffer are this device's and alive.
            match unsafe { hal.create_bind_group(&desc) } {
                Ok(group) => args.chunks.push((buffer, group)),
                Err(e) => {
                    // SAFETY: just made, named by nothing.
                    unsafe { hal.destroy_buffer(buffer) };
                    return Err(format!("making the indirect draw check's group: {e}"));
                }
            }
        }
        Ok(args)
    }
}

impl Drop for DrawArgs {
    fn drop(&mut self) {
        let last_use = self.last_use.get();
        for (buffer, group) in self.chunks.drain(..) {
            self.shared.bury(last_use, Dead::BindGroup(group));
            self.shared.bury(last_use, Dead::Buffer(buffer));
        }
    }
}

/// The draws of a render pass as the check left them: what each indirect
/// draw command reads, handed out in the order [`DrawPlan::add`] took them.
pub(crate) struct CheckedDraws {
    args: Arc<DrawArgs>,
    segments: Vec<Segment>,
    cmds: Vec<Option<Range<usize>>>,
    next: usize,
}

impl CheckedDraws {
    /// The chunks' owner, for the command buffer to keep.
    pub(crate) fn args(&self) -> &Arc<DrawArgs> {
        &self.args
    }

    /// The next indirect draw command's runs (for [`CheckedDraws::runs`]),
    /// or `None` where it reads the program's buffer.
    pub(crate) fn next(&mut self) -> Option<Range<usize>> {
        let range = self.cmds.get(self.next).cloned().flatten();
        self.next += 1;
        range
    }

    /// The runs `range` names: (buffer, offset, draw count) each.
    pub(crate) fn runs(
        &self,
        range: Range<usize>,
    ) -> impl Iterator<Item = (&dyn DynBuffer, u64, u32)> + '_ {
        self.segments
            .get(range)
            .unwrap_or_default()
            .iter()
            .filter_map(|s| {
                let (buffer, _) = self.args.chunks.get(s.chunk)?;
                Some((&**buffer, s.offset, s.count))
            })
    }
}

/// A device's check: off, not made yet, or made (once; kept until the
/// device goes).
#[derive(Debug, Default)]
pub(crate) struct IndirectSlot {
    enabled: bool,
    check: OnceLock<IndirectCheck>,
    /// Held while the check is made, so it is made once.
    making: Mutex<()>,
}

impl IndirectSlot {
    /// A slot for a device whose check is on (`hal_limits`) or off.
    pub(crate) fn new(enabled: bool) -> Self {
        Self {
            enabled,
            ..Self::default()
        }
    }

    /// Whether the device checks indirect dispatches (indirect buffers
    /// then get keel-hal's `STORAGE` usage, to be read by the check).
    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// The device's check, made at the first call; `Ok(None)` where the
    /// check is off. A failure to make it is returned (and tried again at
    /// the next call).
    pub(crate) fn get(
        &self,
        hal: &dyn DynDevice,
        limits: &wgpu::Limits,
        features: wgpu::Features,
    ) -> Result<Option<&IndirectCheck>, String> {
        if !self.enabled {
            return Ok(None);
        }
        if let Some(check) = self.check.get() {
            return Ok(Some(check));
        }
        let _making = self.making.lock();
        if let Some(check) = self.check.get() {
            return Ok(Some(check));
        }
        let made = IndirectCheck::new(hal, limits, features)?;
        if let Err(made) = self.check.set(made) {
            // Unreachable under `making`; destroyed rather than leaked.
            // SAFETY: just made, used by nothing.
            unsafe { made.destroy(hal) };
        }
        Ok(self.check.get())
    }

    /// Takes the check's own objects out of `counts`: its buffer (one
    /// memory allocation), destination group, three group layouts, two
    /// pipeline layouts and two pipelines (the shader modules went once
    /// the pipelines were made). A pass's checked draw arguments
    /// ([`DrawArgs`]) belong to its command buffer and are counted.
    pub(crate) fn discount(&self, counts: &mut LiveCounts) {
        if self.check.get().is_none() {
            return;
        }
        counts.buffers -= 1;
        counts.memory_allocations -= 1;
        counts.bind_groups -= 1;
        counts.bind_group_layouts -= 3;
        counts.pipeline_layouts -= 2;
        counts.compute_pipelines -= 2;
    }

    /// Destroys the check, if made.
    ///
    /// # Safety
    /// As [`IndirectCheck::destroy`]: the device is idle and every buffer
    /// (with its source group) is gone.
    pub(crate) unsafe fn destroy(&mut self, hal: &dyn DynDevice) {
        if let Some(check) = self.check.take() {
            // SAFETY: the caller's contract.
            unsafe { check.destroy(hal) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Makes the check on a noop keel-hal device (which makes pipelines
    /// only when `pipelines`: without, the check fails part way through,
    /// at its pipeline), and gives what making it returned, the device's
    /// live counts with the check's discounted, and those once the check
    /// is destroyed.
    fn made_and_destroyed(pipelines: bool) -> (Result<bool, String>, LiveCounts, LiveCounts) {
        let chosen = keel_hal::dynamic::instance(
            keel_hal::dynamic::BackendChoice::Noop,
            &Default::default(),
        )
        .expect("noop instance");
        // SAFETY: the instance is alive for the whole test.
        let exposed = unsafe { chosen.instance.enumerate_adapters() }
            .into_iter()
            .next()
            .expect("noop adapter");
        let desc = keel_hal::DeviceDescriptor {
            allow_no_shader_execution: pipelines,
            ..Default::default()
        };
        // SAFETY: the adapter and its instance are alive.
        let open = unsafe { exposed.adapter.open(&desc) }.expect("noop device");
        let hal = &*open.device;
        let mut slot = IndirectSlot::new(true);
        let made = slot
            .get(
                hal,
                &wgpu::Limits::downlevel_defaults(),
                wgpu::Features::empty(),
            )
            .map(|check| check.is_some());
        let mut alive = hal.live_counts();
        slot.discount(&mut alive);
        // SAFETY: nothing used the check.
        unsafe { slot.destroy(hal) };
        (made, alive, hal.live_counts())
    }

    #[test]
    fn the_check_leaves_nothing_behind() {
        // Made: `live_counts` leaves out exactly what it holds, and it
        // goes whole.
        let (made, alive, after) = made_and_destroyed(true);
        assert_eq!(made, Ok(true));
        assert_eq!(alive, LiveCounts::default());
        assert_eq!(after, LiveCounts::default());
        // Failing part way: what was made is destroyed.
        let (made, alive, after) = made_and_destroyed(false);
        assert!(made.is_err_and(|e| e.contains("pipeline")));
        assert_eq!(alive, LiveCounts::default());
        assert_eq!(after, LiveCounts::default());
    }

    #[test]
    fn every_offset_reaches_its_arguments() {
        for alignment in [4u64, 16, 32, 64, 256] {
            let least = min_window(alignment);
            for cap in [least, least + 4, least + alignment + 8, 1 << 20] {
                for size in (12..=4 * alignment + 64).step_by(4) {
                    for len in [12, 16, 20] {
                        if len > size {
                            continue;
                        }
                        for offset in (0..=size - len).step_by(4) {
                            let (binding, aligned, remainder) =
                                window(size, alignment, cap, offset, len).expect("a window");
                            let at = format!("{alignment} {cap} {size} {len} {offset}");
                            assert_eq!(aligned % alignment, 0, "{at}");
                            assert!(aligned + binding <= size, "{at}");
                            assert_eq!(aligned + remainder, offset, "{at}");
                            assert!(remainder + len <= binding, "{at}");
                            assert!(binding <= cap, "{at}");
                            assert_eq!(remainder % 4, 0, "{at}");
                        }
                        assert!(window(size, alignment, cap, size - len + 4, len).is_none());
                    }
                }
            }
        }
    }

    #[test]
    fn limits_split_into_33_bits() {
        assert_eq!(split_limit(0), (0, 0));
        assert_eq!(split_limit(6), (0, 6));
        assert_eq!(split_limit(u64::from(u32::MAX)), (0, u32::MAX));
        assert_eq!(split_limit(u64::from(u32::MAX) + 1), (1, 0));
        assert_eq!(split_limit(2 * u64::from(u32::MAX) - 1), (1, u32::MAX - 2));
        // No range of two `u32`s ends past this: no limit.
        assert_eq!(split_limit(2 * u64::from(u32::MAX)), (2, 0));
        assert_eq!(split_limit(u64::MAX), (2, 0));
    }

    #[test]
    fn limits_are_raised_only_where_the_adapter_has_them() {
        let adapter = wgpu::Limits {
            max_immediate_size: 128,
            ..wgpu::Limits::default()
        };
        let requested = wgpu::Limits {
            max_immediate_size: 0,
            max_storage_buffers_per_shader_stage: 1,
            ..wgpu::Limits::downlevel_defaults()
        };
        let (hal, on) = hal_limits(&requested, &adapter, true);
        assert!(on);
        assert_eq!(hal.max_immediate_size, DRAW_IMMEDIATES);
        assert_eq!(hal.max_storage_buffers_per_shader_stage, 2);
        assert_eq!(
            hal,
            wgpu::Limits {
                max_immediate_size: DRAW_IMMEDIATES,
                max_storage_buffers_per_shader_stage: 2,
                ..requested.clone()
            }
        );
        // No shaders, or an adapter without the immediates: off.
        assert_eq!(
            hal_limits(&requested, &adapter, false),
            (requested.clone(), false)
        );
        let (hal, on) = hal_limits(&requested, &wgpu::Limits::default(), true);
        assert!(!on);
        assert_eq!(hal, requested);
        // Limits keel-hal holds the program to are never raised: a program
        // that cannot dispatch (WebGL2's) or has one bind group gets none.
        let webgl2 = wgpu::Limits::downlevel_webgl2_defaults();
        assert_eq!(hal_limits(&webgl2, &adapter, true), (webgl2, false));
        let one_group = wgpu::Limits {
            max_bind_groups: 1,
            ..wgpu::Limits::downlevel_defaults()
        };
        assert_eq!(hal_limits(&one_group, &adapter, true), (one_group, false));
    }
}
