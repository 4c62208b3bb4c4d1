//! External memory (docs/design.md §7): capability queries, and buffers and
//! textures whose memory is exported to or imported from another API,
//! device or process.
//!
//! External memory never goes through VMA: each resource gets one dedicated
//! `vkAllocateMemory` (`VkMemoryDedicatedAllocateInfo`, except for host
//! pointers, where Vulkan forbids it), with `VkExportMemoryAllocateInfo` or
//! the import struct of its handle type chained, and the resource is
//! created with `VkExternalMemory{Buffer,Image}CreateInfo`. The memory type
//! is the first device-local one (else the first) of the resource's
//! `memoryTypeBits` ∩ what the handle allows (`vkGetMemoryFdPropertiesKHR`
//! for dma-bufs, `vkGetMemoryHostPointerPropertiesEXT` for host pointers;
//! opaque fds must not be asked, so there both sides' deterministic choice
//! from the same requirements picks the same type, as Vulkan requires).
//! It lives in [`ExternalBlock`] (`memory.rs`'s `Block::External`) and is
//! freed once, when the resource is destroyed.
//!
//! ## Sizes
//! Opaque-fd imports must use the exporter's allocation size: the importer
//! allocates its own requirement size for the same description (the
//! exporter's choice too). Where the kernel reports an fd's size (`fstat`
//! of a memfd, `lseek` to the end of a dma-buf), and for host allocations
//! (whose size the caller gives), memory smaller than the buffer's
//! `desc.size` is [`ExternalError::TooSmall`] with that size, as on every
//! backend (`validate/external.rs`); memory that holds the buffer but not
//! the driver's memory requirement for it is
//! [`ExternalError::BelowDriverRequirement`] (an image's only size is the
//! driver's: `TooSmall`). Both before the driver sees the handle; where it does
//! not (NVIDIA's opaque fds), a mismatch is invalid usage the hal cannot
//! see, and what the driver answers is mapped (NVIDIA: out of device
//! memory). An fd that can never be memory (a pipe, a socket, a directory)
//! is [`ExternalError::InvalidHandle`] before the driver sees it; any other
//! fd that is not a handle of the type is, again, the driver's to judge
//! (lavapipe: `InvalidHandle`).
//!
//! ## Fd ownership
//! An imported fd is an `OwnedFd` until the very driver call that imports
//! it ([`ImportFd`]); every earlier error path simply drops (closes) it. On
//! success the driver owns it (Vulkan: a successful import transfers
//! ownership). On failure the specification leaves it with the
//! application, so it must be closed by us, but some drivers close it
//! themselves (lavapipe's `lvp_AllocateMemory` does on every failed fd
//! import), and closing it again could close an unrelated fd that reused
//! the number. So a duplicate is kept across the call: after a failure the
//! fd is closed only if it is still open *and* names the same file (device
//! and inode) as the duplicate, which keeps that file alive meanwhile, so
//! its inode cannot be recycled. Either way the fd is closed exactly once.
//!
//! Textures (dma-buf layouts, DRM format modifiers) are in
//! `external_texture.rs`.

use std::ffi::CStr;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt as _;
use std::sync::Arc;

use arrayvec::ArrayVec;
use ash::vk;

use super::conv::map_err;
use super::instance_shared::InstanceShared;
use super::memory::ExternalBlock;
use super::DeviceShared;
use crate::{
    BufferDescriptor, BufferError, ExportedMemory, ExternalCapabilities, ExternalError,
    ExternalHandle, ExternalHandleType, ExternalHandleTypes, ExternalMemory, ExternalOrigin,
    HalFeatures, Memory, MemoryProperties,
};

/// Function tables of the external-memory and -semaphore extensions a device
/// enabled (`None` where it did not), and the limits they come with.
pub(crate) struct ExternalFns {
    pub(super) memory_fd: Option<ash::khr::external_memory_fd::DeviceFn>,
    pub(super) memory_host: Option<ash::ext::external_memory_host::DeviceFn>,
    pub(super) semaphore_fd: Option<ash::khr::external_semaphore_fd::DeviceFn>,
    pub(super) drm_modifier: Option<ash::ext::image_drm_format_modifier::DeviceFn>,
    /// `minImportedHostPointerAlignment` (1 without the host extension).
    pub(super) host_pointer_alignment: u64,
    /// The property flags of each memory type (constant for the device).
    memory_types: ArrayVec<vk::MemoryPropertyFlags, { vk::MAX_MEMORY_TYPES }>,
    /// Answers of `vkGetPhysicalDeviceExternalBufferProperties` so far, by
    /// usage and handle type (constant for the device; a few at most).
    buffer_caps: parking_lot::Mutex<ArrayVec<BufferCapsEntry, 8>>,
}

