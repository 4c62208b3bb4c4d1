//! Bind group layouts, bind groups and pipeline layouts on noop: the same
//! cheap checks a GPU backend makes, with nothing behind them.
//!
//! The checks, in the order they run (each returns the [`BindingError`] named):
//!
//! - layouts: a binding number at or above `max_bindings_per_bind_group`
//!   (`LimitExceeded`), two entries with one binding (`DuplicateBinding`),
//!   acceleration structures and external textures (the noop adapter has
//!   neither), binding arrays without the device feature their resource
//!   needs, dynamic offsets on an array or in an update-after-bind layout
//!   (`Unsupported`);
//! - groups: an entry whose binding the layout lacks (`UnknownBinding`), a
//!   binding with two entries (`DuplicateBinding`) or none
//!   (`MissingBinding`), a resource of another kind than the layout's, a
//!   view whose dimension, sample count or format does not fit
//!   (`WrongType`), an array of the wrong length (`WrongCount`; an
//!   update-after-bind layout may be partially bound), a buffer range that
//!   is empty, misaligned, shorter than `min_binding_size`, longer than the
//!   binding size limit or past the end of its buffer (`InvalidBufferRange`);
//! - pipeline layouts: more bind groups than `max_bind_groups`, more dynamic
//!   uniform or storage buffers than their limits, a push-constant range
//!   that is empty, unaligned, past `max_immediate_size`, without stages, or
//!   sharing a stage with another range (`LimitExceeded`).

use std::sync::Arc;

use super::{BindGroup, BindGroupLayout, DeviceShared, PipelineLayout};
use crate::shader::interface::LayoutView;
use crate::{
    BindGroupDescriptor, BindGroupLayoutDescriptor, BindGroupLayoutFlags, BindingError,
    BindingResource, BufferBinding, DeviceError, PipelineLayoutDescriptor,
};

/// A binding with a dynamic offset: where its range ends at offset 0, and
/// the size of its buffer. `set_bind_group` checks offsets against it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DynamicRange {
    pub(crate) end: u64,
    pub(crate) buffer_size: u64,
}

impl LayoutView for PipelineLayout {
    fn bind_group_count(&self) -> usize {
        self.groups.len()
    }

    fn bind_group_entries(&self, group: u32) -> Option<&[wgt::BindGroupLayoutEntry]> {
        self.groups
            .get(usize::try_from(group).ok()?)
            .map(|entries| &**entries)
    }

    fn push_constant_ranges(
        &self,
    ) -> impl Iterator<Item = (wgt::ShaderStages, std::ops::Range<u32>)> + '_ {
        self.push_constant_ranges
            .iter()
            .map(|r| (r.stages, r.range.clone()))
    }
}

/// Checks a layout descriptor and returns its entries sorted by binding.
pub(crate) fn create_bind_group_layout(
    shared: &DeviceShared,
    desc: &BindGroupLayoutDescriptor,
) -> Result<BindGroupLayout, BindingError> {
    let mut entries = Vec::new();
    entries
        .try_reserve_exact(desc.entries.len())
        .map_err(|_| DeviceError::OutOfMemory)?;
    entries.extend_from_slice(desc.entries);
    entries.sort_unstable_by_key(|e| e.binding);
    if let Some(last) = entries.last() {
        if last.binding >= shared.limits.max_bindings_per_bind_group {
            return Err(BindingError::LimitExceeded(
                "a binding number is at or above max_bindings_per_bind_group",
            ));
        }
    }
    if let Some(pair) = entries.windows(2).find(|w| w[0].binding == w[1].binding) {
        return Err(BindingError::DuplicateBinding(pair[0].binding));
    }
    let update_after_bind = desc.flags.contains(BindGroupLayoutFlags::UPDATE_AFTER_BIND);
    let mut dynamic_count = 0u32;
    for entry in &entries {
        check_layout_entry(entry, shared.features, update_after_bind)?;
        if is_dynamic(&entry.ty) {
            dynamic_count += 1;
        }
    }
    Ok(BindGroupLayout {
        entries: entries.into(),
        dynamic_count,
        update_after_bind,
    })
}

fn is_dynamic(ty: &wgt::BindingType) -> bool {
    matches!(
        ty,
        wgt::BindingType::Buffer {
            has_dynamic_offset: true,
            ..
        }
    )
}

