//! Shared helpers: byte patterns, staging buffers, one-shot submissions,
//! barriers, and texel blocks with their 256-byte-row staging layout.
//!
//! State conventions used by every test: a buffer written by the CPU is
//! moved `empty → COPY_SRC`; a readback buffer `empty → COPY_DST` before the
//! GPU writes it and `COPY_DST → MAP_READ` after; [`write_texture`] leaves a
//! texture in `COPY_SRC`, which is what [`read_texture`] expects.

use keel_hal::wgt;
use keel_hal::{
    Api, BufferBarrier, BufferDescriptor, BufferTextureCopy, BufferUses, CommandEncoder,
    CommandEncoderDescriptor, Device, Memory, Queue, StateTransition, TextureBarrier,
    TextureCopyBase, TextureDescriptor, TextureUses,
};

use crate::harness::{Ctx, Failure};

/// Fills readback buffers before the GPU writes them; [`pattern`] never produces it.
pub const SENTINEL: u8 = 0xFD;
/// Fills the padding at the end of staged texel rows; never compared.
pub const PADDING: u8 = 0xFE;
/// Row pitch alignment used for every buffer ↔ texture copy.
pub const ROW_ALIGN: u64 = 256;

/// `len` bytes of `(i * 7 + 3 + seed * 31) mod 251`: never [`SENTINEL`],
/// and with a period (251) that no power-of-two offset error can hide behind.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    (0..len as u64)
        .map(|i| ((i * 7 + 3 + seed * 31) % 251) as u8)
        .collect()
}

/// Rounds `value` up to a multiple of `align`.
pub fn align_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align) * align
}

/// Compares bytes, naming the first difference (not dumping megabytes).
pub fn compare(got: &[u8], expected: &[u8], what: &str) -> Result<(), Failure> {
    if got.len() != expected.len() {
        return Err(format!("{what}: length {} instead of {}", got.len(), expected.len()).into());
    }
    match got.iter().zip(expected).position(|(g, e)| g != e) {
        None => Ok(()),
        Some(i) => {
            let bad = got.iter().zip(expected).filter(|(g, e)| g != e).count();
            Err(format!(
                "{what}: byte {i} is {:#04x}, expected {:#04x} ({bad} of {} bytes differ)",
                got[i],
                expected[i],
                got.len()
            )
            .into())
        }
    }
}

/// A buffer barrier.
pub fn buffer_barrier<B: ?Sized>(
    buffer: &B,
    from: BufferUses,
    to: BufferUses,
) -> BufferBarrier<'_, B> {
    BufferBarrier {
        buffer,
        usage: StateTransition { from, to },
    }
}

/// A barrier on every subresource of a texture.
pub fn texture_barrier<T: ?Sized>(
    texture: &T,
    from: TextureUses,
    to: TextureUses,
) -> TextureBarrier<'_, T> {
    TextureBarrier {
        texture,
        range: wgt::ImageSubresourceRange::default(),
        usage: StateTransition { from, to },
    }
}

/// Creates a buffer.
///
/// # Safety
/// `ctx.device` is live; the caller destroys the buffer.
pub unsafe fn create_buffer<A: Api>(
    ctx: &Ctx<A>,
    size: u64,
    usage: wgt::BufferUsages,
    memory: Memory,
) -> Result<A::Buffer, Failure> {
    let desc = BufferDescriptor {
        label: Some("conformance"),
        size,
        usage,
        memory,
    };
    // SAFETY: live device.
    Ok(unsafe { ctx.device.create_buffer(&desc) }?)
}

/// Writes `bytes` at `offset` through the buffer's mapping.
///
/// # Safety
/// The buffer is mappable, came from `ctx.device`, has room, and no pending
/// GPU work touches it.
pub unsafe fn write_mapped<A: Api>(
    ctx: &Ctx<A>,
    buffer: &A::Buffer,
    offset: u64,
    bytes: &[u8],
) -> Result<(), Failure> {
    // SAFETY: forwarded contract.
    let map = unsafe { ctx.device.map_buffer(buffer) }?;
    check!(
        offset + bytes.len() as u64 <= map.size,
        "write of {} bytes at {offset} past a mapping of {}",
        bytes.len(),
        map.size
    );
    // SAFETY: the range lies in the mapping (checked) and the GPU is not using it.
    unsafe {
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            map.ptr.as_ptr().add(offset as usize),
            bytes.len(),
        )
    };
    Ok(())
}

