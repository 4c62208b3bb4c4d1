//! External memory and semaphores on noop, backed by shared files
//! (`shm.rs`): real file descriptors that another noop device, in this
//! process or another one, imports and sees the same bytes through.
//!
//! What the noop adapter supports, and reports as hal features:
//!
//! | | export | import | hal feature |
//! |---|---|---|---|
//! | opaque fd (buffers, textures) | yes | yes | `EXTERNAL_MEMORY_FD` |
//! | host allocation (buffers) | no | yes | `EXTERNAL_MEMORY_HOST` |
//! | opaque-fd semaphores (binary, timeline) | yes | yes | `EXTERNAL_SEMAPHORE_FD` |
//! | dma-buf, sync fd, DRM format modifiers | no | no | — |
//!
//! A noop shared file is no dma-buf (no kernel driver stands behind it)
//! and no sync file, so those are refused with
//! [`ExternalError::Unsupported`] rather than imitated.
//!
//! ## Coherence of external memory
//! Commands run on a host copy of the bytes (a resource's [`HostBytes`]);
//! the shared file is the memory other devices see. A submission reads the
//! file of every external resource its commands touch before its first
//! command, and writes back those its commands wrote after its last one,
//! before its fence or semaphores are signalled. So whoever waits for that
//! fence or semaphore — another device, another process — and then
//! submits, reads the bytes written. That is the rule GPUs impose anyway
//! (external memory is only coherent across a signal and a wait), and it
//! is why noop external resources cannot be mapped (no resource with
//! [`Memory::External`] can, on any backend).
//!
//! ## Semaphores
//! A semaphore is a shared file holding a `u64`: 0 or 1 for binary ones,
//! the counter for timeline ones. Signals write it at the end of a
//! submission. Noop executes work at submit, on the submitting thread, so
//! a wait blocks `submit_external` itself, polling the value, until it is
//! reached or [`WAIT_TIMEOUT`] passes; then the submission is dropped and
//! [`DeviceError::Lost`] returned (a GPU would have hung). Submit the
//! signal first — for binary semaphores the contract requires it anyway —
//! or from another thread or process.
//!
//! From the host, a timeline semaphore's file is read (`semaphore_value`),
//! written after the checks every backend shares (`signal_semaphore`), or
//! polled until the value or the timeout (`wait_semaphore`).
//!
//! ## What an export reports
//! Dedicated (one file per resource), memory properties
//! [`MEMORY_PROPERTIES`] (the file is RAM the CPU reads coherently), no
//! memory type index. Exported fds are close-on-exec (`std` makes them
//! so), as every backend's are.

use std::os::fd::OwnedFd;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use arrayvec::ArrayVec;

use super::memory::HostBytes;
use super::shm::{Kind, SharedFile};
use super::DeviceShared;
use crate::external::{check_signal_value, check_timeline, host_op};
use crate::{
    DeviceError, ExportedMemory, ExternalCapabilities, ExternalError, ExternalHandle,
    ExternalHandleType, ExternalHandleTypes, ExternalMemory, ExternalOrigin,
    ExternalSemaphoreDescriptor, ExternalSemaphoreType, FenceValue, HalFeatures, Memory,
    MemoryProperties, SemaphoreKind,
};

/// The alignment host pointers and sizes must have to be imported: a page,
/// as Vulkan drivers typically ask (`minImportedHostPointerAlignment`).
pub(crate) const HOST_POINTER_ALIGNMENT: u64 = 4096;

/// What noop reports of exported memory: a shared file in RAM, which the
/// CPU device treats as its own memory and the host reads and writes
/// coherently (as a CPU Vulkan driver's one memory type is).
const MEMORY_PROPERTIES: MemoryProperties = MemoryProperties::DEVICE_LOCAL
    .union(MemoryProperties::HOST_VISIBLE)
    .union(MemoryProperties::HOST_COHERENT)
    .union(MemoryProperties::HOST_CACHED);

/// How long a semaphore wait in `submit_external` polls before giving up.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(10);

/// An external semaphore: a shared file holding its value.
#[derive(Debug)]
pub struct ExternalSemaphore {
    file: SharedFile,
}

impl ExternalSemaphore {
    /// Binary or timeline.
    pub fn kind(&self) -> SemaphoreKind {
        match self.file.kind() {
            Kind::TimelineSemaphore => SemaphoreKind::Timeline { initial_value: 0 },
            _ => SemaphoreKind::Binary,
        }
    }
}

