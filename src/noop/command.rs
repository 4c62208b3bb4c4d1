//! Command recording and execution.
//!
//! The encoder appends [`Command`]s to a `Vec`; `end_encoding` hands the
//! `Vec` out as a [`CommandBuffer`], and `reset_all` takes it back, clears it
//! and keeps its capacity for the next recording. The queue runs the list in
//! order at submit ([`execute`]).
//!
//! Regions are checked and turned into byte-level [`CopyPlan`]s *while
//! recording*: resources never change size, so a region that fits at record
//! time fits at submit. A region that does not fit is undefined behaviour on
//! a GPU; here it is logged with `log::error!` and its command skipped, so
//! a mistake never corrupts memory or panics. Commands hold their
//! resources' bytes through `Arc`, so even a resource destroyed too early
//! cannot leave a dangling pointer.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::acceleration::{self, BuildState};
use super::memory::HostBytes;
use super::pass::{self, Pass};
use super::texel::{self, CopyError, CopyPlan};
use super::{
    AccelerationStructure, Api, BindGroup, Buffer, ComputePipeline, DeviceShared, PipelineLayout,
    QuerySet, RayTracingPipeline, RenderPipeline, Texture,
};
use crate::validate::draw::Geometry;
use crate::{
    AccelerationStructureBarrier, AccelerationStructureCopy, AccelerationStructureError,
    BufferBarrier, BufferBinding, BufferCopy, BufferTextureCopy,
    BuildAccelerationStructureDescriptor, ComputePassDescriptor, DeviceError, Rect,
    RenderPassDescriptor, ShaderBindingTable, TextureBarrier, TextureCopy, TextureUses,
};

/// What a query set counts. (The noop backend supports no pipeline statistics.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueryKind {
    Occlusion,
    Timestamp,
}

/// The `u64` results of a query set.
#[derive(Debug)]
pub(crate) struct QueryResults {
    values: Box<[AtomicU64]>,
}

impl QueryResults {
    /// `count` results, all 0.
    pub(crate) fn new(count: u32) -> Result<Self, DeviceError> {
        let mut values = Vec::new();
        values
            .try_reserve_exact(count as usize)
            .map_err(|_| DeviceError::OutOfMemory)?;
        values.extend((0..count).map(|_| AtomicU64::new(0)));
        Ok(Self {
            values: values.into_boxed_slice(),
        })
    }

    pub(crate) fn count(&self) -> u32 {
        // At most `MAX_QUERIES` values were created.
        self.values.len() as u32
    }

    fn set(&self, index: u32, value: u64) {
        if let Some(slot) = self.values.get(index as usize) {
            slot.store(value, Ordering::Relaxed);
        }
    }

    fn get(&self, index: u32) -> u64 {
        self.values
            .get(index as usize)
            .map_or(0, |slot| slot.load(Ordering::Relaxed))
    }
}

/// One recorded command. Copies of every kind are a [`CopyPlan`] between
/// two allocations, already checked against both.
#[derive(Debug)]
enum Command {
    /// Zero `len` bytes at `offset`.
    Zero {
        dst: Arc<HostBytes>,
        offset: u64,
        len: u64,
    },
    /// Move bytes as the plan says.
    Copy {
        src: Arc<HostBytes>,
        dst: Arc<HostBytes>,
        plan: CopyPlan,
    },
    /// Set queries back to 0.
    ResetQueries {
        set: Arc<QueryResults>,
        range: Range<u32>,
    },
    /// End an occlusion query: noop draws nothing, so 0 samples passed.
    EndOcclusion { set: Arc<QueryResults>, index: u32 },
    /// Write the clock's value.
    WriteTimestamp { set: Arc<QueryResults>, index: u32 },
    /// Write each query's result as a native-endian `u64`, `stride` bytes apart.
    CopyQueryResults {
        set: Arc<QueryResults>,
        range: Range<u32>,
        dst: Arc<HostBytes>,
        offset: u64,
        stride: u64,
    },
    /// A build or copy into an acceleration structure: marks it built.
    BuildAccelerationStructure { dst: Arc<BuildState> },
    /// Write compacted sizes as native-endian `u64`s, 8 bytes apart.
    WriteCompactedSizes {
        sizes: Vec<u64>,
        dst: Arc<HostBytes>,
        offset: u64,
    },
}

/// A finished recording.
#[derive(Debug)]
pub struct CommandBuffer {
    commands: Vec<Command>,
}

