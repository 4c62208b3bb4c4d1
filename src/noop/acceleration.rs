//! Acceleration structures on noop: sizes, storage, fake device addresses,
//! and the cheap checks of builds, copies and compacted-size reads.
//!
//! Noop traces no rays, so a structure is bookkeeping. What it needs is
//! computed deterministically from the geometry, the same on every run:
//!
//! - a structure: `128 + 64 × primitives` bytes, where primitives are
//!   triangles (index count / 3, or vertex count / 3 without indices),
//!   boxes, or instances, summed over the geometries;
//! - a build or an update: half of that as scratch.
//!
//! Flags do not change the sizes, and a compacted copy is as large as its
//! source: `read_acceleration_structure_compacted_sizes` writes each
//! structure's creation size.
//!
//! The checks, in the order they run (each returns the
//! [`AccelerationStructureError`] named; a failing call records nothing):
//!
//! - everything: a device opened without `ACCELERATION_STRUCTURE`
//!   (`Unsupported`);
//! - creation: size 0, a placement buffer without `STORAGE` usage, a
//!   placement offset that is not a multiple of 256, or a placement range
//!   past the end of its buffer (`InvalidPlacement`; `validate/acceleration.rs`,
//!   shared with every backend);
//! - size queries and builds: more geometries, primitives or instances
//!   than the device's limits, or a vertex format other than `Float32x3`
//!   (`Unsupported`);
//! - builds: geometry of the other level than the destination (or the
//!   update's source) (`WrongKind`); a geometry without its buffer, an
//!   update without a source (`MissingInput`); a destination smaller than
//!   the size computed above (`TooSmall`); a scratch range that is shorter
//!   than needed or whose offset is not a multiple of
//!   [`SCRATCH_ALIGNMENT`] (`Scratch`); an update whose source's last build
//!   lacks `ALLOW_UPDATE`, or whose flags differ from that build's
//!   (`MissingFlag`);
//! - copies: source and destination of different kinds (`WrongKind`); a
//!   compacting copy from a structure whose last build lacks
//!   `ALLOW_COMPACTION` (`MissingFlag`); a destination smaller than the
//!   source (`TooSmall`: a compacted copy is as large as its source here);
//! - compacted-size reads: a top-level structure (`WrongKind`), one whose
//!   last build lacks `ALLOW_COMPACTION` (`MissingFlag`), sizes that do not
//!   fit the buffer at the offset, or an offset that is not a multiple of 8
//!   (`InvalidPlacement`).
//!
//! These are the Vulkan backend's checks, in its order where it matters,
//! so code tested on noop fails the same way there. Recording one of these
//! commands outside a recording, or inside a pass, is logged and fails with
//! `Device(DeviceError::InvalidState(_))`.
//!
//! A structure's build flags are remembered when its build is *recorded*
//! (as Vulkan's cheap checks must: the GPU has not run it yet), so a
//! compaction recorded after the build in the same or a later recording
//! sees them. Executing a build or copy only marks the destination built.

use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::Arc;

use super::memory::{Charge, HostBytes};
use super::{AccelerationStructure, Api, Buffer, DeviceShared};
use crate::{
    AccelerationStructureBuildMode, AccelerationStructureBuildSizes, AccelerationStructureCopy,
    AccelerationStructureDescriptor, AccelerationStructureEntries, AccelerationStructureError,
    AccelerationStructureKind, AccelerationStructurePlacement,
    BuildAccelerationStructureDescriptor, DeviceError,
};

type Error = AccelerationStructureError;

/// What the offset of a scratch range must be a multiple of: 256, the
/// largest `minAccelerationStructureScratchOffsetAlignment` Vulkan allows,
/// so an offset that works on noop works on every adapter.
pub const SCRATCH_ALIGNMENT: u64 = 256;

/// What a placement offset must be a multiple of (fake addresses keep it).
use crate::validate::acceleration::{check_kind, PLACEMENT_ALIGNMENT};

/// Fixed bytes of every structure.
const BASE_SIZE: u64 = 128;

/// Bytes per primitive (triangle, box or instance).
const PRIMITIVE_SIZE: u64 = 64;

/// The first fake device address: far from 0, so a zeroed address (an
/// instance record never filled in) is never a structure's.
pub(crate) fn first_address() -> AtomicU64 {
    AtomicU64::new(1 << 32)
}

