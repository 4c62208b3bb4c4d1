//! Acceleration structures and ray tracing on noop: sizes, creation,
//! the cheap checks of builds and copies, compacted-size reads, bindings,
//! and the missing ray-tracing pipelines.

use super::*;
use crate::{
    AccelerationStructureAabbs, AccelerationStructureBarrier, AccelerationStructureBuildMode,
    AccelerationStructureCopy, AccelerationStructureDescriptor, AccelerationStructureEntries,
    AccelerationStructureError as E, AccelerationStructureInstances,
    AccelerationStructureKind as Kind, AccelerationStructurePlacement,
    AccelerationStructureTriangles, AccelerationStructureUses, Adapter as _, BindGroupDescriptor,
    BindGroupEntry, BindGroupLayoutDescriptor, BindingError, BindingResource, BufferDescriptor,
    BuildAccelerationStructureDescriptor, CommandEncoder as _, ComputePassDescriptor, Device as _,
    DeviceDescriptor, DeviceError, GetAccelerationStructureBuildSizesDescriptor, HalFeatures,
    Instance as _, InstanceDescriptor, PipelineError, PipelineLayoutDescriptor, Queue as _,
    RayTracingPipelineDescriptor, ShaderBindingTable, StateTransition, TriangleIndices,
};

type Flags = wgt::AccelerationStructureFlags;

fn open_with(hal_features: HalFeatures, budget: Option<u64>) -> (Device, Queue) {
    let desc = InstanceDescriptor {
        noop_memory_budget: budget,
        ..Default::default()
    };
    // SAFETY: the noop backend loads nothing; one thread opens the adapter.
    unsafe {
        let instance = Instance::init(&desc).unwrap();
        let exposed = instance.enumerate_adapters().remove(0);
        let open = exposed
            .adapter
            .open(&DeviceDescriptor {
                required_hal_features: hal_features,
                ..Default::default()
            })
            .unwrap();
        (open.device, open.queue)
    }
}

fn open() -> (Device, Queue) {
    open_with(HalFeatures::ACCELERATION_STRUCTURE, None)
}

fn buffer(device: &Device, size: u64) -> Buffer {
    let desc = BufferDescriptor {
        size,
        // STORAGE: placed structures need it (as Vulkan's
        // ACCELERATION_STRUCTURE_STORAGE); BLAS_INPUT: build inputs do;
        // COPY_DST: compacted sizes are copied in (the shared checks).
        usage: wgt::BufferUsages::STORAGE
            | wgt::BufferUsages::BLAS_INPUT
            | wgt::BufferUsages::COPY_DST,
        memory: crate::Memory::Readback,
        ..Default::default()
    };
    // SAFETY: live device.
    unsafe { device.create_buffer(&desc) }.unwrap()
}

fn structure(device: &Device, kind: Kind, size: u64) -> AccelerationStructure {
    let desc = AccelerationStructureDescriptor {
        label: None,
        kind,
        size,
        placement: AccelerationStructurePlacement::Owned,
    };
    // SAFETY: live device.
    unsafe { device.create_acceleration_structure(&desc) }.unwrap()
}

fn triangles(vertices: Option<&Buffer>, count: u32) -> AccelerationStructureTriangles<'_, Buffer> {
    AccelerationStructureTriangles {
        vertex_buffer: vertices,
        vertex_offset: 0,
        vertex_format: wgt::VertexFormat::Float32x3,
        vertex_stride: 12,
        vertex_count: 3 * count,
        indices: None,
        transform: None,
        flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
    }
}

fn sizes_of(device: &Device, entries: &AccelerationStructureEntries<'_, Buffer>) -> Result<u64, E> {
    let desc = GetAccelerationStructureBuildSizesDescriptor {
        entries,
        flags: Flags::empty(),
    };
    // SAFETY: live device.
    unsafe { device.get_acceleration_structure_build_sizes(&desc) }
        .map(|s| s.acceleration_structure_size)
}

