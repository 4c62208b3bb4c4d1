//! External memory and semaphores: sharing buffers, textures and
//! synchronisation with another API, device or process (docs/design.md §7).
//!
//! * **Capabilities first.** [`Adapter::external_buffer_capabilities`],
//!   [`Adapter::external_texture_capabilities`],
//!   [`Adapter::external_semaphore_capabilities`] and
//!   [`Adapter::drm_format_modifiers`] say what works before anything is
//!   created; a request that does not work is a typed
//!   [`ExternalError::Unsupported`], never a panic.
//! * **Export** = create a resource with
//!   `memory: Memory::External(ExternalMemory::export(handle_type))`, then
//!   [`Device::export_buffer_memory`] / [`Device::export_texture_memory`]
//!   hand out a new file descriptor per call ([`ExportedMemory`]).
//! * **Import** = [`Device::import_buffer`] / [`Device::import_texture`]
//!   with an owned [`ExternalHandle`], taken *by value*: the hal consumes it
//!   exactly once, on success and on every error path. (The owned handle
//!   cannot live in [`Memory`], which is `Copy`.) Imported resources report
//!   `Memory::External(ExternalMemory::imported(handle_type))`.
//! * External memory is always a dedicated allocation of its own, never
//!   sub-allocated, and freed exactly once when the resource is destroyed.
//! * **Semaphores**: [`Device::create_external_semaphore`],
//!   [`Device::export_semaphore`], [`Device::import_semaphore`]; waited on
//!   and signalled by [`Queue::submit_external`]. A timeline semaphore's
//!   value is read, signalled and waited for from the host with
//!   [`Device::semaphore_value`], [`Device::signal_semaphore`] and
//!   [`Device::wait_semaphore`]. Queue-family ownership moves to and from
//!   the outside world with [`CommandEncoder::transfer_ownership`].
//! * **Fds handed out are close-on-exec** on every backend, whatever the
//!   driver made: passing one to a child process is the caller's explicit
//!   act.
//! * **Another API** (CUDA, …): match the device by
//!   [`AdapterInfo::device_uuid`](crate::AdapterInfo::device_uuid); import
//!   with [`ExportedMemory::size`] and [`ExportedMemory::dedicated`];
//!   `docs/interop-cuda.md` is the recipe.
//!
//! Why `ExternalSemaphore` is its own type and not a kind of `Fence`: a
//! fence is a CPU-waitable monotonically increasing counter on every
//! backend, while a sync-fd semaphore is binary (signalled once, consumed
//! by one wait) and an imported one may be *temporary* (its payload goes
//! after one wait). One type with both behaviours would make every `Fence`
//! contract conditional; two types keep `submit` lean and each contract
//! plain.
//!
//! [`Adapter::external_buffer_capabilities`]: crate::Adapter::external_buffer_capabilities
//! [`Adapter::external_texture_capabilities`]: crate::Adapter::external_texture_capabilities
//! [`Adapter::external_semaphore_capabilities`]: crate::Adapter::external_semaphore_capabilities
//! [`Adapter::drm_format_modifiers`]: crate::Adapter::drm_format_modifiers
//! [`Device::export_buffer_memory`]: crate::Device::export_buffer_memory
//! [`Device::export_texture_memory`]: crate::Device::export_texture_memory
//! [`Device::import_buffer`]: crate::Device::import_buffer
//! [`Device::import_texture`]: crate::Device::import_texture
//! [`Device::create_external_semaphore`]: crate::Device::create_external_semaphore
//! [`Device::export_semaphore`]: crate::Device::export_semaphore
//! [`Device::import_semaphore`]: crate::Device::import_semaphore
//! [`Queue::submit_external`]: crate::Queue::submit_external
//! [`Device::semaphore_value`]: crate::Device::semaphore_value
//! [`Device::signal_semaphore`]: crate::Device::signal_semaphore
//! [`Device::wait_semaphore`]: crate::Device::wait_semaphore
//! [`CommandEncoder::transfer_ownership`]: crate::CommandEncoder::transfer_ownership
//! [`Memory`]: crate::Memory
//! [`ExternalError::Unsupported`]: crate::ExternalError::Unsupported