/// Reads every byte of a mappable buffer.
///
/// # Safety
/// The buffer is mappable, came from `ctx.device`, and no pending GPU work writes it.
pub unsafe fn read_mapped<A: Api>(ctx: &Ctx<A>, buffer: &A::Buffer) -> Result<Vec<u8>, Failure> {
    // SAFETY: forwarded contract.
    let map = unsafe { ctx.device.map_buffer(buffer) }?;
    // SAFETY: the mapping covers `size` bytes and nothing writes them now.
    let bytes = unsafe { std::slice::from_raw_parts(map.ptr.as_ptr(), map.size as usize) };
    Ok(bytes.to_vec())
}

/// An `Upload` buffer (`MAP_WRITE | COPY_SRC`) holding `bytes`.
///
/// # Safety
/// `ctx.device` is live; the caller destroys the buffer.
pub unsafe fn upload_buffer<A: Api>(ctx: &Ctx<A>, bytes: &[u8]) -> Result<A::Buffer, Failure> {
    let usage = wgt::BufferUsages::MAP_WRITE | wgt::BufferUsages::COPY_SRC;
    // SAFETY: forwarded contract.
    let buffer = unsafe { create_buffer(ctx, bytes.len() as u64, usage, Memory::Upload) }?;
    // SAFETY: fresh mappable buffer of this size, unknown to the GPU.
    if let Err(e) = unsafe { write_mapped(ctx, &buffer, 0, bytes) } {
        // SAFETY: never submitted.
        unsafe { ctx.device.destroy_buffer(buffer) };
        return Err(e);
    }
    Ok(buffer)
}

/// A `Readback` buffer (`MAP_READ | COPY_DST | QUERY_RESOLVE`) filled with [`SENTINEL`].
///
/// # Safety
/// `ctx.device` is live; the caller destroys the buffer.
pub unsafe fn readback_buffer<A: Api>(ctx: &Ctx<A>, size: u64) -> Result<A::Buffer, Failure> {
    let usage = wgt::BufferUsages::MAP_READ
        | wgt::BufferUsages::COPY_DST
        | wgt::BufferUsages::QUERY_RESOLVE;
    // SAFETY: forwarded contract.
    let buffer = unsafe { create_buffer(ctx, size, usage, Memory::Readback) }?;
    // SAFETY: fresh mappable buffer of this size, unknown to the GPU.
    if let Err(e) = unsafe { write_mapped(ctx, &buffer, 0, &vec![SENTINEL; size as usize]) } {
        // SAFETY: never submitted.
        unsafe { ctx.device.destroy_buffer(buffer) };
        return Err(e);
    }
    Ok(buffer)
}

/// A `Device` buffer usable as copy source and destination.
///
/// # Safety
/// `ctx.device` is live; the caller destroys the buffer.
pub unsafe fn device_buffer<A: Api>(ctx: &Ctx<A>, size: u64) -> Result<A::Buffer, Failure> {
    let usage = wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST;
    // SAFETY: forwarded contract.
    unsafe { create_buffer(ctx, size, usage, Memory::Device) }
}

/// Records with `record` on a fresh encoder, submits, waits for the fence,
/// and destroys encoder and fence again.
///
/// # Safety
/// Everything `record` uses came from `ctx.device`, is live, and is in the
/// states the recorded commands expect.
pub unsafe fn submit<A: Api>(
    ctx: &Ctx<A>,
    record: impl FnOnce(&mut A::CommandEncoder),
) -> Result<(), Failure> {
    let desc = CommandEncoderDescriptor {
        label: Some("conformance"),
    };
    // SAFETY: live device.
    let mut encoder = unsafe { ctx.device.create_command_encoder(&desc) }?;
    // SAFETY: forwarded contract; the encoder is destroyed only after the
    // fence wait (or when nothing was submitted).
    let result = unsafe { submit_with(ctx, &mut encoder, record) };
    // SAFETY: its command buffer was waited on or never submitted.
    unsafe { ctx.device.destroy_command_encoder(encoder) };
    result
}

