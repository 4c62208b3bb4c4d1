//! Bind groups on Vulkan: entries checked against their layout, then a
//! descriptor set from the device's allocator (a recycled one when the
//! layout has one) written with one `vkUpdateDescriptorSets`.
//!
//! The checks are `validate/binding.rs`'s, shared with every backend: every
//! binding of the layout has exactly one entry; each resource is of the
//! binding's kind and has the usage it needs (`UNIFORM`/`STORAGE` buffers,
//! views that can serve `TEXTURE_BINDING`/`STORAGE_BINDING`); views have
//! the layout's sample type or storage format, dimension, sample count and
//! a single aspect; samplers are of the layout's kind; arrays have the
//! layout's length (at most that, at least one, when partially bound);
//! buffer ranges are non-empty, inside their buffer, aligned and within the
//! binding-size limits; acceleration structures are top-level ones. Two
//! entries may name the same resource. Nothing reaches the driver before
//! they all pass.
//!
//! The descriptor infos and writes are built in lists on the stack: fixed
//! arrays of [`INLINE`] elements for a group of at most [`INLINE`] entries
//! and no arrays (one descriptor each), else lists that move to the heap
//! past [`INLINE`] elements. Bind-group churn allocates nothing on the
//! heap in the steady state.

use arrayvec::ArrayVec;
use ash::vk;

use super::barrier;
use super::device::set_object_name;
use crate::validate::{self, binding::GroupContext};
use crate::{BindGroupDescriptor, BindingError, BindingResource, BufferBinding, TextureUses};

/// Descriptors (and bindings) a bind group writes from the stack; past
/// this the scratch lists move to the heap.
const INLINE: usize = 16;

impl validate::Facts for super::Api {
    fn buffer(buffer: &super::Buffer) -> validate::BufferFacts {
        validate::BufferFacts {
            size: buffer.size,
            usage: buffer.usage,
        }
    }

    fn view(view: &super::TextureView) -> validate::ViewFacts {
        validate::ViewFacts {
            format: view.format,
            dimension: view.dimension,
            aspect: view.range.aspect,
            sample_count: view.sample_count,
            usage: view.usage,
            layers: view.range.array_layer_count.unwrap_or(1),
        }
    }

    fn sampler(sampler: &super::Sampler) -> validate::SamplerFacts {
        sampler.facts
    }

    fn structure_kind(
        structure: &super::AccelerationStructure,
    ) -> crate::AccelerationStructureKind {
        structure.kind
    }
}

/// Which list a pending write's infos are in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Infos {
    Buffers,
    Images,
    /// Acceleration-structure handles, chained in a
    /// `VkWriteDescriptorSetAccelerationStructureKHR`.
    Structures,
}

/// What a checked entry becomes: one `VkWriteDescriptorSet`, whose infos
/// are `count` elements of one list from `first`.
#[derive(Clone, Copy)]
struct PendingWrite {
    binding: u32,
    ty: vk::DescriptorType,
    first: usize,
    count: usize,
    infos: Infos,
}

/// Creates a bind group (see the module docs).
///
/// # Safety
/// The layout and every resource came from `device`; the resources outlive the group.
pub(super) unsafe fn create_bind_group(
    device: &super::Device,
    desc: &BindGroupDescriptor<super::Api>,
) -> Result<super::BindGroup, BindingError> {
    // Without arrays each entry gives one descriptor, so at most `INLINE`
    // entries fit fixed stack lists: no growth checks, no heap.
    if desc.entries.len() <= INLINE && desc.layout.entries.iter().all(|e| e.count.is_none()) {
        // SAFETY: forwarded contract.
        unsafe { create_with::<Fixed>(device, desc) }
    } else {
        // SAFETY: forwarded contract.
        unsafe { create_with::<Growable>(device, desc) }
    }
}

