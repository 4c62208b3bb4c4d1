//! `wgpu::Queue` on keel-hal: writes through a recycled staging belt,
//! submits that replay recorded commands with the tracker's barriers, and
//! polling.

use std::sync::Arc;

use wgpu::custom as cu;

use crate::command::{Cmd, Encoded, Recording, TexelBase};
use crate::device::{create_staging, DeviceHandle};
use crate::error::KeelError;
use crate::handles::{KBuffer, KCommandBuffer, KTexture};
use crate::owner::{owned, same_device};
use crate::replay::Replay;
use crate::resource::{Buffer, Texture};
use crate::shared::{DeviceShared, InFlight};

/// The size of one staging chunk; larger writes get a chunk of their own.
const CHUNK: u64 = 1 << 20;
/// Free chunks kept for reuse; more are released.
const KEEP_FREE: usize = 4;
/// Free staging memory kept for reuse, in bytes: a chunk that would take
/// the free list past it is released once its submission is done, so a
/// loop of large writes does not pin their size in idle memory.
const KEEP_FREE_BYTES: u64 = 4 * CHUNK;
/// Staging offsets are aligned for every texel block size and for copies.
const STAGING_ALIGN: u64 = 256;

/// Upload buffers `Queue::write_*` copy through: one is filled at a time;
/// full ones wait for their submissions and then come back for reuse.
#[derive(Debug, Default)]
pub(crate) struct StagingBelt {
    /// The chunk being filled, its mapping and cursor, and the submission
    /// that carries its last write.
    current: Option<(Arc<Buffer>, usize, u64, u64)>,
    /// Full chunks and the submission that must finish before reuse.
    used: Vec<(Arc<Buffer>, u64)>,
    free: Vec<(Arc<Buffer>, usize)>,
}

impl StagingBelt {
    /// `size` bytes of staging memory: the chunk, the offset, the pointer.
    fn alloc(
        &mut self,
        shared: &Arc<DeviceShared>,
        size: u64,
        next_submission: u64,
    ) -> Option<(Arc<Buffer>, u64, *mut u8)> {
        if let Some((chunk, ptr, cursor, carried_by)) = &mut self.current {
            let offset = cursor.next_multiple_of(STAGING_ALIGN);
            if offset + size <= chunk.size {
                *cursor = offset + size;
                *carried_by = next_submission;
                return Some((chunk.clone(), offset, (*ptr + offset as usize) as *mut u8));
            }
        }
        if let Some((chunk, _, _, carried_by)) = self.current.take() {
            self.used.push((chunk, carried_by));
        }
        // What the GPU is done with goes back to the free list (or away)
        // first, so a run of large writes holds one chunk at a time.
        self.recycle(shared.known_complete());
        let found = self.free.iter().position(|(c, _)| c.size >= size);
        let (chunk, ptr) = match found {
            Some(i) => self.free.swap_remove(i),
            None => {
                // Sized to the write (whole chunks): the waste is under one
                // chunk, never a doubling.
                let chunk = create_staging(shared, size.max(CHUNK).next_multiple_of(CHUNK));
                let raw = chunk.raw.as_deref()?;
                // SAFETY: a new Upload buffer; mappings are persistent.
                let mapping = match unsafe { shared.hal().map_buffer(raw) } {
                    Ok(m) => m,
                    Err(e) => {
                        shared.report(KeelError::from_hal("staging buffer", &e));
                        return None;
                    }
                };
                (chunk, mapping.ptr.as_ptr() as usize)
            }
        };
        self.current = Some((chunk.clone(), ptr, size, next_submission));
        Some((chunk, 0, ptr as *mut u8))
    }

    /// Takes the free chunks and the current one if nothing is pending on it.
    pub(crate) fn take_free(&mut self) -> Vec<Arc<Buffer>> {
        let mut out: Vec<Arc<Buffer>> = self.free.drain(..).map(|(c, _)| c).collect();
        out.extend(self.used.drain(..).map(|(c, _)| c));
        if let Some((chunk, _, _, _)) = self.current.take() {
            out.push(chunk);
        }
        out
    }

