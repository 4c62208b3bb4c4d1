//! The floor of the compaction cycle, in `ash`: a second device with
//! `VK_KHR_acceleration_structure`, and the batched way to compact.
//!
//! The originals live in one buffer (one allocation), each BLAS at a
//! 256-byte-aligned offset; one `VkQueryPool` of N queries; builds in
//! batches of [`BUILD_BATCH`] (one submission each); after the last batch
//! one barrier, one `vkCmdWriteAccelerationStructuresPropertiesKHR` for all
//! N and one `vkCmdCopyQueryPoolResults`; the compacted copies in a second
//! buffer; one submission of N copies.
//!
//! What keel-hal keeps across cycles the floor keeps too (equal work): the
//! two storage buffers with their memory (keel-hal's retention gives a
//! destroyed buffer back whole to the next buffer of its size) and the query
//! pool (keel-hal keeps its compaction query pools). A cycle takes them if
//! their sizes fit and makes them otherwise.
//!
//! BLAS creation floor: per BLAS a size query, a storage buffer — one kept
//! from an earlier sample, as keel-hal's retention keeps them, else a new
//! one bound into a kept arena — and `vkCreateAccelerationStructureKHR`;
//! then every structure destroyed and every buffer kept.

use std::time::{Duration, Instant};

use ash::khr::acceleration_structure as khr_as;
use ash::vk;

use super::arena::Arena;
use super::vk_err;
use crate::count::Timer;
use crate::workload::{self, Workload, BUILD_BATCH};

/// Alignment of every AS offset and scratch range.
const ALIGN: u64 = 256;

/// A buffer with its own memory (mapped when host-visible).
#[derive(Clone, Copy)]
struct Buf {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    ptr: *mut u8,
    address: vk::DeviceAddress,
}

impl Default for Buf {
    fn default() -> Self {
        Buf {
            buffer: vk::Buffer::null(),
            memory: vk::DeviceMemory::null(),
            ptr: std::ptr::null_mut(),
            address: 0,
        }
    }
}

/// The AS device.
pub struct RawAccel {
    device: ash::Device,
    accel: khr_as::Device,
    memory_types: Vec<vk::MemoryType>,
    queue: vk::Queue,
    pool: vk::CommandPool,
    cb: vk::CommandBuffer,
    fence: vk::Fence,
    /// A timeline semaphore, signalled by each submission as keel-hal's
    /// fences are (unless lean: then `fence`), and its next value.
    timeline: vk::Semaphore,
    next_value: u64,
    /// The creation floor's arena (device-local), made at its first sample.
    arena: Option<Arena>,
    /// The creation floor's buffers, bound into `arena` and kept across
    /// samples, with the size they were made for.
    kept_storage: Vec<(u64, vk::Buffer)>,
    /// The compaction cycle's storage buffers kept across cycles, by size
    /// (at most two: the originals' and the compacted ones').
    kept_cycle: Vec<(u64, Buf)>,
    /// The compaction cycle's query pool kept across cycles, by query count.
    kept_queries: Option<(u32, vk::QueryPool)>,
    /// The compaction cycle's lists of originals and compacted structures,
    /// empty between cycles and kept for their capacity (as on every side).
    lists: [Vec<vk::AccelerationStructureKHR>; 2],
}

