//! Acceleration-structure commands of the encoder: builds, barriers, copies
//! and compacted-size reads.
//!
//! Each call makes the shared checks first (`validate/acceleration.rs`:
//! kinds, flags, geometry and its buffers, sizes against the driver's size
//! query, scratch ranges, the flags of the last recorded build, copy and
//! compacted-size rules), in the order noop makes them, and returns a
//! typed error having recorded nothing. The driver's sizes for a build's
//! geometry are asked once per shape in a row (`acceleration::SizeMemo`).
//! Builds convert
//! every descriptor's geometry into the vectors of [`AccelTemp`] (kept in
//! the encoder's `Temp`, so they keep their capacity) and record one
//! `vkCmdBuildAccelerationStructuresKHR` for all of them.
//!
//! Compacted sizes are read through the device's shared query pools
//! (`query.rs`): the batch takes one or a few contiguous slot ranges, and
//! records one reset per range, **one** build→read barrier for the whole
//! batch, then one properties write and one results copy per range. The
//! ranges stay with the encoder until `reset_all` or its destruction.
//!
//! Stages: without `VK_KHR_ray_tracing_maintenance1` copies and property
//! writes run in the `ACCELERATION_STRUCTURE_BUILD` stage, so every use but
//! tracing is ordered there.

use ash::vk;

use super::acceleration::{self, buffer_address, convert_entries, fns, query_sizes};
use super::barrier;
use super::query::SlotRange;
use super::{AccelerationStructure, Buffer, CommandEncoder, DeviceShared};
use crate::validate::acceleration::{self as checks, AccelerationFacts};
use crate::validate::BufferFacts;
use crate::{
    AccelerationStructureBarrier, AccelerationStructureBuildMode, AccelerationStructureCopy,
    AccelerationStructureError as Error, AccelerationStructureUses,
    BuildAccelerationStructureDescriptor, DeviceError,
};

/// One checked descriptor of a build, waiting to be recorded.
#[derive(Clone, Copy, Debug)]
struct PendingBuild {
    /// Its geometries (and ranges) in the temp vectors.
    first: usize,
    count: usize,
    ty: vk::AccelerationStructureTypeKHR,
    flags: vk::BuildAccelerationStructureFlagsKHR,
    mode: vk::BuildAccelerationStructureModeKHR,
    src: vk::AccelerationStructureKHR,
    dst: vk::AccelerationStructureKHR,
    scratch: u64,
}

/// The pending build of `desc`, whose geometries are `count` from `first`
/// in the temp vectors (its own, or the descriptor's before it).
///
/// # Safety
/// `desc` passed `check_build` for this device (so its scratch buffer has
/// `SHADER_DEVICE_ADDRESS` usage), and its buffers and structures are live.
unsafe fn build_of(
    shared: &DeviceShared,
    desc: &BuildAccelerationStructureDescriptor<super::Api>,
    kind: crate::AccelerationStructureKind,
    flags: vk::BuildAccelerationStructureFlagsKHR,
    first: usize,
    count: usize,
) -> PendingBuild {
    let (mode, src) = match (desc.mode, desc.source_acceleration_structure) {
        (AccelerationStructureBuildMode::Update, Some(source)) => {
            (vk::BuildAccelerationStructureModeKHR::UPDATE, source.raw)
        }
        // An update has its source (checked).
        _ => (
            vk::BuildAccelerationStructureModeKHR::BUILD,
            vk::AccelerationStructureKHR::null(),
        ),
    };
    PendingBuild {
        first,
        count,
        ty: acceleration::map_kind(kind),
        flags,
        mode,
        src,
        dst: desc.destination_acceleration_structure.raw,
        // SAFETY: forwarded contract: the scratch buffer is live, with
        // SHADER_DEVICE_ADDRESS usage (checked as scratch).
        scratch: unsafe { buffer_address(shared, desc.scratch_buffer) }
            + desc.scratch_buffer_offset,
    }
}

/// Scratch vectors of the AS commands, reused across calls.
#[derive(Default)]
pub(crate) struct AccelTemp {
    geometries: Vec<vk::AccelerationStructureGeometryKHR<'static>>,
    ranges: Vec<vk::AccelerationStructureBuildRangeInfoKHR>,
    counts: Vec<u32>,
    pending: Vec<PendingBuild>,
    infos: Vec<vk::AccelerationStructureBuildGeometryInfoKHR<'static>>,
    range_ptrs: Vec<*const vk::AccelerationStructureBuildRangeInfoKHR>,
    handles: Vec<vk::AccelerationStructureKHR>,
    /// The driver's last build sizes, by the shape they were asked for.
    sizes: acceleration::SizeMemo,
}

