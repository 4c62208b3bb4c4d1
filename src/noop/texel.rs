//! How a noop texture lays out its texels in host memory, and the copy math
//! that turns a copy region into a walk over rows of bytes.
//!
//! ## Storage layout
//!
//! A texture's bytes are ordered, outermost first:
//!
//! 1. **plane**: one per aspect (colour formats have one plane, `All`;
//!    depth-stencil formats a depth plane, then a stencil plane);
//! 2. **mip level**;
//! 3. **array layer** (D3 textures have one layer);
//! 4. **depth slice** (D3 only; the mip's depth);
//! 5. **row of blocks**, each tightly packed: `blocks_wide × block_bytes`.
//!
//! A block is `format.block_dimensions()` texels (1×1 for uncompressed
//! formats), and `block_bytes` is the aspect's copy footprint
//! (`block_copy_size(Some(aspect))`) times the sample count. The one format
//! without a copy footprint, `Depth24Plus` (alone or in
//! `Depth24PlusStencil8`), is stored as 4 bytes a texel and cannot be copied.
//!
//! ## Copies
//!
//! Every copy (buffer↔buffer, buffer↔texture, texture↔texture) becomes a
//! [`CopyPlan`]: `images × rows` runs of `row_bytes` bytes, each side
//! described by a [`RowWalk`] (where the first row starts, how far apart
//! rows and images are). Array layers of one mip are contiguous, and so are
//! the depth slices of a D3 mip, so both are a constant image pitch. The plan
//! is computed and bounds-checked when the command is recorded; executing it
//! is a loop of `memmove`s.

use crate::{BufferTextureCopy, TextureCopy, TextureCopyBase};

/// Why a copy region was rejected. Logged, and the command skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CopyError {
    #[error("aspect {0:?} does not exist in this texture's format")]
    Aspect(wgt::TextureAspect),
    #[error("this format/aspect has no defined copy footprint (e.g. Depth24Plus)")]
    NotCopyable,
    #[error("multisampled textures cannot be copied to or from buffers")]
    Multisampled,
    #[error("mip level {0} is outside the texture")]
    MipLevel(u32),
    #[error("origin or extent is not aligned to the format's block size")]
    Unaligned,
    #[error("region extends outside the texture's subresource")]
    TextureBounds,
    #[error("bytes_per_row or rows_per_image is smaller than the copied rows")]
    BufferLayout,
    #[error("region extends outside its buffer or texture")]
    OutOfBounds,
    #[error("source and destination formats are not copy-compatible")]
    Incompatible,
    #[error("region size overflows")]
    Overflow,
}

/// One aspect's plane of texels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plane {
    /// `All` for colour formats; `DepthOnly` or `StencilOnly` otherwise.
    aspect: wgt::TextureAspect,
    /// Bytes one block of one sample occupies in storage.
    block_bytes: u32,
    /// Whether copies may touch the plane (false for `Depth24Plus` depth).
    copyable: bool,
}

impl Plane {
    const NONE: Plane = Plane {
        aspect: wgt::TextureAspect::All,
        block_bytes: 0,
        copyable: false,
    };
}

/// Why a texture cannot be laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LayoutError {
    /// Multi-planar (video) formats are not supported by the noop backend.
    UnsupportedFormat,
    /// The total size overflows `u64`.
    Overflow,
}

/// The storage layout of one texture. Small and `Copy`, so recorded
/// commands and views can carry it by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TexelLayout {
    pub(crate) format: wgt::TextureFormat,
    pub(crate) dimension: wgt::TextureDimension,
    pub(crate) size: wgt::Extent3d,
    pub(crate) mip_level_count: u32,
    pub(crate) sample_count: u32,
    block_width: u32,
    block_height: u32,
    planes: [Plane; 2],
    plane_count: usize,
    /// Bytes of every plane, mip and layer together.
    total_bytes: u64,
}

/// Size of one mip level of one layer, in blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MipBlocks {
    wide: u32,
    high: u32,
    /// Depth slices (1 unless D3).
    deep: u32,
}

