//! Descriptors of resources, their usage states, barriers and copy regions.
//!
//! Formats, usages, extents and sampler state are `wgpu-types` types, so an
//! upper layer built on `wgpu-types` passes them straight through.

use std::ops::Range;

use crate::{MappedRangeError, Memory};

/// Describes a buffer.
#[derive(Clone, Debug)]
pub struct BufferDescriptor<'a> {
    /// Debug label, attached to the backend object where the backend can.
    pub label: Option<&'a str>,
    /// Size in bytes; must be non-zero and at most `max_buffer_size`.
    pub size: u64,
    /// What the buffer will be used for.
    pub usage: wgt::BufferUsages,
    /// Where its memory lives. `MAP_READ`/`MAP_WRITE` need a mappable kind.
    pub memory: Memory,
}

impl BufferDescriptor<'_> {
    /// A buffer of `size` bytes with `usage` in `memory`, no label.
    pub fn new(size: u64, usage: wgt::BufferUsages, memory: Memory) -> Self {
        Self {
            label: None,
            size,
            usage,
            memory,
        }
    }
}

impl Default for BufferDescriptor<'_> {
    fn default() -> Self {
        Self {
            label: None,
            size: 0,
            usage: wgt::BufferUsages::empty(),
            memory: Memory::Device,
        }
    }
}

/// Describes a texture. New textures are in [`TextureUses::UNINITIALIZED`].
#[derive(Clone, Debug)]
pub struct TextureDescriptor<'a> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// Extent; `depth_or_array_layers` is depth for D3 and layers otherwise
    /// (1D textures may have layers; their height is 1).
    pub size: wgt::Extent3d,
    /// Number of mip levels, at least 1 and at most the full chain of the
    /// largest dimension (for 1D: of the width).
    pub mip_level_count: u32,
    /// Samples per texel: 1, or a count the format supports on the adapter
    /// ([`Adapter::texture_format_capabilities`](crate::Adapter::texture_format_capabilities)).
    /// Above 1 the texture must be 2D with one mip level and without
    /// `STORAGE_BINDING` usage, else `TextureError::InvalidSampleCount`.
    pub sample_count: u32,
    /// 1D, 2D or 3D.
    pub dimension: wgt::TextureDimension,
    /// Texel format.
    pub format: wgt::TextureFormat,
    /// What the texture will be used for.
    pub usage: wgt::TextureUsages,
    /// Where its memory lives (only `Memory::Device` for now).
    pub memory: Memory,
    /// Other formats views of this texture may use. Each may differ from
    /// `format` only in sRGB-ness (`Rgba8Unorm` ↔ `Rgba8UnormSrgb`); any other
    /// is `TextureError::IncompatibleView`.
    pub view_formats: &'a [wgt::TextureFormat],
}

impl Default for TextureDescriptor<'_> {
    fn default() -> Self {
        Self {
            label: None,
            size: wgt::Extent3d {
                width: 1,
                height: 1,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgt::TextureDimension::D2,
            format: wgt::TextureFormat::Rgba8Unorm,
            usage: wgt::TextureUsages::empty(),
            memory: Memory::Device,
            view_formats: &[],
        }
    }
}

/// Describes a view of a texture.
///
/// Only textures with `TEXTURE_BINDING`, `STORAGE_BINDING` or
/// `RENDER_ATTACHMENT` usage can be viewed, and cube (array) views need a
/// square, single-sampled texture with `TEXTURE_BINDING`; otherwise
/// creation fails with `TextureError::IncompatibleView`.
#[derive(Clone, Debug, Default)]
pub struct TextureViewDescriptor<'a> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// View format; `None` takes the texture's.
    pub format: Option<wgt::TextureFormat>,
    /// View dimension; `None` derives it from the texture and the layer count.
    pub dimension: Option<wgt::TextureViewDimension>,
    /// Subresources covered.
    pub range: wgt::ImageSubresourceRange,
}

/// Describes a sampler.
#[derive(Clone, Debug)]
pub struct SamplerDescriptor<'a> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// Address modes for u, v, w.
    pub address_modes: [wgt::AddressMode; 3],
    /// Magnification filter.
    pub mag_filter: wgt::FilterMode,
    /// Minification filter.
    pub min_filter: wgt::FilterMode,
    /// Filter between mip levels.
    pub mipmap_filter: wgt::MipmapFilterMode,
    /// LOD clamp range.
    pub lod_clamp: Range<f32>,
    /// Comparison function, for comparison samplers.
    pub compare: Option<wgt::CompareFunction>,
    /// Anisotropy clamp, 1 = off. Above 1 needs linear filtering everywhere.
    pub anisotropy_clamp: u16,
    /// Border colour for `ClampToBorder`.
    pub border_color: Option<wgt::SamplerBorderColor>,
}