fn check_layout_entry(
    entry: &wgt::BindGroupLayoutEntry,
    features: wgt::Features,
    update_after_bind: bool,
) -> Result<(), BindingError> {
    use wgt::BindingType as T;
    let binding = entry.binding;
    let unsupported = |reason| Err(BindingError::Unsupported { binding, reason });
    match entry.ty {
        T::AccelerationStructure { .. } => {
            return unsupported("acceleration structures need HalFeatures::ACCELERATION_STRUCTURE")
        }
        T::ExternalTexture => return unsupported("external textures are not supported"),
        _ => {}
    }
    if is_dynamic(&entry.ty) && update_after_bind {
        return unsupported("update-after-bind layouts cannot hold dynamic-offset buffers");
    }
    if entry.count.is_none() {
        return Ok(());
    }
    if is_dynamic(&entry.ty) {
        return unsupported("a binding array cannot have dynamic offsets");
    }
    let (needed, what) = match entry.ty {
        T::Buffer {
            ty: wgt::BufferBindingType::Uniform,
            ..
        } => (
            wgt::Features::BUFFER_BINDING_ARRAY | wgt::Features::UNIFORM_BUFFER_BINDING_ARRAYS,
            "uniform buffer arrays need BUFFER_BINDING_ARRAY and UNIFORM_BUFFER_BINDING_ARRAYS",
        ),
        T::Buffer { .. } => (
            wgt::Features::BUFFER_BINDING_ARRAY | wgt::Features::STORAGE_RESOURCE_BINDING_ARRAY,
            "storage buffer arrays need BUFFER_BINDING_ARRAY and STORAGE_RESOURCE_BINDING_ARRAY",
        ),
        T::StorageTexture { .. } => (
            wgt::Features::TEXTURE_BINDING_ARRAY | wgt::Features::STORAGE_RESOURCE_BINDING_ARRAY,
            "storage texture arrays need TEXTURE_BINDING_ARRAY and STORAGE_RESOURCE_BINDING_ARRAY",
        ),
        _ => (
            wgt::Features::TEXTURE_BINDING_ARRAY,
            "texture and sampler arrays need TEXTURE_BINDING_ARRAY",
        ),
    };
    if !features.contains(needed) {
        return unsupported(what);
    }
    Ok(())
}

/// Checks a bind group's entries against its layout.
pub(crate) fn create_bind_group(
    shared: &DeviceShared,
    desc: &BindGroupDescriptor<super::Api>,
) -> Result<BindGroup, BindingError> {
    let layout = desc.layout;
    // Entries whose binding the layout lacks, then each layout binding's entries.
    for entry in desc.entries {
        if layout
            .entries
            .binary_search_by_key(&entry.binding, |e| e.binding)
            .is_err()
        {
            return Err(BindingError::UnknownBinding(entry.binding));
        }
    }
    let mut dynamic = Vec::new();
    dynamic
        .try_reserve_exact(layout.dynamic_count as usize)
        .map_err(|_| DeviceError::OutOfMemory)?;
    for slot in layout.entries.iter() {
        let mut found = desc.entries.iter().filter(|e| e.binding == slot.binding);
        let entry = found
            .next()
            .ok_or(BindingError::MissingBinding(slot.binding))?;
        if found.next().is_some() {
            return Err(BindingError::DuplicateBinding(slot.binding));
        }
        check_entry(shared, slot, &entry.resource, layout, &mut dynamic)?;
    }
    Ok(BindGroup { dynamic })
}

/// What a layout entry of this type expects, for `WrongType`.
fn expected(ty: &wgt::BindingType, array: bool) -> &'static str {
    use wgt::BindingType as T;
    match (ty, array) {
        (T::Buffer { .. }, false) => "a buffer",
        (T::Buffer { .. }, true) => "an array of buffers",
        (T::Sampler(_), false) => "a sampler",
        (T::Sampler(_), true) => "an array of samplers",
        (_, false) => "a texture view",
        (_, true) => "an array of texture views",
    }
}

