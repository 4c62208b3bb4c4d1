//! Memory: VMA behind keel-hal's [`Memory`] kinds. The only file that names `vk_mem`.
//! (`Memory::External` is not VMA's: `external.rs` allocates it, and
//! [`Block::External`] frees it here with the resource.)
//!
//! * `Memory::Device` → `AutoPreferDevice`.
//! * `Memory::Upload` → sequential-write host access, persistently mapped,
//!   **required** `HOST_VISIBLE | HOST_COHERENT`.
//! * `Memory::Readback` → random host access, persistently mapped,
//!   **required** `HOST_VISIBLE | HOST_COHERENT`, `HOST_CACHED` preferred.
//!
//! There is no fallback to non-coherent memory: where no type fits, VMA
//! answers `VK_ERROR_FEATURE_NOT_PRESENT` and creation fails with
//! [`AllocError::NoSuitableMemory`].
//!
//! Dedicated allocations: VMA is told the API version min(instance, device)
//! (at least 1.1 here, since keel-hal requires 1.3). With a version ≥ 1.1,
//! vk-mem 0.5 (VMA 3.x) queries requirements through
//! `vkGetBufferMemoryRequirements2` / `vkGetImageMemoryRequirements2` with a
//! chained `VkMemoryDedicatedRequirements`, and gives a resource its own
//! `VkDeviceMemory` whenever the driver requires or prefers it (see
//! `VmaAllocator_T::GetBufferMemoryRequirements` in the vendored
//! `vk_mem_alloc.h`, which tests `m_VulkanApiVersion >= 1.1`). The
//! `KHR_DEDICATED_ALLOCATION` flag is therefore not needed.

use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ash::vk;
use vk_mem::Alloc as _;

use super::instance::InstanceShared;
use crate::{Counter, DeviceError, Memory};

/// Why a resource could not get memory.
#[derive(Debug)]
pub(crate) enum AllocError {
    /// No memory type satisfies the request.
    NoSuitableMemory,
    /// The driver failed.
    Device(DeviceError),
}

impl From<vk::Result> for AllocError {
    fn from(result: vk::Result) -> Self {
        match result {
            // VMA's answer when no memory type has the required flags.
            vk::Result::ERROR_FEATURE_NOT_PRESENT => AllocError::NoSuitableMemory,
            other => AllocError::Device(super::map_err(other)),
        }
    }
}

/// The memory behind one buffer or image.
#[derive(Debug)]
pub(crate) enum Block {
    /// Sub-allocated (or dedicated) by VMA.
    Vma(vk_mem::Allocation),
    /// A resource wrapped from a raw handle (`buffer_from_raw`,
    /// `texture_from_raw`): the caller owns the handle and its memory, and
    /// destroying the resource frees neither.
    CallerOwned,
    /// External memory (`external.rs`): a dedicated `vkAllocateMemory`
    /// outside VMA, exported or imported; freed once, with the resource.
    External(super::external::ExternalBlock),
}

/// The device's VMA allocator.
pub(crate) struct MemoryAllocator {
    /// Dropped explicitly by [`MemoryAllocator::destroy`], before `vkDestroyDevice`.
    raw: ManuallyDrop<vk_mem::Allocator>,
    /// The device's function table, to destroy resources whose memory is
    /// not VMA's (`Block::External`).
    device: ash::Device,
    /// The instance, told where each object's memory is bound while
    /// validation is on (for its allow-list).
    instance: Arc<InstanceShared>,
    /// VMA allocations alive now: a device dropped while this is not zero
    /// leaks its allocator rather than let VMA's assertion abort.
    live: AtomicUsize,
}

impl std::fmt::Debug for MemoryAllocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryAllocator").finish_non_exhaustive()
    }
}

