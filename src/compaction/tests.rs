//! `compact` on noop, statically and through [`DynApi`]: the happy path,
//! then each kind of failure, checking that nothing leaks and the encoder
//! is left reusable.

use super::*;
use crate::{
    AccelerationStructureBuildMode, AccelerationStructureEntries, AccelerationStructureTriangles,
    Adapter as _, BuildAccelerationStructureDescriptor, CommandEncoderDescriptor, DeviceDescriptor,
    DynApi, GetAccelerationStructureBuildSizesDescriptor, HalFeatures, Instance as _,
    InstanceDescriptor, LiveCounts,
};

/// A device with acceleration structures, and what a test drives it with.
struct Rig<A: Api> {
    device: A::Device,
    queue: A::Queue,
    encoder: A::CommandEncoder,
    fence: A::Fence,
    next: FenceValue,
    /// Vertex and scratch buffers of the builds.
    buffers: Vec<A::Buffer>,
    /// Live counts before the rig made anything.
    baseline: LiveCounts,
}

impl<A: Api> Rig<A> {
    fn new(instance: &A::Instance) -> Self {
        // SAFETY: the adapter comes from this instance; one thread.
        unsafe {
            let adapter = instance.enumerate_adapters().remove(0).adapter;
            let open = adapter
                .open(&DeviceDescriptor {
                    required_hal_features: HalFeatures::ACCELERATION_STRUCTURE,
                    ..Default::default()
                })
                .unwrap();
            let baseline = open.device.live_counts();
            let encoder = open
                .device
                .create_command_encoder(&CommandEncoderDescriptor::default())
                .unwrap();
            let fence = open.device.create_fence().unwrap();
            Self {
                device: open.device,
                queue: open.queue,
                encoder,
                fence,
                next: 1,
                buffers: Vec::new(),
                baseline,
            }
        }
    }

    fn buffer(&mut self, size: u64) -> usize {
        let desc = BufferDescriptor {
            size,
            usage: wgt::BufferUsages::BLAS_INPUT | wgt::BufferUsages::STORAGE,
            ..Default::default()
        };
        // SAFETY: live device.
        self.buffers
            .push(unsafe { self.device.create_buffer(&desc) }.unwrap());
        self.buffers.len() - 1
    }

    /// One BLAS per entry of `triangles`, built with `flags` and submitted.
    fn build(
        &mut self,
        triangles: &[u32],
        flags: wgt::AccelerationStructureFlags,
    ) -> Vec<A::AccelerationStructure> {
        let vertices = self.buffer(12 * 3 * u64::from(*triangles.iter().max().unwrap()));
        let geometry = |count: u32| AccelerationStructureTriangles::<A::Buffer> {
            vertex_buffer: None,
            vertex_offset: 0,
            vertex_format: wgt::VertexFormat::Float32x3,
            vertex_stride: 12,
            vertex_count: 3 * count,
            indices: None,
            transform: None,
            flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
        };
        let mut structures = Vec::new();
        let mut scratch = Vec::new();
        for &count in triangles {
            let geometries = [geometry(count)];
            let entries = AccelerationStructureEntries::Triangles(&geometries);
            // SAFETY: live device; no buffers named.
            let sizes = unsafe {
                self.device
                    .get_acceleration_structure_build_sizes(
                        &GetAccelerationStructureBuildSizesDescriptor {
                            entries: &entries,
                            flags,
                        },
                    )
                    .unwrap()
            };
            let desc = AccelerationStructureDescriptor {
                label: None,
                kind: AccelerationStructureKind::BottomLevel,
                size: sizes.acceleration_structure_size,
                placement: AccelerationStructurePlacement::Owned,
            };
            // SAFETY: live device.
            structures.push(unsafe { self.device.create_acceleration_structure(&desc) }.unwrap());
            scratch.push(self.buffer(sizes.build_scratch_size));
        }
        let geometries: Vec<[AccelerationStructureTriangles<A::Buffer>; 1]> = triangles
            .iter()
            .map(|&count| {
                let mut g = geometry(count);
                g.vertex_buffer = Some(&self.buffers[vertices]);
                [g]
            })
            .collect();
        let entries: Vec<_> = geometries
            .iter()
            .map(|g| AccelerationStructureEntries::Triangles(g))
            .collect();
        let descs: Vec<_> = entries
            .iter()
            .zip(&structures)
            .zip(&scratch)
            .map(
                |((entries, dst), &scratch)| BuildAccelerationStructureDescriptor::<A> {
                    entries,
                    mode: AccelerationStructureBuildMode::Build,
                    flags,
                    source_acceleration_structure: None,
                    destination_acceleration_structure: dst,
                    scratch_buffer: &self.buffers[scratch],
                    scratch_buffer_offset: 0,
                },
            )
            .collect();
        // SAFETY: every resource lives until the fence is waited on.
        unsafe {
            self.encoder.begin_encoding(None).unwrap();
            self.encoder.build_acceleration_structures(&descs).unwrap();
            let commands = self.encoder.end_encoding().unwrap();
            self.queue
                .submit(&[&commands], &[], &self.fence, self.next)
                .unwrap();
            assert!(self.device.wait(&self.fence, self.next, None).unwrap());
            self.encoder.reset_all([commands]);
        }
        self.next += 1;
        structures
    }

