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
//! The checks are the shared ones (`validate/acceleration.rs`), in their
//! order, so a misuse is the same error here as on Vulkan; noop adds
//! only its sizes (computed, where Vulkan asks the driver), its scratch
//! alignment ([`SCRATCH_ALIGNMENT`], where Vulkan asks the adapter), and
//! the compacted size a compacting copy writes (the source's size, which
//! Vulkan learns only from the GPU). A failing call records nothing.
//! Recording one of these commands outside a recording, or inside a pass,
//! is logged and fails with `Device(DeviceError::InvalidState(_))`.
//!
//! A structure's build flags are remembered when its build is *recorded*
//! (as Vulkan's cheap checks must: the GPU has not run it yet), so a
//! compaction recorded after the build in the same or a later recording
//! sees them. Executing a build or copy only marks the destination built.

use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::Arc;

use super::memory::{Charge, HostBytes};
use super::{AccelerationStructure, Api, Buffer, DeviceShared};
use crate::validate::acceleration::{self as checks, BuildLimits, StructureFacts};
use crate::{
    AccelerationStructureBuildSizes, AccelerationStructureCopy, AccelerationStructureDescriptor,
    AccelerationStructureEntries, AccelerationStructureError, AccelerationStructurePlacement,
    BuildAccelerationStructureDescriptor, DeviceError,
};

type Error = AccelerationStructureError;

/// What the offset of a scratch range must be a multiple of: 256, the
/// largest `minAccelerationStructureScratchOffsetAlignment` Vulkan allows,
/// so an offset that works on noop works on every adapter.
pub const SCRATCH_ALIGNMENT: u64 = 256;

/// What a placement offset must be a multiple of (fake addresses keep it).
use checks::PLACEMENT_ALIGNMENT;

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
pub(crate) struct Limits(BuildLimits);

impl Limits {
    /// Noop's limits, with its scratch alignment. Noop offers no
    /// `EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS`, so its devices
    /// never have it.
    pub(crate) fn new(limits: &wgt::Limits) -> Self {
        Self(BuildLimits::new(
            limits,
            wgt::Features::empty(),
            SCRATCH_ALIGNMENT,
        ))
    }
}

impl checks::AccelerationFacts for Api {
    fn structure(structure: &AccelerationStructure) -> StructureFacts {
        StructureFacts {
            kind: structure.kind,
            size: structure.size,
            flags: structure
                .state
                .recorded_flags()
                .unwrap_or(wgt::AccelerationStructureFlags::empty()),
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
        Err(checks::unsupported_device())
    }
}

/// Sizes for `entries` (checked already: the limits keep the sums small).
pub(crate) fn sizes<B: ?Sized>(
    entries: &AccelerationStructureEntries<'_, B>,
) -> AccelerationStructureBuildSizes {
    let primitives: u64 = match entries {
        AccelerationStructureEntries::Triangles(geometries) => geometries
            .iter()
            .map(|g| u64::from(checks::triangle_count(g)))
            .sum(),
        AccelerationStructureEntries::Aabbs(geometries) => {
            geometries.iter().map(|g| u64::from(g.count)).sum()
        }
        AccelerationStructureEntries::Instances(instances) => u64::from(instances.count),
    };
    // The limits keep this far from overflow; saturate all the same.
    let size = primitives
        .saturating_mul(PRIMITIVE_SIZE)
        .saturating_add(BASE_SIZE);
    AccelerationStructureBuildSizes {
        acceleration_structure_size: size,
        update_scratch_size: size / 2,
        build_scratch_size: size / 2,
    }
}

/// `Device::get_acceleration_structure_build_sizes`.
pub(crate) fn build_sizes(
    shared: &DeviceShared,
    desc: &crate::GetAccelerationStructureBuildSizesDescriptor<Api>,
) -> Result<AccelerationStructureBuildSizes, Error> {
    require_feature(shared)?;
    checks::check_size_query::<Api>(desc.entries, desc.flags, &Limits::new(&shared.limits).0)?;
    Ok(sizes(desc.entries))
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
    checks::check_create(desc.size, placement, shared.limits.max_buffer_size)?;
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

/// Checks every build of a call (the shared checks, with noop's sizes),
/// then remembers each destination's flags (nothing is remembered when one
/// check fails).
pub(crate) fn record_builds(
    descs: &[BuildAccelerationStructureDescriptor<Api>],
    limits: &Limits,
) -> Result<(), Error> {
    let mut prev = None;
    for desc in descs {
        let checked = checks::repeats_geometry::<Api>(prev, desc);
        checks::check_build::<Api>(desc, &limits.0, checked, || Ok(sizes(desc.entries)))?;
        prev = Some(desc);
    }
    for desc in descs {
        desc.destination_acceleration_structure
            .state
            .record(Some(desc.flags));
    }
    Ok(())
}

/// Checks a copy (a compacted copy is as large as its source here), then
/// passes the source's flags on to the destination.
pub(crate) fn record_copy(
    src: &AccelerationStructure,
    dst: &AccelerationStructure,
    mode: AccelerationStructureCopy,
) -> Result<(), Error> {
    use checks::AccelerationFacts;
    checks::check_copy(
        Api::structure(src),
        Api::structure(dst),
        mode,
        Some(src.size),
    )?;
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
    use checks::AccelerationFacts;
    let facts = crate::validate::BufferFacts {
        size: buffer.size(),
        usage: buffer.usage,
    };
    checks::check_compacted_size_read(structures.iter().map(|s| Api::structure(s)), facts, offset)?;
    let mut sizes = Vec::new();
    sizes
        .try_reserve_exact(structures.len())
        .map_err(|_| DeviceError::OutOfMemory)?;
    sizes.extend(structures.iter().map(|s| s.size));
    Ok(sizes)
}
