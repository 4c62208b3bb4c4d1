//! Vulkan-only checks of acceleration structures on a real adapter, with
//! the validation layer on (any validation error fails): a one-triangle BLAS
//! (indexed, with a transform), an AABB BLAS and a TLAS placed in a caller's
//! buffer, bound in a bind group; 1,000 compactable BLASes whose compacted
//! sizes are read in batches of 256 through the shared query pools and then
//! compacted; the cheap checks' typed errors. Skips (with a message) where no
//! adapter has acceleration structures.
#![cfg(feature = "vulkan")]

use keel_hal::vulkan;
use keel_hal::wgt;
use keel_hal::{
    AccelerationStructureAabbs, AccelerationStructureBarrier, AccelerationStructureBuildMode,
    AccelerationStructureCopy, AccelerationStructureDescriptor, AccelerationStructureEntries,
    AccelerationStructureError, AccelerationStructureInstances, AccelerationStructureKind,
    AccelerationStructurePlacement, AccelerationStructureTriangles, AccelerationStructureUses,
    BindGroupDescriptor, BindGroupEntry, BindGroupLayoutDescriptor, BindingResource,
    BufferDescriptor, BuildAccelerationStructureDescriptor, DeviceDescriptor,
    GetAccelerationStructureBuildSizesDescriptor, HalFeatures, InstanceDescriptor, InstanceFlags,
    Memory, StateTransition, StructureBuffer, TlasInstance, TriangleIndices,
};
use keel_hal::{Adapter as _, CommandEncoder as _, Device as _, Instance as _, Queue as _};

use wgt::AccelerationStructureFlags as Flags;
use wgt::BufferUsages as U;

struct Gpu {
    instance: vulkan::Instance,
    device: vulkan::Device,
    queue: vulkan::Queue,
}

fn open(name: &str) -> Option<Gpu> {
    let _ = env_logger::builder().is_test(true).try_init();
    let desc = InstanceDescriptor {
        name,
        flags: InstanceFlags::VALIDATION | InstanceFlags::DEBUG,
        ..Default::default()
    };
    // SAFETY: the system loader is trusted.
    let Ok(instance) = (unsafe { vulkan::Instance::init(&desc) }) else {
        println!("skipped: no Vulkan");
        return None;
    };
    // SAFETY: live instance.
    let adapters = unsafe { instance.enumerate_adapters() };
    let Some(exposed) = adapters.into_iter().find(|a| {
        a.capabilities
            .hal_features
            .contains(HalFeatures::ACCELERATION_STRUCTURE)
    }) else {
        println!("skipped: no adapter with acceleration structures");
        return None;
    };
    let desc = DeviceDescriptor {
        required_hal_features: HalFeatures::ACCELERATION_STRUCTURE,
        ..Default::default()
    };
    // SAFETY: opened once, dropped after everything it made.
    let open = unsafe { exposed.adapter.open(&desc) }.expect("open");
    Some(Gpu {
        instance,
        device: open.device,
        queue: open.queue,
    })
}