    fn compact(
        &mut self,
        structures: &[A::AccelerationStructure],
    ) -> Result<CompactionReport<A>, Error> {
        let batch: Vec<&A::AccelerationStructure> = structures.iter().collect();
        // SAFETY: the structures were built and submitted; the encoder is idle.
        unsafe {
            compact::<A>(
                &self.device,
                &self.queue,
                &mut self.encoder,
                &self.fence,
                &mut self.next,
                &batch,
            )
        }
    }

    /// Whether the encoder can record and submit again.
    fn encoder_is_reusable(&mut self) -> bool {
        // SAFETY: idle encoder; nothing recorded.
        unsafe {
            self.encoder.begin_encoding(None).unwrap();
            let commands = self.encoder.end_encoding().unwrap();
            self.queue
                .submit(&[&commands], &[], &self.fence, self.next)
                .unwrap();
            self.next += 1;
            let done = self.device.wait(&self.fence, self.next - 1, None).unwrap();
            self.encoder.reset_all([commands]);
            done
        }
    }

    fn destroy(&self, structures: Vec<A::AccelerationStructure>) {
        for s in structures {
            // SAFETY: every submission was waited on.
            unsafe { self.device.destroy_acceleration_structure(s) };
        }
    }

    /// Destroys everything and checks that nothing is left.
    fn finish(self) {
        // SAFETY: every submission was waited on.
        unsafe {
            for b in self.buffers {
                self.device.destroy_buffer(b);
            }
            self.device.destroy_command_encoder(self.encoder);
            self.device.destroy_fence(self.fence);
        }
        assert_eq!(self.device.live_counts(), self.baseline);
    }
}

fn noop(budget: Option<u64>) -> crate::noop::Instance {
    let desc = InstanceDescriptor {
        noop_memory_budget: budget,
        ..Default::default()
    };
    // SAFETY: the noop backend loads nothing.
    unsafe { crate::noop::Instance::init(&desc) }.unwrap()
}

fn dyn_noop() -> Box<dyn crate::DynInstance> {
    crate::instance(crate::BackendChoice::Noop, &InstanceDescriptor::default())
        .unwrap()
        .instance
}

const COMPACTABLE: wgt::AccelerationStructureFlags =
    wgt::AccelerationStructureFlags::ALLOW_COMPACTION;

