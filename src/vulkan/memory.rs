//! Memory: VMA behind keel-hal's [`Memory`] kinds. The only file that names `vk_mem`.
//! (`Memory::External` is not VMA's: `external.rs` allocates it, and
//! [`Block::External`] frees it here with the resource.)
//!
//! * `Memory::Device` → `AutoPreferDevice`.
//! * `Memory::Upload` → `AutoPreferDevice`, sequential-write host access,
//!   persistently mapped, **required** `HOST_VISIBLE | HOST_COHERENT`. VMA
//!   then prefers `DEVICE_LOCAL | HOST_VISIBLE` (a resizable BAR) even for
//!   a buffer the GPU only copies from, and not `HOST_CACHED`; when that
//!   type is full VMA tries the next (host memory). Plain `Auto` would put
//!   transfer-only staging in host memory, which on a discrete GPU costs
//!   system RAM and a PCIe read at copy time; wgpu-hal's `CpuToGpu` makes
//!   the same choice as this.
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
//!
//! # What is kept, and when it is let go
//!
//! VMA's own block vectors free a block as soon as a second one is empty
//! (they keep at most *one* empty block per memory type), so a burst of
//! buffers created then destroyed allocates and frees whole blocks every
//! round: 1 `vkAllocateMemory` + `vkFreeMemory` a round for 1,000 buffers of
//! 64 KiB, 17 for 1,000 of 4 MiB (256 MiB blocks). Two things change that:
//!
//! * **Retention** (`memory/retention.rs`): a destroyed `Device`, `Upload`
//!   or `Readback` buffer is not destroyed but filed, `VkBuffer` and memory
//!   together, under its description (kind, create flags, usage, size,
//!   placement alignment). The next buffer of the same description *is*
//!   that buffer: no `vkCreateBuffer`, no bind, no allocation, no block
//!   search. The Vulkan specification guarantees that identical
//!   `VkBufferCreateInfo`s have identical memory requirements (see
//!   `BufferKey`), so a kept buffer is as good as a new one made from the
//!   same create info; its contents are whatever was last written, as
//!   with any reused memory. (Memory VMA made dedicated — the driver
//!   requires or prefers it, or the buffer is over half a block: VMA's
//!   heuristic, 128 MiB on heaps over 1 GiB — is tied to its buffer by
//!   `VkMemoryDedicatedAllocateInfo` anyway.) That is also the large-buffer
//!   policy: near the block size, one dedicated allocation per buffer (no
//!   half-empty blocks), kept and reused whole. Kept buffers hold their
//!   memory in the blocks it lives in, so steady churn makes no
//!   `vkAllocateMemory`, `vkFreeMemory`, `vkCreateBuffer` or
//!   `vkDestroyBuffer` at all. A kept buffer's debug name is cleared when
//!   it is reused without a label (`device.rs`).
//! * **Pools**: buffers are allocated from one VMA custom pool per memory
//!   type (VMA-managed block sizes, dedicated allocations allowed; made on
//!   first use), falling back to VMA's default pools (which may pick
//!   another memory type) when the pool's type is out of memory. A pool
//!   left without allocations can be destroyed, which frees its last empty
//!   block too. Textures use VMA's default pools and are not kept.
//!
//! Bounds: the bytes kept never exceed the retention limit
//! (`Device::set_memory_retention`; default a quarter of the largest heap):
//! keeping more evicts the oldest kept memory first, whatever its
//! description. Nothing is kept while the buffer's heap is at 90% of its
//! budget or more (`VK_EXT_memory_budget` where the device has it, else
//! VMA's estimate: 80% of the heap), as of the last read of the budgets:
//! they are read again every 32 frees or 256 MiB freed, on every free while
//! a heap was under pressure, and after a trim (`BudgetCache` in
//! `memory/retention.rs`). `Device::trim_memory` frees everything
//! kept and destroys every pool left empty, so what stays reserved is the
//! blocks of live resources (plus, in VMA's default pools, which only
//! textures and fallbacks use, at most one empty block per memory type).
//! `Device::memory_report` shows live, retained and reserved bytes per
//! memory type and heap.

