//! Escape hatches (docs/design.md §11.7): the raw Vulkan objects behind a device,
//! and wrapping raw buffers and images as hal resources.
//!
//! A wrapped resource is *caller-owned*: the caller created the `VkBuffer`
//! or `VkImage`, bound its memory, and keeps both. The hal only records
//! what it needs to use it (size, format, extent, usage) and counts it as a
//! live buffer or texture. `destroy_buffer` / `destroy_texture` on a
//! wrapped resource destroy **nothing**: they only end the hal's use of it
//! (and its live count); the caller then destroys the handle and frees its
//! memory. Views created from a wrapped texture are the hal's as usual.

use ash::vk;

use super::{memory::Block, Buffer, Device, Instance, Texture};
use crate::{TextureDescriptor, TextureError};

impl Instance {
    /// The instance's function table (`ash::Instance`). The hal still owns
    /// the instance: do not destroy it.
    pub fn raw_instance(&self) -> &ash::Instance {
        &self.shared.raw
    }
}

impl Device {
    /// The device's function table (`ash::Device`; with the feature
    /// `fault-injection`, the table with its hooks). The hal still owns the
    /// device: do not destroy it.
    pub fn raw_device(&self) -> &ash::Device {
        &self.shared.raw
    }

    /// The `VkPhysicalDevice` the device was opened on.
    pub fn raw_physical_device(&self) -> vk::PhysicalDevice {
        self.shared.physical_device
    }

    /// The instance's function table, for physical-device queries.
    pub fn raw_instance(&self) -> &ash::Instance {
        &self.shared.instance.raw
    }

    /// The queue family of the device's one queue (graphics + compute +
    /// transfer): command pools and ownership transfers name it.
    pub fn queue_family_index(&self) -> u32 {
        self.shared.queue_family_index
    }

    /// The Vulkan API version the device is used with (min of instance and device).
    pub fn api_version(&self) -> u32 {
        self.shared
            .instance
            .api_version
            .min(self.shared.physical.properties.api_version)
    }

    /// Wraps a caller-owned `VkBuffer` as a hal buffer of `size` bytes with
    /// `usage`. It is not mappable through the hal (`map_buffer` answers
    /// `NotMappable`); its memory kind reads as [`crate::Memory::Device`].
    /// `destroy_buffer` destroys nothing (see the module docs).
    ///
    /// # Safety
    /// `raw` is a live buffer of this device, at least `size` bytes, created
    /// with the Vulkan usages `usage` maps to, with memory bound; the caller
    /// keeps the buffer and its memory alive until after `destroy_buffer` on
    /// the wrapper and until the GPU is done with it, and then destroys them.
    pub unsafe fn buffer_from_raw(
        &self,
        raw: vk::Buffer,
        size: u64,
        usage: wgt::BufferUsages,
    ) -> Buffer {
        self.shared.counters.buffers.add();
        Buffer {
            raw,
            block: Block::CallerOwned,
            size,
            usage,
            memory: crate::Memory::Device,
            mapped: None,
            address: Default::default(),
        }
    }

    /// Wraps a caller-owned `VkImage` created as `desc` describes. Only
    /// `Memory::Device` is accepted, and a format keel-hal maps to Vulkan.
    /// `destroy_texture` destroys nothing (see the module docs).
    ///
    /// # Safety
    /// `raw` is a live image of this device created exactly as `desc` says
    /// (format as keel-hal maps it, extent, mips, samples, usages as keel-hal
    /// maps them, `MUTABLE_FORMAT` with a format list when `view_formats` is
    /// non-empty, `CUBE_COMPATIBLE` when keel-hal would set it), with memory
    /// bound, in the layout of [`crate::TextureUses::UNINITIALIZED`] or of the
    /// state the caller then passes to barriers. The caller keeps it alive
    /// until after `destroy_texture` on the wrapper and until the GPU is done
    /// with it, and then destroys it.
    pub unsafe fn texture_from_raw(
        &self,
        raw: vk::Image,
        desc: &TextureDescriptor,
    ) -> Result<Texture, TextureError> {
        if desc.memory != crate::Memory::Device {
            return Err(TextureError::UnsupportedMemory(desc.memory));
        }
        if super::conv::map_texture_format(desc.format) == vk::Format::UNDEFINED {
            return Err(TextureError::UnsupportedFormat {
                format: desc.format,
                usage: desc.usage,
            });
        }
        self.shared.counters.textures.add();
        Ok(Texture {
            raw,
            block: Block::CallerOwned,
            format: desc.format,
            dimension: desc.dimension,
            size: desc.size,
            mip_level_count: desc.mip_level_count,
            sample_count: desc.sample_count,
            usage: desc.usage,
            view_formats: desc.view_formats.to_vec(),
        })
    }
}

impl Buffer {
    /// The buffer's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The usages it was created (or wrapped) with.
    pub fn usage(&self) -> wgt::BufferUsages {
        self.usage
    }

    /// Whether the hal only wraps it: the caller owns the handle and memory.
    pub fn is_caller_owned(&self) -> bool {
        matches!(self.block, Block::CallerOwned)
    }
}

impl Texture {
    /// Whether the hal only wraps it: the caller owns the handle and memory.
    pub fn is_caller_owned(&self) -> bool {
        matches!(self.block, Block::CallerOwned)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A caller-owned texture with a null handle, for checks that read only
    /// its description.
    pub(in super::super) fn texture(desc: &TextureDescriptor) -> Texture {
        Texture {
            raw: vk::Image::null(),
            block: Block::CallerOwned,
            format: desc.format,
            dimension: desc.dimension,
            size: desc.size,
            mip_level_count: desc.mip_level_count,
            sample_count: desc.sample_count,
            usage: desc.usage,
            view_formats: desc.view_formats.to_vec(),
        }
    }
}