/// Rounds `v` up to a multiple of `a`.
fn align(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

impl Gpu {
    fn buffer(&self, size: u64, usage: wgt::BufferUsages, memory: Memory) -> vulkan::Buffer {
        let desc = BufferDescriptor {
            label: None,
            size,
            usage,
            memory,
        };
        // SAFETY: destroyed by the test before the device goes.
        unsafe { self.device.create_buffer(&desc) }.expect("buffer")
    }

    /// An upload buffer holding `bytes`, usable as a build input.
    fn input(&self, bytes: &[u8], usage: wgt::BufferUsages) -> vulkan::Buffer {
        let buffer = self.buffer(bytes.len() as u64, usage | U::MAP_WRITE, Memory::Upload);
        // SAFETY: an Upload buffer no GPU work uses yet; in bounds.
        unsafe {
            let map = self.device.map_buffer(&buffer).expect("map");
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.ptr.as_ptr(), bytes.len());
        }
        buffer
    }

    fn read_u64s(&self, buffer: &vulkan::Buffer, count: usize) -> Vec<u64> {
        // SAFETY: a Readback buffer the GPU is done with.
        unsafe {
            let map = self.device.map_buffer(buffer).expect("map");
            let bytes = std::slice::from_raw_parts(map.ptr.as_ptr(), count * 8);
            bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect()
        }
    }

    fn structure(
        &self,
        kind: AccelerationStructureKind,
        size: u64,
        placement: AccelerationStructurePlacement<'_, vulkan::Buffer>,
    ) -> Result<vulkan::AccelerationStructure, AccelerationStructureError> {
        // SAFETY: destroyed by the test before the device (and any placement buffer).
        unsafe {
            self.device
                .create_acceleration_structure(&AccelerationStructureDescriptor {
                    label: Some("test structure"),
                    kind,
                    size,
                    placement,
                })
        }
    }

    fn sizes(
        &self,
        entries: &AccelerationStructureEntries<'_, vulkan::Buffer>,
        flags: Flags,
    ) -> keel_hal::AccelerationStructureBuildSizes {
        // SAFETY: live device.
        unsafe {
            self.device.get_acceleration_structure_build_sizes(
                &GetAccelerationStructureBuildSizesDescriptor { entries, flags },
            )
        }
        .expect("sizes")
    }

    /// Submits the encoder's recording and waits for it.
    fn submit_and_wait(&self, encoder: &mut vulkan::CommandEncoder) -> vulkan::CommandBuffer {
        // SAFETY: waited for before anything it uses is reset or destroyed.
        unsafe {
            let cb = encoder.end_encoding().expect("end");
            let fence = self.device.create_fence().expect("fence");
            self.queue.submit(&[&cb], &[], &fence, 1).expect("submit");
            // A GPU that never finishes fails the test instead of hanging it.
            let limit = Some(std::time::Duration::from_secs(60));
            let done = self.device.wait(&fence, 1, limit).expect("wait");
            assert!(done, "the GPU did not finish within 60 s");
            self.device.destroy_fence(fence);
            cb
        }
    }

    fn assert_no_validation_errors(&self) {
        assert_eq!(
            self.instance.validation_counter().errors(),
            0,
            "validation errors (see the log)"
        );
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

const IDENTITY: [f32; 12] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];

fn barrier(
    encoder: &mut vulkan::CommandEncoder,
    structures: &[&vulkan::AccelerationStructure],
    from: AccelerationStructureUses,
    to: AccelerationStructureUses,
) {
    // SAFETY: recording, outside a pass; the structures are in `from`.
    unsafe {
        encoder.place_acceleration_structure_barrier(AccelerationStructureBarrier {
            structures,
            usage: StateTransition { from, to },
        })
    };
}

#[test]
fn triangle_blas_aabb_blas_and_placed_tlas() {
    let Some(gpu) = open("keel-hal AS build") else {
        return;
    };
    let vertices = gpu.input(
        &f32_bytes(&[0.0, 0.5, 0.0, -0.5, -0.5, 0.0, 0.5, -0.5, 0.0]),
        U::BLAS_INPUT,
    );
    let index_bytes: Vec<u8> = [0u32, 1, 2].iter().flat_map(|i| i.to_le_bytes()).collect();
    let indices = gpu.input(&index_bytes, U::BLAS_INPUT);
    let transform = gpu.input(&f32_bytes(&IDENTITY), U::BLAS_INPUT);
    let aabbs = gpu.input(
        &f32_bytes(&[-1.0, -1.0, -1.0, 1.0, 1.0, 1.0]),
        U::BLAS_INPUT,
    );
    let triangles = [AccelerationStructureTriangles {
        vertex_buffer: Some(&vertices),
        vertex_offset: 0,
        vertex_format: wgt::VertexFormat::Float32x3,
        vertex_stride: 12,
        vertex_count: 3,
        indices: Some(TriangleIndices {
            buffer: Some(&indices),
            offset: 0,
            format: wgt::IndexFormat::Uint32,
            count: 3,
        }),
        transform: Some((&transform, 0)),
        flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
    }];
    let boxes = [AccelerationStructureAabbs {
        buffer: Some(&aabbs),
        offset: 0,
        count: 1,
        stride: 24,
        flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
    }];
    let tri_entries = AccelerationStructureEntries::Triangles(&triangles);
    let box_entries = AccelerationStructureEntries::Aabbs(&boxes);
    let flags = Flags::PREFER_FAST_TRACE | Flags::ALLOW_UPDATE;
    let tri_sizes = gpu.sizes(&tri_entries, flags);
    let box_sizes = gpu.sizes(&box_entries, flags);
    assert!(tri_sizes.acceleration_structure_size > 0 && tri_sizes.build_scratch_size > 0);
    let blas = gpu
        .structure(
            AccelerationStructureKind::BottomLevel,
            tri_sizes.acceleration_structure_size,
            AccelerationStructurePlacement::Owned,
        )
        .expect("triangle BLAS");
    let box_blas = gpu
        .structure(
            AccelerationStructureKind::BottomLevel,
            box_sizes.acceleration_structure_size,
            AccelerationStructurePlacement::Owned,
        )
        .expect("AABB BLAS");

    // SAFETY: live structure.
    let blas_address = unsafe { gpu.device.get_acceleration_structure_device_address(&blas) };
    assert_ne!(blas_address, 0);
    let mut instance = TlasInstance {
        transform: IDENTITY,
        custom_index: 7,
        mask: 0xff,
        sbt_record_offset: 0,
        flags: keel_hal::TlasInstanceFlags::empty(),
        blas_address,
    };
    let mut records = keel_hal::encode_tlas_instance(&instance).to_vec();
    instance.transform[3] = 2.0;
    // SAFETY: live structure.
    instance.blas_address = unsafe {
        gpu.device
            .get_acceleration_structure_device_address(&box_blas)
    };
    records.extend(keel_hal::encode_tlas_instance(&instance));
    let instances = gpu.input(&records, U::TLAS_INPUT);
    let tlas_entries = AccelerationStructureEntries::Instances(AccelerationStructureInstances {
        buffer: Some(&instances),
        offset: 0,
        count: 2,
    });
    let tlas_sizes = gpu.sizes(&tlas_entries, Flags::PREFER_FAST_TRACE);
    // The TLAS lives in a caller's buffer, 256 bytes in.
    let tlas_size = tlas_sizes.acceleration_structure_size;
    let storage = gpu.buffer(256 + tlas_size, U::STORAGE, Memory::Device);
    let tlas = gpu
        .structure(
            AccelerationStructureKind::TopLevel,
            tlas_size,
            AccelerationStructurePlacement::InBuffer {
                buffer: &storage,
                offset: 256,
            },
        )
        .expect("placed TLAS");
    // SAFETY: live structures.
    unsafe {
        assert_eq!(gpu.device.get_acceleration_structure_size(&tlas), tlas_size);
    }

    // One scratch buffer, one aligned region per build.
    let a = gpu.device.min_scratch_offset_alignment();
    assert!(a.is_power_of_two() && a <= vulkan::SAFE_SCRATCH_OFFSET_ALIGNMENT);
    let box_offset = align(tri_sizes.build_scratch_size, a);
    let tlas_offset = box_offset + align(box_sizes.build_scratch_size, a);
    let scratch = gpu.buffer(
        tlas_offset + tlas_sizes.build_scratch_size,
        U::STORAGE,
        Memory::Device,
    );

    // SAFETY: every resource outlives the wait below.
    let mut encoder =
        unsafe { gpu.device.create_command_encoder(&Default::default()) }.expect("encoder");
    unsafe {
        encoder.begin_encoding(Some("builds")).expect("begin");
        encoder
            .build_acceleration_structures(&[
                BuildAccelerationStructureDescriptor {
                    entries: &tri_entries,
                    mode: AccelerationStructureBuildMode::Build,
                    flags,
                    source_acceleration_structure: None,
                    destination_acceleration_structure: &blas,
                    scratch_buffer: &scratch,
                    scratch_buffer_offset: 0,
                },
                BuildAccelerationStructureDescriptor {
                    entries: &box_entries,
                    mode: AccelerationStructureBuildMode::Build,
                    flags,
                    source_acceleration_structure: None,
                    destination_acceleration_structure: &box_blas,
                    scratch_buffer: &scratch,
                    scratch_buffer_offset: box_offset,
                },
            ])
            .expect("BLAS builds");
    }
    use AccelerationStructureUses as Uses;
    barrier(
        &mut encoder,
        &[&blas, &box_blas],
        Uses::BUILD_OUTPUT,
        Uses::BUILD_INPUT,
    );
    // SAFETY: as above.
    unsafe {
        encoder
            .build_acceleration_structures(&[BuildAccelerationStructureDescriptor {
                entries: &tlas_entries,
                mode: AccelerationStructureBuildMode::Build,
                flags: Flags::PREFER_FAST_TRACE,
                source_acceleration_structure: None,
                destination_acceleration_structure: &tlas,
                scratch_buffer: &scratch,
                scratch_buffer_offset: tlas_offset,
            }])
            .expect("TLAS build");
    }
    barrier(
        &mut encoder,
        &[&tlas],
        Uses::BUILD_OUTPUT,
        Uses::SHADER_INPUT,
    );
    // A refit of the triangle BLAS in place (built with ALLOW_UPDATE).
    barrier(
        &mut encoder,
        &[&blas],
        Uses::BUILD_INPUT,
        Uses::BUILD_OUTPUT,
    );
    // SAFETY: as above.
    unsafe {
        encoder
            .build_acceleration_structures(&[BuildAccelerationStructureDescriptor {
                entries: &tri_entries,
                mode: AccelerationStructureBuildMode::Update,
                flags,
                source_acceleration_structure: Some(&blas),
                destination_acceleration_structure: &blas,
                scratch_buffer: &scratch,
                scratch_buffer_offset: 0,
            }])
            .expect("BLAS update");
    }
    let cb = gpu.submit_and_wait(&mut encoder);

    // The TLAS binds; a BLAS does not.
    let entries = [wgt::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgt::ShaderStages::COMPUTE,
        ty: wgt::BindingType::AccelerationStructure {
            vertex_return: false,
        },
        count: None,
    }];
    // SAFETY: destroyed below.
    let layout = unsafe {
        gpu.device
            .create_bind_group_layout(&BindGroupLayoutDescriptor {
                label: None,
                flags: Default::default(),
                entries: &entries,
            })
    }
    .expect("layout");
    let group = |s| {
        let entries = [BindGroupEntry {
            binding: 0,
            resource: BindingResource::AccelerationStructure(s),
        }];
        // SAFETY: destroyed below.
        unsafe {
            gpu.device.create_bind_group(&BindGroupDescriptor {
                label: None,
                layout: &layout,
                entries: &entries,
            })
        }
    };
    let bound = group(&tlas).expect("TLAS bind group");
    assert!(matches!(
        group(&blas),
        Err(keel_hal::BindingError::WrongType { binding: 0, .. })
    ));

    // SAFETY: the GPU is done with everything.
    unsafe {
        gpu.device.destroy_bind_group(bound);
        gpu.device.destroy_bind_group_layout(layout);
        encoder.reset_all([cb]);
        gpu.device.destroy_command_encoder(encoder);
        gpu.device.destroy_acceleration_structure(tlas);
        gpu.device.destroy_acceleration_structure(blas);
        gpu.device.destroy_acceleration_structure(box_blas);
        for b in [
            storage, scratch, instances, vertices, indices, transform, aabbs,
        ] {
            gpu.device.destroy_buffer(b);
        }
    }
    assert_eq!(gpu.device.live_counts(), keel_hal::LiveCounts::default());
    gpu.assert_no_validation_errors();
}