fn compacts_a_batch<A: Api>(instance: &A::Instance) {
    let mut rig = Rig::<A>::new(instance);
    let originals = rig.build(&[1, 10, 100], COMPACTABLE);
    let before = rig.next;
    let report = rig.compact(&originals).unwrap();
    assert_eq!(rig.next, before + 2, "two submissions");
    // Noop's compacted size is the original's: 128 + 64 per triangle.
    assert_eq!(report.sizes_before, [192, 768, 6528]);
    assert_eq!(report.sizes_after, report.sizes_before);
    assert_eq!(report.bytes_before, 192 + 768 + 6528);
    assert_eq!(report.bytes_after, report.bytes_before);
    assert_eq!(report.compacted.len(), 3);
    for (s, &size) in report.compacted.iter().zip(&report.sizes_after) {
        // SAFETY: live structure of this device.
        assert_eq!(
            unsafe { rig.device.get_acceleration_structure_size(s) },
            size
        );
    }
    // Empty batches do nothing.
    let empty = rig.compact(&[]).unwrap();
    assert!(empty.compacted.is_empty() && empty.bytes_before == 0);
    assert_eq!(rig.next, before + 2);
    // The compacted copies can be compacted again (they keep the flags).
    let again = rig.compact(&report.compacted).unwrap();
    assert_eq!(again.sizes_after, report.sizes_after);
    rig.destroy(originals);
    rig.destroy(report.compacted);
    rig.destroy(again.compacted);
    rig.finish();
}

#[test]
fn compacts_a_batch_on_noop() {
    compacts_a_batch::<crate::noop::Api>(&noop(None));
}

#[test]
fn compacts_a_batch_through_dyn_api() {
    compacts_a_batch::<DynApi>(&dyn_noop());
}

#[test]
fn compacted_copies_are_built_and_keep_the_flags() {
    let mut rig = Rig::<crate::noop::Api>::new(&noop(None));
    let originals = rig.build(&[4, 8], COMPACTABLE);
    let report = rig.compact(&originals).unwrap();
    for s in &report.compacted {
        assert!(s.is_built());
        assert_eq!(s.last_build_flags(), Some(COMPACTABLE));
        assert_eq!(s.kind(), AccelerationStructureKind::BottomLevel);
    }
    rig.destroy(originals);
    rig.destroy(report.compacted);
    rig.finish();
}

fn refuses_a_structure_built_without_the_flag<A: Api>(instance: &A::Instance) {
    let mut rig = Rig::<A>::new(instance);
    let mut originals = rig.build(&[2, 3], COMPACTABLE);
    originals.extend(rig.build(&[5], wgt::AccelerationStructureFlags::PREFER_FAST_TRACE));
    let counts = rig.device.live_counts();
    let before = rig.next;
    let err = rig.compact(&originals).unwrap_err();
    assert_eq!(err, Error::MissingFlag("ALLOW_COMPACTION"));
    // Nothing was submitted, and the readback buffer is gone.
    assert_eq!(rig.next, before);
    assert_eq!(rig.device.live_counts(), counts);
    assert!(rig.encoder_is_reusable());
    rig.destroy(originals);
    rig.finish();
}

#[test]
fn refuses_a_structure_built_without_the_flag_on_noop() {
    refuses_a_structure_built_without_the_flag::<crate::noop::Api>(&noop(None));
}

#[test]
fn refuses_a_structure_built_without_the_flag_through_dyn_api() {
    refuses_a_structure_built_without_the_flag::<DynApi>(&dyn_noop());
}

#[test]
fn out_of_memory_for_the_copies_leaves_nothing_behind() {
    // Room for the originals (3 × 6,528 bytes), their build inputs (3,600
    // of vertices, 3 × 3,264 of scratch), the readback buffer and one copy,
    // not for the second copy: the first is destroyed again.
    let mut rig = Rig::<crate::noop::Api>::new(&noop(Some(40 * 1024)));
    let originals = rig.build(&[100, 100, 100], COMPACTABLE);
    let counts = rig.device.live_counts();
    let err = rig.compact(&originals).unwrap_err();
    assert_eq!(err, Error::Device(DeviceError::OutOfMemory));
    assert_eq!(rig.device.live_counts(), counts);
    assert!(rig.encoder_is_reusable());
    rig.destroy(originals);
    rig.finish();
}

