//! Bind groups on Vulkan: entries checked against their layout, then a
//! descriptor set from the device's allocator (a recycled one when the
//! layout has one) written with one `vkUpdateDescriptorSets`.
//!
//! The checks (design §1): every binding of the layout has exactly one
//! entry; each resource is of the binding's kind (buffers with the matching
//! usage, views of the layout's sample type or storage format); arrays have
//! the layout's length (at most that, at least one, when partially bound);
//! buffer ranges are non-empty, inside their buffer, aligned and within the
//! binding-size limits. Two entries may name the same resource.
//!
//! The descriptor infos and writes are built in lists that live on the
//! stack up to [`INLINE`] elements, so bind-group churn allocates nothing on
//! the heap in the steady state.

use arrayvec::ArrayVec;
use ash::vk;

use super::device::set_object_name;
use super::{barrier, DeviceShared};
use crate::{BindGroupDescriptor, BindingError, BindingResource, BufferBinding, TextureUses};

/// Descriptors (and bindings) a bind group writes from the stack; past
/// this the scratch lists move to the heap.
const INLINE: usize = 16;

/// What a checked entry becomes: one `VkWriteDescriptorSet`, whose infos
/// are `count` elements of the buffer or image list from `first`.
#[derive(Clone, Copy)]
struct PendingWrite {
    binding: u32,
    ty: vk::DescriptorType,
    first: usize,
    count: usize,
    image: bool,
}

/// Creates a bind group (see the module docs).
///
/// # Safety
/// The layout and every resource came from `device`; the resources outlive the group.
pub(super) unsafe fn create_bind_group(
    device: &super::Device,
    desc: &BindGroupDescriptor<super::Api>,
) -> Result<super::BindGroup, BindingError> {
    let shared = &*device.shared;
    let layout = desc.layout;
    let mut seen = Bits::new(layout.entries.len());
    let mut buffers = Inline::<vk::DescriptorBufferInfo, INLINE>::new();
    let mut images = Inline::<vk::DescriptorImageInfo, INLINE>::new();
    let mut pending = Inline::<PendingWrite, INLINE>::new();
    for entry in desc.entries {
        let index = layout
            .entries
            .binary_search_by_key(&entry.binding, |e| e.binding)
            .map_err(|_| BindingError::UnknownBinding(entry.binding))?;
        if seen.insert(index) {
            return Err(BindingError::DuplicateBinding(entry.binding));
        }
        let (Some(layout_entry), Some(&ty)) = (layout.entries.get(index), layout.types.get(index))
        else {
            return Err(BindingError::UnknownBinding(entry.binding));
        };
        let partial = layout.update_after_bind;
        let (first_buffer, first_image) = (buffers.len(), images.len());
        push_resource(
            shared,
            layout_entry,
            partial,
            &entry.resource,
            &mut buffers,
            &mut images,
        )?;
        let (first, count, image) = if buffers.len() > first_buffer {
            (first_buffer, buffers.len() - first_buffer, false)
        } else {
            (first_image, images.len() - first_image, true)
        };
        pending.push(PendingWrite {
            binding: entry.binding,
            ty,
            first,
            count,
            image,
        });
    }
    if let Some(missing) = seen.first_unset() {
        let binding = layout.entries.get(missing).map_or(0, |e| e.binding);
        return Err(BindingError::MissingBinding(binding));
    }

    // SAFETY: the layout is live and registered with this device's allocator.
    let set = unsafe {
        shared
            .descriptors
            .lock()
            .allocate(&shared.raw, layout.token, layout.raw)
    }?;
    let raw = set.raw();
    let (buffer_infos, image_infos) = (buffers.as_slice(), images.as_slice());
    let mut writes = Inline::<vk::WriteDescriptorSet, INLINE>::new();
    for p in pending.as_slice() {
        let mut write = vk::WriteDescriptorSet::default()
            .dst_set(raw)
            .dst_binding(p.binding)
            .descriptor_type(p.ty);
        // The counts come from checked slices, so they fit u32 (at most a
        // layout's array length).
        write.descriptor_count = p.count as u32;
        let range = p.first..p.first + p.count;
        if p.image {
            write.p_image_info = image_infos[range].as_ptr();
        } else {
            write.p_buffer_info = buffer_infos[range].as_ptr();
        }
        writes.push(write);
    }
    // SAFETY: every write names a binding of the set's layout with its type
    // and a count within the binding's; the infos it points at live until
    // the call returns and name live resources of this device (caller's
    // contract), checked against the layout above. The set is not in use
    // by the GPU (new, or recycled from a destroyed bind group).
    unsafe { shared.raw.update_descriptor_sets(writes.as_slice(), &[]) };
    shared.counters.bind_groups.add();
    if let Some(label) = desc.label {
        // SAFETY: `raw` is live.
        unsafe { set_object_name(shared, raw, label) };
    }
    Ok(super::BindGroup {
        raw,
        set,
        dynamic_count: layout.dynamic_count,
    })
}