/// Where a structure's bytes live.
#[derive(Debug)]
pub(crate) enum Storage {
    /// Its own host bytes, charged to the memory budget.
    Owned { _bytes: HostBytes, _charge: Charge },
    /// A range of a caller's buffer, whose bytes it keeps alive.
    Placed {
        _bytes: Arc<HostBytes>,
        _offset: u64,
    },
}

/// What builds and copies change: the flags of the last build recorded
/// (record time, for the checks), and whether one has executed (submit time).
#[derive(Debug, Default)]
pub(crate) struct BuildState {
    /// `RECORDED | flags.bits()`, or 0 before any build was recorded.
    recorded: AtomicU16,
    built: AtomicBool,
}

/// Bit of `BuildState::recorded` set once a build (or copy) was recorded.
const RECORDED: u16 = 1 << 8;

impl BuildState {
    /// Flags of the last build recorded into the structure, if any.
    pub(crate) fn recorded_flags(&self) -> Option<wgt::AccelerationStructureFlags> {
        let bits = self.recorded.load(Ordering::Relaxed);
        (bits & RECORDED != 0)
            .then(|| wgt::AccelerationStructureFlags::from_bits_truncate(bits as u8))
    }

    fn record(&self, flags: Option<wgt::AccelerationStructureFlags>) {
        let bits = flags.map_or(0, |f| RECORDED | u16::from(f.bits()));
        self.recorded.store(bits, Ordering::Relaxed);
    }

    fn has_flag(&self, flag: wgt::AccelerationStructureFlags) -> bool {
        self.recorded_flags().is_some_and(|f| f.contains(flag))
    }

    /// Whether a build or copy into the structure has executed.
    pub(crate) fn is_built(&self) -> bool {
        self.built.load(Ordering::Relaxed)
    }

    /// Marks the structure built (a build or copy executed).
    pub(crate) fn mark_built(&self) {
        self.built.store(true, Ordering::Relaxed);
    }
}

/// The device limits the checks read, copied into each encoder.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Limits {
    max_blas_primitive_count: u32,
    max_blas_geometry_count: u32,
    max_tlas_instance_count: u32,
}

impl Limits {
    pub(crate) fn new(limits: &wgt::Limits) -> Self {
        Self {
            max_blas_primitive_count: limits.max_blas_primitive_count,
            max_blas_geometry_count: limits.max_blas_geometry_count,
            max_tlas_instance_count: limits.max_tlas_instance_count,
        }
    }
}

fn require_feature(shared: &DeviceShared) -> Result<(), Error> {
    if shared
        .hal_features
        .contains(crate::HalFeatures::ACCELERATION_STRUCTURE)
    {
        Ok(())
    } else {
        Err(Error::Unsupported(
            "acceleration structures need HalFeatures::ACCELERATION_STRUCTURE",
        ))
    }
}

/// The level of structure the entries build.
fn kind_of<B: ?Sized>(entries: &AccelerationStructureEntries<'_, B>) -> AccelerationStructureKind {
    match entries {
        AccelerationStructureEntries::Triangles(_) | AccelerationStructureEntries::Aabbs(_) => {
            AccelerationStructureKind::BottomLevel
        }
        AccelerationStructureEntries::Instances(_) => AccelerationStructureKind::TopLevel,
    }
}

/// Sizes for `entries`, after the limit and format checks.
pub(crate) fn sizes<B: ?Sized>(
    entries: &AccelerationStructureEntries<'_, B>,
    limits: &Limits,
) -> Result<AccelerationStructureBuildSizes, Error> {
    let primitives: u64 = match entries {
        AccelerationStructureEntries::Triangles(geometries) => {
            if geometries.len() as u64 > u64::from(limits.max_blas_geometry_count) {
                return Err(Error::Unsupported(
                    "more geometries than max_blas_geometry_count",
                ));
            }
            let mut triangles = 0u64;
            for g in *geometries {
                if g.vertex_format != wgt::VertexFormat::Float32x3 {
                    return Err(Error::Unsupported(
                        "noop builds only Float32x3 vertex positions",
                    ));
                }
                let count = g.indices.as_ref().map_or(g.vertex_count, |i| i.count);
                triangles += u64::from(count / 3);
            }
            if triangles > u64::from(limits.max_blas_primitive_count) {
                return Err(Error::Unsupported(
                    "more triangles than max_blas_primitive_count",
                ));
            }
            triangles
        }
        AccelerationStructureEntries::Aabbs(geometries) => {
            if geometries.len() as u64 > u64::from(limits.max_blas_geometry_count) {
                return Err(Error::Unsupported(
                    "more geometries than max_blas_geometry_count",
                ));
            }
            let boxes: u64 = geometries.iter().map(|g| u64::from(g.count)).sum();
            if boxes > u64::from(limits.max_blas_primitive_count) {
                return Err(Error::Unsupported(
                    "more boxes than max_blas_primitive_count",
                ));
            }
            boxes
        }
        AccelerationStructureEntries::Instances(instances) => {
            if instances.count > limits.max_tlas_instance_count {
                return Err(Error::Unsupported(
                    "more instances than max_tlas_instance_count",
                ));
            }
            u64::from(instances.count)
        }
    };
    // The limits keep this far from overflow; saturate all the same.
    let size = primitives
        .saturating_mul(PRIMITIVE_SIZE)
        .saturating_add(BASE_SIZE);
    Ok(AccelerationStructureBuildSizes {
        acceleration_structure_size: size,
        update_scratch_size: size / 2,
        build_scratch_size: size / 2,
    })
}