/// One cached external buffer capability answer.
type BufferCapsEntry = (
    vk::BufferUsageFlags,
    ExternalHandleType,
    ExternalCapabilities,
);

impl std::fmt::Debug for ExternalFns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalFns")
            .field("memory_fd", &self.memory_fd.is_some())
            .field("memory_host", &self.memory_host.is_some())
            .field("semaphore_fd", &self.semaphore_fd.is_some())
            .field("drm_modifier", &self.drm_modifier.is_some())
            .field("host_pointer_alignment", &self.host_pointer_alignment)
            .field("memory_types", &self.memory_types)
            .finish()
    }
}

impl ExternalFns {
    /// Loads the tables of the extensions `hal` says are enabled (with fault
    /// injection on, through its hooks).
    ///
    /// # Safety
    /// `device` is a live device of `pd` and `instance`, opened with the
    /// extensions `hal` names.
    pub(crate) unsafe fn load(
        instance: &Arc<InstanceShared>,
        device: &ash::Device,
        pd: vk::PhysicalDevice,
        hal: HalFeatures,
    ) -> Self {
        let handle = device.handle();
        let load = |name: &CStr| -> *const std::ffi::c_void {
            #[cfg(feature = "fault-injection")]
            {
                let _ = handle;
                // SAFETY: forwarded contract: the extension is enabled on `device`.
                unsafe { super::fault::device_proc_addr(&instance.entry, &instance.raw, name) }
            }
            #[cfg(not(feature = "fault-injection"))]
            {
                // SAFETY: forwarded contract.
                unsafe { instance.raw.get_device_proc_addr(handle, name.as_ptr()) }
                    .map_or(std::ptr::null(), |f| f as *const std::ffi::c_void)
            }
        };
        let has = |f| hal.contains(f);
        let host = has(HalFeatures::EXTERNAL_MEMORY_HOST);
        let host_pointer_alignment = if host {
            // SAFETY: the extension is supported (it is enabled on the device).
            unsafe { host_pointer_alignment(&instance.raw, pd) }
        } else {
            1
        };
        Self {
            memory_fd: has(HalFeatures::EXTERNAL_MEMORY_FD)
                .then(|| ash::khr::external_memory_fd::DeviceFn::load(load)),
            memory_host: host.then(|| ash::ext::external_memory_host::DeviceFn::load(load)),
            semaphore_fd: has(HalFeatures::EXTERNAL_SEMAPHORE_FD)
                .then(|| ash::khr::external_semaphore_fd::DeviceFn::load(load)),
            drm_modifier: has(HalFeatures::DRM_FORMAT_MODIFIER)
                .then(|| ash::ext::image_drm_format_modifier::DeviceFn::load(load)),
            host_pointer_alignment,
            // SAFETY: `pd` belongs to the instance.
            memory_types: unsafe { instance.raw.get_physical_device_memory_properties(pd) }
                .memory_types_as_slice()
                .iter()
                .map(|t| t.property_flags)
                .collect(),
            buffer_caps: Default::default(),
        }
    }
}

/// `minImportedHostPointerAlignment` (at least 1).
///
/// # Safety
/// `pd` belongs to `instance` and supports `VK_EXT_external_memory_host`.
unsafe fn host_pointer_alignment(instance: &ash::Instance, pd: vk::PhysicalDevice) -> u64 {
    let mut host_props = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut host_props);
    // SAFETY: forwarded contract.
    unsafe { instance.get_physical_device_properties2(pd, &mut props) };
    host_props.min_imported_host_pointer_alignment.max(1)
}