use std::os::fd::OwnedFd;
use std::ptr::NonNull;

use arrayvec::ArrayVec;

use crate::FenceValue;

/// How memory is shared with the outside world.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExternalHandleType {
    /// An opaque file descriptor, meaningful only to the same driver on the
    /// same physical device (another process, another API such as CUDA).
    OpaqueFd,
    /// A Linux dma-buf file descriptor (compositors, video decoders, other
    /// drivers). Textures carry a DRM format modifier and plane layouts.
    DmaBuf,
    /// Host memory the caller allocated (import only).
    HostAllocation,
}

impl ExternalHandleType {
    /// A short name, for errors and logs.
    pub const fn name(self) -> &'static str {
        match self {
            ExternalHandleType::OpaqueFd => "opaque fd",
            ExternalHandleType::DmaBuf => "dma-buf",
            ExternalHandleType::HostAllocation => "host allocation",
        }
    }

    /// The flag of this type in [`ExternalHandleTypes`].
    pub const fn flag(self) -> ExternalHandleTypes {
        match self {
            ExternalHandleType::OpaqueFd => ExternalHandleTypes::OPAQUE_FD,
            ExternalHandleType::DmaBuf => ExternalHandleTypes::DMA_BUF,
            ExternalHandleType::HostAllocation => ExternalHandleTypes::HOST_ALLOCATION,
        }
    }
}

bitflags::bitflags! {
    /// A set of [`ExternalHandleType`]s.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct ExternalHandleTypes: u32 {
        /// [`ExternalHandleType::OpaqueFd`].
        const OPAQUE_FD = 1 << 0;
        /// [`ExternalHandleType::DmaBuf`].
        const DMA_BUF = 1 << 1;
        /// [`ExternalHandleType::HostAllocation`].
        const HOST_ALLOCATION = 1 << 2;
    }
}

/// Whether external memory was made here for export, or imported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExternalOrigin {
    /// Allocated by this device, exportable as the handle type.
    Exported,
    /// Imported from a handle of the handle type.
    Imported,
}

/// The external part of [`crate::Memory::External`]: which handle type, and
/// which way. `Copy`: the owned handle of an import travels separately
/// ([`ExternalHandle`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExternalMemory {
    /// The handle type the memory is shared as.
    pub handle_type: ExternalHandleType,
    /// Exported from here, or imported.
    pub origin: ExternalOrigin,
}

impl ExternalMemory {
    /// Memory to allocate here and export as `handle_type` (for
    /// `create_buffer` / `create_texture`).
    pub const fn export(handle_type: ExternalHandleType) -> Self {
        Self {
            handle_type,
            origin: ExternalOrigin::Exported,
        }
    }

    /// What an imported resource reports.
    pub const fn imported(handle_type: ExternalHandleType) -> Self {
        Self {
            handle_type,
            origin: ExternalOrigin::Imported,
        }
    }
}

/// Where one memory plane of a texture lies in its dma-buf.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PlaneLayout {
    /// Byte offset of the plane from the start of the dma-buf.
    pub offset: u64,
    /// Bytes from the start of one row to the next (the pitch).
    pub stride: u64,
}

/// `DRM_FORMAT_MOD_LINEAR`: rows one after another, no tiling.
pub const DRM_FORMAT_MOD_LINEAR: u64 = 0;

