//! Compaction of bottom-level acceleration structures, end to end.
//!
//! A structure built with `ALLOW_COMPACTION` can be copied into a smaller
//! one once the GPU has said how small. That takes two trips to the GPU,
//! and this module is the canonical way to make them:
//!
//! 1. **build** the structures (with `ALLOW_COMPACTION`), earlier, by the
//!    caller;
//! 2. **read the compacted sizes** of the whole batch with one
//!    [`CommandEncoder::read_acceleration_structure_compacted_sizes`]: it
//!    records the build→read barrier, then writes every size into slots of
//!    the device's *shared* query pools (a contiguous range, not a pool per
//!    structure) and copies them, as `u64`s, into a buffer; submit and wait;
//! 3. **create** a structure of each size, **barrier**, and **copy** each
//!    original into its new one with [`AccelerationStructureCopy::Compact`];
//!    submit and wait;
//! 4. the caller **destroys the originals** (the GPU is done with them:
//!    this helper waited) and uses the compacted ones from then on.
//!
//! [`compact`] does steps 2 and 3 for a batch and reports the bytes saved.
//! Batches amortise everything: one query-pool reset, one barrier, one
//! properties write, one results copy and two submissions, whatever the
//! batch's size. On Vulkan the query slots go back to their pool when the
//! encoder's command buffers are reset, which `compact` does before
//! returning, so a loop over batches reuses the same pools.
//!
//! ```
//! use keel_hal::compaction::{compact, CompactionReport};
//! use keel_hal::{Api, Device, FenceValue};
//!
//! /// Replaces `blases` by compacted copies; returns the bytes saved.
//! unsafe fn compact_all<A: Api>(
//!     device: &A::Device,
//!     queue: &A::Queue,
//!     encoder: &mut A::CommandEncoder,
//!     fence: &A::Fence,
//!     next_value: &mut FenceValue,
//!     blases: &mut Vec<A::AccelerationStructure>,
//! ) -> Result<u64, keel_hal::AccelerationStructureError> {
//!     let batch: Vec<&A::AccelerationStructure> = blases.iter().collect();
//!     // SAFETY: forwarded from this function's caller: every structure was
//!     // built with ALLOW_COMPACTION and its build submitted.
//!     let report: CompactionReport<A> =
//!         unsafe { compact::<A>(device, queue, encoder, fence, next_value, &batch) }?;
//!     let saved = report.bytes_before - report.bytes_after;
//!     // The GPU is done with the originals: `compact` waited for it.
//!     for original in std::mem::replace(blases, report.compacted) {
//!         // SAFETY: no pending GPU work uses it any more; the caller's TLASes
//!         // are rebuilt from the new addresses before they are traced again.
//!         unsafe { device.destroy_acceleration_structure(original) };
//!     }
//!     Ok(saved)
//! }
//! ```

use crate::{
    AccelerationStructureBarrier, AccelerationStructureCopy, AccelerationStructureDescriptor,
    AccelerationStructureError, AccelerationStructureKind, AccelerationStructurePlacement,
    AccelerationStructureUses, Api, BufferBarrier, BufferDescriptor, BufferError, BufferUses,
    CommandEncoder, Device, DeviceError, FenceValue, MapError, Memory, Queue, StateTransition,
};

type Error = AccelerationStructureError;

/// What [`compact`] made and saved.
#[derive(Debug)]
pub struct CompactionReport<A: Api> {
    /// The compacted structures, in the order of the originals. They are
    /// built and in `BUILD_INPUT | SHADER_INPUT`, ready for TLAS builds and
    /// tracing. The caller destroys them like any structure.
    pub compacted: Vec<A::AccelerationStructure>,
    /// Each original's size, in bytes.
    pub sizes_before: Vec<u64>,
    /// Each compacted structure's size, in bytes (the size the GPU reported).
    pub sizes_after: Vec<u64>,
    /// The sum of `sizes_before`.
    pub bytes_before: u64,
    /// The sum of `sizes_after`.
    pub bytes_after: u64,
}

impl<A: Api> CompactionReport<A> {
    fn empty() -> Self {
        Self {
            compacted: Vec::new(),
            sizes_before: Vec::new(),
            sizes_after: Vec::new(),
            bytes_before: 0,
            bytes_after: 0,
        }
    }
}

