//! External synchronisation: semaphores shared as fds, submissions that
//! wait on and signal them, and queue-family ownership transfers to and
//! from `VK_QUEUE_FAMILY_EXTERNAL`.
//!
//! * Opaque-fd semaphores may be binary or timeline (where the driver says
//!   so); exports share the payload itself, imports are permanent.
//! * Sync fds are binary only. Export needs a signal submitted before and
//!   unsignals the semaphore (copy transference); imports are temporary
//!   (Vulkan requires it), so an imported sync fd serves one wait, after
//!   which the semaphore is back to its own (unsignalled) payload.
//! * Timeline semaphores are read, signalled and waited for from the host
//!   with `vkGetSemaphoreCounterValue`, `vkSignalSemaphore` and
//!   `vkWaitSemaphores` (core 1.2), after the checks every backend shares
//!   (`crate::external::check_timeline`, `check_signal_value`).
//! * Exported fds are made close-on-exec (`crate::external::close_on_exec`).
//! * Imported fds follow the memory rule (`external.rs`, "Fd ownership"):
//!   owned until the `vkImportSemaphoreFdKHR` call, the driver's on
//!   success, closed exactly once on failure whatever the driver did.

use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

use ash::vk;
use smallvec::SmallVec;

use super::conv::map_err;
use super::{barrier, bounds, conv, Buffer, DeviceShared, Texture};
use crate::external::{check_signal_value, check_timeline, host_op};
use crate::{
    BufferBarrier, DeviceError, ExternalCapabilities, ExternalError, ExternalSemaphoreDescriptor,
    ExternalSemaphoreType, ExternalSubmissionOf, HalFeatures, OwnershipTransfer, SemaphoreKind,
    SemaphoreStages, TextureBarrier,
};

/// A semaphore shared with another API or process.
#[derive(Debug)]
pub struct ExternalSemaphore {
    pub(crate) raw: vk::Semaphore,
    pub(crate) handle_type: ExternalSemaphoreType,
    pub(crate) kind: SemaphoreKind,
}

impl ExternalSemaphore {
    /// The raw `VkSemaphore`. The hal still owns it: do not destroy it.
    pub fn raw(&self) -> vk::Semaphore {
        self.raw
    }
    /// How it is shared.
    pub fn handle_type(&self) -> ExternalSemaphoreType {
        self.handle_type
    }
    /// Binary or timeline.
    pub fn kind(&self) -> SemaphoreKind {
        self.kind
    }
}

/// The Vulkan handle type of a semaphore handle type.
fn vk_handle_type(ht: ExternalSemaphoreType) -> vk::ExternalSemaphoreHandleTypeFlags {
    match ht {
        ExternalSemaphoreType::OpaqueFd => vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD,
        ExternalSemaphoreType::SyncFd => vk::ExternalSemaphoreHandleTypeFlags::SYNC_FD,
    }
}

fn unsupported(ht: ExternalSemaphoreType, reason: &'static str) -> ExternalError {
    ExternalError::Unsupported {
        handle: ht.name(),
        reason,
    }
}

/// Vulkan's answer for semaphores of `desc` (all false when the extension
/// is missing or a sync fd is asked to be a timeline).
fn query_caps(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    hal: HalFeatures,
    desc: &ExternalSemaphoreDescriptor,
) -> ExternalCapabilities {
    let timeline = matches!(desc.kind, SemaphoreKind::Timeline { .. });
    if !hal.contains(HalFeatures::EXTERNAL_SEMAPHORE_FD)
        || (timeline && desc.handle_type == ExternalSemaphoreType::SyncFd)
    {
        return ExternalCapabilities::default();
    }
    let mut ty = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
    let mut info = vk::PhysicalDeviceExternalSemaphoreInfo::default()
        .handle_type(vk_handle_type(desc.handle_type));
    if timeline {
        info = info.push_next(&mut ty);
    }
    let mut props = vk::ExternalSemaphoreProperties::default();
    // SAFETY: the physical device belongs to the instance; core 1.1 query
    // (timeline semaphore types are core 1.2).
    unsafe { instance.get_physical_device_external_semaphore_properties(pd, &info, &mut props) };
    let f = props.external_semaphore_features;
    ExternalCapabilities {
        exportable: f.contains(vk::ExternalSemaphoreFeatureFlags::EXPORTABLE),
        importable: f.contains(vk::ExternalSemaphoreFeatureFlags::IMPORTABLE),
        dedicated_only: false,
        compatible_handle_types: Default::default(),
        host_pointer_alignment: 0,
    }
}

