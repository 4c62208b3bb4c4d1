//! Copy regions in Vulkan terms: where each side of a texture copy lies,
//! the copy extent, and buffer ↔ image regions (with their bounds checked
//! by `bounds.rs`). Used by the copy commands of `command.rs`.

use ash::vk;

use super::{bounds, conv, Buffer, Texture};
use crate::{BufferTextureCopy, TextureCopyBase};

/// Where one side of a texture copy lies. For D3 textures the copy's depth is
/// depth (one layer, `origin.z` picks the slice); otherwise it is the layer
/// count, starting at `base.array_layer`.
pub(super) fn image_side(
    texture: &Texture,
    base: &TextureCopyBase,
    depth_or_layers: u32,
) -> (vk::ImageSubresourceLayers, vk::Offset3D) {
    let is_3d = texture.dimension == wgt::TextureDimension::D3;
    let subresource = vk::ImageSubresourceLayers {
        aspect_mask: conv::map_aspect(texture.format, base.aspect),
        mip_level: base.mip_level,
        base_array_layer: base.array_layer,
        layer_count: if is_3d { 1 } else { depth_or_layers },
    };
    let origin = if is_3d {
        base.origin
    } else {
        wgt::Origin3d {
            z: 0,
            ..base.origin
        }
    };
    (subresource, conv::map_origin(origin))
}

/// The extent of a copy. Its depth is a depth only when a texture it
/// touches is 3D (a 2D-array ↔ 3D copy maps layers to slices).
pub(super) fn copy_extent(size: wgt::Extent3d, any_3d: bool) -> vk::Extent3D {
    vk::Extent3D {
        depth: if any_3d {
            size.depth_or_array_layers
        } else {
            1
        },
        ..conv::map_extent(size)
    }
}

/// A buffer ↔ image region, or `None` (logged) when it is one Vulkan cannot
/// take: an aspect that is not exactly one of the format's aspects (a
/// depth-stencil copy names depth or stencil), or a region outside the
/// texture or the buffer. `bytes_per_row` counts bytes and `rows_per_image`
/// rows of blocks; Vulkan wants both in texels.
pub(super) fn buffer_image_copy(
    what: &str,
    texture: &Texture,
    buffer: &Buffer,
    region: &BufferTextureCopy,
) -> Option<vk::BufferImageCopy> {
    let base = &region.texture_base;
    let (image_subresource, image_offset) =
        image_side(texture, base, region.size.depth_or_array_layers);
    if image_subresource.aspect_mask.as_raw().count_ones() != 1 {
        crate::refusal::refused!(
            "keel-hal: {what}: aspect {:?} of {:?} is not exactly one aspect; region skipped",
            base.aspect,
            texture.format
        );
        return None;
    }
    let (block_width, block_height) = texture.format.block_dimensions();
    // wgpu-types has no size for the depth of `Depth24Plus*` (its Vulkan
    // format varies); every Vulkan format it maps to copies depth as 4 bytes.
    let block_size = texture
        .format
        .block_copy_size(Some(base.aspect))
        .unwrap_or(4);
    let layout = &region.buffer_layout;
    let in_buffer = bounds::buffer_footprint_end(texture, region, block_size)
        .is_some_and(|end| end <= buffer.size);
    if !bounds::texture_region_fits(texture, base, region.size) || !in_buffer {
        crate::refusal::refused!(
            "keel-hal: {what}: region {:?} at {:?} (buffer offset {}) is outside the texture \
             or the buffer of {} bytes; skipped",
            region.size,
            base,
            layout.offset,
            buffer.size
        );
        return None;
    }
    Some(vk::BufferImageCopy {
        buffer_offset: layout.offset,
        buffer_row_length: layout.bytes_per_row.map_or(0, |bytes| {
            (bytes.checked_div(block_size).unwrap_or(0)).saturating_mul(block_width)
        }),
        buffer_image_height: layout
            .rows_per_image
            .map_or(0, |rows| rows.saturating_mul(block_height)),
        image_subresource,
        image_offset,
        image_extent: copy_extent(
            bounds::clamp_to_level(texture, base, region.size),
            texture.dimension == wgt::TextureDimension::D3,
        ),
    })
}
