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
//! The checks read the layout's slots ([`super::binding::LayoutSlot`]:
//! what each binding accepts, worked out when the layout was made).
//! Groups of a simple layout (at most [`INLINE`] bindings of one buffer,
//! sampler or view each) are built in fixed stack lists, entry `i`'s info
//! and write at position `i`, in the checking pass ([`create_simple`]);
//! others (arrays, acceleration structures, many bindings) in lists that
//! move to the heap past [`INLINE`] elements ([`create_general`]).
//! Bind-group churn allocates nothing on the heap in the steady state.

use ash::vk;
use smallvec::SmallVec;

use super::object_name::set_object_name;
use crate::validate;
use crate::{BindGroupDescriptor, BindingError, BindingResource, BufferBinding};

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
            sample_type: view.sample_type,
            key: view.key,
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

/// Whether a layout of these slots is simple: at most [`INLINE`] bindings,
/// each of one buffer, sampler or view (no arrays, no acceleration
/// structures). Its groups take [`create_simple`].
pub(super) fn is_simple(slots: &[super::binding::LayoutSlot]) -> bool {
    slots.len() <= INLINE
        && slots.iter().all(|s| {
            s.slot.count.is_none() && s.slot.accept != validate::binding::Accept::Structure
        })
}

/// Creates a bind group (see the module docs).
///
/// # Safety
/// The layout and every resource came from `device`; the resources outlive the group.
#[inline(always)]
pub(super) unsafe fn create_bind_group(
    device: &super::Device,
    desc: &BindGroupDescriptor<super::Api>,
) -> Result<super::BindGroup, BindingError> {
    if desc.layout.simple && desc.entries.len() <= INLINE {
        // SAFETY: forwarded contract.
        unsafe { create_simple(device, desc) }
    } else {
        // SAFETY: forwarded contract.
        unsafe { create_general(device, desc) }
    }
}

/// The descriptor info of one entry of a simple group: a buffer's or an
/// image's (a sampler's or a view's), both 24 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
union Info {
    buffer: vk::DescriptorBufferInfo,
    image: vk::DescriptorImageInfo,
}

/// [`create_bind_group`] for a simple layout ([`is_simple`]): slot `i`'s
/// info is element `i` of a fixed stack array, filled in the checking
/// pass; once the set is allocated, one pass makes each slot's write,
/// pointing at its info.
///
/// # Safety
/// As for [`create_bind_group`]; the layout is simple and the group has at
/// most [`INLINE`] entries.
#[inline(always)]
unsafe fn create_simple(
    device: &super::Device,
    desc: &BindGroupDescriptor<super::Api>,
) -> Result<super::BindGroup, BindingError> {
    let shared = &*device.shared;
    let layout = desc.layout;
    let slots = &*layout.slots;
    // Slot `i`'s info at position `i`: the checks pass only when every
    // slot has exactly one entry, so all `slots.len()` are written then
    // (bit `i` of `written` says so).
    let mut infos = [std::mem::MaybeUninit::<Info>::uninit(); INLINE];
    let mut written = 0u64;
    validate::binding::check_bind_group_with::<super::Api, _>(
        slots,
        layout.update_after_bind,
        desc.entries,
        |index, slot, entry| {
            let info = match &entry.resource {
                BindingResource::Buffer(b) => Info {
                    buffer: buffer_info(b),
                },
                BindingResource::Sampler(s) => Info {
                    image: vk::DescriptorImageInfo::default().sampler(s.raw),
                },
                BindingResource::TextureView(v) => Info {
                    image: image_info(v, slot.image_layout),
                },
                // A simple layout has none of these, and the checks
                // passed: left unwritten, caught below.
                _ => return,
            };
            if let Some(cell) = infos.get_mut(index) {
                cell.write(info);
                written |= 1 << index;
            }
        },
    )?;
    // `slots.len() <= INLINE` (simple layout), so the mask fits.
    let count = slots.len().min(INLINE);
    if written != (1u64 << count) - 1 || count != slots.len() {
        log::error!("bind group entries did not fit their simple layout");
        return Err(BindingError::Device(crate::DeviceError::Unexpected));
    }
    let set = allocate_set(shared, layout)?;
    let raw = set.raw();
    let mut writes = [std::mem::MaybeUninit::<vk::WriteDescriptorSet>::uninit(); INLINE];
    for ((write, slot), info) in writes.iter_mut().zip(slots).zip(&infos) {
        // The driver reads the pointer its descriptor type names and
        // ignores the other (VkWriteDescriptorSet): both point at the
        // info, which the checks wrote (`written` covers every slot).
        let info = info.as_ptr();
        let mut made = vk::WriteDescriptorSet::default()
            .dst_set(raw)
            .dst_binding(slot.slot.binding)
            .descriptor_type(slot.ty);
        made.descriptor_count = 1;
        made.p_buffer_info = info.cast();
        made.p_image_info = info.cast();
        write.write(made);
    }
    // SAFETY: the loop above wrote the first `count` writes (one per slot,
    // `count` = the slot count <= INLINE); a `MaybeUninit<T>` has `T`'s
    // layout.
    let writes: &[vk::WriteDescriptorSet] =
        unsafe { std::slice::from_raw_parts(writes.as_ptr().cast(), count) };
    // SAFETY: every write names a binding of the set's layout with its type
    // and one descriptor; its info lives until the call returns and names
    // live resources of this device (caller's contract), checked against
    // the layout above (kind, usage, view shape and format, ranges). The
    // set is not in use by the GPU (new, or recycled from a destroyed
    // bind group).
    unsafe { shared.raw.update_descriptor_sets(writes, &[]) };
    Ok(finish(shared, desc, set))
}