use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::Arc;

use ash::vk;
use parking_lot::{Mutex, RwLock};
use vk_mem::Alloc as _;

use super::instance_shared::InstanceShared;
use crate::{Counter, DeviceError, ExternalMemory, Memory};

mod retention;

use retention::{BudgetCache, BufferKey, Kept, Retention};

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
            other => AllocError::Device(super::conv::map_err(other)),
        }
    }
}

/// A VMA allocation behind one resource.
#[derive(Debug)]
pub(crate) struct VmaMemory {
    allocation: vk_mem::Allocation,
    /// The buffer's description, where it may be kept for reuse (`None`:
    /// textures, and buffers with a `pNext` chain).
    key: Option<BufferKey>,
    /// The allocation's size.
    bytes: u64,
    /// The memory type it lives in.
    memory_type: u32,
}

/// The memory behind one buffer or image.
#[derive(Debug)]
pub(crate) enum Block {
    /// Sub-allocated (or dedicated) by VMA.
    Vma(VmaMemory),
    /// A resource wrapped from a raw handle (`buffer_from_raw`,
    /// `texture_from_raw`): the caller owns the handle and its memory, and
    /// destroying the resource frees neither.
    CallerOwned,
    /// External memory (`external.rs`): a dedicated `vkAllocateMemory`
    /// outside VMA, exported or imported; freed once, with the resource.
    External(ExternalBlock),
}

/// What retention keeps of a destroyed buffer: the buffer itself, still
/// bound to its memory, reused as is by the next buffer of its description.
#[derive(Debug)]
struct Reusable {
    buffer: vk::Buffer,
    allocation: vk_mem::Allocation,
}

/// The device's VMA allocator.
pub(crate) struct MemoryAllocator {
    /// Dropped explicitly by [`MemoryAllocator::destroy`], before
    /// `vkDestroyDevice`, after the pools (which hold clones).
    raw: ManuallyDrop<Arc<vk_mem::Allocator>>,
    /// One custom pool per memory type, for buffers; `None` until first
    /// used, and again after a trim found it empty. Held for reading while
    /// a pool allocates, for writing while one is made or destroyed.
    pools: RwLock<Vec<Option<vk_mem::AllocatorPool>>>,
    /// Destroyed buffers' memory kept for reuse (module docs), with the
    /// budget reads that gate it: one lock per create or destroy.
    retention: Mutex<Keeping>,
    /// The heap of each memory type.
    heap_of_type: Vec<u32>,
    /// The memory heaps.
    heaps: Vec<vk::MemoryHeap>,
    /// Whether `VK_EXT_memory_budget` is enabled (VMA reads real budgets).
    memory_budget: bool,
    /// The device's function table, to destroy resources whose memory is
    /// not VMA's (`Block::External`).
    device: ash::Device,
    /// The instance, told where each object's memory is bound while
    /// validation is on (for its allow-list).
    instance: Arc<InstanceShared>,
    /// Debug names, where on: a kept buffer loses its name when reused.
    debug_utils: Option<ash::ext::debug_utils::Device>,
}

/// Retention and the last read of the budgets, behind one lock.
#[derive(Debug)]
struct Keeping {
    /// Destroyed buffers' memory kept for reuse.
    kept: Retention<Reusable>,
    /// The last read of which heaps are under pressure (retention's 90%
    /// rule; re-read as `BudgetCache` documents).
    budget: BudgetCache,
}

impl std::fmt::Debug for MemoryAllocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryAllocator").finish_non_exhaustive()
    }
}

