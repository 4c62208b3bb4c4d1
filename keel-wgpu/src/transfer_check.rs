//! The checks wgpu-core makes on copies between buffers and textures
//! (`command/transfer.rs`, `command/clear.rs`, `device/queue.rs`), one
//! function each, made where wgpu-core makes them: the copy commands check
//! while recorded (reported at `finish`), `Queue::write_texture` at the
//! call. The region's own check (mip level, whole blocks, bounds) is
//! [`Texture::check_copy`].

use crate::resource::{Buffer, Texture};

/// wgpu's words for a resource without the usage a copy needs.
fn missing_usage(
    what: String,
    actual: impl std::fmt::Debug,
    expected: impl std::fmt::Debug,
) -> String {
    crate::pass_check::missing_usage(what, actual, expected)
}

/// The aspects `aspect` selects of `format`, as a count (wgpu-hal's
/// `FormatAspects::new`): 0 when the format lacks it.
fn aspect_count(format: wgpu::TextureFormat, aspect: wgpu::TextureAspect) -> u32 {
    use wgpu::TextureAspect as A;
    let planes = format.planes().unwrap_or(0);
    match aspect {
        A::All => {
            if planes > 0 {
                planes
            } else {
                u32::from(format.has_color_aspect())
                    + u32::from(format.has_depth_aspect())
                    + u32::from(format.has_stencil_aspect())
            }
        }
        A::DepthOnly => u32::from(format.has_depth_aspect()),
        A::StencilOnly => u32::from(format.has_stencil_aspect()),
        A::Plane0 => u32::from(planes >= 1),
        A::Plane1 => u32::from(planes >= 2),
        A::Plane2 => u32::from(planes >= 3),
    }
}

/// The aspect of a copy exists in the texture's format (wgpu-core's
/// `extract_texture_selector`: `InvalidTextureAspect`).
pub(crate) fn check_copy_aspect(
    texture: &Texture,
    aspect: wgpu::TextureAspect,
) -> Result<(), String> {
    if aspect_count(texture.format, aspect) == 0 {
        return Err(format!(
            "Unable to select texture aspect {aspect:?} from format {:?}",
            texture.format
        ));
    }
    Ok(())
}

/// Depth-stencil and multisampled textures copy whole mip levels in x and
/// y (wgpu-core's `validate_texture_copy_range`:
/// `UnsupportedPartialTransfer`).
pub(crate) fn check_whole_level(
    texture: &Texture,
    info: &wgpu::TexelCopyTextureInfo<'_>,
    size: &wgpu::Extent3d,
) -> Result<(), String> {
    if !texture.format.is_depth_stencil_format() && texture.sample_count == 1 {
        return Ok(());
    }
    let level = texture.physical_mip_size(info.mip_level);
    if info.origin.x != 0
        || info.origin.y != 0
        || size.width != level.width
        || size.height != level.height
    {
        return Err(format!(
            "Partial copy of {:?}..{:?} on {} (format {:?}, sample count {}) is not supported: \
             its copies span whole mip levels",
            (info.origin.x, info.origin.y),
            (
                info.origin.x.saturating_add(size.width),
                info.origin.y.saturating_add(size.height)
            ),
            texture.ident(),
            texture.format,
            texture.sample_count
        ));
    }
    Ok(())
}

/// The formats and aspects a texture-to-buffer copy may read (wgpu-core's
/// `validate_texture_copy_src_format`).
pub(crate) fn check_copy_src_format(
    format: wgpu::TextureFormat,
    aspect: wgpu::TextureAspect,
) -> Result<(), String> {
    use wgpu::TextureAspect as A;
    use wgpu::TextureFormat as F;
    match (format, aspect) {
        (F::Depth24Plus, _) | (F::Depth24PlusStencil8, A::DepthOnly) => Err(format!(
            "Copying from textures with format {format:?} and aspect {aspect:?} is forbidden"
        )),
        _ => Ok(()),
    }
}

/// The formats and aspects a copy or write into a texture may write
/// (wgpu-core's `validate_texture_copy_dst_format`).
pub(crate) fn check_copy_dst_format(
    format: wgpu::TextureFormat,
    aspect: wgpu::TextureAspect,
) -> Result<(), String> {
    use wgpu::TextureAspect as A;
    use wgpu::TextureFormat as F;
    match (format, aspect) {
        (F::Depth24Plus | F::Depth32Float, _)
        | (F::Depth24PlusStencil8 | F::Depth32FloatStencil8, A::DepthOnly) => Err(format!(
            "Copying to textures with format {format:?} and aspect {aspect:?} is forbidden"
        )),
        _ => Ok(()),
    }
}