impl MemoryAllocator {
    /// Creates the allocator. VMA takes its function pointers from `device`
    /// and `instance` (so fault injection sees VMA's calls too).
    ///
    /// # Safety
    /// `device` was created on `physical_device` of `instance`, with
    /// `bufferDeviceAddress` enabled if `buffer_device_address`; all three
    /// outlive the allocator; `api_version` ≤ both the instance's and the
    /// device's API version.
    pub(crate) unsafe fn new(
        instance: &Arc<InstanceShared>,
        device: &ash::Device,
        physical_device: vk::PhysicalDevice,
        api_version: u32,
        buffer_device_address: bool,
    ) -> Result<Self, vk::Result> {
        let mut info = vk_mem::AllocatorCreateInfo::new(&instance.raw, device, physical_device);
        info.vulkan_api_version = api_version;
        if buffer_device_address {
            info.flags |= vk_mem::AllocatorCreateFlags::BUFFER_DEVICE_ADDRESS;
        }
        // SAFETY: forwarded contract.
        let raw = unsafe { vk_mem::Allocator::new(info) }?;
        Ok(Self {
            raw: ManuallyDrop::new(raw),
            device: device.clone(),
            instance: instance.clone(),
            live: AtomicUsize::new(0),
        })
    }

    /// Destroys the allocator, freeing every block it still holds.
    ///
    /// A device dropped while resources it made are still alive is the
    /// caller's error, and VMA answers it with an assertion that aborts the
    /// process (before a panic that caused the drop can even be printed).
    /// Then the allocator is logged and leaked instead: its memory goes
    /// with the device, and the validation layer names the objects left.
    ///
    /// # Safety
    /// Called exactly once, as the last use of `self`, before the device is
    /// destroyed.
    pub(crate) unsafe fn destroy(&mut self) {
        let live = self.live.load(Ordering::Acquire);
        if live != 0 {
            log::error!(
                "device destroyed with {live} buffer(s) or texture(s) still alive: their \
                 memory allocator is leaked, not destroyed (destroy every resource before \
                 its device)"
            );
            return;
        }
        // SAFETY: forwarded contract: called once, never used again.
        unsafe { ManuallyDrop::drop(&mut self.raw) };
    }

    /// Counts a new VMA allocation and tells the instance where it is bound.
    fn note_created(&self, object: u64, allocation: &vk_mem::Allocation) {
        self.live.fetch_add(1, Ordering::Relaxed);
        if self.instance.validation {
            let info = self.raw.get_allocation_info(allocation);
            let memory = ash::vk::Handle::as_raw(info.device_memory);
            self.instance
                .note_binding(object, Some((memory, info.offset, info.size)));
        }
    }

    /// Counts a VMA allocation freed.
    fn note_destroyed(&self, object: u64) {
        self.live.fetch_sub(1, Ordering::Relaxed);
        self.instance.note_binding(object, None);
    }

    /// Creates a buffer with memory of `memory`'s kind bound to it. Mapped
    /// kinds come back with their persistent mapping. On failure nothing is
    /// left behind (VMA releases the buffer and memory itself).
    ///
    /// # Safety
    /// `info` is a valid buffer description for this device.
    pub(crate) unsafe fn create_buffer(
        &self,
        info: &vk::BufferCreateInfo<'_>,
        memory: Memory,
        counter: &Counter,
    ) -> Result<(vk::Buffer, Block, Option<NonNull<u8>>), AllocError> {
        // SAFETY: forwarded contract.
        unsafe { self.create_buffer_aligned(info, memory, 0, counter) }
    }

    /// [`Self::create_buffer`] with the memory placed at a multiple of
    /// `min_alignment` (a power of two; 0 or 1: the buffer's own
    /// requirement), for buffers whose device address needs more alignment
    /// than the driver asks of their memory (shader binding tables, whose
    /// regions start at multiples of `shaderGroupBaseAlignment`).
    ///
    /// # Safety
    /// `info` is a valid buffer description for this device.
    pub(crate) unsafe fn create_buffer_aligned(
        &self,
        info: &vk::BufferCreateInfo<'_>,
        memory: Memory,
        min_alignment: u64,
        counter: &Counter,
    ) -> Result<(vk::Buffer, Block, Option<NonNull<u8>>), AllocError> {
        let create = allocation_info(memory).ok_or(AllocError::NoSuitableMemory)?;
        // SAFETY: forwarded contract.
        let (buffer, mut allocation) = unsafe {
            if min_alignment > 1 {
                self.raw
                    .create_buffer_with_alignment(info, &create, min_alignment)
            } else {
                self.raw.create_buffer(info, &create)
            }
        }?;
        let mapped = if memory.is_mappable() {
            let ptr = self.raw.get_allocation_info(&allocation).mapped_data;
            match NonNull::new(ptr.cast::<u8>()) {
                Some(p) => Some(p),
                None => {
                    log::error!("VMA returned a mapped allocation without a pointer");
                    // SAFETY: just created together; not used by the GPU.
                    unsafe { self.raw.destroy_buffer(buffer, &mut allocation) };
                    return Err(AllocError::Device(DeviceError::Unexpected));
                }
            }
        } else {
            None
        };
        self.note_created(ash::vk::Handle::as_raw(buffer), &allocation);
        counter.add();
        Ok((buffer, Block::Vma(allocation), mapped))
    }