/// Records a build into `dst` in a fresh encoder, submits it, and returns
/// what the build call returned.
fn build(
    device: &Device,
    queue: &Queue,
    desc: BuildAccelerationStructureDescriptor<'_, Api>,
) -> Result<(), E> {
    // SAFETY: everything used lives until the fence wait.
    unsafe {
        let mut encoder = device.create_command_encoder(&Default::default()).unwrap();
        let fence = device.create_fence().unwrap();
        encoder.begin_encoding(None).unwrap();
        let built = encoder.build_acceleration_structures(&[desc]);
        let commands = encoder.end_encoding().unwrap();
        queue.submit(&[&commands], &[], &fence, 1).unwrap();
        encoder.reset_all([commands]);
        device.destroy_fence(fence);
        device.destroy_command_encoder(encoder);
        built
    }
}

fn build_desc<'a>(
    entries: &'a AccelerationStructureEntries<'a, Buffer>,
    dst: &'a AccelerationStructure,
    scratch: &'a Buffer,
    flags: Flags,
) -> BuildAccelerationStructureDescriptor<'a, Api> {
    BuildAccelerationStructureDescriptor {
        entries,
        mode: AccelerationStructureBuildMode::Build,
        flags,
        source_acceleration_structure: None,
        destination_acceleration_structure: dst,
        scratch_buffer: scratch,
        scratch_buffer_offset: 0,
    }
}

#[test]
fn the_adapter_has_structures_but_no_tracing() {
    // SAFETY: the noop backend loads nothing.
    let exposed = unsafe {
        Instance::init(&InstanceDescriptor::default())
            .unwrap()
            .enumerate_adapters()
            .remove(0)
    };
    let caps = exposed.capabilities;
    assert!(caps
        .hal_features
        .contains(HalFeatures::ACCELERATION_STRUCTURE));
    assert!(!caps
        .hal_features
        .intersects(HalFeatures::RAY_QUERY | HalFeatures::RAY_TRACING_PIPELINE));
    assert!(caps.limits.max_blas_primitive_count > 0);
    assert!(caps.limits.max_tlas_instance_count > 0);
    // SAFETY: one thread.
    let open = unsafe {
        exposed.adapter.open(&DeviceDescriptor {
            required_hal_features: HalFeatures::RAY_QUERY,
            ..Default::default()
        })
    };
    assert!(open.is_err());
}

#[test]
fn sizes_follow_the_geometry() {
    let (device, _queue) = open();
    let tri = [triangles(None, 10), triangles(None, 5)];
    assert_eq!(
        sizes_of(&device, &AccelerationStructureEntries::Triangles(&tri)),
        Ok(128 + 64 * 15)
    );
    let mut indexed = triangles(None, 1);
    indexed.indices = Some(TriangleIndices {
        buffer: None,
        offset: 0,
        format: wgt::IndexFormat::Uint16,
        count: 30,
    });
    let indexed = [indexed];
    assert_eq!(
        sizes_of(&device, &AccelerationStructureEntries::Triangles(&indexed)),
        Ok(128 + 64 * 10)
    );
    let boxes = [AccelerationStructureAabbs::<Buffer> {
        buffer: None,
        offset: 0,
        count: 4,
        stride: 24,
        flags: wgt::AccelerationStructureGeometryFlags::empty(),
    }];
    assert_eq!(
        sizes_of(&device, &AccelerationStructureEntries::Aabbs(&boxes)),
        Ok(128 + 64 * 4)
    );
    let instances =
        AccelerationStructureEntries::Instances(AccelerationStructureInstances::<Buffer> {
            buffer: None,
            offset: 0,
            count: 3,
        });
    let desc = GetAccelerationStructureBuildSizesDescriptor {
        entries: &instances,
        flags: Flags::ALLOW_UPDATE,
    };
    // SAFETY: live device.
    let sizes = unsafe { device.get_acceleration_structure_build_sizes(&desc) }.unwrap();
    assert_eq!(sizes.acceleration_structure_size, 320);
    assert_eq!(sizes.build_scratch_size, 160);
    assert_eq!(sizes.update_scratch_size, 160);

    let mut half = triangles(None, 1);
    half.vertex_format = wgt::VertexFormat::Float16x4;
    let half = [half];
    assert_eq!(
        sizes_of(&device, &AccelerationStructureEntries::Triangles(&half)),
        Err(E::UnsupportedVertexFormat {
            geometry: 0,
            format: wgt::VertexFormat::Float16x4,
            extended: false,
        })
    );
    let too_many = [triangles(None, 1 << 27), triangles(None, (1 << 27) + 1)];
    assert!(matches!(
        sizes_of(&device, &AccelerationStructureEntries::Triangles(&too_many)),
        Err(E::LimitExceeded {
            what: "primitives",
            limit: "max_blas_primitive_count",
            given,
            ..
        }) if given == (1 << 28) + 1
    ));
}