/// [`submit`] on a given encoder, which is left idle with its command buffer reset.
///
/// # Safety
/// As [`submit`]; the encoder came from `ctx.device` and is not recording.
pub unsafe fn submit_with<A: Api>(
    ctx: &Ctx<A>,
    encoder: &mut A::CommandEncoder,
    record: impl FnOnce(&mut A::CommandEncoder),
) -> Result<(), Failure> {
    // SAFETY: the encoder is idle (contract).
    unsafe { encoder.begin_encoding(Some("conformance")) }?;
    record(encoder);
    // SAFETY: recording.
    let commands = unsafe { encoder.end_encoding() }?;
    // SAFETY: live device.
    let fence = match unsafe { ctx.device.create_fence() } {
        Ok(fence) => fence,
        Err(e) => {
            // SAFETY: never submitted.
            unsafe { encoder.reset_all([commands]) };
            return Err(e.into());
        }
    };
    // SAFETY: commands and fence come from this device; the fence is new (0 < 1).
    let done = unsafe { ctx.queue.submit(&[&commands], &[], &fence, 1) }
        // SAFETY: the submission above signals 1.
        .and_then(|()| unsafe { ctx.device.wait(&fence, 1, None) });
    // SAFETY: waited on (or the submit failed and nothing is pending).
    unsafe {
        ctx.device.destroy_fence(fence);
        encoder.reset_all([commands]);
    }
    check!(
        done?,
        "an unbounded wait returned without the fence reaching 1"
    );
    Ok(())
}

/// A 2D (or 2D array) texture description usable as copy source and destination.
pub fn texture_desc(
    format: wgt::TextureFormat,
    width: u32,
    height: u32,
    layers: u32,
    mip_level_count: u32,
) -> TextureDescriptor<'static> {
    TextureDescriptor {
        label: Some("conformance"),
        size: wgt::Extent3d {
            width,
            height,
            depth_or_array_layers: layers,
        },
        mip_level_count,
        sample_count: 1,
        dimension: wgt::TextureDimension::D2,
        format,
        usage: wgt::TextureUsages::COPY_SRC | wgt::TextureUsages::COPY_DST,
        memory: Memory::Device,
        view_formats: &[],
    }
}

/// A copy corner at a mip level, layer and origin.
pub fn base(mip_level: u32, array_layer: u32, x: u32, y: u32, z: u32) -> TextureCopyBase {
    TextureCopyBase {
        mip_level,
        array_layer,
        origin: wgt::Origin3d { x, y, z },
        aspect: wgt::TextureAspect::All,
    }
}

/// A block of texels, tightly packed (`data`), and its staging layout
/// with rows padded to [`ROW_ALIGN`] bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Texels {
    /// Texels per row.
    pub width: u32,
    /// Rows per image.
    pub height: u32,
    /// Images (depth slices or array layers).
    pub depth: u32,
    /// Bytes per texel.
    pub texel_size: u32,
    /// `width * height * depth * texel_size` bytes, row-major, image by image.
    pub data: Vec<u8>,
}

impl Texels {
    /// A block filled with [`pattern`]`(seed)`.
    pub fn pattern(width: u32, height: u32, depth: u32, texel_size: u32, seed: u64) -> Self {
        let len = (width * height * depth * texel_size) as usize;
        Self::from_data(width, height, depth, texel_size, pattern(len, seed))
    }

    /// A block holding `data` (its length must match).
    pub fn from_data(width: u32, height: u32, depth: u32, texel_size: u32, data: Vec<u8>) -> Self {
        assert_eq!(data.len(), (width * height * depth * texel_size) as usize);
        Self {
            width,
            height,
            depth,
            texel_size,
            data,
        }
    }

    /// The extent, in texels.
    pub fn extent(&self) -> wgt::Extent3d {
        wgt::Extent3d {
            width: self.width,
            height: self.height,
            depth_or_array_layers: self.depth,
        }
    }

    fn row_bytes(&self) -> usize {
        (self.width * self.texel_size) as usize
    }

    /// Bytes per staged row: the row, padded to [`ROW_ALIGN`].
    pub fn bytes_per_row(&self) -> u32 {
        align_up(self.row_bytes() as u64, ROW_ALIGN) as u32
    }

    /// Bytes the staged block takes.
    pub fn staging_size(&self) -> u64 {
        self.bytes_per_row() as u64 * (self.height * self.depth) as u64
    }

    /// The staged bytes: each row followed by [`PADDING`] up to the row pitch.
    pub fn staged(&self) -> Vec<u8> {
        let mut out = vec![PADDING; self.staging_size() as usize];
        let pitch = self.bytes_per_row() as usize;
        for (row, bytes) in self.data.chunks(self.row_bytes()).enumerate() {
            out[row * pitch..row * pitch + bytes.len()].copy_from_slice(bytes);
        }
        out
    }

    /// The tight texels of a staged block shaped like this one (padding ignored).
    pub fn unstage(&self, staged: &[u8]) -> Vec<u8> {
        let pitch = self.bytes_per_row() as usize;
        (0..(self.height * self.depth) as usize)
            .flat_map(|row| {
                staged[row * pitch..row * pitch + self.row_bytes()]
                    .iter()
                    .copied()
            })
            .collect()
    }

