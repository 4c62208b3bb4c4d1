//! The Vulkan calls the allocator makes, behind a trait so tests can
//! simulate them.

use ash::vk;

use crate::DeviceError;

/// The four Vulkan calls the allocator makes; `ash::Device` in the backend,
/// a simulation in tests.
pub(crate) trait DescriptorDevice {
    /// `vkCreateDescriptorPool`.
    ///
    /// # Safety
    /// `info` is a valid create info for this device.
    unsafe fn create_pool(
        &self,
        info: &vk::DescriptorPoolCreateInfo<'_>,
    ) -> Result<vk::DescriptorPool, vk::Result>;

    /// `vkDestroyDescriptorPool`.
    ///
    /// # Safety
    /// `pool` was created by this device, and no set from it is in use by
    /// the GPU.
    unsafe fn destroy_pool(&self, pool: vk::DescriptorPool);

    /// `vkAllocateDescriptorSets` for one set, without a heap allocation.
    ///
    /// # Safety
    /// `pool` and `layout` are live objects of this device.
    unsafe fn allocate_set(
        &self,
        pool: vk::DescriptorPool,
        layout: vk::DescriptorSetLayout,
    ) -> Result<vk::DescriptorSet, vk::Result>;

    /// `vkFreeDescriptorSets`.
    ///
    /// # Safety
    /// `pool` was created with `FREE_DESCRIPTOR_SET`; `sets` came from it,
    /// are not yet freed and are not in use by the GPU.
    unsafe fn free_sets(
        &self,
        pool: vk::DescriptorPool,
        sets: &[vk::DescriptorSet],
    ) -> Result<(), vk::Result>;
}

impl DescriptorDevice for ash::Device {
    unsafe fn create_pool(
        &self,
        info: &vk::DescriptorPoolCreateInfo<'_>,
    ) -> Result<vk::DescriptorPool, vk::Result> {
        // SAFETY: the caller guarantees `info` is valid for this device.
        unsafe { self.create_descriptor_pool(info, None) }
    }

    unsafe fn destroy_pool(&self, pool: vk::DescriptorPool) {
        // SAFETY: the caller guarantees the pool is ours and idle.
        unsafe { self.destroy_descriptor_pool(pool, None) }
    }

    unsafe fn allocate_set(
        &self,
        pool: vk::DescriptorPool,
        layout: vk::DescriptorSetLayout,
    ) -> Result<vk::DescriptorSet, vk::Result> {
        let layouts = [layout];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(&layouts);
        let mut set = vk::DescriptorSet::null();
        // SAFETY: `info` names one live layout and a live pool (caller's
        // contract), and `set` has room for exactly one handle. The raw entry
        // point avoids the `Vec` that ash's wrapper returns.
        let result =
            unsafe { (self.fp_v1_0().allocate_descriptor_sets)(self.handle(), &info, &mut set) };
        result.result_with_success(set)
    }

    unsafe fn free_sets(
        &self,
        pool: vk::DescriptorPool,
        sets: &[vk::DescriptorSet],
    ) -> Result<(), vk::Result> {
        // SAFETY: the caller guarantees the sets came from this
        // FREE_DESCRIPTOR_SET pool and are idle.
        unsafe { self.free_descriptor_sets(pool, sets) }
    }
}

/// Maps a `vkCreateDescriptorPool` failure. `ERROR_FRAGMENTATION` means the
/// pool memory is too fragmented: an out-of-memory condition, not a bug.
pub(super) fn map_create_err(result: vk::Result) -> DeviceError {
    match result {
        vk::Result::ERROR_FRAGMENTATION => DeviceError::OutOfMemory,
        other => crate::vulkan::conv::map_err(other),
    }
}