impl RawAccel {
    /// Opens `pdev` again with acceleration structures.
    pub fn new(
        instance: &ash::Instance,
        pdev: vk::PhysicalDevice,
        family: u32,
    ) -> Result<Self, String> {
        // SAFETY: pdev came from this instance.
        let extensions = unsafe { instance.enumerate_device_extension_properties(pdev) }
            .map_err(vk_err("device extensions"))?;
        let wanted = [khr_as::NAME, ash::khr::deferred_host_operations::NAME];
        for name in wanted {
            if !extensions
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(name))
            {
                return Err(format!("raw: the adapter lacks {name:?}"));
            }
        }
        let names = wanted.map(|n| n.as_ptr());
        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default()
            .buffer_device_address(true)
            .timeline_semaphore(true);
        let mut v13 = vk::PhysicalDeviceVulkan13Features::default().synchronization2(true);
        let mut as_features = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default()
            .acceleration_structure(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&names)
            .push_next(&mut v12)
            .push_next(&mut v13)
            .push_next(&mut as_features);
        // SAFETY: valid create info; the device is destroyed in Drop (or below).
        let device = unsafe { instance.create_device(pdev, &info, None) }
            .map_err(vk_err("vkCreateDevice (acceleration structures)"))?;
        // SAFETY: pdev came from this instance.
        let memory = unsafe { instance.get_physical_device_memory_properties(pdev) };
        // SAFETY: the device was made with one queue of this family.
        let queue = unsafe { device.get_device_queue(family, 0) };
        let mut me = RawAccel {
            queue,
            accel: khr_as::Device::new(instance, &device),
            device,
            memory_types: memory.memory_types_as_slice().to_vec(),
            pool: vk::CommandPool::null(),
            cb: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
            timeline: vk::Semaphore::null(),
            next_value: 1,
            arena: None,
            kept_storage: Vec::new(),
            kept_cycle: Vec::new(),
            kept_queries: None,
            lists: [Vec::new(), Vec::new()],
        };
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family)
            .flags(super::command_flags().0);
        // SAFETY: live device; everything is destroyed in Drop (null is ignored).
        unsafe {
            me.pool = me
                .device
                .create_command_pool(&info, None)
                .map_err(vk_err("command pool"))?;
            let info = vk::CommandBufferAllocateInfo::default()
                .command_pool(me.pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            me.cb = me
                .device
                .allocate_command_buffers(&info)
                .map_err(vk_err("command buffer"))?[0];
            me.fence = me
                .device
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(vk_err("fence"))?;
            let mut ty = vk::SemaphoreTypeCreateInfo::default()
                .semaphore_type(vk::SemaphoreType::TIMELINE)
                .initial_value(0);
            me.timeline = me
                .device
                .create_semaphore(&vk::SemaphoreCreateInfo::default().push_next(&mut ty), None)
                .map_err(vk_err("timeline semaphore"))?;
        }
        Ok(me)
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

    /// Size query + buffer bound into the kept arena + AS creation, for
    /// `count` one-triangle BLASes; then all destroyed. ns per BLAS.
    fn creates(&mut self, compactable: bool, count: usize) -> Result<f64, String> {
        let flags = if compactable {
            vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE
                | vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION
        } else {
            vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE
        };
        // Addresses are ignored by size queries.
        let none = Buf::default();
        let geometry = [geometry(&none, &none, 3)];
        let info = build_info(&geometry).flags(flags);
        let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR;
        let sizes = || {
            let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
            // SAFETY: live device; a valid one-geometry description.
            unsafe {
                self.accel.get_acceleration_structure_build_sizes(
                    vk::AccelerationStructureBuildTypeKHR::DEVICE,
                    &info,
                    &[1],
                    &mut sizes,
                )
            };
            sizes.acceleration_structure_size
        };
        let size = sizes();
        let buffer_info = |size| vk::BufferCreateInfo::default().size(size).usage(usage);
        if self.arena.is_none() {
            // SAFETY: live device; the probe is destroyed right away.
            let req = unsafe {
                let probe = self
                    .device
                    .create_buffer(&buffer_info(size), None)
                    .map_err(vk_err("vkCreateBuffer"))?;
                let req = self.device.get_buffer_memory_requirements(probe);
                self.device.destroy_buffer(probe, None);
                req
            };
            let index = (0..self.memory_types.len() as u32)
                .find(|&i| {
                    req.memory_type_bits & (1 << i) != 0
                        && self.memory_types[i as usize]
                            .property_flags
                            .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
                })
                .ok_or("raw: no device-local memory type for AS storage")?;
            let mut arena = Arena::new(index, false);
            if let Err(e) = arena.reserve(&self.device, req.size, req.alignment, count) {
                // SAFETY: nothing is bound into it.
                unsafe { arena.destroy(&self.device) };
                return Err(e);
            }
            self.arena = Some(arena);
        }
        if self
            .kept_storage
            .first()
            .is_some_and(|&(kept, _)| kept != size)
        {
            // Another size (the other flag): its buffers go, the arena rewinds.
            for (_, b) in self.kept_storage.drain(..) {
                // SAFETY: no structure or GPU work uses it.
                unsafe { self.device.destroy_buffer(b, None) };
            }
            if let Some(arena) = self.arena.as_mut() {
                arena.reset();
            }
        }
        let Some(arena) = self.arena.as_mut() else {
            return Err("raw: no arena".into());
        };
        let (device, accel, kept) = (&self.device, &self.accel, &mut self.kept_storage);
        let mut made = Vec::with_capacity(count);
        let start = Timer::start();
        // SAFETY: live device; each buffer is bound before its structure is
        // made on it; everything made is destroyed below, structures first.
        let result = unsafe {
            (|| {
                for _ in 0..count {
                    let size = sizes();
                    if let Some((_, buffer)) = kept.pop() {
                        made.push((buffer, vk::AccelerationStructureKHR::null()));
                    } else {
                        let buffer = device
                            .create_buffer(&buffer_info(size), None)
                            .map_err(vk_err("vkCreateBuffer"))?;
                        made.push((buffer, vk::AccelerationStructureKHR::null()));
                        let req = device.get_buffer_memory_requirements(buffer);
                        if req.memory_type_bits & (1 << arena.memory_type()) == 0 {
                            return Err(
                                "raw: the arena's memory type does not suit AS storage".into()
                            );
                        }
                        let p = arena.place(device, req.size, req.alignment)?;
                        device
                            .bind_buffer_memory(buffer, p.memory, p.offset)
                            .map_err(vk_err("vkBindBufferMemory"))?;
                    }
                    let Some(&(buffer, _)) = made.last() else {
                        return Err("raw: no buffer".into());
                    };
                    let info = vk::AccelerationStructureCreateInfoKHR::default()
                        .buffer(buffer)
                        .size(size)
                        .ty(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL);
                    let s = accel
                        .create_acceleration_structure(&info, None)
                        .map_err(vk_err("vkCreateAccelerationStructureKHR"))?;
                    if let Some(last) = made.last_mut() {
                        last.1 = s;
                    }
                }
                Ok::<(), String>(())
            })()
        };
        for (buffer, s) in made {
            // SAFETY: never used by the GPU; null handles are ignored.
            unsafe { accel.destroy_acceleration_structure(s, None) };
            kept.push((size, buffer));
        }
        let ns = start.stop().as_nanos() as f64 / count as f64;
        result.map(|()| ns)
    }

    /// A buffer with its own memory; host-visible ones are mapped.
    fn buffer(&self, size: u64, usage: vk::BufferUsageFlags, host: bool) -> Result<Buf, String> {
        let usage = usage | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let info = vk::BufferCreateInfo::default()
            .size(size.max(4))
            .usage(usage);
        let mut out = Buf::default();
        // SAFETY: live device; `out` is destroyed on failure.
        let made = unsafe {
            (|| {
                out.buffer = self
                    .device
                    .create_buffer(&info, None)
                    .map_err(vk_err("vkCreateBuffer"))?;
                let req = self.device.get_buffer_memory_requirements(out.buffer);
                let flags = if host {
                    vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT
                } else {
                    vk::MemoryPropertyFlags::DEVICE_LOCAL
                };
                let index = (0..self.memory_types.len() as u32)
                    .find(|&i| {
                        req.memory_type_bits & (1 << i) != 0
                            && self.memory_types[i as usize].property_flags.contains(flags)
                    })
                    .ok_or_else(|| format!("raw: no memory type with {flags:?}"))?;
                let mut address = vk::MemoryAllocateFlagsInfo::default()
                    .flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
                let alloc = vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(index)
                    .push_next(&mut address);
                out.memory = self
                    .device
                    .allocate_memory(&alloc, None)
                    .map_err(vk_err("vkAllocateMemory"))?;
                self.device
                    .bind_buffer_memory(out.buffer, out.memory, 0)
                    .map_err(vk_err("vkBindBufferMemory"))?;
                if host {
                    out.ptr = self
                        .device
                        .map_memory(out.memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                        .map_err(vk_err("vkMapMemory"))?
                        .cast();
                }
                let info = vk::BufferDeviceAddressInfo::default().buffer(out.buffer);
                out.address = self.device.get_buffer_device_address(&info);
                Ok::<(), String>(())
            })()
        };
        match made {
            Ok(()) => Ok(out),
            Err(e) => {
                self.destroy_buffer(out);
                Err(e)
            }
        }
    }

    fn destroy_buffer(&self, b: Buf) {
        // SAFETY: no GPU work uses it; null handles are ignored (freeing
        // mapped memory unmaps it).
        unsafe {
            self.device.destroy_buffer(b.buffer, None);
            self.device.free_memory(b.memory, None);
        }
    }

    /// Ends the command buffer, submits it, waits; returns the time blocked.
    /// As keel-hal submits and waits (unless lean): `vkQueueSubmit2`
    /// signalling the next value of a timeline semaphore, `vkWaitSemaphores`
    /// on it, then the pool reset of its `reset_all`. Lean: `vkQueueSubmit`
    /// with a fence, `vkWaitForFences`, `vkResetFences`.
    ///
    /// # Safety
    /// The command buffer is recording; what it uses outlives the wait.
    unsafe fn submit_wait(&mut self) -> Result<Duration, String> {
        const TIMEOUT_NS: u64 = 600_000_000_000;
        let d = &self.device;
        // SAFETY: the caller's contract.
        unsafe {
            d.end_command_buffer(self.cb)
                .map_err(vk_err("vkEndCommandBuffer"))?;
            crate::phase::mark("end");
            if super::lean() {
                let cbs = [self.cb];
                let submit = vk::SubmitInfo::default().command_buffers(&cbs);
                d.queue_submit(self.queue, &[submit], self.fence)
                    .map_err(vk_err("vkQueueSubmit"))?;
                crate::phase::mark("submit");
                let blocked = Instant::now();
                d.wait_for_fences(&[self.fence], true, TIMEOUT_NS)
                    .map_err(vk_err("vkWaitForFences"))?;
                let waited = blocked.elapsed();
                d.reset_fences(&[self.fence])
                    .map_err(vk_err("vkResetFences"))?;
                crate::phase::mark("wait");
                return Ok(waited);
            }
            let value = self.next_value;
            self.next_value += 1;
            let cbs = [vk::CommandBufferSubmitInfo::default().command_buffer(self.cb)];
            let signals = [vk::SemaphoreSubmitInfo::default()
                .semaphore(self.timeline)
                .value(value)
                .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
            let submit = vk::SubmitInfo2::default()
                .command_buffer_infos(&cbs)
                .signal_semaphore_infos(&signals);
            d.queue_submit2(self.queue, &[submit], vk::Fence::null())
                .map_err(vk_err("vkQueueSubmit2"))?;
            crate::phase::mark("submit");
            let blocked = Instant::now();
            let semaphores = [self.timeline];
            let values = [value];
            let info = vk::SemaphoreWaitInfo::default()
                .semaphores(&semaphores)
                .values(&values);
            d.wait_semaphores(&info, TIMEOUT_NS)
                .map_err(vk_err("vkWaitSemaphores"))?;
            let waited = blocked.elapsed();
            d.reset_command_pool(self.pool, vk::CommandPoolResetFlags::empty())
                .map_err(vk_err("vkResetCommandPool"))?;
            crate::phase::mark("wait");
            Ok(waited)
        }
    }

    /// Begins the command buffer.
    fn begin(&self) -> Result<(), String> {
        let info = vk::CommandBufferBeginInfo::default().flags(super::command_flags().1);
        // SAFETY: the command buffer is not pending (every submission is
        // waited for) and in the initial state: reset with its pool after
        // the wait, or (lean) resettable alone, which begin does.
        unsafe { self.device.begin_command_buffer(self.cb, &info) }
            .map_err(vk_err("vkBeginCommandBuffer"))
    }

    /// The full compaction cycle; numbers per `COMPACTION_METRICS`.
    fn cycle(&mut self, blases: usize, tris: u32) -> Result<Vec<f64>, String> {
        let (positions, indices) = workload::blas_mesh(tris);
        let input =
            cycle_usage(vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR);
        let mut made = Vec::new();
        let result = (|| {
            let vertices = self.buffer((positions.len() * 4) as u64, input, true)?;
            made.push(vertices);
            let index = self.buffer((indices.len() * 4) as u64, input, true)?;
            made.push(index);
            // SAFETY: fresh mapped buffers of these sizes, unknown to the GPU.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    positions.as_ptr().cast(),
                    vertices.ptr,
                    positions.len() * 4,
                );
                std::ptr::copy_nonoverlapping(
                    indices.as_ptr().cast(),
                    index.ptr,
                    indices.len() * 4,
                );
            }
            let geometry = [geometry(&vertices, &index, (positions.len() / 3) as u32)];
            let prims = indices.len() as u32 / 3;
            let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
            // SAFETY: live device; the geometry describes the buffers above.
            unsafe {
                self.accel.get_acceleration_structure_build_sizes(
                    vk::AccelerationStructureBuildTypeKHR::DEVICE,
                    &build_info(&geometry),
                    &[prims],
                    &mut sizes,
                )
            };
            let stride = sizes.build_scratch_size.div_ceil(ALIGN) * ALIGN;
            let batch = BUILD_BATCH.min(blases) as u64;
            let scratch = self.buffer(
                stride * batch,
                cycle_usage(vk::BufferUsageFlags::STORAGE_BUFFER),
                false,
            )?;
            made.push(scratch);
            let readback =
                self.buffer(8 * blases as u64, vk::BufferUsageFlags::TRANSFER_DST, true)?;
            made.push(readback);
            let setup = Setup {
                geometry: &geometry,
                prims,
                size: sizes.acceleration_structure_size,
                scratch: &scratch,
                stride,
                readback: &readback,
            };
            self.timed_cycle(blases, &setup)
        })();
        for b in made {
            self.destroy_buffer(b);
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

    /// The timed part: (wall, blocked, bytes before, bytes after).
    fn timed_cycle(
        &mut self,
        n: usize,
        s: &Setup<'_>,
    ) -> Result<(Duration, Duration, u64, u64), String> {
        let start = crate::count::Timer::start();
        let mut blocked = Duration::ZERO;
        let mut storage = [Buf::default(); 2];
        let mut storage_size = [0u64; 2];
        // Kept across cycles, as on every side (see keel_accel.rs).
        let [mut originals, mut compacted] = std::mem::take(&mut self.lists);
        originals.reserve(n);
        compacted.reserve(n);
        let mut queries = vk::QueryPool::null();
        let slot = s.size.div_ceil(ALIGN) * ALIGN;
        crate::phase::mark("start");
        // SAFETY: every handle is this device's; every submission is waited
        // for before what it used is reused or destroyed.
        let run = unsafe {
            (|| -> Result<(u64, u64), String> {
                storage_size[0] = slot * n as u64;
                storage[0] = self.storage_buffer(storage_size[0])?;
                queries = match self.kept_queries.take() {
                    Some((count, pool)) if count == n as u32 => pool,
                    other => {
                        if let Some((_, pool)) = other {
                            self.device.destroy_query_pool(pool, None);
                        }
                        let info = vk::QueryPoolCreateInfo::default()
                            .query_type(vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR)
                            .query_count(n as u32);
                        self.device
                            .create_query_pool(&info, None)
                            .map_err(vk_err("query pool"))?
                    }
                };
                for i in 0..n {
                    originals.push(self.create_as(storage[0].buffer, i as u64 * slot, s.size)?);
                }
                crate::phase::mark("create");
                let batches = n.div_ceil(BUILD_BATCH);
                for (b, chunk) in originals.chunks(BUILD_BATCH).enumerate() {
                    self.begin()?;
                    if b == 0 {
                        self.device
                            .cmd_reset_query_pool(self.cb, queries, 0, n as u32);
                    }
                    let infos: Vec<_> = chunk
                        .iter()
                        .enumerate()
                        .map(|(i, &dst)| {
                            build_info(s.geometry)
                                .dst_acceleration_structure(dst)
                                .scratch_data(vk::DeviceOrHostAddressKHR {
                                    device_address: s.scratch.address + i as u64 * s.stride,
                                })
                        })
                        .collect();
                    let range = [vk::AccelerationStructureBuildRangeInfoKHR::default()
                        .primitive_count(s.prims)];
                    let ranges: Vec<&[_]> = vec![&range[..]; chunk.len()];
                    crate::phase::mark("b_prep");
                    self.accel
                        .cmd_build_acceleration_structures(self.cb, &infos, &ranges);
                    crate::phase::mark("b_build");
                    if b + 1 == batches {
                        // One barrier, one write of all N, one copy.
                        let barrier = vk::MemoryBarrier::default()
                            .src_access_mask(vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR)
                            .dst_access_mask(vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR);
                        let stage = vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR;
                        self.device.cmd_pipeline_barrier(
                            self.cb,
                            stage,
                            stage,
                            vk::DependencyFlags::empty(),
                            &[barrier],
                            &[],
                            &[],
                        );
                        self.accel.cmd_write_acceleration_structures_properties(
                            self.cb,
                            &originals,
                            vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR,
                            queries,
                            0,
                        );
                        self.device.cmd_copy_query_pool_results(
                            self.cb,
                            queries,
                            0,
                            n as u32,
                            s.readback.buffer,
                            0,
                            8,
                            vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                        );
                        let host = vk::MemoryBarrier::default()
                            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                            .dst_access_mask(vk::AccessFlags::HOST_READ);
                        self.device.cmd_pipeline_barrier(
                            self.cb,
                            vk::PipelineStageFlags::TRANSFER,
                            vk::PipelineStageFlags::HOST,
                            vk::DependencyFlags::empty(),
                            &[host],
                            &[],
                            &[],
                        );
                    }
                    crate::phase::mark("b_read");
                    blocked += self.submit_wait()?;
                }
                crate::phase::mark("batches");
                let bytes = std::slice::from_raw_parts(s.readback.ptr, 8 * n);
                let compacted_sizes: Vec<u64> = bytes
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                    .collect();
                let total: u64 = compacted_sizes
                    .iter()
                    .map(|z| z.div_ceil(ALIGN) * ALIGN)
                    .sum();
                storage_size[1] = total;
                storage[1] = self.storage_buffer(total)?;
                let mut offset = 0;
                for &size in &compacted_sizes {
                    compacted.push(self.create_as(storage[1].buffer, offset, size)?);
                    offset += size.div_ceil(ALIGN) * ALIGN;
                }
                crate::phase::mark("create2");
                self.begin()?;
                for (&src, &dst) in originals.iter().zip(&compacted) {
                    let info = vk::CopyAccelerationStructureInfoKHR::default()
                        .src(src)
                        .dst(dst)
                        .mode(vk::CopyAccelerationStructureModeKHR::COMPACT);
                    self.accel.cmd_copy_acceleration_structure(self.cb, &info);
                }
                crate::phase::mark("record_copy");
                blocked += self.submit_wait()?;
                crate::phase::mark("copy_wait");
                Ok((s.size * n as u64, compacted_sizes.iter().sum()))
            })()
        };
        // SAFETY: every submission was waited for (a failed one leaves the
        // device lost or idle); null handles are ignored.
        unsafe {
            if run.is_err() {
                self.device.device_wait_idle().ok();
            }
            for a in originals.drain(..).chain(compacted.drain(..)) {
                self.accel.destroy_acceleration_structure(a, None);
            }
            if run.is_ok() && queries != vk::QueryPool::null() {
                self.kept_queries = Some((n as u32, queries));
            } else {
                self.device.destroy_query_pool(queries, None);
            }
        }
        for (b, size) in storage.into_iter().zip(storage_size) {
            if run.is_ok() && b.buffer != vk::Buffer::null() {
                self.kept_cycle.push((size, b));
            } else {
                self.destroy_buffer(b);
            }
        }
        self.lists = [originals, compacted];
        while self.kept_cycle.len() > 2 {
            let (_, b) = self.kept_cycle.remove(0);
            self.destroy_buffer(b);
        }
        crate::phase::mark("destroy");
        crate::phase::dump("raw");
        let wall = start.stop();
        let (before, after) = run?;
        Ok((wall, blocked, before, after))
    }

    /// An acceleration-structure storage buffer of `size` bytes: one kept by
    /// an earlier cycle if its size is the same, else a new one.
    fn storage_buffer(&mut self, size: u64) -> Result<Buf, String> {
        if let Some(i) = self.kept_cycle.iter().position(|&(kept, _)| kept == size) {
            return Ok(self.kept_cycle.swap_remove(i).1);
        }
        let asu = cycle_usage(vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR);
        self.buffer(size, asu, false)
    }

    /// A BLAS of `size` bytes at `offset` of `buffer`.
    fn create_as(
        &self,
        buffer: vk::Buffer,
        offset: u64,
        size: u64,
    ) -> Result<vk::AccelerationStructureKHR, String> {
        let info = vk::AccelerationStructureCreateInfoKHR::default()
            .buffer(buffer)
            .offset(offset)
            .size(size)
            .ty(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL);
        // SAFETY: the range lies in the buffer, which has AS-storage usage.
        unsafe { self.accel.create_acceleration_structure(&info, None) }
            .map_err(vk_err("vkCreateAccelerationStructureKHR"))
    }
}

/// What the timed part uses, made outside the timing.
struct Setup<'a> {
    geometry: &'a [vk::AccelerationStructureGeometryKHR<'a>],
    prims: u32,
    size: u64,
    scratch: &'a Buf,
    stride: u64,
    readback: &'a Buf,
}