/// An owned handle to import, taken by value by [`crate::Device::import_buffer`]
/// and [`crate::Device::import_texture`]. Its file descriptor is consumed
/// exactly once: handed to the driver on success, closed on every error.
#[non_exhaustive]
#[derive(Debug)]
pub enum ExternalHandle {
    /// An opaque fd exported by the same driver on the same physical device.
    OpaqueFd(OwnedFd),
    /// A dma-buf. `drm_format_modifier` and `planes` describe a texture's
    /// layout (one entry per memory plane); buffers ignore them.
    DmaBuf {
        /// The dma-buf.
        fd: OwnedFd,
        /// The texture's DRM format modifier ([`DRM_FORMAT_MOD_LINEAR`] for linear).
        drm_format_modifier: u64,
        /// The texture's memory planes.
        planes: ArrayVec<PlaneLayout, 4>,
    },
    /// Host memory of `size` bytes at `ptr`. Both must be multiples of the
    /// adapter's minimum imported host pointer alignment
    /// ([`ExternalError::Misaligned`](crate::ExternalError::Misaligned) otherwise). The memory must stay
    /// allocated and mapped until the imported resource is destroyed and
    /// the GPU is done with it (the `# Safety` of `import_buffer`).
    HostPointer {
        /// Start of the allocation.
        ptr: NonNull<u8>,
        /// Its size in bytes.
        size: u64,
    },
}

impl ExternalHandle {
    /// The handle's type.
    pub fn handle_type(&self) -> ExternalHandleType {
        match self {
            ExternalHandle::OpaqueFd(_) => ExternalHandleType::OpaqueFd,
            ExternalHandle::DmaBuf { .. } => ExternalHandleType::DmaBuf,
            ExternalHandle::HostPointer { .. } => ExternalHandleType::HostAllocation,
        }
    }
}

bitflags::bitflags! {
    /// The properties of the memory type an allocation lives in (Vulkan's
    /// `VkMemoryPropertyFlags`, as far as another API needs them to pick a
    /// matching memory type on import). They describe the memory, not what
    /// keel-hal allows: no external resource can be mapped, even where its
    /// memory type is host-visible.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct MemoryProperties: u32 {
        /// Local to the device (fastest for the GPU).
        const DEVICE_LOCAL = 1 << 0;
        /// Could be mapped for host access.
        const HOST_VISIBLE = 1 << 1;
        /// Host writes and reads need no flush or invalidate.
        const HOST_COHERENT = 1 << 2;
        /// Cached on the host.
        const HOST_CACHED = 1 << 3;
        /// Lazily allocated (transient attachments).
        const LAZILY_ALLOCATED = 1 << 4;
        /// Protected memory.
        const PROTECTED = 1 << 5;
    }
}

/// Sets close-on-exec on an fd about to be handed to the caller, so that
/// no fd keel-hal returns leaks into child processes by default (drivers
/// differ: NVIDIA's exported fds have `FD_CLOEXEC`, lavapipe's do not).
/// Passing one to a child is then the caller's explicit act (for example
/// `Stdio::from(fd)`, or `dup2` onto a chosen number, which clears the flag
/// on the copy).
///
/// The fd is duplicated with `F_DUPFD_CLOEXEC` (what `OwnedFd::try_clone`
/// does) and the original closed: the new fd names the same open file.
/// On error (no fd number left) the original is closed too, and the error is
/// `DeviceError::OutOfMemory`, as Vulkan itself reports fd exhaustion
/// (`VK_ERROR_OUT_OF_HOST_MEMORY`, `VK_ERROR_TOO_MANY_OBJECTS`).
///
/// The driver's own fd exists without the flag between its export and this
/// call: a child forked and exec'ed by another thread in that moment can
/// still inherit it. Programs that fork while exporting on other threads
/// serialise the two themselves (or spawn children with only the fds they
/// name, as `posix_spawn` with file actions does).
pub(crate) fn close_on_exec(fd: OwnedFd) -> Result<OwnedFd, crate::DeviceError> {
    // `fd` is dropped (closed) on both paths.
    fd.try_clone().map_err(|e| {
        log::error!("keel-hal: could not duplicate an exported fd: {e}");
        crate::DeviceError::OutOfMemory
    })
}