/// A descriptor set for a group of `layout`, from the device's allocator
/// (a recycled one when the layout has one). Inlined: on a cache hit this
/// is the lock and a pop, and the set comes back in registers.
#[inline(always)]
fn allocate_set(
    shared: &super::DeviceShared,
    layout: &super::BindGroupLayout,
) -> Result<super::descriptor::DescriptorSet, crate::DeviceError> {
    // SAFETY: the layout is live (the caller's bind group descriptor names
    // it) and its key was worked out from its entries; its token is only
    // set through this device's allocator, which registers it now if no
    // bind group did before.
    unsafe {
        let token = shared.descriptors.token_for(&layout.token, layout.key)?;
        shared.descriptors.allocate(&shared.raw, token, layout.raw)
    }
}

/// Names a written group's set and wraps it (the allocator counted it).
#[inline(always)]
fn finish(
    shared: &super::DeviceShared,
    desc: &BindGroupDescriptor<super::Api>,
    set: super::descriptor::DescriptorSet,
) -> super::BindGroup {
    if let Some(label) = desc.label {
        // SAFETY: the set is live.
        unsafe { set_object_name(shared, set.raw(), label) };
    }
    super::BindGroup {
        set,
        dynamic_count: desc.layout.dynamic_count,
    }
}

/// [`create_bind_group`] for any layout (arrays, acceleration structures,
/// many bindings): the infos are built in lists on the stack up to
/// [`INLINE`] elements (then on the heap), each entry's range recorded in
/// a pending write, and the writes made once the set is allocated.
///
/// # Safety
/// As for [`create_bind_group`].
// Kept out of `create_bind_group`, so the simple path's code stays small.
#[inline(never)]
unsafe fn create_general(
    device: &super::Device,
    desc: &BindGroupDescriptor<super::Api>,
) -> Result<super::BindGroup, BindingError> {
    let shared = &*device.shared;
    let layout = desc.layout;
    let mut buffers = SmallVec::<[vk::DescriptorBufferInfo; INLINE]>::new();
    let mut images = SmallVec::<[vk::DescriptorImageInfo; INLINE]>::new();
    let mut structures = SmallVec::<[vk::AccelerationStructureKHR; INLINE]>::new();
    let mut pending = SmallVec::<[PendingWrite; INLINE]>::new();
    let slots = &*layout.slots;
    // One pass: each entry is checked (the shared checks), then its
    // descriptor infos recorded. Nothing reaches the driver before every
    // entry passed.
    validate::binding::check_bind_group_with::<super::Api, _>(
        slots,
        layout.update_after_bind,
        desc.entries,
        |_, slot, entry| {
            let image_layout = slot.image_layout;
            let (first, count, infos) = match &entry.resource {
                BindingResource::Buffer(b) => {
                    buffers.push(buffer_info(b));
                    (buffers.len().wrapping_sub(1), 1, Infos::Buffers)
                }
                BindingResource::BufferArray(list) => {
                    let first = buffers.len();
                    for b in *list {
                        buffers.push(buffer_info(b));
                    }
                    (first, list.len(), Infos::Buffers)
                }
                BindingResource::Sampler(s) => {
                    images.push(vk::DescriptorImageInfo::default().sampler(s.raw));
                    (images.len().wrapping_sub(1), 1, Infos::Images)
                }
                BindingResource::SamplerArray(list) => {
                    let first = images.len();
                    for s in *list {
                        images.push(vk::DescriptorImageInfo::default().sampler(s.raw));
                    }
                    (first, list.len(), Infos::Images)
                }
                BindingResource::TextureView(v) => {
                    images.push(image_info(v, image_layout));
                    (images.len().wrapping_sub(1), 1, Infos::Images)
                }
                BindingResource::TextureViewArray(list) => {
                    let first = images.len();
                    for v in *list {
                        images.push(image_info(v, image_layout));
                    }
                    (first, list.len(), Infos::Images)
                }
                BindingResource::AccelerationStructure(s) => {
                    structures.push(s.raw);
                    (structures.len().wrapping_sub(1), 1, Infos::Structures)
                }
                BindingResource::AccelerationStructureArray(list) => {
                    let first = structures.len();
                    for s in *list {
                        structures.push(s.raw);
                    }
                    (first, list.len(), Infos::Structures)
                }
            };
            pending.push(PendingWrite {
                binding: entry.binding,
                ty: slot.ty,
                first,
                count,
                infos,
            });
        },
    )?;
    if pending.len() != desc.entries.len() {
        // Unreachable: every entry that passed has a layout entry and a type.
        return Err(BindingError::UnknownBinding(
            desc.entries.get(pending.len()).map_or(0, |e| e.binding),
        ));
    }

    let set = allocate_set(shared, layout)?;
    let raw = set.raw();
    let (buffer_infos, image_infos) = (buffers.as_slice(), images.as_slice());
    // One chained struct per structure entry (its handles, one or an
    // array's), all made before any write points at them: the list does not
    // move afterwards. The writes below take them in the same order.
    let handles = structures.as_slice();
    let mut chained = SmallVec::<[vk::WriteDescriptorSetAccelerationStructureKHR; INLINE]>::new();
    for p in pending.as_slice().iter().filter(|_| !handles.is_empty()) {
        if p.infos == Infos::Structures {
            // A structure entry has at least one handle, so `chained` has
            // at most as many elements as `structures`: it fits.
            let range = handles.get(p.first..p.first + p.count).unwrap_or_default();
            chained.push(
                vk::WriteDescriptorSetAccelerationStructureKHR::default()
                    .acceleration_structures(range),
            );
        }
    }
    let chained = chained.as_slice();
    let mut next_chained = 0;
    let mut writes = SmallVec::<[vk::WriteDescriptorSet; INLINE]>::new();
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
        if ok.is_none() {
            log::error!("bind group write {} out of its scratch lists", p.binding);
            // SAFETY: the set came from this allocator and was never written
            // or used since.
            let freed = unsafe { shared.descriptors.free(&shared.raw, set) };
            if let Err(e) = freed {
                log::error!("freeing descriptor set {raw:?}: {e}");
            }
            return Err(BindingError::Device(crate::DeviceError::Unexpected));
        }
        writes.push(write);
    }
    // SAFETY: every write names a binding of the set's layout with its type
    // and a count within the binding's; the infos (or the chained structure
    // write) it points at live until the call returns and name live
    // resources of this device (caller's contract), checked against the
    // layout above (kind, usage, view shape and format, ranges). The set is
    // not in use by the GPU (new, or recycled from a destroyed bind group).
    unsafe { shared.raw.update_descriptor_sets(writes.as_slice(), &[]) };
    Ok(finish(shared, desc, set))
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
#[inline(always)]
pub(super) unsafe fn destroy_bind_group(device: &super::Device, group: super::BindGroup) {
    let shared = &*device.shared;
    // SAFETY: the set came from this device's allocator; the caller
    // guarantees the GPU is done with it.
    let freed = unsafe { shared.descriptors.free(&shared.raw, group.set) };
    if let Err(e) = freed {
        log::error!("freeing descriptor set: {e}");
    }
}

impl super::BindGroup {
    /// Bindings with a dynamic offset (`set_bind_group` takes one offset each).
    pub fn dynamic_binding_count(&self) -> u32 {
        self.dynamic_count
    }
}