impl TexelLayout {
    /// Lays out a texture. The descriptor's fields must already be checked
    /// (non-zero extent, mip count within the chain).
    pub(crate) fn new(
        format: wgt::TextureFormat,
        dimension: wgt::TextureDimension,
        size: wgt::Extent3d,
        mip_level_count: u32,
        sample_count: u32,
    ) -> Result<Self, LayoutError> {
        let (planes, plane_count) = planes_of(format).ok_or(LayoutError::UnsupportedFormat)?;
        let (block_width, block_height) = format.block_dimensions();
        let mut layout = Self {
            format,
            dimension,
            size,
            mip_level_count,
            sample_count,
            block_width,
            block_height,
            planes,
            plane_count,
            total_bytes: 0,
        };
        let mut total = 0u64;
        for plane in 0..plane_count {
            total = total
                .checked_add(layout.plane_bytes(plane).ok_or(LayoutError::Overflow)?)
                .ok_or(LayoutError::Overflow)?;
        }
        layout.total_bytes = total;
        Ok(layout)
    }

    /// Bytes the texture's storage needs.
    pub(crate) fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Array layers (1 for D3 textures, whose depth is per mip).
    pub(crate) fn layer_count(&self) -> u32 {
        match self.dimension {
            wgt::TextureDimension::D3 => 1,
            _ => self.size.depth_or_array_layers,
        }
    }

    fn mip_blocks(&self, mip: u32) -> MipBlocks {
        let extent = self.size.mip_level_size(mip, self.dimension);
        MipBlocks {
            wide: extent.width.div_ceil(self.block_width),
            high: extent.height.div_ceil(self.block_height),
            deep: match self.dimension {
                wgt::TextureDimension::D3 => extent.depth_or_array_layers,
                _ => 1,
            },
        }
    }

    /// Bytes one block of `plane` occupies, all samples together.
    fn block_bytes(&self, plane: usize) -> u64 {
        u64::from(self.planes[plane].block_bytes) * u64::from(self.sample_count)
    }

    /// Bytes of one layer of one mip of one plane.
    fn mip_layer_bytes(&self, plane: usize, mip: u32) -> Option<u64> {
        let b = self.mip_blocks(mip);
        u64::from(b.wide)
            .checked_mul(u64::from(b.high))?
            .checked_mul(u64::from(b.deep))?
            .checked_mul(self.block_bytes(plane))
    }

    /// Bytes of all mips and layers of one plane.
    fn plane_bytes(&self, plane: usize) -> Option<u64> {
        let mut sum = 0u64;
        for mip in 0..self.mip_level_count {
            let mip_bytes = self
                .mip_layer_bytes(plane, mip)?
                .checked_mul(u64::from(self.layer_count()))?;
            sum = sum.checked_add(mip_bytes)?;
        }
        Some(sum)
    }

    /// Offset of the first byte of (`plane`, `mip`, `layer`).
    fn subresource_offset(&self, plane: usize, mip: u32, layer: u32) -> Option<u64> {
        let mut offset = 0u64;
        for p in 0..plane {
            offset = offset.checked_add(self.plane_bytes(p)?)?;
        }
        for m in 0..mip {
            let mip_bytes = self
                .mip_layer_bytes(plane, m)?
                .checked_mul(u64::from(self.layer_count()))?;
            offset = offset.checked_add(mip_bytes)?;
        }
        offset.checked_add(
            self.mip_layer_bytes(plane, mip)?
                .checked_mul(u64::from(layer))?,
        )
    }