#[test]
fn top_level_structures_are_refused() {
    use crate::AccelerationStructureInstances;
    let mut rig = Rig::<crate::noop::Api>::new(&noop(None));
    let instances = rig.buffer(64);
    let scratch = rig.buffer(1024);
    let entries = AccelerationStructureEntries::Instances(AccelerationStructureInstances {
        buffer: Some(&rig.buffers[instances]),
        offset: 0,
        count: 1,
    });
    let desc = AccelerationStructureDescriptor {
        label: None,
        kind: AccelerationStructureKind::TopLevel,
        size: 192,
        placement: AccelerationStructurePlacement::Owned,
    };
    // SAFETY: live device; every resource outlives the fence wait.
    let tlas = unsafe {
        let tlas = rig.device.create_acceleration_structure(&desc).unwrap();
        rig.encoder.begin_encoding(None).unwrap();
        rig.encoder
            .build_acceleration_structures(&[BuildAccelerationStructureDescriptor {
                entries: &entries,
                mode: AccelerationStructureBuildMode::Build,
                flags: COMPACTABLE,
                source_acceleration_structure: None,
                destination_acceleration_structure: &tlas,
                scratch_buffer: &rig.buffers[scratch],
                scratch_buffer_offset: 0,
            }])
            .unwrap();
        let commands = rig.encoder.end_encoding().unwrap();
        rig.queue.submit(&[&commands], &[], &rig.fence, 1).unwrap();
        assert!(rig.device.wait(&rig.fence, 1, None).unwrap());
        rig.encoder.reset_all([commands]);
        tlas
    };
    rig.next = 2;
    let counts = rig.device.live_counts();
    // Refused by the size read: nothing is submitted.
    let err = rig.compact(std::slice::from_ref(&tlas)).unwrap_err();
    assert_eq!(
        err,
        Error::WrongKind {
            what: "a structure whose compacted size is read",
            given: crate::AccelerationStructureKind::TopLevel,
            expected: crate::AccelerationStructureKind::BottomLevel,
        }
    );
    assert_eq!(rig.next, 2);
    assert_eq!(rig.device.live_counts(), counts);
    assert!(rig.encoder_is_reusable());
    rig.destroy(vec![tlas]);
    rig.finish();
}

/// The same batch on the first Vulkan adapter with acceleration structures
/// (lavapipe in CI), with validation on: real compacted sizes are no larger
/// than the originals, the shared query pools come and go, and the
/// validation layer reports nothing. Skipped (with a note) without one.
#[cfg(feature = "vulkan")]
#[test]
fn compacts_a_batch_on_vulkan() {
    use crate::vulkan;
    let desc = InstanceDescriptor {
        flags: crate::InstanceFlags::VALIDATION,
        ..Default::default()
    };
    // SAFETY: the system loader is trusted.
    let Ok(instance) = (unsafe { vulkan::Instance::init(&desc) }) else {
        println!("skipped: no Vulkan");
        return;
    };
    // SAFETY: live instance.
    let adapters = unsafe { instance.enumerate_adapters() };
    let Some(first) = adapters.first() else {
        println!("skipped: no Vulkan 1.3 adapter");
        return;
    };
    if !first
        .capabilities
        .hal_features
        .contains(HalFeatures::ACCELERATION_STRUCTURE)
    {
        println!(
            "skipped: {} has no acceleration structures",
            first.info.name
        );
        return;
    }
    drop(adapters);
    let mut rig = Rig::<vulkan::Api>::new(&instance);
    let originals = rig.build(&[1, 10, 100, 1000], COMPACTABLE);
    let report = rig.compact(&originals).unwrap();
    assert_eq!(report.compacted.len(), 4);
    for (after, before) in report.sizes_after.iter().zip(&report.sizes_before) {
        assert!(0 < *after && after <= before, "{after} > {before}");
    }
    assert!(report.bytes_after <= report.bytes_before);
    println!(
        "compacted {:?} -> {:?} bytes",
        report.sizes_before, report.sizes_after
    );
    rig.destroy(originals);
    rig.destroy(report.compacted);
    rig.finish();
    assert_eq!(crate::Instance::validation_error_count(&instance), 0);
}