impl Default for SamplerDescriptor<'_> {
    fn default() -> Self {
        Self {
            label: None,
            address_modes: [wgt::AddressMode::ClampToEdge; 3],
            mag_filter: wgt::FilterMode::Nearest,
            min_filter: wgt::FilterMode::Nearest,
            mipmap_filter: wgt::MipmapFilterMode::Nearest,
            lod_clamp: 0.0..32.0,
            compare: None,
            anisotropy_clamp: 1,
            border_color: None,
        }
    }
}

/// Most queries one query set may hold.
pub const MAX_QUERIES: u32 = 4096;

/// Describes a query set.
#[derive(Clone, Debug)]
pub struct QuerySetDescriptor<'a> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// Occlusion or timestamp (pipeline statistics are not supported).
    pub ty: wgt::QueryType,
    /// Number of queries, 1..=[`MAX_QUERIES`].
    pub count: u32,
}

impl Default for QuerySetDescriptor<'_> {
    /// One occlusion query, no label.
    fn default() -> Self {
        Self {
            label: None,
            ty: wgt::QueryType::Occlusion,
            count: 1,
        }
    }
}

/// Describes a command encoder.
#[derive(Clone, Debug, Default)]
pub struct CommandEncoderDescriptor<'a> {
    /// Debug label.
    pub label: Option<&'a str>,
}

bitflags::bitflags! {
    /// How a buffer is being used, for barriers.
    ///
    /// A new buffer is in the empty state (no prior GPU access): the first
    /// transition out of it needs no source synchronisation.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct BufferUses: u32 {
        /// Read by the CPU through a mapping. The GPU's writes become
        /// visible to the CPU only through a barrier *to* this state before
        /// the submission, then a wait on its fence: the
        /// [host-visibility rule](BufferMapping#host-visibility).
        const MAP_READ = 1 << 0;
        /// Written by the CPU through a mapping. No barrier is needed for the
        /// GPU to see such writes: the submit makes them visible
        /// ([host-visibility rule](BufferMapping#host-visibility)).
        const MAP_WRITE = 1 << 1;
        /// Source of a copy.
        const COPY_SRC = 1 << 2;
        /// Destination of a copy, clear or query resolve.
        const COPY_DST = 1 << 3;
        /// Index buffer.
        const INDEX = 1 << 4;
        /// Vertex buffer.
        const VERTEX = 1 << 5;
        /// Uniform buffer.
        const UNIFORM = 1 << 6;
        /// Read-only storage buffer.
        const STORAGE_READ_ONLY = 1 << 7;
        /// Read-write storage buffer.
        const STORAGE_READ_WRITE = 1 << 8;
        /// Indirect draw or dispatch arguments.
        const INDIRECT = 1 << 9;
        /// Destination of query results.
        const QUERY_RESOLVE = 1 << 10;
        /// Read by acceleration-structure builds (vertex, index, transform,
        /// AABB or instance data; the device must have acceleration structures).
        const ACCELERATION_STRUCTURE_INPUT = 1 << 11;
    }
}

bitflags::bitflags! {
    /// How a texture is being used, for barriers (and for its layout).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct TextureUses: u32 {
        /// Contents undefined: the state of every new texture. Transitioning
        /// out of it may discard contents.
        const UNINITIALIZED = 1 << 0;
        /// Ready to be presented.
        const PRESENT = 1 << 1;
        /// Source of a copy.
        const COPY_SRC = 1 << 2;
        /// Destination of a copy or clear.
        const COPY_DST = 1 << 3;
        /// Sampled in a shader.
        const RESOURCE = 1 << 4;
        /// Colour attachment.
        const COLOR_TARGET = 1 << 5;
        /// Read-only depth/stencil attachment.
        const DEPTH_STENCIL_READ = 1 << 6;
        /// Writable depth/stencil attachment.
        const DEPTH_STENCIL_WRITE = 1 << 7;
        /// Read-only storage texture.
        const STORAGE_READ_ONLY = 1 << 8;
        /// Read-write storage texture.
        const STORAGE_READ_WRITE = 1 << 9;
    }
}

/// A usage change: everything done as `from` completes before anything done as `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateTransition<T> {
    /// Usage before the barrier.
    pub from: T,
    /// Usage after the barrier.
    pub to: T,
}