    /// Returns chunks whose submissions are done to the free list.
    pub(crate) fn recycle(&mut self, done: u64) {
        let mut i = 0;
        while i < self.used.len() {
            let (chunk, after) = &self.used[i];
            if *after <= done && chunk.last_use() <= done {
                let (chunk, _) = self.used.swap_remove(i);
                let free_bytes: u64 = self.free.iter().map(|(c, _)| c.size).sum();
                if self.free.len() < KEEP_FREE && free_bytes + chunk.size <= KEEP_FREE_BYTES {
                    if let Some(raw) = chunk.raw.as_deref() {
                        // SAFETY: persistent mapping of a chunk the GPU is done with.
                        if let Ok(m) = unsafe { chunk.shared.hal().map_buffer(raw) } {
                            let ptr = m.ptr.as_ptr() as usize;
                            self.free.push((chunk, ptr));
                        }
                    }
                }
            } else {
                i += 1;
            }
        }
    }
}

/// `wgpu::Queue`.
#[derive(Debug)]
pub(crate) struct KeelQueue {
    pub handle: Arc<DeviceHandle>,
}

/// A `write_buffer_with` staging area.
#[derive(Debug)]
pub(crate) struct KQueueWriteBuffer {
    chunk: Option<(Arc<Buffer>, u64)>,
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the pointer is into a staging chunk this object keeps alive and
// that no one else writes until it is submitted.
unsafe impl Send for KQueueWriteBuffer {}
// SAFETY: as above.
unsafe impl Sync for KQueueWriteBuffer {}

impl cu::QueueWriteBufferInterface for KQueueWriteBuffer {
    fn len(&self) -> usize {
        self.len
    }
    unsafe fn write_slice(&mut self) -> wgpu::WriteOnly<'_, [u8]> {
        let slice = std::ptr::NonNull::slice_from_raw_parts(self.ptr, self.len);
        // SAFETY: the staging region is this object's alone.
        unsafe { wgpu::WriteOnly::new(slice) }
    }
}

impl KeelQueue {
    fn shared(&self) -> &Arc<DeviceShared> {
        &self.handle.shared
    }

    fn check_write(&self, buffer: &Arc<Buffer>, offset: u64, size: u64) -> Result<(), String> {
        buffer.raw()?;
        if !buffer.usage.contains(wgpu::BufferUsages::COPY_DST) {
            return Err(format!(
                "the buffer's usage {:?} lacks COPY_DST",
                buffer.usage
            ));
        }
        // wgpu-core's checks, in its order and words.
        if !size.is_multiple_of(4) {
            return Err(format!(
                "Copy size {size} does not respect `COPY_BUFFER_ALIGNMENT`"
            ));
        }
        if !offset.is_multiple_of(4) {
            return Err(format!(
                "Buffer offset {offset} is not aligned to block size or `COPY_BUFFER_ALIGNMENT`"
            ));
        }
        if offset > buffer.size {
            return Err(format!(
                "Copy at offset {offset} bytes would end up overrunning the bounds \
                 of the Destination buffer of size {}",
                buffer.size
            ));
        }
        if size > buffer.size - offset {
            return Err(format!(
                "Copy at offset {offset} for {size} bytes would end up overrunning \
                 the bounds of the Destination buffer of size {}",
                buffer.size
            ));
        }
        Ok(())
    }

    fn staging(&self, size: u64) -> Option<(Arc<Buffer>, u64, *mut u8)> {
        let shared = self.shared();
        let mut subs = shared.subs.lock();
        let next = subs.last_submitted + 1;
        subs.staging.alloc(shared, size, next)
    }
}