    /// Destroys a buffer and frees its memory; a caller-owned one is left alone.
    ///
    /// # Safety
    /// `buffer` and `block` came from one `create_buffer` of this allocator;
    /// no pending GPU work uses them.
    pub(crate) unsafe fn destroy_buffer(
        &self,
        buffer: vk::Buffer,
        block: Block,
        counter: &Counter,
    ) {
        match block {
            Block::Vma(mut allocation) => {
                self.note_destroyed(ash::vk::Handle::as_raw(buffer));
                // SAFETY: forwarded contract.
                unsafe { self.raw.destroy_buffer(buffer, &mut allocation) };
                counter.sub();
            }
            Block::External(block) => {
                // SAFETY: forwarded contract; the buffer goes before its memory.
                unsafe {
                    self.device.destroy_buffer(buffer, None);
                    block.free(&self.device);
                }
                counter.sub();
            }
            Block::CallerOwned => {}
        }
    }

    /// Creates an image in device memory. On failure nothing is left behind.
    ///
    /// # Safety
    /// `info` is a valid image description for this device.
    pub(crate) unsafe fn create_image(
        &self,
        info: &vk::ImageCreateInfo<'_>,
        counter: &Counter,
    ) -> Result<(vk::Image, Block), AllocError> {
        let create = allocation_info(Memory::Device).ok_or(AllocError::NoSuitableMemory)?;
        // SAFETY: forwarded contract.
        let (image, allocation) = unsafe { self.raw.create_image(info, &create) }?;
        self.note_created(ash::vk::Handle::as_raw(image), &allocation);
        counter.add();
        Ok((image, Block::Vma(allocation)))
    }

    /// Destroys an image and frees its memory; a caller-owned one is left alone.
    ///
    /// # Safety
    /// `image` and `block` came from one `create_image` of this allocator; no
    /// pending GPU work uses them and their views are destroyed.
    pub(crate) unsafe fn destroy_image(&self, image: vk::Image, block: Block, counter: &Counter) {
        match block {
            Block::Vma(mut allocation) => {
                self.note_destroyed(ash::vk::Handle::as_raw(image));
                // SAFETY: forwarded contract.
                unsafe { self.raw.destroy_image(image, &mut allocation) };
                counter.sub();
            }
            Block::External(block) => {
                // SAFETY: forwarded contract; the image goes before its memory.
                unsafe {
                    self.device.destroy_image(image, None);
                    block.free(&self.device);
                }
                counter.sub();
            }
            Block::CallerOwned => {}
        }
    }
}

/// VMA's description of where a kind of memory should come from; `None`
/// for external memory, which VMA never allocates.
fn allocation_info(memory: Memory) -> Option<vk_mem::AllocationCreateInfo> {
    use vk::MemoryPropertyFlags as P;
    use vk_mem::AllocationCreateFlags as F;
    let coherent = P::HOST_VISIBLE | P::HOST_COHERENT;
    Some(match memory {
        Memory::Device => vk_mem::AllocationCreateInfo {
            usage: vk_mem::MemoryUsage::AutoPreferDevice,
            ..Default::default()
        },
        Memory::Upload => vk_mem::AllocationCreateInfo {
            usage: vk_mem::MemoryUsage::Auto,
            flags: F::HOST_ACCESS_SEQUENTIAL_WRITE | F::MAPPED,
            required_flags: coherent,
            ..Default::default()
        },
        Memory::Readback => vk_mem::AllocationCreateInfo {
            usage: vk_mem::MemoryUsage::Auto,
            flags: F::HOST_ACCESS_RANDOM | F::MAPPED,
            required_flags: coherent,
            preferred_flags: P::HOST_CACHED,
            ..Default::default()
        },
        // Not VMA's: device.rs routes it to external.rs before this point.
        Memory::External(_) => return None,
    })
}
