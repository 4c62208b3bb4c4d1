//! Where a resource's memory lives.

/// The kind of memory behind a buffer or texture.
///
/// Mapped kinds (`Upload`, `Readback`) are always host-visible *and*
/// host-coherent: no flush or invalidate is ever needed, and a backend that
/// has no such memory type fails creation with a typed error rather than
/// falling back to non-coherent memory. Coherence is not ordering: the CPU
/// and the GPU are ordered by the
/// [host-visibility rule](crate::BufferMapping#host-visibility).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Memory {
    /// GPU-only memory; fastest for the GPU, not mappable.
    #[default]
    Device,
    /// CPU writes, GPU reads. Persistently mapped, coherent, write-combined
    /// where possible. Device-local host-visible memory (a resizable BAR,
    /// unified memory) is preferred when the device has it, as wgpu-hal's
    /// `CpuToGpu` does; host memory is the fallback when it is full.
    Upload,
    /// GPU writes, CPU reads. Persistently mapped, coherent, cached where possible.
    Readback,
    /// Shared with another API, device or process: allocated here for
    /// export, or imported (see [`crate::ExternalMemory`]). A dedicated
    /// allocation; not mappable through the hal.
    External(crate::ExternalMemory),
}

impl Memory {
    /// Whether the CPU can map memory of this kind.
    pub const fn is_mappable(self) -> bool {
        matches!(self, Memory::Upload | Memory::Readback)
    }
}

/// What a device's memory holds now ([`crate::Device::memory_report`]):
/// the numbers behind `live_counts` in bytes, and where they live.
///
/// Counted: the memory of buffers and textures of the kinds `Device`,
/// `Upload` and `Readback` (and the buffers the hal makes itself:
/// acceleration structures, shader binding tables). Not counted:
/// [`Memory::External`] memory, which is dedicated and allocated outside
/// the device's allocator, and the driver's own objects.
///
/// Always `live_bytes + retained_bytes <= reserved_bytes`; the rest of
/// `reserved_bytes` is free space inside blocks.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// Bytes of memory bound to live resources (each resource's memory
    /// requirement, so at least the sizes asked for).
    pub live_bytes: u64,
    /// Bytes of destroyed buffers' memory kept for the next buffer of the
    /// same description ([`crate::Device::set_memory_retention`]); released by
    /// [`crate::Device::trim_memory`].
    pub retained_bytes: u64,
    /// Bytes the device holds from the driver: every block
    /// (`vkAllocateMemory`), whether live, retained or free.
    pub reserved_bytes: u64,
    /// Blocks held (`VkDeviceMemory` objects on Vulkan; one per live
    /// resource on noop).
    pub block_count: u64,
    /// The most bytes of destroyed buffers' memory the device keeps
    /// (0 where the backend keeps none: noop).
    pub retention_limit: u64,
    /// Per memory type the device has used (empty on noop, which has none).
    pub memory_types: Vec<MemoryTypeReport>,
    /// Per memory heap (empty on noop).
    pub heaps: Vec<MemoryHeapReport>,
}

/// Where one buffer's or texture's memory lies
/// ([`crate::Device::buffer_placement`], [`crate::Device::texture_placement`]):
/// the block it is part of and its range there, for allocator reports.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryPlacement {
    /// The block, as an identity shared by every resource in it
    /// (Vulkan: the `VkDeviceMemory` handle; noop: each resource is its
    /// own block).
    pub block: u64,
    /// The block's size in bytes.
    pub block_size: u64,
    /// The resource's offset in the block.
    pub offset: u64,
    /// The bytes bound to the resource (its memory requirement).
    pub size: u64,
}

/// One memory type's share of a [`MemoryReport`].
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryTypeReport {
    /// The memory type's index (Vulkan: in `VkPhysicalDeviceMemoryProperties`).
    pub index: u32,
    /// The heap it allocates from.
    pub heap: u32,
    /// Bytes bound to live resources.
    pub live_bytes: u64,
    /// Bytes of destroyed buffers' memory kept for reuse.
    pub retained_bytes: u64,
    /// Bytes of the blocks held.
    pub reserved_bytes: u64,
    /// Blocks held.
    pub block_count: u64,
}

/// One memory heap's share of a [`MemoryReport`].
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryHeapReport {
    /// The heap's index.
    pub index: u32,
    /// The heap's size in bytes.
    pub size: u64,
    /// Whether the heap is device-local.
    pub device_local: bool,
    /// Bytes of this device's blocks in the heap.
    pub reserved_bytes: u64,
    /// The whole process's use of the heap, as the driver reports it
    /// (`VK_EXT_memory_budget`); `None` without the extension.
    pub usage: Option<u64>,
    /// How much of the heap the process may use before allocations may
    /// fail or slow down (`VK_EXT_memory_budget`); `None` without it.
    pub budget: Option<u64>,
}