impl std::fmt::Debug for AccelTemp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccelTemp")
            .field("geometries", &self.geometries.capacity())
            .field("infos", &self.infos.capacity())
            .finish_non_exhaustive()
    }
}

// SAFETY: the raw pointers (`range_ptrs`, and `p_geometries` of `infos`)
// point into the sibling vectors only during one `accel_build` call, which
// clears both lists before it returns; between calls they are empty and the
// rest is plain data. `&mut CommandEncoder` serialises every use.
unsafe impl Send for AccelTemp {}
// SAFETY: as above; a shared reference (only `Debug`) reads capacities.
unsafe impl Sync for AccelTemp {}

/// Acceleration-structure access in the build stage (reads and writes).
const AS_ACCESS: vk::AccessFlags2 = vk::AccessFlags2::from_raw(
    vk::AccessFlags2::ACCELERATION_STRUCTURE_READ_KHR.as_raw()
        | vk::AccessFlags2::ACCELERATION_STRUCTURE_WRITE_KHR.as_raw(),
);

/// Stage and access of one usage flag. `BUILD_OUTPUT` includes the scratch
/// reads and writes of the build. `readers` are the shader stages that may
/// read acceleration structures on the device
/// ([`barrier::acceleration_structure_read_stages`]); where there are none,
/// `SHADER_INPUT` orders nothing (no access without a stage that does it).
fn use_scope(
    flag: AccelerationStructureUses,
    readers: vk::PipelineStageFlags2,
) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
    use vk::AccessFlags2 as A;
    use vk::PipelineStageFlags2 as S;
    match flag {
        AccelerationStructureUses::BUILD_INPUT | AccelerationStructureUses::COPY_SRC => (
            S::ACCELERATION_STRUCTURE_BUILD_KHR,
            A::ACCELERATION_STRUCTURE_READ_KHR,
        ),
        AccelerationStructureUses::BUILD_OUTPUT => (S::ACCELERATION_STRUCTURE_BUILD_KHR, AS_ACCESS),
        AccelerationStructureUses::SHADER_INPUT if readers != S::NONE => {
            (readers, A::ACCELERATION_STRUCTURE_READ_KHR)
        }
        _ => (S::NONE, A::NONE),
    }
}

/// The union of the scopes of a usage's flags; `readers` as for [`use_scope`].
fn uses_scope(
    uses: AccelerationStructureUses,
    readers: vk::PipelineStageFlags2,
) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
    uses.iter().map(|f| use_scope(f, readers)).fold(
        (vk::PipelineStageFlags2::NONE, vk::AccessFlags2::NONE),
        |acc, s| (acc.0 | s.0, acc.1 | s.1),
    )
}

impl CommandEncoder {
    /// The shader stages that may read acceleration structures on this
    /// device, from its enabled features.
    fn as_reader_stages(&self) -> vk::PipelineStageFlags2 {
        barrier::acceleration_structure_read_stages(self.device.hal_features)
    }

    /// Gives the compacted-size query slots of every recording since the
    /// last `reset_all` back to the device's pools.
    ///
    /// # Safety
    /// None of this encoder's command buffers is pending.
    pub(super) unsafe fn release_compaction_slots(&mut self) {
        if self.compaction_slots.is_empty() {
            return;
        }
        let shared = &*self.device;
        // SAFETY: forwarded contract; the ranges came from these pools.
        unsafe {
            shared.compaction_pools.lock().give_back(
                &shared.raw,
                &shared.counters.compaction_query_pools,
                self.compaction_slots.drain(..),
            )
        };
    }

