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
//! Input buffers are read through device addresses: the hal gives buffers
//! with `BLAS_INPUT`/`TLAS_INPUT` usage `ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY
//! | SHADER_DEVICE_ADDRESS | STORAGE_BUFFER` and `STORAGE` buffers
//! `SHADER_DEVICE_ADDRESS | ACCELERATION_STRUCTURE_STORAGE` on such devices
//! (`conv::map_buffer_usage`), so any of them may be scratch, and `STORAGE`
//! buffers may hold structures. Offsets of the entries are folded into the
//! addresses; every build range has a primitive offset of 0.

use std::sync::atomic::{AtomicU8, Ordering};

use ash::khr::acceleration_structure::DeviceFn;
use ash::vk;

use super::device::set_object_name;
use super::memory::{AllocError, Block};
use super::{map_err, DeviceShared};
use crate::{
    AccelerationStructureBuildSizes, AccelerationStructureDescriptor, AccelerationStructureEntries,
    AccelerationStructureError as Error, AccelerationStructureKind, AccelerationStructurePlacement,
    DeviceError, GetAccelerationStructureBuildSizesDescriptor, Memory,
};

/// A scratch-offset alignment that covers every known driver (Vulkan
/// allows at most 256 for `minAccelerationStructureScratchOffsetAlignment`),
/// for code that does not ask the device.
pub const SAFE_SCRATCH_OFFSET_ALIGNMENT: u64 = 256;

