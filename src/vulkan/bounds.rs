//! Recording-time bounds checks (docs/design.md §1, §11.2).
//!
//! Buffers know their size, textures their extent and query sets their
//! count, so a region that falls outside its resource is caught while
//! recording, with a few comparisons per region, instead of reaching the
//! driver. The encoder logs and skips such a region (recording calls are
//! `void`), as the noop backend does. Alignment and usage-state rules stay
//! the caller's (the trait contract).

use std::ops::Range;

use super::{Buffer, QuerySet, Texture};
use crate::{BufferCopy, BufferTextureCopy, TextureCopyBase};

/// Whether `offset..offset + len` lies in a resource of `size` bytes.
pub(super) fn byte_range_fits(size: u64, offset: u64, len: u64) -> bool {
    offset.checked_add(len).is_some_and(|end| end <= size)
}

/// Whether a buffer-to-buffer region lies inside both buffers.
pub(super) fn buffer_copy_fits(src: &Buffer, dst: &Buffer, region: &BufferCopy) -> bool {
    byte_range_fits(src.size, region.src_offset, region.size)
        && byte_range_fits(dst.size, region.dst_offset, region.size)
}

/// Whether `range` names queries of `set`.
pub(super) fn query_range_fits(set: &QuerySet, range: &Range<u32>) -> bool {
    range.start <= range.end && range.end <= set.count
}

/// Whether a barrier's subresource range lies in the texture (open counts
/// mean "the rest", which is never empty past a valid base).
pub(super) fn barrier_range_fits(texture: &Texture, range: &wgt::ImageSubresourceRange) -> bool {
    let layers = if texture.dimension == wgt::TextureDimension::D3 {
        1
    } else {
        texture.size.depth_or_array_layers
    };
    let fits = |base: u32, count: Option<u32>, total: u32| match count {
        None => base < total,
        Some(count) => count > 0 && base.checked_add(count).is_some_and(|end| end <= total),
    };
    fits(
        range.base_mip_level,
        range.mip_level_count,
        texture.mip_level_count,
    ) && fits(range.base_array_layer, range.array_layer_count, layers)
}

/// The width and height of `base`'s mip level (of its plane, for a chroma
/// plane) in texels: the logical size.
fn level_size(texture: &Texture, base: &TextureCopyBase) -> (u32, u32) {
    let level = |full: u32| (full >> base.mip_level).max(1);
    let s = texture.size;
    let height = if texture.dimension == wgt::TextureDimension::D1 {
        1
    } else {
        level(s.height)
    };
    // A chroma plane is smaller than the texture.
    let (across, down) = crate::validate::texture::plane_subsampling(texture.format, base.aspect);
    (level(s.width) / across.max(1), height / down.max(1))
}

/// Whether a copy of `size` at `base` lies inside the texture: the mip
/// level exists, and the origin plus size fits that level's physical
/// extent (wgpu's rule: the logical size rounded up to whole texel blocks,
/// so the 1×1 mip of a BC texture copies as 4×4), and its layers, for
/// non-3D textures. Vulkan takes the copy clamped to the logical size
/// ([`clamp_to_level`]).
pub(super) fn texture_region_fits(
    texture: &Texture,
    base: &TextureCopyBase,
    size: wgt::Extent3d,
) -> bool {
    if base.mip_level >= texture.mip_level_count {
        return false;
    }
    let fits =
        |origin: u32, len: u32, total: u32| origin.checked_add(len).is_some_and(|e| e <= total);
    let (z, depth) = if texture.dimension == wgt::TextureDimension::D3 {
        (
            base.origin.z,
            (texture.size.depth_or_array_layers >> base.mip_level).max(1),
        )
    } else {
        (base.array_layer, texture.size.depth_or_array_layers)
    };
    let (width, height) = level_size(texture, base);
    let (block_width, block_height) = texture.format.block_dimensions();
    fits(
        base.origin.x,
        size.width,
        width.next_multiple_of(block_width.max(1)),
    ) && fits(
        base.origin.y,
        size.height,
        height.next_multiple_of(block_height.max(1)),
    ) && fits(z, size.depth_or_array_layers, depth)
}

/// `size` (at `base`, checked by [`texture_region_fits`]) clamped to the
/// level's logical size, as Vulkan wants a copy that reaches the edge of a
/// block-compressed level (`VUID-VkBufferImageCopy-imageExtent-00207`):
/// the same texels as the physical size names.
pub(super) fn clamp_to_level(
    texture: &Texture,
    base: &TextureCopyBase,
    size: wgt::Extent3d,
) -> wgt::Extent3d {
    let (width, height) = level_size(texture, base);
    wgt::Extent3d {
        width: size.width.min(width.saturating_sub(base.origin.x)),
        height: size.height.min(height.saturating_sub(base.origin.y)),
        depth_or_array_layers: size.depth_or_array_layers,
    }
}

