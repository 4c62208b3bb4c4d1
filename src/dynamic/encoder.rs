//! `DynCommandEncoder`: the command encoder trait with boxed resources.
//!
//! The dyn encoder wraps the backend's encoder with one flag: a recording
//! call handed a resource of another backend skips the command and sets
//! it, and the next `end_encoding` returns [`DeviceError::ForeignResource`].

use std::fmt::Debug;
use std::ops::Range;

use super::{cast, cast_box, map_inline, DynBuffer, DynCommandBuffer, DynQuerySet, DynTexture};
use crate::{
    Api, BufferBarrier, BufferCopy, BufferTextureCopy, CommandEncoder, DeviceError, TextureBarrier,
    TextureCopy, TextureUses,
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
}

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
                    texture: cast::<A::Texture>(b.texture)?,
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
        if let (Some(src), Some(dst)) = (self.get::<A::Buffer>(src), self.get::<A::Texture>(dst)) {
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
        if let (Some(src), Some(dst)) = (self.get::<A::Texture>(src), self.get::<A::Buffer>(dst)) {
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
        if let (Some(src), Some(dst)) = (self.get::<A::Texture>(src), self.get::<A::Texture>(dst)) {
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
                            texture: cast::<A::Texture>(b.texture)?,
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
}