/// The texture side of a buffer-texture copy (wgpu-core's
/// `validate_texture_buffer_copy`): single-sampled, one aspect, and when
/// `aligned` (copies; not `write_texture`) a buffer offset of whole texel
/// blocks (4 bytes for depth-stencil) and a `bytes_per_row` multiple of
/// 256.
pub(crate) fn check_texture_buffer_copy(
    texture: &Texture,
    aspect: wgpu::TextureAspect,
    layout: &wgpu::TexelCopyBufferLayout,
    aligned: bool,
) -> Result<(), String> {
    if texture.sample_count != 1 {
        return Err(format!(
            "Copy sample count is invalid: {}",
            texture.sample_count
        ));
    }
    if aspect_count(texture.format, aspect) != 1 {
        return Err("Copy must be from/to a single aspect of the texture".into());
    }
    let alignment = if texture.format.is_depth_stencil_format() {
        4
    } else {
        texture.format.block_copy_size(Some(aspect)).unwrap_or(1)
    };
    if aligned && !layout.offset.is_multiple_of(u64::from(alignment.max(1))) {
        return Err(format!(
            "Buffer offset {} is not aligned to block size or `COPY_BUFFER_ALIGNMENT`",
            layout.offset
        ));
    }
    if let Some(bytes_per_row) = layout.bytes_per_row {
        if aligned && bytes_per_row % wgpu::COPY_BYTES_PER_ROW_ALIGNMENT != 0 {
            return Err(format!(
                "Copy bytes per row {bytes_per_row} is not a multiple of \
                 `COPY_BYTES_PER_ROW_ALIGNMENT` {}",
                wgpu::COPY_BYTES_PER_ROW_ALIGNMENT
            ));
        }
    }
    Ok(())
}

/// WebGPU's "validating linear texture data" (wgpu-core's
/// `validate_linear_texture_data`): whole blocks, `bytes_per_row` and
/// `rows_per_image` given where the copy has several rows or images and
/// large enough, and the bytes the copy spans inside `buffer_size`.
pub(crate) fn check_linear_data(
    layout: &wgpu::TexelCopyBufferLayout,
    format: wgpu::TextureFormat,
    aspect: wgpu::TextureAspect,
    buffer_size: u64,
    side: &str,
    size: &wgpu::Extent3d,
) -> Result<(), String> {
    // `get_buffer_texture_copy_info` needs a copyable format and aspect.
    if format.block_copy_size(Some(aspect)).is_none() {
        return Err(format!(
            "Format {format:?} with aspect {aspect:?} cannot be copied"
        ));
    }
    let info = layout
        .get_buffer_texture_copy_info(format, aspect, size)
        .map_err(|e| format!("Invalid copy layout {layout:?} for {size:?}: {e:?}"))?;
    if !info.copy_width.is_multiple_of(info.block_width_texels) {
        return Err("Copy width is not a multiple of block width".into());
    }
    if !info.copy_height.is_multiple_of(info.block_height_texels) {
        return Err("Copy height is not a multiple of block height".into());
    }
    let multiple_rows = info.depth_or_array_layers > 1 || info.height_blocks > 1;
    if layout.bytes_per_row.is_none() && multiple_rows {
        return Err("The number of bytes per row needs to be specified".into());
    }
    if layout.rows_per_image.is_none() && info.depth_or_array_layers > 1 {
        return Err("The number of rows per image needs to be specified".into());
    }
    if info.offset > buffer_size {
        return Err(format!(
            "Copy starts at byte {} of the {side} of size {buffer_size}",
            info.offset
        ));
    }
    if info.bytes_in_copy > buffer_size - info.offset {
        return Err(format!(
            "The copy reads past the {side}: {} bytes at offset {} would end up overrunning \
             the bounds of the {side} of size {buffer_size}",
            info.bytes_in_copy, info.offset
        ));
    }
    Ok(())
}

/// A buffer-texture copy's checks after the texture region's own, in
/// wgpu-core's order (`copy_buffer_to_texture`, `copy_texture_to_buffer`):
/// the aspect, the usages, the format's copyability in that direction,
/// the texture-side rules and the linear data in the buffer.
pub(crate) fn check_buffer_texture_copy(
    buffer: &Buffer,
    layout: &wgpu::TexelCopyBufferLayout,
    texture: &Texture,
    info: &wgpu::TexelCopyTextureInfo<'_>,
    size: &wgpu::Extent3d,
    to_texture: bool,
) -> Result<(), String> {
    check_whole_level(texture, info, size)?;
    check_copy_aspect(texture, info.aspect)?;
    let (buffer_usage, texture_usage) = if to_texture {
        (wgpu::BufferUsages::COPY_SRC, wgpu::TextureUsages::COPY_DST)
    } else {
        (wgpu::BufferUsages::COPY_DST, wgpu::TextureUsages::COPY_SRC)
    };
    if !buffer.usage.contains(buffer_usage) {
        return Err(missing_usage(buffer.ident(), buffer.usage, buffer_usage));
    }
    if !texture.usage.contains(texture_usage) {
        return Err(missing_usage(texture.ident(), texture.usage, texture_usage));
    }
    if to_texture {
        check_copy_dst_format(texture.format, info.aspect)?;
    } else {
        check_copy_src_format(texture.format, info.aspect)?;
    }
    check_texture_buffer_copy(texture, info.aspect, layout, true)?;
    let side = if to_texture {
        "source buffer"
    } else {
        "destination buffer"
    };
    check_linear_data(layout, texture.format, info.aspect, buffer.size, side, size)
}

