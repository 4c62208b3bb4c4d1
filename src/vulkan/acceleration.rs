//! Acceleration structures on Vulkan (`VK_KHR_acceleration_structure`):
//! build-size queries, creation in an owned buffer or a caller's, destruction,
//! device addresses, and the conversion of build entries into Vulkan
//! geometries that size queries and the encoder's builds
//! (`acceleration_commands.rs`) share.
//!
//! Everything here needs a device opened with
//! [`HalFeatures::ACCELERATION_STRUCTURE`](crate::HalFeatures) (directly or
//! through ray query / ray-tracing pipelines); without it each entry point
//! answers [`AccelerationStructureError::Unsupported`].
//!
//! Every check that needs no driver is the shared one
//! (`validate/acceleration.rs`), run before anything here converts or
//! asks the driver: the conversion below meets only checked entries.
//!
//! Input buffers are read through device addresses: the hal gives buffers
//! with `BLAS_INPUT`/`TLAS_INPUT` usage `ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY
//! | SHADER_DEVICE_ADDRESS | STORAGE_BUFFER` and `STORAGE` buffers
//! `SHADER_DEVICE_ADDRESS | ACCELERATION_STRUCTURE_STORAGE` on such devices
//! (`conv::map_buffer_usage`), so any of them may be scratch, and `STORAGE`
//! buffers may hold structures. Offsets of the entries are folded into the
//! addresses; every build range has a primitive offset of 0.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use ash::khr::acceleration_structure::DeviceFn;
use ash::vk;

use super::conv::map_err;
use super::memory::{AllocError, Block};
use super::object_name::set_object_name;
use super::DeviceShared;
use crate::validate::acceleration::{self as checks, BuildLimits, StructureFacts};
use crate::{
    AccelerationStructureBuildSizes, AccelerationStructureDescriptor, AccelerationStructureEntries,
    AccelerationStructureError as Error, AccelerationStructureKind, AccelerationStructurePlacement,
    DeviceError, GetAccelerationStructureBuildSizesDescriptor, Memory,
};

/// A scratch-offset alignment that covers every known driver (Vulkan
/// allows at most 256 for `minAccelerationStructureScratchOffsetAlignment`),
/// for code that does not ask the device.
pub const SAFE_SCRATCH_OFFSET_ALIGNMENT: u64 = 256;

/// `VK_KHR_acceleration_structure`'s device functions.
pub(crate) struct AccelerationFns {
    pub(crate) fp: DeviceFn,
}

impl std::fmt::Debug for AccelerationFns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccelerationFns").finish_non_exhaustive()
    }
}

impl AccelerationFns {
    /// Loads the functions (through the fault-injection hooks when that
    /// feature is on).
    ///
    /// # Safety
    /// `device` is a live device of `instance` with the extension enabled.
    pub(crate) unsafe fn load(
        instance: &super::instance_shared::InstanceShared,
        device: &ash::Device,
    ) -> Self {
        let _handle = device.handle();
        let fp = DeviceFn::load(|name| {
            #[cfg(feature = "fault-injection")]
            // SAFETY: forwarded contract.
            let addr =
                unsafe { super::fault::device_proc_addr(&instance.entry, &instance.raw, name) };
            #[cfg(not(feature = "fault-injection"))]
            // SAFETY: forwarded contract; `name` is NUL-terminated.
            let addr = unsafe { instance.raw.get_device_proc_addr(_handle, name.as_ptr()) }
                .map_or(std::ptr::null(), |f| f as *const std::ffi::c_void);
            addr
        });
        Self { fp }
    }
}

/// Where a structure's storage lives.
#[derive(Debug)]
pub(crate) enum Storage {
    /// A buffer the structure owns, destroyed with it. Its memory is
    /// boxed: placed structures, the ones made by the thousand, stay small
    /// (56 bytes rather than 104), so lists of them move and free cheaply.
    Owned {
        buffer: vk::Buffer,
        block: Box<Block>,
    },
    /// A range of the caller's buffer.
    Placed { buffer: vk::Buffer, offset: u64 },
}