/// The Vulkan handle type of a hal handle type.
pub(super) fn vk_handle_type(ht: ExternalHandleType) -> vk::ExternalMemoryHandleTypeFlags {
    match ht {
        ExternalHandleType::OpaqueFd => vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD,
        ExternalHandleType::DmaBuf => vk::ExternalMemoryHandleTypeFlags::DMA_BUF_EXT,
        ExternalHandleType::HostAllocation => {
            vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT
        }
    }
}

/// The hal feature a handle type needs.
pub(super) fn required_feature(ht: ExternalHandleType) -> HalFeatures {
    match ht {
        ExternalHandleType::OpaqueFd => HalFeatures::EXTERNAL_MEMORY_FD,
        ExternalHandleType::DmaBuf => HalFeatures::EXTERNAL_MEMORY_DMA_BUF,
        ExternalHandleType::HostAllocation => HalFeatures::EXTERNAL_MEMORY_HOST,
    }
}

/// `Unsupported` unless the device was opened with the handle type's feature.
pub(super) fn check_enabled(
    shared: &DeviceShared,
    ht: ExternalHandleType,
) -> Result<(), ExternalError> {
    if shared.hal_features.contains(required_feature(ht)) {
        Ok(())
    } else {
        Err(ExternalError::Unsupported {
            handle: ht.name(),
            reason: "the device was not opened with this handle type's hal feature",
        })
    }
}

/// The hal's view of Vulkan's external memory properties.
pub(super) fn map_capabilities(props: &vk::ExternalMemoryProperties) -> ExternalCapabilities {
    use vk::ExternalMemoryFeatureFlags as F;
    let f = props.external_memory_features;
    let mut compatible = ExternalHandleTypes::empty();
    for ht in [
        ExternalHandleType::OpaqueFd,
        ExternalHandleType::DmaBuf,
        ExternalHandleType::HostAllocation,
    ] {
        if props.compatible_handle_types.contains(vk_handle_type(ht)) {
            compatible |= ht.flag();
        }
    }
    ExternalCapabilities {
        exportable: f.contains(F::EXPORTABLE),
        importable: f.contains(F::IMPORTABLE),
        dedicated_only: f.contains(F::DEDICATED_ONLY),
        compatible_handle_types: compatible,
        host_pointer_alignment: 0,
    }
}

/// `Adapter::external_buffer_capabilities`.
pub(super) fn buffer_capabilities(
    adapter: &super::Adapter,
    desc: &BufferDescriptor,
    ht: ExternalHandleType,
) -> ExternalCapabilities {
    if !adapter
        .capabilities
        .hal_features
        .contains(required_feature(ht))
    {
        return ExternalCapabilities::default();
    }
    let accel = adapter
        .capabilities
        .hal_features
        .contains(HalFeatures::ACCELERATION_STRUCTURE);
    let mut usage = super::conv::map_buffer_usage(desc.usage, accel);
    if usage.is_empty() {
        usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    }
    let info = vk::PhysicalDeviceExternalBufferInfo::default()
        .usage(usage)
        .handle_type(vk_handle_type(ht));
    let mut props = vk::ExternalBufferProperties::default();
    // SAFETY: the physical device belongs to the instance; core 1.1 query.
    unsafe {
        adapter
            .instance
            .raw
            .get_physical_device_external_buffer_properties(adapter.raw, &info, &mut props)
    };
    let mut caps = map_capabilities(&props.external_memory_properties);
    if ht == ExternalHandleType::HostAllocation && caps.importable {
        // SAFETY: the adapter has EXTERNAL_MEMORY_HOST (checked above), so the extension.
        caps.host_pointer_alignment =
            unsafe { host_pointer_alignment(&adapter.instance.raw, adapter.raw) };
    }
    caps
}

/// Where the memory of [`allocate_and_bind`] comes from.
pub(super) enum Source {
    /// A new allocation, exportable as this type.
    Export(ExternalHandleType),
    /// An fd to import (opaque fd or dma-buf).
    Fd(ExternalHandleType, OwnedFd),
    /// Host memory to import.
    Host { ptr: *mut u8, size: u64 },
}

/// The resource [`allocate_and_bind`] binds memory to.
#[derive(Clone, Copy)]
pub(super) enum Target {
    Buffer(vk::Buffer),
    Image(vk::Image),
}

