//! What a descriptor set needs, per Vulkan descriptor type: the bucket key.

use arrayvec::ArrayVec;
use ash::vk;

/// How many descriptors of each Vulkan type one set of a layout needs.
///
/// Dynamic uniform and storage buffers are counted apart from the plain
/// ones: Vulkan makes them distinct descriptor types (`*_DYNAMIC`), with
/// their own pool sizes, so a pool sized for one cannot hold the other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct DescriptorCounts {
    /// `SAMPLER` (filtering, non-filtering and comparison samplers).
    pub(crate) samplers: u32,
    /// `SAMPLED_IMAGE` (sampled textures).
    pub(crate) sampled_images: u32,
    /// `STORAGE_IMAGE` (storage textures).
    pub(crate) storage_images: u32,
    /// `UNIFORM_BUFFER`.
    pub(crate) uniform_buffers: u32,
    /// `STORAGE_BUFFER` (read-only or read-write).
    pub(crate) storage_buffers: u32,
    /// `UNIFORM_BUFFER_DYNAMIC`.
    pub(crate) uniform_buffers_dynamic: u32,
    /// `STORAGE_BUFFER_DYNAMIC`.
    pub(crate) storage_buffers_dynamic: u32,
    /// `ACCELERATION_STRUCTURE_KHR`.
    pub(crate) acceleration_structures: u32,
}

impl DescriptorCounts {
    /// Counts the descriptors of a bind-group layout. A binding array counts
    /// `count` descriptors.
    ///
    /// `None` if an entry has no single Vulkan descriptor type
    /// (`ExternalTexture`): the caller rejects such a layout.
    #[cfg(test)]
    pub(crate) fn from_layout_entries(entries: &[wgt::BindGroupLayoutEntry]) -> Option<Self> {
        let mut counts = Self::default();
        for entry in entries {
            let ty = crate::vulkan::conv::map_binding_type(&entry.ty)?;
            counts.add(ty, entry.count.map_or(1, |c| c.get()));
        }
        Some(counts)
    }

    /// Adds `n` descriptors of Vulkan type `ty` (a type no layout makes is
    /// not counted).
    #[inline]
    pub(crate) fn add(&mut self, ty: vk::DescriptorType, n: u32) {
        use vk::DescriptorType as D;
        let slot = match ty {
            D::SAMPLER => &mut self.samplers,
            D::SAMPLED_IMAGE => &mut self.sampled_images,
            D::STORAGE_IMAGE => &mut self.storage_images,
            D::UNIFORM_BUFFER => &mut self.uniform_buffers,
            D::STORAGE_BUFFER => &mut self.storage_buffers,
            D::UNIFORM_BUFFER_DYNAMIC => &mut self.uniform_buffers_dynamic,
            D::STORAGE_BUFFER_DYNAMIC => &mut self.storage_buffers_dynamic,
            D::ACCELERATION_STRUCTURE_KHR => &mut self.acceleration_structures,
            _ => return,
        };
        *slot = slot.saturating_add(n);
    }

    /// Each count with its Vulkan type, in a fixed order.
    pub(super) fn by_type(&self) -> [(vk::DescriptorType, u32); 8] {
        [
            (vk::DescriptorType::SAMPLER, self.samplers),
            (vk::DescriptorType::SAMPLED_IMAGE, self.sampled_images),
            (vk::DescriptorType::STORAGE_IMAGE, self.storage_images),
            (vk::DescriptorType::UNIFORM_BUFFER, self.uniform_buffers),
            (vk::DescriptorType::STORAGE_BUFFER, self.storage_buffers),
            (
                vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC,
                self.uniform_buffers_dynamic,
            ),
            (
                vk::DescriptorType::STORAGE_BUFFER_DYNAMIC,
                self.storage_buffers_dynamic,
            ),
            (
                vk::DescriptorType::ACCELERATION_STRUCTURE_KHR,
                self.acceleration_structures,
            ),
        ]
    }

    /// The pool sizes for a pool of `sets` sets of this shape: each non-zero
    /// count times `sets` (saturating). A layout without descriptors still
    /// gets one `SAMPLER` entry, so the pool create info is never empty.
    pub(crate) fn pool_sizes(&self, sets: u32) -> ArrayVec<vk::DescriptorPoolSize, 8> {
        let mut sizes: ArrayVec<vk::DescriptorPoolSize, 8> = self
            .by_type()
            .into_iter()
            .filter(|&(_, count)| count > 0)
            .map(|(ty, count)| vk::DescriptorPoolSize {
                ty,
                descriptor_count: count.saturating_mul(sets),
            })
            .collect();
        if sizes.is_empty() {
            sizes.push(vk::DescriptorPoolSize {
                ty: vk::DescriptorType::SAMPLER,
                descriptor_count: 1,
            });
        }
        sizes
    }
}

/// What makes layouts share pools: equal descriptor counts and the same
/// update-after-bind choice (such pools need `UPDATE_AFTER_BIND`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct BucketKey {
    /// Descriptors per set.
    pub(crate) counts: DescriptorCounts,
    /// The layout was created with `UPDATE_AFTER_BIND_POOL`.
    pub(crate) update_after_bind: bool,
}