impl<T> StateTransition<T> {
    /// The change from `from` to `to`.
    pub const fn new(from: T, to: T) -> Self {
        Self { from, to }
    }
}

/// A barrier on one buffer. Generic over the buffer type so the dyn path can use it too.
#[derive(Debug)]
pub struct BufferBarrier<'a, B: ?Sized> {
    /// The buffer the barrier orders.
    pub buffer: &'a B,
    /// Its usage change.
    pub usage: StateTransition<BufferUses>,
}

impl<B: ?Sized> Clone for BufferBarrier<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B: ?Sized> Copy for BufferBarrier<'_, B> {}

impl<'a, B: ?Sized> BufferBarrier<'a, B> {
    /// A barrier moving the whole `buffer` from usage `from` to usage `to`.
    ///
    /// ```
    /// use keel_hal::{BufferBarrier, BufferUses};
    /// # let buffer = ();
    /// let barrier = BufferBarrier::new(&buffer, BufferUses::COPY_DST, BufferUses::MAP_READ);
    /// assert_eq!(barrier.usage.from, BufferUses::COPY_DST);
    /// assert_eq!(barrier.usage.to, BufferUses::MAP_READ);
    /// ```
    pub const fn new(buffer: &'a B, from: BufferUses, to: BufferUses) -> Self {
        Self {
            buffer,
            usage: StateTransition { from, to },
        }
    }
}

/// A barrier on a subresource range of one texture.
#[derive(Debug)]
pub struct TextureBarrier<'a, T: ?Sized> {
    /// The texture the barrier orders.
    pub texture: &'a T,
    /// Subresources covered.
    pub range: wgt::ImageSubresourceRange,
    /// Their usage change.
    pub usage: StateTransition<TextureUses>,
}

impl<'a, T: ?Sized> TextureBarrier<'a, T> {
    /// A barrier moving every subresource of `texture` (all aspects, mips
    /// and layers) from usage `from` to usage `to`.
    ///
    /// ```
    /// use keel_hal::{TextureBarrier, TextureUses};
    /// # let texture = ();
    /// let barrier = TextureBarrier::new(&texture, TextureUses::UNINITIALIZED, TextureUses::COPY_DST);
    /// assert_eq!(barrier.range, Default::default());
    /// assert_eq!(barrier.usage.to, TextureUses::COPY_DST);
    /// ```
    pub fn new(texture: &'a T, from: TextureUses, to: TextureUses) -> Self {
        Self {
            texture,
            range: wgt::ImageSubresourceRange::default(),
            usage: StateTransition { from, to },
        }
    }
}

/// A buffer-to-buffer copy region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferCopy {
    /// Offset in the source.
    pub src_offset: u64,
    /// Offset in the destination.
    pub dst_offset: u64,
    /// Bytes to copy, non-zero.
    pub size: u64,
}

/// One corner of a texture copy: a mip level, an array layer, an origin and an aspect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureCopyBase {
    /// Mip level.
    pub mip_level: u32,
    /// First array layer (for D3 textures: 0, and `origin.z` picks the slice).
    pub array_layer: u32,
    /// Texel origin within the level.
    pub origin: wgt::Origin3d,
    /// Aspect (colour, depth or stencil).
    pub aspect: wgt::TextureAspect,
}

impl Default for TextureCopyBase {
    fn default() -> Self {
        Self {
            mip_level: 0,
            array_layer: 0,
            origin: wgt::Origin3d::ZERO,
            aspect: wgt::TextureAspect::All,
        }
    }
}

/// A buffer ↔ texture copy region.
///
/// `size.depth_or_array_layers` counts depth slices for D3 textures and
/// array layers otherwise. `bytes_per_row` must be given when the copy has
/// more than one row; `rows_per_image` when it has more than one image.
#[derive(Clone, Copy, Debug)]
pub struct BufferTextureCopy {
    /// Layout of the texels in the buffer.
    pub buffer_layout: wgt::TexelCopyBufferLayout,
    /// Where in the texture.
    pub texture_base: TextureCopyBase,
    /// Extent copied, in texels.
    pub size: wgt::Extent3d,
}

/// A texture-to-texture copy region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureCopy {
    /// Where in the source.
    pub src_base: TextureCopyBase,
    /// Where in the destination.
    pub dst_base: TextureCopyBase,
    /// Extent copied, in texels.
    pub size: wgt::Extent3d,
}