    /// The byte runs (offset, length) a clear of `aspect` over mips
    /// `mips.0..mips.0 + mips.1` and layers `layers.0..layers.0 + layers.1`
    /// zeroes: one run per plane and mip (a mip's layers are contiguous).
    /// `All` clears every plane. `None` past the texture (checked before).
    pub(crate) fn clear_runs(
        &self,
        aspect: wgt::TextureAspect,
        mips: (u32, u32),
        layers: (u32, u32),
    ) -> Option<Vec<(u64, u64)>> {
        let mut runs = Vec::new();
        for (plane, p) in self.planes[..self.plane_count].iter().enumerate() {
            if aspect != wgt::TextureAspect::All && aspect != p.aspect {
                continue;
            }
            for mip in mips.0..mips.0.checked_add(mips.1)? {
                let offset = self.subresource_offset(plane, mip, layers.0)?;
                let len = self
                    .mip_layer_bytes(plane, mip)?
                    .checked_mul(u64::from(layers.1))?;
                runs.push((offset, len));
            }
        }
        Some(runs)
    }

    /// The plane a copy of `aspect` touches.
    fn plane_for(&self, aspect: wgt::TextureAspect) -> Result<usize, CopyError> {
        let planes = &self.planes[..self.plane_count];
        let found = match aspect {
            // `All` names the only plane; it is ambiguous for combined
            // depth-stencil formats, where copies go one aspect at a time.
            wgt::TextureAspect::All if planes.len() == 1 => Some(0),
            wgt::TextureAspect::DepthOnly | wgt::TextureAspect::StencilOnly => {
                planes.iter().position(|p| p.aspect == aspect)
            }
            _ => None,
        };
        found.ok_or(CopyError::Aspect(aspect))
    }

    /// Where a copy region lies in this texture's storage.
    pub(crate) fn locate(
        &self,
        base: &TextureCopyBase,
        size: wgt::Extent3d,
    ) -> Result<TextureSpan, CopyError> {
        let plane = self.plane_for(base.aspect)?;
        if !self.planes[plane].copyable {
            return Err(CopyError::NotCopyable);
        }
        if base.mip_level >= self.mip_level_count {
            return Err(CopyError::MipLevel(base.mip_level));
        }
        let (bw, bh) = (self.block_width, self.block_height);
        if base.origin.x % bw != 0 || base.origin.y % bh != 0 {
            return Err(CopyError::Unaligned);
        }
        let mip = self.mip_blocks(base.mip_level);
        let x0 = base.origin.x / bw;
        let y0 = base.origin.y / bh;
        let wide = size.width.div_ceil(bw);
        let high = size.height.div_ceil(bh);
        let images = size.depth_or_array_layers;
        let fits = |start: u32, count: u32, limit: u32| {
            start.checked_add(count).is_some_and(|end| end <= limit)
        };
        if !fits(x0, wide, mip.wide) || !fits(y0, high, mip.high) {
            return Err(CopyError::TextureBounds);
        }

        let block = self.block_bytes(plane);
        let row_pitch = u64::from(mip.wide) * block;
        let slice_pitch = row_pitch * u64::from(mip.high);
        // Images are array layers, or depth slices for D3 textures.
        let (first_layer, first_slice, image_pitch) = match self.dimension {
            wgt::TextureDimension::D3 => {
                if base.array_layer != 0 || !fits(base.origin.z, images, mip.deep) {
                    return Err(CopyError::TextureBounds);
                }
                (0, base.origin.z, slice_pitch)
            }
            _ => {
                if base.origin.z != 0 || !fits(base.array_layer, images, self.layer_count()) {
                    return Err(CopyError::TextureBounds);
                }
                let layer_pitch = self
                    .mip_layer_bytes(plane, base.mip_level)
                    .ok_or(CopyError::Overflow)?;
                (base.array_layer, 0, layer_pitch)
            }
        };
        // The first block: subresource, then slice, row and column in it.
        // Inside the texture (checked above), so below its total size.
        let start = self
            .subresource_offset(plane, base.mip_level, first_layer)
            .and_then(|s| s.checked_add(u64::from(first_slice) * slice_pitch))
            .and_then(|s| s.checked_add(u64::from(y0) * row_pitch))
            .and_then(|s| s.checked_add(u64::from(x0) * block))
            .ok_or(CopyError::Overflow)?;
        Ok(TextureSpan {
            walk: RowWalk {
                start,
                row_pitch,
                image_pitch,
            },
            row_bytes: u64::from(wide) * block,
            rows: high,
            images,
            block: (bw, bh, block),
            samples: self.sample_count,
        })
    }
}

