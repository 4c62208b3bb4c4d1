//! Descriptors of resources, their usage states, barriers and copy regions.
//!
//! Formats, usages, extents and sampler state are `wgpu-types` types, so an
//! upper layer built on `wgpu-types` passes them straight through.

use std::ops::Range;

use crate::Memory;

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
        /// Read by the CPU through a mapping.
        const MAP_READ = 1 << 0;
        /// Written by the CPU through a mapping.
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

/// A barrier on one buffer. Generic over the buffer type so the dyn path can use it too.
#[derive(Debug)]
pub struct BufferBarrier<'a, B: ?Sized> {
    /// The buffer the barrier orders.
    pub buffer: &'a B,
    /// Its usage change.
    pub usage: StateTransition<BufferUses>,
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
/// Valid until the buffer is unmapped or destroyed. The memory is coherent:
/// writes are visible to the GPU at the next submit, and GPU writes are
/// visible after the fence of that submit is waited on.
#[derive(Debug)]
pub struct BufferMapping {
    /// Start of the buffer's bytes.
    pub ptr: std::ptr::NonNull<u8>,
    /// Length of the mapping, which is the buffer's size.
    pub size: u64,
}

// SAFETY: the mapping is a plain pointer into coherent memory; the hal's
// contracts say who may touch the bytes when, not which thread.
unsafe impl Send for BufferMapping {}
// SAFETY: as above.
unsafe impl Sync for BufferMapping {}

/// A value of a fence's monotonically increasing counter.
pub type FenceValue = u64;