/// Looks at an fd before a driver sees it: one that can never be memory (a
/// pipe, a socket, a directory) is `InvalidHandle` (and closed); otherwise
/// the fd comes back with its size as the kernel reports it, `None` where
/// it reports none: `fstat` for regular files (memfds), else `lseek` to
/// the end (dma-bufs), put back to the start.
fn inspect_fd(fd: OwnedFd) -> Result<(OwnedFd, Option<u64>), ExternalError> {
    use std::os::unix::fs::FileTypeExt as _;
    let mut file = File::from(fd);
    let meta = file.metadata().map_err(|_| ExternalError::InvalidHandle)?;
    let ty = meta.file_type();
    if ty.is_fifo() || ty.is_socket() || ty.is_dir() {
        return Err(ExternalError::InvalidHandle);
    }
    let size = if ty.is_file() {
        Some(meta.len())
    } else {
        let size = file.seek(SeekFrom::End(0)).ok();
        if size.is_some() {
            // Put the offset back where importers expect it; a failure is harmless.
            let _ = file.seek(SeekFrom::Start(0));
        }
        size
    };
    Ok((OwnedFd::from(file), size.filter(|&s| s > 0)))
}

/// The first device-local type among `bits`, else the first.
fn pick_memory_type(shared: &DeviceShared, bits: u32) -> Option<u32> {
    let types = &shared.external.memory_types;
    let allowed = |i: &usize| bits & (1 << i) != 0;
    let device_local = (0..types.len())
        .filter(allowed)
        .find(|&i| types[i].contains(vk::MemoryPropertyFlags::DEVICE_LOCAL));
    device_local
        .or_else(|| (0..types.len()).find(allowed))
        .map(|i| i as u32)
}

/// Maps an import's driver error: a rejected handle is typed.
fn map_import_err(e: vk::Result) -> ExternalError {
    match e {
        vk::Result::ERROR_INVALID_EXTERNAL_HANDLE => ExternalError::InvalidHandle,
        other => ExternalError::Device(map_err(other)),
    }
}

/// Checks imported memory of `size` bytes against the driver's memory
/// requirement for `target`. A buffer's own size was checked first (the
/// shared check, the same on every backend): asking more than that is the
/// driver's, [`ExternalError::BelowDriverRequirement`]. An image has no
/// size but the driver's: `TooSmall`.
fn check_requirement(target: Target, size: u64, required: u64) -> Result<(), ExternalError> {
    match target {
        Target::Buffer(_) if size < required => {
            Err(ExternalError::BelowDriverRequirement { size, required })
        }
        Target::Buffer(_) => Ok(()),
        Target::Image(_) => crate::validate::external::check_import_size(size, required),
    }
}

