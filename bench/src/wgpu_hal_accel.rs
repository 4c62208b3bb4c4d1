//! The wgpu-hal 30 side of the acceleration-structure workloads, on a
//! second device opened with `EXPERIMENTAL_RAY_QUERY` (or, where the
//! adapter lacks it, `EXPERIMENTAL_RAY_TRACING_PIPELINES`): either enables
//! acceleration structures.
//!
//! wgpu-hal's compaction API, as it is: an AS created with
//! `allow_compaction` gets its own one-query `VkQueryPool`;
//! `read_acceleration_structure_compact_size` reads one AS's size, always
//! into offset 0 of a buffer (reset + write + copy per AS). So the cycle
//! makes one 8-byte `ACCELERATION_STRUCTURE_QUERY` buffer per BLAS and maps
//! each to read its size.

use std::mem::ManuallyDrop;
use std::time::{Duration, Instant};

use wgpu_hal as hal;
use wgpu_hal::{CommandEncoder as _, Device as _, Instance as _, Queue as _};

use crate::workload::{self, Workload, BUILD_BATCH};

type A = hal::vulkan::Api;
type Buffer = <A as hal::Api>::Buffer;
type Blas = <A as hal::Api>::AccelerationStructure;
type Flags = wgt::AccelerationStructureFlags;

/// Largest scratch-offset alignment a Vulkan driver may ask.
const SCRATCH_ALIGN: u64 = 256;

/// The AS device and what every sample reuses.
pub struct WgpuAccel {
    encoder: ManuallyDrop<<A as hal::Api>::CommandEncoder>,
    fence: ManuallyDrop<<A as hal::Api>::Fence>,
    next_value: u64,
    /// The compaction cycle's lists of originals and compacted structures,
    /// empty between cycles and kept for their capacity (as on every side).
    lists: [Vec<Blas>; 2],
    device: <A as hal::Api>::Device,
    queue: <A as hal::Api>::Queue,
}

fn err(what: &'static str) -> impl Fn(hal::DeviceError) -> String {
    move |e| format!("wgpu-hal {what}: {e}")
}

/// The time-stamped part of a cycle's results.
struct Cycle {
    wall: Duration,
    blocked: Duration,
    before: u64,
    after: u64,
}