/// `Adapter::external_semaphore_capabilities`.
pub(super) fn semaphore_capabilities(
    adapter: &super::Adapter,
    desc: &ExternalSemaphoreDescriptor,
) -> ExternalCapabilities {
    query_caps(
        &adapter.instance.raw,
        adapter.raw,
        adapter.capabilities.hal_features,
        desc,
    )
}

/// Checks `desc` for creation (`export`) or import on this device.
fn check(
    shared: &DeviceShared,
    desc: &ExternalSemaphoreDescriptor,
    export: bool,
) -> Result<(), ExternalError> {
    let ht = desc.handle_type;
    if !shared
        .hal_features
        .contains(HalFeatures::EXTERNAL_SEMAPHORE_FD)
    {
        return Err(unsupported(
            ht,
            "the device was not opened with HalFeatures::EXTERNAL_SEMAPHORE_FD",
        ));
    }
    if ht == ExternalSemaphoreType::SyncFd && matches!(desc.kind, SemaphoreKind::Timeline { .. }) {
        return Err(unsupported(ht, "sync fds are binary only"));
    }
    let caps = query_caps(
        &shared.instance.raw,
        shared.physical_device,
        shared.hal_features,
        desc,
    );
    match (export, caps.exportable, caps.importable) {
        (true, true, _) | (false, _, true) => Ok(()),
        (true, false, _) => Err(unsupported(ht, "the driver cannot export such semaphores")),
        (false, _, false) => Err(unsupported(ht, "the driver cannot import such semaphores")),
    }
}

/// Creates the `VkSemaphore` of `desc`, exportable when `export`.
///
/// # Safety
/// `desc` was checked for this device.
unsafe fn create_raw(
    shared: &DeviceShared,
    desc: &ExternalSemaphoreDescriptor,
    export: bool,
) -> Result<vk::Semaphore, ExternalError> {
    let (ty, initial) = match desc.kind {
        SemaphoreKind::Binary => (vk::SemaphoreType::BINARY, 0),
        SemaphoreKind::Timeline { initial_value } => (vk::SemaphoreType::TIMELINE, initial_value),
    };
    let mut type_info = vk::SemaphoreTypeCreateInfo::default()
        .semaphore_type(ty)
        .initial_value(if export { initial } else { 0 });
    let mut export_info =
        vk::ExportSemaphoreCreateInfo::default().handle_types(vk_handle_type(desc.handle_type));
    let mut info = vk::SemaphoreCreateInfo::default().push_next(&mut type_info);
    if export {
        info = info.push_next(&mut export_info);
    }
    // SAFETY: the handle type and kind were checked as supported.
    unsafe { shared.raw.create_semaphore(&info, None) }.map_err(|e| map_err(e).into())
}

/// `Device::create_external_semaphore`.
///
/// # Safety
/// Live device.
pub(super) unsafe fn create_semaphore(
    shared: &DeviceShared,
    desc: &ExternalSemaphoreDescriptor,
) -> Result<ExternalSemaphore, ExternalError> {
    check(shared, desc, true)?;
    // SAFETY: checked above.
    let raw = unsafe { create_raw(shared, desc, true) }?;
    shared.counters.external_semaphores.add();
    Ok(ExternalSemaphore {
        raw,
        handle_type: desc.handle_type,
        kind: desc.kind,
    })
}