/// Allocates the dedicated external memory of `target` from `source` and
/// binds it. On error nothing is left allocated and an imported fd is
/// closed; the caller still owns (and destroys) `target`.
///
/// # Safety
/// `target` is a live, unbound resource of this device, created with
/// `VkExternalMemory*CreateInfo` naming the source's handle type. A host
/// pointer is valid for `size` bytes (the caller's import contract).
pub(super) unsafe fn allocate_and_bind(
    shared: &DeviceShared,
    target: Target,
    source: Source,
) -> Result<ExternalBlock, ExternalError> {
    let device = &shared.raw;
    // SAFETY: live resource of this device.
    let req = unsafe {
        match target {
            Target::Buffer(b) => device.get_buffer_memory_requirements(b),
            Target::Image(i) => device.get_image_memory_requirements(i),
        }
    };
    let ht = match &source {
        Source::Export(ht) | Source::Fd(ht, _) => *ht,
        Source::Host { .. } => ExternalHandleType::HostAllocation,
    };
    let vk_ht = vk_handle_type(ht);
    let mut bits = req.memory_type_bits;
    let mut size = req.size;
    // Checks that need the handle; an error here drops (closes) an fd.
    let source = match source {
        Source::Export(ht) => Source::Export(ht),
        Source::Fd(ht, fd) => {
            let (fd, fd_len) = inspect_fd(fd)?;
            if let Some(len) = fd_len {
                check_requirement(target, len, req.size)?;
            }
            // Opaque fds must not be asked (VUID-vkGetMemoryFdPropertiesKHR-handleType-00674).
            if ht == ExternalHandleType::DmaBuf {
                let fns = shared.external.memory_fd.as_ref().ok_or(unsupported(ht))?;
                let mut props = vk::MemoryFdPropertiesKHR::default();
                // SAFETY: the extension is enabled; the fd is live and ours
                // (this call does not take it).
                unsafe {
                    (fns.get_memory_fd_properties_khr)(
                        device.handle(),
                        vk_ht,
                        fd.as_raw_fd(),
                        &mut props,
                    )
                }
                .result()
                .map_err(map_import_err)?;
                bits &= props.memory_type_bits;
            }
            Source::Fd(ht, fd)
        }
        Source::Host {
            ptr,
            size: host_size,
        } => {
            // Alignment and the buffer's own size were checked by
            // `import_buffer` (the shared check); the driver may ask more.
            check_requirement(target, host_size, req.size)?;
            size = host_size;
            let fns = shared
                .external
                .memory_host
                .as_ref()
                .ok_or(unsupported(ht))?;
            let mut props = vk::MemoryHostPointerPropertiesEXT::default();
            // SAFETY: the extension is enabled; the pointer is valid (contract).
            unsafe {
                (fns.get_memory_host_pointer_properties_ext)(
                    device.handle(),
                    vk_ht,
                    ptr.cast_const().cast(),
                    &mut props,
                )
            }
            .result()
            .map_err(map_import_err)?;
            bits &= props.memory_type_bits;
            Source::Host {
                ptr,
                size: host_size,
            }
        }
    };
    let type_index = pick_memory_type(shared, bits).ok_or(ExternalError::NoSuitableMemory)?;

    let mut dedicated = vk::MemoryDedicatedAllocateInfo::default();
    match target {
        Target::Buffer(b) => dedicated = dedicated.buffer(b),
        Target::Image(i) => dedicated = dedicated.image(i),
    }
    let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(vk_ht);
    let mut host_import = vk::ImportMemoryHostPointerInfoEXT::default().handle_type(vk_ht);
    let mut info = vk::MemoryAllocateInfo::default()
        .allocation_size(size)
        .memory_type_index(type_index);
    let origin;
    let memory = match source {
        Source::Export(_) => {
            origin = ExternalOrigin::Exported;
            info = info.push_next(&mut dedicated).push_next(&mut export);
            // SAFETY: valid chain: dedicated to the unbound target, exportable.
            unsafe { device.allocate_memory(&info, None) }.map_err(|e| map_err(e).into())
        }
        Source::Host { ptr, .. } => {
            origin = ExternalOrigin::Imported;
            // No dedicated info: Vulkan forbids it with host pointer imports.
            host_import = host_import.host_pointer(ptr.cast());
            info = info.push_next(&mut host_import);
            // SAFETY: pointer and size aligned and valid (checked / contract).
            unsafe { device.allocate_memory(&info, None) }.map_err(map_import_err)
        }
        Source::Fd(_, fd) => {
            origin = ExternalOrigin::Imported;
            // From here the fd is a raw number: nothing fallible happens
            // between this and the driver call that takes it.
            let fd = ImportFd::new(fd)?;
            let mut fd_import = vk::ImportMemoryFdInfoKHR::default()
                .handle_type(vk_ht)
                .fd(fd.raw());
            info = info.push_next(&mut dedicated).push_next(&mut fd_import);
            // SAFETY: valid chain: dedicated to the unbound target, importing
            // a live fd of this handle type.
            match unsafe { device.allocate_memory(&info, None) } {
                // Success: the driver owns the fd now (and closes it when
                // the memory is freed).
                Ok(memory) => {
                    fd.imported();
                    Ok(memory)
                }
                Err(e) => {
                    fd.failed();
                    Err(map_import_err(e))
                }
            }
        }
    }?;
    // SAFETY: `memory` was allocated for `target` (dedicated), offset 0.
    let bound = unsafe {
        match target {
            Target::Buffer(b) => device.bind_buffer_memory(b, memory, 0),
            Target::Image(i) => device.bind_image_memory(i, memory, 0),
        }
    };
    if let Err(e) = bound {
        // SAFETY: just allocated, bound to nothing, used by nothing.
        unsafe { device.free_memory(memory, None) };
        return Err(map_err(e).into());
    }
    shared.counters.memory_allocations.add();
    Ok(ExternalBlock {
        memory,
        size,
        external: ExternalMemory {
            handle_type: ht,
            origin,
        },
        type_index,
    })
}