impl WgpuAccel {
    /// Opens the adapter named `adapter` again, with acceleration structures.
    pub fn new(instance: &<A as hal::Api>::Instance, adapter: &str) -> Result<Self, String> {
        // SAFETY: live instance; no surface.
        let adapters = unsafe { instance.enumerate_adapters(None) };
        let exposed = crate::pick_adapter(&adapters, |a| a.info.name.as_str(), Some(adapter))
            .ok_or_else(|| format!("wgpu-hal: no adapter named {adapter:?}"))?;
        let offered = exposed.features;
        let features = [
            wgt::Features::EXPERIMENTAL_RAY_QUERY,
            wgt::Features::EXPERIMENTAL_RAY_TRACING_PIPELINES,
        ]
        .into_iter()
        .find(|f| offered.contains(*f))
        .ok_or("wgpu-hal: the adapter has neither ray queries nor ray-tracing pipelines")?;
        let limits = exposed.capabilities.limits.clone();
        // SAFETY: the adapter came from this instance, which outlives the device.
        let open = unsafe { crate::wgpu_hal::open_counted(&exposed.adapter, features, &limits) }?;
        let desc = hal::CommandEncoderDescriptor {
            label: None,
            queue: &open.queue,
        };
        // SAFETY: live device; both are destroyed in Drop.
        let (encoder, fence) = unsafe {
            let encoder = open
                .device
                .create_command_encoder(&desc)
                .map_err(err("encoder"))?;
            (encoder, open.device.create_fence().map_err(err("fence"))?)
        };
        Ok(WgpuAccel {
            encoder: ManuallyDrop::new(encoder),
            fence: ManuallyDrop::new(fence),
            next_value: 1,
            lists: [Vec::new(), Vec::new()],
            device: open.device,
            queue: open.queue,
        })
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

    fn buffer(&self, size: u64, usage: wgt::BufferUses, bytes: &[u8]) -> Result<Buffer, String> {
        let desc = hal::BufferDescriptor {
            label: None,
            size: size.max(4),
            usage,
            memory_flags: if usage.contains(wgt::BufferUses::MAP_WRITE) {
                hal::MemoryFlags::PREFER_COHERENT
            } else {
                hal::MemoryFlags::empty()
            },
        };
        // SAFETY: live device; the fresh buffer is written in bounds before any GPU use.
        unsafe {
            let buffer = self.device.create_buffer(&desc).map_err(err("buffer"))?;
            if !bytes.is_empty() {
                match self.device.map_buffer(&buffer, 0..bytes.len() as u64) {
                    Ok(map) => {
                        std::ptr::copy_nonoverlapping(
                            bytes.as_ptr(),
                            map.ptr.as_ptr(),
                            bytes.len(),
                        );
                        self.device.unmap_buffer(&buffer);
                    }
                    Err(e) => {
                        self.device.destroy_buffer(buffer);
                        return Err(err("map")(e));
                    }
                }
            }
            Ok(buffer)
        }
    }

    /// Ends the recording, submits, waits, then resets the encoder (its
    /// command buffer is done); returns the time blocked in the wait.
    ///
    /// # Safety
    /// A recording is in progress; everything it uses outlives the wait.
    unsafe fn submit_wait(&mut self) -> Result<Duration, String> {
        // SAFETY: the caller's contract.
        unsafe {
            let cb = self.encoder.end_encoding().map_err(err("end"))?;
            let value = self.next_value;
            self.next_value += 1;
            self.queue
                .submit(&[&cb], &[], (&self.fence, value))
                .map_err(err("submit"))?;
            let blocked = Instant::now();
            let done = self
                .device
                .wait(&self.fence, value, Some(Duration::from_secs(600)))
                .map_err(err("wait"))?;
            if !done {
                return Err("wgpu-hal: the GPU did not finish in 600 s".into());
            }
            let waited = blocked.elapsed();
            // Done: its command memory is recycled now, so the next
            // recording reuses this command buffer (as the raw floor does).
            self.encoder.reset_all(std::iter::once(cb));
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
        let entries = hal::AccelerationStructureEntries::Triangles(triangles(None, None, 3, 3));
        let mut made = Vec::with_capacity(count);
        let start = crate::count::Timer::start();
        for _ in 0..count {
            let desc = hal::GetAccelerationStructureBuildSizesDescriptor {
                entries: &entries,
                flags,
            };
            // SAFETY: live device; the structures are destroyed below.
            let created = unsafe {
                let sizes = self.device.get_acceleration_structure_build_sizes(&desc);
                self.device.create_acceleration_structure(&blas_desc(
                    sizes.acceleration_structure_size,
                    compactable,
                ))
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

    fn destroy_all(&self, structures: impl IntoIterator<Item = Blas>) {
        for s in structures {
            // SAFETY: no pending GPU work uses it (every submission was waited for).
            unsafe { self.device.destroy_acceleration_structure(s) };
        }
    }

    /// The full compaction cycle; numbers per `COMPACTION_METRICS`.
    fn cycle(&mut self, blases: usize, tris: u32) -> Result<Vec<f64>, String> {
        let (positions, indices) = workload::blas_mesh(tris);
        let pos_bytes: Vec<u8> = positions.iter().flat_map(|f| f.to_le_bytes()).collect();
        let idx_bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let (vcount, icount) = ((positions.len() / 3) as u32, indices.len() as u32);
        let input =
            wgt::BufferUses::BOTTOM_LEVEL_ACCELERATION_STRUCTURE_INPUT | wgt::BufferUses::MAP_WRITE;
        let vertices = self.buffer(pos_bytes.len() as u64, input, &pos_bytes)?;
        let index = match self.buffer(idx_bytes.len() as u64, input, &idx_bytes) {
            Ok(b) => b,
            Err(e) => {
                // SAFETY: never used by the GPU.
                unsafe { self.device.destroy_buffer(vertices) };
                return Err(e);
            }
        };
        let result = self.timed_cycle(blases, &vertices, &index, vcount, icount);
        // SAFETY: every submission was waited for.
        unsafe {
            self.device.destroy_buffer(vertices);
            self.device.destroy_buffer(index);
        }
        let c = result?;
        let n = blases as f64;
        Ok(vec![
            c.wall.as_nanos() as f64 / n,
            c.wall.saturating_sub(c.blocked).as_nanos() as f64 / n,
            c.before as f64 / 1024.0,
            c.after as f64 / 1024.0,
        ])
    }

    fn timed_cycle(
        &mut self,
        blases: usize,
        vertices: &Buffer,
        index: &Buffer,
        vcount: u32,
        icount: u32,
    ) -> Result<Cycle, String> {
        let flags = Flags::PREFER_FAST_TRACE | Flags::ALLOW_COMPACTION;
        let entries = hal::AccelerationStructureEntries::Triangles(triangles(
            Some(vertices),
            Some(index),
            vcount,
            icount,
        ));
        let desc = hal::GetAccelerationStructureBuildSizesDescriptor {
            entries: &entries,
            flags,
        };
        // SAFETY: live device.
        let sizes = unsafe { self.device.get_acceleration_structure_build_sizes(&desc) };
        let stride = sizes.build_scratch_size.div_ceil(SCRATCH_ALIGN) * SCRATCH_ALIGN;
        let batch = BUILD_BATCH.min(blases) as u64;
        let scratch = self.buffer(
            stride * batch,
            wgt::BufferUses::ACCELERATION_STRUCTURE_SCRATCH,
            &[],
        )?;
        // The readback buffers (wgpu-hal reads one size per buffer, at offset
        // 0) are set-up, like the other sides' one readback buffer.
        let mut size_buffers = Vec::with_capacity(blases);
        let usage = wgt::BufferUses::ACCELERATION_STRUCTURE_QUERY | wgt::BufferUses::MAP_READ;
        for _ in 0..blases {
            match self.buffer(8, usage, &[]) {
                Ok(b) => size_buffers.push(b),
                Err(e) => {
                    // SAFETY: never used by the GPU.
                    unsafe {
                        size_buffers
                            .into_iter()
                            .chain([scratch])
                            .for_each(|b| self.device.destroy_buffer(b))
                    };
                    return Err(e);
                }
            }
        }
        let start = crate::count::Timer::start();
        let mut blocked = Duration::ZERO;
        // Kept across cycles, as on every side (see keel_accel.rs).
        let [mut originals, mut compacted] = std::mem::take(&mut self.lists);
        originals.reserve(blases);
        compacted.reserve(blases);
        // SAFETY: every object is this device's; every submission is waited
        // for before what it used is reused or destroyed.
        let run = unsafe {
            (|| -> Result<(u64, u64), String> {
                let size = sizes.acceleration_structure_size;
                for _ in 0..blases {
                    let s = self
                        .device
                        .create_acceleration_structure(&blas_desc(size, true));
                    originals.push(s.map_err(err("BLAS"))?);
                }
                let uses = |buffer, from, to| hal::BufferBarrier {
                    buffer,
                    usage: hal::StateTransition { from, to },
                };
                for (b, chunk) in originals.chunks(BUILD_BATCH).enumerate() {
                    let first = b * BUILD_BATCH;
                    self.encoder.begin_encoding(None).map_err(err("begin"))?;
                    if b == 0 {
                        let to = wgt::BufferUses::BOTTOM_LEVEL_ACCELERATION_STRUCTURE_INPUT;
                        let from = wgt::BufferUses::MAP_WRITE;
                        self.encoder.transition_buffers(
                            [uses(vertices, from, to), uses(index, from, to)].into_iter(),
                        );
                    }
                    let descs = chunk.iter().enumerate().map(|(i, blas)| {
                        hal::BuildAccelerationStructureDescriptor {
                            entries: &entries,
                            mode: hal::AccelerationStructureBuildMode::Build,
                            flags,
                            source_acceleration_structure: None,
                            destination_acceleration_structure: blas,
                            scratch_buffer: &scratch,
                            scratch_buffer_offset: i as u64 * stride,
                        }
                    });
                    self.encoder
                        .build_acceleration_structures(chunk.len() as u32, descs);
                    self.encoder.place_acceleration_structure_barrier(
                        hal::AccelerationStructureBarrier {
                            usage: hal::StateTransition {
                                from: hal::AccelerationStructureUses::BUILD_OUTPUT,
                                to: hal::AccelerationStructureUses::QUERY_INPUT,
                            },
                        },
                    );
                    let outs = &size_buffers[first..first + chunk.len()];
                    let query = wgt::BufferUses::ACCELERATION_STRUCTURE_QUERY;
                    self.encoder.transition_buffers(
                        outs.iter()
                            .map(|o| uses(o, wgt::BufferUses::empty(), query)),
                    );
                    for (blas, out) in chunk.iter().zip(outs) {
                        self.encoder
                            .read_acceleration_structure_compact_size(blas, out);
                    }
                    self.encoder.transition_buffers(
                        outs.iter()
                            .map(|o| uses(o, query, wgt::BufferUses::MAP_READ)),
                    );
                    blocked += self.submit_wait()?;
                }
                let mut after = 0;
                for out in &size_buffers {
                    let map = self.device.map_buffer(out, 0..8).map_err(err("map"))?;
                    let mut bytes = [0u8; 8];
                    std::ptr::copy_nonoverlapping(map.ptr.as_ptr(), bytes.as_mut_ptr(), 8);
                    self.device.unmap_buffer(out);
                    let size = u64::from_le_bytes(bytes);
                    after += size;
                    let s = self
                        .device
                        .create_acceleration_structure(&blas_desc(size, false));
                    compacted.push(s.map_err(err("compacted BLAS"))?);
                }
                self.encoder.begin_encoding(None).map_err(err("begin"))?;
                self.encoder.place_acceleration_structure_barrier(
                    hal::AccelerationStructureBarrier {
                        usage: hal::StateTransition {
                            from: hal::AccelerationStructureUses::QUERY_INPUT,
                            to: hal::AccelerationStructureUses::COPY_SRC,
                        },
                    },
                );
                for (src, dst) in originals.iter().zip(&compacted) {
                    self.encoder
                        .copy_acceleration_structure_to_acceleration_structure(
                            src,
                            dst,
                            wgt::AccelerationStructureCopy::Compact,
                        );
                }
                blocked += self.submit_wait()?;
                Ok((size * blases as u64, after))
            })()
        };
        if run.is_err() {
            // SAFETY: live queue; makes destroying below safe, and
            // resetting whatever a failed step left recorded.
            unsafe {
                self.queue.wait_for_idle().ok();
                self.encoder.reset_all(std::iter::empty());
            }
        }
        self.destroy_all(originals.drain(..));
        self.destroy_all(compacted.drain(..));
        self.lists = [originals, compacted];
        let wall = start.stop();
        // SAFETY: the GPU is done with them.
        unsafe {
            for b in size_buffers.into_iter().chain([scratch]) {
                self.device.destroy_buffer(b);
            }
        }
        let (before, after) = run?;
        Ok(Cycle {
            wall,
            blocked,
            before,
            after,
        })
    }
}

/// One indexed triangle geometry (buffers `None` for size queries).
fn triangles<'a>(
    vertices: Option<&'a Buffer>,
    indices: Option<&'a Buffer>,
    vertex_count: u32,
    index_count: u32,
) -> Vec<hal::AccelerationStructureTriangles<'a, Buffer>> {
    vec![hal::AccelerationStructureTriangles {
        vertex_buffer: vertices,
        vertex_format: wgt::VertexFormat::Float32x3,
        first_vertex: 0,
        vertex_count,
        vertex_stride: 12,
        indices: Some(hal::AccelerationStructureTriangleIndices {
            format: wgt::IndexFormat::Uint32,
            buffer: indices,
            offset: 0,
            count: index_count,
        }),
        transform: None,
        flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
    }]
}

fn blas_desc(size: u64, allow_compaction: bool) -> hal::AccelerationStructureDescriptor<'static> {
    hal::AccelerationStructureDescriptor {
        label: None,
        size,
        format: hal::AccelerationStructureFormat::BottomLevel,
        allow_compaction,
    }
}

impl Drop for WgpuAccel {
    fn drop(&mut self) {
        // SAFETY: every submission was waited for; the fields are not used
        // after being taken. wgpu-hal has no destroy for encoders: dropping
        // one frees its pool.
        unsafe {
            self.queue.wait_for_idle().ok();
            self.device
                .destroy_fence(ManuallyDrop::take(&mut self.fence));
            drop(ManuallyDrop::take(&mut self.encoder));
        }
    }
}