/// The planes of a format, or `None` for formats the noop backend cannot store.
fn planes_of(format: wgt::TextureFormat) -> Option<([Plane; 2], usize)> {
    use wgt::TextureAspect as A;
    if format.is_multi_planar_format() {
        return None;
    }
    if !format.is_depth_stencil_format() {
        let block_bytes = format.block_copy_size(None)?;
        let colour = Plane {
            aspect: A::All,
            block_bytes,
            copyable: true,
        };
        return Some(([colour, Plane::NONE], 1));
    }
    // Depth and stencil: one plane per aspect the format has. An aspect
    // without a copy footprint (Depth24Plus) is stored as 4 bytes a texel.
    let mut planes = [Plane::NONE; 2];
    let mut count = 0;
    for (aspect, present) in [
        (A::DepthOnly, format.has_depth_aspect()),
        (A::StencilOnly, format.has_stencil_aspect()),
    ] {
        if present {
            let copy_size = format.block_copy_size(Some(aspect));
            planes[count] = Plane {
                aspect,
                block_bytes: copy_size.unwrap_or(4),
                copyable: copy_size.is_some(),
            };
            count += 1;
        }
    }
    Some((planes, count))
}

/// A fill of `size` texels at `base`: a plan whose source is one row of
/// `row_bytes` (the fill texel repeated) read again for every row and
/// image, and the bytes of one block with all its samples.
pub(crate) fn plan_fill(
    layout: &TexelLayout,
    base: &TextureCopyBase,
    size: wgt::Extent3d,
) -> Result<(CopyPlan, u64), CopyError> {
    let span = layout.locate(base, size)?;
    let plan = CopyPlan {
        src: RowWalk {
            start: 0,
            row_pitch: 0,
            image_pitch: 0,
        },
        dst: span.walk,
        row_bytes: span.row_bytes,
        rows: span.rows,
        images: span.images,
    };
    Ok((plan, span.block.2))
}

/// Where successive rows and images of a copy lie in one linear allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowWalk {
    /// Offset of the first row of the first image.
    pub(crate) start: u64,
    /// Distance between the starts of consecutive rows.
    pub(crate) row_pitch: u64,
    /// Distance between the starts of consecutive images.
    pub(crate) image_pitch: u64,
}

/// A copy region located in a texture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TextureSpan {
    walk: RowWalk,
    row_bytes: u64,
    rows: u32,
    images: u32,
    /// Block width, height and bytes (all samples).
    block: (u32, u32, u64),
    samples: u32,
}

/// `images × rows` runs of `row_bytes` bytes, from `src` to `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CopyPlan {
    pub(crate) src: RowWalk,
    pub(crate) dst: RowWalk,
    pub(crate) row_bytes: u64,
    pub(crate) rows: u32,
    pub(crate) images: u32,
}

impl CopyPlan {
    /// A plain byte copy, as one row.
    pub(crate) fn linear(src_offset: u64, dst_offset: u64, size: u64) -> Self {
        let walk = |start| RowWalk {
            start,
            row_pitch: 0,
            image_pitch: 0,
        };
        Self {
            src: walk(src_offset),
            dst: walk(dst_offset),
            row_bytes: size,
            rows: 1,
            images: 1,
        }
    }

    /// Whether the plan moves no bytes.
    pub(crate) fn is_empty(&self) -> bool {
        self.row_bytes == 0 || self.rows == 0 || self.images == 0
    }

    /// One past the last byte the plan touches through `walk`.
    fn end(&self, walk: &RowWalk) -> Option<u64> {
        if self.is_empty() {
            return Some(walk.start);
        }
        let last_image = u64::from(self.images - 1).checked_mul(walk.image_pitch)?;
        let last_row = u64::from(self.rows - 1).checked_mul(walk.row_pitch)?;
        walk.start
            .checked_add(last_image)?
            .checked_add(last_row)?
            .checked_add(self.row_bytes)
    }