/// What a layout entry expects, for [`BindingError::WrongType`].
fn expected(entry: &wgt::BindGroupLayoutEntry) -> &'static str {
    let array = entry.count.is_some();
    let uniform = wgt::BufferBindingType::Uniform;
    match (&entry.ty, array) {
        (wgt::BindingType::Buffer { ty, .. }, false) if *ty == uniform => "a uniform buffer",
        (wgt::BindingType::Buffer { ty, .. }, true) if *ty == uniform => {
            "an array of uniform buffers"
        }
        (wgt::BindingType::Buffer { .. }, false) => "a storage buffer",
        (wgt::BindingType::Buffer { .. }, true) => "an array of storage buffers",
        (wgt::BindingType::Sampler(_), false) => "a sampler",
        (wgt::BindingType::Sampler(_), true) => "an array of samplers",
        (wgt::BindingType::Texture { .. }, false) => {
            "a sampled texture view of the layout's sample type"
        }
        (wgt::BindingType::Texture { .. }, true) => {
            "an array of sampled texture views of the layout's sample type"
        }
        (wgt::BindingType::StorageTexture { .. }, false) => {
            "a storage texture view of the layout's format"
        }
        (wgt::BindingType::StorageTexture { .. }, true) => {
            "an array of storage texture views of the layout's format"
        }
        (wgt::BindingType::AccelerationStructure { .. }, _) => {
            "an acceleration structure (not yet bindable)"
        }
        (wgt::BindingType::ExternalTexture, _) => "an external texture",
    }
}

/// Checks one entry's resource against its layout entry and appends its
/// descriptor infos to `buffers` or `images`.
fn push_resource(
    shared: &DeviceShared,
    layout_entry: &wgt::BindGroupLayoutEntry,
    partially_bound: bool,
    resource: &BindingResource<'_, super::Api>,
    buffers: &mut Inline<vk::DescriptorBufferInfo, INLINE>,
    images: &mut Inline<vk::DescriptorImageInfo, INLINE>,
) -> Result<(), BindingError> {
    let binding = layout_entry.binding;
    let wrong = || BindingError::WrongType {
        binding,
        expected: expected(layout_entry),
    };
    let check_count = |got: usize| {
        let expected = layout_entry.count.map_or(1, |c| c.get());
        let fits = if partially_bound {
            got >= 1 && got <= expected as usize
        } else {
            got == expected as usize
        };
        if fits {
            Ok(())
        } else {
            Err(BindingError::WrongCount {
                binding,
                got,
                expected,
            })
        }
    };
    let array = layout_entry.count.is_some();
    let sampled = barrier::texture_layout(TextureUses::RESOURCE, false);
    let storage = barrier::texture_layout(TextureUses::STORAGE_READ_WRITE, false);
    match (&layout_entry.ty, resource) {
        (wgt::BindingType::Buffer { .. }, BindingResource::Buffer(b)) if !array => {
            buffers.push(buffer_info(shared, layout_entry, b)?);
        }
        (wgt::BindingType::Buffer { .. }, BindingResource::BufferArray(list)) if array => {
            check_count(list.len())?;
            for b in *list {
                buffers.push(buffer_info(shared, layout_entry, b)?);
            }
        }
        (wgt::BindingType::Sampler(_), BindingResource::Sampler(s)) if !array => {
            images.push(vk::DescriptorImageInfo::default().sampler(s.raw));
        }
        (wgt::BindingType::Sampler(_), BindingResource::SamplerArray(list)) if array => {
            check_count(list.len())?;
            for s in *list {
                images.push(vk::DescriptorImageInfo::default().sampler(s.raw));
            }
        }
        (&wgt::BindingType::Texture { sample_type, .. }, BindingResource::TextureView(v))
            if !array =>
        {
            if !samples_as(v, sample_type) {
                return Err(wrong());
            }
            images.push(image_info(v, sampled));
        }
        (
            &wgt::BindingType::Texture { sample_type, .. },
            BindingResource::TextureViewArray(list),
        ) if array => {
            check_count(list.len())?;
            for v in *list {
                if !samples_as(v, sample_type) {
                    return Err(wrong());
                }
                images.push(image_info(v, sampled));
            }
        }
        (&wgt::BindingType::StorageTexture { format, .. }, BindingResource::TextureView(v))
            if !array =>
        {
            if v.format != format {
                return Err(wrong());
            }
            images.push(image_info(v, storage));
        }
        (
            &wgt::BindingType::StorageTexture { format, .. },
            BindingResource::TextureViewArray(list),
        ) if array => {
            check_count(list.len())?;
            for v in *list {
                if v.format != format {
                    return Err(wrong());
                }
                images.push(image_info(v, storage));
            }
        }
        _ => return Err(wrong()),
    }
    Ok(())
}

