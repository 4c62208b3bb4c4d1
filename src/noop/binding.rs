//! Bind group layouts, bind groups and pipeline layouts on noop: the same
//! cheap checks a GPU backend makes, with nothing behind them.
//!
//! Layout entries and bind groups get the checks of `validate/binding.rs`,
//! shared with every backend (see there for the list and order); noop adds
//! one of its own: a storage texture format its adapter cannot store to
//! (`Unsupported`). Pipeline layouts get the checks of
//! `validate/layout.rs`, shared with every backend.

use std::sync::Arc;

use super::{BindGroup, BindGroupLayout, DeviceShared, PipelineLayout};
use crate::shader::interface::LayoutView;
use crate::validate::{self, binding::Slot};
use crate::{
    BindGroupDescriptor, BindGroupLayoutDescriptor, BindGroupLayoutFlags, BindingError,
    BindingResource, DeviceError, PipelineLayoutDescriptor,
};

/// A binding with a dynamic offset: where its range ends at offset 0, and
/// the size of its buffer. `set_bind_group` checks offsets against it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DynamicRange {
    pub(crate) end: u64,
    pub(crate) buffer_size: u64,
}

impl validate::Facts for super::Api {
    fn buffer(buffer: &super::Buffer) -> validate::BufferFacts {
        validate::BufferFacts {
            size: buffer.size(),
            usage: buffer.usage,
        }
    }

    fn view(view: &super::TextureView) -> validate::ViewFacts {
        validate::ViewFacts {
            format: view.format,
            dimension: view.dimension,
            aspect: view.range.aspect,
            sample_count: view.layout.sample_count,
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
    let entries = validate::binding::sorted_layout_entries(desc.entries)?;
    let update_after_bind = desc.flags.contains(BindGroupLayoutFlags::UPDATE_AFTER_BIND);
    let mut dynamic_count = 0u32;
    for entry in &entries {
        validate::binding::check_layout_entry(
            entry,
            &shared.limits,
            shared.features,
            shared.hal_features,
            update_after_bind,
        )?;
        if let wgt::BindingType::StorageTexture { format, .. } = entry.ty {
            let caps = super::instance::format_features(format, shared.features);
            if !caps
                .allowed_usages
                .contains(wgt::TextureUsages::STORAGE_BINDING)
            {
                return Err(BindingError::Unsupported {
                    binding: entry.binding,
                    reason: "the format does not support this storage access on this adapter",
                });
            }
        }
        if is_dynamic(&entry.ty) {
            dynamic_count += 1;
        }
    }
    let slots = entries
        .iter()
        .map(|e| Slot::new(e, &shared.limits))
        .collect();
    Ok(BindGroupLayout {
        slots,
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

/// Checks a bind group's entries against its layout and keeps its dynamic
/// bindings' ranges.
pub(crate) fn create_bind_group(
    desc: &BindGroupDescriptor<super::Api>,
) -> Result<BindGroup, BindingError> {
    let layout = desc.layout;
    validate::binding::check_bind_group::<super::Api, Slot>(
        &layout.slots,
        layout.update_after_bind,
        desc.entries,
    )?;
    let mut dynamic = Vec::new();
    dynamic
        .try_reserve_exact(layout.dynamic_count as usize)
        .map_err(|_| DeviceError::OutOfMemory)?;
    // In binding order; each dynamic binding has exactly one buffer entry (checked).
    for slot in layout.entries.iter().filter(|e| is_dynamic(&e.ty)) {
        let buffer = desc.entries.iter().find_map(|e| match &e.resource {
            BindingResource::Buffer(b) if e.binding == slot.binding => Some(b),
            _ => None,
        });
        if let Some(b) = buffer {
            let buffer_size = b.buffer.size();
            let size = validate::binding::binding_size(buffer_size, b.offset, b.size);
            dynamic.push(DynamicRange {
                end: b.offset.saturating_add(size),
                buffer_size,
            });
        }
    }
    Ok(BindGroup { dynamic })
}

/// Checks a pipeline layout against the device's limits.
pub(crate) fn create_pipeline_layout(
    shared: &DeviceShared,
    desc: &PipelineLayoutDescriptor<super::Api>,
) -> Result<PipelineLayout, BindingError> {
    validate::layout::check_pipeline_layout(
        desc.bind_group_layouts.iter().map(|l| &*l.entries),
        desc.push_constant_ranges,
        &shared.limits,
        shared.features,
    )?;

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