/// The indexed triangle geometry of the mesh buffers.
fn geometry<'a>(
    vertices: &Buf,
    index: &Buf,
    vertex_count: u32,
) -> vk::AccelerationStructureGeometryKHR<'a> {
    let triangles = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
        .vertex_format(vk::Format::R32G32B32_SFLOAT)
        .vertex_data(vk::DeviceOrHostAddressConstKHR {
            device_address: vertices.address,
        })
        .vertex_stride(12)
        .max_vertex(vertex_count.saturating_sub(1))
        .index_type(vk::IndexType::UINT32)
        .index_data(vk::DeviceOrHostAddressConstKHR {
            device_address: index.address,
        });
    vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
        .geometry(vk::AccelerationStructureGeometryDataKHR { triangles })
        .flags(vk::GeometryFlagsKHR::OPAQUE)
}

/// The usage of a compaction-cycle buffer that needs `needed`: keel-hal's
/// for the wgpu usage the bench gives its buffer of that role (unless
/// lean, `super::lean`), so both sides make the same `VkBufferCreateInfo`.
/// keel-hal's `BLAS_INPUT` adds `STORAGE_BUFFER` (an input may serve as
/// scratch) and its `STORAGE` both `STORAGE_BUFFER` and AS storage (scratch
/// or structures); `buffer` adds the device address. On lavapipe the
/// difference shows: a mapped buffer with `STORAGE_BUFFER` usage takes a
/// locked path when the driver maps it (8 of the 10 maps of a build).
fn cycle_usage(needed: vk::BufferUsageFlags) -> vk::BufferUsageFlags {
    use vk::BufferUsageFlags as V;
    if super::lean() {
        return needed;
    }
    if needed.contains(V::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR) {
        needed | V::STORAGE_BUFFER
    } else if needed.intersects(V::STORAGE_BUFFER | V::ACCELERATION_STRUCTURE_STORAGE_KHR) {
        needed | V::STORAGE_BUFFER | V::ACCELERATION_STRUCTURE_STORAGE_KHR
    } else {
        needed
    }
}

/// A compactable, fast-trace BLAS build of `geometry`.
fn build_info<'a>(
    geometry: &'a [vk::AccelerationStructureGeometryKHR<'a>],
) -> vk::AccelerationStructureBuildGeometryInfoKHR<'a> {
    vk::AccelerationStructureBuildGeometryInfoKHR::default()
        .ty(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL)
        .flags(
            vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE
                | vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION,
        )
        .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
        .geometries(geometry)
}

impl Drop for RawAccel {
    fn drop(&mut self) {
        // SAFETY: every submission was waited for; null handles are ignored;
        // children go before the device.
        unsafe {
            self.device.device_wait_idle().ok();
            for (_, b) in std::mem::take(&mut self.kept_storage) {
                self.device.destroy_buffer(b, None);
            }
            for (_, b) in std::mem::take(&mut self.kept_cycle) {
                self.destroy_buffer(b);
            }
            if let Some((_, pool)) = self.kept_queries.take() {
                self.device.destroy_query_pool(pool, None);
            }
            if let Some(mut arena) = self.arena.take() {
                arena.destroy(&self.device);
            }
            self.device.destroy_fence(self.fence, None);
            self.device.destroy_semaphore(self.timeline, None);
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
        }
    }
}