/// The device's acceleration-structure functions, or `Unsupported`.
pub(super) fn fns(shared: &DeviceShared) -> Result<&AccelerationFns, Error> {
    shared.accel.as_ref().ok_or_else(checks::unsupported_device)
}

/// The shared checks' view of this device's limits.
pub(super) fn build_limits(shared: &DeviceShared) -> BuildLimits {
    BuildLimits::new(
        &shared.limits,
        shared.features,
        u64::from(shared.physical.ray_limits.min_scratch_offset_alignment),
    )
}

impl checks::AccelerationFacts for super::Api {
    fn structure(structure: &super::AccelerationStructure) -> StructureFacts {
        StructureFacts {
            kind: structure.kind,
            size: structure.size,
            flags: structure.last_build_flags(),
        }
    }
}

/// The Vulkan type of a structure kind.
pub(super) fn map_kind(kind: AccelerationStructureKind) -> vk::AccelerationStructureTypeKHR {
    match kind {
        AccelerationStructureKind::BottomLevel => vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
        AccelerationStructureKind::TopLevel => vk::AccelerationStructureTypeKHR::TOP_LEVEL,
    }
}

/// Vulkan build flags of flags the shared check passed
/// (`validate::acceleration::check_flags`).
pub(super) fn map_build_flags(
    flags: wgt::AccelerationStructureFlags,
) -> vk::BuildAccelerationStructureFlagsKHR {
    use vk::BuildAccelerationStructureFlagsKHR as V;
    use wgt::AccelerationStructureFlags as F;
    let mut out = V::empty();
    for (f, v) in [
        (F::ALLOW_UPDATE, V::ALLOW_UPDATE),
        (F::ALLOW_COMPACTION, V::ALLOW_COMPACTION),
        (F::PREFER_FAST_TRACE, V::PREFER_FAST_TRACE),
        (F::PREFER_FAST_BUILD, V::PREFER_FAST_BUILD),
        (F::LOW_MEMORY, V::LOW_MEMORY),
        // Position fetch (VK_KHR_ray_tracing_position_fetch) reads the
        // structure's vertex data.
        (F::ALLOW_RAY_HIT_VERTEX_RETURN, V::ALLOW_DATA_ACCESS),
    ] {
        if flags.contains(f) {
            out |= v;
        }
    }
    // USE_TRANSFORM only restates that a geometry has a transform.
    out
}

/// The Vulkan position format of a format the shared check allowed
/// (`Float32x3`, and with the extended-formats feature the formats Vulkan
/// requires wherever the extension exists).
fn map_vertex_format(format: wgt::VertexFormat) -> vk::Format {
    use wgt::VertexFormat as V;
    match format {
        V::Float32x3 => vk::Format::R32G32B32_SFLOAT,
        V::Float32x2 => vk::Format::R32G32_SFLOAT,
        V::Float16x2 => vk::Format::R16G16_SFLOAT,
        V::Float16x4 => vk::Format::R16G16B16A16_SFLOAT,
        V::Snorm16x2 => vk::Format::R16G16_SNORM,
        V::Snorm16x4 => vk::Format::R16G16B16A16_SNORM,
        // Never reached: `check_geometry` allows only the formats above.
        _ => vk::Format::UNDEFINED,
    }
}

/// The device address of `buffer` plus `offset` for builds (`addresses`),
/// 0 for size queries (which read no addresses). The shared check made
/// sure a build's buffers are present, with an input usage, and that the
/// range lies in them.
fn input_address(
    shared: &DeviceShared,
    addresses: bool,
    buffer: Option<&super::Buffer>,
    offset: u64,
) -> u64 {
    match buffer {
        Some(buffer) if addresses => {
            // SAFETY: the buffer is live (caller's contract) and was created
            // with SHADER_DEVICE_ADDRESS (its input usage on an AS device).
            let base = unsafe { buffer_address(shared, buffer) };
            base + offset
        }
        _ => 0,
    }
}