/// What [`crate::Device::export_buffer_memory`] and
/// [`crate::Device::export_texture_memory`] return.
#[derive(Debug)]
pub struct ExportedMemory {
    /// A new file descriptor for the memory; the caller owns it. Always
    /// close-on-exec: to pass it to a child process, make an inheritable
    /// copy explicitly (e.g. `Stdio::from(fd)`, or `dup2` onto a chosen
    /// number).
    pub fd: OwnedFd,
    /// The size of the allocation behind it, in bytes: what an importer
    /// passes as the memory's size (CUDA's `cudaExternalMemoryHandleDesc::size`).
    pub size: u64,
    /// Whether the allocation is dedicated to this one resource (Vulkan's
    /// `VkMemoryDedicatedAllocateInfo`; CUDA's `cudaExternalMemoryDedicated`).
    /// keel-hal's external allocations always are: `true` on every backend.
    /// (Not to be confused with [`ExternalCapabilities::dedicated_only`],
    /// the driver's requirement.)
    pub dedicated: bool,
    /// The properties of the memory type the allocation lives in.
    pub memory_properties: MemoryProperties,
    /// The index of that memory type on the exporting adapter, where the
    /// backend has memory types (Vulkan); `None` on noop.
    pub memory_type_index: Option<u32>,
    /// Textures exported as dma-buf: the DRM format modifier of the layout.
    pub drm_format_modifier: Option<u64>,
    /// Textures exported as dma-buf: one entry per memory plane. Empty for
    /// buffers and opaque fds.
    pub planes: ArrayVec<PlaneLayout, 4>,
}

/// What an adapter can do with one handle type for one resource description.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ExternalCapabilities {
    /// Resources so described can be created for export as this type.
    pub exportable: bool,
    /// Resources so described can be imported from this type.
    pub importable: bool,
    /// The memory must be a dedicated allocation (keel-hal always makes
    /// external allocations dedicated; reported for the other side).
    pub dedicated_only: bool,
    /// Handle types memory of this type can also be exported as or imported from.
    pub compatible_handle_types: ExternalHandleTypes,
    /// [`ExternalHandleType::HostAllocation`]: what a host pointer and its
    /// size must be multiples of to be imported (Vulkan's
    /// `minImportedHostPointerAlignment`); 0 for other handle types or
    /// where host allocations cannot be imported.
    pub host_pointer_alignment: u64,
}

/// One DRM format modifier a format supports (`VK_EXT_image_drm_format_modifier`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DrmModifierInfo {
    /// The modifier.
    pub modifier: u64,
    /// Memory planes a texture with it has.
    pub plane_count: u32,
    /// Usages the format supports with this modifier.
    pub allowed_usages: wgt::TextureUsages,
}

/// How a semaphore is shared.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExternalSemaphoreType {
    /// An opaque fd: same driver and physical device. Exports share the
    /// semaphore itself (reference transference); binary or timeline.
    OpaqueFd,
    /// A Linux sync file: a one-shot snapshot of a pending signal (copy
    /// transference). Binary only. Exporting needs a signal submitted
    /// before, and unsignals the semaphore; an imported one serves one wait.
    SyncFd,
}

impl ExternalSemaphoreType {
    /// A short name, for errors and logs.
    pub const fn name(self) -> &'static str {
        match self {
            ExternalSemaphoreType::OpaqueFd => "opaque fd semaphore",
            ExternalSemaphoreType::SyncFd => "sync fd",
        }
    }
}

/// Binary or timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SemaphoreKind {
    /// Signalled once, then consumed by one wait.
    #[default]
    Binary,
    /// A counter, like a [`crate::Api::Fence`]; waits and signals carry values.
    /// Only with [`ExternalSemaphoreType::OpaqueFd`], and only where the
    /// adapter reports it ([`crate::Adapter::external_semaphore_capabilities`]).
    Timeline {
        /// The counter's value at creation (ignored by imports).
        initial_value: u64,
    },
}

/// Describes an external semaphore to create or import.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExternalSemaphoreDescriptor {
    /// How it is shared.
    pub handle_type: ExternalSemaphoreType,
    /// Binary or timeline.
    pub kind: SemaphoreKind,
}

