//! The dyn command encoder of every backend: [`DynEncoder`], the backend's
//! encoder plus the foreign-resource flag (see `encoder.rs` for the rules).

use std::ops::Range;

use super::convert::{self, Downcast};
use super::encoder::DynCommandEncoder;
use super::shader_table;
use super::surface::cast_texture;
use super::{
    cast, cast_box, map_inline, DynAccelerationStructure, DynBindGroup, DynBuffer,
    DynCommandBuffer, DynComputePipeline, DynPipelineLayout, DynQuerySet, DynRayTracingPipeline,
    DynRenderPipeline, DynResources, DynTexture,
};
use crate::{
    AccelerationStructureBarrier, AccelerationStructureCopy, AccelerationStructureError, Api,
    BufferBarrier, BufferBinding, BufferCopy, BufferTextureCopy,
    BuildAccelerationStructureDescriptor, CommandEncoder, ComputePassDescriptor, DeviceError, Rect,
    RenderPassDescriptor, ShaderBindingTable, TextureBarrier, TextureCopy, TextureUses,
};

const FOREIGN: AccelerationStructureError =
    AccelerationStructureError::Device(DeviceError::ForeignResource);

/// A backend encoder plus the foreign-resource flag of the recording in progress.
#[derive(Debug)]
pub(crate) struct DynEncoder<A: Api> {
    pub(crate) inner: A::CommandEncoder,
    foreign: bool,
}

impl<A: Api> DynEncoder<A> {
    pub(crate) fn new(inner: A::CommandEncoder) -> Self {
        Self {
            inner,
            foreign: false,
        }
    }

    /// Downcasts `r`, or marks the recording as poisoned.
    fn get<'r, T: 'static>(&mut self, r: &'r dyn std::any::Any) -> Option<&'r T> {
        let got = cast::<T>(r);
        if got.is_none() {
            self.foreign = true;
        }
        got
    }

    /// Downcasts a texture (or a surface texture's texture), or marks the
    /// recording as poisoned.
    fn get_texture<'r>(&mut self, r: &'r dyn std::any::Any) -> Option<&'r A::Texture> {
        let got = cast_texture::<A>(r);
        if got.is_none() {
            self.foreign = true;
        }
        got
    }

    /// The backend encoder, unless the recording is poisoned (then pass
    /// commands are skipped).
    fn live(&mut self) -> Option<&mut A::CommandEncoder> {
        (!self.foreign).then_some(&mut self.inner)
    }
}

