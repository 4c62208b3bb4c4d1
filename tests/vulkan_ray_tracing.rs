//! Vulkan-only ray tracing on a real adapter, with the validation layer on
//! (any validation error fails): one triangle in a BLAS, one instance in a
//! TLAS, a 16×16 grid of rays along +z. A WGSL ray-query compute shader and
//! a WGSL ray-tracing pipeline (ray generation, miss, closest hit) each
//! write 1 for a hit and 0 for a miss into a buffer; the pictures must
//! match the triangle (pixels on an edge are not judged). Typed errors of
//! pipeline and shader-binding-table creation are checked too. Skips (with
//! a message) where the adapter lacks acceleration structures, or the part
//! whose feature it lacks.
#![cfg(feature = "vulkan")]

use keel_hal::vulkan;
use keel_hal::wgt;
use keel_hal::{
    AccelerationStructureBarrier, AccelerationStructureBuildMode, AccelerationStructureDescriptor,
    AccelerationStructureEntries, AccelerationStructureInstances, AccelerationStructureKind,
    AccelerationStructurePlacement, AccelerationStructureTriangles, AccelerationStructureUses,
    BindGroupDescriptor, BindGroupEntry, BindGroupLayoutDescriptor, BindingResource, BufferBarrier,
    BufferBinding, BufferDescriptor, BufferUses, BuildAccelerationStructureDescriptor,
    ComputePassDescriptor, ComputePipelineDescriptor, DeviceDescriptor,
    GetAccelerationStructureBuildSizesDescriptor, HalFeatures, InstanceDescriptor, InstanceFlags,
    Memory, PipelineError, PipelineLayoutDescriptor, ProgrammableStage,
    RayTracingPipelineDescriptor, RayTracingStage, RayTracingStageKind,
    ShaderBindingTableDescriptor, ShaderGroup, ShaderModuleDescriptor, StateTransition,
    TlasInstance, TlasInstanceFlags,
};
use keel_hal::{Adapter as _, CommandEncoder as _, Device as _, Instance as _, Queue as _};

/// Rays per side of the grid.
const SIDE: u32 = 16;

/// The triangle, in the z = 0 plane.
const TRIANGLE: [[f32; 3]; 3] = [[-0.6, -0.6, 0.0], [0.6, -0.6, 0.0], [0.0, 0.7, 0.0]];

const RAY_QUERY: &str = "
enable wgpu_ray_query;
@group(0) @binding(0) var acc: acceleration_structure;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let xy = (vec2<f32>(id.xy) + 0.5) / 16.0 * 2.0 - 1.0;
    var rq: ray_query;
    rayQueryInitialize(&rq, acc, RayDesc(0u, 0xFFu, 0.0, 10.0, vec3<f32>(xy, -1.0), vec3<f32>(0.0, 0.0, 1.0)));
    while rayQueryProceed(&rq) {}
    let hit = rayQueryGetCommittedIntersection(&rq).kind != RAY_QUERY_INTERSECTION_NONE;
    out[id.y * 16u + id.x] = select(0u, 1u, hit);
}
";

const PIPELINE: &str = "
enable wgpu_ray_tracing_pipeline;
struct Payload { hit: u32 }
@group(0) @binding(0) var acc: acceleration_structure;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
var<ray_payload> payload: Payload;
var<incoming_ray_payload> incoming: Payload;

@ray_generation
fn rgen(@builtin(ray_invocation_id) id: vec3<u32>, @builtin(num_ray_invocations) n: vec3<u32>) {
    let xy = (vec2<f32>(id.xy) + 0.5) / vec2<f32>(n.xy) * 2.0 - 1.0;
    payload = Payload(7u);
    traceRay(acc, RayDesc(0u, 0xFFu, 0.0, 10.0, vec3<f32>(xy, -1.0), vec3<f32>(0.0, 0.0, 1.0)), &payload);
    out[id.y * n.x + id.x] = payload.hit;
}

@miss
@incoming_payload(incoming)
fn miss() { incoming.hit = 0u; }

@closest_hit
@incoming_payload(incoming)
fn chit() { incoming.hit = 1u; }
";

