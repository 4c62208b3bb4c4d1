//! The raw side of the external-memory workload: two devices with
//! `VK_KHR_external_memory_fd`, an opaque-fd export on A and an import on
//! B, written directly against Vulkan. Made on first use; `Drop` destroys
//! what is not null. Completion is waited for on a timeline semaphore, the
//! primitive keel-hal's fences are, so the two sides wait the same way.

use ash::vk;

use super::{vk_err, Raw};
use crate::workload::{open_fds, EXTERNAL_COPY};

/// The two devices and what B keeps between rounds.
pub(super) struct RawExternal {
    a: ash::Device,
    b: ash::Device,
    fd_a: ash::khr::external_memory_fd::Device,
    queue: vk::Queue,
    family: u32,
    memory_types: Vec<vk::MemoryType>,
    pool: vk::CommandPool,
    cb: vk::CommandBuffer,
    /// A timeline semaphore, as keel-hal's fences are, and its last value.
    timeline: vk::Semaphore,
    value: std::cell::Cell<u64>,
    dst: vk::Buffer,
    dst_memory: vk::DeviceMemory,
}

impl RawExternal {
    /// Opens both devices on the adapter named `name`.
    pub(super) fn new(instance: &ash::Instance, name: &str) -> Result<Self, String> {
        // SAFETY: live instance.
        let pdevs =
            unsafe { instance.enumerate_physical_devices() }.map_err(vk_err("enumerate"))?;
        let pdev = pdevs
            .into_iter()
            .find(|&pd| {
                // SAFETY: pd came from this instance.
                let props = unsafe { instance.get_physical_device_properties(pd) };
                props
                    .device_name_as_c_str()
                    .is_ok_and(|n| n.to_string_lossy() == name)
            })
            .ok_or("external: the adapter is gone")?;
        // SAFETY: pdev came from this instance.
        let families = unsafe { instance.get_physical_device_queue_family_properties(pdev) };
        let family = families
            .iter()
            .position(|f| {
                f.queue_flags
                    .contains(vk::QueueFlags::TRANSFER | vk::QueueFlags::GRAPHICS)
            })
            .ok_or("external: no graphics queue family")? as u32;
        // SAFETY: pdev came from this instance.
        let memory_types = unsafe { instance.get_physical_device_memory_properties(pdev) }
            .memory_types_as_slice()
            .to_vec();
        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let extensions = [ash::khr::external_memory_fd::NAME.as_ptr()];
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let mut v13 = vk::PhysicalDeviceVulkan13Features::default().synchronization2(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions)
            .push_next(&mut v12)
            .push_next(&mut v13);
        // SAFETY: valid create info; destroyed in Drop (or below).
        let a = unsafe { instance.create_device(pdev, &info, None) }.map_err(vk_err("device A"))?;
        // SAFETY: as above.
        let b = match unsafe { instance.create_device(pdev, &info, None) } {
            Ok(b) => b,
            Err(e) => {
                // SAFETY: nothing was made on it.
                unsafe { a.destroy_device(None) };
                return Err(vk_err("device B")(e));
            }
        };
        let fd_a = ash::khr::external_memory_fd::Device::new(instance, &a);
        // SAFETY: the family has one queue.
        let queue = unsafe { b.get_device_queue(family, 0) };
        let mut ext = RawExternal {
            a,
            b,
            fd_a,
            queue,
            family,
            memory_types,
            pool: vk::CommandPool::null(),
            cb: vk::CommandBuffer::null(),
            timeline: vk::Semaphore::null(),
            value: std::cell::Cell::new(0),
            dst: vk::Buffer::null(),
            dst_memory: vk::DeviceMemory::null(),
        };
        ext.make_b()?;
        Ok(ext)
    }