impl<A: Api> DynCommandEncoder for DynEncoder<A> {
    unsafe fn begin_encoding(&mut self, label: Option<&str>) -> Result<(), DeviceError> {
        self.foreign = false;
        // SAFETY: forwarded contract.
        unsafe { self.inner.begin_encoding(label) }
    }
    unsafe fn discard_encoding(&mut self) {
        self.foreign = false;
        // SAFETY: forwarded contract.
        unsafe { self.inner.discard_encoding() }
    }
    unsafe fn end_encoding(&mut self) -> Result<Box<dyn DynCommandBuffer>, DeviceError> {
        if std::mem::take(&mut self.foreign) {
            // SAFETY: a recording is in progress (forwarded contract).
            unsafe { self.inner.discard_encoding() };
            return Err(DeviceError::ForeignResource);
        }
        // SAFETY: forwarded contract.
        Ok(Box::new(unsafe { self.inner.end_encoding() }?))
    }
    unsafe fn reset_all(
        &mut self,
        command_buffers: &mut dyn Iterator<Item = Box<dyn DynCommandBuffer>>,
    ) {
        let own = command_buffers.filter_map(|cb| {
            let cb = cast_box::<A::CommandBuffer>(cb);
            if cb.is_none() {
                log::error!("reset_all: a command buffer belongs to another backend; leaked");
            }
            cb
        });
        // SAFETY: forwarded contract.
        unsafe { self.inner.reset_all(own) }
    }
    unsafe fn transition_buffers(&mut self, barriers: &[BufferBarrier<'_, dyn DynBuffer>]) {
        let inner = &mut self.inner;
        let done = map_inline(
            barriers,
            |b| {
                Some(BufferBarrier {
                    buffer: cast::<A::Buffer>(b.buffer)?,
                    usage: b.usage,
                })
            },
            // SAFETY: forwarded contract.
            |own| unsafe { inner.transition_buffers(own) },
        );
        self.foreign |= done.is_none();
    }
    unsafe fn transition_textures(&mut self, barriers: &[TextureBarrier<'_, dyn DynTexture>]) {
        let inner = &mut self.inner;
        let done = map_inline(
            barriers,
            |b| {
                Some(TextureBarrier {
                    texture: cast_texture::<A>(b.texture)?,
                    range: b.range,
                    usage: b.usage,
                })
            },
            // SAFETY: forwarded contract.
            |own| unsafe { inner.transition_textures(own) },
        );
        self.foreign |= done.is_none();
    }
    unsafe fn clear_buffer(&mut self, buffer: &dyn DynBuffer, range: Range<u64>) {
        if let Some(buffer) = self.get::<A::Buffer>(buffer) {
            // SAFETY: forwarded contract.
            unsafe { self.inner.clear_buffer(buffer, range) }
        }
    }
    unsafe fn clear_texture(
        &mut self,
        texture: &dyn DynTexture,
        range: &wgt::ImageSubresourceRange,
    ) -> Result<(), crate::TextureError> {
        let texture = self
            .get_texture(texture)
            .ok_or(crate::TextureError::Device(
                crate::DeviceError::ForeignResource,
            ))?;
        // SAFETY: forwarded contract.
        unsafe { self.inner.clear_texture(texture, range) }
    }
    unsafe fn copy_buffer_to_buffer(
        &mut self,
        src: &dyn DynBuffer,
        dst: &dyn DynBuffer,
        regions: &[BufferCopy],
    ) {
        if let (Some(src), Some(dst)) = (self.get::<A::Buffer>(src), self.get::<A::Buffer>(dst)) {
            // SAFETY: forwarded contract.
            unsafe { self.inner.copy_buffer_to_buffer(src, dst, regions) }
        }
    }
    unsafe fn copy_buffer_to_texture(
        &mut self,
        src: &dyn DynBuffer,
        dst: &dyn DynTexture,
        regions: &[BufferTextureCopy],
    ) {
        if let (Some(src), Some(dst)) = (self.get::<A::Buffer>(src), self.get_texture(dst)) {
            // SAFETY: forwarded contract.
            unsafe { self.inner.copy_buffer_to_texture(src, dst, regions) }
        }
    }
    unsafe fn copy_texture_to_buffer(
        &mut self,
        src: &dyn DynTexture,
        src_usage: TextureUses,
        dst: &dyn DynBuffer,
        regions: &[BufferTextureCopy],
    ) {
        if let (Some(src), Some(dst)) = (self.get_texture(src), self.get::<A::Buffer>(dst)) {
            // SAFETY: forwarded contract.
            unsafe {
                self.inner
                    .copy_texture_to_buffer(src, src_usage, dst, regions)
            }
        }
    }
    unsafe fn copy_texture_to_texture(
        &mut self,
        src: &dyn DynTexture,
        src_usage: TextureUses,
        dst: &dyn DynTexture,
        regions: &[TextureCopy],
    ) {
        if let (Some(src), Some(dst)) = (self.get_texture(src), self.get_texture(dst)) {
            // SAFETY: forwarded contract.
            unsafe {
                self.inner
                    .copy_texture_to_texture(src, src_usage, dst, regions)
            }
        }
    }
    unsafe fn begin_debug_marker(&mut self, label: &str) {
        // SAFETY: forwarded contract.
        unsafe { self.inner.begin_debug_marker(label) }
    }
    unsafe fn end_debug_marker(&mut self) {
        // SAFETY: forwarded contract.
        unsafe { self.inner.end_debug_marker() }
    }
    unsafe fn insert_debug_marker(&mut self, label: &str) {
        // SAFETY: forwarded contract.
        unsafe { self.inner.insert_debug_marker(label) }
    }
    unsafe fn reset_queries(&mut self, set: &dyn DynQuerySet, range: Range<u32>) {
        if let Some(set) = self.get::<A::QuerySet>(set) {
            // SAFETY: forwarded contract.
            unsafe { self.inner.reset_queries(set, range) }
        }
    }
    unsafe fn begin_query(&mut self, set: &dyn DynQuerySet, index: u32) {
        if let Some(set) = self.get::<A::QuerySet>(set) {
            // SAFETY: forwarded contract.
            unsafe { self.inner.begin_query(set, index) }
        }
    }
    unsafe fn end_query(&mut self, set: &dyn DynQuerySet, index: u32) {
        if let Some(set) = self.get::<A::QuerySet>(set) {
            // SAFETY: forwarded contract.
            unsafe { self.inner.end_query(set, index) }
        }
    }
    unsafe fn write_timestamp(&mut self, set: &dyn DynQuerySet, index: u32) {
        if let Some(set) = self.get::<A::QuerySet>(set) {
            // SAFETY: forwarded contract.
            unsafe { self.inner.write_timestamp(set, index) }
        }
    }
    unsafe fn copy_query_results(
        &mut self,
        set: &dyn DynQuerySet,
        range: Range<u32>,
        buffer: &dyn DynBuffer,
        offset: u64,
        stride: u64,
    ) {
        if let (Some(set), Some(buffer)) =
            (self.get::<A::QuerySet>(set), self.get::<A::Buffer>(buffer))
        {
            // SAFETY: forwarded contract.
            unsafe {
                self.inner
                    .copy_query_results(set, range, buffer, offset, stride)
            }
        }
    }
    unsafe fn transfer_ownership(
        &mut self,
        direction: crate::OwnershipTransfer,
        buffers: &[BufferBarrier<'_, dyn DynBuffer>],
        textures: &[TextureBarrier<'_, dyn DynTexture>],
    ) {
        let inner = &mut self.inner;
        let done = map_inline(
            buffers,
            |b| {
                Some(BufferBarrier {
                    buffer: cast::<A::Buffer>(b.buffer)?,
                    usage: b.usage,
                })
            },
            |buffers| {
                map_inline(
                    textures,
                    |b| {
                        Some(TextureBarrier {
                            texture: cast_texture::<A>(b.texture)?,
                            range: b.range,
                            usage: b.usage,
                        })
                    },
                    // SAFETY: forwarded contract.
                    |textures| unsafe { inner.transfer_ownership(direction, buffers, textures) },
                )
            },
        );
        self.foreign |= done.flatten().is_none();
    }
    unsafe fn begin_render_pass(&mut self, desc: &RenderPassDescriptor<DynResources>) {
        let Some(inner) = self.live() else { return };
        let done = convert::render_pass(desc, &Downcast::<A>::NEW, |own| {
            // SAFETY: forwarded contract.
            unsafe { inner.begin_render_pass(own) }
        });
        self.foreign |= done.is_err();
    }
    unsafe fn end_render_pass(&mut self) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.end_render_pass() }
        }
    }
    unsafe fn begin_compute_pass(&mut self, desc: &ComputePassDescriptor) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.begin_compute_pass(desc) }
        }
    }
    unsafe fn end_compute_pass(&mut self) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.end_compute_pass() }
        }
    }
    unsafe fn set_bind_group(
        &mut self,
        layout: &dyn DynPipelineLayout,
        index: u32,
        group: &dyn DynBindGroup,
        dynamic_offsets: &[wgt::DynamicOffset],
    ) {
        let (Some(layout), Some(group)) = (
            self.get::<A::PipelineLayout>(layout),
            self.get::<A::BindGroup>(group),
        ) else {
            return;
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.set_bind_group(layout, index, group, dynamic_offsets) }
        }
    }
    unsafe fn set_push_constants(
        &mut self,
        layout: &dyn DynPipelineLayout,
        stages: wgt::ShaderStages,
        offset: u32,
        data: &[u32],
    ) {
        let Some(layout) = self.get::<A::PipelineLayout>(layout) else {
            return;
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.set_push_constants(layout, stages, offset, data) }
        }
    }
    unsafe fn set_render_pipeline(&mut self, pipeline: &dyn DynRenderPipeline) {
        let Some(pipeline) = self.get::<A::RenderPipeline>(pipeline) else {
            return;
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.set_render_pipeline(pipeline) }
        }
    }
    unsafe fn set_index_buffer(
        &mut self,
        binding: BufferBinding<'_, dyn DynBuffer>,
        format: wgt::IndexFormat,
    ) {
        let Some(buffer) = self.get::<A::Buffer>(binding.buffer) else {
            return;
        };
        let own = BufferBinding {
            buffer,
            offset: binding.offset,
            size: binding.size,
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.set_index_buffer(own, format) }
        }
    }
    unsafe fn set_vertex_buffer(&mut self, index: u32, binding: BufferBinding<'_, dyn DynBuffer>) {
        let Some(buffer) = self.get::<A::Buffer>(binding.buffer) else {
            return;
        };
        let own = BufferBinding {
            buffer,
            offset: binding.offset,
            size: binding.size,
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.set_vertex_buffer(index, own) }
        }
    }
    unsafe fn set_viewport(&mut self, rect: &Rect<f32>, depth_range: Range<f32>) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.set_viewport(rect, depth_range) }
        }
    }
    unsafe fn set_scissor_rect(&mut self, rect: &Rect<u32>) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.set_scissor_rect(rect) }
        }
    }
    unsafe fn set_stencil_reference(&mut self, value: u32) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.set_stencil_reference(value) }
        }
    }
    unsafe fn set_blend_constants(&mut self, color: &[f32; 4]) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.set_blend_constants(color) }
        }
    }
    unsafe fn draw(
        &mut self,
        first_vertex: u32,
        vertex_count: u32,
        first_instance: u32,
        instance_count: u32,
    ) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.draw(first_vertex, vertex_count, first_instance, instance_count) }
        }
    }
    unsafe fn draw_indexed(
        &mut self,
        first_index: u32,
        index_count: u32,
        base_vertex: i32,
        first_instance: u32,
        instance_count: u32,
    ) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe {
                inner.draw_indexed(
                    first_index,
                    index_count,
                    base_vertex,
                    first_instance,
                    instance_count,
                )
            }
        }
    }
    unsafe fn draw_indirect(&mut self, buffer: &dyn DynBuffer, offset: u64, draw_count: u32) {
        let Some(buffer) = self.get::<A::Buffer>(buffer) else {
            return;
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.draw_indirect(buffer, offset, draw_count) }
        }
    }
    unsafe fn draw_indexed_indirect(
        &mut self,
        buffer: &dyn DynBuffer,
        offset: u64,
        draw_count: u32,
    ) {
        let Some(buffer) = self.get::<A::Buffer>(buffer) else {
            return;
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.draw_indexed_indirect(buffer, offset, draw_count) }
        }
    }
    unsafe fn draw_indirect_count(
        &mut self,
        buffer: &dyn DynBuffer,
        offset: u64,
        count_buffer: &dyn DynBuffer,
        count_offset: u64,
        max_count: u32,
    ) {
        let (Some(buffer), Some(count_buffer)) = (
            self.get::<A::Buffer>(buffer),
            self.get::<A::Buffer>(count_buffer),
        ) else {
            return;
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe {
                inner.draw_indirect_count(buffer, offset, count_buffer, count_offset, max_count)
            }
        }
    }
    unsafe fn draw_mesh_tasks(&mut self, x: u32, y: u32, z: u32) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.draw_mesh_tasks(x, y, z) }
        }
    }
    unsafe fn draw_mesh_tasks_indirect(
        &mut self,
        buffer: &dyn DynBuffer,
        offset: u64,
        draw_count: u32,
    ) {
        let Some(buffer) = self.get::<A::Buffer>(buffer) else {
            return;
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.draw_mesh_tasks_indirect(buffer, offset, draw_count) }
        }
    }
    unsafe fn draw_mesh_tasks_indirect_count(
        &mut self,
        buffer: &dyn DynBuffer,
        offset: u64,
        count_buffer: &dyn DynBuffer,
        count_offset: u64,
        max_count: u32,
    ) {
        let (Some(buffer), Some(count_buffer)) = (
            self.get::<A::Buffer>(buffer),
            self.get::<A::Buffer>(count_buffer),
        ) else {
            return;
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe {
                inner.draw_mesh_tasks_indirect_count(
                    buffer,
                    offset,
                    count_buffer,
                    count_offset,
                    max_count,
                )
            }
        }
    }
    unsafe fn draw_indexed_indirect_count(
        &mut self,
        buffer: &dyn DynBuffer,
        offset: u64,
        count_buffer: &dyn DynBuffer,
        count_offset: u64,
        max_count: u32,
    ) {
        let (Some(buffer), Some(count_buffer)) = (
            self.get::<A::Buffer>(buffer),
            self.get::<A::Buffer>(count_buffer),
        ) else {
            return;
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe {
                inner.draw_indexed_indirect_count(
                    buffer,
                    offset,
                    count_buffer,
                    count_offset,
                    max_count,
                )
            }
        }
    }
    unsafe fn set_compute_pipeline(&mut self, pipeline: &dyn DynComputePipeline) {
        let Some(pipeline) = self.get::<A::ComputePipeline>(pipeline) else {
            return;
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.set_compute_pipeline(pipeline) }
        }
    }
    unsafe fn dispatch(&mut self, count: [u32; 3]) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.dispatch(count) }
        }
    }
    unsafe fn dispatch_indirect(&mut self, buffer: &dyn DynBuffer, offset: u64) {
        let Some(buffer) = self.get::<A::Buffer>(buffer) else {
            return;
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.dispatch_indirect(buffer, offset) }
        }
    }
    unsafe fn build_acceleration_structures(
        &mut self,
        descriptors: &[BuildAccelerationStructureDescriptor<DynResources>],
    ) -> Result<(), AccelerationStructureError> {
        let inner = &mut self.inner;
        convert::build_acceleration_structures(descriptors, &Downcast::<A>::NEW, |own| {
            // SAFETY: forwarded contract.
            unsafe { inner.build_acceleration_structures(own) }
        })
        .map_err(|e| AccelerationStructureError::Device(e.into()))?
    }
    unsafe fn place_acceleration_structure_barrier(
        &mut self,
        barrier: AccelerationStructureBarrier<'_, dyn DynAccelerationStructure>,
    ) {
        let inner = &mut self.inner;
        let done = map_inline(
            barrier.structures,
            |&s| cast::<A::AccelerationStructure>(s),
            |structures| {
                let own = AccelerationStructureBarrier {
                    structures,
                    usage: barrier.usage,
                };
                // SAFETY: forwarded contract.
                unsafe { inner.place_acceleration_structure_barrier(own) }
            },
        );
        self.foreign |= done.is_none();
    }
    unsafe fn copy_acceleration_structure(
        &mut self,
        src: &dyn DynAccelerationStructure,
        dst: &dyn DynAccelerationStructure,
        mode: AccelerationStructureCopy,
    ) -> Result<(), AccelerationStructureError> {
        let src = cast::<A::AccelerationStructure>(src).ok_or(FOREIGN)?;
        let dst = cast::<A::AccelerationStructure>(dst).ok_or(FOREIGN)?;
        // SAFETY: forwarded contract.
        unsafe { self.inner.copy_acceleration_structure(src, dst, mode) }
    }
    unsafe fn read_acceleration_structure_compacted_sizes(
        &mut self,
        structures: &[&dyn DynAccelerationStructure],
        buffer: &dyn DynBuffer,
        offset: u64,
    ) -> Result<(), AccelerationStructureError> {
        let buffer = cast::<A::Buffer>(buffer).ok_or(FOREIGN)?;
        let inner = &mut self.inner;
        map_inline(
            structures,
            |&s| cast::<A::AccelerationStructure>(s),
            // SAFETY: forwarded contract.
            |own| unsafe { inner.read_acceleration_structure_compacted_sizes(own, buffer, offset) },
        )
        .ok_or(FOREIGN)?
    }
    unsafe fn begin_ray_tracing_pass(&mut self, desc: &ComputePassDescriptor) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.begin_ray_tracing_pass(desc) }
        }
    }
    unsafe fn end_ray_tracing_pass(&mut self) {
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.end_ray_tracing_pass() }
        }
    }
    unsafe fn set_ray_tracing_pipeline(&mut self, pipeline: &dyn DynRayTracingPipeline) {
        let Some(pipeline) = self.get::<A::RayTracingPipeline>(pipeline) else {
            return;
        };
        if let Some(inner) = self.live() {
            // SAFETY: forwarded contract.
            unsafe { inner.set_ray_tracing_pipeline(pipeline) }
        }
    }
    unsafe fn trace_rays(
        &mut self,
        table: &ShaderBindingTable<Box<dyn DynBuffer>>,
        size: [u32; 3],
    ) {
        let Some(inner) = self.live() else { return };
        // SAFETY: forwarded contract.
        let done =
            shader_table::with_table::<A, _>(table, |own| unsafe { inner.trace_rays(own, size) });
        self.foreign |= done.is_none();
    }
}