fn unsupported(handle: &'static str, reason: &'static str) -> ExternalError {
    ExternalError::Unsupported { handle, reason }
}

/// The hal feature a memory handle type needs on noop, if it has one.
fn memory_feature(ht: ExternalHandleType) -> Option<HalFeatures> {
    match ht {
        ExternalHandleType::OpaqueFd => Some(HalFeatures::EXTERNAL_MEMORY_FD),
        ExternalHandleType::HostAllocation => Some(HalFeatures::EXTERNAL_MEMORY_HOST),
        _ => None,
    }
}

/// `Unsupported` unless noop has the handle type and the device enabled it.
fn check_enabled(shared: &DeviceShared, ht: ExternalHandleType) -> Result<(), ExternalError> {
    let feature = memory_feature(ht).ok_or(unsupported(
        ht.name(),
        "the noop backend shares memory as opaque fds and host allocations only",
    ))?;
    if !shared.hal_features.contains(feature) {
        return Err(unsupported(
            ht.name(),
            "the device was not opened with this handle type's hal feature",
        ));
    }
    Ok(())
}

/// `Adapter::external_buffer_capabilities`: any usage.
pub(crate) fn buffer_capabilities(ht: ExternalHandleType) -> ExternalCapabilities {
    match ht {
        ExternalHandleType::OpaqueFd => ExternalCapabilities {
            exportable: true,
            importable: true,
            dedicated_only: false,
            compatible_handle_types: ExternalHandleTypes::OPAQUE_FD,
            host_pointer_alignment: 0,
        },
        ExternalHandleType::HostAllocation => ExternalCapabilities {
            exportable: false,
            importable: true,
            dedicated_only: false,
            compatible_handle_types: ExternalHandleTypes::HOST_ALLOCATION,
            host_pointer_alignment: HOST_POINTER_ALIGNMENT,
        },
        _ => ExternalCapabilities::default(),
    }
}

/// `Adapter::external_texture_capabilities`: opaque fds, for textures the
/// format allows with the usage asked.
pub(crate) fn texture_capabilities(
    desc: &crate::TextureDescriptor,
    ht: ExternalHandleType,
) -> ExternalCapabilities {
    let caps =
        super::instance::format_features(desc.format, super::instance::capabilities().features);
    let usable = !caps.allowed_usages.is_empty() && caps.allowed_usages.contains(desc.usage);
    if ht != ExternalHandleType::OpaqueFd || !usable {
        return ExternalCapabilities::default();
    }
    buffer_capabilities(ht)
}

/// `Adapter::external_semaphore_capabilities`: opaque fds, binary or timeline.
pub(crate) fn semaphore_capabilities(desc: &ExternalSemaphoreDescriptor) -> ExternalCapabilities {
    match desc.handle_type {
        ExternalSemaphoreType::OpaqueFd => ExternalCapabilities {
            exportable: true,
            importable: true,
            dedicated_only: false,
            compatible_handle_types: ExternalHandleTypes::OPAQUE_FD,
            host_pointer_alignment: 0,
        },
        _ => ExternalCapabilities::default(),
    }
}

/// An external error as a buffer error (a plain device error stays one).
pub(crate) fn buffer_err(e: ExternalError) -> crate::BufferError {
    match e {
        ExternalError::Device(d) => crate::BufferError::Device(d),
        e => crate::BufferError::External(e),
    }
}

/// An external error as a texture error (a plain device error stays one).
pub(crate) fn texture_err(e: ExternalError) -> crate::TextureError {
    match e {
        ExternalError::Device(d) => crate::TextureError::Device(d),
        e => crate::TextureError::External(e),
    }
}

/// The memory of a resource created with `memory`: plain host bytes, or,
/// for `Memory::External(export(OpaqueFd))`, host bytes with a new shared
/// file of `len` bytes.
pub(crate) fn new_bytes(
    shared: &DeviceShared,
    memory: Memory,
    len: u64,
) -> Result<HostBytes, ExternalError> {
    let Memory::External(external) = memory else {
        return Ok(HostBytes::new_zeroed(len)?);
    };
    let ht = external.handle_type;
    if external.origin != ExternalOrigin::Exported {
        return Err(unsupported(
            ht.name(),
            "imports go through import_buffer or import_texture, which take the handle",
        ));
    }
    check_enabled(shared, ht)?;
    if ht != ExternalHandleType::OpaqueFd {
        return Err(unsupported(
            ht.name(),
            "host allocations can only be imported",
        ));
    }
    let file = SharedFile::create(Kind::Memory, len)?;
    Ok(HostBytes::new_shared(len, file)?)
}