/// Records commands into reusable `Vec`s.
#[derive(Debug, Default)]
pub struct CommandEncoder {
    /// The recording in progress, if any.
    active: Option<Vec<Command>>,
    /// Emptied lists from `reset_all`/`discard_encoding`, kept for their capacity.
    free: Vec<Vec<Command>>,
    /// Debug regions open in the recording in progress.
    open_markers: u32,
    /// A command could not be stored (host memory ran out); `end_encoding` fails.
    out_of_memory: bool,
    /// Command lists made so far (see [`Self::allocated_command_buffers`]).
    allocated: usize,
    /// The pass the recording in progress is in.
    pass: Pass,
    /// The device's `min_uniform_buffer_offset_alignment` and
    /// `min_storage_buffer_offset_alignment`, the smaller one: dynamic
    /// offsets must be multiples of it.
    offset_alignment: u32,
    /// The device's acceleration-structure limits, for build checks.
    as_limits: acceleration::Limits,
    /// The features the device was opened with, for draws that need one.
    features: wgt::Features,
    /// The device's `max_multiview_view_count`, for render passes.
    max_views: u32,
    /// The device's limits, for mesh draws' workgroup counts.
    limits: wgt::Limits,
    /// Where the bound render pipeline's geometry comes from (`None`: none
    /// bound in this pass): vertex and mesh draws check it.
    geometry: Option<Geometry>,
}

impl CommandEncoder {
    pub(crate) fn new(limits: &wgt::Limits, features: wgt::Features) -> Self {
        Self {
            features,
            offset_alignment: limits
                .min_uniform_buffer_offset_alignment
                .min(limits.min_storage_buffer_offset_alignment),
            as_limits: acceleration::Limits::new(limits),
            max_views: limits.max_multiview_view_count,
            limits: limits.clone(),
            ..Self::default()
        }
    }

    /// A count draw: checked as on every backend (`validate/draw.rs`), then
    /// nothing (noop draws nothing).
    fn count_draw(
        &self,
        buffer: &Buffer,
        offset: u64,
        count_buffer: &Buffer,
        count_offset: u64,
        max_count: u32,
        arg_size: u64,
    ) {
        if !self.in_pass(Pass::Render, "count draw") {
            return;
        }
        let draw = crate::validate::draw::CountDraw {
            size: buffer.size(),
            offset,
            arg_size,
            max_count,
            count_size: count_buffer.size(),
            count_offset,
        };
        if let Some(why) = crate::validate::draw::count_draw_problem(self.features, draw) {
            crate::refusal::refused!("noop: count draw: {why}; skipped");
        }
    }

    /// Whether the recording is in `want`; logs `what` as misplaced if not.
    /// A barrier (`what`) outside a render pass, as Vulkan requires; logs
    /// otherwise.
    fn barrier_allowed(&self, what: &str) -> bool {
        if self.pass == Pass::Render {
            crate::refusal::refused!(
                "noop: {what} inside a render pass; skipped (record it before the pass)"
            );
            return false;
        }
        true
    }

    /// A vertex draw (`what`): inside a render pass, no mesh pipeline
    /// bound (`validate/draw.rs`); logs otherwise.
    fn vertex_draw(&self, what: &str) -> bool {
        if !self.in_pass(Pass::Render, what) {
            return false;
        }
        match crate::validate::draw::vertex_draw_problem(self.geometry) {
            Some(why) => {
                crate::refusal::refused!("noop: {what}: {why}; skipped");
                false
            }
            None => true,
        }
    }

    /// A vertex draw of `draw_count` argument sets of `size` bytes read
    /// from `buffer` at `offset`: checked as on Vulkan (`validate/draw.rs`),
    /// then nothing (noop draws nothing).
    fn indirect_draw(&self, what: &str, buffer: &Buffer, offset: u64, draw_count: u32, size: u64) {
        if !self.vertex_draw(what) {
            return;
        }
        if let Some(why) =
            crate::validate::draw::indirect_problem(buffer.size(), offset, draw_count, size)
        {
            crate::refusal::refused!("noop: {what}: {why}; skipped");
        }
    }