    /// B's command buffer, fence and copy destination.
    fn make_b(&mut self) -> Result<(), String> {
        let b = &self.b;
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(self.family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: live device, valid infos; everything is destroyed in Drop.
        unsafe {
            self.pool = b.create_command_pool(&info, None).map_err(vk_err("pool"))?;
            let info = vk::CommandBufferAllocateInfo::default()
                .command_pool(self.pool)
                .command_buffer_count(1);
            self.cb = b.allocate_command_buffers(&info).map_err(vk_err("cb"))?[0];
            let mut ty =
                vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
            let info = vk::SemaphoreCreateInfo::default().push_next(&mut ty);
            self.timeline = b
                .create_semaphore(&info, None)
                .map_err(vk_err("timeline"))?;
            let info = vk::BufferCreateInfo::default()
                .size(EXTERNAL_COPY)
                .usage(vk::BufferUsageFlags::TRANSFER_DST);
            self.dst = b.create_buffer(&info, None).map_err(vk_err("dst"))?;
            let req = b.get_buffer_memory_requirements(self.dst);
            let index = self
                .memory_type(req.memory_type_bits)
                .ok_or("no memory type")?;
            let info = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(index);
            self.dst_memory = b
                .allocate_memory(&info, None)
                .map_err(vk_err("dst memory"))?;
            b.bind_buffer_memory(self.dst, self.dst_memory, 0)
                .map_err(vk_err("bind dst"))?;
        }
        Ok(())
    }

    /// The first device-local type among `bits`, else the first.
    fn memory_type(&self, bits: u32) -> Option<u32> {
        let allowed = |i: &usize| bits & (1 << i) != 0;
        let types = &self.memory_types;
        (0..types.len())
            .filter(allowed)
            .find(|&i| {
                types[i]
                    .property_flags
                    .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
            })
            .or_else(|| (0..types.len()).find(allowed))
            .map(|i| i as u32)
    }

    /// A buffer of `size` on `device` with dedicated memory: exportable, or
    /// imported from `fd` (which the driver takes on success).
    ///
    /// # Safety
    /// `device` is A or B; an fd is an opaque fd of an allocation of this size.
    unsafe fn buffer(
        &self,
        device: &ash::Device,
        size: u64,
        fd: Option<i32>,
    ) -> Result<(vk::Buffer, vk::DeviceMemory), String> {
        let ht = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;
        let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(ht);
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST)
            .push_next(&mut external);
        // SAFETY: valid create info.
        let buffer = unsafe { device.create_buffer(&info, None) }.map_err(vk_err("buffer"))?;
        // SAFETY: live buffer.
        let req = unsafe { device.get_buffer_memory_requirements(buffer) };
        let index = self
            .memory_type(req.memory_type_bits)
            .ok_or("no memory type")?;
        let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().buffer(buffer);
        let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(ht);
        let mut import = vk::ImportMemoryFdInfoKHR::default().handle_type(ht);
        let mut info = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(index)
            .push_next(&mut dedicated);
        info = match fd {
            Some(fd) => {
                import = import.fd(fd);
                info.push_next(&mut import)
            }
            None => info.push_next(&mut export),
        };
        // SAFETY: valid chain: dedicated to the unbound buffer.
        let memory = match unsafe { device.allocate_memory(&info, None) } {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: never bound.
                unsafe { device.destroy_buffer(buffer, None) };
                return Err(vk_err("memory")(e));
            }
        };
        // SAFETY: fresh dedicated memory for this buffer.
        if let Err(e) = unsafe { device.bind_buffer_memory(buffer, memory, 0) } {
            // SAFETY: unused.
            unsafe {
                device.destroy_buffer(buffer, None);
                device.free_memory(memory, None);
            }
            return Err(vk_err("bind")(e));
        }
        Ok((buffer, memory))
    }

    /// One round: export on A, import on B, copy out on B, destroy both.
    fn round(&self, size: u64) -> Result<(), String> {
        // SAFETY: every object is this side's; the copy is waited for
        // before anything it uses is destroyed.
        unsafe {
            let (buf_a, mem_a) = self.buffer(&self.a, size, None)?;
            let info = vk::MemoryGetFdInfoKHR::default()
                .memory(mem_a)
                .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
            let fd = self.fd_a.get_memory_fd(&info).map_err(vk_err("export"))?;
            let (buf_b, mem_b) = self.buffer(&self.b, size, Some(fd))?;
            let b = &self.b;
            b.begin_command_buffer(self.cb, &vk::CommandBufferBeginInfo::default())
                .map_err(vk_err("begin"))?;
            let acquire = [vk::BufferMemoryBarrier2::default()
                .src_queue_family_index(vk::QUEUE_FAMILY_EXTERNAL)
                .dst_queue_family_index(self.family)
                .dst_stage_mask(vk::PipelineStageFlags2::COPY)
                .dst_access_mask(vk::AccessFlags2::TRANSFER_READ)
                .buffer(buf_b)
                .size(vk::WHOLE_SIZE)];
            b.cmd_pipeline_barrier2(
                self.cb,
                &vk::DependencyInfo::default().buffer_memory_barriers(&acquire),
            );
            let region = [vk::BufferCopy::default().size(EXTERNAL_COPY)];
            b.cmd_copy_buffer(self.cb, buf_b, self.dst, &region);
            b.end_command_buffer(self.cb).map_err(vk_err("end"))?;
            let value = self.value.get() + 1;
            self.value.set(value);
            let cbs = [vk::CommandBufferSubmitInfo::default().command_buffer(self.cb)];
            let signal = [vk::SemaphoreSubmitInfo::default()
                .semaphore(self.timeline)
                .value(value)
                .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
            let submit = [vk::SubmitInfo2::default()
                .command_buffer_infos(&cbs)
                .signal_semaphore_infos(&signal)];
            b.queue_submit2(self.queue, &submit, vk::Fence::null())
                .map_err(vk_err("submit"))?;
            let semaphores = [self.timeline];
            let values = [value];
            let wait = vk::SemaphoreWaitInfo::default()
                .semaphores(&semaphores)
                .values(&values);
            b.wait_semaphores(&wait, u64::MAX).map_err(vk_err("wait"))?;
            b.destroy_buffer(buf_b, None);
            b.free_memory(mem_b, None);
            self.a.destroy_buffer(buf_a, None);
            self.a.free_memory(mem_a, None);
        }
        Ok(())
    }
}

impl Drop for RawExternal {
    fn drop(&mut self) {
        // SAFETY: nothing is pending (every round waits); null handles are ignored.
        unsafe {
            let b = &self.b;
            b.destroy_buffer(self.dst, None);
            b.free_memory(self.dst_memory, None);
            b.destroy_semaphore(self.timeline, None);
            b.destroy_command_pool(self.pool, None);
            b.destroy_device(None);
            self.a.destroy_device(None);
        }
    }
}

impl Raw {
    /// The external workload: `iters` rounds, in ns per round.
    pub(super) fn external(&mut self, size: u64, iters: usize) -> Result<f64, String> {
        if self.external.is_none() {
            self.external = Some(RawExternal::new(&self.instance, &self.report.name)?);
        }
        let ext = self.external.as_ref().ok_or("external devices missing")?;
        let fds = open_fds();
        let start = crate::count::Timer::start();
        for _ in 0..iters {
            ext.round(size)?;
        }
        let ns = start.stop().as_nanos() as f64 / iters as f64;
        let now = open_fds();
        if now != fds {
            return Err(format!("raw: open fds {fds} before, {now} after"));
        }
        Ok(ns)
    }
}