/// `Unsupported` for a handle type whose extension is not enabled.
pub(super) fn unsupported(ht: ExternalHandleType) -> ExternalError {
    ExternalError::Unsupported {
        handle: ht.name(),
        reason: "the device was not opened with this handle type's hal feature",
    }
}

/// Vulkan's external-memory answer for buffers of `usage` on this device,
/// asked once per usage and handle type.
fn query_buffer_caps(
    shared: &DeviceShared,
    usage: vk::BufferUsageFlags,
    ht: ExternalHandleType,
) -> ExternalCapabilities {
    let mut cache = shared.external.buffer_caps.lock();
    if let Some(&(_, _, caps)) = cache.iter().find(|(u, h, _)| *u == usage && *h == ht) {
        return caps;
    }
    let caps = ask_buffer_caps(&shared.instance.raw, shared.physical_device, usage, ht);
    // A full cache just asks again next time.
    let _ = cache.try_push((usage, ht, caps));
    caps
}

/// `vkGetPhysicalDeviceExternalBufferProperties` for buffers of `usage`.
fn ask_buffer_caps(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    usage: vk::BufferUsageFlags,
    ht: ExternalHandleType,
) -> ExternalCapabilities {
    let info = vk::PhysicalDeviceExternalBufferInfo::default()
        .usage(usage)
        .handle_type(vk_handle_type(ht));
    let mut props = vk::ExternalBufferProperties::default();
    // SAFETY: the physical device belongs to the instance; core 1.1 query.
    unsafe { instance.get_physical_device_external_buffer_properties(pd, &info, &mut props) };
    map_capabilities(&props.external_memory_properties)
}

/// `create_buffer` with `Memory::External(ExternalMemory::export(..))`.
///
/// # Safety
/// `info` is a valid buffer description (from `device::buffer_usage`).
pub(super) unsafe fn create_buffer(
    shared: &DeviceShared,
    desc: &BufferDescriptor,
    info: vk::BufferCreateInfo<'_>,
    external: ExternalMemory,
) -> Result<super::Buffer, BufferError> {
    let ht = external.handle_type;
    if external.origin != ExternalOrigin::Exported {
        return Err(ExternalError::Unsupported {
            handle: ht.name(),
            reason: "imports go through import_buffer, which takes the handle",
        }
        .into());
    }
    check_enabled(shared, ht)?;
    let caps = query_buffer_caps(shared, info.usage, ht);
    if !caps.exportable {
        return Err(ExternalError::Unsupported {
            handle: ht.name(),
            reason: "buffers of this usage cannot be exported as this handle type",
        }
        .into());
    }
    // SAFETY: forwarded contract.
    unsafe {
        make_buffer(
            shared,
            desc,
            info,
            Source::Export(ht),
            Memory::External(external),
        )
    }
}