/// Whether a view's texels read as `expected`: integer kinds exactly,
/// float and depth layouts either kind of float view. A view with no single
/// sample type (both aspects of a depth-stencil format) fits nothing.
fn samples_as(view: &super::TextureView, expected: wgt::TextureSampleType) -> bool {
    use wgt::TextureSampleType as T;
    let Some(actual) = view.format.sample_type(Some(view.range.aspect), None) else {
        return false;
    };
    matches!(
        (expected, actual),
        (T::Uint, T::Uint)
            | (T::Sint, T::Sint)
            | (T::Float { .. } | T::Depth, T::Float { .. } | T::Depth)
    )
}

/// A sampled or storage image descriptor.
fn image_info(view: &super::TextureView, layout: vk::ImageLayout) -> vk::DescriptorImageInfo {
    vk::DescriptorImageInfo::default()
        .image_view(view.raw)
        .image_layout(layout)
}

/// Checks a buffer range against its buffer, the layout entry and the
/// limits; returns its descriptor.
fn buffer_info(
    shared: &DeviceShared,
    layout_entry: &wgt::BindGroupLayoutEntry,
    b: &BufferBinding<'_, super::Buffer>,
) -> Result<vk::DescriptorBufferInfo, BindingError> {
    let binding = layout_entry.binding;
    let wgt::BindingType::Buffer {
        ty,
        min_binding_size,
        ..
    } = layout_entry.ty
    else {
        return Err(BindingError::WrongType {
            binding,
            expected: expected(layout_entry),
        });
    };
    let buffer_size = b.buffer.size;
    let size = b
        .size
        .map_or(buffer_size.saturating_sub(b.offset), |s| s.get());
    let invalid = BindingError::InvalidBufferRange {
        binding,
        offset: b.offset,
        size,
        buffer_size,
    };
    let limits = &shared.limits;
    let (alignment, max, usage, expected) = match ty {
        wgt::BufferBindingType::Uniform => (
            limits.min_uniform_buffer_offset_alignment,
            limits.max_uniform_buffer_binding_size,
            wgt::BufferUsages::UNIFORM,
            "a buffer with UNIFORM usage",
        ),
        wgt::BufferBindingType::Storage { .. } => (
            limits.min_storage_buffer_offset_alignment,
            limits.max_storage_buffer_binding_size,
            wgt::BufferUsages::STORAGE,
            "a buffer with STORAGE usage",
        ),
    };
    let inside = b
        .offset
        .checked_add(size)
        .is_some_and(|end| end <= buffer_size);
    // Vulkan asks the alignment of dynamic bindings' base offsets too.
    let aligned = b.offset % u64::from(alignment.max(1)) == 0;
    let large_enough = min_binding_size.is_none_or(|min| size >= min.get());
    if size == 0 || !inside || !aligned || size > max || !large_enough {
        return Err(invalid);
    }
    if !b.buffer.usage.contains(usage) {
        return Err(BindingError::WrongType { binding, expected });
    }
    Ok(vk::DescriptorBufferInfo {
        buffer: b.buffer.raw,
        offset: b.offset,
        range: size,
    })
}