/// `Device::import_semaphore`.
///
/// # Safety
/// As `Device::import_semaphore`.
pub(super) unsafe fn import_semaphore(
    shared: &DeviceShared,
    desc: &ExternalSemaphoreDescriptor,
    fd: OwnedFd,
) -> Result<ExternalSemaphore, ExternalError> {
    // On any error before the import call, `fd` is dropped: closed.
    check(shared, desc, false)?;
    let fns = shared.external.semaphore_fd.as_ref().ok_or(unsupported(
        desc.handle_type,
        "the extension is not enabled",
    ))?;
    // SAFETY: checked above.
    let raw = unsafe { create_raw(shared, desc, false) }?;
    let flags = match desc.handle_type {
        // Vulkan: sync fds can only be imported temporarily.
        ExternalSemaphoreType::SyncFd => vk::SemaphoreImportFlags::TEMPORARY,
        ExternalSemaphoreType::OpaqueFd => vk::SemaphoreImportFlags::empty(),
    };
    // Nothing fallible happens between here and the call that takes the fd.
    let fd = match super::external::ImportFd::new(fd) {
        Ok(fd) => fd,
        Err(e) => {
            // SAFETY: `raw` was never used.
            unsafe { shared.raw.destroy_semaphore(raw, None) };
            return Err(e);
        }
    };
    let info = vk::ImportSemaphoreFdInfoKHR::default()
        .semaphore(raw)
        .flags(flags)
        .handle_type(vk_handle_type(desc.handle_type))
        .fd(fd.raw());
    // SAFETY: the extension is enabled; `raw` is a new semaphore of this
    // device, not in use; the fd is a live handle of this type (contract).
    let imported = unsafe { (fns.import_semaphore_fd_khr)(shared.raw.handle(), &info) }.result();
    if let Err(e) = imported {
        // The driver did not take the fd: close it (unless it did), and
        // the new semaphore.
        fd.failed();
        // SAFETY: `raw` was never used.
        unsafe { shared.raw.destroy_semaphore(raw, None) };
        return Err(match e {
            vk::Result::ERROR_INVALID_EXTERNAL_HANDLE => ExternalError::InvalidHandle,
            other => map_err(other).into(),
        });
    }
    // Success: the driver owns the fd now.
    fd.imported();
    shared.counters.external_semaphores.add();
    Ok(ExternalSemaphore {
        raw,
        handle_type: desc.handle_type,
        kind: desc.kind,
    })
}

/// `Device::export_semaphore`.
///
/// # Safety
/// The semaphore came from this device.
pub(super) unsafe fn export_semaphore(
    shared: &DeviceShared,
    semaphore: &ExternalSemaphore,
) -> Result<OwnedFd, ExternalError> {
    let ht = semaphore.handle_type;
    let fns = shared
        .external
        .semaphore_fd
        .as_ref()
        .ok_or(unsupported(ht, "the extension is not enabled"))?;
    let info = vk::SemaphoreGetFdInfoKHR::default()
        .semaphore(semaphore.raw)
        .handle_type(vk_handle_type(ht));
    let mut fd = -1;
    // SAFETY: the extension is enabled; the semaphore is of this device and
    // of this handle type (a sync fd's pending signal is the caller's contract).
    unsafe { (fns.get_semaphore_fd_khr)(shared.raw.handle(), &info, &mut fd) }
        .result()
        .map_err(map_err)?;
    if fd < 0 {
        return Err(DeviceError::Unexpected.into());
    }
    // SAFETY: a successful vkGetSemaphoreFdKHR hands the caller a new fd.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // Drivers differ on FD_CLOEXEC: ours have it.
    Ok(crate::external::close_on_exec(fd)?)
}

/// `Device::destroy_external_semaphore`.
///
/// # Safety
/// As `Device::destroy_external_semaphore`.
pub(super) unsafe fn destroy_semaphore(shared: &DeviceShared, semaphore: ExternalSemaphore) {
    shared.instance.note_semaphore_read(semaphore.raw, None);
    // SAFETY: forwarded contract.
    unsafe { shared.raw.destroy_semaphore(semaphore.raw, None) };
    shared.counters.external_semaphores.sub();
}

/// `Device::semaphore_value`.
///
/// # Safety
/// The semaphore came from this device.
pub(super) unsafe fn semaphore_value(
    shared: &DeviceShared,
    semaphore: &ExternalSemaphore,
) -> Result<u64, ExternalError> {
    check_timeline(semaphore.kind, host_op::VALUE)?;
    // SAFETY: a timeline semaphore of this device (checked / contract).
    let value = unsafe { shared.raw.get_semaphore_counter_value(semaphore.raw) }
        .map_err(|e| ExternalError::from(map_err(e)))?;
    shared
        .instance
        .note_semaphore_read(semaphore.raw, Some(value));
    Ok(value)
}

/// `Device::signal_semaphore`: `vkSignalSemaphore`, after the shared
/// checks (timeline, value above the current one).
///
/// # Safety
/// As `Device::signal_semaphore`.
pub(super) unsafe fn signal_semaphore(
    shared: &DeviceShared,
    semaphore: &ExternalSemaphore,
    value: u64,
) -> Result<(), ExternalError> {
    check_timeline(semaphore.kind, host_op::SIGNAL)?;
    // SAFETY: forwarded contract.
    let current = unsafe { semaphore_value(shared, semaphore) }?;
    check_signal_value(value, current)?;
    let info = vk::SemaphoreSignalInfo::default()
        .semaphore(semaphore.raw)
        .value(value);
    // SAFETY: a timeline semaphore of this device; `value` is above its
    // value (checked) and below every pending signal's (contract).
    unsafe { shared.raw.signal_semaphore(&info) }.map_err(|e| map_err(e).into())
}