/// The memory of an imported resource of `len` bytes, and what it reports.
/// The handle is consumed: on error its fd is closed.
///
/// # Safety
/// A host pointer is valid for `size` bytes until the resource and the
/// commands recorded with it are gone (the `import_buffer` contract).
pub(crate) unsafe fn import_bytes(
    shared: &DeviceShared,
    handle: ExternalHandle,
    len: u64,
) -> Result<(HostBytes, Memory), ExternalError> {
    let ht = handle.handle_type();
    // An error drops `handle`, closing its fd.
    check_enabled(shared, ht)?;
    let bytes = match handle {
        ExternalHandle::OpaqueFd(fd) => {
            // A regular file's length first, whatever it holds, as on
            // Vulkan (which seeks to its end before the driver sees the
            // handle): one smaller than the resource is `TooSmall`, not
            // `InvalidHandle`. Pipes and devices have no length to read.
            let file = std::fs::File::from(fd);
            match file.metadata() {
                Ok(meta) if meta.is_file() => {
                    crate::validate::external::check_import_size(meta.len(), len)?
                }
                _ => {}
            }
            let file = SharedFile::open(OwnedFd::from(file), Kind::Memory)?;
            crate::validate::external::check_import_size(file.size(), len)?;
            HostBytes::new_shared(len, file)?
        }
        ExternalHandle::HostPointer { ptr, size } => {
            check_host_pointer(ptr, size, len)?;
            // SAFETY: forwarded contract; `len <= size` (checked).
            unsafe { HostBytes::borrowed(ptr, len) }?
        }
        other => {
            drop(other);
            return Err(unsupported(ht.name(), "not a noop handle type"));
        }
    };
    Ok((bytes, Memory::External(ExternalMemory::imported(ht))))
}

/// A host pointer import's alignment and size (the shared check).
fn check_host_pointer(ptr: NonNull<u8>, size: u64, len: u64) -> Result<(), ExternalError> {
    let addr = ptr.as_ptr() as usize as u64;
    crate::validate::external::check_host_pointer(addr, size, HOST_POINTER_ALIGNMENT, len)
}

/// `export_*_memory`: a new fd of the resource's shared file.
pub(crate) fn export(
    bytes: &HostBytes,
    memory: Memory,
    ht: ExternalHandleType,
) -> Result<ExportedMemory, ExternalError> {
    let file = match (memory, bytes.shared()) {
        (Memory::External(m), Some(file)) if m == ExternalMemory::export(ht) => file,
        _ => return Err(ExternalError::NotExportable(ht.name())),
    };
    Ok(ExportedMemory {
        fd: file.export()?,
        size: file.size(),
        // One shared file per resource.
        dedicated: true,
        memory_properties: MEMORY_PROPERTIES,
        memory_type_index: None,
        drm_format_modifier: None,
        planes: ArrayVec::new(),
    })
}

/// The file kind of a semaphore description, or why noop cannot make it.
fn semaphore_kind(
    shared: &DeviceShared,
    desc: &ExternalSemaphoreDescriptor,
) -> Result<Kind, ExternalError> {
    let name = desc.handle_type.name();
    if desc.handle_type != ExternalSemaphoreType::OpaqueFd {
        return Err(unsupported(name, "the noop backend has no sync files"));
    }
    if !shared
        .hal_features
        .contains(HalFeatures::EXTERNAL_SEMAPHORE_FD)
    {
        return Err(unsupported(
            name,
            "the device was not opened with EXTERNAL_SEMAPHORE_FD",
        ));
    }
    Ok(match desc.kind {
        SemaphoreKind::Binary => Kind::BinarySemaphore,
        SemaphoreKind::Timeline { .. } => Kind::TimelineSemaphore,
    })
}

/// `Device::create_external_semaphore`.
pub(crate) fn create_semaphore(
    shared: &DeviceShared,
    desc: &ExternalSemaphoreDescriptor,
) -> Result<ExternalSemaphore, ExternalError> {
    let kind = semaphore_kind(shared, desc)?;
    let file = SharedFile::create(kind, 8)?;
    if let SemaphoreKind::Timeline { initial_value } = desc.kind {
        file.write_u64(initial_value)?;
    }
    shared.counters.external_semaphores.add();
    Ok(ExternalSemaphore { file })
}