/// A buffer's device address: asked of the driver on first use, then
/// kept in the buffer (it never changes), so builds that name the same
/// input, scratch or storage buffer again make no driver call for it.
///
/// # Safety
/// The buffer is live and has `SHADER_DEVICE_ADDRESS` usage.
pub(super) unsafe fn buffer_address(shared: &DeviceShared, buffer: &super::Buffer) -> u64 {
    use std::sync::atomic::Ordering::Relaxed;
    let known = buffer.address.load(Relaxed);
    if known != 0 {
        return known;
    }
    let info = vk::BufferDeviceAddressInfo::default().buffer(buffer.raw);
    // SAFETY: forwarded contract.
    let address = unsafe { shared.raw.get_buffer_device_address(&info) };
    // Racing readers store the same value.
    buffer.address.store(address, Relaxed);
    address
}

/// Converts build entries into Vulkan geometries, appending one geometry,
/// one build range and one primitive count per entry. The entries passed
/// the shared checks (`validate::acceleration::check_geometry`, with
/// buffers when `addresses`). With `addresses` false (size queries)
/// buffers are not needed and addresses are 0, except that a transform is
/// marked present (Vulkan looks at nothing else). Returns the kind the
/// entries build.
pub(super) fn convert_entries(
    shared: &DeviceShared,
    entries: &AccelerationStructureEntries<'_, super::Buffer>,
    addresses: bool,
    geometries: &mut Vec<vk::AccelerationStructureGeometryKHR<'static>>,
    ranges: &mut Vec<vk::AccelerationStructureBuildRangeInfoKHR>,
    counts: &mut Vec<u32>,
) -> AccelerationStructureKind {
    let mut push = |data, ty, flags, count: u32| {
        geometries.push(
            vk::AccelerationStructureGeometryKHR::default()
                .geometry_type(ty)
                .geometry(data)
                .flags(flags),
        );
        ranges.push(vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(count));
        counts.push(count);
    };
    let address = |buffer, offset| vk::DeviceOrHostAddressConstKHR {
        device_address: input_address(shared, addresses, buffer, offset),
    };
    match entries {
        AccelerationStructureEntries::Triangles(list) => {
            for t in *list {
                let mut data = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
                    .vertex_format(map_vertex_format(t.vertex_format))
                    .vertex_data(address(t.vertex_buffer, t.vertex_offset))
                    .vertex_stride(t.vertex_stride)
                    .max_vertex(t.vertex_count.saturating_sub(1))
                    .index_type(vk::IndexType::NONE_KHR);
                if let Some(indices) = &t.indices {
                    let ty = match indices.format {
                        wgt::IndexFormat::Uint16 => vk::IndexType::UINT16,
                        wgt::IndexFormat::Uint32 => vk::IndexType::UINT32,
                    };
                    data = data
                        .index_type(ty)
                        .index_data(address(indices.buffer, indices.offset));
                }
                if let Some((buffer, offset)) = t.transform {
                    let transform = if addresses {
                        address(Some(buffer), offset)
                    } else {
                        // Size queries only test the transform for null.
                        vk::DeviceOrHostAddressConstKHR { device_address: 16 }
                    };
                    data = data.transform_data(transform);
                }
                let geometry = vk::AccelerationStructureGeometryDataKHR { triangles: data };
                push(
                    geometry,
                    vk::GeometryTypeKHR::TRIANGLES,
                    map_geometry_flags(t.flags),
                    checks::triangle_count(t),
                );
            }
            AccelerationStructureKind::BottomLevel
        }
        AccelerationStructureEntries::Aabbs(list) => {
            for a in *list {
                let data = vk::AccelerationStructureGeometryAabbsDataKHR::default()
                    .data(address(a.buffer, a.offset))
                    .stride(a.stride);
                let geometry = vk::AccelerationStructureGeometryDataKHR { aabbs: data };
                push(
                    geometry,
                    vk::GeometryTypeKHR::AABBS,
                    map_geometry_flags(a.flags),
                    a.count,
                );
            }
            AccelerationStructureKind::BottomLevel
        }
        AccelerationStructureEntries::Instances(i) => {
            let data = vk::AccelerationStructureGeometryInstancesDataKHR::default()
                .array_of_pointers(false)
                .data(address(i.buffer, i.offset));
            let geometry = vk::AccelerationStructureGeometryDataKHR { instances: data };
            push(
                geometry,
                vk::GeometryTypeKHR::INSTANCES,
                vk::GeometryFlagsKHR::empty(),
                i.count,
            );
            AccelerationStructureKind::TopLevel
        }
    }
}