/// A buffer's description as a retention key: `None` for memory that is
/// never kept (external, or a create info with a `pNext` chain or
/// concurrent sharing, whose requirements the key would not capture).
fn buffer_key(
    info: &vk::BufferCreateInfo<'_>,
    memory: Memory,
    alignment: u64,
) -> Option<BufferKey> {
    let kind = match memory {
        Memory::Device => 0,
        Memory::Upload => 1,
        Memory::Readback => 2,
        Memory::External(_) => return None,
    };
    if !info.p_next.is_null() || info.sharing_mode != vk::SharingMode::EXCLUSIVE {
        return None;
    }
    Some(BufferKey {
        kind,
        flags: info.flags.as_raw(),
        usage: info.usage.as_raw(),
        size: info.size,
        alignment: if alignment > 1 { alignment } else { 0 },
    })
}

/// Creates a buffer with memory in `alloc` (a pool, or VMA's default pools).
///
/// # Safety
/// `info` is a valid buffer description for the allocator's device.
unsafe fn create_in(
    alloc: &impl vk_mem::Alloc,
    info: &vk::BufferCreateInfo<'_>,
    create: &vk_mem::AllocationCreateInfo,
    min_alignment: u64,
) -> Result<(vk::Buffer, vk_mem::Allocation), vk::Result> {
    // SAFETY: forwarded contract.
    unsafe {
        if min_alignment > 1 {
            alloc.create_buffer_with_alignment(info, create, min_alignment)
        } else {
            alloc.create_buffer(info, create)
        }
    }
}

impl MemoryAllocator {
    /// Creates the allocator. VMA takes its function pointers from `device`
    /// and `instance` (so fault injection sees VMA's calls too).
    ///
    /// # Safety
    /// `device` was created on `physical_device` of `instance`, with
    /// `bufferDeviceAddress` enabled if `buffer_device_address` and
    /// `VK_EXT_memory_budget` enabled if `memory_budget`; all three outlive
    /// the allocator; `api_version` ≤ both the instance's and the device's
    /// API version; `debug_utils`, if any, was loaded for `device`.
    pub(crate) unsafe fn new(
        instance: &Arc<InstanceShared>,
        device: &ash::Device,
        physical_device: vk::PhysicalDevice,
        api_version: u32,
        buffer_device_address: bool,
        memory_budget: bool,
        debug_utils: Option<ash::ext::debug_utils::Device>,
    ) -> Result<Self, vk::Result> {
        let mut info = vk_mem::AllocatorCreateInfo::new(&instance.raw, device, physical_device);
        info.vulkan_api_version = api_version;
        if buffer_device_address {
            info.flags |= vk_mem::AllocatorCreateFlags::BUFFER_DEVICE_ADDRESS;
        }
        if memory_budget {
            info.flags |= vk_mem::AllocatorCreateFlags::EXT_MEMORY_BUDGET;
        }
        // SAFETY: forwarded contract.
        let raw = unsafe { vk_mem::Allocator::new(info) }?;
        // SAFETY: the allocator is live; the properties are copied out.
        let props = unsafe { raw.get_memory_properties() };
        let type_count = (props.memory_type_count as usize).min(vk::MAX_MEMORY_TYPES);
        let heap_count = (props.memory_heap_count as usize).min(vk::MAX_MEMORY_HEAPS);
        let heap_of_type: Vec<u32> = props.memory_types[..type_count]
            .iter()
            .map(|t| t.heap_index)
            .collect();
        let heaps = props.memory_heaps[..heap_count].to_vec();
        let largest = heaps.iter().map(|h| h.size).max().unwrap_or(0);
        Ok(Self {
            raw: ManuallyDrop::new(Arc::new(raw)),
            pools: RwLock::new((0..type_count).map(|_| None).collect()),
            retention: Mutex::new(Keeping {
                kept: Retention::new(largest / 4),
                budget: BudgetCache::default(),
            }),
            heap_of_type,
            heaps,
            memory_budget,
            device: device.clone(),
            instance: instance.clone(),
            debug_utils,
        })
    }