/// `Device::import_semaphore`: the fd must be a noop semaphore of the kind
/// described (`InvalidHandle` otherwise); it is closed on every error.
pub(crate) fn import_semaphore(
    shared: &DeviceShared,
    desc: &ExternalSemaphoreDescriptor,
    fd: OwnedFd,
) -> Result<ExternalSemaphore, ExternalError> {
    let kind = semaphore_kind(shared, desc)?;
    let file = SharedFile::open(fd, kind)?;
    if file.size() != 8 {
        return Err(ExternalError::InvalidHandle);
    }
    shared.counters.external_semaphores.add();
    Ok(ExternalSemaphore { file })
}

/// `Device::export_semaphore`: a new fd of the same semaphore.
pub(crate) fn export_semaphore(semaphore: &ExternalSemaphore) -> Result<OwnedFd, ExternalError> {
    semaphore.file.export()
}

/// `Device::destroy_external_semaphore`.
pub(crate) fn destroy_semaphore(shared: &DeviceShared, semaphore: ExternalSemaphore) {
    shared.counters.external_semaphores.sub();
    drop(semaphore);
}

/// Polls `file`'s value until it reaches `target` (`true`) or `timeout`
/// passes (`false`; `None` polls without limit).
fn poll_until(
    file: &SharedFile,
    target: u64,
    timeout: Option<Duration>,
) -> Result<bool, DeviceError> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(20);
    loop {
        if file.read_u64()? >= target {
            return Ok(true);
        }
        let elapsed = start.elapsed();
        if timeout.is_some_and(|t| elapsed >= t) {
            return Ok(false);
        }
        let left = timeout.map_or(pause, |t| t.saturating_sub(elapsed));
        std::thread::sleep(pause.min(left));
        pause = (pause * 2).min(Duration::from_millis(1));
    }
}

/// Blocks until `semaphore` reaches `value` (timeline) or is signalled
/// (binary, which the wait then consumes). `Lost` after [`WAIT_TIMEOUT`].
pub(crate) fn wait(semaphore: &ExternalSemaphore, value: FenceValue) -> Result<(), DeviceError> {
    let file = &semaphore.file;
    let binary = file.kind() == Kind::BinarySemaphore;
    let target = if binary { 1 } else { value };
    if !poll_until(file, target, Some(WAIT_TIMEOUT))? {
        log::error!(
            "noop: an external semaphore wait was not signalled within {WAIT_TIMEOUT:?}; \
             the submission is dropped (a GPU would hang)"
        );
        return Err(DeviceError::Lost);
    }
    if binary {
        file.write_u64(0)?;
    }
    Ok(())
}

/// `Device::semaphore_value`.
pub(crate) fn semaphore_value(semaphore: &ExternalSemaphore) -> Result<u64, ExternalError> {
    check_timeline(semaphore.kind(), host_op::VALUE)?;
    Ok(semaphore.file.read_u64()?)
}

/// `Device::signal_semaphore`: the shared checks, then the value is
/// written (no queue is involved: noop work runs at submit).
pub(crate) fn signal_semaphore(
    semaphore: &ExternalSemaphore,
    value: FenceValue,
) -> Result<(), ExternalError> {
    check_timeline(semaphore.kind(), host_op::SIGNAL)?;
    let current = semaphore.file.read_u64()?;
    check_signal_value(value, current)?;
    Ok(semaphore.file.write_u64(value)?)
}

/// `Device::wait_semaphore`: polls the shared value (another thread,
/// device or process signals it).
pub(crate) fn wait_semaphore(
    semaphore: &ExternalSemaphore,
    value: FenceValue,
    timeout: Option<Duration>,
) -> Result<bool, ExternalError> {
    check_timeline(semaphore.kind(), host_op::WAIT)?;
    Ok(poll_until(&semaphore.file, value, timeout)?)
}

/// Signals `semaphore`: binary ones become signalled, timeline ones take
/// `value` (logged and ignored unless it is above the current value).
pub(crate) fn signal(semaphore: &ExternalSemaphore, value: FenceValue) -> Result<(), DeviceError> {
    let file = &semaphore.file;
    let current = file.read_u64()?;
    if file.kind() == Kind::BinarySemaphore {
        if current != 0 {
            log::error!("noop: binary semaphore signalled while already signalled");
        }
        return file.write_u64(1);
    }
    if value <= current {
        log::error!("noop: timeline semaphore signalled with {value}, not above {current}");
        return Ok(());
    }
    file.write_u64(value)
}