/// What ray (x, y) should see: `Some(hit)`, or `None` near an edge.
fn expected(x: u32, y: u32) -> Option<bool> {
    let p = [
        (x as f32 + 0.5) / SIDE as f32 * 2.0 - 1.0,
        (y as f32 + 0.5) / SIDE as f32 * 2.0 - 1.0,
    ];
    // Signed distances to the three edges (positive inside, CCW winding).
    let mut inside = true;
    for i in 0..3 {
        let (a, b) = (TRIANGLE[i], TRIANGLE[(i + 1) % 3]);
        let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
        let d = (ex * (p[1] - a[1]) - ey * (p[0] - a[0])) / (ex * ex + ey * ey).sqrt();
        if d.abs() < 0.05 {
            return None;
        }
        inside &= d > 0.0;
    }
    Some(inside)
}

/// Fields drop in order: the lock (where held) goes after the instance.
struct Gpu {
    instance: vulkan::Instance,
    device: vulkan::Device,
    queue: vulkan::Queue,
    features: HalFeatures,
    _alone: Option<std::sync::MutexGuard<'static, ()>>,
}

/// The first adapter's device with the tracing features it has.
fn open() -> Option<Gpu> {
    open_with(
        HalFeatures::ACCELERATION_STRUCTURE
            | HalFeatures::RAY_QUERY
            | HalFeatures::RAY_TRACING_PIPELINE,
    )
}

/// Held while each test creates its instance, and for the test's whole run
/// where the loaded validation layer is 1.3.239 or older (it crashes now
/// and then when instances and acceleration-structure devices are created
/// on several threads at once), as `ray_tracing_needs_isolation` in the
/// conformance harness says. Elsewhere (NVIDIA's driver included: the
/// hal absorbs its deadlocks, `src/vulkan/workarounds.rs`) the tests run
/// side by side.
static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The newest validation layer known to be unsafe that way, as
/// `VK_MAKE_API_VERSION(0, 1, 3, 239)`.
const LAST_THREAD_UNSAFE_LAYER: u32 = (1 << 22) | (3 << 12) | 239;

/// The first adapter's device with those of `wanted` it has.
fn open_with(wanted: HalFeatures) -> Option<Gpu> {
    let _ = env_logger::builder().is_test(true).try_init();
    let desc = InstanceDescriptor {
        name: "keel-hal ray tracing",
        flags: InstanceFlags::VALIDATION | InstanceFlags::DEBUG,
        ..Default::default()
    };
    let creating = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the system loader is trusted.
    let Ok(instance) = (unsafe { vulkan::Instance::init(&desc) }) else {
        println!("skipped: no Vulkan");
        return None;
    };
    // SAFETY: live instance.
    let Some(exposed) = (unsafe { instance.enumerate_adapters() })
        .into_iter()
        .next()
    else {
        println!("skipped: no Vulkan 1.3 adapter");
        return None;
    };
    let old_layer = instance
        .validation_layer_version()
        .is_some_and(|v| v <= LAST_THREAD_UNSAFE_LAYER);
    let alone = old_layer.then_some(creating);
    let features = exposed.capabilities.hal_features & wanted;
    if !features.contains(HalFeatures::ACCELERATION_STRUCTURE) {
        println!(
            "skipped: {} has no acceleration structures",
            exposed.info.name
        );
        return None;
    }
    let device_desc = DeviceDescriptor {
        required_hal_features: features,
        ..Default::default()
    };
    // SAFETY: opened once, dropped after everything it made.
    let open = unsafe { exposed.adapter.open(&device_desc) }.expect("open");
    Some(Gpu {
        instance,
        device: open.device,
        queue: open.queue,
        features,
        _alone: alone,
    })
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

    fn write(&self, buffer: &vulkan::Buffer, bytes: &[u8]) {
        // SAFETY: an Upload buffer no pending GPU work uses; in bounds.
        unsafe {
            let map = self.device.map_buffer(buffer).expect("map");
            assert!(bytes.len() <= map.size as usize);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.ptr.as_ptr(), bytes.len());
        }
    }

    fn read_u32s(&self, buffer: &vulkan::Buffer, count: usize) -> Vec<u32> {
        // SAFETY: a Readback buffer the GPU is done with.
        unsafe {
            let map = self.device.map_buffer(buffer).expect("map");
            std::slice::from_raw_parts(map.ptr.as_ptr(), count * 4)
                .chunks_exact(4)
                .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        }
    }

    fn module(&self, wgsl: &str) -> vulkan::ShaderModule {
        // SAFETY: live device.
        unsafe {
            self.device
                .create_shader_module(&ShaderModuleDescriptor::wgsl(wgsl))
        }
        .expect("shader module")
    }

    /// Records with `record`, submits, waits, recycles.
    fn run(&self, record: impl FnOnce(&mut vulkan::CommandEncoder)) {
        // SAFETY: everything is waited for before it is reset or destroyed.
        unsafe {
            let mut encoder = self
                .device
                .create_command_encoder(&Default::default())
                .expect("encoder");
            let fence = self.device.create_fence().expect("fence");
            encoder.begin_encoding(Some("test")).expect("begin");
            record(&mut encoder);
            let cb = encoder.end_encoding().expect("end");
            self.queue.submit(&[&cb], &[], &fence, 1).expect("submit");
            // A GPU that never finishes fails the test instead of hanging it.
            let limit = Some(std::time::Duration::from_secs(60));
            let done = self.device.wait(&fence, 1, limit).expect("wait");
            assert!(done, "the GPU did not finish within 60 s");
            encoder.reset_all([cb]);
            self.device.destroy_command_encoder(encoder);
            self.device.destroy_fence(fence);
        }
    }

    fn finish(self) {
        let counts = self.device.live_counts();
        assert_eq!(counts, keel_hal::LiveCounts::default(), "leaked objects");
        let validation = self.instance.validation_counter();
        drop((self.device, self.queue, self.instance));
        assert_eq!(validation.errors(), 0, "validation errors (see the log)");
    }
}