impl cu::QueueInterface for KeelQueue {
    fn write_buffer(&self, buffer: &cu::DispatchBuffer, offset: wgpu::BufferAddress, data: &[u8]) {
        let shared = self.shared();
        let buffer = match owned(shared, buffer.as_custom::<KBuffer>()) {
            Ok(buffer) => buffer,
            Err(e) => return shared.report(KeelError::validation("write_buffer", e)),
        };
        let buffer = &buffer;
        if let Err(e) = self.check_write(buffer, offset, data.len() as u64) {
            return shared.report(KeelError::validation("write_buffer", e));
        }
        if data.is_empty() {
            return;
        }
        let Some((chunk, chunk_offset, ptr)) = self.staging(data.len() as u64) else {
            return;
        };
        // SAFETY: the region is fresh staging memory of `data.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr, data.len()) };
        shared.subs.lock().pending.push(Cmd::CopyBufferToBuffer {
            src: chunk,
            src_offset: chunk_offset,
            dst: buffer.clone(),
            dst_offset: offset,
            size: data.len() as u64,
        });
    }

    fn create_staging_buffer(
        &self,
        size: wgpu::BufferSize,
    ) -> Option<cu::DispatchQueueWriteBuffer> {
        let (chunk, offset, ptr) = self.staging(size.get())?;
        Some(cu::DispatchQueueWriteBuffer::custom(KQueueWriteBuffer {
            chunk: Some((chunk, offset)),
            ptr: std::ptr::NonNull::new(ptr)?,
            len: size.get() as usize,
        }))
    }

    fn validate_write_buffer(
        &self,
        buffer: &cu::DispatchBuffer,
        offset: wgpu::BufferAddress,
        size: wgpu::BufferSize,
    ) -> Option<()> {
        let shared = self.shared();
        let buffer = match owned(shared, buffer.as_custom::<KBuffer>()) {
            Ok(buffer) => buffer,
            Err(e) => {
                shared.report(KeelError::validation("write_buffer_with", e));
                return None;
            }
        };
        match self.check_write(&buffer, offset, size.get()) {
            Ok(()) => Some(()),
            Err(e) => {
                shared.report(KeelError::validation("write_buffer_with", e));
                None
            }
        }
    }

    fn write_staging_buffer(
        &self,
        buffer: &cu::DispatchBuffer,
        offset: wgpu::BufferAddress,
        staging_buffer: &cu::DispatchQueueWriteBuffer,
    ) {
        let shared = self.shared();
        let buffer = match owned(shared, buffer.as_custom::<KBuffer>()) {
            Ok(buffer) => buffer,
            Err(e) => return shared.report(KeelError::validation("write_buffer_with", e)),
        };
        let Some(staging) = staging_buffer.as_custom::<KQueueWriteBuffer>() else {
            return shared.report(KeelError::validation(
                "write_buffer_with",
                "a staging buffer of another backend",
            ));
        };
        // wgpu-core's `write_staging_buffer_impl` checks the destination
        // again: it may have been destroyed (or mapped) since the view.
        if let Err(e) = self.check_write(&buffer, offset, staging.len as u64) {
            return shared.report(KeelError::validation("write_buffer_with", e));
        }
        if let Some((chunk, chunk_offset)) = &staging.chunk {
            shared.subs.lock().pending.push(Cmd::CopyBufferToBuffer {
                src: chunk.clone(),
                src_offset: *chunk_offset,
                dst: buffer.clone(),
                dst_offset: offset,
                size: staging.len as u64,
            });
        }
    }

    fn write_texture(
        &self,
        texture: wgpu::TexelCopyTextureInfo<'_>,
        data: &[u8],
        layout: wgpu::TexelCopyBufferLayout,
        size: wgpu::Extent3d,
    ) {
        let shared = self.shared();
        if let Err(e) = self.try_write_texture(texture, data, layout, size) {
            shared.report(KeelError::validation("write_texture", e));
        }
    }

    fn submit(&self, command_buffers: &mut dyn Iterator<Item = cu::DispatchCommandBuffer>) -> u64 {
        let shared = self.shared();
        let buffers: Vec<cu::DispatchCommandBuffer> = command_buffers.collect();
        let index = submit(shared, &buffers);
        drop(buffers);
        let fire = shared.maintain();
        DeviceShared::fire(fire);
        index
    }