bitflags::bitflags! {
    /// Pipeline stages a semaphore wait blocks (or a signal waits for).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct SemaphoreStages: u32 {
        /// Copies, clears and query resolves.
        const TRANSFER = 1 << 0;
        /// Compute shaders.
        const COMPUTE = 1 << 1;
        /// Vertex input and vertex (pre-rasterisation) shaders.
        const VERTEX = 1 << 2;
        /// Fragment shaders and depth/stencil tests.
        const FRAGMENT = 1 << 3;
        /// Colour attachment output.
        const COLOR_OUTPUT = 1 << 4;
        /// Every command.
        const ALL = 1 << 5;
    }
}

impl Default for SemaphoreStages {
    fn default() -> Self {
        SemaphoreStages::ALL
    }
}

/// A wait on an external semaphore before a submission's commands run.
#[derive(Debug)]
pub struct SemaphoreWait<'a, S: ?Sized> {
    /// The semaphore.
    pub semaphore: &'a S,
    /// Timeline: the value to wait for. Binary: ignored.
    pub value: FenceValue,
    /// The stages that wait.
    pub stages: SemaphoreStages,
}

/// A signal of an external semaphore after a submission's commands.
#[derive(Debug)]
pub struct SemaphoreSignal<'a, S: ?Sized> {
    /// The semaphore.
    pub semaphore: &'a S,
    /// Timeline: the value to set. Binary: ignored.
    pub value: FenceValue,
    /// The stages whose work completes before the signal.
    pub stages: SemaphoreStages,
}

/// A submission that waits on and signals external semaphores
/// ([`crate::Queue::submit_external`]). Generic over the types so that the
/// dyn path can use it too.
#[derive(Debug)]
pub struct ExternalSubmission<'a, CB: ?Sized, S: ?Sized, F: ?Sized> {
    /// Command buffers, run in order.
    pub command_buffers: &'a [&'a CB],
    /// Waits before the command buffers run.
    pub waits: &'a [SemaphoreWait<'a, S>],
    /// Signals once they are done.
    pub signals: &'a [SemaphoreSignal<'a, S>],
    /// A fence to set to the value once they are done, if any.
    pub fence: Option<(&'a F, FenceValue)>,
}

/// Which way [`crate::CommandEncoder::transfer_ownership`] moves resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OwnershipTransfer {
    /// From the outside world (`VK_QUEUE_FAMILY_EXTERNAL`) to this queue,
    /// before this queue uses what another API or process wrote.
    Acquire,
    /// From this queue to the outside world, after this queue's last use
    /// and before another API or process uses it.
    Release,
}

/// The host operations on external semaphores, for
/// [`crate::ExternalError::NotTimeline`].
pub(crate) mod host_op {
    /// `Device::semaphore_value`.
    pub(crate) const VALUE: &str = "semaphore_value";
    /// `Device::signal_semaphore`.
    pub(crate) const SIGNAL: &str = "signal_semaphore";
    /// `Device::wait_semaphore`.
    pub(crate) const WAIT: &str = "wait_semaphore";
}

/// The check of every host operation on an external semaphore, on every
/// backend: only timeline semaphores have a value.
pub(crate) fn check_timeline(
    kind: SemaphoreKind,
    operation: &'static str,
) -> Result<(), crate::ExternalError> {
    match kind {
        SemaphoreKind::Timeline { .. } => Ok(()),
        SemaphoreKind::Binary => Err(crate::ExternalError::NotTimeline(operation)),
    }
}

/// The check of a host signal, on every backend: a timeline only moves
/// forward, so `value` must be above the semaphore's `current` value.
pub(crate) fn check_signal_value(value: u64, current: u64) -> Result<(), crate::ExternalError> {
    if value > current {
        Ok(())
    } else {
        Err(crate::ExternalError::ValueNotIncreasing { value, current })
    }
}
