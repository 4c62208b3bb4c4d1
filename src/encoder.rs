//! The `CommandEncoder` trait: recording copies, barriers, queries, passes,
//! acceleration-structure builds and ray tracing into command buffers.

use std::ops::Range;

use crate::*;

/// Records commands into command buffers.
///
/// Life cycle: `begin_encoding` → record → `end_encoding` gives a command
/// buffer (or `discard_encoding` drops the recording). Command buffers come
/// back to the encoder through `reset_all` once the GPU is done with them,
/// which recycles their memory; destroying the encoder frees them all.
pub trait CommandEncoder: Send + Sync + std::fmt::Debug + 'static {
    /// The backend.
    type A: Api<CommandEncoder = Self>;

    /// Starts a recording.
    ///
    /// # Safety
    /// No recording is in progress on this encoder.
    unsafe fn begin_encoding(&mut self, label: Option<&str>) -> Result<(), DeviceError>;
    /// Drops the recording in progress.
    ///
    /// # Safety
    /// A recording is in progress.
    unsafe fn discard_encoding(&mut self);
    /// Finishes the recording and returns it as a command buffer.
    ///
    /// # Safety
    /// A recording is in progress. (Without one, every backend logs and
    /// returns [`DeviceError::InvalidState`]; the rule stays a contract.)
    unsafe fn end_encoding(&mut self) -> Result<<Self::A as Api>::CommandBuffer, DeviceError>;
    /// Takes back command buffers for reuse. Backends may reset all of the
    /// encoder's memory at once (Vulkan resets its command pool), so this
    /// also invalidates every command buffer of this encoder that was *not*
    /// returned.
    ///
    /// # Safety
    /// No recording is in progress (a recording that is, every backend logs
    /// and discards); no command buffer of this encoder (returned or not) is
    /// pending on the GPU; buffers not returned are never submitted again;
    /// every returned buffer came from this encoder.
    unsafe fn reset_all<I>(&mut self, command_buffers: I)
    where
        I: IntoIterator<Item = <Self::A as Api>::CommandBuffer>;

    /// Orders buffer accesses. Outside render passes: inside one it is
    /// skipped (and logged).
    ///
    /// # Safety
    /// Recording; each buffer is really in `usage.from`.
    unsafe fn transition_buffers(
        &mut self,
        barriers: &[BufferBarrier<'_, <Self::A as Api>::Buffer>],
    );
    /// Orders texture accesses and changes layouts. Outside render passes:
    /// inside one it is skipped (and logged).
    ///
    /// # Safety
    /// Recording; each subresource range is really in `usage.from`.
    unsafe fn transition_textures(
        &mut self,
        barriers: &[TextureBarrier<'_, <Self::A as Api>::Texture>],
    );

    /// Fills `range` of the buffer with zeros.
    ///
    /// # Safety
    /// Recording; the buffer is in `COPY_DST`; the range lies in the buffer and
    /// its start and length are multiples of 4.
    unsafe fn clear_buffer(&mut self, buffer: &<Self::A as Api>::Buffer, range: Range<u64>);
    /// Fills `range` of the texture with zeros: every texel of its mip
    /// levels, array layers (all depth slices of a 3D texture) and aspects
    /// (`All`: depth and stencil of a depth-stencil format). Needs
    /// `CLEAR_TEXTURE` (every backend has it).
    ///
    /// # Errors
    /// Nothing is recorded on an error (the shared `clear` check, the same
    /// on every backend):
    /// [`TextureError::MissingFeature`] without `CLEAR_TEXTURE`,
    /// [`TextureError::MissingUsage`] without `COPY_DST`,
    /// [`TextureError::NotClearable`] for block-compressed and multi-planar
    /// formats, [`TextureError::InvalidAspect`] for an aspect the format
    /// lacks, [`TextureError::InvalidRange`] for mips or layers outside it.
    ///
    /// # Safety
    /// Recording, outside a render pass; the subresources are in `COPY_DST`.
    unsafe fn clear_texture(
        &mut self,
        texture: &<Self::A as Api>::Texture,
        range: &wgt::ImageSubresourceRange,
    ) -> Result<(), TextureError>;
    /// Copies bytes between buffers.
    ///
    /// # Safety
    /// Recording; `src` is in `COPY_SRC`, `dst` in `COPY_DST`; every region
    /// lies inside both buffers; source and destination regions do not overlap
    /// when `src` and `dst` are the same buffer.
    unsafe fn copy_buffer_to_buffer(
        &mut self,
        src: &<Self::A as Api>::Buffer,
        dst: &<Self::A as Api>::Buffer,
        regions: &[BufferCopy],
    );
    /// Copies texels from a buffer into a texture.
    ///
    /// # Safety
    /// Recording; `src` in `COPY_SRC`, `dst` in `COPY_DST`; regions inside
    /// both; offsets aligned to the format's block size; `bytes_per_row` a
    /// multiple of 256 for portability (the noop backend accepts any multiple
    /// of the block size).
    unsafe fn copy_buffer_to_texture(
        &mut self,
        src: &<Self::A as Api>::Buffer,
        dst: &<Self::A as Api>::Texture,
        regions: &[BufferTextureCopy],
    );
    /// Copies texels from a texture into a buffer.
    ///
    /// # Safety
    /// As for `copy_buffer_to_texture`; `src_usage` is the state `src` is in
    /// (`COPY_SRC`).
    unsafe fn copy_texture_to_buffer(
        &mut self,
        src: &<Self::A as Api>::Texture,
        src_usage: TextureUses,
        dst: &<Self::A as Api>::Buffer,
        regions: &[BufferTextureCopy],
    );
    /// Copies texels between textures of copy-compatible formats.
    ///
    /// # Safety
    /// Recording; `src` in `src_usage` (`COPY_SRC`), `dst` in `COPY_DST`;
    /// regions inside both.
    unsafe fn copy_texture_to_texture(
        &mut self,
        src: &<Self::A as Api>::Texture,
        src_usage: TextureUses,
        dst: &<Self::A as Api>::Texture,
        regions: &[TextureCopy],
    );

    /// Opens a labelled debug region.
    ///
    /// # Safety
    /// Recording.
    unsafe fn begin_debug_marker(&mut self, label: &str);
    /// Closes the innermost debug region.
    ///
    /// # Safety
    /// Recording, with a region open.
    unsafe fn end_debug_marker(&mut self);
    /// Inserts a single debug label.
    ///
    /// # Safety
    /// Recording.
    unsafe fn insert_debug_marker(&mut self, label: &str);

    /// Resets queries so they can be written again.
    ///
    /// # Safety
    /// Recording; the range lies in the set.
    unsafe fn reset_queries(&mut self, set: &<Self::A as Api>::QuerySet, range: Range<u32>);
    /// Begins an occlusion or pipeline-statistics query. A statistics query
    /// counts the work recorded until [`Self::end_query`]; it may span
    /// passes, and inside a pass it must end in that pass.
    ///
    /// # Safety
    /// Recording; the set is an occlusion or pipeline-statistics set; the
    /// query was reset and is not active, and no other query of the same
    /// type is active.
    unsafe fn begin_query(&mut self, set: &<Self::A as Api>::QuerySet, index: u32);
    /// Ends an occlusion or pipeline-statistics query.
    ///
    /// # Safety
    /// Recording; the query is active.
    unsafe fn end_query(&mut self, set: &<Self::A as Api>::QuerySet, index: u32);
    /// Writes a timestamp when all prior commands are done.
    ///
    /// # Safety
    /// Recording; the set is a timestamp set; the query was reset.
    unsafe fn write_timestamp(&mut self, set: &<Self::A as Api>::QuerySet, index: u32);
    /// Copies query results as `u64`s, `stride` bytes apart, waiting for
    /// them. A pipeline-statistics result is one `u64` per counted
    /// statistic, in the order of `wgt::PipelineStatisticsTypes`' bits.
    ///
    /// # Safety
    /// Recording; every query in the range was written; the buffer is in
    /// `QUERY_RESOLVE`/`COPY_DST` and has room; `offset` and `stride` are
    /// multiples of 8, and `stride` is at least one result's size when the
    /// range holds more than one query (results must not overlap; backends
    /// log and skip the copy otherwise).
    unsafe fn copy_query_results(
        &mut self,
        set: &<Self::A as Api>::QuerySet,
        range: Range<u32>,
        buffer: &<Self::A as Api>::Buffer,
        offset: u64,
        stride: u64,
    );

    /// Moves buffers and textures between this queue and the outside world
    /// (`VK_QUEUE_FAMILY_EXTERNAL`). For [`OwnershipTransfer::Release`],
    /// `usage.from` is the state this queue used it in and, for textures,
    /// `usage.to` the state (layout) the other side expects; for
    /// [`OwnershipTransfer::Acquire`], textures' `usage.from` is the state
    /// the other side left it in ([`TextureUses::UNINITIALIZED`] discards
    /// the contents) and `usage.to` the state used next here. Buffers have
    /// no layout: a release uses their `usage.from`, an acquire their
    /// `usage.to`. The other side's matching release or acquire must name
    /// the same states.
    ///
    /// # Safety
    /// Recording; the resources have external memory; the states are the
    /// real ones; the other side is synchronised with by semaphores.
    unsafe fn transfer_ownership(
        &mut self,
        direction: OwnershipTransfer,
        buffers: &[BufferBarrier<'_, <Self::A as Api>::Buffer>],
        textures: &[TextureBarrier<'_, <Self::A as Api>::Texture>],
    );

    // Passes. Between `begin_*_pass` and `end_*_pass` only the state and
    // draw/dispatch calls below may be recorded (plus debug markers and, in
    // render passes, occlusion queries).

    /// Begins a render pass (dynamic rendering).
    ///
    /// # Safety
    /// Recording, outside any pass; every attachment view came from this
    /// device, is in the `usage` its attachment names, and covers `extent`.
    unsafe fn begin_render_pass(&mut self, desc: &RenderPassDescriptor<Self::A>);
    /// Ends the render pass.
    ///
    /// # Safety
    /// Inside a render pass.
    unsafe fn end_render_pass(&mut self);
    /// Begins a compute pass.
    ///
    /// # Safety
    /// Recording, outside any pass.
    unsafe fn begin_compute_pass(&mut self, desc: &ComputePassDescriptor);
    /// Ends the compute pass.
    ///
    /// # Safety
    /// Inside a compute pass.
    unsafe fn end_compute_pass(&mut self);

    /// Binds a bind group at `index`, with one dynamic offset per dynamic
    /// binding in binding order.
    ///
    /// # Safety
    /// Inside a pass; the group's layout is the layout's `index`-th;
    /// offsets are aligned and keep every range inside its buffer.
    unsafe fn set_bind_group(
        &mut self,
        layout: &<Self::A as Api>::PipelineLayout,
        index: u32,
        group: &<Self::A as Api>::BindGroup,
        dynamic_offsets: &[wgt::DynamicOffset],
    );
    /// Sets push-constant bytes (`data.len() * 4` bytes at `offset`).
    ///
    /// # Safety
    /// Inside a pass; the range lies in one of the layout's ranges for `stages`.
    unsafe fn set_push_constants(
        &mut self,
        layout: &<Self::A as Api>::PipelineLayout,
        stages: wgt::ShaderStages,
        offset: u32,
        data: &[u32],
    );

    /// Binds a render pipeline.
    ///
    /// # Safety
    /// Inside a render pass whose attachment formats and sample count match it.
    unsafe fn set_render_pipeline(&mut self, pipeline: &<Self::A as Api>::RenderPipeline);
    /// Binds the index buffer.
    ///
    /// # Safety
    /// Inside a render pass; the buffer has INDEX usage and is in `INDEX`.
    unsafe fn set_index_buffer(
        &mut self,
        binding: BufferBinding<'_, <Self::A as Api>::Buffer>,
        format: wgt::IndexFormat,
    );
    /// Binds a vertex buffer to slot `index`.
    ///
    /// # Safety
    /// Inside a render pass; the buffer has VERTEX usage and is in `VERTEX`.
    unsafe fn set_vertex_buffer(
        &mut self,
        index: u32,
        binding: BufferBinding<'_, <Self::A as Api>::Buffer>,
    );
    /// Sets the viewport.
    ///
    /// # Safety
    /// Inside a render pass.
    unsafe fn set_viewport(&mut self, rect: &Rect<f32>, depth_range: Range<f32>);
    /// Sets the scissor rectangle.
    ///
    /// # Safety
    /// Inside a render pass; the rectangle lies in the render area.
    unsafe fn set_scissor_rect(&mut self, rect: &Rect<u32>);
    /// Sets the stencil reference value.
    ///
    /// # Safety
    /// Inside a render pass.
    unsafe fn set_stencil_reference(&mut self, value: u32);
    /// Sets the blend constant.
    ///
    /// # Safety
    /// Inside a render pass.
    unsafe fn set_blend_constants(&mut self, color: &[f32; 4]);
    /// Draws vertices.
    ///
    /// # Safety
    /// Inside a render pass with a pipeline, its bind groups and vertex
    /// buffers bound, and the vertices in range.
    unsafe fn draw(
        &mut self,
        first_vertex: u32,
        vertex_count: u32,
        first_instance: u32,
        instance_count: u32,
    );
    /// Draws indexed vertices.
    ///
    /// # Safety
    /// As `draw`, plus an index buffer bound and the indices in range.
    unsafe fn draw_indexed(
        &mut self,
        first_index: u32,
        index_count: u32,
        base_vertex: i32,
        first_instance: u32,
        instance_count: u32,
    );
    /// Draws with `draw_count` argument sets of 16 bytes read from `buffer`.
    ///
    /// # Safety
    /// As `draw`; the buffer has INDIRECT usage, is in `INDIRECT`, and holds
    /// the arguments at `offset` (a multiple of 4).
    unsafe fn draw_indirect(
        &mut self,
        buffer: &<Self::A as Api>::Buffer,
        offset: u64,
        draw_count: u32,
    );
    /// Draws indexed with `draw_count` argument sets of 20 bytes read from `buffer`.
    ///
    /// # Safety
    /// As `draw_indexed` and `draw_indirect`.
    unsafe fn draw_indexed_indirect(
        &mut self,
        buffer: &<Self::A as Api>::Buffer,
        offset: u64,
        draw_count: u32,
    );
    /// Draws with the number of argument sets read from `count_buffer` at
    /// `count_offset` (a `u32`, clamped to `max_count`), each 16 bytes read
    /// from `buffer` at `offset`. Skipped (and logged) unless the device
    /// was opened with `MULTI_DRAW_INDIRECT_COUNT`, both offsets are
    /// multiples of 4 and `max_count` sets and the count lie in their
    /// buffers.
    ///
    /// # Safety
    /// As `draw_indirect`; `count_buffer` has INDIRECT usage and is in
    /// `INDIRECT`.
    unsafe fn draw_indirect_count(
        &mut self,
        buffer: &<Self::A as Api>::Buffer,
        offset: u64,
        count_buffer: &<Self::A as Api>::Buffer,
        count_offset: u64,
        max_count: u32,
    );
    /// As [`Self::draw_indirect_count`], indexed (20-byte argument sets).
    ///
    /// # Safety
    /// As `draw_indexed_indirect` and `draw_indirect_count`.
    unsafe fn draw_indexed_indirect_count(
        &mut self,
        buffer: &<Self::A as Api>::Buffer,
        offset: u64,
        count_buffer: &<Self::A as Api>::Buffer,
        count_offset: u64,
        max_count: u32,
    );

    /// Runs the bound mesh pipeline's task stage (or, without one, its
    /// mesh stage) over `x` × `y` × `z` workgroups. Skipped (and logged)
    /// unless the device was opened with `EXPERIMENTAL_MESH_SHADER`, the
    /// bound pipeline is a mesh pipeline and the counts are within the
    /// task (or mesh) workgroup limits.
    ///
    /// # Safety
    /// Inside a render pass with a mesh pipeline and its bind groups bound.
    unsafe fn draw_mesh_tasks(&mut self, x: u32, y: u32, z: u32);
    /// As [`Self::draw_mesh_tasks`], `draw_count` times, with 12-byte
    /// argument sets (three `u32` workgroup counts) read from `buffer` at
    /// `offset`. Skipped (and logged) unless the feature is enabled, a mesh
    /// pipeline is bound, `offset` is a multiple of 4 and the argument sets
    /// lie in the buffer.
    ///
    /// # Safety
    /// As `draw_mesh_tasks`; the buffer has INDIRECT usage, is in
    /// `INDIRECT`, and its counts are within the workgroup limits.
    unsafe fn draw_mesh_tasks_indirect(
        &mut self,
        buffer: &<Self::A as Api>::Buffer,
        offset: u64,
        draw_count: u32,
    );
    /// As [`Self::draw_mesh_tasks_indirect`], with the number of argument
    /// sets read from `count_buffer` at `count_offset` (a `u32`, clamped to
    /// `max_count`). Skipped (and logged) unless the device was opened with
    /// `EXPERIMENTAL_MESH_SHADER` and `MULTI_DRAW_INDIRECT_COUNT`, a mesh
    /// pipeline is bound, both offsets are multiples of 4 and `max_count`
    /// sets and the count lie in their buffers.
    ///
    /// # Safety
    /// As `draw_mesh_tasks_indirect`; `count_buffer` has INDIRECT usage and
    /// is in `INDIRECT`.
    unsafe fn draw_mesh_tasks_indirect_count(
        &mut self,
        buffer: &<Self::A as Api>::Buffer,
        offset: u64,
        count_buffer: &<Self::A as Api>::Buffer,
        count_offset: u64,
        max_count: u32,
    );

    /// Binds a compute pipeline.
    ///
    /// # Safety
    /// Inside a compute pass.
    unsafe fn set_compute_pipeline(&mut self, pipeline: &<Self::A as Api>::ComputePipeline);
    /// Dispatches workgroups.
    ///
    /// # Safety
    /// Inside a compute pass with a pipeline and its bind groups bound;
    /// counts within `max_compute_workgroups_per_dimension`.
    unsafe fn dispatch(&mut self, count: [u32; 3]);
    /// Dispatches with the workgroup counts (3 × u32) read from `buffer`.
    ///
    /// # Safety
    /// As `dispatch`; the buffer has INDIRECT usage, is in `INDIRECT`, and
    /// holds the counts at `offset` (a multiple of 4).
    unsafe fn dispatch_indirect(&mut self, buffer: &<Self::A as Api>::Buffer, offset: u64);

    // Acceleration structures and ray tracing. These record outside passes
    // (except `trace_rays`, inside a ray-tracing pass). The cheap checks
    // (sizes, kinds, flags) return typed errors and record nothing.

    /// Builds or updates acceleration structures.
    ///
    /// # Safety
    /// Recording, outside any pass; every input buffer is in
    /// `BufferUses::ACCELERATION_STRUCTURE_INPUT` (the hal orders nothing
    /// itself); each destination is not in use by pending GPU work; BLASes
    /// referenced by instance records are built and in `BUILD_INPUT`; scratch
    /// ranges of the descriptors do not overlap, and no structure is written
    /// by one descriptor and read by another of the same call.
    unsafe fn build_acceleration_structures(
        &mut self,
        descriptors: &[BuildAccelerationStructureDescriptor<Self::A>],
    ) -> Result<(), AccelerationStructureError>;
    /// Orders uses of acceleration structures.
    ///
    /// # Safety
    /// Recording, outside any pass; the structures are in `usage.from`.
    unsafe fn place_acceleration_structure_barrier(
        &mut self,
        barrier: AccelerationStructureBarrier<'_, <Self::A as Api>::AccelerationStructure>,
    );
    /// Copies a structure: a clone, or a compacted copy.
    ///
    /// # Safety
    /// Recording, outside any pass; `src` is built and in `COPY_SRC`; `dst`
    /// is large enough (its creation size is at least `src`'s, or the
    /// compacted size read for `src`).
    unsafe fn copy_acceleration_structure(
        &mut self,
        src: &<Self::A as Api>::AccelerationStructure,
        dst: &<Self::A as Api>::AccelerationStructure,
        mode: AccelerationStructureCopy,
    ) -> Result<(), AccelerationStructureError>;
    /// Writes the compacted sizes of `structures` as `u64`s, 8 bytes apart,
    /// into `buffer` at `offset`, with one query-pool reset, one build→read
    /// barrier (recorded by this call), one properties write and one results
    /// copy for the whole batch. The query slots come from the device's
    /// shared pools and return there when this encoder's command buffers are
    /// reset.
    ///
    /// # Safety
    /// Recording, outside any pass; every structure was built (with
    /// `ALLOW_COMPACTION`) earlier in submission order; the buffer range is in
    /// `COPY_DST` and the caller orders later reads of it.
    unsafe fn read_acceleration_structure_compacted_sizes(
        &mut self,
        structures: &[&<Self::A as Api>::AccelerationStructure],
        buffer: &<Self::A as Api>::Buffer,
        offset: u64,
    ) -> Result<(), AccelerationStructureError>;
    /// Begins a ray-tracing pass (bind groups bind to the ray-tracing point).
    ///
    /// # Safety
    /// Recording, outside any pass.
    unsafe fn begin_ray_tracing_pass(&mut self, desc: &ComputePassDescriptor);
    /// Ends the ray-tracing pass.
    ///
    /// # Safety
    /// Inside a ray-tracing pass.
    unsafe fn end_ray_tracing_pass(&mut self);
    /// Binds a ray-tracing pipeline.
    ///
    /// # Safety
    /// Inside a ray-tracing pass.
    unsafe fn set_ray_tracing_pipeline(&mut self, pipeline: &<Self::A as Api>::RayTracingPipeline);
    /// Traces `size` rays (width, height, depth) with the table's records.
    ///
    /// # Safety
    /// Inside a ray-tracing pass with the pipeline the table was built for
    /// and its bind groups bound; the table's buffer was written by a
    /// completed or earlier submission.
    unsafe fn trace_rays(
        &mut self,
        table: &ShaderBindingTable<<Self::A as Api>::Buffer>,
        size: [u32; 3],
    );
}