/// Destroys a bind group: its set goes back to the allocator, which keeps
/// it for the layout's next bind group.
///
/// # Safety
/// The group came from `device`; no pending GPU work uses it.
pub(super) unsafe fn destroy_bind_group(device: &super::Device, group: super::BindGroup) {
    let shared = &*device.shared;
    // SAFETY: the set came from this device's allocator; the caller
    // guarantees the GPU is done with it.
    let freed = unsafe { shared.descriptors.lock().free(&shared.raw, group.set) };
    if let Err(e) = freed {
        log::error!("freeing descriptor set {:?}: {e}", group.raw);
    }
    shared.counters.bind_groups.sub();
}

impl super::BindGroup {
    /// Bindings with a dynamic offset (`set_bind_group` takes one offset each).
    pub fn dynamic_binding_count(&self) -> u32 {
        self.dynamic_count
    }
}

/// A list on the stack up to `N` elements, moved to the heap past that.
enum Inline<T, const N: usize> {
    Stack(ArrayVec<T, N>),
    Heap(Vec<T>),
}

impl<T, const N: usize> Inline<T, N> {
    fn new() -> Self {
        Self::Stack(ArrayVec::new())
    }

    fn push(&mut self, value: T) {
        match self {
            Self::Stack(items) => {
                if let Err(full) = items.try_push(value) {
                    let mut heap = Vec::with_capacity(N * 2);
                    heap.extend(items.drain(..));
                    heap.push(full.element());
                    *self = Self::Heap(heap);
                }
            }
            Self::Heap(items) => items.push(value),
        }
    }

    fn as_slice(&self) -> &[T] {
        match self {
            Self::Stack(items) => items,
            Self::Heap(items) => items,
        }
    }

    fn len(&self) -> usize {
        self.as_slice().len()
    }
}

/// A set of indices below a bound, as bits (on the stack up to 128).
struct Bits {
    words: Inline<u64, 2>,
    len: usize,
}

impl Bits {
    fn new(len: usize) -> Self {
        let mut words = Inline::new();
        for _ in 0..len.div_ceil(64) {
            words.push(0);
        }
        Self { words, len }
    }

    /// Adds `index`; true if it was already there.
    fn insert(&mut self, index: usize) -> bool {
        let words = match &mut self.words {
            Inline::Stack(w) => w.as_mut_slice(),
            Inline::Heap(w) => w.as_mut_slice(),
        };
        let Some(word) = words.get_mut(index / 64) else {
            return false;
        };
        let bit = 1u64 << (index % 64);
        let present = *word & bit != 0;
        *word |= bit;
        present
    }

    /// The first index below the bound not in the set.
    fn first_unset(&self) -> Option<usize> {
        self.words
            .as_slice()
            .iter()
            .enumerate()
            .find(|(_, w)| **w != u64::MAX)
            .map(|(i, w)| i * 64 + w.trailing_ones() as usize)
            .filter(|&i| i < self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_moves_to_the_heap_past_its_capacity() {
        let mut list = Inline::<u32, 2>::new();
        for i in 0..5 {
            list.push(i);
        }
        assert!(matches!(list, Inline::Heap(_)));
        assert_eq!(list.as_slice(), &[0, 1, 2, 3, 4]);
    }

    #[test]
    fn bits_find_the_first_missing_index() {
        let mut bits = Bits::new(130);
        for i in 0..130 {
            if i != 100 {
                assert!(!bits.insert(i));
            }
        }
        assert!(bits.insert(5));
        assert_eq!(bits.first_unset(), Some(100));
        bits.insert(100);
        assert_eq!(bits.first_unset(), None);
        let mut full_word = Bits::new(64);
        (0..64).for_each(|i| {
            full_word.insert(i);
        });
        assert_eq!(full_word.first_unset(), None);
        assert_eq!(Bits::new(0).first_unset(), None);
    }
}
