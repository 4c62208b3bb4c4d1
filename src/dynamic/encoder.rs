//! `DynCommandEncoder`: the command encoder trait with boxed resources.
//!
//! The dyn encoder wraps the backend's encoder with one flag: a recording
//! call handed a resource of another backend skips the command and sets
//! it, and the next `end_encoding` returns [`DeviceError::ForeignResource`].
//! Once it is set, pass commands are skipped too (a pass whose begin was
//! skipped must not receive draws), and the recording is discarded at
//! `end_encoding`. Calls that return a `Result` (the acceleration-structure
//! commands) report a foreign resource there instead, as
//! `Device(DeviceError::ForeignResource)`, and record nothing. Textures may
//! be surface textures (see `surface.rs`). The implementation for every
//! backend is in `encoder_impl.rs`.

use std::fmt::Debug;
use std::ops::Range;

use super::{
    DynAccelerationStructure, DynBindGroup, DynBuffer, DynCommandBuffer, DynComputePipeline,
    DynPipelineLayout, DynQuerySet, DynRayTracingPipeline, DynRenderPipeline, DynResources,
    DynTexture,
};
// The trait mirrored, named by every method's docs.
#[cfg(doc)]
use crate::CommandEncoder;
use crate::{
    AccelerationStructureBarrier, AccelerationStructureCopy, AccelerationStructureError,
    BufferBarrier, BufferBinding, BufferCopy, BufferTextureCopy,
    BuildAccelerationStructureDescriptor, ComputePassDescriptor, DeviceError, Rect,
    RenderPassDescriptor, ShaderBindingTable, TextureBarrier, TextureCopy, TextureError,
    TextureUses,
};