    /// A mesh draw (`what`, with `groups` for a direct one), checked as on
    /// every backend (`validate/draw.rs`); logs otherwise.
    fn mesh_draw(&self, what: &str, groups: Option<[u32; 3]>) -> bool {
        if !self.in_pass(Pass::Render, what) {
            return false;
        }
        let problem = crate::validate::draw::mesh_draw_problem(
            self.features,
            &self.limits,
            self.geometry,
            groups,
        );
        match problem {
            Some(why) => {
                crate::refusal::refused!("noop: {what}: {why}; skipped");
                false
            }
            None => true,
        }
    }

    fn in_pass(&self, want: Pass, what: &str) -> bool {
        if self.pass != want {
            crate::refusal::refused!(
                "noop: {what} recorded in {:?} pass state, not {want:?}; skipped",
                self.pass
            );
            return false;
        }
        true
    }

    /// How many command lists the encoder has made. Discarded recordings and
    /// command buffers handed back through `reset_all` are reused, so this
    /// grows only past the most recordings alive at once (a command buffer
    /// dropped instead of handed back is lost, not reused). The counterpart
    /// of the Vulkan encoder's `allocated_command_buffers`.
    pub fn allocated_command_buffers(&self) -> usize {
        self.allocated
    }

    /// Appends a command to the recording in progress.
    fn record(&mut self, command: Command) {
        let Some(list) = self.active.as_mut() else {
            crate::refusal::refused!(
                "noop: command recorded outside begin_encoding/end_encoding; ignored"
            );
            return;
        };
        if list.try_reserve(1).is_err() {
            self.out_of_memory = true;
            return;
        }
        list.push(command);
    }

    /// Empties a command list (dropping its references to resources) and
    /// keeps it for reuse.
    fn recycle(&mut self, mut list: Vec<Command>) {
        list.clear();
        if self.free.try_reserve(1).is_ok() {
            self.free.push(list);
        } else {
            self.allocated -= 1;
        }
    }

    /// Records a copy whose plan was computed by `plan`, or logs why not.
    fn record_copy(
        &mut self,
        what: &str,
        src: &Arc<HostBytes>,
        dst: &Arc<HostBytes>,
        plan: Result<CopyPlan, CopyError>,
    ) {
        let plan = plan.and_then(|plan| plan.check(src.len(), dst.len()).map(|()| plan));
        match plan {
            Ok(plan) if plan.is_empty() => {}
            Ok(plan) => self.record(Command::Copy {
                src: Arc::clone(src),
                dst: Arc::clone(dst),
                plan,
            }),
            Err(e) => crate::refusal::refused!("noop: {what} region skipped: {e}"),
        }
    }

    /// Fails (logged) unless a recording is in progress outside any pass.
    /// Checked before the acceleration-structure checks, so a refused
    /// command remembers no build flags.
    fn recording_outside_passes(&self, what: &str) -> Result<(), AccelerationStructureError> {
        if self.active.is_none() {
            crate::refusal::refused!("noop: {what} outside begin_encoding/end_encoding; refused");
            return Err(
                DeviceError::InvalidState("recorded outside begin_encoding/end_encoding").into(),
            );
        }
        crate::validate::acceleration::check_outside_pass(!self.in_pass(Pass::None, what))
    }

    /// Checks that `index` names a query of `set`, and that the set counts `kind`.
    fn query_ok(set: &QuerySet, index: u32, kind: QueryKind, what: &str) -> bool {
        if set.kind != kind {
            crate::refusal::refused!("noop: {what} on a {:?} query set; skipped", set.kind);
            return false;
        }
        if index >= set.count() {
            crate::refusal::refused!(
                "noop: {what}: query {index} is outside the set of {}",
                set.count()
            );
            return false;
        }
        true
    }
}

impl crate::CommandEncoder for CommandEncoder {
    type A = Api;

    unsafe fn begin_encoding(&mut self, _label: Option<&str>) -> Result<(), DeviceError> {
        if let Some(previous) = self.active.take() {
            crate::refusal::refused!(
                "noop: begin_encoding during a recording; the previous one is discarded"
            );
            self.recycle(previous);
        }
        let list = match self.free.pop() {
            Some(list) => list,
            None => {
                self.allocated += 1;
                Vec::new()
            }
        };
        self.active = Some(list);
        self.open_markers = 0;
        self.out_of_memory = false;
        self.pass = Pass::None;
        Ok(())
    }

    unsafe fn discard_encoding(&mut self) {
        if let Some(list) = self.active.take() {
            self.recycle(list);
        }
    }