fn check_entry(
    shared: &DeviceShared,
    slot: &wgt::BindGroupLayoutEntry,
    resource: &BindingResource<'_, super::Api>,
    layout: &BindGroupLayout,
    dynamic: &mut Vec<DynamicRange>,
) -> Result<(), BindingError> {
    use wgt::BindingType as T;
    let binding = slot.binding;
    let wrong = || BindingError::WrongType {
        binding,
        expected: expected(&slot.ty, slot.count.is_some()),
    };
    // Arrays of update-after-bind layouts may be partially bound.
    let count = |got: usize| -> Result<(), BindingError> {
        let expected = slot.count.map_or(1, |n| n.get());
        let ok = if layout.update_after_bind {
            (1..=expected as usize).contains(&got)
        } else {
            got == expected as usize
        };
        if ok {
            Ok(())
        } else {
            Err(BindingError::WrongCount {
                binding,
                got,
                expected,
            })
        }
    };
    match (&slot.ty, resource, slot.count.is_some()) {
        (T::Buffer { .. }, BindingResource::Buffer(b), false) => {
            let range = check_buffer(shared, binding, &slot.ty, b)?;
            if is_dynamic(&slot.ty) {
                dynamic.push(range);
            }
            Ok(())
        }
        (T::Buffer { .. }, BindingResource::BufferArray(list), true) => {
            count(list.len())?;
            for b in *list {
                check_buffer(shared, binding, &slot.ty, b)?;
            }
            Ok(())
        }
        (T::Sampler(_), BindingResource::Sampler(_), false) => Ok(()),
        (T::Sampler(_), BindingResource::SamplerArray(list), true) => count(list.len()),
        (T::Texture { .. } | T::StorageTexture { .. }, BindingResource::TextureView(v), false) => {
            check_view(binding, &slot.ty, v)
        }
        (
            T::Texture { .. } | T::StorageTexture { .. },
            BindingResource::TextureViewArray(list),
            true,
        ) => {
            count(list.len())?;
            list.iter()
                .try_for_each(|v| check_view(binding, &slot.ty, v))
        }
        _ => Err(wrong()),
    }
}

/// Checks one buffer range; returns where it ends and its buffer's size.
fn check_buffer(
    shared: &DeviceShared,
    binding: u32,
    ty: &wgt::BindingType,
    b: &BufferBinding<'_, super::Buffer>,
) -> Result<DynamicRange, BindingError> {
    let wgt::BindingType::Buffer {
        ty: kind,
        min_binding_size,
        ..
    } = *ty
    else {
        return Err(BindingError::WrongType {
            binding,
            expected: "a buffer",
        });
    };
    let limits = &shared.limits;
    let buffer_size = b.buffer.size();
    let size = match b.size {
        Some(size) => size.get(),
        None => buffer_size.saturating_sub(b.offset),
    };
    let (alignment, max) = match kind {
        wgt::BufferBindingType::Uniform => (
            limits.min_uniform_buffer_offset_alignment,
            limits.max_uniform_buffer_binding_size,
        ),
        wgt::BufferBindingType::Storage { .. } => (
            limits.min_storage_buffer_offset_alignment,
            limits.max_storage_buffer_binding_size,
        ),
    };
    let end = b.offset.checked_add(size);
    let fits = end.is_some_and(|end| end <= buffer_size);
    let valid = fits
        && size > 0
        && b.offset % u64::from(alignment.max(1)) == 0
        && size <= max
        && min_binding_size.is_none_or(|min| size >= min.get());
    if !valid {
        return Err(BindingError::InvalidBufferRange {
            binding,
            offset: b.offset,
            size,
            buffer_size,
        });
    }
    Ok(DynamicRange {
        end: end.unwrap_or(u64::MAX),
        buffer_size,
    })
}

