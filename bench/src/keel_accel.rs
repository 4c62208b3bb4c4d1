//! The keel-hal side of the acceleration-structure workloads, on a second
//! device opened with `ACCELERATION_STRUCTURE` (so the other workloads run
//! on a device without it, as before).
//!
//! Compaction cycle: as the raw floor does, the originals are placed in one
//! buffer and the compacted structures in another (`InBuffer` placement,
//! 256-byte slots); builds in batches of
//! [`BUILD_BATCH`], the last batch's submission also reading every
//! compacted size with one `read_acceleration_structure_compacted_sizes`
//! (slots from the device's shared query pools), as the raw floor writes
//! and copies them once; one submission of the compacting copies;
//! everything destroyed and the command buffers reset.

use std::mem::ManuallyDrop;
use std::time::{Duration, Instant};

use keel_hal as kh;
use keel_hal::{Adapter as _, CommandEncoder as _, Device as _, Instance as _, Queue as _};

use crate::workload::{self, Workload, BUILD_BATCH};

type Flags = wgt::AccelerationStructureFlags;

/// The AS device and what every sample reuses.
pub struct KeelAccel<A: kh::Api> {
    encoder: ManuallyDrop<A::CommandEncoder>,
    fence: ManuallyDrop<A::Fence>,
    next_value: u64,
    /// The compaction cycle's lists of originals and compacted structures,
    /// empty between cycles and kept for their capacity (see `cycle`).
    lists: [Vec<A::AccelerationStructure>; 2],
    device: A::Device,
    queue: A::Queue,
}

fn err<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("keel-hal {what}: {e}")
}

/// Largest scratch-offset alignment a Vulkan driver may ask.
const SCRATCH_ALIGN: u64 = 256;

impl<A: kh::Api> KeelAccel<A> {
    /// Opens the adapter named `adapter` again, with acceleration structures.
    pub fn new(instance: &A::Instance, adapter: &str) -> Result<Self, String> {
        // SAFETY: live instance.
        let adapters = unsafe { instance.enumerate_adapters() };
        let exposed = crate::pick_adapter(&adapters, |a| a.info.name.as_str(), Some(adapter))
            .ok_or_else(|| format!("keel-hal: no adapter named {adapter:?}"))?;
        let hal = kh::HalFeatures::ACCELERATION_STRUCTURE;
        if !exposed.capabilities.hal_features.contains(hal) {
            return Err("keel-hal: the adapter has no acceleration structures".into());
        }
        let desc = kh::DeviceDescriptor {
            required_hal_features: hal,
            ..Default::default()
        };
        // SAFETY: opened from one thread; the instance outlives the device.
        let open = unsafe { exposed.adapter.open(&desc) }.map_err(err("open"))?;
        // SAFETY: live device; both are destroyed in Drop.
        let (encoder, fence) = unsafe {
            let encoder = open
                .device
                .create_command_encoder(&kh::CommandEncoderDescriptor::default())
                .map_err(err("encoder"))?;
            match open.device.create_fence() {
                Ok(fence) => (encoder, fence),
                Err(e) => {
                    open.device.destroy_command_encoder(encoder);
                    return Err(err("fence")(e));
                }
            }
        };
        Ok(KeelAccel {
            encoder: ManuallyDrop::new(encoder),
            fence: ManuallyDrop::new(fence),
            next_value: 1,
            lists: [Vec::new(), Vec::new()],
            device: open.device,
            queue: open.queue,
        })
    }

    /// The AS device's memory report.
    pub fn memory_report(&self) -> kh::MemoryReport {
        self.device.memory_report()
    }

    /// One sample: one number per `work.metrics()` entry.
    pub fn sample(&mut self, work: &Workload) -> Result<Option<Vec<f64>>, String> {
        match *work {
            Workload::Compaction { blases, triangles } => self.cycle(blases, triangles).map(Some),
            Workload::BlasCreate { compactable, count } => {
                self.creates(compactable, count).map(|ns| Some(vec![ns]))
            }
            _ => Ok(None),
        }
    }