/// Compacts a batch of bottom-level structures: reads their compacted
/// sizes, creates structures of those sizes (owning their storage), copies
/// each original into its new structure in compact mode, and waits for the
/// GPU each time. See the module docs for the pattern.
///
/// It submits twice on `queue`, signalling `fence` with `*next_fence_value`
/// and the value after; on return (success or failure) `*next_fence_value`
/// is the next value not yet used. On success the GPU is done with the
/// originals, which are in `COPY_SRC`: destroy them (or keep them) as you
/// see fit. An empty batch returns an empty report and submits nothing.
///
/// # Errors
///
/// The first error of a step, with nothing left behind: every failure path
/// destroys what the helper created (its readback buffer, the new
/// structures) and leaves the encoder with no recording and its command
/// buffers reset. The originals are untouched.
///
/// - [`AccelerationStructureError::MissingFlag`]: a structure was not built
///   with `ALLOW_COMPACTION` (the backend's cheap check).
/// - [`AccelerationStructureError::WrongKind`]: a structure is top-level.
/// - [`AccelerationStructureError::Unsupported`]: the device lacks
///   acceleration structures, or the batch's readback buffer (8 bytes per
///   structure) exceeds `max_buffer_size`: compact in smaller batches.
/// - [`AccelerationStructureError::Device`]: out of memory, device lost,
///   a driver failure, or a structure of another backend (dyn path).
///
/// # Safety
///
/// - `device`, `queue`, `encoder`, `fence` and every structure belong
///   together (the same device).
/// - Every structure is bottom-level, was built with `ALLOW_COMPACTION` by
///   a submission made before this call (the build leaves it in
///   `BUILD_OUTPUT`), and is not written by pending or concurrent GPU work.
/// - No recording is in progress on `encoder`, and none of its command
///   buffers is pending or still needed: the helper calls `reset_all`,
///   which invalidates them (as [`CommandEncoder::reset_all`] says).
/// - `*next_fence_value` is greater than every value `fence` was signalled
///   with or will be by other submissions, and no other thread submits
///   with `fence` meanwhile.
pub unsafe fn compact<A: Api>(
    device: &A::Device,
    queue: &A::Queue,
    encoder: &mut A::CommandEncoder,
    fence: &A::Fence,
    next_fence_value: &mut FenceValue,
    structures: &[&A::AccelerationStructure],
) -> Result<CompactionReport<A>, Error> {
    if structures.is_empty() {
        return Ok(CompactionReport::empty());
    }
    let mut gpu = Gpu::<A> {
        device,
        queue,
        encoder,
        fence,
        next_fence_value,
    };
    // SAFETY: forwarded contract.
    let sizes_after = unsafe { gpu.read_compacted_sizes(structures) }?;
    let mut sizes_before = Vec::new();
    sizes_before
        .try_reserve_exact(structures.len())
        .map_err(|_| DeviceError::OutOfMemory)?;
    // SAFETY: every structure came from `device` (forwarded contract).
    sizes_before.extend(
        structures
            .iter()
            .map(|s| unsafe { device.get_acceleration_structure_size(s) }),
    );
    // SAFETY: forwarded contract; the sizes are the ones the GPU reported.
    let compacted = unsafe { gpu.copy_compacted(structures, &sizes_after) }?;
    let sum = |sizes: &[u64]| sizes.iter().fold(0u64, |a, &b| a.saturating_add(b));
    Ok(CompactionReport {
        compacted,
        bytes_before: sum(&sizes_before),
        bytes_after: sum(&sizes_after),
        sizes_before,
        sizes_after,
    })
}

/// The objects the helper drives, and the fence value it signals next.
struct Gpu<'a, A: Api> {
    device: &'a A::Device,
    queue: &'a A::Queue,
    encoder: &'a mut A::CommandEncoder,
    fence: &'a A::Fence,
    next_fence_value: &'a mut FenceValue,
}

