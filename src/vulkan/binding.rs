//! Bind group layouts and pipeline layouts on Vulkan (bind groups are in
//! `bind_group.rs`).
//!
//! - A bind group layout is a `VkDescriptorSetLayout` registered with the
//!   device's descriptor allocator (docs/design.md §5), which gives its sets a pool
//!   shared by every layout of the same shape. Its entries are kept, sorted
//!   by binding, for pipeline interface checks, and with each a
//!   [`LayoutSlot`]: what the binding accepts (worked out once, read by
//!   every bind group's checks) and its descriptor type and image layout.
//! - A bind group is a descriptor set from that allocator (a recycled one
//!   when the layout has one), written with one `vkUpdateDescriptorSets`.
//!   Its entries are checked against the layout first (`bind_group.rs`).
//! - A pipeline layout is a `VkPipelineLayout` that keeps its groups'
//!   entries and its push-constant ranges ([`LayoutView`]).
//!
//! Set index = bind group index and binding = binding number, as naga's
//! SPIR-V output expects.

use std::ops::Range;

use ash::vk;

use super::conv::map_err;
use super::descriptor::{BucketKey, DescriptorCounts};
use super::object_name::set_object_name;
use super::{barrier, conv, DeviceShared};
use crate::shader::interface::LayoutView;
use crate::validate::binding::Slot;
use crate::{
    BindGroupLayoutDescriptor, BindGroupLayoutFlags, BindingError, PipelineLayoutDescriptor,
    TextureUses,
};

pub(super) use super::bind_group::{create_bind_group, destroy_bind_group};
use smallvec::SmallVec;

/// One binding of a bind group layout: what it accepts (the shared checks
/// read it) and how its descriptors are written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LayoutSlot {
    /// What the binding accepts.
    pub(crate) slot: Slot,
    /// Its Vulkan descriptor type.
    pub(crate) ty: vk::DescriptorType,
    /// The layout its image descriptors name (storage or sampled views).
    pub(crate) image_layout: vk::ImageLayout,
}

impl AsRef<Slot> for LayoutSlot {
    fn as_ref(&self) -> &Slot {
        &self.slot
    }
}

/// Creates a bind group layout (see the module docs).
///
/// # Safety
/// `device` is live.
pub(super) unsafe fn create_bind_group_layout(
    device: &super::Device,
    desc: &BindGroupLayoutDescriptor,
) -> Result<super::BindGroupLayout, BindingError> {
    let shared = &*device.shared;
    let entries = crate::validate::binding::sorted_layout_entries_shared(desc.entries)?;
    let update_after_bind = desc.flags.contains(BindGroupLayoutFlags::UPDATE_AFTER_BIND);

    let mut slots = Vec::with_capacity(entries.len());
    let sampled = barrier::texture_layout(TextureUses::RESOURCE, false);
    let storage = barrier::texture_layout(TextureUses::STORAGE_READ_WRITE, false);
    // The create info's lists live on the stack for usual layouts.
    let mut bindings = SmallVec::<[vk::DescriptorSetLayoutBinding; 16]>::new();
    let mut binding_flags = SmallVec::<[vk::DescriptorBindingFlags; 16]>::new();
    let mut dynamic_count = 0;
    let mut counts = DescriptorCounts::default();
    for entry in entries.iter() {
        let ty = check_layout_entry(shared, entry, update_after_bind)?;
        let count = entry.count.map_or(1, |c| c.get());
        counts.add(ty, count);
        if matches!(
            ty,
            vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC
        ) {
            dynamic_count += 1;
        }
        slots.push(LayoutSlot {
            slot: Slot::new(entry, &shared.limits),
            ty,
            image_layout: match entry.ty {
                wgt::BindingType::StorageTexture { .. } => storage,
                _ => sampled,
            },
        });
        bindings.push(
            vk::DescriptorSetLayoutBinding::default()
                .binding(entry.binding)
                .descriptor_type(ty)
                .descriptor_count(count)
                .stage_flags(conv::map_shader_stages(entry.visibility)),
        );
        if update_after_bind {
            let mut flags = vk::DescriptorBindingFlags::UPDATE_AFTER_BIND;
            if entry.count.is_some() {
                flags |= vk::DescriptorBindingFlags::PARTIALLY_BOUND;
            }
            binding_flags.push(flags);
        }
    }
    let key = BucketKey {
        counts,
        update_after_bind,
    };

    let mut flags_info = vk::DescriptorSetLayoutBindingFlagsCreateInfo::default()
        .binding_flags(binding_flags.as_slice());
    let mut info = vk::DescriptorSetLayoutCreateInfo::default().bindings(bindings.as_slice());
    if update_after_bind {
        info = info
            .flags(vk::DescriptorSetLayoutCreateFlags::UPDATE_AFTER_BIND_POOL)
            .push_next(&mut flags_info);
    }
    // SAFETY: every binding was checked against the device's features; the
    // binding-flags array, when chained, has one element per binding.
    let raw = unsafe { shared.raw.create_descriptor_set_layout(&info, None) }.map_err(map_err)?;
    shared.counters.bind_group_layouts.add();
    if let Some(label) = desc.label {
        // SAFETY: `raw` is live.
        unsafe { set_object_name(shared, raw, label) };
    }
    Ok(super::BindGroupLayout {
        raw,
        entries,
        simple: super::bind_group::is_simple(&slots),
        slots: slots.into(),
        dynamic_count,
        update_after_bind,
        // Registered with the descriptor allocator by its first bind group.
        key,
        token: Default::default(),
    })
}