    /// Checks that every byte the plan reads lies in `src_len` bytes and
    /// every byte it writes in `dst_len` bytes.
    pub(crate) fn check(&self, src_len: u64, dst_len: u64) -> Result<(), CopyError> {
        let src_end = self.end(&self.src).ok_or(CopyError::Overflow)?;
        let dst_end = self.end(&self.dst).ok_or(CopyError::Overflow)?;
        if src_end > src_len || dst_end > dst_len {
            return Err(CopyError::OutOfBounds);
        }
        Ok(())
    }

    /// Calls `f(src_offset, dst_offset, len)` for every run of bytes.
    /// Rows that are contiguous on both sides are merged into one run.
    pub(crate) fn for_each_run(&self, mut f: impl FnMut(u64, u64, u64)) {
        if self.is_empty() {
            return;
        }
        // Offsets use wrapping arithmetic so an unchecked plan cannot panic;
        // after `check` none of them wraps, and the consumer bounds-checks
        // every run again anyway.
        let packed = |w: &RowWalk| w.row_pitch == self.row_bytes;
        let (rows, row_bytes) = if packed(&self.src) && packed(&self.dst) {
            (1, self.row_bytes.wrapping_mul(u64::from(self.rows)))
        } else {
            (self.rows, self.row_bytes)
        };
        let at = |w: &RowWalk, image: u64, row: u64| {
            w.start
                .wrapping_add(image.wrapping_mul(w.image_pitch))
                .wrapping_add(row.wrapping_mul(w.row_pitch))
        };
        for image in 0..u64::from(self.images) {
            for row in 0..u64::from(rows) {
                f(
                    at(&self.src, image, row),
                    at(&self.dst, image, row),
                    row_bytes,
                );
            }
        }
    }
}

/// Where a buffer side of a buffer↔texture copy lies. Missing
/// `bytes_per_row`/`rows_per_image` default to tight packing.
fn buffer_walk(
    layout: &wgt::TexelCopyBufferLayout,
    span: &TextureSpan,
) -> Result<RowWalk, CopyError> {
    let row_pitch = layout.bytes_per_row.map_or(span.row_bytes, u64::from);
    let rows_per_image = layout.rows_per_image.unwrap_or(span.rows);
    if row_pitch < span.row_bytes || rows_per_image < span.rows {
        return Err(CopyError::BufferLayout);
    }
    let image_pitch = row_pitch
        .checked_mul(u64::from(rows_per_image))
        .ok_or(CopyError::Overflow)?;
    Ok(RowWalk {
        start: layout.offset,
        row_pitch,
        image_pitch,
    })
}

/// Plans a buffer → texture copy (`to_texture`) or texture → buffer copy.
pub(crate) fn plan_buffer_texture(
    texture: &TexelLayout,
    region: &BufferTextureCopy,
    to_texture: bool,
) -> Result<CopyPlan, CopyError> {
    let span = texture.locate(&region.texture_base, region.size)?;
    if span.samples != 1 {
        return Err(CopyError::Multisampled);
    }
    let buffer = buffer_walk(&region.buffer_layout, &span)?;
    let (src, dst) = if to_texture {
        (buffer, span.walk)
    } else {
        (span.walk, buffer)
    };
    Ok(CopyPlan {
        src,
        dst,
        row_bytes: span.row_bytes,
        rows: span.rows,
        images: span.images,
    })
}