/// A BLAS of [`TRIANGLE`] and a TLAS of one identity instance of it, built.
struct Scene {
    blas: vulkan::AccelerationStructure,
    tlas: vulkan::AccelerationStructure,
    buffers: Vec<vulkan::Buffer>,
}

impl Scene {
    fn build(gpu: &Gpu) -> Scene {
        use wgt::BufferUsages as U;
        let device = &gpu.device;
        let vertices: Vec<u8> = TRIANGLE
            .iter()
            .flatten()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let vertex_buffer = gpu.buffer(
            vertices.len() as u64,
            U::BLAS_INPUT | U::MAP_WRITE,
            Memory::Upload,
        );
        gpu.write(&vertex_buffer, &vertices);
        let triangles = |buffer| {
            [AccelerationStructureTriangles {
                vertex_buffer: buffer,
                vertex_offset: 0,
                vertex_format: wgt::VertexFormat::Float32x3,
                vertex_stride: 12,
                vertex_count: 3,
                indices: None,
                transform: None,
                flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
            }]
        };
        let flags = wgt::AccelerationStructureFlags::PREFER_FAST_TRACE;
        let sized = triangles(None);
        let blas_sizes_entries = AccelerationStructureEntries::Triangles(&sized);
        // SAFETY: everything made here is destroyed by `Scene::destroy`.
        unsafe {
            let blas_sizes = device
                .get_acceleration_structure_build_sizes(
                    &GetAccelerationStructureBuildSizesDescriptor::<vulkan::Api> {
                        entries: &blas_sizes_entries,
                        flags,
                    },
                )
                .expect("BLAS sizes");
            let blas = device
                .create_acceleration_structure(&AccelerationStructureDescriptor::<vulkan::Api> {
                    label: Some("triangle BLAS"),
                    kind: AccelerationStructureKind::BottomLevel,
                    size: blas_sizes.acceleration_structure_size,
                    placement: AccelerationStructurePlacement::Owned,
                })
                .expect("BLAS");
            let instance = keel_hal::encode_tlas_instance(&TlasInstance {
                transform: [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
                custom_index: 0,
                mask: 0xff,
                sbt_record_offset: 0,
                flags: TlasInstanceFlags::TRIANGLE_CULL_DISABLE,
                blas_address: device.get_acceleration_structure_device_address(&blas),
            });
            let instance_buffer = gpu.buffer(64, U::TLAS_INPUT | U::MAP_WRITE, Memory::Upload);
            gpu.write(&instance_buffer, &instance);
            let instances = |buffer| {
                AccelerationStructureEntries::Instances(AccelerationStructureInstances {
                    buffer,
                    offset: 0,
                    count: 1,
                })
            };
            let tlas_sizes = device
                .get_acceleration_structure_build_sizes(
                    &GetAccelerationStructureBuildSizesDescriptor::<vulkan::Api> {
                        entries: &instances(None),
                        flags,
                    },
                )
                .expect("TLAS sizes");
            let tlas = device
                .create_acceleration_structure(&AccelerationStructureDescriptor::<vulkan::Api> {
                    label: Some("TLAS"),
                    kind: AccelerationStructureKind::TopLevel,
                    size: tlas_sizes.acceleration_structure_size,
                    placement: AccelerationStructurePlacement::Owned,
                })
                .expect("TLAS");
            let scratch = |size: u64| gpu.buffer(size.max(4), U::STORAGE, Memory::Device);
            let blas_scratch = scratch(blas_sizes.build_scratch_size);
            let tlas_scratch = scratch(tlas_sizes.build_scratch_size);
            let geometry = triangles(Some(&vertex_buffer));
            let blas_entries = AccelerationStructureEntries::Triangles(&geometry);
            let tlas_entries = instances(Some(&instance_buffer));
            gpu.run(|e| {
                e.build_acceleration_structures(&[BuildAccelerationStructureDescriptor {
                    entries: &blas_entries,
                    mode: AccelerationStructureBuildMode::Build,
                    flags,
                    source_acceleration_structure: None,
                    destination_acceleration_structure: &blas,
                    scratch_buffer: &blas_scratch,
                    scratch_buffer_offset: 0,
                }])
                .expect("BLAS build");
                e.place_acceleration_structure_barrier(AccelerationStructureBarrier {
                    structures: &[&blas],
                    usage: StateTransition {
                        from: AccelerationStructureUses::BUILD_OUTPUT,
                        to: AccelerationStructureUses::BUILD_INPUT,
                    },
                });
                e.build_acceleration_structures(&[BuildAccelerationStructureDescriptor {
                    entries: &tlas_entries,
                    mode: AccelerationStructureBuildMode::Build,
                    flags,
                    source_acceleration_structure: None,
                    destination_acceleration_structure: &tlas,
                    scratch_buffer: &tlas_scratch,
                    scratch_buffer_offset: 0,
                }])
                .expect("TLAS build");
                e.place_acceleration_structure_barrier(AccelerationStructureBarrier {
                    structures: &[&tlas],
                    usage: StateTransition {
                        from: AccelerationStructureUses::BUILD_OUTPUT,
                        to: AccelerationStructureUses::SHADER_INPUT,
                    },
                });
            });
            Scene {
                blas,
                tlas,
                buffers: vec![vertex_buffer, instance_buffer, blas_scratch, tlas_scratch],
            }
        }
    }

    fn destroy(self, gpu: &Gpu) {
        // SAFETY: the GPU is done with all of it (every run waits).
        unsafe {
            gpu.device.destroy_acceleration_structure(self.tlas);
            gpu.device.destroy_acceleration_structure(self.blas);
            for b in self.buffers {
                gpu.device.destroy_buffer(b);
            }
        }
    }
}

/// Bind group layout, bind group and pipeline layout for the TLAS and the
/// output buffer, visible to `stages`; `run` records with them; destroyed after.
fn with_bindings(
    gpu: &Gpu,
    scene: &Scene,
    out: &vulkan::Buffer,
    stages: wgt::ShaderStages,
    run: impl FnOnce(&vulkan::PipelineLayout, &vulkan::BindGroup),
) {
    let entries = [
        wgt::BindGroupLayoutEntry {
            binding: 0,
            visibility: stages,
            ty: wgt::BindingType::AccelerationStructure {
                vertex_return: false,
            },
            count: None,
        },
        wgt::BindGroupLayoutEntry {
            binding: 1,
            visibility: stages,
            ty: wgt::BindingType::Buffer {
                ty: wgt::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        },
    ];
    // SAFETY: destroyed below; `run` waits for its GPU work.
    unsafe {
        let device = &gpu.device;
        let bgl = device
            .create_bind_group_layout(&BindGroupLayoutDescriptor {
                entries: &entries,
                ..Default::default()
            })
            .expect("bind group layout");
        let group = device
            .create_bind_group(&BindGroupDescriptor::<vulkan::Api> {
                label: Some("ray tracing group"),
                layout: &bgl,
                entries: &[
                    BindGroupEntry {
                        binding: 0,
                        resource: BindingResource::AccelerationStructure(&scene.tlas),
                    },
                    BindGroupEntry {
                        binding: 1,
                        resource: BindingResource::Buffer(BufferBinding::whole(out)),
                    },
                ],
            })
            .expect("bind group");
        let layout = device
            .create_pipeline_layout(&PipelineLayoutDescriptor::<vulkan::Api> {
                label: None,
                bind_group_layouts: &[&bgl],
                push_constant_ranges: &[],
            })
            .expect("pipeline layout");
        run(&layout, &group);
        device.destroy_pipeline_layout(layout);
        device.destroy_bind_group(group);
        device.destroy_bind_group_layout(bgl);
    }
}

fn output(gpu: &Gpu) -> vulkan::Buffer {
    use wgt::BufferUsages as U;
    gpu.buffer(
        u64::from(SIDE * SIDE) * 4,
        U::STORAGE | U::MAP_READ,
        Memory::Readback,
    )
}

fn to_host(out: &vulkan::Buffer) -> BufferBarrier<'_, vulkan::Buffer> {
    BufferBarrier {
        buffer: out,
        usage: StateTransition {
            from: BufferUses::STORAGE_READ_WRITE,
            to: BufferUses::MAP_READ,
        },
    }
}

/// Checks a picture against [`expected`]; returns the number judged.
fn check_picture(name: &str, got: &[u32]) -> usize {
    let mut judged = 0;
    for y in 0..SIDE {
        for x in 0..SIDE {
            let value = got[(y * SIDE + x) as usize];
            if let Some(hit) = expected(x, y) {
                assert_eq!(value, u32::from(hit), "{name}: ray ({x}, {y})");
                judged += 1;
            }
        }
    }
    assert!(judged > (SIDE * SIDE / 2) as usize, "most rays are judged");
    judged
}

fn ray_query(gpu: &Gpu, scene: &Scene) {
    let out = output(gpu);
    with_bindings(
        gpu,
        scene,
        &out,
        wgt::ShaderStages::COMPUTE,
        |layout, group| {
            let module = gpu.module(RAY_QUERY);
            // SAFETY: destroyed after the run that uses it.
            unsafe {
                let pipeline = gpu
                    .device
                    .create_compute_pipeline(&ComputePipelineDescriptor::<vulkan::Api> {
                        label: Some("ray query"),
                        layout,
                        stage: ProgrammableStage {
                            module: &module,
                            entry_point: "main",
                            constants: &[],
                        },
                        cache: None,
                    })
                    .expect("ray-query pipeline");
                gpu.run(|e| {
                    e.begin_compute_pass(&ComputePassDescriptor {
                        label: Some("ray query"),
                    });
                    e.set_compute_pipeline(&pipeline);
                    e.set_bind_group(layout, 0, group, &[]);
                    e.dispatch([SIDE / 8, SIDE / 8, 1]);
                    e.end_compute_pass();
                    e.transition_buffers(&[to_host(&out)]);
                });
                gpu.device.destroy_compute_pipeline(pipeline);
                gpu.device.destroy_shader_module(module);
            }
        },
    );
    let judged = check_picture("ray query", &gpu.read_u32s(&out, (SIDE * SIDE) as usize));
    println!("ray query: {judged} rays judged, all as expected");
    // SAFETY: the GPU is done with it.
    unsafe { gpu.device.destroy_buffer(out) };
}

fn ray_tracing_pipeline(gpu: &Gpu, scene: &Scene) {
    let out = output(gpu);
    let stages = wgt::ShaderStages::RAY_GENERATION;
    with_bindings(gpu, scene, &out, stages, |layout, group| {
        let module = gpu.module(PIPELINE);
        let stage = |kind, entry_point| RayTracingStage::<vulkan::Api> {
            kind,
            stage: ProgrammableStage {
                module: &module,
                entry_point,
                constants: &[],
            },
        };
        let stages = [
            stage(RayTracingStageKind::RayGeneration, "rgen"),
            stage(RayTracingStageKind::Miss, "miss"),
            stage(RayTracingStageKind::ClosestHit, "chit"),
        ];
        let groups = [
            ShaderGroup::General { stage: 0 },
            ShaderGroup::General { stage: 1 },
            ShaderGroup::TrianglesHit {
                closest_hit: Some(2),
                any_hit: None,
            },
        ];
        let desc = |groups, max_recursion_depth| RayTracingPipelineDescriptor::<vulkan::Api> {
            label: Some("ray tracing"),
            layout,
            stages: &stages,
            groups,
            max_recursion_depth,
            cache: None,
        };
        // SAFETY: everything is destroyed after the run that uses it.
        unsafe {
            let device = &gpu.device;
            // Typed errors first: nothing is made.
            let wrong = [ShaderGroup::General { stage: 2 }];
            assert!(matches!(
                device.create_ray_tracing_pipeline(&desc(&wrong, 1)),
                Err(PipelineError::InvalidShaderGroup { group: 0, .. })
            ));
            let out_of_range = [ShaderGroup::TrianglesHit {
                closest_hit: Some(3),
                any_hit: None,
            }];
            assert!(matches!(
                device.create_ray_tracing_pipeline(&desc(&out_of_range, 1)),
                Err(PipelineError::InvalidShaderGroup { group: 0, .. })
            ));
            assert!(matches!(
                device.create_ray_tracing_pipeline(&desc(&groups, u32::MAX)),
                Err(PipelineError::Unsupported(_))
            ));
            let pipeline = device
                .create_ray_tracing_pipeline(&desc(&groups, 1))
                .expect("ray-tracing pipeline");
            let table_desc =
                |miss: &'static [u32], hit: &'static [u32]| ShaderBindingTableDescriptor {
                    label: Some("table"),
                    ray_generation: 0,
                    miss,
                    hit,
                };
            for (miss, hit) in [(&[0u32][..], &[2u32][..]), (&[1], &[1]), (&[1], &[3])] {
                assert!(matches!(
                    device.create_shader_binding_table(&pipeline, &table_desc(miss, hit)),
                    Err(PipelineError::InvalidShaderGroup { .. })
                ));
            }
            let table = device
                .create_shader_binding_table(&pipeline, &table_desc(&[1], &[2]))
                .expect("shader binding table");
            gpu.run(|e| {
                e.begin_ray_tracing_pass(&ComputePassDescriptor {
                    label: Some("trace"),
                });
                e.set_ray_tracing_pipeline(&pipeline);
                e.set_bind_group(layout, 0, group, &[]);
                e.trace_rays(&table, [SIDE, SIDE, 1]);
                e.end_ray_tracing_pass();
                e.transition_buffers(&[to_host(&out)]);
            });
            device.destroy_shader_binding_table(table);
            device.destroy_ray_tracing_pipeline(pipeline);
            device.destroy_shader_module(module);
        }
    });
    let judged = check_picture(
        "ray-tracing pipeline",
        &gpu.read_u32s(&out, (SIDE * SIDE) as usize),
    );
    println!("ray-tracing pipeline: {judged} rays judged, all as expected");
    // SAFETY: the GPU is done with it.
    unsafe { gpu.device.destroy_buffer(out) };
}

#[test]
fn ray_query_and_pipeline_see_the_triangle() {
    let Some(gpu) = open() else {
        return;
    };
    let scene = Scene::build(&gpu);
    if gpu.features.contains(HalFeatures::RAY_QUERY) {
        ray_query(&gpu, &scene);
    } else {
        println!("ray query skipped: the adapter has none");
    }
    if gpu.features.contains(HalFeatures::RAY_TRACING_PIPELINE) {
        ray_tracing_pipeline(&gpu, &scene);
    } else {
        println!("ray-tracing pipeline skipped: the adapter has none");
    }
    scene.destroy(&gpu);
    gpu.finish();
}

/// A device with ray-tracing pipelines but without ray query (as NVIDIA
/// drivers have them): the build → trace barrier must name no shader stage
/// but ray tracing for its acceleration-structure reads
/// (VUID-VkMemoryBarrier2-dstAccessMask-06256), which validation checks.
#[test]
fn ray_tracing_pipeline_without_ray_query() {
    let Some(gpu) =
        open_with(HalFeatures::ACCELERATION_STRUCTURE | HalFeatures::RAY_TRACING_PIPELINE)
    else {
        return;
    };
    if !gpu.features.contains(HalFeatures::RAY_TRACING_PIPELINE) {
        println!("skipped: the adapter has no ray-tracing pipelines");
        return;
    }
    assert!(!gpu.features.contains(HalFeatures::RAY_QUERY));
    let scene = Scene::build(&gpu);
    ray_tracing_pipeline(&gpu, &scene);
    scene.destroy(&gpu);
    gpu.finish();
}