    /// `build_acceleration_structures` (see the module docs).
    ///
    /// # Safety
    /// The trait's contract. Also: the scratch ranges of one call do not
    /// overlap, and no structure is written by one descriptor of the call
    /// and read by another.
    pub(super) unsafe fn accel_build(
        &mut self,
        descriptors: &[BuildAccelerationStructureDescriptor<super::Api>],
    ) -> Result<(), Error> {
        let Some(cb) = self.recording() else {
            return Err(Error::Device(DeviceError::InvalidState(
                "recorded outside begin_encoding/end_encoding",
            )));
        };
        crate::validate::acceleration::check_outside_pass(
            self.temp.pass.kind != super::pass::PassKind::None,
        )?;
        let shared = &*self.device;
        let fns = fns(shared)?;
        let limits = acceleration::build_limits(shared);
        let t = &mut self.temp.accel;
        t.geometries.clear();
        t.ranges.clear();
        t.counts.clear();
        t.pending.clear();
        // The geometries and sizes of the descriptor before, which the
        // next one reuses when it builds from the same entries.
        // Its kind and Vulkan flags too: the same entries and flags give
        // the same.
        let mut prev: Option<(&BuildAccelerationStructureDescriptor<super::Api>, _, _, _)> = None;
        for desc in descriptors {
            let repeat =
                prev.filter(|(p, ..)| checks::repeats_geometry::<super::Api>(Some(*p), desc));
            if let (Some((_, sizes, kind, flags)), Some(last)) = (repeat, t.pending.last()) {
                let (first, count) = (last.first, last.count);
                checks::check_build::<super::Api>(desc, &limits, true, || Ok(sizes))?;
                // SAFETY: checked just above; live (the trait contract).
                let pending = unsafe { build_of(shared, desc, kind, flags, first, count) };
                t.pending.push(pending);
                continue;
            }
            let kind = checks::kind_of(desc.entries);
            let flags = acceleration::map_build_flags(desc.flags);
            let first = t.geometries.len();
            let mut asked = None;
            // The shared checks; the driver's sizes are asked at their
            // place in the order, once the geometry passed.
            checks::check_build::<super::Api>(desc, &limits, false, || {
                convert_entries(
                    shared,
                    desc.entries,
                    true,
                    &mut t.geometries,
                    &mut t.ranges,
                    &mut t.counts,
                );
                // A build of the shape last asked about has its sizes.
                let sizes = t.sizes.sizes(flags, desc.entries, || {
                    // SAFETY: the geometries were just converted for this device.
                    unsafe {
                        query_sizes(
                            shared,
                            fns,
                            kind,
                            flags,
                            &t.geometries[first..],
                            &t.counts[first..],
                        )
                    }
                });
                asked = Some(sizes);
                Ok(sizes)
            })?;
            let count = t.geometries.len() - first;
            // SAFETY: checked just above; live (the trait contract).
            let pending = unsafe { build_of(shared, desc, kind, flags, first, count) };
            t.pending.push(pending);
            prev = asked.map(|sizes| (desc, sizes, kind, flags));
        }
        if t.pending.is_empty() {
            return Ok(());
        }
        // Everything is checked: point the infos into the finished vectors,
        // and note each destination's flags (one pending build per
        // descriptor, in order) while it is at hand, before the driver's
        // recording evicts it from the cache.
        t.infos.clear();
        t.range_ptrs.clear();
        for (p, desc) in t.pending.iter().zip(descriptors) {
            desc.destination_acceleration_structure
                .set_build_flags(desc.flags);
            let mut info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
                .ty(p.ty)
                .flags(p.flags)
                .mode(p.mode)
                .src_acceleration_structure(p.src)
                .dst_acceleration_structure(p.dst)
                .scratch_data(vk::DeviceOrHostAddressKHR {
                    device_address: p.scratch,
                });
            // Counts are bounded by the geometry-count limit (a u32).
            info.geometry_count = p.count as u32;
            info.p_geometries = t.geometries[p.first..].as_ptr();
            t.infos.push(info);
            t.range_ptrs.push(t.ranges[p.first..].as_ptr());
        }
        // SAFETY: recording, outside a pass (the trait contract); every info
        // points at `count` geometries and its range pointer at as many
        // ranges, all alive across the call; destinations, sources and
        // scratch ranges were checked against the driver's sizes.
        unsafe {
            (fns.fp.cmd_build_acceleration_structures_khr)(
                cb,
                t.infos.len() as u32,
                t.infos.as_ptr(),
                t.range_ptrs.as_ptr(),
            )
        };
        t.infos.clear();
        t.range_ptrs.clear();
        Ok(())
    }

    /// `place_acceleration_structure_barrier`: one memory barrier. Nothing
    /// is recorded out of the empty state, or between read-only uses.
    ///
    /// # Safety
    /// The trait's contract.
    pub(super) unsafe fn accel_barrier(
        &mut self,
        barrier: AccelerationStructureBarrier<'_, AccelerationStructure>,
    ) {
        let Some(cb) = self.recording() else { return };
        let (from, to) = (barrier.usage.from, barrier.usage.to);
        let write = AccelerationStructureUses::BUILD_OUTPUT;
        if from.is_empty() || !(from.intersects(write) || to.intersects(write)) {
            return;
        }
        let readers = self.as_reader_stages();
        let (src_stage, src_access) = uses_scope(from, readers);
        let (dst_stage, dst_access) = uses_scope(to, readers);
        let barriers = [vk::MemoryBarrier2::default()
            .src_stage_mask(src_stage)
            .src_access_mask(src_access & vk::AccessFlags2::ACCELERATION_STRUCTURE_WRITE_KHR)
            .dst_stage_mask(dst_stage)
            .dst_access_mask(dst_access)];
        let info = vk::DependencyInfo::default().memory_barriers(&barriers);
        // SAFETY: recording, outside a pass (the trait contract).
        unsafe { self.fns.cmd_pipeline_barrier2(cb, &info) };
    }