    /// Destroys the allocator, freeing every block it still holds.
    ///
    /// A device dropped while resources it made are still alive is the
    /// caller's error, and VMA answers it with an assertion that aborts the
    /// process (before a panic that caused the drop can even be printed).
    /// Then the allocator is logged and leaked instead: its memory goes
    /// with the device, and the validation layer names the objects left.
    /// Kept memory is freed first either way. `live` is the device's count
    /// of live memory allocations (`counters.memory_allocations`: VMA's and
    /// external memory's; kept memory is not counted), which every create
    /// and destroy of this allocator keeps.
    ///
    /// # Safety
    /// Called exactly once, as the last use of `self`, before the device is
    /// destroyed.
    pub(crate) unsafe fn destroy(&mut self, live: isize) {
        let kept = self.retention.get_mut().kept.drain();
        // SAFETY: kept memory belongs to no live resource and no pending work.
        unsafe { self.release(kept) };
        if live != 0 {
            log::error!(
                "device destroyed with {live} buffer(s), texture(s) or memory block(s) still \
                 alive: their memory allocator is leaked, not destroyed (destroy every \
                 resource before its device)"
            );
            // The pools hold the allocator: leaking them leaks it.
            std::mem::forget(std::mem::take(self.pools.get_mut()));
            return;
        }
        // Every pool is empty now; each goes before the allocator.
        self.pools.get_mut().clear();
        // SAFETY: forwarded contract: called once, never used again; the
        // pools' clones are gone, so this drop destroys the allocator.
        unsafe { ManuallyDrop::drop(&mut self.raw) };
    }

    /// Tells the instance where a new VMA allocation is bound (validation
    /// only; the caller's counter counts it).
    fn note_created(&self, object: u64, info: &vk_mem::AllocationInfo) {
        if self.instance.validation {
            let memory = ash::vk::Handle::as_raw(info.device_memory);
            self.instance
                .note_binding(object, Some((memory, info.offset, info.size)));
        }
    }

    /// Tells the instance a VMA allocation was freed (validation only).
    fn note_destroyed(&self, object: u64) {
        self.instance.note_binding(object, None);
    }

