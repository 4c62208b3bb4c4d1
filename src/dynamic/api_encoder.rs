//! [`DynApi`]'s command encoder: each method forwards to the boxed
//! [`DynCommandEncoder`], unboxing the resources it names.

use std::ops::Range;

use super::convert::{self, Unbox};
use super::{
    DynAccelerationStructure, DynBindGroup, DynBuffer, DynCommandBuffer, DynCommandEncoder,
    DynComputePipeline, DynPipelineLayout, DynQuerySet, DynRayTracingPipeline, DynRenderPipeline,
    DynTexture,
};
use crate::*;

impl CommandEncoder for Box<dyn DynCommandEncoder> {
    type A = DynApi;
    unsafe fn begin_encoding(&mut self, label: Option<&str>) -> Result<(), DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::begin_encoding(&mut **self, label) }
    }
    unsafe fn discard_encoding(&mut self) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::discard_encoding(&mut **self) }
    }
    unsafe fn end_encoding(&mut self) -> Result<Box<dyn DynCommandBuffer>, DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::end_encoding(&mut **self) }
    }
    unsafe fn reset_all<I>(&mut self, command_buffers: I)
    where
        I: IntoIterator<Item = Box<dyn DynCommandBuffer>>,
    {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::reset_all(&mut **self, &mut command_buffers.into_iter()) }
    }
    unsafe fn transition_buffers(&mut self, barriers: &[BufferBarrier<'_, Box<dyn DynBuffer>>]) {
        let encoder = &mut **self;
        super::map_inline(
            barriers,
            |b| {
                Some(BufferBarrier::<'_, dyn DynBuffer> {
                    buffer: &**b.buffer,
                    usage: b.usage,
                })
            },
            // SAFETY: forwarded contract.
            |own| unsafe { DynCommandEncoder::transition_buffers(encoder, own) },
        );
    }
    unsafe fn transition_textures(&mut self, barriers: &[TextureBarrier<'_, Box<dyn DynTexture>>]) {
        let encoder = &mut **self;
        super::map_inline(
            barriers,
            |b| {
                Some(TextureBarrier::<'_, dyn DynTexture> {
                    texture: &**b.texture,
                    range: b.range,
                    usage: b.usage,
                })
            },
            // SAFETY: forwarded contract.
            |own| unsafe { DynCommandEncoder::transition_textures(encoder, own) },
        );
    }
    unsafe fn transfer_ownership(
        &mut self,
        direction: crate::OwnershipTransfer,
        buffers: &[BufferBarrier<'_, Box<dyn DynBuffer>>],
        textures: &[TextureBarrier<'_, Box<dyn DynTexture>>],
    ) {
        let encoder = &mut **self;
        super::map_inline(
            buffers,
            |b| {
                Some(BufferBarrier::<'_, dyn DynBuffer> {
                    buffer: &**b.buffer,
                    usage: b.usage,
                })
            },
            |buffers| {
                super::map_inline(
                    textures,
                    |b| {
                        Some(TextureBarrier::<'_, dyn DynTexture> {
                            texture: &**b.texture,
                            range: b.range,
                            usage: b.usage,
                        })
                    },
                    // SAFETY: forwarded contract.
                    |textures| unsafe {
                        DynCommandEncoder::transfer_ownership(encoder, direction, buffers, textures)
                    },
                )
            },
        );
    }
    unsafe fn clear_buffer(&mut self, buffer: &Box<dyn DynBuffer>, range: Range<u64>) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::clear_buffer(&mut **self, &**buffer, range) }
    }
    unsafe fn clear_texture(
        &mut self,
        texture: &Box<dyn DynTexture>,
        range: &wgt::ImageSubresourceRange,
    ) -> Result<(), crate::TextureError> {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::clear_texture(&mut **self, &**texture, range) }
    }
    unsafe fn copy_buffer_to_buffer(
        &mut self,
        src: &Box<dyn DynBuffer>,
        dst: &Box<dyn DynBuffer>,
        regions: &[BufferCopy],
    ) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::copy_buffer_to_buffer(&mut **self, &**src, &**dst, regions) }
    }
    unsafe fn copy_buffer_to_texture(
        &mut self,
        src: &Box<dyn DynBuffer>,
        dst: &Box<dyn DynTexture>,
        regions: &[BufferTextureCopy],
    ) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::copy_buffer_to_texture(&mut **self, &**src, &**dst, regions) }
    }
    unsafe fn copy_texture_to_buffer(
        &mut self,
        src: &Box<dyn DynTexture>,
        src_usage: TextureUses,
        dst: &Box<dyn DynBuffer>,
        regions: &[BufferTextureCopy],
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::copy_texture_to_buffer(
                &mut **self,
                &**src,
                src_usage,
                &**dst,
                regions,
            )
        }
    }
    unsafe fn copy_texture_to_texture(
        &mut self,
        src: &Box<dyn DynTexture>,
        src_usage: TextureUses,
        dst: &Box<dyn DynTexture>,
        regions: &[TextureCopy],
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::copy_texture_to_texture(
                &mut **self,
                &**src,
                src_usage,
                &**dst,
                regions,
            )
        }
    }
    unsafe fn begin_debug_marker(&mut self, label: &str) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::begin_debug_marker(&mut **self, label) }
    }
    unsafe fn end_debug_marker(&mut self) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::end_debug_marker(&mut **self) }
    }
    unsafe fn insert_debug_marker(&mut self, label: &str) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::insert_debug_marker(&mut **self, label) }
    }
    unsafe fn reset_queries(&mut self, set: &Box<dyn DynQuerySet>, range: Range<u32>) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::reset_queries(&mut **self, &**set, range) }
    }
    unsafe fn begin_query(&mut self, set: &Box<dyn DynQuerySet>, index: u32) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::begin_query(&mut **self, &**set, index) }
    }
    unsafe fn end_query(&mut self, set: &Box<dyn DynQuerySet>, index: u32) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::end_query(&mut **self, &**set, index) }
    }
    unsafe fn write_timestamp(&mut self, set: &Box<dyn DynQuerySet>, index: u32) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::write_timestamp(&mut **self, &**set, index) }
    }
    unsafe fn copy_query_results(
        &mut self,
        set: &Box<dyn DynQuerySet>,
        range: Range<u32>,
        buffer: &Box<dyn DynBuffer>,
        offset: u64,
        stride: u64,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::copy_query_results(
                &mut **self,
                &**set,
                range,
                &**buffer,
                offset,
                stride,
            )
        }
    }
    unsafe fn begin_render_pass(&mut self, desc: &RenderPassDescriptor<DynApi>) {
        let encoder = &mut **self;
        let done = convert::render_pass(desc, &Unbox, |d| {
            // SAFETY: forwarded contract.
            unsafe { DynCommandEncoder::begin_render_pass(encoder, d) }
        });
        if done.is_err() {
            log::error!("begin_render_pass: out of host memory converting the descriptor");
        }
    }
    unsafe fn end_render_pass(&mut self) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::end_render_pass(&mut **self) }
    }
    unsafe fn begin_compute_pass(&mut self, desc: &ComputePassDescriptor) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::begin_compute_pass(&mut **self, desc) }
    }
    unsafe fn end_compute_pass(&mut self) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::end_compute_pass(&mut **self) }
    }
    unsafe fn set_bind_group(
        &mut self,
        layout: &Box<dyn DynPipelineLayout>,
        index: u32,
        group: &Box<dyn DynBindGroup>,
        dynamic_offsets: &[wgt::DynamicOffset],
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::set_bind_group(
                &mut **self,
                &**layout,
                index,
                &**group,
                dynamic_offsets,
            )
        }
    }
    unsafe fn set_push_constants(
        &mut self,
        layout: &Box<dyn DynPipelineLayout>,
        stages: wgt::ShaderStages,
        offset: u32,
        data: &[u32],
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::set_push_constants(&mut **self, &**layout, stages, offset, data)
        }
    }
    unsafe fn set_render_pipeline(&mut self, pipeline: &Box<dyn DynRenderPipeline>) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::set_render_pipeline(&mut **self, &**pipeline) }
    }
    unsafe fn set_index_buffer(
        &mut self,
        binding: BufferBinding<'_, Box<dyn DynBuffer>>,
        format: wgt::IndexFormat,
    ) {
        let binding = BufferBinding::<'_, dyn DynBuffer> {
            buffer: &**binding.buffer,
            offset: binding.offset,
            size: binding.size,
        };
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::set_index_buffer(&mut **self, binding, format) }
    }
    unsafe fn set_vertex_buffer(
        &mut self,
        index: u32,
        binding: BufferBinding<'_, Box<dyn DynBuffer>>,
    ) {
        let binding = BufferBinding::<'_, dyn DynBuffer> {
            buffer: &**binding.buffer,
            offset: binding.offset,
            size: binding.size,
        };
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::set_vertex_buffer(&mut **self, index, binding) }
    }
    unsafe fn set_viewport(&mut self, rect: &Rect<f32>, depth_range: Range<f32>) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::set_viewport(&mut **self, rect, depth_range) }
    }
    unsafe fn set_scissor_rect(&mut self, rect: &Rect<u32>) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::set_scissor_rect(&mut **self, rect) }
    }
    unsafe fn set_stencil_reference(&mut self, value: u32) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::set_stencil_reference(&mut **self, value) }
    }
    unsafe fn set_blend_constants(&mut self, color: &[f32; 4]) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::set_blend_constants(&mut **self, color) }
    }
    unsafe fn draw(
        &mut self,
        first_vertex: u32,
        vertex_count: u32,
        first_instance: u32,
        instance_count: u32,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::draw(
                &mut **self,
                first_vertex,
                vertex_count,
                first_instance,
                instance_count,
            )
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
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::draw_indexed(
                &mut **self,
                first_index,
                index_count,
                base_vertex,
                first_instance,
                instance_count,
            )
        }
    }
    unsafe fn draw_indirect(&mut self, buffer: &Box<dyn DynBuffer>, offset: u64, draw_count: u32) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::draw_indirect(&mut **self, &**buffer, offset, draw_count) }
    }
    unsafe fn draw_indexed_indirect(
        &mut self,
        buffer: &Box<dyn DynBuffer>,
        offset: u64,
        draw_count: u32,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::draw_indexed_indirect(&mut **self, &**buffer, offset, draw_count)
        }
    }
    unsafe fn draw_indirect_count(
        &mut self,
        buffer: &Box<dyn DynBuffer>,
        offset: u64,
        count_buffer: &Box<dyn DynBuffer>,
        count_offset: u64,
        max_count: u32,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::draw_indirect_count(
                &mut **self,
                &**buffer,
                offset,
                &**count_buffer,
                count_offset,
                max_count,
            )
        }
    }
    unsafe fn draw_mesh_tasks(&mut self, x: u32, y: u32, z: u32) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::draw_mesh_tasks(&mut **self, x, y, z) }
    }
    unsafe fn draw_mesh_tasks_indirect(
        &mut self,
        buffer: &Box<dyn DynBuffer>,
        offset: u64,
        draw_count: u32,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::draw_mesh_tasks_indirect(&mut **self, &**buffer, offset, draw_count)
        }
    }
    unsafe fn draw_mesh_tasks_indirect_count(
        &mut self,
        buffer: &Box<dyn DynBuffer>,
        offset: u64,
        count_buffer: &Box<dyn DynBuffer>,
        count_offset: u64,
        max_count: u32,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::draw_mesh_tasks_indirect_count(
                &mut **self,
                &**buffer,
                offset,
                &**count_buffer,
                count_offset,
                max_count,
            )
        }
    }
    unsafe fn draw_indexed_indirect_count(
        &mut self,
        buffer: &Box<dyn DynBuffer>,
        offset: u64,
        count_buffer: &Box<dyn DynBuffer>,
        count_offset: u64,
        max_count: u32,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::draw_indexed_indirect_count(
                &mut **self,
                &**buffer,
                offset,
                &**count_buffer,
                count_offset,
                max_count,
            )
        }
    }
    unsafe fn set_compute_pipeline(&mut self, pipeline: &Box<dyn DynComputePipeline>) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::set_compute_pipeline(&mut **self, &**pipeline) }
    }
    unsafe fn dispatch(&mut self, count: [u32; 3]) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::dispatch(&mut **self, count) }
    }
    unsafe fn dispatch_indirect(&mut self, buffer: &Box<dyn DynBuffer>, offset: u64) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::dispatch_indirect(&mut **self, &**buffer, offset) }
    }
    unsafe fn build_acceleration_structures(
        &mut self,
        descriptors: &[BuildAccelerationStructureDescriptor<DynApi>],
    ) -> Result<(), AccelerationStructureError> {
        let encoder = &mut **self;
        convert::build_acceleration_structures(descriptors, &Unbox, |d| {
            // SAFETY: forwarded contract.
            unsafe { DynCommandEncoder::build_acceleration_structures(encoder, d) }
        })
        .map_err(|e| AccelerationStructureError::Device(e.into()))?
    }
    unsafe fn place_acceleration_structure_barrier(
        &mut self,
        barrier: AccelerationStructureBarrier<'_, Box<dyn DynAccelerationStructure>>,
    ) {
        let encoder = &mut **self;
        super::map_inline(
            barrier.structures,
            |s| Some::<&dyn DynAccelerationStructure>(&***s),
            |structures| {
                let own = AccelerationStructureBarrier::<'_, dyn DynAccelerationStructure> {
                    structures,
                    usage: barrier.usage,
                };
                // SAFETY: forwarded contract.
                unsafe { DynCommandEncoder::place_acceleration_structure_barrier(encoder, own) }
            },
        );
    }
    unsafe fn copy_acceleration_structure(
        &mut self,
        src: &Box<dyn DynAccelerationStructure>,
        dst: &Box<dyn DynAccelerationStructure>,
        mode: AccelerationStructureCopy,
    ) -> Result<(), AccelerationStructureError> {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::copy_acceleration_structure(&mut **self, &**src, &**dst, mode) }
    }
    unsafe fn read_acceleration_structure_compacted_sizes(
        &mut self,
        structures: &[&Box<dyn DynAccelerationStructure>],
        buffer: &Box<dyn DynBuffer>,
        offset: u64,
    ) -> Result<(), AccelerationStructureError> {
        let encoder = &mut **self;
        super::map_inline(
            structures,
            |s| Some::<&dyn DynAccelerationStructure>(&***s),
            // SAFETY: forwarded contract.
            |own| unsafe {
                DynCommandEncoder::read_acceleration_structure_compacted_sizes(
                    encoder, own, &**buffer, offset,
                )
            },
        )
        // The mapping above never fails, so this fallback is never taken.
        .unwrap_or(Err(AccelerationStructureError::Device(
            DeviceError::ForeignResource,
        )))
    }
    unsafe fn begin_ray_tracing_pass(&mut self, desc: &ComputePassDescriptor) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::begin_ray_tracing_pass(&mut **self, desc) }
    }
    unsafe fn end_ray_tracing_pass(&mut self) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::end_ray_tracing_pass(&mut **self) }
    }
    unsafe fn set_ray_tracing_pipeline(&mut self, pipeline: &Box<dyn DynRayTracingPipeline>) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::set_ray_tracing_pipeline(&mut **self, &**pipeline) }
    }
    unsafe fn trace_rays(
        &mut self,
        table: &ShaderBindingTable<Box<dyn DynBuffer>>,
        size: [u32; 3],
    ) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::trace_rays(&mut **self, table, size) }
    }
}