/// `Device::wait_semaphore`: `vkWaitSemaphores` on the one semaphore.
///
/// # Safety
/// As `Device::wait_semaphore`.
pub(super) unsafe fn wait_semaphore(
    shared: &DeviceShared,
    semaphore: &ExternalSemaphore,
    value: u64,
    timeout: Option<Duration>,
) -> Result<bool, ExternalError> {
    check_timeline(semaphore.kind, host_op::WAIT)?;
    let timeout_ns = timeout.map_or(u64::MAX, |d| {
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
    });
    let semaphores = [semaphore.raw];
    let values = [value];
    let info = vk::SemaphoreWaitInfo::default()
        .semaphores(&semaphores)
        .values(&values);
    // SAFETY: a timeline semaphore of this device (checked / contract).
    match unsafe { shared.raw.wait_semaphores(&info, timeout_ns) } {
        Ok(()) => {
            shared
                .instance
                .note_semaphore_read(semaphore.raw, Some(value));
            Ok(true)
        }
        Err(vk::Result::TIMEOUT) => Ok(false),
        Err(e) => Err(map_err(e).into()),
    }
}

/// Sync2 stages of [`SemaphoreStages`].
fn map_stages(stages: SemaphoreStages) -> vk::PipelineStageFlags2 {
    use vk::PipelineStageFlags2 as S;
    if stages.contains(SemaphoreStages::ALL) || stages.is_empty() {
        return S::ALL_COMMANDS;
    }
    let mut out = S::NONE;
    for (flag, vk_stages) in [
        (SemaphoreStages::TRANSFER, S::ALL_TRANSFER),
        (SemaphoreStages::COMPUTE, S::COMPUTE_SHADER),
        (
            SemaphoreStages::VERTEX,
            S::VERTEX_INPUT | S::PRE_RASTERIZATION_SHADERS,
        ),
        (
            SemaphoreStages::FRAGMENT,
            S::FRAGMENT_SHADER | S::EARLY_FRAGMENT_TESTS | S::LATE_FRAGMENT_TESTS,
        ),
        (SemaphoreStages::COLOR_OUTPUT, S::COLOR_ATTACHMENT_OUTPUT),
    ] {
        if stages.contains(flag) {
            out |= vk_stages;
        }
    }
    out
}

/// Items one submission describes without a heap allocation.
const INLINE: usize = 16;

/// A submission's list: on the stack up to [`INLINE`] items.
type List<T> = SmallVec<[T; INLINE]>;

/// `Queue::submit_external`.
///
/// # Safety
/// As `Queue::submit_external`.
pub(super) unsafe fn submit_external(
    queue: &super::Queue,
    submission: &ExternalSubmissionOf<'_, super::Api>,
) -> Result<(), DeviceError> {
    let command_buffers = List::from_iter(
        submission
            .command_buffers
            .iter()
            .map(|cb| vk::CommandBufferSubmitInfo::default().command_buffer(cb.raw)),
    );
    let semaphore_info = |raw, value, stages| {
        vk::SemaphoreSubmitInfo::default()
            .semaphore(raw)
            .value(value)
            .stage_mask(map_stages(stages))
    };
    let waits = List::from_iter(
        submission
            .waits
            .iter()
            .map(|w| semaphore_info(w.semaphore.raw, w.value, w.stages)),
    );
    let fence = submission.fence.map(|(fence, value)| {
        vk::SemaphoreSubmitInfo::default()
            .semaphore(fence.raw)
            .value(value)
            .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
    });
    let signals = List::from_iter(
        submission
            .signals
            .iter()
            .map(|s| semaphore_info(s.semaphore.raw, s.value, s.stages))
            .chain(fence),
    );
    let submit = [vk::SubmitInfo2::default()
        .command_buffer_infos(command_buffers.as_slice())
        .wait_semaphore_infos(waits.as_slice())
        .signal_semaphore_infos(signals.as_slice())];
    let device = &queue.device;
    let _queue = device.queue_lock.lock();
    // SAFETY: the caller's contract makes every object valid for this
    // device and the waits satisfiable; the queue lock gives the external
    // synchronisation vkQueueSubmit2 needs. (Binary semaphores ignore values.)
    unsafe {
        device
            .raw
            .queue_submit2(queue.raw, &submit, vk::Fence::null())
    }
    .map_err(map_err)
}