    /// `copy_acceleration_structure`.
    ///
    /// # Safety
    /// The trait's contract.
    pub(super) unsafe fn accel_copy(
        &mut self,
        src: &AccelerationStructure,
        dst: &AccelerationStructure,
        mode: AccelerationStructureCopy,
    ) -> Result<(), Error> {
        let Some(cb) = self.recording() else {
            return Err(Error::Device(DeviceError::InvalidState(
                "recorded outside begin_encoding/end_encoding",
            )));
        };
        crate::validate::acceleration::check_outside_pass(
            self.temp.pass.kind != super::pass::PassKind::None,
        )?;
        let fns = fns(&self.device)?;
        // A compacted size is the GPU's answer: unknown while recording.
        let (src_facts, dst_facts) = (super::Api::structure(src), super::Api::structure(dst));
        checks::check_copy(src_facts, dst_facts, mode, None)?;
        let flags = src_facts.flags;
        let vk_mode = match mode {
            AccelerationStructureCopy::Clone => vk::CopyAccelerationStructureModeKHR::CLONE,
            AccelerationStructureCopy::Compact => vk::CopyAccelerationStructureModeKHR::COMPACT,
        };
        let info = vk::CopyAccelerationStructureInfoKHR::default()
            .src(src.raw)
            .dst(dst.raw)
            .mode(vk_mode);
        // Noted before the driver's recording, while `dst` is in the cache.
        dst.set_build_flags(flags);
        // SAFETY: recording, outside a pass; `src` built and `dst` large
        // enough (the trait contract; clone sizes and compaction flags checked).
        unsafe { (fns.fp.cmd_copy_acceleration_structure_khr)(cb, &info) };
        Ok(())
    }

    /// `read_acceleration_structure_compacted_sizes` (see the module docs).
    ///
    /// # Safety
    /// The trait's contract.
    pub(super) unsafe fn accel_read_compacted_sizes(
        &mut self,
        structures: &[&AccelerationStructure],
        buffer: &Buffer,
        offset: u64,
    ) -> Result<(), Error> {
        let Some(cb) = self.recording() else {
            return Err(Error::Device(DeviceError::InvalidState(
                "recorded outside begin_encoding/end_encoding",
            )));
        };
        crate::validate::acceleration::check_outside_pass(
            self.temp.pass.kind != super::pass::PassKind::None,
        )?;
        let fns = fns(&self.device)?;
        let count = checks::check_compacted_size_read(
            structures.iter().map(|s| super::Api::structure(s)),
            BufferFacts {
                size: buffer.size,
                usage: buffer.usage,
            },
            offset,
        )?;
        if count == 0 {
            return Ok(());
        }
        let start = self.compaction_slots.len();
        take_slots(&self.device, &mut self.compaction_slots, count)?;
        let ranges = &self.compaction_slots[start..];
        let handles = &mut self.temp.accel.handles;
        handles.clear();
        handles.extend(structures.iter().map(|s| s.raw));

        for r in ranges {
            // SAFETY: recording; the range is this encoder's until its
            // command buffers are reset, so no pending work uses it.
            unsafe { self.fns.cmd_reset_query_pool(cb, r.pool, r.first, r.count) };
        }
        let barriers = [vk::MemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::ACCELERATION_STRUCTURE_BUILD_KHR)
            .src_access_mask(vk::AccessFlags2::ACCELERATION_STRUCTURE_WRITE_KHR)
            .dst_stage_mask(vk::PipelineStageFlags2::ACCELERATION_STRUCTURE_BUILD_KHR)
            .dst_access_mask(vk::AccessFlags2::ACCELERATION_STRUCTURE_READ_KHR)];
        let info = vk::DependencyInfo::default().memory_barriers(&barriers);
        // SAFETY: recording, outside a pass.
        unsafe { self.fns.cmd_pipeline_barrier2(cb, &info) };
        let mut done = 0usize;
        for r in ranges {
            let chunk = &handles[done..done + r.count as usize];
            // SAFETY: recording; `chunk` holds `r.count` live bottom-level
            // structures built with ALLOW_COMPACTION (checked; built earlier
            // in submission order: the trait contract); the queries were
            // reset above.
            unsafe {
                (fns.fp.cmd_write_acceleration_structures_properties_khr)(
                    cb,
                    r.count,
                    chunk.as_ptr(),
                    vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR,
                    r.pool,
                    r.first,
                )
            };
            done += r.count as usize;
        }
        let mut dst_offset = offset;
        for r in ranges {
            // SAFETY: recording; the queries were written above; the
            // destination range lies in the buffer (checked), which has
            // TRANSFER_DST usage and is in COPY_DST (the trait contract).
            unsafe {
                self.fns.cmd_copy_query_pool_results(
                    cb,
                    r.pool,
                    r.first,
                    r.count,
                    buffer.raw,
                    dst_offset,
                    8,
                    vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                )
            };
            dst_offset += u64::from(r.count) * 8;
        }
        Ok(())
    }
}