/// A command encoder of some backend. Methods mirror [`CommandEncoder`];
/// see there for each contract.
pub trait DynCommandEncoder: Send + Sync + Debug + std::any::Any {
    /// See [`CommandEncoder::begin_encoding`].
    ///
    /// # Safety
    /// As [`CommandEncoder::begin_encoding`].
    unsafe fn begin_encoding(&mut self, label: Option<&str>) -> Result<(), DeviceError>;
    /// See [`CommandEncoder::discard_encoding`].
    ///
    /// # Safety
    /// As [`CommandEncoder::discard_encoding`].
    unsafe fn discard_encoding(&mut self);
    /// See [`CommandEncoder::end_encoding`]; also reports foreign resources
    /// handed to this recording.
    ///
    /// # Safety
    /// As [`CommandEncoder::end_encoding`].
    unsafe fn end_encoding(&mut self) -> Result<Box<dyn DynCommandBuffer>, DeviceError>;
    /// See [`CommandEncoder::reset_all`]; foreign command buffers are logged
    /// and leaked. Takes an iterator so that handing buffers back allocates
    /// nothing: `encoder.reset_all(&mut [commands].into_iter())`.
    ///
    /// # Safety
    /// As [`CommandEncoder::reset_all`].
    unsafe fn reset_all(
        &mut self,
        command_buffers: &mut dyn Iterator<Item = Box<dyn DynCommandBuffer>>,
    );
    /// See [`CommandEncoder::transition_buffers`].
    ///
    /// # Safety
    /// As [`CommandEncoder::transition_buffers`].
    unsafe fn transition_buffers(&mut self, barriers: &[BufferBarrier<'_, dyn DynBuffer>]);
    /// See [`CommandEncoder::transition_textures`].
    ///
    /// # Safety
    /// As [`CommandEncoder::transition_textures`].
    unsafe fn transition_textures(&mut self, barriers: &[TextureBarrier<'_, dyn DynTexture>]);
    /// See [`CommandEncoder::clear_buffer`].
    ///
    /// # Safety
    /// As [`CommandEncoder::clear_buffer`].
    unsafe fn clear_buffer(&mut self, buffer: &dyn DynBuffer, range: Range<u64>);
    /// See [`CommandEncoder::clear_texture`].
    ///
    /// # Errors
    /// As [`CommandEncoder::clear_texture`]; `Device(ForeignResource)` for
    /// a texture of another backend.
    ///
    /// # Safety
    /// As [`CommandEncoder::clear_texture`].
    unsafe fn clear_texture(
        &mut self,
        texture: &dyn DynTexture,
        range: &wgt::ImageSubresourceRange,
    ) -> Result<(), TextureError>;
    /// See [`CommandEncoder::copy_buffer_to_buffer`].
    ///
    /// # Safety
    /// As [`CommandEncoder::copy_buffer_to_buffer`].
    unsafe fn copy_buffer_to_buffer(
        &mut self,
        src: &dyn DynBuffer,
        dst: &dyn DynBuffer,
        regions: &[BufferCopy],
    );
    /// See [`CommandEncoder::copy_buffer_to_texture`].
    ///
    /// # Safety
    /// As [`CommandEncoder::copy_buffer_to_texture`].
    unsafe fn copy_buffer_to_texture(
        &mut self,
        src: &dyn DynBuffer,
        dst: &dyn DynTexture,
        regions: &[BufferTextureCopy],
    );
    /// See [`CommandEncoder::copy_texture_to_buffer`].
    ///
    /// # Safety
    /// As [`CommandEncoder::copy_texture_to_buffer`].
    unsafe fn copy_texture_to_buffer(
        &mut self,
        src: &dyn DynTexture,
        src_usage: TextureUses,
        dst: &dyn DynBuffer,
        regions: &[BufferTextureCopy],
    );
    /// See [`CommandEncoder::copy_texture_to_texture`].
    ///
    /// # Safety
    /// As [`CommandEncoder::copy_texture_to_texture`].
    unsafe fn copy_texture_to_texture(
        &mut self,
        src: &dyn DynTexture,
        src_usage: TextureUses,
        dst: &dyn DynTexture,
        regions: &[TextureCopy],
    );
    /// See [`CommandEncoder::begin_debug_marker`].
    ///
    /// # Safety
    /// As [`CommandEncoder::begin_debug_marker`].
    unsafe fn begin_debug_marker(&mut self, label: &str);
    /// See [`CommandEncoder::end_debug_marker`].
    ///
    /// # Safety
    /// As [`CommandEncoder::end_debug_marker`].
    unsafe fn end_debug_marker(&mut self);
    /// See [`CommandEncoder::insert_debug_marker`].
    ///
    /// # Safety
    /// As [`CommandEncoder::insert_debug_marker`].
    unsafe fn insert_debug_marker(&mut self, label: &str);
    /// See [`CommandEncoder::reset_queries`].
    ///
    /// # Safety
    /// As [`CommandEncoder::reset_queries`].
    unsafe fn reset_queries(&mut self, set: &dyn DynQuerySet, range: Range<u32>);
    /// See [`CommandEncoder::begin_query`].
    ///
    /// # Safety
    /// As [`CommandEncoder::begin_query`].
    unsafe fn begin_query(&mut self, set: &dyn DynQuerySet, index: u32);
    /// See [`CommandEncoder::end_query`].
    ///
    /// # Safety
    /// As [`CommandEncoder::end_query`].
    unsafe fn end_query(&mut self, set: &dyn DynQuerySet, index: u32);
    /// See [`CommandEncoder::write_timestamp`].
    ///
    /// # Safety
    /// As [`CommandEncoder::write_timestamp`].
    unsafe fn write_timestamp(&mut self, set: &dyn DynQuerySet, index: u32);
    /// See [`CommandEncoder::copy_query_results`].
    ///
    /// # Safety
    /// As [`CommandEncoder::copy_query_results`].
    unsafe fn copy_query_results(
        &mut self,
        set: &dyn DynQuerySet,
        range: Range<u32>,
        buffer: &dyn DynBuffer,
        offset: u64,
        stride: u64,
    );
    /// See [`CommandEncoder::transfer_ownership`].
    ///
    /// # Safety
    /// As [`CommandEncoder::transfer_ownership`].
    unsafe fn transfer_ownership(
        &mut self,
        direction: crate::OwnershipTransfer,
        buffers: &[BufferBarrier<'_, dyn DynBuffer>],
        textures: &[TextureBarrier<'_, dyn DynTexture>],
    );
    /// See [`CommandEncoder::begin_render_pass`].
    ///
    /// # Safety
    /// As [`CommandEncoder::begin_render_pass`].
    unsafe fn begin_render_pass(&mut self, desc: &RenderPassDescriptor<DynResources>);
    /// See [`CommandEncoder::end_render_pass`].
    ///
    /// # Safety
    /// As [`CommandEncoder::end_render_pass`].
    unsafe fn end_render_pass(&mut self);
    /// See [`CommandEncoder::begin_compute_pass`].
    ///
    /// # Safety
    /// As [`CommandEncoder::begin_compute_pass`].
    unsafe fn begin_compute_pass(&mut self, desc: &ComputePassDescriptor);
    /// See [`CommandEncoder::end_compute_pass`].
    ///
    /// # Safety
    /// As [`CommandEncoder::end_compute_pass`].
    unsafe fn end_compute_pass(&mut self);
    /// See [`CommandEncoder::set_bind_group`].
    ///
    /// # Safety
    /// As [`CommandEncoder::set_bind_group`].
    unsafe fn set_bind_group(
        &mut self,
        layout: &dyn DynPipelineLayout,
        index: u32,
        group: &dyn DynBindGroup,
        dynamic_offsets: &[wgt::DynamicOffset],
    );
    /// See [`CommandEncoder::set_push_constants`].
    ///
    /// # Safety
    /// As [`CommandEncoder::set_push_constants`].
    unsafe fn set_push_constants(
        &mut self,
        layout: &dyn DynPipelineLayout,
        stages: wgt::ShaderStages,
        offset: u32,
        data: &[u32],
    );
    /// See [`CommandEncoder::set_render_pipeline`].
    ///
    /// # Safety
    /// As [`CommandEncoder::set_render_pipeline`].
    unsafe fn set_render_pipeline(&mut self, pipeline: &dyn DynRenderPipeline);
    /// See [`CommandEncoder::set_index_buffer`].
    ///
    /// # Safety
    /// As [`CommandEncoder::set_index_buffer`].
    unsafe fn set_index_buffer(
        &mut self,
        binding: BufferBinding<'_, dyn DynBuffer>,
        format: wgt::IndexFormat,
    );
    /// See [`CommandEncoder::set_vertex_buffer`].
    ///
    /// # Safety
    /// As [`CommandEncoder::set_vertex_buffer`].
    unsafe fn set_vertex_buffer(&mut self, index: u32, binding: BufferBinding<'_, dyn DynBuffer>);
    /// See [`CommandEncoder::set_viewport`].
    ///
    /// # Safety
    /// As [`CommandEncoder::set_viewport`].
    unsafe fn set_viewport(&mut self, rect: &Rect<f32>, depth_range: Range<f32>);
    /// See [`CommandEncoder::set_scissor_rect`].
    ///
    /// # Safety
    /// As [`CommandEncoder::set_scissor_rect`].
    unsafe fn set_scissor_rect(&mut self, rect: &Rect<u32>);
    /// See [`CommandEncoder::set_stencil_reference`].
    ///
    /// # Safety
    /// As [`CommandEncoder::set_stencil_reference`].
    unsafe fn set_stencil_reference(&mut self, value: u32);
    /// See [`CommandEncoder::set_blend_constants`].
    ///
    /// # Safety
    /// As [`CommandEncoder::set_blend_constants`].
    unsafe fn set_blend_constants(&mut self, color: &[f32; 4]);
    /// See [`CommandEncoder::draw`].
    ///
    /// # Safety
    /// As [`CommandEncoder::draw`].
    unsafe fn draw(
        &mut self,
        first_vertex: u32,
        vertex_count: u32,
        first_instance: u32,
        instance_count: u32,
    );
    /// See [`CommandEncoder::draw_indexed`].
    ///
    /// # Safety
    /// As [`CommandEncoder::draw_indexed`].
    unsafe fn draw_indexed(
        &mut self,
        first_index: u32,
        index_count: u32,
        base_vertex: i32,
        first_instance: u32,
        instance_count: u32,
    );
    /// See [`CommandEncoder::draw_indirect`].
    ///
    /// # Safety
    /// As [`CommandEncoder::draw_indirect`].
    unsafe fn draw_indirect(&mut self, buffer: &dyn DynBuffer, offset: u64, draw_count: u32);
    /// See [`CommandEncoder::draw_indexed_indirect`].
    ///
    /// # Safety
    /// As [`CommandEncoder::draw_indexed_indirect`].
    unsafe fn draw_indexed_indirect(
        &mut self,
        buffer: &dyn DynBuffer,
        offset: u64,
        draw_count: u32,
    );
    /// See [`CommandEncoder::draw_indirect_count`].
    ///
    /// # Safety
    /// As [`CommandEncoder::draw_indirect_count`].
    unsafe fn draw_indirect_count(
        &mut self,
        buffer: &dyn DynBuffer,
        offset: u64,
        count_buffer: &dyn DynBuffer,
        count_offset: u64,
        max_count: u32,
    );
    /// See [`CommandEncoder::draw_indexed_indirect_count`].
    ///
    /// # Safety
    /// As [`CommandEncoder::draw_indexed_indirect_count`].
    unsafe fn draw_indexed_indirect_count(
        &mut self,
        buffer: &dyn DynBuffer,
        offset: u64,
        count_buffer: &dyn DynBuffer,
        count_offset: u64,
        max_count: u32,
    );
    /// See [`CommandEncoder::draw_mesh_tasks`].
    ///
    /// # Safety
    /// As [`CommandEncoder::draw_mesh_tasks`].
    unsafe fn draw_mesh_tasks(&mut self, x: u32, y: u32, z: u32);
    /// See [`CommandEncoder::draw_mesh_tasks_indirect`].
    ///
    /// # Safety
    /// As [`CommandEncoder::draw_mesh_tasks_indirect`].
    unsafe fn draw_mesh_tasks_indirect(
        &mut self,
        buffer: &dyn DynBuffer,
        offset: u64,
        draw_count: u32,
    );
    /// See [`CommandEncoder::draw_mesh_tasks_indirect_count`].
    ///
    /// # Safety
    /// As [`CommandEncoder::draw_mesh_tasks_indirect_count`].
    unsafe fn draw_mesh_tasks_indirect_count(
        &mut self,
        buffer: &dyn DynBuffer,
        offset: u64,
        count_buffer: &dyn DynBuffer,
        count_offset: u64,
        max_count: u32,
    );
    /// See [`CommandEncoder::set_compute_pipeline`].
    ///
    /// # Safety
    /// As [`CommandEncoder::set_compute_pipeline`].
    unsafe fn set_compute_pipeline(&mut self, pipeline: &dyn DynComputePipeline);
    /// See [`CommandEncoder::dispatch`].
    ///
    /// # Safety
    /// As [`CommandEncoder::dispatch`].
    unsafe fn dispatch(&mut self, count: [u32; 3]);
    /// See [`CommandEncoder::dispatch_indirect`].
    ///
    /// # Safety
    /// As [`CommandEncoder::dispatch_indirect`].
    unsafe fn dispatch_indirect(&mut self, buffer: &dyn DynBuffer, offset: u64);
    /// See [`CommandEncoder::build_acceleration_structures`].
    ///
    /// # Safety
    /// As [`CommandEncoder::build_acceleration_structures`].
    unsafe fn build_acceleration_structures(
        &mut self,
        descriptors: &[BuildAccelerationStructureDescriptor<DynResources>],
    ) -> Result<(), AccelerationStructureError>;
    /// See [`CommandEncoder::place_acceleration_structure_barrier`].
    ///
    /// # Safety
    /// As [`CommandEncoder::place_acceleration_structure_barrier`].
    unsafe fn place_acceleration_structure_barrier(
        &mut self,
        barrier: AccelerationStructureBarrier<'_, dyn DynAccelerationStructure>,
    );
    /// See [`CommandEncoder::copy_acceleration_structure`].
    ///
    /// # Safety
    /// As [`CommandEncoder::copy_acceleration_structure`].
    unsafe fn copy_acceleration_structure(
        &mut self,
        src: &dyn DynAccelerationStructure,
        dst: &dyn DynAccelerationStructure,
        mode: AccelerationStructureCopy,
    ) -> Result<(), AccelerationStructureError>;
    /// See [`CommandEncoder::read_acceleration_structure_compacted_sizes`].
    ///
    /// # Safety
    /// As [`CommandEncoder::read_acceleration_structure_compacted_sizes`].
    unsafe fn read_acceleration_structure_compacted_sizes(
        &mut self,
        structures: &[&dyn DynAccelerationStructure],
        buffer: &dyn DynBuffer,
        offset: u64,
    ) -> Result<(), AccelerationStructureError>;
    /// See [`CommandEncoder::begin_ray_tracing_pass`].
    ///
    /// # Safety
    /// As [`CommandEncoder::begin_ray_tracing_pass`].
    unsafe fn begin_ray_tracing_pass(&mut self, desc: &ComputePassDescriptor);
    /// See [`CommandEncoder::end_ray_tracing_pass`].
    ///
    /// # Safety
    /// As [`CommandEncoder::end_ray_tracing_pass`].
    unsafe fn end_ray_tracing_pass(&mut self);
    /// See [`CommandEncoder::set_ray_tracing_pipeline`].
    ///
    /// # Safety
    /// As [`CommandEncoder::set_ray_tracing_pipeline`].
    unsafe fn set_ray_tracing_pipeline(&mut self, pipeline: &dyn DynRayTracingPipeline);
    /// See [`CommandEncoder::trace_rays`]; the table is one made by
    /// [`DynDevice::create_shader_binding_table`](super::DynDevice::create_shader_binding_table),
    /// traced with the regions it holds now.
    ///
    /// # Safety
    /// As [`CommandEncoder::trace_rays`].
    unsafe fn trace_rays(&mut self, table: &ShaderBindingTable<Box<dyn DynBuffer>>, size: [u32; 3]);
}