/// Vulkan geometry flags.
fn map_geometry_flags(flags: wgt::AccelerationStructureGeometryFlags) -> vk::GeometryFlagsKHR {
    use wgt::AccelerationStructureGeometryFlags as F;
    let mut out = vk::GeometryFlagsKHR::empty();
    if flags.contains(F::OPAQUE) {
        out |= vk::GeometryFlagsKHR::OPAQUE;
    }
    if flags.contains(F::NO_DUPLICATE_ANY_HIT_INVOCATION) {
        out |= vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION;
    }
    out
}

/// Asks the driver the sizes of a build of `geometries` (with their
/// primitive `counts`, one each).
///
/// # Safety
/// `fns` are this device's; the geometries are well formed (from
/// [`convert_entries`]).
pub(super) unsafe fn query_sizes(
    shared: &DeviceShared,
    fns: &AccelerationFns,
    kind: AccelerationStructureKind,
    flags: vk::BuildAccelerationStructureFlagsKHR,
    geometries: &[vk::AccelerationStructureGeometryKHR<'static>],
    counts: &[u32],
) -> AccelerationStructureBuildSizes {
    let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
        .ty(map_kind(kind))
        .flags(flags)
        .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
        .geometries(geometries);
    let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
    // SAFETY: `info` points at `geometries`, and `counts` has one entry per
    // geometry (both built together by `convert_entries`); all live across
    // the call.
    unsafe {
        (fns.fp.get_acceleration_structure_build_sizes_khr)(
            shared.raw.handle(),
            vk::AccelerationStructureBuildTypeKHR::DEVICE,
            &info,
            counts.as_ptr(),
            &mut sizes,
        )
    };
    AccelerationStructureBuildSizes {
        acceleration_structure_size: sizes.acceleration_structure_size,
        update_scratch_size: sizes.update_scratch_size,
        build_scratch_size: sizes.build_scratch_size,
    }
}

/// The sizes the driver gave one encoder for the last shape of build it
/// asked about, so a run of builds of one shape (a batch of like meshes,
/// or a structure rebuilt every frame) asks the driver once.
///
/// `vkGetAccelerationStructureBuildSizesKHR` ignores the build's mode, its
/// structures and every address but whether a transform is given (the
/// command's description in the specification): its answer depends on the
/// structure's type, the build flags and each geometry's type, flags,
/// formats, stride, vertex and primitive counts and transform, which is
/// what a shape ([`push_shape`]) holds.
#[derive(Debug, Default)]
pub(super) struct SizeMemo {
    /// The shape last asked about.
    shape: Vec<u64>,
    /// The shape of the build at hand (kept for its capacity).
    next: Vec<u64>,
    /// The driver's answer for `shape`.
    sizes: Option<AccelerationStructureBuildSizes>,
}

impl SizeMemo {
    /// The sizes of a build of `entries` with `flags`: the last answer if
    /// the shape is the one last asked about, else `query`'s (remembered).
    pub(super) fn sizes<B: ?Sized>(
        &mut self,
        flags: vk::BuildAccelerationStructureFlagsKHR,
        entries: &AccelerationStructureEntries<'_, B>,
        query: impl FnOnce() -> AccelerationStructureBuildSizes,
    ) -> AccelerationStructureBuildSizes {
        self.next.clear();
        push_shape(flags, entries, &mut self.next);
        if let Some(sizes) = self.sizes.filter(|_| self.next == self.shape) {
            return sizes;
        }
        let sizes = query();
        std::mem::swap(&mut self.shape, &mut self.next);
        self.sizes = Some(sizes);
        sizes
    }
}

/// Appends what the driver's size query reads of a build (see
/// [`SizeMemo`]) to `out`, one word per field.
fn push_shape<B: ?Sized>(
    flags: vk::BuildAccelerationStructureFlagsKHR,
    entries: &AccelerationStructureEntries<'_, B>,
    out: &mut Vec<u64>,
) {
    out.push(u64::from(flags.as_raw()));
    match entries {
        AccelerationStructureEntries::Triangles(list) => {
            for t in *list {
                let index = t.indices.as_ref().map_or(0, |i| match i.format {
                    wgt::IndexFormat::Uint16 => 1,
                    wgt::IndexFormat::Uint32 => 2,
                });
                out.extend([
                    0,
                    u64::from(t.flags.bits()),
                    map_vertex_format(t.vertex_format).as_raw() as u64,
                    t.vertex_stride,
                    u64::from(t.vertex_count),
                    index,
                    u64::from(t.transform.is_some()),
                    u64::from(checks::triangle_count(t)),
                ]);
            }
        }
        AccelerationStructureEntries::Aabbs(list) => {
            for a in *list {
                out.extend([1, u64::from(a.flags.bits()), a.stride, u64::from(a.count)]);
            }
        }
        AccelerationStructureEntries::Instances(i) => out.extend([2, u64::from(i.count)]),
    }
}

/// Sizes of a structure and its scratch buffers for the given geometry.
///
/// # Safety
/// Buffers named in the entries, if any, came from this device.
pub(super) unsafe fn build_sizes(
    device: &super::Device,
    desc: &GetAccelerationStructureBuildSizesDescriptor<super::Api>,
) -> Result<AccelerationStructureBuildSizes, Error> {
    let shared = &*device.shared;
    let fns = fns(shared)?;
    checks::check_size_query::<super::Api>(desc.entries, desc.flags, &build_limits(shared))?;
    let flags = map_build_flags(desc.flags);
    let (mut geometries, mut ranges, mut counts) = (Vec::new(), Vec::new(), Vec::new());
    let kind = convert_entries(
        shared,
        desc.entries,
        false,
        &mut geometries,
        &mut ranges,
        &mut counts,
    );
    // SAFETY: the geometries came from `convert_entries`.
    Ok(unsafe { query_sizes(shared, fns, kind, flags, &geometries, &counts) })
}

/// Creates an acceleration structure (see the module docs).
///
/// # Safety
/// A placement buffer came from this device and outlives the structure.
pub(super) unsafe fn create(
    device: &super::Device,
    desc: &AccelerationStructureDescriptor<super::Api>,
) -> Result<super::AccelerationStructure, Error> {
    let shared = &*device.shared;
    let fns = fns(shared)?;
    let placement = match desc.placement {
        AccelerationStructurePlacement::Owned => None,
        AccelerationStructurePlacement::InBuffer { buffer, offset } => Some((
            crate::validate::BufferFacts {
                size: buffer.size,
                usage: buffer.usage,
            },
            offset,
        )),
    };
    checks::check_create(desc.size, placement, shared.limits.max_buffer_size)?;
    let storage = match desc.placement {
        AccelerationStructurePlacement::Owned => {
            let info = vk::BufferCreateInfo::default()
                .size(desc.size)
                .usage(
                    vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR
                        | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
                )
                .sharing_mode(vk::SharingMode::EXCLUSIVE);
            // SAFETY: a valid description: non-zero size within the limit,
            // usages of extensions the device enabled.
            let created = unsafe {
                shared.memory.create_buffer(
                    &info,
                    Memory::Device,
                    &shared.counters.memory_allocations,
                )
            };
            let (buffer, block, _) = created.map_err(|e| match e {
                AllocError::NoSuitableMemory => Error::Device(DeviceError::OutOfMemory),
                AllocError::Device(d) => Error::Device(d),
            })?;
            Storage::Owned {
                buffer,
                block: Box::new(block),
            }
        }
        AccelerationStructurePlacement::InBuffer { buffer, offset } => {
            // Usage, alignment and room checked above (validate/acceleration.rs).
            Storage::Placed {
                buffer: buffer.raw,
                offset,
            }
        }
    };
    let (buffer, offset) = match &storage {
        Storage::Owned { buffer, .. } => (*buffer, 0),
        Storage::Placed { buffer, offset } => (*buffer, *offset),
    };
    let info = vk::AccelerationStructureCreateInfoKHR::default()
        .buffer(buffer)
        .offset(offset)
        .size(desc.size)
        .ty(map_kind(desc.kind));
    let mut raw = vk::AccelerationStructureKHR::null();
    // SAFETY: the buffer has ACCELERATION_STRUCTURE_STORAGE usage (owned:
    // above; placed: STORAGE maps to it on this device) and the range was
    // checked to lie in it at a 256-byte-aligned offset.
    let result = unsafe {
        (fns.fp.create_acceleration_structure_khr)(
            shared.raw.handle(),
            &info,
            std::ptr::null(),
            &mut raw,
        )
    };
    if result != vk::Result::SUCCESS {
        // SAFETY: nothing else uses the storage.
        unsafe { release_storage(shared, storage) };
        return Err(Error::Device(map_err(result)));
    }
    if let Some(label) = desc.label {
        // SAFETY: `raw` is live.
        unsafe { set_object_name(shared, raw, label) };
    }
    Ok(super::AccelerationStructure {
        raw,
        kind: desc.kind,
        size: desc.size,
        storage,
        // Read on first use (`device_address`): most structures never need it.
        address: AtomicU64::new(0),
        built_flags: AtomicU8::new(0),
    })
}

/// Destroys the owned buffer of a structure, if it has one.
///
/// # Safety
/// No structure or GPU work uses the storage any more.
unsafe fn release_storage(shared: &DeviceShared, storage: Storage) {
    if let Storage::Owned { buffer, block } = storage {
        // SAFETY: forwarded contract; made by `create` with this allocator.
        unsafe {
            shared
                .memory
                .destroy_buffer(buffer, *block, &shared.counters.memory_allocations)
        };
    }
}

/// Destroys a structure and its owned buffer.
///
/// # Safety
/// Came from this device; no pending GPU work uses it.
pub(super) unsafe fn destroy(device: &super::Device, structure: super::AccelerationStructure) {
    let shared = &*device.shared;
    match &shared.accel {
        // SAFETY: forwarded contract.
        Some(fns) => unsafe {
            (fns.fp.destroy_acceleration_structure_khr)(
                shared.raw.handle(),
                structure.raw,
                std::ptr::null(),
            )
        },
        None => {
            crate::refusal::refused!("keel-hal: acceleration structure of a device without them")
        }
    }
    // SAFETY: the structure, its only user, is gone.
    unsafe { release_storage(shared, structure.storage) };
}

/// The structure's device address: asked of the driver on first use, then
/// cached (the address of a structure never changes).
///
/// # Safety
/// Came from this device.
pub(super) unsafe fn device_address(
    device: &super::Device,
    structure: &super::AccelerationStructure,
) -> u64 {
    let cached = structure.address.load(Ordering::Relaxed);
    if cached != 0 {
        return cached;
    }
    let shared = &*device.shared;
    let Some(fns) = &shared.accel else {
        crate::refusal::refused!("keel-hal: acceleration structure of a device without them");
        return 0;
    };
    let info = vk::AccelerationStructureDeviceAddressInfoKHR::default()
        .acceleration_structure(structure.raw);
    // SAFETY: `structure.raw` is a live structure of this device (caller's
    // contract), made with the extension `fns` belongs to.
    let address = unsafe {
        (fns.fp.get_acceleration_structure_device_address_khr)(shared.raw.handle(), &info)
    };
    // Racing readers store the same value.
    structure.address.store(address, Ordering::Relaxed);
    address
}

/// The structure's size as created.
///
/// # Safety
/// None beyond the trait's: the structure is live.
pub(super) unsafe fn size(structure: &super::AccelerationStructure) -> u64 {
    structure.size
}

impl super::AccelerationStructure {
    /// Bottom or top level.
    pub fn kind(&self) -> AccelerationStructureKind {
        self.kind
    }

    /// Size in bytes, as created.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The flags of the last build (or copy) recorded into it: recording
    /// order, not execution. Empty before the first.
    pub fn last_build_flags(&self) -> wgt::AccelerationStructureFlags {
        wgt::AccelerationStructureFlags::from_bits_truncate(
            self.built_flags.load(Ordering::Relaxed),
        )
    }

    /// Records the flags of a build or copy into it.
    pub(super) fn set_build_flags(&self, flags: wgt::AccelerationStructureFlags) {
        self.built_flags.store(flags.bits(), Ordering::Relaxed);
    }
}

impl super::Adapter {
    /// `minAccelerationStructureScratchOffsetAlignment`: scratch offsets of
    /// builds must be multiples of it (1 where the adapter has no
    /// acceleration structures). [`SAFE_SCRATCH_OFFSET_ALIGNMENT`] (256)
    /// covers every driver.
    pub fn min_scratch_offset_alignment(&self) -> u64 {
        u64::from(self.info.ray_limits.min_scratch_offset_alignment.max(1))
    }
}

impl super::Device {
    /// `minAccelerationStructureScratchOffsetAlignment` of the device's
    /// adapter (see [`super::Adapter::min_scratch_offset_alignment`]).
    pub fn min_scratch_offset_alignment(&self) -> u64 {
        u64::from(
            self.shared
                .physical
                .ray_limits
                .min_scratch_offset_alignment
                .max(1),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AccelerationStructureTriangles, TriangleIndices};
    use wgt::AccelerationStructureFlags as F;

    fn triangles<'a>(
        buffer: &'a u8,
        offset: u64,
        vertex_count: u32,
    ) -> AccelerationStructureTriangles<'a, u8> {
        AccelerationStructureTriangles {
            vertex_buffer: Some(buffer),
            vertex_offset: offset,
            vertex_format: wgt::VertexFormat::Float32x3,
            vertex_stride: 12,
            vertex_count,
            indices: Some(TriangleIndices {
                buffer: Some(buffer),
                offset,
                format: wgt::IndexFormat::Uint32,
                count: 3,
            }),
            transform: None,
            flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
        }
    }

    #[test]
    fn builds_of_one_shape_ask_the_driver_once() {
        let (a, b) = (0u8, 1u8);
        let flags = vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION;
        let mut memo = SizeMemo::default();
        let mut asked = 0;
        let mut sizes =
            |memo: &mut SizeMemo, flags, list: &[AccelerationStructureTriangles<'_, u8>]| {
                memo.sizes(
                    flags,
                    &AccelerationStructureEntries::Triangles(list),
                    || {
                        asked += 1;
                        AccelerationStructureBuildSizes {
                            acceleration_structure_size: 256 * asked,
                            ..Default::default()
                        }
                    },
                )
            };
        let first = sizes(&mut memo, flags, &[triangles(&a, 0, 3)]);
        // Other buffers and offsets: the same shape, the same answer.
        assert_eq!(sizes(&mut memo, flags, &[triangles(&b, 64, 3)]), first);
        // Another vertex count, other flags, another geometry count: asked.
        let more = sizes(&mut memo, flags, &[triangles(&a, 0, 4)]);
        assert_ne!(more, first);
        let fast = vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_BUILD;
        sizes(&mut memo, fast, &[triangles(&a, 0, 4)]);
        sizes(&mut memo, fast, &[triangles(&a, 0, 4), triangles(&a, 0, 4)]);
        // Back to the first shape: asked again (one answer is remembered).
        sizes(&mut memo, flags, &[triangles(&a, 0, 3)]);
        assert_eq!(asked, 5);
    }

    #[test]
    fn build_flags_map_to_vulkan() {
        let v = map_build_flags(F::ALLOW_COMPACTION | F::PREFER_FAST_TRACE | F::USE_TRANSFORM);
        assert_eq!(
            v,
            vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION
                | vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE
        );
        assert_eq!(
            map_build_flags(F::ALLOW_RAY_HIT_VERTEX_RETURN),
            vk::BuildAccelerationStructureFlagsKHR::ALLOW_DATA_ACCESS
        );
        // What the device cannot do never gets here: the shared check refuses it.
        let limits = checks::BuildLimits::default();
        for flags in [
            F::ALLOW_RAY_HIT_VERTEX_RETURN,
            F::PREFER_FAST_TRACE | F::PREFER_FAST_BUILD,
        ] {
            assert!(checks::check_flags(flags, &limits).is_err(), "{flags:?}");
        }
    }
}