/// Checks one layout entry (the shared checks of `validate/binding.rs`,
/// then what needs this device: the storage format's support,
/// update-after-bind for the descriptor type); returns its Vulkan
/// descriptor type.
fn check_layout_entry(
    shared: &DeviceShared,
    entry: &wgt::BindGroupLayoutEntry,
    update_after_bind: bool,
) -> Result<vk::DescriptorType, BindingError> {
    crate::validate::binding::check_layout_entry(
        entry,
        &shared.limits,
        shared.features,
        shared.hal_features,
        update_after_bind,
    )?;
    let unsupported = |reason| BindingError::Unsupported {
        binding: entry.binding,
        reason,
    };
    let Some(ty) = conv::map_binding_type(&entry.ty) else {
        return Err(unsupported(
            "external textures are not supported by the Vulkan backend",
        ));
    };
    if let wgt::BindingType::StorageTexture { access, format, .. } = entry.ty {
        check_storage_format(shared, access, format).map_err(unsupported)?;
    }
    if update_after_bind && !update_after_bind_enabled(shared, ty) {
        return Err(unsupported(
            "update-after-bind needs the device opened with PARTIALLY_BOUND_BINDING_ARRAY \
             and driver support for this descriptor type",
        ));
    }
    Ok(ty)
}

/// Checks a storage texture format's storage support on this adapter.
fn check_storage_format(
    shared: &DeviceShared,
    access: wgt::StorageTextureAccess,
    format: wgt::TextureFormat,
) -> Result<(), &'static str> {
    let vk_format = conv::map_texture_format(format);
    if vk_format == vk::Format::UNDEFINED {
        return Err("the storage texture format has no Vulkan equivalent");
    }
    // SAFETY: the physical device belongs to this instance.
    let features = unsafe {
        shared
            .formats
            .format_properties(&shared.instance.raw, shared.physical_device, vk_format)
    }
    .optimal_tiling_features;
    let needed = match access {
        wgt::StorageTextureAccess::Atomic => {
            vk::FormatFeatureFlags::STORAGE_IMAGE | vk::FormatFeatureFlags::STORAGE_IMAGE_ATOMIC
        }
        _ => vk::FormatFeatureFlags::STORAGE_IMAGE,
    };
    if !features.contains(needed) {
        return Err("the format does not support this storage access on this adapter");
    }
    Ok(())
}

/// Whether layouts may use update-after-bind for descriptors of type `ty`:
/// the device was opened with `PARTIALLY_BOUND_BINDING_ARRAY` (which enables
/// every update-after-bind feature the adapter has) and the adapter has it
/// for this type.
fn update_after_bind_enabled(shared: &DeviceShared, ty: vk::DescriptorType) -> bool {
    use vk::DescriptorType as D;
    if !shared
        .features
        .contains(wgt::Features::PARTIALLY_BOUND_BINDING_ARRAY)
    {
        return false;
    }
    // The feature table enables each kind the adapter has with partially
    // bound arrays (structures with ACCELERATION_STRUCTURE_BINDING_ARRAY).
    use crate::features::vulkan_column::Bit;
    let bit = match ty {
        D::SAMPLER | D::SAMPLED_IMAGE => Bit::SampledImageUpdateAfterBind,
        D::STORAGE_IMAGE => Bit::StorageImageUpdateAfterBind,
        D::STORAGE_BUFFER => Bit::StorageBufferUpdateAfterBind,
        D::UNIFORM_BUFFER => Bit::UniformBufferUpdateAfterBind,
        D::ACCELERATION_STRUCTURE_KHR => Bit::AccelerationStructureUpdateAfterBind,
        _ => return false,
    };
    shared.enabled.has(bit)
}