/// A CPU view of a mapped buffer.
///
/// Valid until the buffer is unmapped or destroyed. Mapped memory is always
/// host-coherent ([`Memory`]): no flush or invalidate is ever needed, but the
/// GPU and the CPU still have to be ordered, by the rule below.
///
/// # Host visibility
///
/// This is the one rule for moving bytes between the CPU and the GPU through
/// a mapping, on every backend (other docs link here):
///
/// * **CPU writes, GPU reads.** Bytes written through the mapping before
///   [`Queue::submit`](crate::Queue::submit) are visible to the commands of
///   that submission and of every later one. No barrier is needed: a
///   buffer the CPU wrote moves from its state (for a new buffer,
///   `BufferUses::empty()`) straight to the GPU usage, e.g.
///   `empty → COPY_SRC` or `empty → STORAGE_READ_ONLY`.
/// * **GPU writes, CPU reads.** The command buffer that writes the buffer
///   must end with a barrier from the writing state (`COPY_DST`,
///   `STORAGE_READ_WRITE`, `QUERY_RESOLVE`, …) *to* [`BufferUses::MAP_READ`];
///   the CPU reads only after waiting for that submission's fence. The fence
///   wait alone is not enough: on Vulkan a fence signal makes the GPU's
///   writes available but not visible to the host, and the barrier's
///   `HOST_READ` destination is what makes them visible. The noop backend
///   needs neither, but programs follow the rule so they are correct
///   everywhere.
/// * **Either way**, the CPU must not touch bytes that pending GPU work
///   reads or writes. Before the GPU writes a buffer again after the CPU
///   read it, transition it out of `MAP_READ` (e.g. `MAP_READ → COPY_DST`).
///
/// [`write_slice`](Self::write_slice) and [`read_vec`](Self::read_vec) copy
/// plain values ([`bytemuck::Pod`]) in and out, checking the range.
///
/// ```
/// use keel_hal::{Adapter as _, Device as _, Instance as _};
/// use keel_hal::{BufferDescriptor, InstanceDescriptor, Memory, wgt};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // SAFETY: the buffer is destroyed before the device is dropped; no GPU
/// // work uses it while the CPU reads and writes it.
/// unsafe {
///     let instance = keel_hal::noop::Instance::init(&InstanceDescriptor::default())?;
///     let adapter = instance.enumerate_adapters().remove(0);
///     let device = adapter.adapter.open(&Default::default())?.device;
///     let desc = BufferDescriptor {
///         size: 16,
///         usage: wgt::BufferUsages::MAP_WRITE,
///         memory: Memory::Upload,
///         ..Default::default()
///     };
///     let buffer = device.create_buffer(&desc)?;
///     let mapping = device.map_buffer(&buffer)?;
///     mapping.write_slice(4, &[1.5f32, 2.5])?;
///     assert_eq!(mapping.read_vec::<f32>(4, 2)?, [1.5, 2.5]);
///     assert!(mapping.read_vec::<u32>(8, 3).is_err()); // past the end
///     device.destroy_buffer(buffer);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct BufferMapping {
    /// Start of the buffer's bytes.
    pub ptr: std::ptr::NonNull<u8>,
    /// Length of the mapping, which is the buffer's size.
    pub size: u64,
}

impl BufferMapping {
    /// Checks that `len` bytes at `offset` lie in the mapping; returns the
    /// offset as a `usize`.
    fn range(&self, offset: u64, len: Option<usize>) -> Result<usize, MappedRangeError> {
        let error = MappedRangeError {
            offset,
            len: len.map_or(u64::MAX, |l| l as u64),
            size: self.size,
        };
        let len = len.ok_or(error.clone())? as u64;
        match offset.checked_add(len) {
            Some(end) if end <= self.size => usize::try_from(offset).map_err(|_| error),
            _ => Err(error),
        }
    }

