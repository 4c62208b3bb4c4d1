//! External textures: opaque fds (optimal tiling) and dma-bufs.
//!
//! A dma-buf texture is a single-sampled 2D colour texture with one mip
//! level and one layer, laid out as its DRM format modifier and plane
//! layouts say:
//! * with `VK_EXT_image_drm_format_modifier`
//!   ([`crate::HalFeatures::DRM_FORMAT_MODIFIER`]), export offers the driver
//!   every modifier of the format that supports the texture's usage
//!   (`VkImageDrmFormatModifierListCreateInfoEXT`) and reports the one it
//!   chose; import passes the modifier and planes explicitly
//!   (`VkImageDrmFormatModifierExplicitCreateInfoEXT`);
//! * without it, only `DRM_FORMAT_MOD_LINEAR` is possible: the image uses
//!   `VK_IMAGE_TILING_LINEAR`, whose row pitch the driver chooses. Export
//!   reports it; import accepts one plane at offset 0 whose stride equals
//!   the driver's pitch for the description, and refuses other layouts with
//!   [`ExternalError::Unsupported`].
//!
//! Memory allocation and fd ownership are `external.rs`'s.

use arrayvec::ArrayVec;
use ash::vk;

use super::conv::map_err;
use super::device::{texture_plan, TexturePlan};
use super::external::{
    allocate_and_bind, check_enabled, export_fd, exported_block, exported_memory, map_capabilities,
    required_feature, vk_handle_type, Source, Target,
};
use super::object_name::set_object_name;
use super::{conv, DeviceShared};
use crate::{
    DeviceError, DrmModifierInfo, ExportedMemory, ExternalCapabilities, ExternalError,
    ExternalHandle, ExternalHandleType, ExternalMemory, ExternalOrigin, HalFeatures, Memory,
    PlaneLayout, TextureDescriptor, TextureError, DRM_FORMAT_MOD_LINEAR,
};