    fn buffer(
        &self,
        size: u64,
        usage: wgt::BufferUsages,
        memory: kh::Memory,
        bytes: &[u8],
    ) -> Result<A::Buffer, String> {
        let desc = kh::BufferDescriptor {
            label: None,
            size: size.max(4),
            usage,
            memory,
        };
        // SAFETY: live device; the fresh buffer is written in bounds before any GPU use.
        unsafe {
            let buffer = self.device.create_buffer(&desc).map_err(err("buffer"))?;
            if !bytes.is_empty() {
                match self.device.map_buffer(&buffer) {
                    Ok(map) if map.size >= bytes.len() as u64 => {
                        std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.ptr.as_ptr(), bytes.len())
                    }
                    other => {
                        self.device.destroy_buffer(buffer);
                        return Err(format!("keel-hal map: {:?}", other.err()));
                    }
                }
            }
            Ok(buffer)
        }
    }

    /// Ends the recording, submits, waits, then resets the encoder (its
    /// command buffer is done); returns the time spent blocked in the wait.
    ///
    /// # Safety
    /// A recording is in progress; everything it uses outlives the wait.
    unsafe fn submit_wait(&mut self) -> Result<Duration, String> {
        // SAFETY: the caller's contract.
        unsafe {
            let cb = self.encoder.end_encoding().map_err(err("end"))?;
            crate::phase::mark("end");
            let value = self.next_value;
            self.next_value += 1;
            self.queue
                .submit(&[&cb], &[], &self.fence, value)
                .map_err(err("submit"))?;
            crate::phase::mark("submit");
            let blocked = Instant::now();
            let done = self
                .device
                .wait(&self.fence, value, Some(Duration::from_secs(600)))
                .map_err(err("wait"))?;
            if !done {
                return Err("keel-hal: the GPU did not finish in 600 s".into());
            }
            let waited = blocked.elapsed();
            // Done: its command memory is recycled now, so the next
            // recording reuses this command buffer (as the raw floor does).
            self.encoder.reset_all(std::iter::once(cb));
            crate::phase::mark("wait");
            Ok(waited)
        }
    }

    /// Size query + creation of one-triangle BLASes; ns per BLAS.
    fn creates(&mut self, compactable: bool, count: usize) -> Result<f64, String> {
        let flags = if compactable {
            Flags::PREFER_FAST_TRACE | Flags::ALLOW_COMPACTION
        } else {
            Flags::PREFER_FAST_TRACE
        };
        let geometry = triangles::<A>(None, None, 3, 3);
        let entries = kh::AccelerationStructureEntries::Triangles(&geometry);
        let mut made = Vec::with_capacity(count);
        let start = crate::count::Timer::start();
        for _ in 0..count {
            let desc = kh::GetAccelerationStructureBuildSizesDescriptor::<A> {
                entries: &entries,
                flags,
            };
            // SAFETY: live device; the structures are destroyed below.
            let created = unsafe {
                self.device
                    .get_acceleration_structure_build_sizes(&desc)
                    .and_then(|sizes| {
                        self.device.create_acceleration_structure(&blas_desc::<A>(
                            sizes.acceleration_structure_size,
                        ))
                    })
            };
            match created {
                Ok(s) => made.push(s),
                Err(e) => {
                    self.destroy_all(made);
                    return Err(err("BLAS")(e));
                }
            }
        }
        self.destroy_all(made);
        Ok(start.stop().as_nanos() as f64 / count as f64)
    }

    fn destroy_all(&self, structures: impl IntoIterator<Item = A::AccelerationStructure>) {
        for s in structures {
            // SAFETY: no pending GPU work uses it (every submission was waited for).
            unsafe { self.device.destroy_acceleration_structure(s) };
        }
    }

    /// The full compaction cycle; numbers per `COMPACTION_METRICS`.
    fn cycle(&mut self, blases: usize, tris: u32) -> Result<Vec<f64>, String> {
        use wgt::BufferUsages as U;
        let (positions, indices) = workload::blas_mesh(tris);
        let pos_bytes: Vec<u8> = positions.iter().flat_map(|f| f.to_le_bytes()).collect();
        let idx_bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let (vcount, icount) = ((positions.len() / 3) as u32, indices.len() as u32);
        let flags = Flags::PREFER_FAST_TRACE | Flags::ALLOW_COMPACTION;
        // Inputs and scratch are set-up, outside the timing.
        let input = U::BLAS_INPUT | U::MAP_WRITE;
        let upload = kh::Memory::Upload;
        let vertices = self.buffer(pos_bytes.len() as u64, input, upload, &pos_bytes)?;
        let index = self.buffer(idx_bytes.len() as u64, input, upload, &idx_bytes)?;
        let sized = triangles::<A>(None, None, vcount, icount);
        let desc = kh::GetAccelerationStructureBuildSizesDescriptor::<A> {
            entries: &kh::AccelerationStructureEntries::Triangles(&sized),
            flags,
        };
        // SAFETY: live device.
        let sizes = unsafe { self.device.get_acceleration_structure_build_sizes(&desc) }
            .map_err(err("sizes"))?;
        let stride = sizes.build_scratch_size.div_ceil(SCRATCH_ALIGN) * SCRATCH_ALIGN;
        let batch = BUILD_BATCH.min(blases);
        let scratch = self.buffer(stride * batch as u64, U::STORAGE, kh::Memory::Device, &[])?;
        let readback = self.buffer(
            8 * blases as u64,
            U::COPY_DST | U::MAP_READ | U::QUERY_RESOLVE,
            kh::Memory::Readback,
            &[],
        )?;
        let geometry = triangles::<A>(Some(&vertices), Some(&index), vcount, icount);
        let entries = kh::AccelerationStructureEntries::Triangles(&geometry);

        let inputs = Inputs {
            entries: &entries,
            vertices: &vertices,
            index: &index,
            scratch: &scratch,
            readback: &readback,
            stride,
            size: sizes.acceleration_structure_size,
        };
        let result = self.timed_cycle(blases, &inputs);
        // SAFETY: every submission was waited for.
        unsafe {
            for b in [vertices, index, scratch, readback] {
                self.device.destroy_buffer(b);
            }
        }
        let (wall, blocked, before, after) = result?;
        let n = blases as f64;
        Ok(vec![
            wall.as_nanos() as f64 / n,
            wall.saturating_sub(blocked).as_nanos() as f64 / n,
            before as f64 / 1024.0,
            after as f64 / 1024.0,
        ])
    }

    /// The timed part: (wall, time blocked in waits, bytes before, bytes after).
    fn timed_cycle(
        &mut self,
        blases: usize,
        inputs: &Inputs<'_, A>,
    ) -> Result<(Duration, Duration, u64, u64), String> {
        let Inputs {
            entries,
            vertices,
            index,
            scratch,
            readback,
            stride,
            size,
        } = *inputs;
        let start = crate::count::Timer::start();
        let mut blocked = Duration::ZERO;
        // The lists are kept across cycles, on every side: freeing a list
        // of 1,000 structures can free a block over glibc's 64 KiB threshold
        // (keel-hal's were 104 bytes each, before the 56 of `3ad631f`),
        // which consolidates the whole heap's fast bins (the driver's small
        // frees) inside the timing: work of the harness, not of keel-hal or
        // the driver.
        let [mut originals, mut compacted] = std::mem::take(&mut self.lists);
        originals.reserve(blases);
        compacted.reserve(blases);
        // Storage of the originals, then of the compacted structures.
        let mut storage: Vec<A::Buffer> = Vec::with_capacity(2);
        let slot = size.div_ceil(PLACEMENT_ALIGN) * PLACEMENT_ALIGN;
        crate::phase::mark("start");
        // SAFETY: every object is this device's; every submission is waited
        // for before what it used is reused or destroyed, and its command
        // buffer is reset once it completed.
        let run = unsafe {
            (|| -> Result<(u64, u64), String> {
                storage.push(self.buffer(
                    slot * blases as u64,
                    wgt::BufferUsages::STORAGE,
                    kh::Memory::Device,
                    &[],
                )?);
                for i in 0..blases {
                    let desc = placed_desc(size, &storage[0], i as u64 * slot);
                    let s = self.device.create_acceleration_structure(&desc);
                    originals.push(s.map_err(err("BLAS"))?);
                }
                crate::phase::mark("create");
                let barrier = |buffer, from, to| kh::BufferBarrier {
                    buffer,
                    usage: kh::StateTransition { from, to },
                };
                let input = kh::BufferUses::ACCELERATION_STRUCTURE_INPUT;
                let batches = originals.len().div_ceil(BUILD_BATCH);
                for (b, chunk) in originals.chunks(BUILD_BATCH).enumerate() {
                    let descs: Vec<_> = chunk
                        .iter()
                        .enumerate()
                        .map(|(i, blas)| kh::BuildAccelerationStructureDescriptor {
                            entries,
                            mode: kh::AccelerationStructureBuildMode::Build,
                            flags: Flags::PREFER_FAST_TRACE | Flags::ALLOW_COMPACTION,
                            source_acceleration_structure: None,
                            destination_acceleration_structure: blas,
                            scratch_buffer: scratch,
                            scratch_buffer_offset: i as u64 * stride,
                        })
                        .collect();
                    self.encoder.begin_encoding(None).map_err(err("begin"))?;
                    if b == 0 {
                        let none = kh::BufferUses::empty();
                        self.encoder.transition_buffers(&[
                            barrier(readback, none, kh::BufferUses::COPY_DST),
                            barrier(vertices, none, input),
                            barrier(index, none, input),
                        ]);
                    }
                    crate::phase::mark("b_prep");
                    self.encoder
                        .build_acceleration_structures(&descs)
                        .map_err(err("build"))?;
                    crate::phase::mark("b_build");
                    if b + 1 == batches {
                        // Every size at once, after the last builds.
                        let refs: Vec<_> = originals.iter().collect();
                        self.encoder
                            .read_acceleration_structure_compacted_sizes(&refs, readback, 0)
                            .map_err(err("read sizes"))?;
                    }
                    crate::phase::mark("b_read");
                    blocked += self.submit_wait()?;
                }
                crate::phase::mark("batches");
                let map = self.device.map_buffer(readback).map_err(err("map"))?;
                let bytes = std::slice::from_raw_parts(map.ptr.as_ptr(), 8 * blases);
                let sizes: Vec<u64> = bytes
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                    .collect();
                let placed = |z: u64| z.div_ceil(PLACEMENT_ALIGN) * PLACEMENT_ALIGN;
                let total: u64 = sizes.iter().map(|&z| placed(z)).sum();
                storage.push(self.buffer(
                    total,
                    wgt::BufferUsages::STORAGE,
                    kh::Memory::Device,
                    &[],
                )?);
                let mut offset = 0;
                for &z in &sizes {
                    let desc = placed_desc(z, &storage[1], offset);
                    let s = self.device.create_acceleration_structure(&desc);
                    compacted.push(s.map_err(err("compacted BLAS"))?);
                    offset += placed(z);
                }
                let after: u64 = sizes.iter().sum();
                crate::phase::mark("create2");
                self.encoder.begin_encoding(None).map_err(err("begin"))?;
                let targets: Vec<_> = compacted.iter().collect();
                self.encoder.place_acceleration_structure_barrier(
                    kh::AccelerationStructureBarrier {
                        structures: &targets,
                        usage: kh::StateTransition {
                            from: kh::AccelerationStructureUses::empty(),
                            to: kh::AccelerationStructureUses::BUILD_OUTPUT,
                        },
                    },
                );
                for (src, dst) in originals.iter().zip(&compacted) {
                    self.encoder
                        .copy_acceleration_structure(
                            src,
                            dst,
                            kh::AccelerationStructureCopy::Compact,
                        )
                        .map_err(err("compact"))?;
                }
                crate::phase::mark("record_copy");
                blocked += self.submit_wait()?;
                crate::phase::mark("copy_wait");
                Ok((size * blases as u64, after))
            })()
        };
        // Destroying is part of the cycle; so is handing the slots back.
        let failed = run.is_err();
        if failed {
            // SAFETY: the failed step's recording, if any, is abandoned; a
            // failed wait leaves the device lost, where destroying is still allowed.
            unsafe { self.device.wait_idle() }.ok();
        }
        self.destroy_all(originals.drain(..));
        self.destroy_all(compacted.drain(..));
        self.lists = [originals, compacted];
        // SAFETY: the GPU is done (every submission was waited for, or the
        // device is idle or lost); the structures placed in the storage
        // buffers are destroyed.
        unsafe {
            if failed {
                // A failed step may leave a recording or an unreset buffer.
                self.encoder.reset_all(std::iter::empty());
            }
            for b in storage {
                self.device.destroy_buffer(b);
            }
        }
        crate::phase::mark("destroy");
        crate::phase::dump("keel");
        let wall = start.stop();
        let (before, after) = run?;
        Ok((wall, blocked, before, after))
    }
}