    /// A copy region for this block staged at `offset`, landing at `base`.
    pub fn region(&self, offset: u64, base: TextureCopyBase) -> BufferTextureCopy {
        BufferTextureCopy {
            buffer_layout: wgt::TexelCopyBufferLayout {
                offset,
                bytes_per_row: Some(self.bytes_per_row()),
                rows_per_image: Some(self.height),
            },
            texture_base: base,
            size: self.extent(),
        }
    }

    fn index(&self, x: u32, y: u32, z: u32) -> usize {
        (((z * self.height + y) * self.width + x) * self.texel_size) as usize
    }

    /// The sub-block of `size` at `(x, y, z)`.
    pub fn sub(&self, (x, y, z): (u32, u32, u32), size: (u32, u32, u32)) -> Texels {
        let mut data = Vec::new();
        for dz in 0..size.2 {
            for dy in 0..size.1 {
                let start = self.index(x, y + dy, z + dz);
                data.extend_from_slice(
                    &self.data[start..start + (size.0 * self.texel_size) as usize],
                );
            }
        }
        Texels::from_data(size.0, size.1, size.2, self.texel_size, data)
    }

    /// Overwrites the texels at `(x, y, z)` with `block`.
    pub fn paste(&mut self, block: &Texels, (x, y, z): (u32, u32, u32)) {
        let row = (block.width * block.texel_size) as usize;
        for dz in 0..block.depth {
            for dy in 0..block.height {
                let to = self.index(x, y + dy, z + dz);
                let from = block.index(0, dy, dz);
                self.data[to..to + row].copy_from_slice(&block.data[from..from + row]);
            }
        }
    }
}

/// Uploads `texels` and copies them to `base` of `texture`, moving the
/// whole texture `from → COPY_DST` before and `COPY_DST → COPY_SRC` after.
///
/// # Safety
/// The texture came from `ctx.device`, is idle, and is really in `from`.
pub unsafe fn write_texture<A: Api>(
    ctx: &Ctx<A>,
    texture: &A::Texture,
    from: TextureUses,
    texels: &Texels,
    base: TextureCopyBase,
) -> Result<(), Failure> {
    // SAFETY: live device.
    let staging = unsafe { upload_buffer(ctx, &texels.staged()) }?;
    // SAFETY: texture and staging are live and idle, in the states named.
    let result = unsafe {
        submit(ctx, |enc| {
            enc.transition_buffers(&[buffer_barrier(
                &staging,
                BufferUses::empty(),
                BufferUses::COPY_SRC,
            )]);
            enc.transition_textures(&[texture_barrier(texture, from, TextureUses::COPY_DST)]);
            enc.copy_buffer_to_texture(&staging, texture, &[texels.region(0, base)]);
            enc.transition_textures(&[texture_barrier(
                texture,
                TextureUses::COPY_DST,
                TextureUses::COPY_SRC,
            )]);
        })
    };
    // SAFETY: the submission was waited on.
    unsafe { ctx.device.destroy_buffer(staging) };
    result
}

/// Reads a `size` block at `base` of `texture` (in `COPY_SRC`) back as tight texels.
///
/// # Safety
/// The texture came from `ctx.device`, is idle, and is in `COPY_SRC`.
pub unsafe fn read_texture<A: Api>(
    ctx: &Ctx<A>,
    texture: &A::Texture,
    base: TextureCopyBase,
    size: (u32, u32, u32),
    texel_size: u32,
) -> Result<Vec<u8>, Failure> {
    let shape = Texels::from_data(
        size.0,
        size.1,
        size.2,
        texel_size,
        vec![0; (size.0 * size.1 * size.2 * texel_size) as usize],
    );
    // SAFETY: live device.
    let readback = unsafe { readback_buffer(ctx, shape.staging_size()) }?;
    // SAFETY: texture and readback are live and idle, in the states named.
    let result = unsafe {
        submit(ctx, |enc| {
            enc.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::empty(),
                BufferUses::COPY_DST,
            )]);
            enc.copy_texture_to_buffer(
                texture,
                TextureUses::COPY_SRC,
                &readback,
                &[shape.region(0, base)],
            );
            enc.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::COPY_DST,
                BufferUses::MAP_READ,
            )]);
        })
    }
    // SAFETY: the submission was waited on; nothing writes the buffer now.
    .and_then(|()| unsafe { read_mapped(ctx, &readback) });
    // SAFETY: idle.
    unsafe { ctx.device.destroy_buffer(readback) };
    Ok(shape.unstage(&result?))
}