/// A texture-to-texture copy's checks after each region's own (wgpu-core's
/// `copy_texture_to_texture`): copy-compatible formats (equal but for
/// sRGB), disjoint subresources within one texture, every aspect of each
/// format, equal sample counts, the usages.
pub(crate) fn check_texture_texture_copy(
    src: &Texture,
    src_info: &wgpu::TexelCopyTextureInfo<'_>,
    dst: &Texture,
    dst_info: &wgpu::TexelCopyTextureInfo<'_>,
    size: &wgpu::Extent3d,
) -> Result<(), String> {
    if src.format.remove_srgb_suffix() != dst.format.remove_srgb_suffix() {
        return Err(format!(
            "Source format ({:?}) and destination format ({:?}) are not copy-compatible (they \
             may only differ in srgb-ness)",
            src.format, dst.format
        ));
    }
    check_whole_level(src, src_info, size)?;
    check_whole_level(dst, dst_info, size)?;
    if std::ptr::eq(src, dst) && src_info.mip_level == dst_info.mip_level {
        let layers = match src.dimension {
            wgpu::TextureDimension::D2 => size.depth_or_array_layers,
            _ => 1,
        };
        let (a, b) = (src_info.origin.z, dst_info.origin.z);
        let disjoint = a >= b.saturating_add(layers) || b >= a.saturating_add(layers);
        let aspects_meet = aspect_count(src.format, src_info.aspect) > 0
            && aspect_count(src.format, dst_info.aspect) > 0
            && (src_info.aspect == dst_info.aspect
                || src_info.aspect == wgpu::TextureAspect::All
                || dst_info.aspect == wgpu::TextureAspect::All);
        if aspects_meet && !disjoint {
            return Err(format!(
                "Source and destination ranges overlap on the same subresources of {}",
                src.ident()
            ));
        }
    }
    check_copy_aspect(src, src_info.aspect)?;
    check_copy_aspect(dst, dst_info.aspect)?;
    let all = |t: &Texture, aspect| {
        aspect_count(t.format, aspect) == aspect_count(t.format, wgpu::TextureAspect::All)
    };
    if !all(src, src_info.aspect) {
        return Err(
            "Source texture aspects must refer to all aspects of the source texture format".into(),
        );
    }
    if !all(dst, dst_info.aspect) {
        return Err("Destination texture aspects must refer to all aspects of the destination texture format".into());
    }
    if src.sample_count != dst.sample_count {
        return Err(format!(
            "Source sample count ({}) and destination sample count ({}) are not equal",
            src.sample_count, dst.sample_count
        ));
    }
    if !src.usage.contains(wgpu::TextureUsages::COPY_SRC) {
        return Err(missing_usage(
            src.ident(),
            src.usage,
            wgpu::TextureUsages::COPY_SRC,
        ));
    }
    if !dst.usage.contains(wgpu::TextureUsages::COPY_DST) {
        return Err(missing_usage(
            dst.ident(),
            dst.usage,
            wgpu::TextureUsages::COPY_DST,
        ));
    }
    Ok(())
}

/// `Queue::write_texture`'s checks after the region's (wgpu-core's
/// `queue_write_texture`): the aspect, `COPY_DST`, the format's
/// copyability, the texture-side rules without alignment, the data.
pub(crate) fn check_write_texture(
    texture: &Texture,
    info: &wgpu::TexelCopyTextureInfo<'_>,
    layout: &wgpu::TexelCopyBufferLayout,
    data_len: usize,
    size: &wgpu::Extent3d,
) -> Result<(), String> {
    check_whole_level(texture, info, size)?;
    check_copy_aspect(texture, info.aspect)?;
    if !texture.usage.contains(wgpu::TextureUsages::COPY_DST) {
        return Err(missing_usage(
            texture.ident(),
            texture.usage,
            wgpu::TextureUsages::COPY_DST,
        ));
    }
    check_copy_dst_format(texture.format, info.aspect)?;
    check_texture_buffer_copy(texture, info.aspect, layout, false)?;
    check_linear_data(
        layout,
        texture.format,
        info.aspect,
        data_len as u64,
        "data",
        size,
    )
}