    fn get_timestamp_period(&self) -> f32 {
        self.shared().queue().timestamp_period()
    }

    fn on_submitted_work_done(&self, callback: cu::BoxSubmittedWorkDoneCallback) {
        let shared = self.shared();
        let mut subs = shared.subs.lock();
        let last = subs.last_submitted;
        subs.work_done.push((last, callback));
    }

    fn compact_blas(&self, _blas: &cu::DispatchBlas) -> (Option<u64>, cu::DispatchBlas) {
        self.shared().report(KeelError::validation(
            "compact_blas",
            "acceleration structures are not among keel-wgpu's features",
        ));
        (None, cu::DispatchBlas::custom(crate::handles::Unsupported))
    }

    fn present(&self, detail: &cu::DispatchSurfaceOutputDetail) {
        crate::surface::present(self.shared(), detail);
        DeviceShared::fire(self.shared().maintain());
    }
}

impl KeelQueue {
    fn try_write_texture(
        &self,
        texture: wgpu::TexelCopyTextureInfo<'_>,
        data: &[u8],
        layout: wgpu::TexelCopyBufferLayout,
        size: wgpu::Extent3d,
    ) -> Result<(), String> {
        let dst = owned(self.shared(), texture.texture.as_custom::<KTexture>())?;
        dst.raw()?;
        dst.check_copy(texture.mip_level, texture.origin, &size, "destination")?;
        crate::transfer_check::check_write_texture(&dst, &texture, &layout, data.len(), &size)?;
        let format = dst.format;
        let block = format
            .block_copy_size(Some(texture.aspect))
            .ok_or_else(|| {
                format!(
                    "{format:?} with aspect {:?} cannot be copied",
                    texture.aspect
                )
            })? as u64;
        let (bw, bh) = format.block_dimensions();
        let width_blocks = size.width.div_ceil(bw) as u64;
        let height_blocks = size.height.div_ceil(bh) as u64;
        let row_bytes = width_blocks * block;
        let layers = size.depth_or_array_layers as u64;
        if row_bytes == 0 || height_blocks == 0 || layers == 0 {
            return Ok(());
        }
        let src_pitch = layout.bytes_per_row.map_or(row_bytes, u64::from);
        let src_rows = layout.rows_per_image.map_or(height_blocks, u64::from);
        if src_pitch < row_bytes {
            return Err(format!(
                "bytes_per_row {src_pitch} is less than a row's {row_bytes} bytes"
            ));
        }
        // Checked: the sizes come from the caller.
        let needed = (layers - 1)
            .checked_mul(src_rows)
            .and_then(|r| r.checked_mul(src_pitch))
            .and_then(|b| b.checked_add((height_blocks - 1).checked_mul(src_pitch)?))
            .and_then(|b| b.checked_add(row_bytes))
            .and_then(|b| b.checked_add(layout.offset));
        if needed.is_none_or(|n| n > data.len() as u64) {
            return Err(format!(
                "the copy reads past the data's {} bytes",
                data.len()
            ));
        }
        let pitch = row_bytes.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as u64);
        let total = pitch
            .checked_mul(height_blocks)
            .and_then(|t| t.checked_mul(layers))
            .ok_or("the copy is larger than memory")?;
        let (chunk, chunk_offset, ptr) = self.staging(total).ok_or("no staging memory")?;
        for z in 0..layers {
            for y in 0..height_blocks {
                let src = (layout.offset + z * src_rows * src_pitch + y * src_pitch) as usize;
                let dst_off = ((z * height_blocks + y) * pitch) as usize;
                // SAFETY: `src..src + row_bytes` is inside `data` (checked
                // above) and the destination inside the staging region.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        data.as_ptr().add(src),
                        ptr.add(dst_off),
                        row_bytes as usize,
                    )
                };
            }
        }
        self.shared()
            .subs
            .lock()
            .pending
            .push(Cmd::CopyBufferToTexture {
                src: chunk,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: chunk_offset,
                    bytes_per_row: Some(pitch as u32),
                    rows_per_image: Some(height_blocks as u32),
                },
                dst,
                base: TexelBase {
                    mip_level: texture.mip_level,
                    origin: texture.origin,
                    aspect: texture.aspect,
                },
                size,
            });
        Ok(())
    }
}

