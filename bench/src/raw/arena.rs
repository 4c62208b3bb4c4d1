//! The raw side's sub-allocator: buffers bound at bump offsets into kept
//! `VkDeviceMemory` blocks, as an allocator does on its fast path (minus
//! any bookkeeping, which is what makes it a floor). Blocks are made outside
//! the timing ([`Arena::reserve`]) and kept; [`Arena::reset`] rewinds.

use ash::vk;

use super::vk_err;

/// Size of each kept block (what VMA calls its preferred large-heap block).
const BLOCK: u64 = 256 << 20;

struct Block {
    memory: vk::DeviceMemory,
    size: u64,
    /// The block's mapping (host-visible arenas), else null.
    ptr: *mut u8,
}

/// Where a placement landed.
pub(super) struct Placement {
    pub memory: vk::DeviceMemory,
    pub offset: u64,
    /// The bytes at `offset` through the block's persistent mapping (null
    /// where the arena is not mapped).
    pub ptr: *mut u8,
}

/// Bump allocation over kept blocks of one memory type.
pub(super) struct Arena {
    memory_type: u32,
    mapped: bool,
    blocks: Vec<Block>,
    /// Block index and offset of the next placement.
    cursor: (usize, u64),
}

impl Arena {
    /// An arena of `memory_type`; `mapped`: blocks are mapped persistently.
    pub fn new(memory_type: u32, mapped: bool) -> Arena {
        Arena {
            memory_type,
            mapped,
            blocks: Vec::new(),
            cursor: (0, 0),
        }
    }

    /// The memory type the arena's blocks have.
    pub fn memory_type(&self) -> u32 {
        self.memory_type
    }

    /// Places `size` bytes aligned to `align`, making a block where none
    /// has room (outside the timing, [`Arena::reserve`] makes sure none is
    /// needed).
    pub fn place(
        &mut self,
        device: &ash::Device,
        size: u64,
        align: u64,
    ) -> Result<Placement, String> {
        let align = align.max(1);
        loop {
            let (b, offset) = self.cursor;
            if let Some(block) = self.blocks.get(b) {
                let at = offset.div_ceil(align) * align;
                if at + size <= block.size {
                    self.cursor = (b, at + size);
                    let ptr = if block.ptr.is_null() {
                        std::ptr::null_mut()
                    } else {
                        // SAFETY: `at` lies inside the block's mapping.
                        unsafe { block.ptr.add(at as usize) }
                    };
                    return Ok(Placement {
                        memory: block.memory,
                        offset: at,
                        ptr,
                    });
                }
                if b + 1 < self.blocks.len() {
                    self.cursor = (b + 1, 0);
                    continue;
                }
            }
            self.add_block(device, size.max(BLOCK))?;
            self.cursor = (self.blocks.len() - 1, 0);
        }
    }

    /// Makes sure `count` placements of `size` bytes aligned to `align`
    /// fit in the kept blocks, then rewinds.
    pub fn reserve(
        &mut self,
        device: &ash::Device,
        size: u64,
        align: u64,
        count: usize,
    ) -> Result<(), String> {
        self.reset();
        for _ in 0..count {
            self.place(device, size, align)?;
        }
        self.reset();
        Ok(())
    }

    /// Rewinds to the start (every buffer bound into the arena is gone).
    pub fn reset(&mut self) {
        self.cursor = (0, 0);
    }

    fn add_block(&mut self, device: &ash::Device, size: u64) -> Result<(), String> {
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(size)
            .memory_type_index(self.memory_type);
        // SAFETY: live device; a memory type of this device.
        let memory = unsafe { device.allocate_memory(&info, None) }
            .map_err(vk_err("vkAllocateMemory (arena block)"))?;
        let mut ptr = std::ptr::null_mut();
        if self.mapped {
            // SAFETY: fresh host-visible memory, mapped once for its life.
            match unsafe {
                device.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            } {
                Ok(p) => ptr = p.cast(),
                Err(e) => {
                    // SAFETY: unused memory.
                    unsafe { device.free_memory(memory, None) };
                    return Err(vk_err("vkMapMemory (arena block)")(e));
                }
            }
        }
        self.blocks.push(Block { memory, size, ptr });
        Ok(())
    }

    /// Frees every block.
    ///
    /// # Safety
    /// No buffer bound into the arena is still alive.
    pub unsafe fn destroy(&mut self, device: &ash::Device) {
        for block in self.blocks.drain(..) {
            // SAFETY: the caller's contract (freeing mapped memory unmaps it).
            unsafe { device.free_memory(block.memory, None) };
        }
        self.cursor = (0, 0);
    }
}