/// `Device::get_acceleration_structure_build_sizes`.
pub(crate) fn build_sizes(
    shared: &DeviceShared,
    desc: &crate::GetAccelerationStructureBuildSizesDescriptor<Api>,
) -> Result<AccelerationStructureBuildSizes, Error> {
    require_feature(shared)?;
    sizes(desc.entries, &Limits::new(&shared.limits))
}

/// `Device::create_acceleration_structure`.
pub(crate) fn create(
    shared: &DeviceShared,
    desc: &AccelerationStructureDescriptor<Api>,
) -> Result<AccelerationStructure, Error> {
    require_feature(shared)?;
    let placement = match desc.placement {
        AccelerationStructurePlacement::Owned => None,
        AccelerationStructurePlacement::InBuffer { buffer, offset } => Some((
            crate::validate::BufferFacts {
                size: buffer.size(),
                usage: buffer.usage,
            },
            offset,
        )),
    };
    crate::validate::acceleration::check_create(desc.size, placement)?;
    let storage = match desc.placement {
        AccelerationStructurePlacement::Owned => {
            // Charge first: a failed allocation returns the charge on drop.
            let charge = shared.budget.charge(desc.size)?;
            Storage::Owned {
                _bytes: HostBytes::new_zeroed(desc.size)?,
                _charge: charge,
            }
        }
        AccelerationStructurePlacement::InBuffer { buffer, offset } => Storage::Placed {
            _bytes: Arc::clone(&buffer.bytes),
            _offset: offset,
        },
    };
    let address = next_address(shared, desc.size)?;
    if matches!(storage, Storage::Owned { .. }) {
        shared.counters.memory_allocations.add();
    }
    Ok(AccelerationStructure {
        kind: desc.kind,
        size: desc.size,
        storage,
        address,
        state: Arc::new(BuildState::default()),
    })
}

/// `Device::destroy_acceleration_structure`.
pub(crate) fn destroy(shared: &DeviceShared, structure: AccelerationStructure) {
    if matches!(structure.storage, Storage::Owned { .. }) {
        shared.counters.memory_allocations.sub();
    }
    // Dropping returns the budget; recorded commands keep only the state.
    drop(structure);
}

/// A fresh address range of `size` bytes (rounded up to 256), unique on the device.
fn next_address(shared: &DeviceShared, size: u64) -> Result<u64, Error> {
    let span = size
        .checked_next_multiple_of(PLACEMENT_ALIGNMENT)
        .ok_or(DeviceError::OutOfMemory)?;
    shared
        .next_address
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| {
            next.checked_add(span)
        })
        .map_err(|_| Error::Device(DeviceError::OutOfMemory))
}