/// Bytes a buffer ↔ texture region touches in the buffer, counted from 0
/// (so: its end offset), or `None` on overflow. `block_size` is the copy
/// size of one texel block of the aspect copied.
pub(super) fn buffer_footprint_end(
    texture: &Texture,
    region: &BufferTextureCopy,
    block_size: u32,
) -> Option<u64> {
    let (block_width, block_height) = texture.format.block_dimensions();
    let size = region.size;
    let layout = &region.buffer_layout;
    if size.width == 0 || size.height == 0 || size.depth_or_array_layers == 0 {
        return Some(layout.offset);
    }
    let blocks_wide = u64::from(size.width.div_ceil(block_width.max(1)));
    let rows = u64::from(size.height.div_ceil(block_height.max(1)));
    let row_bytes = blocks_wide.checked_mul(u64::from(block_size))?;
    let bytes_per_row = layout.bytes_per_row.map_or(row_bytes, u64::from);
    let rows_per_image = layout.rows_per_image.map_or(rows, u64::from);
    let images = u64::from(size.depth_or_array_layers);
    let image_bytes = rows_per_image.checked_mul(bytes_per_row)?;
    (images - 1)
        .checked_mul(image_bytes)?
        .checked_add((rows - 1).checked_mul(bytes_per_row)?)?
        .checked_add(row_bytes)?
        .checked_add(layout.offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_ranges() {
        assert!(byte_range_fits(16, 0, 16));
        assert!(byte_range_fits(16, 16, 0));
        assert!(!byte_range_fits(16, 8, 9));
        assert!(!byte_range_fits(16, u64::MAX, 2));
    }

    fn texture(dimension: wgt::TextureDimension, depth_or_layers: u32) -> Texture {
        super::super::raw::tests::texture(&crate::TextureDescriptor {
            size: wgt::Extent3d {
                width: 16,
                height: 8,
                depth_or_array_layers: depth_or_layers,
            },
            mip_level_count: 2,
            dimension,
            ..Default::default()
        })
    }

    fn base(mip_level: u32, array_layer: u32, x: u32) -> TextureCopyBase {
        TextureCopyBase {
            mip_level,
            array_layer,
            origin: wgt::Origin3d { x, y: 0, z: 0 },
            aspect: wgt::TextureAspect::All,
        }
    }

    #[test]
    fn texture_regions_stay_in_the_mip_and_layers() {
        let t = texture(wgt::TextureDimension::D2, 4);
        let size = |width, layers| wgt::Extent3d {
            width,
            height: 1,
            depth_or_array_layers: layers,
        };
        assert!(texture_region_fits(&t, &base(0, 0, 0), size(16, 4)));
        assert!(!texture_region_fits(&t, &base(0, 1, 0), size(16, 4)));
        assert!(texture_region_fits(&t, &base(1, 0, 4), size(4, 1)));
        assert!(!texture_region_fits(&t, &base(1, 0, 4), size(5, 1)));
        assert!(!texture_region_fits(&t, &base(2, 0, 0), size(1, 1)));
        let d3 = texture(wgt::TextureDimension::D3, 4);
        assert!(texture_region_fits(&d3, &base(1, 0, 0), size(8, 2)));
        assert!(!texture_region_fits(&d3, &base(1, 0, 0), size(8, 3)));
    }

    #[test]
    fn barrier_ranges() {
        let t = texture(wgt::TextureDimension::D2, 4);
        let range =
            |base_mip_level, mip_level_count, base_array_layer| wgt::ImageSubresourceRange {
                base_mip_level,
                mip_level_count,
                base_array_layer,
                ..Default::default()
            };
        assert!(barrier_range_fits(&t, &range(0, None, 0)));
        assert!(barrier_range_fits(&t, &range(1, Some(1), 3)));
        assert!(!barrier_range_fits(&t, &range(2, None, 0)));
        assert!(!barrier_range_fits(&t, &range(1, Some(2), 0)));
        assert!(!barrier_range_fits(&t, &range(0, Some(0), 0)));
        assert!(!barrier_range_fits(&t, &range(0, None, 4)));
    }

    #[test]
    fn buffer_footprints() {
        // Rgba8: 4 bytes a texel; 16 × 8 × 2 layers, rows padded to 256.
        let t = texture(wgt::TextureDimension::D2, 2);
        let region = BufferTextureCopy {
            buffer_layout: wgt::TexelCopyBufferLayout {
                offset: 512,
                bytes_per_row: Some(256),
                rows_per_image: Some(8),
            },
            texture_base: base(0, 0, 0),
            size: wgt::Extent3d {
                width: 16,
                height: 8,
                depth_or_array_layers: 2,
            },
        };
        // 512 + 1 image (8 rows × 256) + 7 rows × 256 + 64 bytes.
        assert_eq!(
            buffer_footprint_end(&t, &region, 4),
            Some(512 + 2048 + 1792 + 64)
        );
    }
}