/// What the timed part of a cycle uses, made outside the timing.
struct Inputs<'a, A: kh::Api> {
    entries: &'a kh::AccelerationStructureEntries<'a, A::Buffer>,
    vertices: &'a A::Buffer,
    index: &'a A::Buffer,
    scratch: &'a A::Buffer,
    readback: &'a A::Buffer,
    /// Bytes between the scratch ranges of one batch's builds.
    stride: u64,
    /// Size of each original BLAS.
    size: u64,
}

/// One indexed triangle geometry (buffers `None` for size queries).
fn triangles<'a, A: kh::Api>(
    vertices: Option<&'a A::Buffer>,
    indices: Option<&'a A::Buffer>,
    vertex_count: u32,
    index_count: u32,
) -> [kh::AccelerationStructureTriangles<'a, A::Buffer>; 1] {
    [kh::AccelerationStructureTriangles {
        vertex_buffer: vertices,
        vertex_offset: 0,
        vertex_format: wgt::VertexFormat::Float32x3,
        vertex_stride: 12,
        vertex_count,
        indices: Some(kh::TriangleIndices {
            buffer: indices,
            offset: 0,
            format: wgt::IndexFormat::Uint32,
            count: index_count,
        }),
        transform: None,
        flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
    }]
}

/// Offsets of placed structures are multiples of this.
const PLACEMENT_ALIGN: u64 = 256;