/// `Device::import_buffer`.
///
/// # Safety
/// As `Device::import_buffer`.
pub(super) unsafe fn import_buffer(
    shared: &DeviceShared,
    desc: &BufferDescriptor,
    handle: ExternalHandle,
) -> Result<super::Buffer, BufferError> {
    // The description is checked as for any buffer, but never as mappable.
    let checked = BufferDescriptor {
        memory: Memory::Device,
        ..desc.clone()
    };
    let usage = super::device::buffer_usage(shared, &checked)?;
    let ht = handle.handle_type();
    check_enabled(shared, ht)?;
    let caps = query_buffer_caps(shared, usage, ht);
    if !caps.importable {
        return Err(ExternalError::Unsupported {
            handle: ht.name(),
            reason: "buffers of this usage cannot be imported from this handle type",
        }
        .into());
    }
    let source = match handle {
        ExternalHandle::OpaqueFd(fd) | ExternalHandle::DmaBuf { fd, .. } => {
            // The buffer's own size first, as on every backend.
            let (fd, fd_len) = inspect_fd(fd)?;
            if let Some(len) = fd_len {
                crate::validate::external::check_import_size(len, desc.size)?;
            }
            Source::Fd(ht, fd)
        }
        ExternalHandle::HostPointer { ptr, size } => {
            // The buffer's own size first, as on every backend.
            crate::validate::external::check_host_pointer(
                ptr.as_ptr() as u64,
                size,
                shared.external.host_pointer_alignment,
                desc.size,
            )?;
            Source::Host {
                ptr: ptr.as_ptr(),
                size,
            }
        }
    };
    let info = vk::BufferCreateInfo::default()
        .size(desc.size)
        .usage(usage)
        .sharing_mode(vk::SharingMode::EXCLUSIVE);
    let memory = Memory::External(ExternalMemory::imported(ht));
    // SAFETY: `info` is valid (checked above); the handle's contract is forwarded.
    unsafe { make_buffer(shared, desc, info, source, memory) }
}

/// Creates the buffer with its external-memory info, then its memory.
///
/// # Safety
/// `info` is valid; a host pointer source is valid (the import contract).
unsafe fn make_buffer(
    shared: &DeviceShared,
    desc: &BufferDescriptor,
    info: vk::BufferCreateInfo<'_>,
    source: Source,
    memory: Memory,
) -> Result<super::Buffer, BufferError> {
    let ht = match &source {
        Source::Export(ht) | Source::Fd(ht, _) => *ht,
        Source::Host { .. } => ExternalHandleType::HostAllocation,
    };
    let mut external_info =
        vk::ExternalMemoryBufferCreateInfo::default().handle_types(vk_handle_type(ht));
    let info = info.push_next(&mut external_info);
    // SAFETY: valid description; the handle type was checked as supported.
    // (On error `source` is dropped: an fd is closed.)
    let raw = unsafe { shared.raw.create_buffer(&info, None) }.map_err(map_err)?;
    // SAFETY: `raw` is live and unbound, created for this handle type.
    let block = match unsafe { allocate_and_bind(shared, Target::Buffer(raw), source) } {
        Ok(block) => block,
        Err(e) => {
            // SAFETY: never bound, never used.
            unsafe { shared.raw.destroy_buffer(raw, None) };
            return Err(e.into());
        }
    };
    shared.counters.buffers.add();
    if let Some(label) = desc.label {
        // SAFETY: `raw` is live.
        unsafe { super::object_name::set_object_name(shared, raw, label) };
    }
    Ok(super::Buffer {
        raw,
        block: super::memory::Block::External(block),
        size: desc.size,
        usage: desc.usage,
        memory,
        mapped: None,
        address: Default::default(),
    })
}

/// The external block of a resource, if it was created for export as `ht`.
pub(super) fn exported_block(
    block: &super::memory::Block,
    ht: ExternalHandleType,
) -> Result<&ExternalBlock, ExternalError> {
    match block {
        super::memory::Block::External(b) if b.external == ExternalMemory::export(ht) => Ok(b),
        _ => Err(ExternalError::NotExportable(ht.name())),
    }
}

/// A new fd for exported memory (`vkGetMemoryFdKHR`).
///
/// # Safety
/// `block` is a live allocation of this device, exportable as `ht`.
pub(super) unsafe fn export_fd(
    shared: &DeviceShared,
    block: &ExternalBlock,
    ht: ExternalHandleType,
) -> Result<OwnedFd, ExternalError> {
    let fns = shared.external.memory_fd.as_ref().ok_or(unsupported(ht))?;
    let info = vk::MemoryGetFdInfoKHR::default()
        .memory(block.memory)
        .handle_type(vk_handle_type(ht));
    let mut fd = -1;
    // SAFETY: the extension is enabled; the memory was allocated exportable as `ht`.
    unsafe { (fns.get_memory_fd_khr)(shared.raw.handle(), &info, &mut fd) }
        .result()
        .map_err(map_err)?;
    if fd < 0 {
        return Err(crate::DeviceError::Unexpected.into());
    }
    // SAFETY: a successful vkGetMemoryFdKHR hands the caller a new fd.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // Drivers differ on FD_CLOEXEC (lavapipe's fds lack it): ours have it.
    Ok(crate::external::close_on_exec(fd)?)
}