#[test]
fn the_device_must_ask_for_structures() {
    let (device, _queue) = open_with(HalFeatures::empty(), None);
    let tri = [triangles(None, 1)];
    let unsupported = crate::validate::acceleration::unsupported_device();
    assert_eq!(
        sizes_of(&device, &AccelerationStructureEntries::Triangles(&tri)),
        Err(unsupported.clone())
    );
    let desc = AccelerationStructureDescriptor::<Api> {
        label: None,
        kind: Kind::BottomLevel,
        size: 256,
        placement: AccelerationStructurePlacement::Owned,
    };
    // SAFETY: live device.
    let made = unsafe { device.create_acceleration_structure(&desc) };
    assert_eq!(made.map(|_| ()), Err(unsupported));
    let layout = BindGroupLayoutDescriptor {
        entries: &[tlas_layout_entry(false, None)],
        ..Default::default()
    };
    // SAFETY: live device.
    let made = unsafe { device.create_bind_group_layout(&layout) };
    assert!(matches!(made, Err(BindingError::Unsupported { .. })));
}

#[test]
fn creation_checks_placement_and_hands_out_unique_addresses() {
    let (device, _queue) = open_with(HalFeatures::ACCELERATION_STRUCTURE, Some(4096));
    let host = buffer(&device, 1024);
    let place = |size, offset| {
        let desc = AccelerationStructureDescriptor::<Api> {
            label: None,
            kind: Kind::BottomLevel,
            size,
            placement: AccelerationStructurePlacement::InBuffer {
                buffer: &host,
                offset,
            },
        };
        // SAFETY: live device; the buffer outlives the structure.
        unsafe { device.create_acceleration_structure(&desc) }
    };
    let bad = |size, offset| E::InvalidPlacement {
        role: crate::StructureBuffer::Placement,
        offset,
        size,
        buffer_size: 1024,
        alignment: 256,
    };
    assert_eq!(place(0, 0).map(|_| ()), Err(E::ZeroSize));
    assert_eq!(place(256, 128).map(|_| ()), Err(bad(256, 128)));
    assert_eq!(place(512, 768).map(|_| ()), Err(bad(512, 768)));
    let before = device.live_counts();
    let placed = place(512, 512).unwrap();
    assert!(placed.is_placed());
    assert_eq!(
        device.live_counts(),
        before,
        "a placed structure allocates nothing"
    );
    let owned = structure(&device, Kind::TopLevel, 1000);
    assert_eq!(
        device.live_counts().memory_allocations,
        before.memory_allocations + 1
    );
    // The budget counts owned structures: 1,024 + 1,000 + 3,000 > 4,096.
    let desc = AccelerationStructureDescriptor::<Api> {
        label: None,
        kind: Kind::BottomLevel,
        size: 3000,
        placement: AccelerationStructurePlacement::Owned,
    };
    // SAFETY: live device.
    let over = unsafe { device.create_acceleration_structure(&desc) };
    assert_eq!(over.unwrap_err(), E::Device(DeviceError::OutOfMemory));
    // SAFETY: live structures of this device.
    unsafe {
        let a = device.get_acceleration_structure_device_address(&placed);
        let b = device.get_acceleration_structure_device_address(&owned);
        assert!(a != 0 && b != 0 && a != b);
        assert_eq!(device.get_acceleration_structure_size(&owned), 1000);
        assert!(!owned.is_built() && owned.last_build_flags().is_none());
        device.destroy_acceleration_structure(placed);
        device.destroy_acceleration_structure(owned);
        device.destroy_buffer(host);
    }
    assert_eq!(device.live_counts(), Default::default());
}