/// Bytes of one instance record.
const INSTANCE_SIZE: u64 = crate::TLAS_INSTANCE_SIZE as u64;

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
        instance: &super::instance::InstanceShared,
        device: &ash::Device,
    ) -> Self {
        let _handle = device.handle();
        let fp = DeviceFn::load(|name| {
            #[cfg(feature = "fault-injection")]
            // SAFETY: forwarded contract.
            let addr = unsafe { super::fault::device_proc_addr(instance, name) };
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
    /// A buffer the structure owns, destroyed with it.
    Owned { buffer: vk::Buffer, block: Block },
    /// A range of the caller's buffer.
    Placed { buffer: vk::Buffer, offset: u64 },
}

/// The device's acceleration-structure functions, or `Unsupported`.
pub(super) fn fns(shared: &DeviceShared) -> Result<&AccelerationFns, Error> {
    shared.accel.as_ref().ok_or(Error::Unsupported(
        "acceleration structures need a device opened with ACCELERATION_STRUCTURE",
    ))
}

/// The Vulkan type of a structure kind.
pub(super) fn map_kind(kind: AccelerationStructureKind) -> vk::AccelerationStructureTypeKHR {
    match kind {
        AccelerationStructureKind::BottomLevel => vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
        AccelerationStructureKind::TopLevel => vk::AccelerationStructureTypeKHR::TOP_LEVEL,
    }
}

/// Vulkan build flags; `ALLOW_RAY_HIT_VERTEX_RETURN` (position fetch) is
/// not supported, and the two preferences exclude each other.
pub(super) fn map_build_flags(
    flags: wgt::AccelerationStructureFlags,
) -> Result<vk::BuildAccelerationStructureFlagsKHR, Error> {
    use vk::BuildAccelerationStructureFlagsKHR as V;
    use wgt::AccelerationStructureFlags as F;
    if flags.contains(F::ALLOW_RAY_HIT_VERTEX_RETURN) {
        return Err(Error::Unsupported("ALLOW_RAY_HIT_VERTEX_RETURN"));
    }
    if flags.contains(F::PREFER_FAST_TRACE | F::PREFER_FAST_BUILD) {
        return Err(Error::Unsupported(
            "PREFER_FAST_TRACE and PREFER_FAST_BUILD together",
        ));
    }
    let mut out = V::empty();
    for (f, v) in [
        (F::ALLOW_UPDATE, V::ALLOW_UPDATE),
        (F::ALLOW_COMPACTION, V::ALLOW_COMPACTION),
        (F::PREFER_FAST_TRACE, V::PREFER_FAST_TRACE),
        (F::PREFER_FAST_BUILD, V::PREFER_FAST_BUILD),
        (F::LOW_MEMORY, V::LOW_MEMORY),
    ] {
        if flags.contains(f) {
            out |= v;
        }
    }
    // USE_TRANSFORM only restates that a geometry has a transform.
    Ok(out)
}

/// The Vulkan position format and its component size, where allowed.
fn map_vertex_format(
    shared: &DeviceShared,
    format: wgt::VertexFormat,
) -> Result<(vk::Format, u64), Error> {
    use wgt::VertexFormat as V;
    if format == V::Float32x3 {
        return Ok((vk::Format::R32G32B32_SFLOAT, 4));
    }
    let extended = shared
        .features
        .contains(wgt::Features::EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS);
    // The formats Vulkan requires for AS vertex buffers wherever the
    // extension exists.
    let mapped = match format {
        V::Float32x2 => (vk::Format::R32G32_SFLOAT, 4),
        V::Float16x2 => (vk::Format::R16G16_SFLOAT, 2),
        V::Float16x4 => (vk::Format::R16G16B16A16_SFLOAT, 2),
        V::Snorm16x2 => (vk::Format::R16G16_SNORM, 2),
        V::Snorm16x4 => (vk::Format::R16G16B16A16_SNORM, 2),
        _ => {
            return Err(Error::Unsupported(
                "this vertex format in acceleration structures",
            ))
        }
    };
    if !extended {
        return Err(Error::Unsupported(
            "vertex formats other than Float32x3 need EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS",
        ));
    }
    Ok(mapped)
}

/// The device address of `buffer` plus `offset`, after checking its usage,
/// the offset's alignment and that `len` bytes from it lie in the buffer.
/// Size queries (`addresses` false) check nothing about buffers and answer
/// 0 (a buffer there may be `None`).
fn input_address(
    shared: &DeviceShared,
    addresses: bool,
    buffer: Option<&super::Buffer>,
    offset: u64,
    len: u64,
    align: u64,
    what: &'static str,
) -> Result<u64, Error> {
    if !addresses {
        return Ok(0);
    }
    let buffer = buffer.ok_or(Error::MissingInput(what))?;
    let inputs = wgt::BufferUsages::BLAS_INPUT | wgt::BufferUsages::TLAS_INPUT;
    if !buffer.usage.intersects(inputs) {
        return Err(Error::MissingInput(
            "a build input buffer needs BLAS_INPUT or TLAS_INPUT usage",
        ));
    }
    if offset % align != 0 {
        return Err(Error::MissingInput("a build input offset is misaligned"));
    }
    if offset.checked_add(len).is_none_or(|end| end > buffer.size) {
        return Err(Error::MissingInput(
            "a build input range runs past the end of its buffer",
        ));
    }
    // SAFETY: the buffer is live (caller's contract) and was created with
    // SHADER_DEVICE_ADDRESS (its input usage on an AS device).
    Ok(unsafe { buffer_address(shared, buffer) } + offset)
}

/// A buffer's device address.
///
/// # Safety
/// The buffer is live and has `SHADER_DEVICE_ADDRESS` usage.
pub(super) unsafe fn buffer_address(shared: &DeviceShared, buffer: &super::Buffer) -> u64 {
    let info = vk::BufferDeviceAddressInfo::default().buffer(buffer.raw);
    // SAFETY: forwarded contract.
    unsafe { shared.raw.get_buffer_device_address(&info) }
}

/// Converts build entries into Vulkan geometries, appending one geometry,
/// one build range and one primitive count per entry. With `addresses`
/// false (size queries) buffers are not needed and addresses are 0, except
/// that a transform is marked present (Vulkan looks at nothing else).
/// Returns the kind the entries build.
pub(super) fn convert_entries(
    shared: &DeviceShared,
    entries: &AccelerationStructureEntries<'_, super::Buffer>,
    addresses: bool,
    geometries: &mut Vec<vk::AccelerationStructureGeometryKHR<'static>>,
    ranges: &mut Vec<vk::AccelerationStructureBuildRangeInfoKHR>,
    counts: &mut Vec<u32>,
) -> Result<AccelerationStructureKind, Error> {
    let limits = &shared.limits;
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
    match entries {
        AccelerationStructureEntries::Triangles(list) => {
            check_blas_limits(limits, list.len(), list.iter().map(triangle_count))?;
            for t in *list {
                let (format, component) = map_vertex_format(shared, t.vertex_format)?;
                if t.vertex_stride % component != 0 || t.vertex_stride > u64::from(u32::MAX) {
                    return Err(Error::MissingInput(
                        "vertex stride must be a multiple of the component size",
                    ));
                }
                let vertex_bytes = match t.vertex_count {
                    0 => 0,
                    n => u64::from(n - 1) * t.vertex_stride + t.vertex_format.size(),
                };
                let vertices = input_address(
                    shared,
                    addresses,
                    t.vertex_buffer,
                    t.vertex_offset,
                    vertex_bytes,
                    component,
                    "a triangle geometry without its vertex buffer",
                )?;
                let mut data = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
                    .vertex_format(format)
                    .vertex_data(vk::DeviceOrHostAddressConstKHR {
                        device_address: vertices,
                    })
                    .vertex_stride(t.vertex_stride)
                    .max_vertex(t.vertex_count.saturating_sub(1))
                    .index_type(vk::IndexType::NONE_KHR);
                if let Some(indices) = &t.indices {
                    if indices.count % 3 != 0 {
                        return Err(Error::MissingInput("index count must be a multiple of 3"));
                    }
                    let (ty, size) = match indices.format {
                        wgt::IndexFormat::Uint16 => (vk::IndexType::UINT16, 2),
                        wgt::IndexFormat::Uint32 => (vk::IndexType::UINT32, 4),
                    };
                    let address = input_address(
                        shared,
                        addresses,
                        indices.buffer,
                        indices.offset,
                        u64::from(indices.count) * size,
                        size,
                        "an indexed geometry without its index buffer",
                    )?;
                    data = data
                        .index_type(ty)
                        .index_data(vk::DeviceOrHostAddressConstKHR {
                            device_address: address,
                        });
                }
                if let Some((buffer, offset)) = t.transform {
                    let address = if addresses {
                        input_address(shared, true, Some(buffer), offset, 48, 16, "a transform")?
                    } else {
                        // Size queries only test the transform for null.
                        16
                    };
                    data = data.transform_data(vk::DeviceOrHostAddressConstKHR {
                        device_address: address,
                    });
                }
                let geometry = vk::AccelerationStructureGeometryDataKHR { triangles: data };
                let flags = map_geometry_flags(t.flags);
                push(
                    geometry,
                    vk::GeometryTypeKHR::TRIANGLES,
                    flags,
                    triangle_count(t),
                );
            }
            Ok(AccelerationStructureKind::BottomLevel)
        }
        AccelerationStructureEntries::Aabbs(list) => {
            check_blas_limits(limits, list.len(), list.iter().map(|a| a.count))?;
            for a in *list {
                if a.stride % 8 != 0 || a.stride < 24 {
                    return Err(Error::MissingInput(
                        "AABB stride must be a multiple of 8 and at least 24",
                    ));
                }
                let bytes = match a.count {
                    0 => 0,
                    n => u64::from(n - 1) * a.stride + 24,
                };
                let address = input_address(
                    shared,
                    addresses,
                    a.buffer,
                    a.offset,
                    bytes,
                    8,
                    "an AABB geometry without its buffer",
                )?;
                let data = vk::AccelerationStructureGeometryAabbsDataKHR::default()
                    .data(vk::DeviceOrHostAddressConstKHR {
                        device_address: address,
                    })
                    .stride(a.stride);
                let geometry = vk::AccelerationStructureGeometryDataKHR { aabbs: data };
                push(
                    geometry,
                    vk::GeometryTypeKHR::AABBS,
                    map_geometry_flags(a.flags),
                    a.count,
                );
            }
            Ok(AccelerationStructureKind::BottomLevel)
        }
        AccelerationStructureEntries::Instances(i) => {
            if i.count > limits.max_tlas_instance_count {
                return Err(Error::Unsupported(
                    "more instances than max_tlas_instance_count",
                ));
            }
            let address = input_address(
                shared,
                addresses,
                i.buffer,
                i.offset,
                u64::from(i.count) * INSTANCE_SIZE,
                16,
                "an instance geometry without its buffer",
            )?;
            let data = vk::AccelerationStructureGeometryInstancesDataKHR::default()
                .array_of_pointers(false)
                .data(vk::DeviceOrHostAddressConstKHR {
                    device_address: address,
                });
            let geometry = vk::AccelerationStructureGeometryDataKHR { instances: data };
            push(
                geometry,
                vk::GeometryTypeKHR::INSTANCES,
                vk::GeometryFlagsKHR::empty(),
                i.count,
            );
            Ok(AccelerationStructureKind::TopLevel)
        }
    }
}

/// Triangles of a geometry.
fn triangle_count(t: &crate::AccelerationStructureTriangles<'_, super::Buffer>) -> u32 {
    t.indices.as_ref().map_or(t.vertex_count, |i| i.count) / 3
}

/// Geometry and primitive counts against the device's BLAS limits.
fn check_blas_limits(
    limits: &wgt::Limits,
    geometries: usize,
    primitives: impl Iterator<Item = u32>,
) -> Result<(), Error> {
    if geometries > limits.max_blas_geometry_count as usize {
        return Err(Error::Unsupported(
            "more geometries than max_blas_geometry_count",
        ));
    }
    let total: u64 = primitives.map(u64::from).sum();
    if total > u64::from(limits.max_blas_primitive_count) {
        return Err(Error::Unsupported(
            "more primitives than max_blas_primitive_count",
        ));
    }
    Ok(())
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
    let flags = map_build_flags(desc.flags)?;
    let (mut geometries, mut ranges, mut counts) = (Vec::new(), Vec::new(), Vec::new());
    let kind = convert_entries(
        shared,
        desc.entries,
        false,
        &mut geometries,
        &mut ranges,
        &mut counts,
    )?;
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
    crate::validate::acceleration::check_create(desc.size, placement)?;
    let storage = match desc.placement {
        AccelerationStructurePlacement::Owned => {
            if desc.size > shared.limits.max_buffer_size {
                return Err(Error::Unsupported(
                    "a structure larger than max_buffer_size",
                ));
            }
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
            Storage::Owned { buffer, block }
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
    let address_info =
        vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(raw);
    // SAFETY: `raw` is a live structure of this device.
    let address = unsafe {
        (fns.fp.get_acceleration_structure_device_address_khr)(shared.raw.handle(), &address_info)
    };
    if let Some(label) = desc.label {
        // SAFETY: `raw` is live.
        unsafe { set_object_name(shared, raw, label) };
    }
    Ok(super::AccelerationStructure {
        raw,
        kind: desc.kind,
        size: desc.size,
        storage,
        address,
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
                .destroy_buffer(buffer, block, &shared.counters.memory_allocations)
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
        None => log::error!("keel-hal: acceleration structure of a device without them"),
    }
    // SAFETY: the structure, its only user, is gone.
    unsafe { release_storage(shared, structure.storage) };
}

/// The structure's device address (cached at creation).
///
/// # Safety
/// Came from this device.
pub(super) unsafe fn device_address(
    _device: &super::Device,
    structure: &super::AccelerationStructure,
) -> u64 {
    structure.address
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
    use wgt::AccelerationStructureFlags as F;

    #[test]
    fn build_flags_map_and_reject_what_vulkan_cannot_do() {
        let v = map_build_flags(F::ALLOW_COMPACTION | F::PREFER_FAST_TRACE | F::USE_TRANSFORM)
            .expect("valid");
        assert_eq!(
            v,
            vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION
                | vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE
        );
        assert!(map_build_flags(F::ALLOW_RAY_HIT_VERTEX_RETURN).is_err());
        assert!(map_build_flags(F::PREFER_FAST_TRACE | F::PREFER_FAST_BUILD).is_err());
    }
}