/// Checks that a view fits a texture or storage texture layout entry.
fn check_view(
    binding: u32,
    ty: &wgt::BindingType,
    view: &super::TextureView,
) -> Result<(), BindingError> {
    use wgt::BindingType as T;
    let wrong = |expected| Err(BindingError::WrongType { binding, expected });
    let (view_dimension, multisampled) = match *ty {
        T::Texture {
            view_dimension,
            multisampled,
            sample_type,
        } => {
            let aspect = Some(view.range.aspect);
            let fits = match view.format.sample_type(aspect, None) {
                Some(wgt::TextureSampleType::Float { filterable }) => {
                    matches!(
                        sample_type,
                        wgt::TextureSampleType::Float { filterable: false }
                    ) || (filterable
                        && sample_type == wgt::TextureSampleType::Float { filterable: true })
                }
                Some(wgt::TextureSampleType::Depth) => matches!(
                    sample_type,
                    wgt::TextureSampleType::Depth
                        | wgt::TextureSampleType::Float { filterable: false }
                ),
                Some(other) => other == sample_type,
                None => false,
            };
            if !fits {
                return wrong("a view whose format has the layout's sample type");
            }
            (view_dimension, multisampled)
        }
        T::StorageTexture {
            format,
            view_dimension,
            ..
        } => {
            if view.format != format {
                return wrong("a view of the layout's storage texture format");
            }
            (view_dimension, false)
        }
        _ => return wrong("a buffer or sampler, not a texture view"),
    };
    if view.dimension != view_dimension {
        return wrong("a view of the layout's view dimension");
    }
    if multisampled != (view.layout.sample_count > 1) {
        return wrong(if multisampled {
            "a view of a multisampled texture"
        } else {
            "a view of a single-sampled texture"
        });
    }
    Ok(())
}

/// Checks a pipeline layout against the device's limits.
pub(crate) fn create_pipeline_layout(
    shared: &DeviceShared,
    desc: &PipelineLayoutDescriptor<super::Api>,
) -> Result<PipelineLayout, BindingError> {
    let limits = &shared.limits;
    if desc.bind_group_layouts.len() > limits.max_bind_groups as usize {
        return Err(BindingError::LimitExceeded(
            "more bind groups than max_bind_groups",
        ));
    }
    let (mut uniform, mut storage) = (0u32, 0u32);
    for layout in desc.bind_group_layouts {
        for entry in layout.entries.iter() {
            if let wgt::BindingType::Buffer {
                ty,
                has_dynamic_offset: true,
                ..
            } = entry.ty
            {
                match ty {
                    wgt::BufferBindingType::Uniform => uniform += 1,
                    wgt::BufferBindingType::Storage { .. } => storage += 1,
                }
            }
        }
    }
    if uniform > limits.max_dynamic_uniform_buffers_per_pipeline_layout {
        return Err(BindingError::LimitExceeded(
            "more dynamic uniform buffers than max_dynamic_uniform_buffers_per_pipeline_layout",
        ));
    }
    if storage > limits.max_dynamic_storage_buffers_per_pipeline_layout {
        return Err(BindingError::LimitExceeded(
            "more dynamic storage buffers than max_dynamic_storage_buffers_per_pipeline_layout",
        ));
    }
    check_push_constants(desc.push_constant_ranges, limits.max_immediate_size)?;

    let mut groups = Vec::new();
    groups
        .try_reserve_exact(desc.bind_group_layouts.len())
        .map_err(|_| DeviceError::OutOfMemory)?;
    groups.extend(
        desc.bind_group_layouts
            .iter()
            .map(|l| Arc::clone(&l.entries)),
    );
    let mut ranges = Vec::new();
    ranges
        .try_reserve_exact(desc.push_constant_ranges.len())
        .map_err(|_| DeviceError::OutOfMemory)?;
    ranges.extend_from_slice(desc.push_constant_ranges);
    Ok(PipelineLayout {
        groups: groups.into_boxed_slice(),
        push_constant_ranges: ranges.into_boxed_slice(),
    })
}

/// Push-constant ranges: non-empty, 4-byte aligned, inside
/// `max_immediate_size`, with stages, and no stage in two ranges.
fn check_push_constants(
    ranges: &[crate::PushConstantRange],
    max_immediate_size: u32,
) -> Result<(), BindingError> {
    let mut seen = wgt::ShaderStages::empty();
    for r in ranges {
        let (start, end) = (r.range.start, r.range.end);
        if start >= end || start % 4 != 0 || end % 4 != 0 {
            return Err(BindingError::LimitExceeded(
                "a push-constant range is empty or not 4-byte aligned",
            ));
        }
        if end > max_immediate_size {
            return Err(BindingError::LimitExceeded(
                "a push-constant range ends past max_immediate_size",
            ));
        }
        if r.stages.is_empty() {
            return Err(BindingError::LimitExceeded(
                "a push-constant range has no shader stage",
            ));
        }
        if seen.intersects(r.stages) {
            return Err(BindingError::LimitExceeded(
                "a shader stage appears in two push-constant ranges",
            ));
        }
        seen |= r.stages;
    }
    Ok(())
}