#[test]
fn builds_are_checked_and_mark_their_structure_built() {
    let (device, queue) = open();
    let vertices = buffer(&device, 360);
    let scratch = buffer(&device, 1024);
    let tri = [triangles(Some(&vertices), 10)];
    let entries = AccelerationStructureEntries::Triangles(&tri);
    let blas = structure(&device, Kind::BottomLevel, 768);
    let tlas = structure(&device, Kind::TopLevel, 768);
    let small = structure(&device, Kind::BottomLevel, 767);

    let run = |desc| build(&device, &queue, desc);
    assert_eq!(
        run(build_desc(&entries, &tlas, &scratch, Flags::empty())),
        Err(E::WrongKind {
            what: "build entries",
            given: Kind::BottomLevel,
            expected: Kind::TopLevel,
        })
    );
    let missing = [triangles(None, 10)];
    let missing = AccelerationStructureEntries::Triangles(&missing);
    assert_eq!(
        run(build_desc(&missing, &blas, &scratch, Flags::empty())),
        Err(E::MissingInput(crate::StructureBuffer::Vertices(0)))
    );
    assert_eq!(
        run(build_desc(&entries, &small, &scratch, Flags::empty())),
        Err(E::TooSmall {
            required: 768,
            size: 767
        })
    );
    let mut misaligned = build_desc(&entries, &blas, &scratch, Flags::empty());
    misaligned.scratch_buffer_offset = 128;
    assert_eq!(
        run(misaligned),
        Err(E::Scratch {
            offset: 128,
            required: 384,
            available: 896,
            alignment: 256,
        })
    );
    let mut short = build_desc(&entries, &blas, &scratch, Flags::empty());
    short.scratch_buffer_offset = 768;
    assert_eq!(
        run(short),
        Err(E::Scratch {
            offset: 768,
            required: 384,
            available: 256,
            alignment: 256,
        })
    );
    // Nothing was recorded by the failed builds.
    assert!(!blas.is_built() && blas.last_build_flags().is_none());

    assert_eq!(
        run(build_desc(&entries, &blas, &scratch, Flags::empty())),
        Ok(())
    );
    assert!(blas.is_built());
    assert_eq!(blas.last_build_flags(), Some(Flags::empty()));

    // Updates need a source and ALLOW_UPDATE, in the flags and the source's build.
    let update = |source, flags| BuildAccelerationStructureDescriptor {
        mode: AccelerationStructureBuildMode::Update,
        source_acceleration_structure: source,
        ..build_desc(&entries, &blas, &scratch, flags)
    };
    assert_eq!(
        run(update(None, Flags::ALLOW_UPDATE)),
        Err(E::MissingSource)
    );
    assert_eq!(
        run(update(Some(&blas), Flags::ALLOW_UPDATE)),
        Err(E::MissingFlag("ALLOW_UPDATE"))
    );
    assert_eq!(
        run(build_desc(&entries, &blas, &scratch, Flags::ALLOW_UPDATE)),
        Ok(())
    );
    assert!(matches!(
        run(update(Some(&blas), Flags::empty())),
        Err(E::MissingFlag(_))
    ));
    assert_eq!(run(update(Some(&blas), Flags::ALLOW_UPDATE)), Ok(()));

    // SAFETY: every submission has run (noop executes at submit).
    unsafe {
        for s in [blas, tlas, small] {
            device.destroy_acceleration_structure(s);
        }
        device.destroy_buffer(vertices);
        device.destroy_buffer(scratch);
    }
    assert_eq!(device.live_counts(), Default::default());
}