/// `CommandEncoder::transfer_ownership`: sync2 barriers whose queue
/// families are this queue's and `VK_QUEUE_FAMILY_EXTERNAL`.
///
/// # Safety
/// As `CommandEncoder::transfer_ownership`.
pub(super) unsafe fn transfer_ownership(
    encoder: &mut super::CommandEncoder,
    direction: OwnershipTransfer,
    buffers: &[BufferBarrier<'_, Buffer>],
    textures: &[TextureBarrier<'_, Texture>],
) {
    let Some(raw) = encoder.active else {
        crate::refusal::refused!(
            "keel-hal: transfer_ownership with no recording in progress; ignored"
        );
        return;
    };
    let device = &encoder.device;
    let ours = device.queue_family_index;
    let shaders = barrier::shader_stages(device.ray_tracing.is_some());
    let external = vk::QUEUE_FAMILY_EXTERNAL;
    let (src_family, dst_family) = match direction {
        OwnershipTransfer::Acquire => (external, ours),
        OwnershipTransfer::Release => (ours, external),
    };
    let none = (vk::PipelineStageFlags2::NONE, vk::AccessFlags2::NONE);
    // Release: only this queue's side (source scope); acquire: only the
    // destination scope. The other half belongs to the other side.
    let scopes = |from: (vk::PipelineStageFlags2, vk::AccessFlags2),
                  to: (vk::PipelineStageFlags2, vk::AccessFlags2)| match direction
    {
        OwnershipTransfer::Release => ((from.0, barrier::writes(from.1)), none),
        OwnershipTransfer::Acquire => (none, to),
    };
    let buffer_barriers = List::from_iter(buffers.iter().map(|b| {
        let ((src_stage, src_access), (dst_stage, dst_access)) = scopes(
            barrier::buffer_scope(b.usage.from, shaders),
            barrier::buffer_scope(b.usage.to, shaders),
        );
        vk::BufferMemoryBarrier2::default()
            .src_stage_mask(src_stage)
            .src_access_mask(src_access)
            .dst_stage_mask(dst_stage)
            .dst_access_mask(dst_access)
            .src_queue_family_index(src_family)
            .dst_queue_family_index(dst_family)
            .buffer(b.buffer.raw)
            .offset(0)
            .size(vk::WHOLE_SIZE)
    }));
    let swapchain = device.swapchain;
    let fits = |b: &&TextureBarrier<'_, Texture>| {
        let ok = bounds::barrier_range_fits(b.texture, &b.range)
            && !conv::map_barrier_aspect(b.texture.format, b.range.aspect).is_empty();
        if !ok {
            crate::refusal::refused!(
                "keel-hal: transfer_ownership: range {:?} is not in the texture; skipped",
                b.range
            );
        }
        ok
    };
    let image_barriers = List::from_iter(textures.iter().filter(fits).map(|b| {
        let ((src_stage, src_access), (dst_stage, dst_access)) = scopes(
            barrier::texture_scope(b.usage.from, shaders),
            barrier::texture_scope(b.usage.to, shaders),
        );
        vk::ImageMemoryBarrier2::default()
            .src_stage_mask(src_stage)
            .src_access_mask(src_access)
            .dst_stage_mask(dst_stage)
            .dst_access_mask(dst_access)
            .old_layout(barrier::texture_layout(b.usage.from, swapchain))
            .new_layout(barrier::texture_layout(b.usage.to, swapchain))
            .src_queue_family_index(src_family)
            .dst_queue_family_index(dst_family)
            .image(b.texture.raw)
            .subresource_range(conv::map_barrier_range(&b.range, b.texture.format))
    }));
    if buffer_barriers.as_slice().is_empty() && image_barriers.as_slice().is_empty() {
        return;
    }
    let info = vk::DependencyInfo::default()
        .buffer_memory_barriers(buffer_barriers.as_slice())
        .image_memory_barriers(image_barriers.as_slice());
    // SAFETY: recording (checked above); the resources are alive, external
    // and in the states named (the trait contract).
    unsafe { device.raw.cmd_pipeline_barrier2(raw, &info) };
}