/// The DRM-modifier struct chained to an image's create info, if any.
enum DrmChain<'a> {
    None,
    List(vk::ImageDrmFormatModifierListCreateInfoEXT<'a>),
    Explicit(vk::ImageDrmFormatModifierExplicitCreateInfoEXT<'a>),
}

/// The modifiers the driver supports for `format`.
///
/// # Safety
/// `pd` belongs to `instance`, which has `VK_EXT_image_drm_format_modifier`'s support.
unsafe fn modifier_list(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    format: vk::Format,
) -> Vec<vk::DrmFormatModifierPropertiesEXT> {
    let mut list = vk::DrmFormatModifierPropertiesListEXT::default();
    let mut props = vk::FormatProperties2::default().push_next(&mut list);
    // SAFETY: forwarded contract; first call counts.
    unsafe { instance.get_physical_device_format_properties2(pd, format, &mut props) };
    let count = list.drm_format_modifier_count as usize;
    let mut out = vec![vk::DrmFormatModifierPropertiesEXT::default(); count];
    let mut list =
        vk::DrmFormatModifierPropertiesListEXT::default().drm_format_modifier_properties(&mut out);
    let mut props = vk::FormatProperties2::default().push_next(&mut list);
    // SAFETY: as above; the array has room for `count` entries.
    unsafe { instance.get_physical_device_format_properties2(pd, format, &mut props) };
    let written = list.drm_format_modifier_count as usize;
    out.truncate(written);
    out
}

/// The external-memory answer for an image, `Ok(None)` when the
/// combination is not supported at all.
///
/// # Safety
/// `pd` belongs to `instance`; a `modifier` only with the DRM extension.
#[allow(clippy::too_many_arguments)]
unsafe fn query_image_caps(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    plan: &TexturePlan,
    tiling: vk::ImageTiling,
    ht: ExternalHandleType,
    modifier: Option<u64>,
) -> Result<Option<ExternalCapabilities>, vk::Result> {
    let mut external =
        vk::PhysicalDeviceExternalImageFormatInfo::default().handle_type(vk_handle_type(ht));
    let mut drm = vk::PhysicalDeviceImageDrmFormatModifierInfoEXT::default()
        .drm_format_modifier(modifier.unwrap_or(DRM_FORMAT_MOD_LINEAR))
        .sharing_mode(vk::SharingMode::EXCLUSIVE);
    let mut info = vk::PhysicalDeviceImageFormatInfo2::default()
        .format(plan.format)
        .ty(plan.image_type)
        .tiling(tiling)
        .usage(plan.usage)
        .flags(plan.flags)
        .push_next(&mut external);
    if modifier.is_some() {
        info = info.push_next(&mut drm);
    }
    let mut external_props = vk::ExternalImageFormatProperties::default();
    let mut props = vk::ImageFormatProperties2::default().push_next(&mut external_props);
    // SAFETY: forwarded contract; every chained struct is of a supported extension.
    match unsafe { instance.get_physical_device_image_format_properties2(pd, &info, &mut props) } {
        Ok(()) => Ok(Some(map_capabilities(
            &external_props.external_memory_properties,
        ))),
        Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The tiling (and modifier for the query) a handle type's textures use.
fn layout_for(ht: ExternalHandleType, drm: bool) -> (vk::ImageTiling, Option<u64>) {
    match ht {
        ExternalHandleType::DmaBuf if drm => (
            vk::ImageTiling::DRM_FORMAT_MODIFIER_EXT,
            Some(DRM_FORMAT_MOD_LINEAR),
        ),
        ExternalHandleType::DmaBuf | ExternalHandleType::HostAllocation => {
            (vk::ImageTiling::LINEAR, None)
        }
        ExternalHandleType::OpaqueFd => (vk::ImageTiling::OPTIMAL, None),
    }
}

/// The plan of `desc` without a device: what the capability queries need.
fn adapter_plan(desc: &TextureDescriptor) -> Option<TexturePlan> {
    let format = conv::map_texture_format(desc.format);
    if format == vk::Format::UNDEFINED {
        return None;
    }
    let mut usage = conv::map_texture_usage(desc.usage, desc.format);
    if usage.is_empty() {
        usage = vk::ImageUsageFlags::TRANSFER_DST;
    }
    let mut flags = vk::ImageCreateFlags::empty();
    if desc.view_formats.iter().any(|f| *f != desc.format) {
        flags |= vk::ImageCreateFlags::MUTABLE_FORMAT;
    }
    Some(TexturePlan {
        flags,
        image_type: conv::map_texture_dimension(desc.dimension),
        format,
        extent: conv::map_extent(desc.size),
        mip_levels: desc.mip_level_count,
        layers: 1,
        samples: vk::SampleCountFlags::TYPE_1,
        usage,
        format_list: Vec::new(),
    })
}

/// `Adapter::external_texture_capabilities`.
pub(super) fn texture_capabilities(
    adapter: &super::Adapter,
    desc: &TextureDescriptor,
    ht: ExternalHandleType,
) -> Result<ExternalCapabilities, DeviceError> {
    let hal = adapter.capabilities.hal_features;
    let Some(plan) = adapter_plan(desc) else {
        return Ok(ExternalCapabilities::default());
    };
    if !hal.contains(required_feature(ht)) || !dma_buf_shape_ok(desc, ht) {
        return Ok(ExternalCapabilities::default());
    }
    let (tiling, modifier) = layout_for(ht, hal.contains(HalFeatures::DRM_FORMAT_MODIFIER));
    // SAFETY: the physical device belongs to the instance; the modifier is
    // only passed with the DRM extension.
    let caps = unsafe {
        query_image_caps(
            &adapter.instance.raw,
            adapter.raw,
            &plan,
            tiling,
            ht,
            modifier,
        )
    }
    .map_err(map_err)?;
    Ok(caps.unwrap_or_default())
}

/// `Adapter::drm_format_modifiers`.
pub(super) fn drm_format_modifiers(
    adapter: &super::Adapter,
    format: wgt::TextureFormat,
) -> Vec<DrmModifierInfo> {
    let vk_format = conv::map_texture_format(format);
    if vk_format == vk::Format::UNDEFINED
        || !adapter
            .capabilities
            .hal_features
            .contains(HalFeatures::DRM_FORMAT_MODIFIER)
    {
        return Vec::new();
    }
    // SAFETY: the physical device belongs to the instance and has the extension.
    unsafe { modifier_list(&adapter.instance.raw, adapter.raw, vk_format) }
        .iter()
        .map(|m| DrmModifierInfo {
            modifier: m.drm_format_modifier,
            plane_count: m.drm_format_modifier_plane_count,
            allowed_usages: conv::map_format_features(
                m.drm_format_modifier_tiling_features,
                vk::SampleCountFlags::TYPE_1,
            )
            .allowed_usages,
        })
        .collect()
}

/// Whether `desc` has the shape a dma-buf texture must have (any shape for
/// other handle types).
fn dma_buf_shape_ok(desc: &TextureDescriptor, ht: ExternalHandleType) -> bool {
    ht != ExternalHandleType::DmaBuf
        || (desc.dimension == wgt::TextureDimension::D2
            && desc.mip_level_count == 1
            && desc.size.depth_or_array_layers == 1
            && desc.sample_count == 1
            && !desc.format.is_depth_stencil_format())
}

/// `Unsupported` with a reason.
fn unsupported(ht: ExternalHandleType, reason: &'static str) -> ExternalError {
    ExternalError::Unsupported {
        handle: ht.name(),
        reason,
    }
}

/// Checks the shape, the device's features and the driver's answer for a
/// texture of `plan` to be exported (`export`) or imported as `ht`.
///
/// # Safety
/// `shared` is a live device; a modifier only with the DRM extension.
unsafe fn check_external_texture(
    shared: &DeviceShared,
    desc: &TextureDescriptor,
    plan: &TexturePlan,
    ht: ExternalHandleType,
    tiling: vk::ImageTiling,
    modifier: Option<u64>,
    export: bool,
) -> Result<(), ExternalError> {
    check_enabled(shared, ht)?;
    if ht == ExternalHandleType::HostAllocation {
        return Err(unsupported(ht, "textures cannot live in host allocations"));
    }
    if !dma_buf_shape_ok(desc, ht) {
        return Err(unsupported(
            ht,
            "dma-buf textures are 2D colour textures with one mip, one layer and one sample",
        ));
    }
    // SAFETY: forwarded contract.
    let caps = unsafe {
        query_image_caps(
            &shared.instance.raw,
            shared.physical_device,
            plan,
            tiling,
            ht,
            modifier,
        )
    }
    .map_err(map_err)?
    .unwrap_or_default();
    match (export, caps.exportable, caps.importable) {
        (true, true, _) | (false, _, true) => Ok(()),
        (true, false, _) => Err(unsupported(
            ht,
            "textures of this description cannot be exported as this handle type",
        )),
        (false, _, false) => Err(unsupported(
            ht,
            "textures of this description cannot be imported from this handle type",
        )),
    }
}

/// `create_texture` with `Memory::External(ExternalMemory::export(..))`.
///
/// # Safety
/// `plan` was made by `texture_plan` for `desc` on this device.
pub(super) unsafe fn create_texture(
    shared: &DeviceShared,
    desc: &TextureDescriptor,
    plan: &TexturePlan,
    external: ExternalMemory,
) -> Result<super::Texture, TextureError> {
    let ht = external.handle_type;
    if external.origin != ExternalOrigin::Exported {
        return Err(unsupported(
            ht,
            "imports go through import_texture, which takes the handle",
        )
        .into());
    }
    let drm = shared.external.drm_modifier.is_some();
    let (tiling, query_modifier) = layout_for(ht, drm);
    let mut modifiers = Vec::new();
    if tiling == vk::ImageTiling::DRM_FORMAT_MODIFIER_EXT {
        check_enabled(shared, ht)?;
        let needed = conv::usage_format_features(plan.usage);
        // SAFETY: the device has the DRM extension.
        for m in unsafe { modifier_list(&shared.instance.raw, shared.physical_device, plan.format) }
        {
            if !m.drm_format_modifier_tiling_features.contains(needed) {
                continue;
            }
            // SAFETY: as above.
            let ok = unsafe {
                check_external_texture(
                    shared,
                    desc,
                    plan,
                    ht,
                    tiling,
                    Some(m.drm_format_modifier),
                    true,
                )
            };
            if ok.is_ok() {
                modifiers.push(m.drm_format_modifier);
            }
        }
        if modifiers.is_empty() {
            return Err(unsupported(
                ht,
                "no DRM format modifier of this format can be exported with this usage",
            )
            .into());
        }
    } else {
        // SAFETY: live device; no modifier without the extension.
        unsafe { check_external_texture(shared, desc, plan, ht, tiling, query_modifier, true) }?;
    }
    let chain = if modifiers.is_empty() {
        DrmChain::None
    } else {
        DrmChain::List(
            vk::ImageDrmFormatModifierListCreateInfoEXT::default().drm_format_modifiers(&modifiers),
        )
    };
    let memory = Memory::External(external);
    // SAFETY: the plan and chain were checked against the driver's answer.
    unsafe {
        make_image(
            shared,
            desc,
            plan,
            tiling,
            chain,
            Source::Export(ht),
            memory,
            |_| Ok(()),
        )
    }
}

/// `Device::import_texture`.
///
/// # Safety
/// As `Device::import_texture`.
pub(super) unsafe fn import_texture(
    shared: &DeviceShared,
    desc: &TextureDescriptor,
    handle: ExternalHandle,
) -> Result<super::Texture, TextureError> {
    let ht = handle.handle_type();
    crate::validate::external::check_texture_handle(ht)?;
    // `desc.memory` is ignored: the shared rule, as on noop.
    let checked = crate::validate::external::imported_texture_desc(desc, ht);
    let desc = &checked;
    // SAFETY: live device. (On error the handle is dropped: its fd closed.)
    let plan = unsafe { texture_plan(shared, desc) }?;
    let memory = desc.memory;
    let drm = shared.external.drm_modifier.is_some();
    match handle {
        ExternalHandle::OpaqueFd(fd) => {
            let tiling = vk::ImageTiling::OPTIMAL;
            // SAFETY: live device; no modifier.
            unsafe { check_external_texture(shared, desc, &plan, ht, tiling, None, false) }?;
            let source = Source::Fd(ht, fd);
            // SAFETY: checked against the driver's answer; contract forwarded.
            unsafe {
                make_image(
                    shared,
                    desc,
                    &plan,
                    tiling,
                    DrmChain::None,
                    source,
                    memory,
                    |_| Ok(()),
                )
            }
        }
        ExternalHandle::DmaBuf {
            fd,
            drm_format_modifier,
            planes,
        } => {
            if planes.is_empty() {
                return Err(unsupported(ht, "a dma-buf texture needs at least one plane").into());
            }
            let layouts: ArrayVec<vk::SubresourceLayout, 4> = planes
                .iter()
                .map(|p| vk::SubresourceLayout {
                    offset: p.offset,
                    size: 0,
                    row_pitch: p.stride,
                    array_pitch: 0,
                    depth_pitch: 0,
                })
                .collect();
            if drm {
                let tiling = vk::ImageTiling::DRM_FORMAT_MODIFIER_EXT;
                // SAFETY: live device with the DRM extension.
                unsafe {
                    check_external_texture(
                        shared,
                        desc,
                        &plan,
                        ht,
                        tiling,
                        Some(drm_format_modifier),
                        false,
                    )
                }?;
                let chain = DrmChain::Explicit(
                    vk::ImageDrmFormatModifierExplicitCreateInfoEXT::default()
                        .drm_format_modifier(drm_format_modifier)
                        .plane_layouts(&layouts),
                );
                let source = Source::Fd(ht, fd);
                // SAFETY: checked against the driver's answer; contract forwarded.
                return unsafe {
                    make_image(shared, desc, &plan, tiling, chain, source, memory, |_| {
                        Ok(())
                    })
                };
            }
            // Linear tiling: the driver's layout must be the dma-buf's.
            if drm_format_modifier != DRM_FORMAT_MOD_LINEAR || planes.len() != 1 {
                return Err(unsupported(
                    ht,
                    "without VK_EXT_image_drm_format_modifier only one linear plane can be imported",
                )
                .into());
            }
            if planes[0].offset != 0 {
                return Err(
                    unsupported(ht, "a linear dma-buf plane must start at offset 0").into(),
                );
            }
            let tiling = vk::ImageTiling::LINEAR;
            // SAFETY: live device; no modifier.
            unsafe { check_external_texture(shared, desc, &plan, ht, tiling, None, false) }?;
            let stride = planes[0].stride;
            let verify = |image| {
                // SAFETY: a live linear colour image of this device.
                let layout = unsafe { plane_layout(shared, image, vk::ImageAspectFlags::COLOR) };
                if layout.stride == stride {
                    Ok(())
                } else {
                    Err(unsupported(
                        ht,
                        "the dma-buf's stride is not the driver's linear row pitch for this texture",
                    ))
                }
            };
            let source = Source::Fd(ht, fd);
            // SAFETY: checked against the driver's answer; contract forwarded.
            unsafe {
                make_image(
                    shared,
                    desc,
                    &plan,
                    tiling,
                    DrmChain::None,
                    source,
                    memory,
                    verify,
                )
            }
        }
        // Refused above (`check_texture_handle`); kept for the match.
        ExternalHandle::HostPointer { .. } => {
            Err(unsupported(ht, "textures cannot be imported from host allocations").into())
        }
    }
}

/// Creates the image with its external-memory info and `chain`, runs
/// `verify` on it, then gives it memory. On error the image is destroyed
/// and an fd closed.
///
/// # Safety
/// The plan, tiling and chain were checked against the driver's answer.
#[allow(clippy::too_many_arguments)]
unsafe fn make_image(
    shared: &DeviceShared,
    desc: &TextureDescriptor,
    plan: &TexturePlan,
    tiling: vk::ImageTiling,
    mut chain: DrmChain<'_>,
    source: Source,
    memory: Memory,
    verify: impl FnOnce(vk::Image) -> Result<(), ExternalError>,
) -> Result<super::Texture, TextureError> {
    let Memory::External(external) = memory else {
        return Err(TextureError::UnsupportedMemory(memory));
    };
    let mut external_info = vk::ExternalMemoryImageCreateInfo::default()
        .handle_types(vk_handle_type(external.handle_type));
    let mut list = vk::ImageFormatListCreateInfo::default();
    let mut info = plan.info(tiling, &mut list).push_next(&mut external_info);
    match &mut chain {
        DrmChain::None => {}
        DrmChain::List(l) => info = info.push_next(l),
        DrmChain::Explicit(e) => info = info.push_next(e),
    }
    // SAFETY: forwarded contract.
    let raw = unsafe { shared.raw.create_image(&info, None) }.map_err(map_err)?;
    // SAFETY: `raw` is live and unbound, created for this handle type.
    let bound =
        verify(raw).and_then(|()| unsafe { allocate_and_bind(shared, Target::Image(raw), source) });
    let block = match bound {
        Ok(block) => block,
        Err(e) => {
            // SAFETY: never bound, never used.
            unsafe { shared.raw.destroy_image(raw, None) };
            return Err(e.into());
        }
    };
    shared.counters.textures.add();
    shared.instance.note_external_image(raw, true);
    if let Some(label) = desc.label {
        // SAFETY: `raw` is live.
        unsafe { set_object_name(shared, raw, label) };
    }
    Ok(super::Texture {
        raw,
        block: super::memory::Block::External(block),
        format: desc.format,
        dimension: desc.dimension,
        size: desc.size,
        mip_level_count: desc.mip_level_count,
        sample_count: desc.sample_count,
        usage: desc.usage,
        view_formats: desc.view_formats.to_vec(),
    })
}

/// The layout of one memory plane (or, for `COLOR`, of mip 0 layer 0).
///
/// # Safety
/// `image` is a live linear or DRM-modifier image of this device, and
/// `aspect` one of its planes.
unsafe fn plane_layout(
    shared: &DeviceShared,
    image: vk::Image,
    aspect: vk::ImageAspectFlags,
) -> PlaneLayout {
    let sub = vk::ImageSubresource {
        aspect_mask: aspect,
        mip_level: 0,
        array_layer: 0,
    };
    // SAFETY: forwarded contract.
    let layout = unsafe { shared.raw.get_image_subresource_layout(image, sub) };
    PlaneLayout {
        offset: layout.offset,
        stride: layout.row_pitch,
    }
}

/// `Device::export_texture_memory`.
///
/// # Safety
/// The texture came from this device and is alive.
pub(super) unsafe fn export_texture(
    shared: &DeviceShared,
    texture: &super::Texture,
    ht: ExternalHandleType,
) -> Result<ExportedMemory, ExternalError> {
    let block = exported_block(&texture.block, ht)?;
    let mut planes = ArrayVec::new();
    let mut drm_format_modifier = None;
    if ht == ExternalHandleType::DmaBuf {
        let (modifier, plane_count) = match &shared.external.drm_modifier {
            Some(fns) => {
                let mut props = vk::ImageDrmFormatModifierPropertiesEXT::default();
                // SAFETY: the extension is enabled; the image was created
                // with DRM-modifier tiling (dma-buf export with the extension).
                unsafe {
                    (fns.get_image_drm_format_modifier_properties_ext)(
                        shared.raw.handle(),
                        texture.raw,
                        &mut props,
                    )
                }
                .result()
                .map_err(map_err)?;
                let modifier = props.drm_format_modifier;
                let format = conv::map_texture_format(texture.format);
                // SAFETY: the device has the extension.
                let count =
                    unsafe { modifier_list(&shared.instance.raw, shared.physical_device, format) }
                        .iter()
                        .find(|m| m.drm_format_modifier == modifier)
                        .map_or(1, |m| m.drm_format_modifier_plane_count);
                (modifier, count.clamp(1, 4))
            }
            None => (DRM_FORMAT_MOD_LINEAR, 1),
        };
        let aspects = [
            vk::ImageAspectFlags::MEMORY_PLANE_0_EXT,
            vk::ImageAspectFlags::MEMORY_PLANE_1_EXT,
            vk::ImageAspectFlags::MEMORY_PLANE_2_EXT,
            vk::ImageAspectFlags::MEMORY_PLANE_3_EXT,
        ];
        for &plane_aspect in aspects.iter().take(plane_count as usize) {
            let aspect = if shared.external.drm_modifier.is_some() {
                plane_aspect
            } else {
                vk::ImageAspectFlags::COLOR
            };
            // SAFETY: a live dma-buf image of this device; `aspect` is one of its planes.
            planes.push(unsafe { plane_layout(shared, texture.raw, aspect) });
        }
        drm_format_modifier = Some(modifier);
    }
    // SAFETY: forwarded contract.
    let fd = unsafe { export_fd(shared, block, ht) }?;
    Ok(ExportedMemory {
        drm_format_modifier,
        planes,
        ..exported_memory(shared, block, fd)
    })
}