#[test]
fn copies_and_compacted_sizes() {
    let (device, queue) = open();
    let vertices = buffer(&device, 360);
    let scratch = buffer(&device, 1024);
    let sizes = buffer(&device, 32);
    let tri = [triangles(Some(&vertices), 10)];
    let entries = AccelerationStructureEntries::Triangles(&tri);
    let compactable = structure(&device, Kind::BottomLevel, 800);
    let plain = structure(&device, Kind::BottomLevel, 768);
    let target = structure(&device, Kind::BottomLevel, 800);
    let small = structure(&device, Kind::BottomLevel, 768);
    let tlas = structure(&device, Kind::TopLevel, 800);
    build(
        &device,
        &queue,
        build_desc(&entries, &compactable, &scratch, Flags::ALLOW_COMPACTION),
    )
    .unwrap();
    build(
        &device,
        &queue,
        build_desc(&entries, &plain, &scratch, Flags::empty()),
    )
    .unwrap();

    // SAFETY: everything used lives until the submission has run.
    unsafe {
        let mut encoder = device.create_command_encoder(&Default::default()).unwrap();
        let fence = device.create_fence().unwrap();
        encoder.begin_encoding(None).unwrap();
        let compact = AccelerationStructureCopy::Compact;
        // Inside a pass: refused, recording nothing.
        encoder.begin_compute_pass(&ComputePassDescriptor::default());
        assert_eq!(
            encoder.copy_acceleration_structure(&compactable, &target, compact),
            Err(E::Device(DeviceError::InvalidState(
                "recorded inside a pass"
            )))
        );
        encoder.end_compute_pass();
        assert_eq!(
            encoder.copy_acceleration_structure(&compactable, &tlas, compact),
            Err(E::WrongKind {
                what: "the copy's destination",
                given: Kind::TopLevel,
                expected: Kind::BottomLevel,
            })
        );
        assert_eq!(
            encoder.copy_acceleration_structure(&plain, &target, compact),
            Err(E::MissingFlag("ALLOW_COMPACTION"))
        );
        assert_eq!(
            encoder.copy_acceleration_structure(&compactable, &small, compact),
            Err(E::TooSmall {
                required: 800,
                size: 768
            })
        );
        assert_eq!(
            encoder.read_acceleration_structure_compacted_sizes(&[&compactable, &plain], &sizes, 0),
            Err(E::MissingFlag("ALLOW_COMPACTION"))
        );
        assert_eq!(
            encoder.read_acceleration_structure_compacted_sizes(&[&tlas], &sizes, 0),
            Err(E::WrongKind {
                what: "a structure whose compacted size is read",
                given: Kind::TopLevel,
                expected: Kind::BottomLevel,
            })
        );
        for offset in [4, 32] {
            assert_eq!(
                encoder.read_acceleration_structure_compacted_sizes(
                    &[&compactable],
                    &sizes,
                    offset
                ),
                Err(E::InvalidPlacement {
                    role: crate::StructureBuffer::CompactedSizes,
                    offset,
                    size: 8,
                    buffer_size: 32,
                    alignment: 8,
                })
            );
        }
        encoder.place_acceleration_structure_barrier(AccelerationStructureBarrier {
            structures: &[&compactable],
            usage: StateTransition {
                from: AccelerationStructureUses::BUILD_OUTPUT,
                to: AccelerationStructureUses::COPY_SRC,
            },
        });
        encoder
            .read_acceleration_structure_compacted_sizes(&[&compactable, &compactable], &sizes, 8)
            .unwrap();
        encoder
            .copy_acceleration_structure(&compactable, &target, compact)
            .unwrap();
        encoder
            .copy_acceleration_structure(&plain, &small, AccelerationStructureCopy::Clone)
            .unwrap();
        assert!(!target.is_built(), "built at submit, not when recorded");
        let commands = encoder.end_encoding().unwrap();
        queue.submit(&[&commands], &[], &fence, 1).unwrap();
        assert!(target.is_built() && small.is_built());
        assert_eq!(target.last_build_flags(), Some(Flags::ALLOW_COMPACTION));
        let map = device.map_buffer(&sizes).unwrap();
        let bytes = std::slice::from_raw_parts(map.ptr.as_ptr(), 32);
        let word = |i: usize| u64::from_ne_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap());
        assert_eq!([word(0), word(1), word(2), word(3)], [0, 800, 800, 0]);

        encoder.reset_all([commands]);
        device.destroy_fence(fence);
        device.destroy_command_encoder(encoder);
        for s in [compactable, plain, target, small, tlas] {
            device.destroy_acceleration_structure(s);
        }
        for b in [vertices, scratch, sizes] {
            device.destroy_buffer(b);
        }
    }
    assert_eq!(device.live_counts(), Default::default());
}

