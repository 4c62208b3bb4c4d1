//! The GPU-side check of indirect dispatch arguments, as wgpu-core makes it
//! (`indirect_validation/dispatch.rs`, on under wgpu's default
//! `InstanceFlags::VALIDATION_INDIRECT_CALL`): the workgroup counts of a
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
//!   the group binds a window of the buffer just large enough that an
//!   aligned dynamic offset reaches every 12 bytes of it, and the rest of
//!   the offset goes in the immediates, in words (wgpu-core's
//!   `calculate_src_buffer_binding_size`; [`Source`]). An aligned offset
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

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::OnceLock;

use keel_hal::dynamic::{
    DynBindGroup, DynBindGroupLayout, DynBuffer, DynCommandEncoder, DynComputePipeline, DynDevice,
    DynPipelineLayout, DynResources, DynShaderModule,
};
use keel_hal::{BufferBarrier, BufferUses, LiveCounts, Memory};
use parking_lot::Mutex;

use crate::resource::Buffer;

/// The three `u32` workgroup counts of an indirect dispatch.
const ARGS_SIZE: u64 = 12;

/// The stages the check's immediates are visible to.
const STAGES: wgpu::ShaderStages = wgpu::ShaderStages::COMPUTE;

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
        max_immediate_size: 4,
        max_storage_buffers_per_shader_stage: 2,
        max_dynamic_storage_buffers_per_pipeline_layout: 1,
    );
    // The window a source group binds (`window`) is under three
    // alignments long.
    let window = 3 * u64::from(requested.min_storage_buffer_offset_alignment.max(4));
    allowed!(
        max_bind_groups: 2,
        max_bindings_per_bind_group: 1,
        max_storage_buffer_binding_size: window,
        max_compute_invocations_per_workgroup: 1,
        max_compute_workgroup_size_x: 1,
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

/// The check's source: `dst` is the device's checked-counts buffer,
/// `src` the window of the program's buffer, `offset.words` the counts'
/// place in it past the dynamic offset.
fn shader(max_workgroups: u32) -> String {
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

/// Where the check of one dispatch reads: the program's buffer's source
/// group, bound at `dynamic_offset`, and the counts `words` past it.
pub(crate) struct Source<'b> {
    group: &'b dyn DynBindGroup,
    dynamic_offset: u32,
    words: u32,
}

/// The window of a buffer of `size` bytes that a source group binds, and
/// the aligned offset and remainder that reach the counts at `offset`
/// (wgpu-core's `calculate_src_buffer_binding_size` and `params`): the
/// window is `2 * alignment + size % alignment` (or the whole buffer), so
/// that from the aligned offset at or below `offset`, lowered to keep the
/// window inside the buffer, the remainder plus 12 bytes stays inside it.
/// `None` when `offset + 12` is past `size`.
fn window(size: u64, alignment: u64, offset: u64) -> Option<(u64, u64, u64)> {
    if offset.checked_add(ARGS_SIZE)? > size {
        return None;
    }
    let binding = (2 * alignment + size % alignment).min(size);
    let aligned = (offset - offset % alignment).min(size - binding);
    let remainder = offset - aligned;
    (remainder + ARGS_SIZE <= binding).then_some((binding, aligned, remainder))
}

/// The device's check: its pipeline and the buffer of checked counts.
#[derive(Debug)]
pub(crate) struct IndirectCheck {
    src_layout: Box<dyn DynBindGroupLayout>,
    dst_layout: Box<dyn DynBindGroupLayout>,
    layout: Box<dyn DynPipelineLayout>,
    pipeline: Box<dyn DynComputePipeline>,
    /// The checked counts, `INDIRECT` between checks.
    dst: Box<dyn DynBuffer>,
    dst_group: Box<dyn DynBindGroup>,
    /// `min_storage_buffer_offset_alignment`: dynamic offsets are multiples.
    alignment: u64,
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
            if let Some(o) = self.pipeline.take() {
                hal.destroy_compute_pipeline(o);
            }
            if let Some(o) = self.layout.take() {
                hal.destroy_pipeline_layout(o);
            }
            if let Some(o) = self.dst_layout.take() {
                hal.destroy_bind_group_layout(o);
            }
            if let Some(o) = self.src_layout.take() {
                hal.destroy_bind_group_layout(o);
            }
            if let Some(o) = self.module.take() {
                hal.destroy_shader_module(o);
            }
        }
    }
}