/// What [`ExportedMemory`] reports of `block` besides the fd and layout.
pub(super) fn exported_memory(
    shared: &DeviceShared,
    block: &ExternalBlock,
    fd: OwnedFd,
) -> ExportedMemory {
    let flags = shared
        .external
        .memory_types
        .get(block.type_index as usize)
        .copied()
        .unwrap_or_default();
    ExportedMemory {
        fd,
        size: block.size,
        // Every external allocation is dedicated (`allocate_and_bind`).
        dedicated: true,
        memory_properties: map_memory_properties(flags),
        memory_type_index: Some(block.type_index),
        drm_format_modifier: None,
        planes: ArrayVec::new(),
    }
}

/// The hal's view of Vulkan memory property flags.
pub(super) fn map_memory_properties(flags: vk::MemoryPropertyFlags) -> MemoryProperties {
    use vk::MemoryPropertyFlags as F;
    [
        (F::DEVICE_LOCAL, MemoryProperties::DEVICE_LOCAL),
        (F::HOST_VISIBLE, MemoryProperties::HOST_VISIBLE),
        (F::HOST_COHERENT, MemoryProperties::HOST_COHERENT),
        (F::HOST_CACHED, MemoryProperties::HOST_CACHED),
        (F::LAZILY_ALLOCATED, MemoryProperties::LAZILY_ALLOCATED),
        (F::PROTECTED, MemoryProperties::PROTECTED),
    ]
    .into_iter()
    .filter(|(vk_flag, _)| flags.contains(*vk_flag))
    .fold(MemoryProperties::empty(), |acc, (_, hal)| acc | hal)
}

/// `Device::export_buffer_memory`.
///
/// # Safety
/// The buffer came from this device and is alive.
pub(super) unsafe fn export_buffer(
    shared: &DeviceShared,
    buffer: &super::Buffer,
    ht: ExternalHandleType,
) -> Result<ExportedMemory, ExternalError> {
    let block = exported_block(&buffer.block, ht)?;
    // SAFETY: forwarded contract.
    let fd = unsafe { export_fd(shared, block, ht) }?;
    Ok(exported_memory(shared, block, fd))
}

/// An fd being handed to a driver import call, closed exactly once
/// whatever the driver does (see the module docs, "Fd ownership").
pub(super) struct ImportFd {
    /// The fd the driver gets.
    raw: RawFd,
    /// A duplicate, ours: keeps the file alive and names it.
    keeper: OwnedFd,
}

impl ImportFd {
    /// Duplicates `fd` and gives up ownership of the original. On error
    /// (no fd left for the duplicate) `fd` is closed.
    pub(super) fn new(fd: OwnedFd) -> Result<Self, ExternalError> {
        let keeper = fd
            .try_clone()
            .map_err(|_| ExternalError::Device(crate::DeviceError::OutOfMemory))?;
        Ok(Self {
            raw: fd.into_raw_fd(),
            keeper,
        })
    }

    /// The number to pass to the driver.
    pub(super) fn raw(&self) -> RawFd {
        self.raw
    }

    /// The import succeeded: the driver owns the fd; the duplicate goes.
    pub(super) fn imported(self) {
        drop(self.keeper);
    }

    /// The import failed: closes the fd unless the driver already did.
    pub(super) fn failed(self) {
        let ours = file_identity(self.raw)
            .is_some_and(|id| Some(id) == file_identity(self.keeper.as_raw_fd()));
        if ours {
            // SAFETY: the fd is open and names our file (kept alive by
            // `keeper`, so no other file can have its identity): it is the
            // one we gave up, which the driver neither took nor closed.
            drop(unsafe { OwnedFd::from_raw_fd(self.raw) });
        }
        drop(self.keeper);
    }
}

/// The (device, inode) of the file an fd names; `None` if it is not open.
fn file_identity(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: the `File` is never dropped (so never closes `fd`); `fstat` on
    // a closed fd fails with EBADF, which is answered `None`.
    let file = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
    file.metadata().ok().map(|m| (m.dev(), m.ino()))
}