/// Plans a texture → texture copy.
pub(crate) fn plan_texture_texture(
    src: &TexelLayout,
    dst: &TexelLayout,
    region: &TextureCopy,
) -> Result<CopyPlan, CopyError> {
    let from = src.locate(&region.src_base, region.size)?;
    let to = dst.locate(&region.dst_base, region.size)?;
    if from.block != to.block || from.samples != to.samples {
        return Err(CopyError::Incompatible);
    }
    Ok(CopyPlan {
        src: from.walk,
        dst: to.walk,
        row_bytes: from.row_bytes,
        rows: from.rows,
        images: from.images,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wgt::{Extent3d, Origin3d, TextureAspect, TextureDimension, TextureFormat};

    fn layout(
        format: TextureFormat,
        dim: TextureDimension,
        w: u32,
        h: u32,
        d: u32,
        mips: u32,
    ) -> TexelLayout {
        let size = Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: d,
        };
        TexelLayout::new(format, dim, size, mips, 1).expect("test fixture")
    }

    fn runs(plan: &CopyPlan) -> Vec<(u64, u64, u64)> {
        let mut out = Vec::new();
        plan.for_each_run(|s, d, n| out.push((s, d, n)));
        out
    }

    #[test]
    fn sizes_of_mip_chains_and_planes() {
        // 4x4 RGBA8, 3 mips, 2 layers: (64 + 16 + 4) * 2.
        let l = layout(TextureFormat::Rgba8Unorm, TextureDimension::D2, 4, 4, 2, 3);
        assert_eq!(l.total_bytes(), 168);
        // 3D 4x4x4 R8, 3 mips: 64 + 8 + 1.
        let l = layout(TextureFormat::R8Unorm, TextureDimension::D3, 4, 4, 4, 3);
        assert_eq!(l.total_bytes(), 73);
        // BC1 10x6: 3x2 blocks of 8 bytes.
        let l = layout(
            TextureFormat::Bc1RgbaUnorm,
            TextureDimension::D2,
            10,
            6,
            1,
            1,
        );
        assert_eq!(l.total_bytes(), 48);
        // Depth32FloatStencil8 2x2: depth 16 bytes, then stencil 4 bytes.
        let l = layout(
            TextureFormat::Depth32FloatStencil8,
            TextureDimension::D2,
            2,
            2,
            1,
            1,
        );
        assert_eq!(l.total_bytes(), 20);
        assert!(TexelLayout::new(
            TextureFormat::NV12,
            TextureDimension::D2,
            Extent3d::default(),
            1,
            1
        )
        .is_err());
    }

    #[test]
    fn buffer_to_texture_with_padding_and_layers() {
        // 4x4 RGBA8, 2 layers; copy a 2x2 block at (2,1) of layer 1, mip 0.
        let l = layout(TextureFormat::Rgba8Unorm, TextureDimension::D2, 4, 4, 2, 1);
        let region = BufferTextureCopy {
            buffer_layout: wgt::TexelCopyBufferLayout {
                offset: 8,
                bytes_per_row: Some(256),
                rows_per_image: None,
            },
            texture_base: TextureCopyBase {
                array_layer: 1,
                origin: Origin3d { x: 2, y: 1, z: 0 },
                ..Default::default()
            },
            size: Extent3d {
                width: 2,
                height: 2,
                depth_or_array_layers: 1,
            },
        };
        let plan = plan_buffer_texture(&l, &region, true).expect("test fixture");
        // Layer 1 starts at 64; row 1 at +16; column 2 at +8.
        assert_eq!(runs(&plan), vec![(8, 88, 8), (264, 104, 8)]);
        assert_eq!(plan.check(8 + 256 + 8, 128), Ok(()));
        assert_eq!(plan.check(8 + 256 + 7, 128), Err(CopyError::OutOfBounds));
    }

    #[test]
    fn tight_rows_merge_and_mips_offset() {
        // Mip 1 of a 4x4 R8 texture with 2 layers: mip 0 takes 32 bytes.
        let l = layout(TextureFormat::R8Unorm, TextureDimension::D2, 4, 4, 2, 2);
        let region = BufferTextureCopy {
            buffer_layout: wgt::TexelCopyBufferLayout::default(),
            texture_base: TextureCopyBase {
                mip_level: 1,
                ..Default::default()
            },
            size: Extent3d {
                width: 2,
                height: 2,
                depth_or_array_layers: 2,
            },
        };
        let plan = plan_buffer_texture(&l, &region, false).expect("test fixture");
        assert_eq!(runs(&plan), vec![(32, 0, 4), (36, 4, 4)]);
    }

    #[test]
    fn depth_slices_of_3d() {
        let l = layout(TextureFormat::R8Unorm, TextureDimension::D3, 2, 2, 4, 1);
        let base = TextureCopyBase {
            origin: Origin3d { x: 0, y: 0, z: 1 },
            ..Default::default()
        };
        let span = l
            .locate(
                &base,
                Extent3d {
                    width: 2,
                    height: 2,
                    depth_or_array_layers: 3,
                },
            )
            .expect("test fixture");
        assert_eq!(span.walk.start, 4);
        assert_eq!(span.walk.image_pitch, 4);
        let too_deep = Extent3d {
            width: 2,
            height: 2,
            depth_or_array_layers: 4,
        };
        assert_eq!(l.locate(&base, too_deep), Err(CopyError::TextureBounds));
    }

    #[test]
    fn rejects_bad_regions() {
        let ds = layout(
            TextureFormat::Depth24PlusStencil8,
            TextureDimension::D2,
            4,
            4,
            1,
            1,
        );
        let size = Extent3d {
            width: 1,
            height: 1,
            depth_or_array_layers: 1,
        };
        let at = |aspect| TextureCopyBase {
            aspect,
            ..Default::default()
        };
        assert_eq!(
            ds.locate(&at(TextureAspect::All), size),
            Err(CopyError::Aspect(TextureAspect::All))
        );
        assert_eq!(
            ds.locate(&at(TextureAspect::DepthOnly), size),
            Err(CopyError::NotCopyable)
        );
        // The stencil plane follows the 4x4x4-byte depth plane.
        let stencil = ds
            .locate(&at(TextureAspect::StencilOnly), size)
            .expect("test fixture");
        assert_eq!(stencil.walk.start, 64);

        let bc = layout(
            TextureFormat::Bc1RgbaUnorm,
            TextureDimension::D2,
            8,
            8,
            1,
            1,
        );
        let unaligned = TextureCopyBase {
            origin: Origin3d { x: 2, y: 0, z: 0 },
            ..Default::default()
        };
        assert_eq!(bc.locate(&unaligned, size), Err(CopyError::Unaligned));

        let l = layout(TextureFormat::Rgba8Unorm, TextureDimension::D2, 4, 4, 1, 1);
        let far = TextureCopyBase {
            origin: Origin3d { x: 3, y: 0, z: 0 },
            ..Default::default()
        };
        let two = Extent3d { width: 2, ..size };
        assert_eq!(l.locate(&far, two), Err(CopyError::TextureBounds));
        let mip = TextureCopyBase {
            mip_level: 1,
            ..Default::default()
        };
        assert_eq!(l.locate(&mip, size), Err(CopyError::MipLevel(1)));
    }

    #[test]
    fn texture_to_texture_needs_matching_blocks() {
        let a = layout(TextureFormat::Rgba8Unorm, TextureDimension::D2, 4, 4, 1, 1);
        let b = layout(
            TextureFormat::Rgba8UnormSrgb,
            TextureDimension::D2,
            4,
            4,
            1,
            1,
        );
        let c = layout(TextureFormat::R8Unorm, TextureDimension::D2, 4, 4, 1, 1);
        let region = TextureCopy {
            src_base: TextureCopyBase::default(),
            dst_base: TextureCopyBase {
                origin: Origin3d { x: 1, y: 1, z: 0 },
                ..Default::default()
            },
            size: Extent3d {
                width: 3,
                height: 3,
                depth_or_array_layers: 1,
            },
        };
        let plan = plan_texture_texture(&a, &b, &region).expect("test fixture");
        assert_eq!(runs(&plan), vec![(0, 20, 12), (16, 36, 12), (32, 52, 12)]);
        assert_eq!(
            plan_texture_texture(&a, &c, &region),
            Err(CopyError::Incompatible)
        );
    }
}