/// Destroys a bind group layout: unregisters it from the allocator if a
/// bind group registered it (its cached sets go back to their pools; the
/// bucket's last layout takes the pools with it), then destroys the
/// `VkDescriptorSetLayout`.
///
/// # Safety
/// The layout came from `device`; its bind groups are destroyed and the GPU
/// is done with them.
pub(super) unsafe fn destroy_bind_group_layout(
    device: &super::Device,
    layout: super::BindGroupLayout,
) {
    let shared = &*device.shared;
    if let Some(token) = layout.token.get() {
        // SAFETY: the token is this device's; the caller guarantees no set
        // of the layout is in use by the GPU.
        let unregistered = unsafe { shared.descriptors.unregister_layout(&shared.raw, token) };
        if let Err(e) = unregistered {
            log::error!("unregistering descriptor set layout {:?}: {e}", layout.raw);
        }
    }
    // SAFETY: the caller guarantees nothing uses the layout any more.
    unsafe { shared.raw.destroy_descriptor_set_layout(layout.raw, None) };
    shared.counters.bind_group_layouts.sub();
}

/// Creates a pipeline layout (see the module docs).
///
/// # Safety
/// The bind group layouts came from `device`.
pub(super) unsafe fn create_pipeline_layout(
    device: &super::Device,
    desc: &PipelineLayoutDescriptor<super::Api>,
) -> Result<super::PipelineLayout, BindingError> {
    let shared = &*device.shared;
    // The shared checks (`validate/layout.rs`); nothing here needs the driver.
    crate::validate::layout::check_pipeline_layout(
        desc.bind_group_layouts.iter().map(|l| &*l.entries),
        desc.push_constant_ranges,
        &shared.limits,
        shared.features,
    )?;
    let ranges: Vec<vk::PushConstantRange> = desc
        .push_constant_ranges
        .iter()
        .map(|r| vk::PushConstantRange {
            stage_flags: conv::map_shader_stages(r.stages),
            offset: r.range.start,
            size: r.range.end - r.range.start,
        })
        .collect();
    let set_layouts: Vec<vk::DescriptorSetLayout> =
        desc.bind_group_layouts.iter().map(|l| l.raw).collect();
    let info = vk::PipelineLayoutCreateInfo::default()
        .set_layouts(&set_layouts)
        .push_constant_ranges(&ranges);
    // SAFETY: the set layouts are live layouts of this device (caller's
    // contract); the ranges were checked against the limits.
    let raw = unsafe { shared.raw.create_pipeline_layout(&info, None) }.map_err(map_err)?;
    shared.counters.pipeline_layouts.add();
    if let Some(label) = desc.label {
        // SAFETY: `raw` is live.
        unsafe { set_object_name(shared, raw, label) };
    }
    Ok(super::PipelineLayout {
        raw,
        groups: desc
            .bind_group_layouts
            .iter()
            .map(|l| l.entries.clone())
            .collect(),
        push_constant_ranges: desc.push_constant_ranges.into(),
    })
}

/// Destroys a pipeline layout.
///
/// # Safety
/// The layout came from `device`; no pipeline or recording in progress uses it.
pub(super) unsafe fn destroy_pipeline_layout(
    device: &super::Device,
    layout: super::PipelineLayout,
) {
    let shared = &*device.shared;
    // SAFETY: the caller guarantees nothing uses the layout any more.
    unsafe { shared.raw.destroy_pipeline_layout(layout.raw, None) };
    shared.counters.pipeline_layouts.sub();
}

impl LayoutView for super::PipelineLayout {
    fn bind_group_count(&self) -> usize {
        self.groups.len()
    }

    fn bind_group_entries(&self, group: u32) -> Option<&[wgt::BindGroupLayoutEntry]> {
        self.groups.get(usize::try_from(group).ok()?).map(|e| &**e)
    }

    fn push_constant_ranges(&self) -> impl Iterator<Item = (wgt::ShaderStages, Range<u32>)> + '_ {
        self.push_constant_ranges
            .iter()
            .map(|r| (r.stages, r.range.clone()))
    }
}

impl super::BindGroupLayout {
    /// The layout's entries, sorted by binding.
    pub fn entries(&self) -> &[wgt::BindGroupLayoutEntry] {
        &self.entries
    }
    /// Bindings with a dynamic offset (`set_bind_group` takes one offset each).
    pub fn dynamic_binding_count(&self) -> u32 {
        self.dynamic_count
    }
}

impl super::Device {
    /// Returns the descriptor sets that destroyed bind groups left cached for
    /// reuse (up to 1,024 per layout) to their pools, and lets emptied pools
    /// go. Call it after a burst of bind groups, when memory matters more
    /// than the next burst's speed.
    ///
    /// # Safety
    /// No recording in progress and no pending GPU work uses a destroyed bind
    /// group (the destroy contract already says so).
    pub unsafe fn trim_descriptor_caches(&self) -> Result<(), crate::DeviceError> {
        // SAFETY: the allocator's device is this one; forwarded contract.
        unsafe { self.shared.descriptors.trim(&self.shared.raw) }
    }
}