impl IndirectCheck {
    /// Makes the check for a device with `limits` (the program's: its
    /// `max_compute_workgroups_per_dimension` is the bound).
    fn new(hal: &dyn DynDevice, limits: &wgpu::Limits) -> Result<Self, String> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            format!("making the indirect dispatch check's {what}: {e}")
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
        };
        let source = shader(limits.max_compute_workgroups_per_dimension);
        let desc = keel_hal::ShaderModuleDescriptor {
            label: Some("keel-wgpu internal: indirect dispatch check"),
            source: keel_hal::ShaderSource::Wgsl(Cow::Owned(source)),
        };
        // SAFETY: a plain creation on a live device (as every creation
        // below, each from objects of that device that are alive).
        let module =
            unsafe { hal.create_shader_module(&desc) }.map_err(|e| fail("shader module", &e))?;
        let module = &**parts.module.insert(module);

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
        let dst_entries = [storage(false, false, ARGS_SIZE)];
        let desc = keel_hal::BindGroupLayoutDescriptor {
            label: Some("keel-wgpu internal: indirect check destination"),
            flags: keel_hal::BindGroupLayoutFlags::empty(),
            entries: &dst_entries,
        };
        // SAFETY: as above.
        let dst_layout = unsafe { hal.create_bind_group_layout(&desc) }
            .map_err(|e| fail("destination layout", &e))?;
        let dst_layout = &**parts.dst_layout.insert(dst_layout);
        let src_entries = [storage(true, true, ARGS_SIZE)];
        let desc = keel_hal::BindGroupLayoutDescriptor {
            label: Some("keel-wgpu internal: indirect check source"),
            flags: keel_hal::BindGroupLayoutFlags::empty(),
            entries: &src_entries,
        };
        // SAFETY: as above.
        let src_layout = unsafe { hal.create_bind_group_layout(&desc) }
            .map_err(|e| fail("source layout", &e))?;
        let src_layout = &**parts.src_layout.insert(src_layout);

        let ranges = [keel_hal::PushConstantRange {
            stages: STAGES,
            range: 0..4,
        }];
        let desc = keel_hal::PipelineLayoutDescriptor::<DynResources> {
            label: Some("keel-wgpu internal: indirect check"),
            bind_group_layouts: &[dst_layout, src_layout],
            push_constant_ranges: &ranges,
        };
        // SAFETY: as above.
        let layout = unsafe { hal.create_pipeline_layout(&desc) }
            .map_err(|e| fail("pipeline layout", &e))?;
        let layout = &**parts.layout.insert(layout);
        let desc = keel_hal::ComputePipelineDescriptor::<DynResources> {
            label: Some("keel-wgpu internal: indirect dispatch check"),
            layout,
            stage: keel_hal::ProgrammableStage {
                module,
                entry_point: "main",
                constants: &[],
            },
            cache: None,
        };
        // SAFETY: as above.
        let pipeline =
            unsafe { hal.create_compute_pipeline(&desc) }.map_err(|e| fail("pipeline", &e))?;
        parts.pipeline = Some(pipeline);
        // The pipeline holds what it needs of the module.
        if let Some(module) = parts.module.take() {
            // SAFETY: from `hal`; no command buffer names a shader module.
            unsafe { hal.destroy_shader_module(module) };
        }

        let desc = keel_hal::BufferDescriptor {
            label: Some("keel-wgpu internal: checked indirect dispatch counts"),
            size: ARGS_SIZE,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
            memory: Memory::Device,
        };
        // SAFETY: as above.
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
        // SAFETY: as above.
        let dst_group =
            unsafe { hal.create_bind_group(&desc) }.map_err(|e| fail("destination group", &e))?;
        parts.dst_group = Some(dst_group);

        match (
            parts.src_layout.take(),
            parts.dst_layout.take(),
            parts.layout.take(),
            parts.pipeline.take(),
            parts.dst.take(),
            parts.dst_group.take(),
        ) {
            (
                Some(src_layout),
                Some(dst_layout),
                Some(layout),
                Some(pipeline),
                Some(dst),
                Some(dst_group),
            ) => Ok(Self {
                src_layout,
                dst_layout,
                layout,
                pipeline,
                dst,
                dst_group,
                alignment: u64::from(limits.min_storage_buffer_offset_alignment.max(4)),
            }),
            // Unreachable (each was made above); whatever was taken goes
            // back for `parts` to destroy.
            (src_layout, dst_layout, layout, pipeline, dst, dst_group) => {
                parts.src_layout = src_layout;
                parts.dst_layout = dst_layout;
                parts.layout = layout;
                parts.pipeline = pipeline;
                parts.dst = dst;
                parts.dst_group = dst_group;
                Err("making the indirect dispatch check: an object went missing".into())
            }
        }
    }

    /// # Safety
    /// No pending submission and no command buffer that may still be
    /// submitted uses the check; every group made by
    /// [`IndirectCheck::source`] is destroyed.
    unsafe fn destroy(self, hal: &dyn DynDevice) {
        // SAFETY: the caller's contract; every object came from `hal`.
        unsafe {
            hal.destroy_bind_group(self.dst_group);
            hal.destroy_buffer(self.dst);
            hal.destroy_compute_pipeline(self.pipeline);
            hal.destroy_pipeline_layout(self.layout);
            hal.destroy_bind_group_layout(self.dst_layout);
            hal.destroy_bind_group_layout(self.src_layout);
        }
    }

    /// Where the check of a dispatch at `offset` of `buffer` reads: the
    /// buffer's source group (made at its first check, then kept with it)
    /// and the offsets into it. `Ok(None)`: the offset cannot be reached
    /// through a dynamic offset (past 4 GiB), so the dispatch is not
    /// checked. The offset was checked when recorded (4-aligned, the
    /// counts inside the buffer).
    pub(crate) fn source<'b>(
        &self,
        buffer: &'b Buffer,
        offset: u64,
    ) -> Result<Option<Source<'b>>, String> {
        // The keel-hal buffer's size: the program's rounded up to 4 bytes
        // (`device::create_buffer`).
        let size = buffer.size.max(4).next_multiple_of(4);
        let (binding, aligned, remainder) = window(size, self.alignment, offset)
            .ok_or_else(|| format!("offset {offset} is outside {}", buffer.ident()))?;
        let Ok(dynamic_offset) = u32::try_from(aligned) else {
            return Ok(None);
        };
        let group = match buffer.indirect_source.get() {
            Some(group) => &**group,
            None => self.make_source(buffer, binding)?,
        };
        Ok(Some(Source {
            group,
            dynamic_offset,
            // Under one alignment, which is a `u32`.
            words: (remainder / 4) as u32,
        }))
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
            .map_err(|e| format!("making the indirect dispatch check's source group: {e}"))?;
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
            .ok_or_else(|| "the indirect dispatch check's source group went missing".into())
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
        let made = IndirectCheck::new(hal, limits)?;
        if let Err(made) = self.check.set(made) {
            // Unreachable under `making`; destroyed rather than leaked.
            // SAFETY: just made, used by nothing.
            unsafe { made.destroy(hal) };
        }
        Ok(self.check.get())
    }

    /// Takes the check's own objects out of `counts`: its buffer (one
    /// memory allocation), destination group, two group layouts, pipeline
    /// layout and pipeline (the shader module went once the pipeline was
    /// made).
    pub(crate) fn discount(&self, counts: &mut LiveCounts) {
        if self.check.get().is_none() {
            return;
        }
        counts.buffers -= 1;
        counts.memory_allocations -= 1;
        counts.bind_groups -= 1;
        counts.bind_group_layouts -= 2;
        counts.pipeline_layouts -= 1;
        counts.compute_pipelines -= 1;
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
            .get(hal, &wgpu::Limits::downlevel_defaults())
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
    fn every_offset_reaches_its_counts() {
        for alignment in [16u64, 32, 64, 256] {
            for size in (12..=4 * alignment + 16).step_by(4) {
                for offset in (0..=size - ARGS_SIZE).step_by(4) {
                    let (binding, aligned, remainder) =
                        window(size, alignment, offset).expect("a window");
                    assert_eq!(aligned % alignment, 0, "{size} {offset}");
                    assert!(aligned + binding <= size, "{size} {offset}");
                    assert_eq!(aligned + remainder, offset);
                    assert!(remainder + ARGS_SIZE <= binding);
                    assert!(binding <= 3 * alignment);
                    assert_eq!(remainder % 4, 0);
                }
                assert!(window(size, alignment, size - ARGS_SIZE + 4).is_none());
            }
        }
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
        assert_eq!(hal.max_immediate_size, 4);
        assert_eq!(hal.max_storage_buffers_per_shader_stage, 2);
        assert_eq!(
            hal,
            wgpu::Limits {
                max_immediate_size: 4,
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