/// Queues, for the next submit, a copy of zeros into every subresource of
/// a new block-compressed texture, which `clear_texture` cannot zero (the
/// tracker's rule for the other formats: cleared before their first read).
/// Each mip level is one copy of its physical size, all layers at once; a
/// texture destroyed before the submit is left out (`Cmd::writes_destroyed`).
/// `Err` (what was missing) when it could not queue every copy: the caller
/// makes the texture unusable, since it would read stale memory.
pub(crate) fn zero_compressed(
    shared: &Arc<DeviceShared>,
    texture: &Arc<Texture>,
) -> Result<(), String> {
    let format = texture.format;
    let (Some(block), (bw, bh)) = (format.block_copy_size(None), format.block_dimensions()) else {
        return Err(format!("{format:?} has no single copy block size"));
    };
    for mip in 0..texture.mip_level_count {
        let size = texture.physical_mip_size(mip);
        let (wide, high) = (size.width / bw, size.height / bh);
        let pitch = (u64::from(wide) * u64::from(block))
            .next_multiple_of(u64::from(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT));
        let Some(bytes) = pitch
            .checked_mul(u64::from(high))
            .and_then(|b| b.checked_mul(u64::from(size.depth_or_array_layers)))
        else {
            return Err(format!("mip {mip} is larger than memory"));
        };
        let mut subs = shared.subs.lock();
        let next = subs.last_submitted + 1;
        let Some((chunk, offset, ptr)) = subs.staging.alloc(shared, bytes, next) else {
            return Err(format!("no {bytes} bytes of staging memory for mip {mip}"));
        };
        // SAFETY: the region is fresh staging memory of `bytes` bytes.
        unsafe { std::ptr::write_bytes(ptr, 0, bytes as usize) };
        subs.pending.push(Cmd::CopyBufferToTexture {
            src: chunk,
            layout: wgpu::TexelCopyBufferLayout {
                offset,
                bytes_per_row: Some(pitch as u32),
                rows_per_image: Some(high),
            },
            dst: texture.clone(),
            base: TexelBase {
                mip_level: mip,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            size,
        });
    }
    Ok(())
}

/// One command buffer of a submit, as it came.
enum Item {
    /// Replayed at submit, against the device's states (one that uses a
    /// surface frame).
    Replay(Recording),
    /// Encoded at `finish`; the submit resolves its first uses.
    Encoded(Recording, Encoded),
}

/// Submits `buffers` after the writes queued for this submit; returns the
/// submission index. The queued writes, and each encoded command buffer's
/// first uses against the device's states, are recorded in short keel-hal
/// command buffers in front of what they precede (wgpu-core's model); a
/// command buffer that uses a surface frame is replayed in there too.
pub(crate) fn submit(shared: &Arc<DeviceShared>, buffers: &[cu::DispatchCommandBuffer]) -> u64 {
    let _order = shared.submit_lock.lock();
    if shared.is_lost() {
        shared.report(KeelError {
            call: "submit",
            message: "device lost".into(),
            kind: crate::error::ErrorKind::Internal,
        });
        return shared.subs.lock().last_submitted;
    }
    let mut items = Vec::with_capacity(buffers.len());
    for buffer in buffers {
        let Some(cb) = buffer.as_custom::<KCommandBuffer>() else {
            shared.report(KeelError::validation(
                "submit",
                "a command buffer of another backend",
            ));
            continue;
        };
        if let Err(e) = same_device(shared, &cb.0) {
            shared.report(KeelError::validation("submit", e));
            continue;
        }
        let recording = cb.0.recording.lock().take();
        let encoded = cb.0.encoded.lock().take();
        match (recording, encoded) {
            (None, _) => shared.report(KeelError::validation(
                "submit",
                "the command buffer was already submitted",
            )),
            (Some(r), encoded) if r.error.is_some() => {
                shared.report(KeelError::validation(
                    "submit",
                    format!(
                        "the command buffer is invalid: {}",
                        r.error.as_deref().unwrap_or_default()
                    ),
                ));
                if let Some(e) = encoded {
                    // SAFETY: ended at `finish`, never submitted.
                    unsafe { shared.recycle_encoder(e.encoder, vec![e.buffer]) };
                }
            }
            (Some(r), encoded) if check_recording(&r).is_err() => {
                if let Err(e) = check_recording(&r) {
                    shared.report(KeelError::validation("submit", e));
                }
                if let Some(e) = encoded {
                    // SAFETY: ended at `finish`, never submitted.
                    unsafe { shared.recycle_encoder(e.encoder, vec![e.buffer]) };
                }
            }
            (Some(r), Some(e)) => items.push(Item::Encoded(r, e)),
            (Some(r), None) => items.push(Item::Replay(r)),
        }
    }
    let mut pending = std::mem::take(&mut shared.subs.lock().pending);
    pending.retain(|cmd| !cmd.writes_destroyed());
    let index = shared.subs.lock().last_submitted + 1;
    let mut kept = Vec::new();
    let submitted = submit_locked(shared, |enc, parts| {
        let mut replay = Replay::new(enc, index);
        for cmd in &pending {
            replay.cmd(cmd);
        }
        for item in items {
            match item {
                Item::Replay(recording) => {
                    for cmd in &recording.cmds {
                        replay.cmd(cmd);
                    }
                    kept.push(recording);
                }
                Item::Encoded(recording, encoded) => {
                    // wgpu's submit-time checks: destroyed or mapped.
                    if let Err(e) = encoded.tracker.check_submit() {
                        shared.report(KeelError::validation("submit", e));
                        // SAFETY: ended at `finish`, never submitted.
                        unsafe { shared.recycle_encoder(encoded.encoder, vec![encoded.buffer]) };
                        continue;
                    }
                    let mut readbacks = std::mem::take(replay.readbacks());
                    encoded
                        .tracker
                        .resolve(replay.encoder(), index, &mut readbacks, |e| {
                            shared.report(KeelError::validation("submit", e))
                        });
                    *replay.readbacks() = readbacks;
                    if !split(shared, replay.encoder(), parts) {
                        // SAFETY: ended at `finish`, never submitted.
                        unsafe { shared.recycle_encoder(encoded.encoder, vec![encoded.buffer]) };
                        break;
                    }
                    parts.push(Part::Encoded(encoded));
                    kept.push(recording);
                }
            }
        }
        replay.finish();
        for e in replay.errors() {
            shared.report(KeelError::validation("submit", e.clone()));
        }
        replay.take_frames()
    });
    // What the submitted command buffers wrote can be resolved from now on.
    if submitted {
        for recording in &kept {
            mark_queries_written(&recording.submit_checks);
        }
    }
    // The recorded commands (and what they hold) go now: every object they
    // used is marked with this submission.
    drop((pending, kept));
    shared.subs.lock().last_submitted
}

/// wgpu-core's submit-time checks of what the replay's tracker does not
/// hold (`validate_command_buffer`, [`crate::command::SubmitChecks`]): no
/// query set the command buffer uses is destroyed; no bind group a compute
/// pass set holds a destroyed resource; no resource `transition_resources`
/// named is destroyed (or, a buffer, mapped).
fn check_recording(recording: &Recording) -> Result<(), String> {
    use std::sync::atomic::Ordering::Acquire;
    let checks = &recording.submit_checks;
    for b in &checks.buffers {
        if b.destroyed.load(Acquire) {
            return Err(format!("{} has been destroyed", b.ident()));
        }
        if !matches!(*b.map.lock(), crate::resource::MapState::Idle) {
            return Err(format!("{} is still mapped", b.ident()));
        }
    }
    for t in &checks.textures {
        if t.destroyed.load(Acquire) {
            return Err(format!("{} has been destroyed", t.ident()));
        }
    }
    for set in &checks.query_sets {
        if set.destroyed.load(Acquire) {
            return Err(format!("{} has been destroyed", set.ident()));
        }
    }
    for group in &checks.groups {
        for b in &group.buffers {
            if b.buffer.destroyed.load(Acquire) {
                return Err(format!(
                    "A bind group set in a compute pass uses {}, which has been destroyed",
                    b.buffer.ident()
                ));
            }
        }
        for (view, _) in &group.views {
            if view.texture.destroyed.load(Acquire) && !view.texture.is_frame() {
                return Err(format!(
                    "A bind group set in a compute pass uses {}, which has been destroyed",
                    view.texture.ident()
                ));
            }
        }
    }
    Ok(())
}

/// Marks the queries a submitted command buffer writes as written: later
/// resolves copy them (`encoder.rs::prepare_submit`).
fn mark_queries_written(checks: &crate::command::SubmitChecks) {
    for (set, index) in &checks.query_writes {
        if let Some(slot) = set.written.lock().get_mut(*index as usize) {
            *slot = true;
        }
    }
}

/// Ends the submit encoder's current command buffer into `parts` and
/// begins the next (what follows an encoded command buffer); whether the
/// encoder records again (errors are reported).
fn split(
    shared: &DeviceShared,
    enc: &mut dyn keel_hal::dynamic::DynCommandEncoder,
    parts: &mut Vec<Part>,
) -> bool {
    // SAFETY: recording, outside any pass.
    match unsafe { enc.end_encoding() } {
        Ok(cb) => parts.push(Part::Own(cb)),
        Err(e) => {
            shared.report(KeelError::from_hal("submit", &e));
            return false;
        }
    }
    // SAFETY: not recording (ended above).
    if let Err(e) = unsafe { enc.begin_encoding(Some("keel-wgpu submit")) } {
        shared.report(KeelError::from_hal("submit", &e));
        return false;
    }
    true
}

/// A keel-hal command buffer of a submission, in submission order.
pub(crate) enum Part {
    /// One of the submit encoder's.
    Own(Box<dyn keel_hal::dynamic::DynCommandBuffer>),
    /// One encoded at `finish`, with its own encoder.
    Encoded(Encoded),
}

/// Records the submission's keel-hal command buffers with `record` (which
/// returns the surface frames it used and may end the submit encoder's
/// command buffer into `parts` and begin another, between the encoded
/// command buffers it adds) and submits them, in order, as the next
/// submission, naming those frames. The caller holds the submit lock.
/// Whether it was submitted (errors are reported; on failure every
/// encoder goes back to the pool).
pub(crate) fn submit_locked(
    shared: &Arc<DeviceShared>,
    record: impl FnOnce(
        &mut dyn keel_hal::dynamic::DynCommandEncoder,
        &mut Vec<Part>,
    ) -> Vec<Arc<crate::resource::Texture>>,
) -> bool {
    let index = shared.subs.lock().last_submitted + 1;
    let mut encoder = match shared.begin_encoder("keel-wgpu submit") {
        Ok(e) => e,
        Err(e) => {
            shared.report(KeelError {
                call: "submit",
                ..e
            });
            return false;
        }
    };
    let mut parts = Vec::new();
    // Whatever keel-hal refuses to record (and skips) reaches the program:
    // keel-wgpu's own checks should leave nothing for it to refuse.
    let (frames, refusals) = keel_hal::refusal::capture(|| record(&mut *encoder, &mut parts));
    for refusal in refusals {
        shared.report(KeelError::validation(
            "submit",
            format!("keel-hal refused a command: {refusal}"),
        ));
    }
    // SAFETY: recording (begun above, or again by `split`), outside passes.
    match unsafe { encoder.as_mut().end_encoding() } {
        Ok(cb) => parts.push(Part::Own(cb)),
        Err(e) => {
            shared.report(KeelError::from_hal("submit", &e));
            give_back(shared, encoder, parts);
            return false;
        }
    }
    let guards: Vec<_> = frames.iter().map(|f| f.frame.lock()).collect();
    let named: Vec<&keel_hal::dynamic::SurfaceTextureBox> =
        guards.iter().filter_map(|g| g.as_ref()).collect();
    let list: Vec<&dyn keel_hal::dynamic::DynCommandBuffer> = parts
        .iter()
        .map(|p| match p {
            Part::Own(cb) => &**cb,
            Part::Encoded(e) => &*e.buffer,
        })
        .collect();
    // A backend that runs commands at submit (noop) re-checks them there:
    // what it skips is captured too.
    let (result, refusals) = keel_hal::refusal::capture(|| {
        // SAFETY: every command buffer came from this device and is ended;
        // the fence value grows by one per successful submit; the frames
        // are this device's surfaces' and still acquired (their slots are
        // full).
        unsafe { shared.queue().submit(&list, &named, &**shared.fence, index) }
    });
    drop(list);
    for refusal in refusals {
        shared.report(KeelError::validation(
            "submit",
            format!("keel-hal refused a command: {refusal}"),
        ));
    }
    drop(named);
    drop(guards);
    match result {
        Ok(()) => {
            // What the trackers still hold may be the last reference to an
            // object whose drop buries it, which takes the lock (a render
            // pass's checked draw arguments: `indirect_check::DrawArgs`):
            // they go once it is released.
            let mut trackers = Vec::new();
            {
                let mut subs = shared.subs.lock();
                subs.last_submitted = index;
                let mut own = Vec::new();
                for part in parts {
                    match part {
                        Part::Own(cb) => own.push(cb),
                        Part::Encoded(e) => {
                            trackers.push(e.tracker);
                            subs.in_flight.push(InFlight {
                                encoder: e.encoder,
                                buffers: vec![e.buffer],
                                done_at: index,
                            });
                        }
                    }
                }
                subs.in_flight.push(InFlight {
                    encoder,
                    buffers: own,
                    done_at: index,
                });
            }
            drop(trackers);
            true
        }
        Err(e) => {
            shared.report(KeelError::from_hal("submit", &e));
            give_back(shared, encoder, parts);
            false
        }
    }
}

/// Returns the encoders of a submission that was not submitted to the pool.
fn give_back(
    shared: &DeviceShared,
    encoder: Box<dyn keel_hal::dynamic::DynCommandEncoder>,
    parts: Vec<Part>,
) {
    let mut own = Vec::new();
    for part in parts {
        match part {
            Part::Own(cb) => own.push(cb),
            // SAFETY: ended at `finish`, not submitted.
            Part::Encoded(e) => unsafe { shared.recycle_encoder(e.encoder, vec![e.buffer]) },
        }
    }
    // SAFETY: the submit encoder is not recording (ended, or its end
    // failed) and none of its buffers was submitted.
    unsafe { shared.recycle_encoder(encoder, own) };
}

/// `Device::poll`: waits as asked, then frees, recycles and fires what the
/// finished submissions allow.
pub(crate) fn poll(
    shared: &Arc<DeviceShared>,
    poll_type: wgpu::wgt::PollType<u64>,
) -> Result<wgpu::PollStatus, wgpu::PollError> {
    let last = shared.subs.lock().last_submitted;
    let mut waited = false;
    if let wgpu::wgt::PollType::Wait {
        submission_index,
        timeout,
    } = poll_type
    {
        if let Some(i) = submission_index {
            if i > last {
                return Err(wgpu::PollError::WrongSubmissionIndex(i, last));
            }
        }
        match shared.wait_for(submission_index, timeout) {
            Ok(true) => waited = true,
            Ok(false) => return Err(wgpu::PollError::Timeout),
            Err(e) => shared.report(e),
        }
    }
    let fire = shared.maintain();
    DeviceShared::fire(fire);
    let done = shared.completed();
    Ok(if done >= shared.subs.lock().last_submitted {
        wgpu::PollStatus::QueueEmpty
    } else if waited {
        wgpu::PollStatus::WaitSucceeded
    } else {
        wgpu::PollStatus::Poll
    })
}