    unsafe fn end_encoding(&mut self) -> Result<CommandBuffer, DeviceError> {
        if self.open_markers != 0 {
            log::warn!(
                "noop: recording ended with {} debug region(s) open",
                self.open_markers
            );
        }
        if std::mem::take(&mut self.pass) != Pass::None {
            crate::refusal::refused!("noop: recording ended inside a pass");
        }
        let Some(commands) = self.active.take() else {
            crate::refusal::refused!("noop: end_encoding without begin_encoding");
            return Err(DeviceError::InvalidState(
                "end_encoding without begin_encoding",
            ));
        };
        if std::mem::take(&mut self.out_of_memory) {
            self.recycle(commands);
            return Err(DeviceError::OutOfMemory);
        }
        Ok(CommandBuffer { commands })
    }

    unsafe fn reset_all<I>(&mut self, command_buffers: I)
    where
        I: IntoIterator<Item = CommandBuffer>,
    {
        if let Some(list) = self.active.take() {
            crate::refusal::refused!(
                "noop: reset_all during a recording; the recording is discarded"
            );
            self.recycle(list);
        }
        for buffer in command_buffers {
            self.recycle(buffer.commands);
        }
    }

    unsafe fn transition_buffers(&mut self, _barriers: &[BufferBarrier<'_, Buffer>]) {
        // Commands run in order on one thread: there is nothing to order;
        // a barrier inside a render pass is refused as on Vulkan.
        self.barrier_allowed("transition_buffers");
    }

    unsafe fn transition_textures(&mut self, _barriers: &[TextureBarrier<'_, Texture>]) {
        // As for buffers; the noop backend has no layouts either.
        self.barrier_allowed("transition_textures");
    }

    unsafe fn clear_buffer(&mut self, buffer: &Buffer, range: Range<u64>) {
        let len = range.end.checked_sub(range.start);
        match len {
            Some(len) if range.end <= buffer.size() => {
                if len > 0 {
                    self.record(Command::Zero {
                        dst: Arc::clone(&buffer.bytes),
                        offset: range.start,
                        len,
                    });
                }
            }
            _ => crate::refusal::refused!(
                "noop: clear_buffer range {range:?} is outside the buffer of {} bytes; skipped",
                buffer.size()
            ),
        }
    }

    unsafe fn clear_texture(
        &mut self,
        texture: &Texture,
        range: &wgt::ImageSubresourceRange,
    ) -> Result<(), crate::TextureError> {
        let clear = crate::validate::clear::check_clear(&texture.facts(), range, self.features)?;
        let runs = texture
            .layout
            .clear_runs(range.aspect, clear.mips, clear.layers)
            .ok_or(crate::TextureError::Device(DeviceError::Unexpected))?;
        for (offset, len) in runs {
            self.record(Command::Zero {
                dst: Arc::clone(&texture.bytes),
                offset,
                len,
            });
        }
        Ok(())
    }

    unsafe fn copy_buffer_to_buffer(&mut self, src: &Buffer, dst: &Buffer, regions: &[BufferCopy]) {
        for r in regions {
            let plan = CopyPlan::linear(r.src_offset, r.dst_offset, r.size);
            self.record_copy("copy_buffer_to_buffer", &src.bytes, &dst.bytes, Ok(plan));
        }
    }

    unsafe fn copy_buffer_to_texture(
        &mut self,
        src: &Buffer,
        dst: &Texture,
        regions: &[BufferTextureCopy],
    ) {
        for r in regions {
            let plan = texel::plan_buffer_texture(&dst.layout, r, true);
            self.record_copy("copy_buffer_to_texture", &src.bytes, &dst.bytes, plan);
        }
    }

    unsafe fn copy_texture_to_buffer(
        &mut self,
        src: &Texture,
        _src_usage: TextureUses,
        dst: &Buffer,
        regions: &[BufferTextureCopy],
    ) {
        for r in regions {
            let plan = texel::plan_buffer_texture(&src.layout, r, false);
            self.record_copy("copy_texture_to_buffer", &src.bytes, &dst.bytes, plan);
        }
    }

    unsafe fn copy_texture_to_texture(
        &mut self,
        src: &Texture,
        _src_usage: TextureUses,
        dst: &Texture,
        regions: &[TextureCopy],
    ) {
        for r in regions {
            let plan = texel::plan_texture_texture(&src.layout, &dst.layout, r);
            self.record_copy("copy_texture_to_texture", &src.bytes, &dst.bytes, plan);
        }
    }

    unsafe fn begin_debug_marker(&mut self, _label: &str) {
        self.open_markers += 1;
    }

    unsafe fn end_debug_marker(&mut self) {
        match self.open_markers.checked_sub(1) {
            Some(open) => self.open_markers = open,
            None => crate::refusal::refused!("noop: end_debug_marker with no debug region open"),
        }
    }

    unsafe fn insert_debug_marker(&mut self, _label: &str) {}

    unsafe fn reset_queries(&mut self, set: &QuerySet, range: Range<u32>) {
        if range.start > range.end || range.end > set.count() {
            crate::refusal::refused!(
                "noop: reset_queries range {range:?} is outside the set of {}; skipped",
                set.count()
            );
            return;
        }
        if !range.is_empty() {
            self.record(Command::ResetQueries {
                set: Arc::clone(&set.results),
                range,
            });
        }
    }

    unsafe fn begin_query(&mut self, set: &QuerySet, index: u32) {
        // Nothing to do until the end: no draws means no samples to count.
        Self::query_ok(set, index, QueryKind::Occlusion, "begin_query");
    }

    unsafe fn end_query(&mut self, set: &QuerySet, index: u32) {
        if Self::query_ok(set, index, QueryKind::Occlusion, "end_query") {
            self.record(Command::EndOcclusion {
                set: Arc::clone(&set.results),
                index,
            });
        }
    }

    unsafe fn write_timestamp(&mut self, set: &QuerySet, index: u32) {
        if Self::query_ok(set, index, QueryKind::Timestamp, "write_timestamp") {
            self.record(Command::WriteTimestamp {
                set: Arc::clone(&set.results),
                index,
            });
        }
    }

    unsafe fn copy_query_results(
        &mut self,
        set: &QuerySet,
        range: Range<u32>,
        buffer: &Buffer,
        offset: u64,
        stride: u64,
    ) {
        if range.start > range.end || range.end > set.count() {
            crate::refusal::refused!(
                "noop: copy_query_results range {range:?} is outside the set of {}; skipped",
                set.count()
            );
            return;
        }
        let count = range.end - range.start;
        if count == 0 {
            return;
        }
        if !crate::validate::query::results_fit(buffer.size(), set.ty(), count, offset, stride) {
            crate::refusal::refused!(
                "noop: copy_query_results of {count} queries at offset {offset}, stride {stride} \
                 does not fit the buffer of {} bytes; skipped",
                buffer.size()
            );
            return;
        }
        self.record(Command::CopyQueryResults {
            set: Arc::clone(&set.results),
            range,
            dst: Arc::clone(&buffer.bytes),
            offset,
            stride,
        });
    }

    /// Noop has one queue and no layouts, and synchronises external memory
    /// at submit boundaries (`external.rs`): a transfer has nothing to do.
    /// Naming a resource without external memory is logged (the contract).
    unsafe fn transfer_ownership(
        &mut self,
        _direction: crate::OwnershipTransfer,
        buffers: &[crate::BufferBarrier<'_, Buffer>],
        textures: &[crate::TextureBarrier<'_, Texture>],
    ) {
        let external = |m: crate::Memory| matches!(m, crate::Memory::External(_));
        if !buffers.iter().all(|b| external(b.buffer.memory))
            || !textures.iter().all(|t| external(t.texture.memory))
        {
            crate::refusal::refused!(
                "noop: transfer_ownership of a resource without external memory"
            );
        }
    }

    unsafe fn begin_render_pass(&mut self, desc: &RenderPassDescriptor<Api>) {
        if !self.in_pass(Pass::None, "begin_render_pass") {
            return;
        }
        self.pass = Pass::Render;
        self.geometry = None;
        let checked = crate::validate::multiview::check_pass(desc, self.features, self.max_views);
        if let Err(e) = checked {
            crate::refusal::refused!("noop: begin_render_pass: {e}; the pass is skipped");
            return;
        }
        let mut fills = Vec::new();
        let made = pass::attachment_clears(desc, |fill| {
            if fills.try_reserve(1).is_ok() {
                fills.push(fill);
            }
        });
        if made.is_err() {
            self.out_of_memory = true;
        }
        for fill in fills {
            self.record(Command::Copy {
                src: fill.src,
                dst: fill.dst,
                plan: fill.plan,
            });
        }
    }

    unsafe fn end_render_pass(&mut self) {
        if self.in_pass(Pass::Render, "end_render_pass") {
            // Resolves do nothing on noop (see `pass.rs`).
            self.pass = Pass::None;
        }
    }

    unsafe fn begin_compute_pass(&mut self, _desc: &ComputePassDescriptor) {
        if self.in_pass(Pass::None, "begin_compute_pass") {
            self.pass = Pass::Compute;
        }
    }

    unsafe fn end_compute_pass(&mut self) {
        if self.in_pass(Pass::Compute, "end_compute_pass") {
            self.pass = Pass::None;
        }
    }

    unsafe fn set_bind_group(
        &mut self,
        _layout: &PipelineLayout,
        _index: u32,
        group: &BindGroup,
        dynamic_offsets: &[wgt::DynamicOffset],
    ) {
        if self.pass == Pass::None {
            crate::refusal::refused!("noop: set_bind_group outside a pass; skipped");
            return;
        }
        // Nothing reads bindings on noop: checking the offsets is all.
        pass::dynamic_offsets_ok(group, dynamic_offsets, self.offset_alignment);
    }

    unsafe fn set_push_constants(
        &mut self,
        layout: &PipelineLayout,
        stages: wgt::ShaderStages,
        offset: u32,
        data: &[u32],
    ) {
        if self.pass == Pass::None {
            crate::refusal::refused!("noop: set_push_constants outside a pass; skipped");
            return;
        }
        pass::push_constants_ok(layout, stages, offset, data.len());
    }

    unsafe fn set_render_pipeline(&mut self, pipeline: &RenderPipeline) {
        if self.in_pass(Pass::Render, "set_render_pipeline") {
            self.geometry = Some(pipeline.geometry);
        }
    }

    unsafe fn set_index_buffer(
        &mut self,
        _binding: BufferBinding<'_, Buffer>,
        _format: wgt::IndexFormat,
    ) {
        self.in_pass(Pass::Render, "set_index_buffer");
    }

    unsafe fn set_vertex_buffer(&mut self, _index: u32, _binding: BufferBinding<'_, Buffer>) {
        self.in_pass(Pass::Render, "set_vertex_buffer");
    }

    unsafe fn set_viewport(&mut self, _rect: &Rect<f32>, _depth_range: Range<f32>) {
        self.in_pass(Pass::Render, "set_viewport");
    }

    unsafe fn set_scissor_rect(&mut self, _rect: &Rect<u32>) {
        self.in_pass(Pass::Render, "set_scissor_rect");
    }

    unsafe fn set_stencil_reference(&mut self, _value: u32) {
        self.in_pass(Pass::Render, "set_stencil_reference");
    }

    unsafe fn set_blend_constants(&mut self, _color: &[f32; 4]) {
        self.in_pass(Pass::Render, "set_blend_constants");
    }

    unsafe fn draw(
        &mut self,
        _first_vertex: u32,
        _vertex_count: u32,
        _first_instance: u32,
        _instance_count: u32,
    ) {
        // Accepted; noop runs no shaders, so nothing is drawn.
        self.vertex_draw("draw");
    }

    unsafe fn draw_indexed(
        &mut self,
        _first_index: u32,
        _index_count: u32,
        _base_vertex: i32,
        _first_instance: u32,
        _instance_count: u32,
    ) {
        self.vertex_draw("draw_indexed");
    }

    unsafe fn draw_indirect(&mut self, buffer: &Buffer, offset: u64, draw_count: u32) {
        let size = crate::validate::draw::DRAW_ARGS;
        self.indirect_draw("draw_indirect", buffer, offset, draw_count, size);
    }

    unsafe fn draw_indexed_indirect(&mut self, buffer: &Buffer, offset: u64, draw_count: u32) {
        let size = crate::validate::draw::DRAW_INDEXED_ARGS;
        self.indirect_draw("draw_indexed_indirect", buffer, offset, draw_count, size);
    }

    unsafe fn draw_mesh_tasks(&mut self, x: u32, y: u32, z: u32) {
        // Accepted when valid; noop runs no shaders, so nothing is drawn.
        self.mesh_draw("draw_mesh_tasks", Some([x, y, z]));
    }

    unsafe fn draw_mesh_tasks_indirect(&mut self, buffer: &Buffer, offset: u64, draw_count: u32) {
        let what = "draw_mesh_tasks_indirect";
        if !self.mesh_draw(what, None) {
            return;
        }
        let size = crate::validate::draw::MESH_ARGS;
        if let Some(why) =
            crate::validate::draw::indirect_problem(buffer.size(), offset, draw_count, size)
        {
            crate::refusal::refused!("noop: {what}: {why}; skipped");
        }
    }

    unsafe fn draw_mesh_tasks_indirect_count(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count_buffer: &Buffer,
        count_offset: u64,
        max_count: u32,
    ) {
        if !self.mesh_draw("draw_mesh_tasks_indirect_count", None) {
            return;
        }
        let arg_size = crate::validate::draw::MESH_ARGS;
        self.count_draw(
            buffer,
            offset,
            count_buffer,
            count_offset,
            max_count,
            arg_size,
        );
    }

    unsafe fn draw_indirect_count(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count_buffer: &Buffer,
        count_offset: u64,
        max_count: u32,
    ) {
        let arg_size = crate::validate::draw::DRAW_ARGS;
        self.count_draw(
            buffer,
            offset,
            count_buffer,
            count_offset,
            max_count,
            arg_size,
        );
    }

    unsafe fn draw_indexed_indirect_count(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count_buffer: &Buffer,
        count_offset: u64,
        max_count: u32,
    ) {
        let arg_size = crate::validate::draw::DRAW_INDEXED_ARGS;
        self.count_draw(
            buffer,
            offset,
            count_buffer,
            count_offset,
            max_count,
            arg_size,
        );
    }

    unsafe fn set_compute_pipeline(&mut self, _pipeline: &ComputePipeline) {
        self.in_pass(Pass::Compute, "set_compute_pipeline");
    }

    unsafe fn dispatch(&mut self, _count: [u32; 3]) {
        // Accepted; noop runs no shaders, so nothing is dispatched.
        self.in_pass(Pass::Compute, "dispatch");
    }

    unsafe fn dispatch_indirect(&mut self, _buffer: &Buffer, _offset: u64) {
        self.in_pass(Pass::Compute, "dispatch_indirect");
    }

    unsafe fn build_acceleration_structures(
        &mut self,
        descriptors: &[BuildAccelerationStructureDescriptor<Api>],
    ) -> Result<(), AccelerationStructureError> {
        self.recording_outside_passes("build_acceleration_structures")?;
        acceleration::record_builds(descriptors, &self.as_limits)?;
        for desc in descriptors {
            self.record(Command::BuildAccelerationStructure {
                dst: Arc::clone(&desc.destination_acceleration_structure.state),
            });
        }
        Ok(())
    }

    unsafe fn place_acceleration_structure_barrier(
        &mut self,
        _barrier: AccelerationStructureBarrier<'_, AccelerationStructure>,
    ) {
        // Commands run in order on one thread: there is nothing to order.
        self.in_pass(Pass::None, "place_acceleration_structure_barrier");
    }

    unsafe fn copy_acceleration_structure(
        &mut self,
        src: &AccelerationStructure,
        dst: &AccelerationStructure,
        mode: AccelerationStructureCopy,
    ) -> Result<(), AccelerationStructureError> {
        self.recording_outside_passes("copy_acceleration_structure")?;
        acceleration::record_copy(src, dst, mode)?;
        // Noop structures hold no traceable contents: a copy only makes
        // the destination built.
        self.record(Command::BuildAccelerationStructure {
            dst: Arc::clone(&dst.state),
        });
        Ok(())
    }

    unsafe fn read_acceleration_structure_compacted_sizes(
        &mut self,
        structures: &[&AccelerationStructure],
        buffer: &Buffer,
        offset: u64,
    ) -> Result<(), AccelerationStructureError> {
        self.recording_outside_passes("read_acceleration_structure_compacted_sizes")?;
        let sizes = acceleration::compacted_sizes(structures, buffer, offset)?;
        if !sizes.is_empty() {
            self.record(Command::WriteCompactedSizes {
                sizes,
                dst: Arc::clone(&buffer.bytes),
                offset,
            });
        }
        Ok(())
    }

    unsafe fn begin_ray_tracing_pass(&mut self, _desc: &ComputePassDescriptor) {
        if self.in_pass(Pass::None, "begin_ray_tracing_pass") {
            self.pass = Pass::RayTracing;
        }
    }

    unsafe fn end_ray_tracing_pass(&mut self) {
        if self.in_pass(Pass::RayTracing, "end_ray_tracing_pass") {
            self.pass = Pass::None;
        }
    }

    unsafe fn set_ray_tracing_pipeline(&mut self, pipeline: &RayTracingPipeline) {
        // No value of the type exists: creation always fails.
        match *pipeline {}
    }

    unsafe fn trace_rays(&mut self, _table: &ShaderBindingTable<Buffer>, _size: [u32; 3]) {
        // Accepted; noop runs no shaders, so no ray is traced.
        self.in_pass(Pass::RayTracing, "trace_rays");
    }
}

/// Runs a command buffer's commands in order. Called by the queue with the
/// submit lock held.
pub(crate) fn execute(buffer: &CommandBuffer, device: &DeviceShared) {
    for command in &buffer.commands {
        match command {
            Command::Zero { dst, offset, len } => {
                if dst.zero(*offset, *len).is_err() {
                    crate::refusal::refused!("noop: clear_buffer out of bounds at submit; skipped");
                }
            }
            Command::Copy { src, dst, plan } => run_copy(src, dst, plan),
            Command::ResetQueries { set, range } => {
                for index in range.clone() {
                    set.set(index, 0);
                }
            }
            Command::EndOcclusion { set, index } => set.set(*index, 0),
            Command::WriteTimestamp { set, index } => set.set(*index, device.clock.now()),
            Command::CopyQueryResults {
                set,
                range,
                dst,
                offset,
                stride,
            } => {
                let mut at = *offset;
                for index in range.clone() {
                    if dst.write(at, &set.get(index).to_ne_bytes()).is_err() {
                        crate::refusal::refused!(
                            "noop: copy_query_results out of bounds at submit; stopped"
                        );
                        break;
                    }
                    at = at.saturating_add(*stride);
                }
            }
            Command::BuildAccelerationStructure { dst } => dst.mark_built(),
            Command::WriteCompactedSizes { sizes, dst, offset } => {
                let mut at = *offset;
                for size in sizes {
                    if dst.write(at, &size.to_ne_bytes()).is_err() {
                        crate::refusal::refused!(
                            "noop: compacted sizes out of bounds at submit; stopped"
                        );
                        break;
                    }
                    at = at.saturating_add(8);
                }
            }
        }
    }
}

/// External memory (`external.rs`) that `buffers` touch, each once, with
/// whether a command writes it: what a submission reads from the shared
/// files before its first command and writes back after its last. Empty,
/// and no allocation, when nothing is external.
pub(crate) fn external_memory<'a>(
    buffers: &[&'a CommandBuffer],
) -> Result<Vec<(&'a HostBytes, bool)>, DeviceError> {
    let mut found: Vec<(&'a HostBytes, bool)> = Vec::new();
    let mut note = |bytes: &'a Arc<HostBytes>, written: bool| -> Result<(), DeviceError> {
        if bytes.shared().is_none() {
            return Ok(());
        }
        let bytes: &'a HostBytes = bytes;
        if let Some(entry) = found.iter_mut().find(|(b, _)| std::ptr::eq(*b, bytes)) {
            entry.1 |= written;
            return Ok(());
        }
        found.try_reserve(1).map_err(|_| DeviceError::OutOfMemory)?;
        found.push((bytes, written));
        Ok(())
    };
    for buffer in buffers {
        for command in &buffer.commands {
            match command {
                Command::Zero { dst, .. }
                | Command::CopyQueryResults { dst, .. }
                | Command::WriteCompactedSizes { dst, .. } => note(dst, true)?,
                Command::Copy { src, dst, .. } => {
                    note(src, false)?;
                    note(dst, true)?;
                }
                Command::ResetQueries { .. }
                | Command::EndOcclusion { .. }
                | Command::WriteTimestamp { .. }
                | Command::BuildAccelerationStructure { .. } => {}
            }
        }
    }
    Ok(found)
}

/// Executes one copy plan. The plan was checked at record time; every run
/// is bounds-checked again by `HostBytes::copy`.
fn run_copy(src: &HostBytes, dst: &HostBytes, plan: &CopyPlan) {
    if let Err(e) = plan.check(src.len(), dst.len()) {
        crate::refusal::refused!("noop: copy skipped at submit: {e}");
        return;
    }
    let mut failed = false;
    plan.for_each_run(|from, to, len| {
        failed |= HostBytes::copy(src, from, dst, to, len).is_err();
    });
    if failed {
        crate::refusal::refused!("noop: part of a copy fell outside its resources and was skipped");
    }
}