impl<A: Api> Gpu<'_, A> {
    /// Step 2: the compacted size of every structure, through a readback
    /// buffer that is destroyed before returning.
    ///
    /// # Safety
    /// As [`compact`].
    unsafe fn read_compacted_sizes(
        &mut self,
        structures: &[&A::AccelerationStructure],
    ) -> Result<Vec<u64>, Error> {
        let len = u64::try_from(structures.len())
            .ok()
            .and_then(|n| n.checked_mul(8))
            .ok_or(DeviceError::OutOfMemory)?;
        let desc = BufferDescriptor {
            label: Some("keel-hal compaction: compacted sizes"),
            size: len,
            usage: wgt::BufferUsages::COPY_DST
                | wgt::BufferUsages::QUERY_RESOLVE
                | wgt::BufferUsages::MAP_READ,
            memory: Memory::Readback,
        };
        // SAFETY: live device.
        let readback = unsafe { self.device.create_buffer(&desc) }.map_err(buffer_error)?;
        // SAFETY: forwarded contract; the buffer is this device's and alive.
        let sizes = unsafe { self.read_into(structures, &readback, len) };
        // SAFETY: `read_into` waited for the GPU (or the device is lost), so
        // no pending work uses the buffer.
        unsafe { self.device.destroy_buffer(readback) };
        sizes
    }

    /// Records the size read into `readback`, runs it, and reads the sizes.
    ///
    /// # Safety
    /// As [`compact`]; `readback` is a `len`-byte readback buffer of the device.
    unsafe fn read_into(
        &mut self,
        structures: &[&A::AccelerationStructure],
        readback: &A::Buffer,
        len: u64,
    ) -> Result<Vec<u64>, Error> {
        let barrier = |from, to| BufferBarrier {
            buffer: readback,
            usage: StateTransition { from, to },
        };
        // SAFETY: forwarded contract (no recording in progress).
        unsafe {
            self.encoder
                .begin_encoding(Some("keel-hal compaction: read sizes"))
        }?;
        // SAFETY: recording; the buffer is new (state empty), and the
        // structures were built earlier in submission order.
        let recorded = unsafe {
            self.encoder
                .transition_buffers(&[barrier(BufferUses::empty(), BufferUses::COPY_DST)]);
            let read = self
                .encoder
                .read_acceleration_structure_compacted_sizes(structures, readback, 0);
            self.encoder
                .transition_buffers(&[barrier(BufferUses::COPY_DST, BufferUses::MAP_READ)]);
            read
        };
        if let Err(e) = recorded {
            // SAFETY: the recording begun above is in progress.
            unsafe { self.encoder.discard_encoding() };
            return Err(e);
        }
        // SAFETY: forwarded contract; everything recorded is alive.
        unsafe { self.submit_and_wait() }?;

        // SAFETY: the buffer is mappable (`Memory::Readback`) and the GPU is
        // done writing it (waited above).
        let mapping = unsafe { self.device.map_buffer(readback) }.map_err(map_error)?;
        let len = usize::try_from(len).map_err(|_| DeviceError::OutOfMemory)?;
        if mapping.size < len as u64 {
            return Err(DeviceError::Unexpected.into());
        }
        // SAFETY: the mapping holds at least `len` bytes (checked), stays
        // valid while the buffer lives, and nothing writes them any more.
        let bytes = unsafe { std::slice::from_raw_parts(mapping.ptr.as_ptr(), len) };
        let mut sizes = Vec::new();
        sizes
            .try_reserve_exact(structures.len())
            .map_err(|_| DeviceError::OutOfMemory)?;
        for chunk in bytes.chunks_exact(8) {
            let mut size = [0u8; 8];
            size.copy_from_slice(chunk);
            sizes.push(u64::from_ne_bytes(size));
        }
        // SAFETY: the bytes are not used after this.
        unsafe { self.device.unmap_buffer(readback) };
        if sizes.contains(&0) {
            log::error!("compaction: the device reported a compacted size of 0");
            return Err(DeviceError::Unexpected.into());
        }
        Ok(sizes)
    }

    /// Step 3: a new structure of each size, with each original copied into
    /// it in compact mode. On failure the new structures are destroyed.
    ///
    /// # Safety
    /// As [`compact`]; `sizes` are the compacted sizes of `structures`.
    unsafe fn copy_compacted(
        &mut self,
        structures: &[&A::AccelerationStructure],
        sizes: &[u64],
    ) -> Result<Vec<A::AccelerationStructure>, Error> {
        let mut compacted = Vec::new();
        if compacted.try_reserve_exact(sizes.len()).is_err() {
            return Err(DeviceError::OutOfMemory.into());
        }
        for &size in sizes {
            let desc = AccelerationStructureDescriptor {
                label: Some("keel-hal compaction: compacted BLAS"),
                kind: AccelerationStructureKind::BottomLevel,
                size,
                placement: AccelerationStructurePlacement::Owned,
            };
            // SAFETY: live device; owned placement.
            match unsafe { self.device.create_acceleration_structure(&desc) } {
                Ok(structure) => compacted.push(structure),
                Err(e) => {
                    // SAFETY: made above and never used by the GPU.
                    unsafe { self.destroy_all(compacted) };
                    return Err(e);
                }
            }
        }
        // SAFETY: forwarded contract; `compacted` holds one new structure per original.
        match unsafe { self.record_copies(structures, &compacted) } {
            Ok(()) => Ok(compacted),
            Err(e) => {
                // SAFETY: the copy was never submitted, or the GPU is done
                // with it (`submit_and_wait` waited, or the device is lost).
                unsafe { self.destroy_all(compacted) };
                Err(e)
            }
        }
    }

    /// Records the barriers and compacting copies, submits and waits.
    ///
    /// # Safety
    /// As [`compact`]; `compacted[i]` is new and large enough for `structures[i]`.
    unsafe fn record_copies(
        &mut self,
        structures: &[&A::AccelerationStructure],
        compacted: &[A::AccelerationStructure],
    ) -> Result<(), Error> {
        let mut targets = Vec::new();
        targets
            .try_reserve_exact(compacted.len())
            .map_err(|_| DeviceError::OutOfMemory)?;
        targets.extend(compacted.iter());
        let barrier = |from, to| AccelerationStructureBarrier {
            structures: &targets,
            usage: StateTransition { from, to },
        };
        // SAFETY: forwarded contract (no recording in progress).
        unsafe {
            self.encoder
                .begin_encoding(Some("keel-hal compaction: copy"))
        }?;
        // SAFETY: recording, outside passes. The originals are in COPY_SRC
        // (the size read's barrier put them there, and a submission
        // boundary and a fence wait separate it from here); the new
        // structures are in their initial state.
        let recorded = unsafe {
            self.encoder.place_acceleration_structure_barrier(barrier(
                AccelerationStructureUses::empty(),
                AccelerationStructureUses::BUILD_OUTPUT,
            ));
            let copied = structures.iter().zip(compacted).try_for_each(|(src, dst)| {
                self.encoder.copy_acceleration_structure(
                    src,
                    dst,
                    AccelerationStructureCopy::Compact,
                )
            });
            self.encoder.place_acceleration_structure_barrier(barrier(
                AccelerationStructureUses::BUILD_OUTPUT,
                AccelerationStructureUses::BUILD_INPUT | AccelerationStructureUses::SHADER_INPUT,
            ));
            copied
        };
        if let Err(e) = recorded {
            // SAFETY: the recording begun above is in progress.
            unsafe { self.encoder.discard_encoding() };
            return Err(e);
        }
        // SAFETY: forwarded contract; everything recorded is alive.
        unsafe { self.submit_and_wait() }
    }

    /// Ends the recording, submits it, waits for it, and hands its command
    /// buffer back to the encoder, whatever happens. The fence value is
    /// used up even when the submission fails (skipping a value is harmless;
    /// reusing one is not).
    ///
    /// # Safety
    /// A recording is in progress; what it uses stays alive until this
    /// returns; the fence rules of [`compact`].
    unsafe fn submit_and_wait(&mut self) -> Result<(), Error> {
        // SAFETY: a recording is in progress. On failure none is any more.
        let commands = unsafe { self.encoder.end_encoding() }?;
        let value = *self.next_fence_value;
        *self.next_fence_value = value.saturating_add(1);
        // SAFETY: the command buffer, fence and queue belong to the device;
        // `value` is above every value signalled before (caller's contract).
        let done = unsafe { self.queue.submit(&[&commands], &[], self.fence, value) }.and_then(
            // SAFETY: the submission above signals `value`.
            |()| match unsafe { self.device.wait(self.fence, value, None) } {
                Ok(true) => Ok(()),
                // Waiting without a timeout cannot time out.
                Ok(false) => Err(DeviceError::Unexpected),
                Err(e) => Err(e),
            },
        );
        // SAFETY: the GPU is done with the command buffer (waited above, or
        // the submission failed, or the device is lost).
        unsafe { self.encoder.reset_all([commands]) };
        done.map_err(Into::into)
    }

    /// Destroys structures the helper made.
    ///
    /// # Safety
    /// They came from the device and no pending GPU work uses them.
    unsafe fn destroy_all(&self, structures: Vec<A::AccelerationStructure>) {
        for structure in structures {
            // SAFETY: forwarded contract.
            unsafe { self.device.destroy_acceleration_structure(structure) };
        }
    }
}

/// The readback buffer could not be made.
fn buffer_error(e: BufferError) -> Error {
    match e {
        BufferError::Device(e) => Error::Device(e),
        _ => Error::Unsupported {
            what: "this batch's readback buffer (8 bytes per structure, mappable memory)",
            allowed: "batches whose readback buffer the device can create: compact in smaller \
                      batches",
        },
    }
}

/// The readback buffer could not be mapped (it is `Memory::Readback`, so
/// only a driver failure gets here).
fn map_error(e: MapError) -> Error {
    match e {
        MapError::Device(e) => Error::Device(e),
        MapError::NotMappable(_) => Error::Device(DeviceError::Unexpected),
    }
}

#[cfg(test)]
mod tests;