/// A BLAS of `size` bytes at `offset` of `buffer`.
fn placed_desc<A: kh::Api>(
    size: u64,
    buffer: &A::Buffer,
    offset: u64,
) -> kh::AccelerationStructureDescriptor<'_, A> {
    kh::AccelerationStructureDescriptor {
        label: None,
        kind: kh::AccelerationStructureKind::BottomLevel,
        size,
        placement: kh::AccelerationStructurePlacement::InBuffer { buffer, offset },
    }
}

fn blas_desc<A: kh::Api>(size: u64) -> kh::AccelerationStructureDescriptor<'static, A> {
    kh::AccelerationStructureDescriptor {
        label: None,
        kind: kh::AccelerationStructureKind::BottomLevel,
        size,
        placement: kh::AccelerationStructurePlacement::Owned,
    }
}

impl<A: kh::Api> Drop for KeelAccel<A> {
    fn drop(&mut self) {
        // SAFETY: every submission was waited for; the encoder's command
        // buffers were all reset; the fields are not used after being taken.
        unsafe {
            self.device.wait_idle().ok();
            self.device
                .destroy_fence(ManuallyDrop::take(&mut self.fence));
            self.device
                .destroy_command_encoder(ManuallyDrop::take(&mut self.encoder));
        }
    }
}