/// Takes `count` slots from the device's pools, appending the ranges to
/// `slots`; on failure gives back what it took and leaves `slots` as it was.
fn take_slots(shared: &DeviceShared, slots: &mut Vec<SlotRange>, count: u32) -> Result<(), Error> {
    let counter = &shared.counters.compaction_query_pools;
    let start = slots.len();
    let mut pools = shared.compaction_pools.lock();
    let mut remaining = count;
    while remaining > 0 {
        // SAFETY: the pools belong to `shared.raw`.
        match unsafe { pools.take(&shared.raw, counter, remaining) } {
            Ok(range) => {
                remaining -= range.count;
                slots.push(range);
            }
            Err(e) => {
                // SAFETY: just taken; nothing recorded uses them.
                unsafe { pools.give_back(&shared.raw, counter, slots.drain(start..)) };
                return Err(Error::Device(e));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barrier_scopes_order_builds_copies_and_tracing() {
        use vk::PipelineStageFlags2 as S;
        let readers = S::COMPUTE_SHADER;
        let (stage, access) = uses_scope(AccelerationStructureUses::BUILD_OUTPUT, readers);
        assert_eq!(stage, S::ACCELERATION_STRUCTURE_BUILD_KHR);
        assert_eq!(access, AS_ACCESS);
        let (stage, access) = uses_scope(
            AccelerationStructureUses::SHADER_INPUT | AccelerationStructureUses::COPY_SRC,
            readers,
        );
        assert_eq!(
            stage,
            S::COMPUTE_SHADER | S::ACCELERATION_STRUCTURE_BUILD_KHR
        );
        assert_eq!(access, vk::AccessFlags2::ACCELERATION_STRUCTURE_READ_KHR);
    }

    /// A build → trace barrier on a device with ray-tracing pipelines but
    /// no ray query (NVIDIA) waits in the ray-tracing stage alone
    /// (VUID-VkMemoryBarrier2-dstAccessMask-06256); on one with neither,
    /// shader reads order nothing.
    #[test]
    fn shader_reads_use_only_the_enabled_stages() {
        use crate::HalFeatures as F;
        use vk::PipelineStageFlags2 as S;
        let shader_stages = S::PRE_RASTERIZATION_SHADERS
            | S::VERTEX_SHADER
            | S::FRAGMENT_SHADER
            | S::COMPUTE_SHADER;
        let pipelines_only = barrier::acceleration_structure_read_stages(
            F::ACCELERATION_STRUCTURE | F::RAY_TRACING_PIPELINE,
        );
        let (stage, access) = uses_scope(AccelerationStructureUses::SHADER_INPUT, pipelines_only);
        assert_eq!(stage, S::RAY_TRACING_SHADER_KHR);
        assert!(!stage.intersects(shader_stages));
        assert_eq!(access, vk::AccessFlags2::ACCELERATION_STRUCTURE_READ_KHR);

        let neither = barrier::acceleration_structure_read_stages(F::ACCELERATION_STRUCTURE);
        let (stage, access) = uses_scope(
            AccelerationStructureUses::SHADER_INPUT | AccelerationStructureUses::BUILD_INPUT,
            neither,
        );
        assert_eq!(stage, S::ACCELERATION_STRUCTURE_BUILD_KHR);
        assert_eq!(access, vk::AccessFlags2::ACCELERATION_STRUCTURE_READ_KHR);
        let (stage, access) = uses_scope(AccelerationStructureUses::SHADER_INPUT, neither);
        assert_eq!((stage, access), (S::NONE, vk::AccessFlags2::NONE));
    }
}