/// [`create_bind_group`] with the scratch lists `S` gives.
///
/// # Safety
/// As for [`create_bind_group`].
unsafe fn create_with<S: Scratch>(
    device: &super::Device,
    desc: &BindGroupDescriptor<super::Api>,
) -> Result<super::BindGroup, BindingError> {
    let shared = &*device.shared;
    let layout = desc.layout;
    let cx = GroupContext {
        limits: &shared.limits,
        features: shared.features,
        partially_bound: layout.update_after_bind,
    };
    let mut buffers = S::List::<vk::DescriptorBufferInfo>::new();
    let mut images = S::List::<vk::DescriptorImageInfo>::new();
    let mut structures = S::List::<vk::AccelerationStructureKHR>::new();
    let mut pending = S::List::<PendingWrite>::new();
    // Set when a fixed list was full (not expected: see `create_bind_group`).
    let mut overflow = false;
    let sampled = barrier::texture_layout(TextureUses::RESOURCE, false);
    let storage = barrier::texture_layout(TextureUses::STORAGE_READ_WRITE, false);
    let (entries, types) = (&*layout.entries, &*layout.types);
    // One pass: each entry is checked (the shared checks), then its
    // descriptor infos recorded. Nothing reaches the driver before every
    // entry passed.
    validate::binding::check_bind_group_with::<super::Api>(
        entries,
        cx,
        desc.entries,
        |index, entry| {
            // `index` is the entry's layout entry (checked); `types` has one
            // element per layout entry.
            let (Some(layout_entry), Some(&ty)) = (entries.get(index), types.get(index)) else {
                return;
            };
            let image_layout = match layout_entry.ty {
                wgt::BindingType::StorageTexture { .. } => storage,
                _ => sampled,
            };
            let (first, count, infos) = match &entry.resource {
                BindingResource::Buffer(b) => {
                    overflow |= !buffers.push(buffer_info(b));
                    (buffers.len().wrapping_sub(1), 1, Infos::Buffers)
                }
                BindingResource::BufferArray(list) => {
                    let first = buffers.len();
                    for b in *list {
                        overflow |= !buffers.push(buffer_info(b));
                    }
                    (first, list.len(), Infos::Buffers)
                }
                BindingResource::Sampler(s) => {
                    overflow |= !images.push(vk::DescriptorImageInfo::default().sampler(s.raw));
                    (images.len().wrapping_sub(1), 1, Infos::Images)
                }
                BindingResource::SamplerArray(list) => {
                    let first = images.len();
                    for s in *list {
                        overflow |= !images.push(vk::DescriptorImageInfo::default().sampler(s.raw));
                    }
                    (first, list.len(), Infos::Images)
                }
                BindingResource::TextureView(v) => {
                    overflow |= !images.push(image_info(v, image_layout));
                    (images.len().wrapping_sub(1), 1, Infos::Images)
                }
                BindingResource::TextureViewArray(list) => {
                    let first = images.len();
                    for v in *list {
                        overflow |= !images.push(image_info(v, image_layout));
                    }
                    (first, list.len(), Infos::Images)
                }
                BindingResource::AccelerationStructure(s) => {
                    overflow |= !structures.push(s.raw);
                    (structures.len().wrapping_sub(1), 1, Infos::Structures)
                }
                BindingResource::AccelerationStructureArray(list) => {
                    let first = structures.len();
                    for s in *list {
                        overflow |= !structures.push(s.raw);
                    }
                    (first, list.len(), Infos::Structures)
                }
            };
            overflow |= !pending.push(PendingWrite {
                binding: entry.binding,
                ty,
                first,
                count,
                infos,
            });
        },
    )?;
    if overflow {
        // Unreachable: fixed lists are used only where every entry fits.
        log::error!("bind group scratch lists overflowed");
        return Err(BindingError::Device(crate::DeviceError::Unexpected));
    }
    if pending.len() != desc.entries.len() {
        // Unreachable: every entry that passed has a layout entry and a type.
        return Err(BindingError::UnknownBinding(
            desc.entries.get(pending.len()).map_or(0, |e| e.binding),
        ));
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
    // One chained struct per structure entry (its handles, one or an
    // array's), all made before any write points at them: the list does not
    // move afterwards. The writes below take them in the same order.
    let handles = structures.as_slice();
    let mut chained = S::List::<vk::WriteDescriptorSetAccelerationStructureKHR>::new();
    for p in pending.as_slice() {
        if p.infos == Infos::Structures {
            // A structure entry has at least one handle, so `chained` has
            // at most as many elements as `structures`: it fits.
            let range = handles.get(p.first..p.first + p.count).unwrap_or_default();
            let _ = chained.push(
                vk::WriteDescriptorSetAccelerationStructureKHR::default()
                    .acceleration_structures(range),
            );
        }
    }
    let chained = chained.as_slice();
    let mut next_chained = 0;
    let mut writes = S::List::<vk::WriteDescriptorSet>::new();
    for p in pending.as_slice() {
        let mut write = vk::WriteDescriptorSet::default()
            .dst_set(raw)
            .dst_binding(p.binding)
            .descriptor_type(p.ty);
        // The counts come from checked slices, so they fit u32 (at most a
        // layout's array length).
        write.descriptor_count = p.count as u32;
        let range = p.first..p.first + p.count;
        // The ranges were recorded as the lists grew, so they are in bounds;
        // a miss would be a bug, answered with an error, not a panic.
        let ok = match p.infos {
            Infos::Images => image_infos
                .get(range)
                .map(|i| write.p_image_info = i.as_ptr()),
            Infos::Buffers => buffer_infos
                .get(range)
                .map(|b| write.p_buffer_info = b.as_ptr()),
            // The structure entries' chained structs, in order.
            Infos::Structures => {
                next_chained += 1;
                chained
                    .get(next_chained - 1)
                    .filter(|c| c.acceleration_structure_count as usize == p.count)
                    .map(|c| write.p_next = std::ptr::from_ref(c).cast())
            }
        };
        if ok.is_none() || !writes.push(write) {
            log::error!("bind group write {} out of its scratch lists", p.binding);
            // SAFETY: the set came from this allocator and was never written
            // or used since.
            let freed = unsafe { shared.descriptors.lock().free(&shared.raw, set) };
            if let Err(e) = freed {
                log::error!("freeing descriptor set {raw:?}: {e}");
            }
            return Err(BindingError::Device(crate::DeviceError::Unexpected));
        }
    }
    // SAFETY: every write names a binding of the set's layout with its type
    // and a count within the binding's; the infos (or the chained structure
    // write) it points at live until the call returns and name live
    // resources of this device (caller's contract), checked against the
    // layout above (kind, usage, view shape and format, ranges). The set is
    // not in use by the GPU (new, or recycled from a destroyed bind group).
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

/// A sampled or storage image descriptor.
fn image_info(view: &super::TextureView, layout: vk::ImageLayout) -> vk::DescriptorImageInfo {
    vk::DescriptorImageInfo::default()
        .image_view(view.raw)
        .image_layout(layout)
}

/// A checked buffer range's descriptor.
fn buffer_info(b: &BufferBinding<'_, super::Buffer>) -> vk::DescriptorBufferInfo {
    vk::DescriptorBufferInfo {
        buffer: b.buffer.raw,
        offset: b.offset,
        range: validate::binding::binding_size(b.buffer.size, b.offset, b.size),
    }
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

/// The scratch lists one bind group is built in.
trait Scratch {
    /// A list of `T`.
    type List<T>: List<T>;
}

/// Fixed stack lists of [`INLINE`] elements, for groups without arrays of
/// at most [`INLINE`] entries (one descriptor each).
struct Fixed;

impl Scratch for Fixed {
    type List<T> = ArrayVec<T, INLINE>;
}

/// Lists on the stack up to [`INLINE`] elements, moved to the heap past
/// that, for the other groups.
struct Growable;

impl Scratch for Growable {
    type List<T> = Inline<T, INLINE>;
}

/// What [`create_with`] needs of a scratch list.
trait List<T> {
    /// An empty list.
    fn new() -> Self;
    /// Appends `value`; false (and nothing stored) when the list is full.
    fn push(&mut self, value: T) -> bool;
    /// The elements.
    fn as_slice(&self) -> &[T];
    /// The number of elements.
    fn len(&self) -> usize {
        self.as_slice().len()
    }
}

impl<T, const N: usize> List<T> for ArrayVec<T, N> {
    #[inline]
    fn new() -> Self {
        ArrayVec::new()
    }

    #[inline]
    fn push(&mut self, value: T) -> bool {
        self.try_push(value).is_ok()
    }

    #[inline]
    fn as_slice(&self) -> &[T] {
        self
    }

    #[inline]
    fn len(&self) -> usize {
        ArrayVec::len(self)
    }
}

impl<T, const N: usize> List<T> for Inline<T, N> {
    fn new() -> Self {
        Inline::new()
    }

    fn push(&mut self, value: T) -> bool {
        Inline::push(self, value);
        true
    }

    fn as_slice(&self) -> &[T] {
        Inline::as_slice(self)
    }
}

/// A list on the stack up to `N` elements, moved to the heap past that.
pub(super) enum Inline<T, const N: usize> {
    Stack(ArrayVec<T, N>),
    Heap(Vec<T>),
}

impl<T, const N: usize> Inline<T, N> {
    pub(super) fn new() -> Self {
        Self::Stack(ArrayVec::new())
    }

    pub(super) fn push(&mut self, value: T) {
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

    pub(super) fn as_slice(&self) -> &[T] {
        match self {
            Self::Stack(items) => items,
            Self::Heap(items) => items,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_moves_to_the_heap_past_its_capacity() {
        let mut list = <Inline<u32, 2> as List<u32>>::new();
        for i in 0..5 {
            assert!(List::push(&mut list, i));
        }
        assert!(matches!(list, Inline::Heap(_)));
        assert_eq!(Inline::as_slice(&list), &[0, 1, 2, 3, 4]);
    }

    #[test]
    fn fixed_lists_refuse_past_their_capacity() {
        let mut list = <ArrayVec<u32, 2> as List<u32>>::new();
        assert!(List::push(&mut list, 0));
        assert!(List::push(&mut list, 1));
        assert!(!List::push(&mut list, 2));
        assert_eq!(List::as_slice(&list), &[0, 1]);
    }
}