    /// Creates a buffer with memory of `memory`'s kind bound to it: a kept
    /// buffer of the same description if there is one, else a new buffer
    /// on new memory. Mapped kinds come back with their persistent mapping.
    /// On failure nothing is left behind.
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
        let key = buffer_key(info, memory, min_alignment);
        if let Some(key) = key {
            let kept = self.retention.lock().kept.take(&key);
            if let Some(kept) = kept {
                // SAFETY: `kept` was filed under `key`.
                return unsafe { self.reuse(key, kept, memory, counter) };
            }
        }
        let create = allocation_info(memory).ok_or(AllocError::NoSuitableMemory)?;
        // SAFETY: forwarded contract.
        let (buffer, mut allocation) =
            unsafe { self.allocate_buffer(info, &create, min_alignment) }?;
        let details = self.raw.get_allocation_info2(&allocation);
        let info = details.allocation_info;
        let mapped = if memory.is_mappable() {
            match NonNull::new(info.mapped_data.cast::<u8>()) {
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
        self.note_created(ash::vk::Handle::as_raw(buffer), &info);
        counter.add();
        let block = Block::Vma(VmaMemory {
            allocation,
            key,
            bytes: info.size,
            memory_type: info.memory_type,
        });
        Ok((buffer, block, mapped))
    }

    /// New memory for a buffer: from the pool of the memory type VMA picks
    /// for it, or VMA's default pools when that pool is out of memory (they
    /// may pick another type) or cannot be made.
    ///
    /// # Safety
    /// `info` is a valid buffer description for this device.
    unsafe fn allocate_buffer(
        &self,
        info: &vk::BufferCreateInfo<'_>,
        create: &vk_mem::AllocationCreateInfo,
        min_alignment: u64,
    ) -> Result<(vk::Buffer, vk_mem::Allocation), vk::Result> {
        // SAFETY: forwarded contract (Vulkan 1.3: a query, no buffer made).
        let memory_type = unsafe {
            self.raw
                .find_memory_type_index_for_buffer_info(info, create)
        }? as usize;
        self.ensure_pool(memory_type);
        let pooled = {
            let pools = self.pools.read();
            pools
                .get(memory_type)
                .and_then(Option::as_ref)
                // SAFETY: forwarded contract; the read lock keeps the pool
                // alive while it allocates.
                .map(|pool| unsafe { create_in(pool, info, create, min_alignment) })
        };
        match pooled {
            Some(Err(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY)) | None => {
                // SAFETY: forwarded contract.
                unsafe { create_in(&**self.raw, info, create, min_alignment) }
            }
            Some(result) => result,
        }
    }

    /// Makes the pool of `memory_type` if there is none.
    fn ensure_pool(&self, memory_type: usize) {
        if self
            .pools
            .read()
            .get(memory_type)
            .is_none_or(Option::is_some)
        {
            return;
        }
        let mut pools = self.pools.write();
        let Some(slot) = pools.get_mut(memory_type) else {
            return;
        };
        if slot.is_some() {
            return;
        }
        let info = vk_mem::PoolCreateInfo {
            memory_type_index: memory_type as u32,
            // Block size 0: VMA sizes blocks as for its default pools and
            // may make dedicated allocations. No block is made up front.
            ..Default::default()
        };
        match self.raw.create_pool(&info) {
            Ok(pool) => *slot = Some(pool),
            Err(e) => log::debug!("vmaCreatePool (memory type {memory_type}) failed: {e:?}"),
        }
    }

    /// A kept buffer, reused as is: made with this very description, so as
    /// good as new (module docs).
    ///
    /// # Safety
    /// `kept` was filed under `key`.
    unsafe fn reuse(
        &self,
        key: BufferKey,
        kept: Kept<Reusable>,
        memory: Memory,
        counter: &Counter,
    ) -> Result<(vk::Buffer, Block, Option<NonNull<u8>>), AllocError> {
        let Kept {
            value: Reusable { buffer, allocation },
            bytes,
            memory_type,
        } = kept;
        let mut mapped = None;
        if memory.is_mappable() || self.instance.validation {
            let details = self.raw.get_allocation_info(&allocation);
            if memory.is_mappable() {
                // Kept allocations stay persistently mapped.
                match NonNull::new(details.mapped_data.cast::<u8>()) {
                    Some(p) => mapped = Some(p),
                    None => {
                        log::error!("VMA kept a mapped allocation without a pointer");
                        let mut allocation = allocation;
                        // SAFETY: ours, not used by the GPU.
                        unsafe { self.raw.destroy_buffer(buffer, &mut allocation) };
                        return Err(AllocError::Device(DeviceError::Unexpected));
                    }
                }
            }
            self.note_created(ash::vk::Handle::as_raw(buffer), &details);
        }
        if let Some(du) = &self.debug_utils {
            // An earlier buffer's name goes (device.rs names it again if
            // the new one has a label).
            // SAFETY: the buffer is live and of this device.
            unsafe { super::object_name::name_object(du, buffer, "") };
        }
        counter.add();
        let block = Block::Vma(VmaMemory {
            allocation,
            key: Some(key),
            bytes,
            memory_type,
        });
        Ok((buffer, block, mapped))
    }

    /// Offers a destroyed buffer (with its memory) to retention unless its heap is
    /// under pressure (the 90% rule, with the budgets read as
    /// [`BudgetCache`] says), under one lock; frees what is not kept.
    fn keep_unless_pressed(&self, key: BufferKey, kept: Kept<Reusable>) {
        let heap = self.heap_of_type.get(kept.memory_type as usize).copied();
        let released = {
            let mut keeping = self.retention.lock();
            let keep = heap.is_some_and(|heap| {
                !keeping
                    .budget
                    .under_pressure(heap, kept.bytes, || self.pressured_heaps())
            });
            keeping.kept.offer(key, kept, keep)
        };
        // SAFETY: kept memory belongs to no live resource and no pending work.
        unsafe { self.release(released) };
    }

    /// The heaps at 90% of their budget or more, one bit each (VMA's
    /// budgets: `VK_EXT_memory_budget`'s where enabled).
    fn pressured_heaps(&self) -> u32 {
        match self.raw.get_heap_budgets() {
            Ok(budgets) => budgets
                .iter()
                .take(32)
                .enumerate()
                .filter(|(_, b)| b.usage >= b.budget / 10 * 9)
                .fold(0, |bits, (i, _)| bits | 1 << i),
            Err(_) => 0,
        }
    }

    /// Frees memory retention let go.
    ///
    /// # Safety
    /// Nothing uses it (it belonged to destroyed, idle buffers).
    unsafe fn release(&self, released: Vec<Reusable>) {
        for Reusable {
            buffer,
            mut allocation,
        } in released
        {
            // SAFETY: forwarded contract; the buffer goes with its memory.
            unsafe { self.raw.destroy_buffer(buffer, &mut allocation) };
        }
    }

    /// Destroys a buffer, or keeps it with its memory for the next buffer
    /// of the same description (module docs). A caller-owned buffer is
    /// left alone.
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
            Block::Vma(vma) => {
                self.note_destroyed(ash::vk::Handle::as_raw(buffer));
                let VmaMemory {
                    mut allocation,
                    key,
                    bytes,
                    memory_type,
                } = vma;
                match key {
                    Some(key) => {
                        let kept = Kept {
                            value: Reusable { buffer, allocation },
                            bytes,
                            memory_type,
                        };
                        self.keep_unless_pressed(key, kept);
                    }
                    // SAFETY: forwarded contract.
                    None => unsafe { self.raw.destroy_buffer(buffer, &mut allocation) },
                }
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
        let details = self.raw.get_allocation_info(&allocation);
        self.note_created(ash::vk::Handle::as_raw(image), &details);
        counter.add();
        let block = Block::Vma(VmaMemory {
            allocation,
            key: None,
            bytes: details.size,
            memory_type: details.memory_type,
        });
        Ok((image, block))
    }

    /// Destroys an image and frees its memory; a caller-owned one is left alone.
    ///
    /// # Safety
    /// `image` and `block` came from one `create_image` of this allocator; no
    /// pending GPU work uses them and their views are destroyed.
    pub(crate) unsafe fn destroy_image(&self, image: vk::Image, block: Block, counter: &Counter) {
        match block {
            Block::Vma(mut vma) => {
                self.note_destroyed(ash::vk::Handle::as_raw(image));
                // SAFETY: forwarded contract.
                unsafe { self.raw.destroy_image(image, &mut vma.allocation) };
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

    /// Bytes of every block held (VMA's budget statistics, all heaps).
    fn reserved_bytes(&self) -> u64 {
        self.raw.get_heap_budgets().map_or(0, |budgets| {
            budgets.iter().map(|b| b.statistics.blockBytes).sum()
        })
    }

    /// Frees every kept piece of memory and destroys every pool left
    /// without allocations (with its last empty block); returns the bytes
    /// of blocks given back.
    pub(crate) fn trim(&self) -> u64 {
        let before = self.reserved_bytes();
        let kept = {
            let mut keeping = self.retention.lock();
            keeping.budget.invalidate();
            keeping.kept.drain()
        };
        // SAFETY: kept memory belongs to no live resource and no pending work.
        unsafe { self.release(kept) };
        {
            let mut pools = self.pools.write();
            for slot in pools.iter_mut() {
                let empty = slot
                    .as_ref()
                    .and_then(|pool| pool.get_statistics().ok())
                    .is_some_and(|stats| stats.allocationCount == 0);
                if empty {
                    // vmaDestroyPool: frees the pool's (empty) blocks.
                    *slot = None;
                }
            }
        }
        before.saturating_sub(self.reserved_bytes())
    }

    /// Sets the retention limit, freeing what no longer fits under it.
    pub(crate) fn set_retention_limit(&self, limit: u64) {
        let released = self.retention.lock().kept.set_limit(limit);
        // SAFETY: kept memory belongs to no live resource and no pending work.
        unsafe { self.release(released) };
    }

    /// What the allocator holds now (`Device::memory_report`).
    /// Where `block`'s memory lies (`Device::buffer_placement`): VMA's
    /// answer for its allocations, the dedicated memory for external ones,
    /// `None` for caller-owned memory.
    pub(crate) fn placement(&self, block: &Block) -> Option<crate::MemoryPlacement> {
        match block {
            Block::Vma(vma) => {
                let details = self.raw.get_allocation_info2(&vma.allocation);
                let info = details.allocation_info;
                Some(crate::MemoryPlacement {
                    block: ash::vk::Handle::as_raw(info.device_memory),
                    block_size: details.block_size,
                    offset: info.offset,
                    size: info.size,
                })
            }
            Block::External(external) => Some(crate::MemoryPlacement {
                block: ash::vk::Handle::as_raw(external.memory),
                block_size: external.size,
                offset: 0,
                size: external.size,
            }),
            Block::CallerOwned => None,
        }
    }

    pub(crate) fn report(&self) -> crate::MemoryReport {
        // Retention is held while VMA counts, so the two agree (no path
        // takes the retention lock while VMA holds one of its own).
        let retention = self.retention.lock();
        let stats = self.raw.calculate_statistics().ok();
        let budgets = self.raw.get_heap_budgets().unwrap_or_default();
        let retained = retention.kept.bytes();
        let mut report = crate::MemoryReport {
            retained_bytes: retained,
            retention_limit: retention.kept.limit(),
            ..Default::default()
        };
        if let Some(stats) = &stats {
            let total = &stats.total.statistics;
            report.reserved_bytes = total.blockBytes;
            report.live_bytes = total.allocationBytes.saturating_sub(retained);
            report.block_count = u64::from(total.blockCount);
            for (index, &heap) in self.heap_of_type.iter().enumerate() {
                let s = &stats.memoryType[index].statistics;
                if s.blockCount == 0 && s.allocationCount == 0 {
                    continue;
                }
                let kept = retention.kept.bytes_of_type(index);
                report.memory_types.push(crate::MemoryTypeReport {
                    index: index as u32,
                    heap,
                    live_bytes: s.allocationBytes.saturating_sub(kept),
                    retained_bytes: kept,
                    reserved_bytes: s.blockBytes,
                    block_count: u64::from(s.blockCount),
                });
            }
        }
        drop(retention);
        for (index, heap) in self.heaps.iter().enumerate() {
            let budget = budgets.get(index).filter(|_| self.memory_budget);
            report.heaps.push(crate::MemoryHeapReport {
                index: index as u32,
                size: heap.size,
                device_local: heap.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL),
                reserved_bytes: stats
                    .as_ref()
                    .map_or(0, |s| s.memoryHeap[index].statistics.blockBytes),
                usage: budget.map(|b| b.usage),
                budget: budget.map(|b| b.budget),
            });
        }
        report
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
            usage: vk_mem::MemoryUsage::AutoPreferDevice,
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

/// External memory bound to one buffer or image.
#[derive(Debug)]
pub(crate) struct ExternalBlock {
    pub(crate) memory: vk::DeviceMemory,
    /// The allocation size.
    pub(crate) size: u64,
    /// Its handle type and whether it was exported or imported.
    pub(crate) external: ExternalMemory,
    /// The memory type it was allocated from.
    pub(crate) type_index: u32,
}

impl ExternalBlock {
    /// Frees the memory.
    ///
    /// # Safety
    /// The resource bound to it is destroyed (or never was bound) and no
    /// pending GPU work uses it.
    pub(crate) unsafe fn free(self, device: &ash::Device) {
        // SAFETY: forwarded contract; `memory` came from this device.
        unsafe { device.free_memory(self.memory, None) };
    }
}