/// Checks one build or update (see the module docs for the order).
fn check_build(
    desc: &BuildAccelerationStructureDescriptor<Api>,
    limits: &Limits,
) -> Result<(), Error> {
    let kind = kind_of(desc.entries);
    let dst = desc.destination_acceleration_structure;
    check_kind("build entries", kind, dst.kind)?;
    let update = desc.mode == AccelerationStructureBuildMode::Update;
    if update {
        match desc.source_acceleration_structure {
            Some(source) => check_kind("the update's source structure", source.kind, kind)?,
            None => return Err(Error::MissingInput("an update needs a source structure")),
        }
    }
    check_inputs(desc.entries)?;
    let sizes = sizes(desc.entries, limits)?;
    if dst.size < sizes.acceleration_structure_size {
        return Err(Error::TooSmall {
            required: sizes.acceleration_structure_size,
            size: dst.size,
        });
    }
    let required = if update {
        sizes.update_scratch_size
    } else {
        sizes.build_scratch_size
    };
    let offset = desc.scratch_buffer_offset;
    let available = desc.scratch_buffer.size().saturating_sub(offset);
    if offset % SCRATCH_ALIGNMENT != 0 || available < required {
        return Err(Error::Scratch {
            required,
            available,
        });
    }
    if let (true, Some(source)) = (update, desc.source_acceleration_structure) {
        if !source
            .state
            .has_flag(wgt::AccelerationStructureFlags::ALLOW_UPDATE)
        {
            return Err(Error::MissingFlag("ALLOW_UPDATE"));
        }
        if source.state.recorded_flags() != Some(desc.flags) {
            return Err(Error::MissingFlag(
                "the same flags as the source's last build (an update keeps them)",
            ));
        }
    }
    Ok(())
}

/// Every geometry has its buffers.
fn check_inputs(entries: &AccelerationStructureEntries<'_, Buffer>) -> Result<(), Error> {
    match entries {
        AccelerationStructureEntries::Triangles(geometries) => {
            for g in *geometries {
                if g.vertex_buffer.is_none() {
                    return Err(Error::MissingInput("a triangle geometry's vertex buffer"));
                }
                if g.indices.as_ref().is_some_and(|i| i.buffer.is_none()) {
                    return Err(Error::MissingInput("a triangle geometry's index buffer"));
                }
            }
        }
        AccelerationStructureEntries::Aabbs(geometries) => {
            if geometries.iter().any(|g| g.buffer.is_none()) {
                return Err(Error::MissingInput("a box geometry's buffer"));
            }
        }
        AccelerationStructureEntries::Instances(instances) => {
            if instances.buffer.is_none() {
                return Err(Error::MissingInput("the instance buffer"));
            }
        }
    }
    Ok(())
}

/// Checks every build of a call, then remembers each destination's flags
/// (nothing is remembered when one check fails).
pub(crate) fn record_builds(
    descs: &[BuildAccelerationStructureDescriptor<Api>],
    limits: &Limits,
) -> Result<(), Error> {
    for desc in descs {
        check_build(desc, limits)?;
    }
    for desc in descs {
        desc.destination_acceleration_structure
            .state
            .record(Some(desc.flags));
    }
    Ok(())
}

/// Checks a copy, then passes the source's flags on to the destination.
pub(crate) fn record_copy(
    src: &AccelerationStructure,
    dst: &AccelerationStructure,
    mode: AccelerationStructureCopy,
) -> Result<(), Error> {
    check_kind("the copy's destination", dst.kind, src.kind)?;
    if mode == AccelerationStructureCopy::Compact
        && !src
            .state
            .has_flag(wgt::AccelerationStructureFlags::ALLOW_COMPACTION)
    {
        return Err(Error::MissingFlag("ALLOW_COMPACTION"));
    }
    // A compacted copy is as large as its source on noop (see the module docs).
    if dst.size < src.size {
        return Err(Error::TooSmall {
            required: src.size,
            size: dst.size,
        });
    }
    dst.state.record(src.state.recorded_flags());
    Ok(())
}

/// Checks a compacted-size read into `buffer` at `offset` and returns the
/// sizes to write.
pub(crate) fn compacted_sizes(
    structures: &[&AccelerationStructure],
    buffer: &Buffer,
    offset: u64,
) -> Result<Vec<u64>, Error> {
    let allow = wgt::AccelerationStructureFlags::ALLOW_COMPACTION;
    for s in structures {
        check_kind(
            "a structure whose compacted size is read",
            s.kind,
            AccelerationStructureKind::BottomLevel,
        )?;
        if !s.state.has_flag(allow) {
            return Err(Error::MissingFlag("ALLOW_COMPACTION"));
        }
    }
    let end = (structures.len() as u64)
        .checked_mul(8)
        .and_then(|len| len.checked_add(offset));
    if offset % 8 != 0 || end.is_none_or(|end| end > buffer.size()) {
        return Err(Error::InvalidPlacement(
            "the compacted sizes do not fit the buffer at that offset (a multiple of 8)",
        ));
    }
    let mut sizes = Vec::new();
    sizes
        .try_reserve_exact(structures.len())
        .map_err(|_| DeviceError::OutOfMemory)?;
    sizes.extend(structures.iter().map(|s| s.size));
    Ok(sizes)
}