    /// Copies `data` into the mapping at byte `offset` (no alignment needed).
    /// A range that leaves the mapping is a [`MappedRangeError`] and writes
    /// nothing.
    ///
    /// # Safety
    /// The buffer is alive and still mapped, no pending GPU work reads or
    /// writes the range, and no other thread reads or writes it meanwhile
    /// (every mapping of a buffer is the same memory). The GPU sees the
    /// bytes from the next submit on
    /// ([host-visibility rule](BufferMapping#host-visibility)).
    pub unsafe fn write_slice<T: bytemuck::Pod>(
        &self,
        offset: u64,
        data: &[T],
    ) -> Result<(), MappedRangeError> {
        let start = self.range(offset, data.len().checked_mul(size_of::<T>()))?;
        // SAFETY: the range is inside the mapping (checked above), which the
        // caller vouches is alive and untouched by the GPU; `T: Pod` has no
        // padding, so every source byte is initialised. Byte copies need no
        // alignment.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr().cast::<u8>(),
                self.ptr.as_ptr().add(start),
                size_of_val(data),
            );
        }
        Ok(())
    }

    /// Reads `count` values of `T` from the mapping at byte `offset` (no
    /// alignment needed). A range that leaves the mapping is a
    /// [`MappedRangeError`].
    ///
    /// # Safety
    /// The buffer is alive and still mapped; no pending GPU work and no
    /// other thread writes the range meanwhile; bytes the GPU wrote were
    /// made visible by the
    /// [host-visibility rule](BufferMapping#host-visibility) (a barrier to
    /// `MAP_READ`, then the fence wait).
    pub unsafe fn read_vec<T: bytemuck::Pod>(
        &self,
        offset: u64,
        count: usize,
    ) -> Result<Vec<T>, MappedRangeError> {
        let start = self.range(offset, count.checked_mul(size_of::<T>()))?;
        let mut out = Vec::<T>::with_capacity(count);
        // SAFETY: the source range is inside the live mapping (checked
        // above) and no GPU work writes it (the caller's contract); the
        // destination has room for `count` values; every bit pattern is a
        // valid `T` (`Pod`), so after the byte copy the first `count`
        // values are initialised.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.ptr.as_ptr().add(start),
                out.as_mut_ptr().cast::<u8>(),
                count * size_of::<T>(),
            );
            out.set_len(count);
        }
        Ok(out)
    }
}

// SAFETY: the mapping is a plain pointer into coherent memory; the hal's
// contracts say who may touch the bytes when, not which thread.
unsafe impl Send for BufferMapping {}
// SAFETY: as above.
unsafe impl Sync for BufferMapping {}

/// A value of a fence's monotonically increasing counter.
pub type FenceValue = u64;

#[cfg(test)]
mod tests {
    use super::*;

    /// A mapping over `bytes` (host memory stands in for a mapped buffer).
    fn mapping(bytes: &mut [u8]) -> BufferMapping {
        BufferMapping {
            ptr: std::ptr::NonNull::new(bytes.as_mut_ptr()).expect("non-null"),
            size: bytes.len() as u64,
        }
    }

    #[test]
    fn typed_mapping_access_checks_the_range() {
        let mut bytes = [0u8; 12];
        let map = mapping(&mut bytes);
        // SAFETY: `bytes` outlives `map`; no GPU is involved.
        unsafe {
            // Unaligned offsets are fine; the last byte is reachable.
            map.write_slice(1, &[0x0403_0201u32, 0x0807_0605])
                .expect("test setup");
            map.write_slice(11, &[0xAAu8]).expect("test setup");
            assert_eq!(
                map.read_vec::<u8>(0, 12).expect("test setup")[..10],
                [0, 1, 2, 3, 4, 5, 6, 7, 8, 0]
            );
            assert_eq!(
                map.read_vec::<[u16; 2]>(1, 1).expect("test setup"),
                [[0x0201, 0x0403]]
            );
            assert_eq!(map.read_vec::<u8>(11, 1).expect("test setup"), [0xAA]);
            assert_eq!(map.read_vec::<u64>(12, 0).expect("test setup"), []);
            // One byte past the end, an overflowing offset, an overflowing count.
            let past = MappedRangeError {
                offset: 9,
                len: 4,
                size: 12,
            };
            assert_eq!(map.write_slice(9, &[1u32]), Err(past.clone()));
            assert_eq!(map.read_vec::<u32>(9, 1), Err(past));
            assert!(map.read_vec::<u8>(u64::MAX, 1).is_err());
            let huge = map.read_vec::<u64>(0, usize::MAX).unwrap_err();
            assert_eq!(huge.len, u64::MAX);
        }
        // A failed write wrote nothing.
        assert_eq!(bytes[8..], [8, 0, 0, 0xAA]);
    }

    #[test]
    fn barrier_constructors_cover_the_whole_resource() {
        let buffer = BufferBarrier::new(&(), BufferUses::COPY_DST, BufferUses::MAP_READ);
        assert_eq!(
            buffer.usage,
            StateTransition::new(BufferUses::COPY_DST, BufferUses::MAP_READ)
        );
        let texture = TextureBarrier::new(&(), TextureUses::COPY_DST, TextureUses::RESOURCE);
        assert_eq!(texture.range.aspect, wgt::TextureAspect::All);
        assert_eq!(
            (texture.range.base_mip_level, texture.range.mip_level_count),
            (0, None)
        );
        assert_eq!(
            (
                texture.range.base_array_layer,
                texture.range.array_layer_count
            ),
            (0, None)
        );
    }
}