fn tlas_layout_entry(vertex_return: bool, count: Option<u32>) -> wgt::BindGroupLayoutEntry {
    wgt::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgt::ShaderStages::COMPUTE,
        ty: wgt::BindingType::AccelerationStructure { vertex_return },
        count: count.and_then(std::num::NonZeroU32::new),
    }
}

#[test]
fn top_level_structures_bind() {
    let (device, _queue) = open();
    let layout = |entry| {
        let desc = BindGroupLayoutDescriptor {
            entries: &[entry],
            ..Default::default()
        };
        // SAFETY: live device.
        unsafe { device.create_bind_group_layout(&desc) }
    };
    assert!(matches!(
        layout(tlas_layout_entry(true, None)),
        Err(BindingError::Unsupported { .. })
    ));
    assert!(matches!(
        layout(tlas_layout_entry(false, Some(2))),
        Err(BindingError::Unsupported { .. })
    ));
    let layout = layout(tlas_layout_entry(false, None)).unwrap();
    let tlas = structure(&device, Kind::TopLevel, 256);
    let blas = structure(&device, Kind::BottomLevel, 256);
    let group = |structure| {
        let entries = [BindGroupEntry {
            binding: 0,
            resource: BindingResource::AccelerationStructure(structure),
        }];
        let desc = BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &entries,
        };
        // SAFETY: live device; the layout and structure outlive the group.
        unsafe { device.create_bind_group(&desc) }
    };
    assert!(matches!(group(&blas), Err(BindingError::WrongType { .. })));
    let made = group(&tlas).unwrap();
    // SAFETY: no GPU work uses any of them.
    unsafe {
        device.destroy_bind_group(made);
        device.destroy_bind_group_layout(layout);
        device.destroy_acceleration_structure(tlas);
        device.destroy_acceleration_structure(blas);
    }
    assert_eq!(device.live_counts(), Default::default());
}

#[test]
fn ray_tracing_pipelines_are_unsupported_and_passes_do_nothing() {
    let (device, queue) = open();
    // SAFETY: live device; everything is destroyed after the submission.
    unsafe {
        let layout = device
            .create_pipeline_layout(&PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: &[],
                push_constant_ranges: &[],
            })
            .unwrap();
        let made = device.create_ray_tracing_pipeline(&RayTracingPipelineDescriptor {
            label: None,
            layout: &layout,
            stages: &[],
            groups: &[],
            max_recursion_depth: 1,
            cache: None,
        });
        assert!(matches!(made, Err(PipelineError::Unsupported(_))));

        // A table assembled by hand: tracing with it is accepted and does nothing.
        let table = ShaderBindingTable {
            buffer: buffer(&device, 64),
            ray_generation: Default::default(),
            miss: Default::default(),
            hit: Default::default(),
        };
        let mut encoder = device.create_command_encoder(&Default::default()).unwrap();
        let fence = device.create_fence().unwrap();
        encoder.begin_encoding(None).unwrap();
        encoder.begin_ray_tracing_pass(&ComputePassDescriptor::default());
        encoder.trace_rays(&table, [4, 4, 1]);
        encoder.end_ray_tracing_pass();
        let commands = encoder.end_encoding().unwrap();
        queue.submit(&[&commands], &[], &fence, 1).unwrap();
        encoder.reset_all([commands]);
        device.destroy_shader_binding_table(table);
        device.destroy_fence(fence);
        device.destroy_command_encoder(encoder);
        device.destroy_pipeline_layout(layout);
    }
    assert_eq!(device.live_counts(), Default::default());
}