#[test]
fn thousand_compactable_blases_share_a_few_query_pools() {
    const COUNT: usize = 1000;
    const BATCH: usize = 256;
    let Some(gpu) = open("keel-hal AS compaction") else {
        return;
    };
    let start = gpu.device.live_counts();
    // A small mesh: a strip of 8 triangles.
    let positions: Vec<f32> = (0..10)
        .flat_map(|i| [(i / 2) as f32, (i % 2) as f32, 0.0])
        .collect();
    let vertices = gpu.input(&f32_bytes(&positions), U::BLAS_INPUT);
    let index_list: Vec<u32> = (0..8u32)
        .flat_map(|i| {
            if i % 2 == 0 {
                [i, i + 1, i + 2]
            } else {
                [i + 1, i, i + 2]
            }
        })
        .collect();
    let indices = gpu.input(
        &index_list
            .iter()
            .flat_map(|i| i.to_le_bytes())
            .collect::<Vec<_>>(),
        U::BLAS_INPUT,
    );
    let triangles = [AccelerationStructureTriangles {
        vertex_buffer: Some(&vertices),
        vertex_offset: 0,
        vertex_format: wgt::VertexFormat::Float32x3,
        vertex_stride: 12,
        vertex_count: 10,
        indices: Some(TriangleIndices {
            buffer: Some(&indices),
            offset: 0,
            format: wgt::IndexFormat::Uint32,
            count: index_list.len() as u32,
        }),
        transform: None,
        flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
    }];
    let entries = AccelerationStructureEntries::Triangles(&triangles);
    let flags = Flags::PREFER_FAST_TRACE | Flags::ALLOW_COMPACTION;
    let sizes = gpu.sizes(&entries, flags);
    let blases: Vec<_> = (0..COUNT)
        .map(|_| {
            gpu.structure(
                AccelerationStructureKind::BottomLevel,
                sizes.acceleration_structure_size,
                AccelerationStructurePlacement::Owned,
            )
            .expect("BLAS")
        })
        .collect();
    let stride = align(
        sizes.build_scratch_size,
        gpu.device.min_scratch_offset_alignment(),
    );
    let scratch = gpu.buffer(stride * BATCH as u64, U::STORAGE, Memory::Device);
    let readback = gpu.buffer(
        8 * COUNT as u64,
        U::COPY_DST | U::MAP_READ,
        Memory::Readback,
    );

    // SAFETY: every resource outlives the waits; the encoder's command
    // buffers are reset once all of them completed.
    let mut encoder =
        unsafe { gpu.device.create_command_encoder(&Default::default()) }.expect("encoder");
    let mut command_buffers = Vec::new();
    let mut most_pools = 0;
    for (b, chunk) in blases.chunks(BATCH).enumerate() {
        let descs: Vec<_> = chunk
            .iter()
            .enumerate()
            .map(|(i, blas)| BuildAccelerationStructureDescriptor {
                entries: &entries,
                mode: AccelerationStructureBuildMode::Build,
                flags,
                source_acceleration_structure: None,
                destination_acceleration_structure: blas,
                scratch_buffer: &scratch,
                scratch_buffer_offset: i as u64 * stride,
            })
            .collect();
        let refs: Vec<_> = chunk.iter().collect();
        // SAFETY: see above.
        unsafe {
            encoder
                .begin_encoding(Some("build + sizes"))
                .expect("begin");
            encoder
                .build_acceleration_structures(&descs)
                .expect("build");
            encoder
                .read_acceleration_structure_compacted_sizes(
                    &refs,
                    &readback,
                    (b * BATCH * 8) as u64,
                )
                .expect("read sizes");
        }
        command_buffers.push(gpu.submit_and_wait(&mut encoder));
        most_pools = most_pools.max(gpu.device.live_counts().compaction_query_pools);
    }
    let pools = gpu.device.live_counts().compaction_query_pools - start.compaction_query_pools;
    let bound = COUNT.div_ceil(512) as isize + 1;
    println!("{COUNT} compactable BLASes, batches of {BATCH}: {pools} compaction query pools (bound {bound})");
    assert!(pools >= 1 && pools <= bound, "{pools} pools");

    let compacted_sizes = gpu.read_u64s(&readback, COUNT);
    let compacted: Vec<_> = compacted_sizes
        .iter()
        .map(|&size| {
            assert!(
                size > 0 && size <= sizes.acceleration_structure_size,
                "{size}"
            );
            gpu.structure(
                AccelerationStructureKind::BottomLevel,
                size,
                AccelerationStructurePlacement::Owned,
            )
            .expect("compacted BLAS")
        })
        .collect();
    // SAFETY: see above.
    unsafe {
        encoder.begin_encoding(Some("compact")).expect("begin");
        use AccelerationStructureUses as Uses;
        let all: Vec<_> = blases.iter().collect();
        barrier(&mut encoder, &all, Uses::BUILD_OUTPUT, Uses::COPY_SRC);
        for (src, dst) in blases.iter().zip(&compacted) {
            encoder
                .copy_acceleration_structure(src, dst, AccelerationStructureCopy::Compact)
                .expect("compact");
        }
    }
    command_buffers.push(gpu.submit_and_wait(&mut encoder));
    let before: u64 = sizes.acceleration_structure_size * COUNT as u64;
    let after: u64 = compacted_sizes.iter().sum();
    println!(
        "bytes before compaction: {before}, after: {after} ({:.1}%)",
        100.0 * after as f64 / before as f64
    );
    assert!(after <= before);

    // SAFETY: the GPU is done with everything.
    unsafe {
        for s in blases.into_iter().chain(compacted) {
            gpu.device.destroy_acceleration_structure(s);
        }
        assert!(
            gpu.device.live_counts().compaction_query_pools >= 1,
            "slots held until reset"
        );
        encoder.reset_all(command_buffers);
        assert_eq!(
            gpu.device.live_counts().compaction_query_pools,
            start.compaction_query_pools
        );
        gpu.device.destroy_command_encoder(encoder);
        for b in [scratch, readback, vertices, indices] {
            gpu.device.destroy_buffer(b);
        }
    }
    assert!(most_pools as usize <= COUNT.div_ceil(512) + 1);
    assert_eq!(gpu.device.live_counts(), start);
    gpu.assert_no_validation_errors();
}

#[test]
fn cheap_checks_return_typed_errors() {
    let Some(gpu) = open("keel-hal AS errors") else {
        return;
    };
    let vertices = gpu.input(
        &f32_bytes(&[0.0, 1.0, 0.0, -1.0, -1.0, 0.0, 1.0, -1.0, 0.0]),
        U::BLAS_INPUT,
    );
    let triangles = [AccelerationStructureTriangles {
        vertex_buffer: Some(&vertices),
        vertex_offset: 0,
        vertex_format: wgt::VertexFormat::Float32x3,
        vertex_stride: 12,
        vertex_count: 3,
        indices: None,
        transform: None,
        flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
    }];
    let entries = AccelerationStructureEntries::Triangles(&triangles);
    let sizes = gpu.sizes(&entries, Flags::empty());
    let a = gpu.device.min_scratch_offset_alignment();
    // Exactly one build's scratch (rounded to the alignment).
    let scratch_size = align(sizes.build_scratch_size, a);
    let scratch = gpu.buffer(scratch_size, U::STORAGE, Memory::Device);
    let size = sizes.acceleration_structure_size;
    let bottom = |size| {
        gpu.structure(
            AccelerationStructureKind::BottomLevel,
            size,
            AccelerationStructurePlacement::Owned,
        )
        .expect("BLAS")
    };
    let plain = bottom(size);
    let small = bottom((size / 2).max(1));
    let target = bottom(size);
    let top = gpu
        .structure(
            AccelerationStructureKind::TopLevel,
            size,
            AccelerationStructurePlacement::Owned,
        )
        .expect("TLAS");
    let sizes_buffer = gpu.buffer(64, U::COPY_DST | U::MAP_READ, Memory::Readback);
    let storage = gpu.buffer(4096, U::STORAGE, Memory::Device);

    // Placement: misaligned, too large, wrong usage.
    let placed = |buffer, offset, size| {
        gpu.structure(
            AccelerationStructureKind::BottomLevel,
            size,
            AccelerationStructurePlacement::InBuffer { buffer, offset },
        )
        .map(|s| {
            // SAFETY: never used.
            unsafe { gpu.device.destroy_acceleration_structure(s) }
        })
    };
    let bad = |offset, size| {
        Err(AccelerationStructureError::InvalidPlacement {
            role: StructureBuffer::Placement,
            offset,
            size,
            buffer_size: 4096,
            alignment: 256,
        })
    };
    assert_eq!(placed(&storage, 100, 256), bad(100, 256));
    assert_eq!(placed(&storage, 3840, 512), bad(3840, 512));
    assert_eq!(
        placed(&sizes_buffer, 0, 64),
        Err(AccelerationStructureError::BufferUsage {
            role: StructureBuffer::Placement,
            usage: U::COPY_DST | U::MAP_READ,
            allowed: U::STORAGE,
        })
    );

    let build = |dst, flags, mode, source, offset| BuildAccelerationStructureDescriptor {
        entries: &entries,
        mode,
        flags,
        source_acceleration_structure: source,
        destination_acceleration_structure: dst,
        scratch_buffer: &scratch,
        scratch_buffer_offset: offset,
    };
    use AccelerationStructureBuildMode::{Build, Update};
    // SAFETY: every resource outlives the wait below.
    let mut encoder =
        unsafe { gpu.device.create_command_encoder(&Default::default()) }.expect("encoder");
    unsafe {
        encoder.begin_encoding(Some("errors")).expect("begin");
        // Smaller than the size query said.
        let e =
            encoder.build_acceleration_structures(&[build(&small, Flags::empty(), Build, None, 0)]);
        assert!(
            matches!(e, Err(AccelerationStructureError::TooSmall { required, size: s })
                if required == size && s < size),
            "{e:?}"
        );
        // Triangles into a TLAS.
        let e =
            encoder.build_acceleration_structures(&[build(&top, Flags::empty(), Build, None, 0)]);
        assert_eq!(
            e,
            Err(AccelerationStructureError::WrongKind {
                what: "build entries",
                given: keel_hal::AccelerationStructureKind::BottomLevel,
                expected: keel_hal::AccelerationStructureKind::TopLevel,
            })
        );
        // A misaligned scratch offset (where the device asks any alignment).
        if a > 1 {
            let e = encoder.build_acceleration_structures(&[build(
                &plain,
                Flags::empty(),
                Build,
                None,
                1,
            )]);
            assert!(
                matches!(e, Err(AccelerationStructureError::Scratch { offset: 1, alignment, .. })
                    if alignment == a),
                "{e:?}"
            );
        }
        // Scratch too small from the offset.
        let e = encoder.build_acceleration_structures(&[build(
            &plain,
            Flags::empty(),
            Build,
            None,
            align(sizes.build_scratch_size, a),
        )]);
        let offset = align(sizes.build_scratch_size, a);
        assert_eq!(
            e,
            Err(AccelerationStructureError::Scratch {
                offset,
                available: scratch_size.saturating_sub(offset),
                required: sizes.build_scratch_size,
                alignment: a,
            })
        );
        // A valid build without ALLOW_COMPACTION / ALLOW_UPDATE.
        encoder
            .build_acceleration_structures(&[build(&plain, Flags::empty(), Build, None, 0)])
            .expect("plain build");
        // An update of a structure built without ALLOW_UPDATE, and one without a source.
        let e = encoder.build_acceleration_structures(&[build(
            &plain,
            Flags::empty(),
            Update,
            Some(&plain),
            0,
        )]);
        assert_eq!(
            e,
            Err(AccelerationStructureError::MissingFlag("ALLOW_UPDATE"))
        );
        let e = encoder.build_acceleration_structures(&[build(
            &plain,
            Flags::empty(),
            Update,
            None,
            0,
        )]);
        assert_eq!(e, Err(AccelerationStructureError::MissingSource));
        barrier(
            &mut encoder,
            &[&plain],
            AccelerationStructureUses::BUILD_OUTPUT,
            AccelerationStructureUses::COPY_SRC,
        );
        // Compacting a structure built without ALLOW_COMPACTION.
        let e = encoder.copy_acceleration_structure(
            &plain,
            &target,
            AccelerationStructureCopy::Compact,
        );
        assert_eq!(
            e,
            Err(AccelerationStructureError::MissingFlag("ALLOW_COMPACTION"))
        );
        let e = encoder.read_acceleration_structure_compacted_sizes(&[&plain], &sizes_buffer, 0);
        assert_eq!(
            e,
            Err(AccelerationStructureError::MissingFlag("ALLOW_COMPACTION"))
        );
        // A clone into a smaller structure; a clone across kinds.
        let e =
            encoder.copy_acceleration_structure(&plain, &small, AccelerationStructureCopy::Clone);
        assert!(
            matches!(e, Err(AccelerationStructureError::TooSmall { .. })),
            "{e:?}"
        );
        let e = encoder.copy_acceleration_structure(&plain, &top, AccelerationStructureCopy::Clone);
        assert_eq!(
            e,
            Err(AccelerationStructureError::WrongKind {
                what: "the copy's destination",
                given: keel_hal::AccelerationStructureKind::TopLevel,
                expected: keel_hal::AccelerationStructureKind::BottomLevel,
            })
        );
        // A valid clone.
        encoder
            .copy_acceleration_structure(&plain, &target, AccelerationStructureCopy::Clone)
            .expect("clone");
    }
    let cb = gpu.submit_and_wait(&mut encoder);
    assert_eq!(gpu.device.live_counts().compaction_query_pools, 0);
    // SAFETY: the GPU is done with everything.
    unsafe {
        encoder.reset_all([cb]);
        gpu.device.destroy_command_encoder(encoder);
        for s in [plain, small, target, top] {
            gpu.device.destroy_acceleration_structure(s);
        }
        for b in [scratch, sizes_buffer, storage, vertices] {
            gpu.device.destroy_buffer(b);
        }
    }
    assert_eq!(gpu.device.live_counts(), keel_hal::LiveCounts::default());
    gpu.assert_no_validation_errors();
}

#[test]
fn devices_without_acceleration_structures_say_unsupported() {
    let _ = env_logger::builder().is_test(true).try_init();
    // SAFETY: the system loader is trusted.
    let Ok(instance) = (unsafe { vulkan::Instance::init(&InstanceDescriptor::default()) }) else {
        println!("skipped: no Vulkan");
        return;
    };
    // SAFETY: live instance.
    let Some(exposed) = (unsafe { instance.enumerate_adapters() })
        .into_iter()
        .next()
    else {
        println!("skipped: no Vulkan 1.3 adapter");
        return;
    };
    // SAFETY: dropped at the end.
    let open = unsafe { exposed.adapter.open(&DeviceDescriptor::default()) }.expect("open");
    // SAFETY: nothing is created.
    let e = unsafe {
        open.device
            .create_acceleration_structure(&AccelerationStructureDescriptor {
                label: None,
                kind: AccelerationStructureKind::BottomLevel,
                size: 4096,
                placement: AccelerationStructurePlacement::Owned,
            })
    };
    assert!(
        matches!(
            e,
            Err(AccelerationStructureError::Unsupported {
                what: "acceleration structures",
                ..
            })
        ),
        "{e:?}"
    );
}
