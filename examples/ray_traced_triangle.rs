//! One triangle, ray traced with the keel-hal trait set: a bottom-level
//! acceleration structure (BLAS) of the triangle, built with
//! `ALLOW_COMPACTION` and compacted with [`keel_hal::compaction`]; a
//! top-level structure (TLAS) of three instances of it, each with its own
//! transform and custom index; one primary ray per pixel along +z.
//!
//! ```text
//! cargo run --example ray_traced_triangle                      # → ray_traced_triangle.png
//! cargo run --example ray_traced_triangle -- --query           # force a ray-query compute shader
//! cargo run --example ray_traced_triangle -- --pipeline        # force a ray-tracing pipeline
//! cargo run --example ray_traced_triangle -- --output x.png    # another file name
//! cargo run --example ray_traced_triangle -- --window [--frames 120]
//! ```
//!
//! Two ways to trace, the same picture: where the adapter has
//! `HalFeatures::RAY_QUERY` a WGSL compute shader traces with a ray query
//! and reads the hit's barycentrics; otherwise a WGSL ray-tracing pipeline
//! (ray generation, miss, closest hit) runs through a shader binding table
//! the hal builds, and the closest-hit shader works the barycentrics out
//! from the hit point in object space. `--query` / `--pipeline` force one
//! and fail with a clear message where the adapter lacks it.
//!
//! Colours: inside a triangle the hit's barycentrics (red = 1 − u − v,
//! green = u, blue = v: each corner of the triangle is pure red, green or
//! blue); outside, a fixed dark blue.
//!
//! The noop backend traces no rays (it lacks both capabilities): with only
//! noop available the example says so and exits with an error. On an error
//! the example reports it and exits; a long-lived program would also
//! destroy what it had made so far.

use std::error::Error;
use std::fmt;
use std::num::NonZeroU64;
use std::process::ExitCode;
use std::time::Duration;

use keel_hal::compaction;
use keel_hal::wgt;
use keel_hal::{
    AccelerationStructureBarrier, AccelerationStructureBuildMode, AccelerationStructureDescriptor,
    AccelerationStructureEntries, AccelerationStructureInstances, AccelerationStructureKind,
    AccelerationStructurePlacement, AccelerationStructureTriangles, AccelerationStructureUses, Api,
    BindGroupDescriptor, BindGroupEntry, BindGroupLayoutDescriptor, BindingResource, BufferBarrier,
    BufferBinding, BufferDescriptor, BufferUses, BuildAccelerationStructureDescriptor,
    CommandEncoderDescriptor, ComputePassDescriptor, ComputePipelineDescriptor, DeviceDescriptor,
    ExposedAdapter, GetAccelerationStructureBuildSizesDescriptor, HalFeatures, InstanceDescriptor,
    InstanceFlags, Memory, PipelineLayoutDescriptor, ProgrammableStage,
    RayTracingPipelineDescriptor, RayTracingStage, RayTracingStageKind, ShaderBindingTable,
    ShaderBindingTableDescriptor, ShaderGroup, ShaderModuleDescriptor, StateTransition,
    TlasInstance, TlasInstanceFlags,
};
// The trait set.
use keel_hal::{Adapter as _, CommandEncoder as _, Device as _, Instance as _, Queue as _};

/// The triangle in object space (z = 0), corners in barycentric order.
const TRIANGLE: [[f32; 3]; 3] = [[-0.5, -0.45, 0.0], [0.5, -0.45, 0.0], [0.0, 0.55, 0.0]];
/// The colour of rays that hit nothing (linear RGB).
const MISS: [f32; 3] = [0.05, 0.06, 0.16];

/// Where an instance of the triangle sits: object → world is
/// `rotate(angle) · scale`, then `offset`.
struct Placement {
    scale: f32,
    degrees: f32,
    offset: [f32; 3],
    custom_index: u32,
}

/// Three instances: two small ones at the top (the second turned upside
/// down), a large one at the bottom turned a quarter to the right.
const INSTANCES: [Placement; 3] = [
    Placement {
        scale: 0.55,
        degrees: 0.0,
        offset: [-0.45, 0.4, 0.0],
        custom_index: 10,
    },
    Placement {
        scale: 0.55,
        degrees: 180.0,
        offset: [0.45, 0.4, 0.0],
        custom_index: 11,
    },
    Placement {
        scale: 0.8,
        degrees: -90.0,
        offset: [0.0, -0.45, 0.0],
        custom_index: 12,
    },
];

/// The row-major 3×4 object-to-world matrix of a placement.
fn transform(p: &Placement) -> [f32; 12] {
    let (sin, cos) = p.degrees.to_radians().sin_cos();
    let (s, [x, y, z]) = (p.scale, p.offset);
    [
        s * cos,
        -s * sin,
        0.0,
        x,
        s * sin,
        s * cos,
        0.0,
        y,
        0.0,
        0.0,
        s,
        z,
    ]
}

/// Offscreen image size and output file.
const SIZE: u32 = 256;
const OUTPUT: &str = "ray_traced_triangle.png";
/// Bytes of the `Params` uniform.
const PARAMS_SIZE: u64 = 16;

/// WGSL shared by both ways to trace: the bindings, the camera and the
/// pixel store. `{TRIANGLE}` and `{MISS}` are filled in by [`shader`].
const COMMON_WGSL: &str = r#"
struct Params {
    width: u32,
    height: u32,
    // Texels per row of `pixels` (rows are padded for copies).
    pitch: u32,
    // Non-zero: store BGRA instead of RGBA.
    swap_rb: u32,
};
@group(0) @binding(0) var scene: acceleration_structure;
@group(0) @binding(1) var<storage, read_write> pixels: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

const A = vec3<f32>({A});
const B = vec3<f32>({B});
const C = vec3<f32>({C});
const MISS_COLOR = vec3<f32>({MISS});

// An orthographic camera looking along +z; y up; square pixels.
fn primary_ray(pixel: vec2<u32>) -> RayDesc {
    let size = vec2<f32>(f32(params.width), f32(params.height));
    let xy = (vec2<f32>(pixel) + 0.5 - size * 0.5) / min(size.x, size.y) * 2.0;
    return RayDesc(0u, 0xFFu, 0.0, 10.0, vec3<f32>(xy.x, -xy.y, -1.0), vec3<f32>(0.0, 0.0, 1.0));
}

fn inside(pixel: vec2<u32>) -> bool {
    return pixel.x < params.width && pixel.y < params.height;
}

fn store(pixel: vec2<u32>, color: vec3<f32>) {
    let c = select(color, color.bgr, params.swap_rb != 0u);
    pixels[pixel.y * params.pitch + pixel.x] = pack4x8unorm(vec4<f32>(c, 1.0));
}
"#;

/// The ray-query way: a compute shader.
const QUERY_WGSL: &str = r#"
enable wgpu_ray_query;
{COMMON}
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if !inside(id.xy) {
        return;
    }
    var rq: ray_query;
    rayQueryInitialize(&rq, scene, primary_ray(id.xy));
    while rayQueryProceed(&rq) {}
    let hit = rayQueryGetCommittedIntersection(&rq);
    var color = MISS_COLOR;
    if hit.kind != RAY_QUERY_INTERSECTION_NONE {
        let uv = hit.barycentrics;
        color = vec3<f32>(1.0 - uv.x - uv.y, uv.x, uv.y);
    }
    store(id.xy, color);
}
"#;

/// The ray-tracing-pipeline way: ray generation, miss and closest hit.
/// WGSL has no hit attributes, so the closest-hit shader takes the hit
/// point back to object space and solves for its barycentrics in A, B, C.
const PIPELINE_WGSL: &str = r#"
enable wgpu_ray_tracing_pipeline;
{COMMON}
struct Payload { color: vec3<f32> };
var<ray_payload> payload: Payload;
var<incoming_ray_payload> incoming: Payload;

@ray_generation
fn rgen(@builtin(ray_invocation_id) id: vec3<u32>) {
    if !inside(id.xy) {
        return;
    }
    payload = Payload(vec3<f32>(0.0));
    traceRay(scene, primary_ray(id.xy), &payload);
    store(id.xy, payload.color);
}

@miss
@incoming_payload(incoming)
fn miss() {
    incoming.color = MISS_COLOR;
}

@closest_hit
@incoming_payload(incoming)
fn chit(
    @builtin(world_ray_origin) origin: vec3<f32>,
    @builtin(world_ray_direction) direction: vec3<f32>,
    @builtin(ray_t_current_max) t: f32,
    @builtin(world_to_object) world_to_object: mat4x3<f32>,
) {
    let p = world_to_object * vec4<f32>(origin + direction * t, 1.0);
    let e0 = B - A;
    let e1 = C - A;
    let e2 = p - A;
    let d00 = dot(e0, e0);
    let d01 = dot(e0, e1);
    let d11 = dot(e1, e1);
    let d20 = dot(e2, e0);
    let d21 = dot(e2, e1);
    let det = d00 * d11 - d01 * d01;
    let u = (d11 * d20 - d01 * d21) / det;
    let v = (d00 * d21 - d01 * d20) / det;
    incoming.color = vec3<f32>(1.0 - u - v, u, v);
}
"#;

/// A shader of one way to trace, with the scene's constants filled in.
fn shader(way: Way) -> String {
    let v = |p: [f32; 3]| format!("{:?}, {:?}, {:?}", p[0], p[1], p[2]);
    let common = COMMON_WGSL
        .replace("{A}", &v(TRIANGLE[0]))
        .replace("{B}", &v(TRIANGLE[1]))
        .replace("{C}", &v(TRIANGLE[2]))
        .replace("{MISS}", &v(MISS));
    match way {
        Way::Query => QUERY_WGSL,
        Way::Pipeline => PIPELINE_WGSL,
    }
    .replace("{COMMON}", &common)
}

type Result<T, E = Box<dyn Error>> = std::result::Result<T, E>;

/// How rays are traced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    /// A ray query in a compute shader (`HalFeatures::RAY_QUERY`).
    Query,
    /// A ray-tracing pipeline (`HalFeatures::RAY_TRACING_PIPELINE`).
    Pipeline,
}

impl Way {
    fn feature(self) -> HalFeatures {
        match self {
            Way::Query => HalFeatures::RAY_QUERY,
            Way::Pipeline => HalFeatures::RAY_TRACING_PIPELINE,
        }
    }
}

impl fmt::Display for Way {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Way::Query => "ray query",
            Way::Pipeline => "ray-tracing pipeline",
        })
    }
}

/// Why no adapter can run the example.
#[derive(Debug)]
enum Unavailable {
    /// No adapter of the backend traces rays at all.
    NoRayTracing { backend: keel_hal::Backend },
    /// The way asked for is missing (the others may have the other one).
    Forced {
        way: Way,
        backend: keel_hal::Backend,
    },
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::NoRayTracing { backend } => write!(
                f,
                "the {backend} backend cannot trace rays: no adapter has acceleration \
                 structures with RAY_QUERY or RAY_TRACING_PIPELINE"
            ),
            Unavailable::Forced { way, backend } => write!(
                f,
                "no {backend} adapter has {:?} (needed for the {way} asked for); \
                 run without --query/--pipeline to use what the adapter has",
                way.feature()
            ),
        }
    }
}

impl Error for Unavailable {}

/// Command-line options.
struct Options {
    way: Option<Way>,
    window: bool,
    frames: Option<u64>,
    output: String,
}

fn parse_options() -> Result<Options> {
    let mut options = Options {
        way: None,
        window: false,
        frames: None,
        output: OUTPUT.into(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--query" => options.way = Some(Way::Query),
            "--pipeline" => options.way = Some(Way::Pipeline),
            "--window" => options.window = true,
            "--frames" => {
                let n = args.next().ok_or("--frames needs a number")?;
                options.frames = Some(n.parse().map_err(|_| format!("bad frame count {n:?}"))?);
            }
            "--output" => options.output = args.next().ok_or("--output needs a path")?,
            "-h" | "--help" => {
                println!(
                    "usage: ray_traced_triangle [--query | --pipeline] [--output FILE.png] \
                     [--window [--frames N]]"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?} (try --help)").into()),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    env_logger::init();
    let result = parse_options().and_then(|options| {
        if options.window {
            run_window(&options)
        } else {
            run_offscreen(&options)
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ray_traced_triangle: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Validation on in debug builds (where the layer is installed), so the
/// example doubles as a check.
fn instance_descriptor() -> InstanceDescriptor<'static> {
    InstanceDescriptor {
        name: "keel-hal ray-traced triangle",
        flags: if cfg!(debug_assertions) {
            InstanceFlags::VALIDATION | InstanceFlags::DEBUG
        } else {
            InstanceFlags::empty()
        },
        ..Default::default()
    }
}

/// The way `caps` can trace: the forced one, else ray query, else pipeline.
fn way_for(hal: HalFeatures, forced: Option<Way>) -> Option<Way> {
    if !hal.contains(HalFeatures::ACCELERATION_STRUCTURE | HalFeatures::SHADER_EXECUTION) {
        return None;
    }
    match forced {
        Some(way) => hal.contains(way.feature()).then_some(way),
        None => [Way::Query, Way::Pipeline]
            .into_iter()
            .find(|w| hal.contains(w.feature())),
    }
}

/// An instance of backend `A`, its first adapter that can trace (the
/// forced way, or any), and the way it traces.
fn pick_adapter<A: Api>(forced: Option<Way>) -> Result<(A::Instance, ExposedAdapter<A>, Way)> {
    // SAFETY: the system's Vulkan loader (if any) is a real one.
    let instance = unsafe { <A::Instance as keel_hal::Instance>::init(&instance_descriptor()) }?;
    // SAFETY: the instance is live.
    let adapters = unsafe { instance.enumerate_adapters() };
    let backend = instance.backend();
    let traces_at_all = adapters
        .iter()
        .any(|a| way_for(a.capabilities.hal_features, None).is_some());
    let found = adapters
        .into_iter()
        .find_map(|a| way_for(a.capabilities.hal_features, forced).map(|way| (a, way)));
    match found {
        Some((adapter, way)) => Ok((instance, adapter, way)),
        None => Err(match forced {
            Some(way) if traces_at_all => Box::new(Unavailable::Forced { way, backend }),
            _ => Box::new(Unavailable::NoRayTracing { backend }),
        }),
    }
}

/// Traces offscreen on Vulkan, or explains why it cannot.
fn run_offscreen(options: &Options) -> Result<()> {
    #[cfg(feature = "vulkan")]
    match pick_adapter::<keel_hal::vulkan::Api>(options.way) {
        Ok((instance, adapter, way)) => {
            return trace_to_png::<keel_hal::vulkan::Api>(instance, adapter, way, &options.output)
        }
        // A forced way the Vulkan adapters lack: noop has neither way.
        Err(e) if matches!(e.downcast_ref(), Some(Unavailable::Forced { .. })) => return Err(e),
        Err(e) => eprintln!("ray_traced_triangle: Vulkan is not available: {e}; trying noop"),
    }
    let (instance, adapter, way) = pick_adapter::<keel_hal::noop::Api>(options.way)?;
    trace_to_png::<keel_hal::noop::Api>(instance, adapter, way, &options.output)
}

/// The device, its queue, one encoder and a fence with its next value.
struct Gpu<A: Api> {
    device: A::Device,
    queue: A::Queue,
    encoder: A::CommandEncoder,
    fence: A::Fence,
    next_value: u64,
}

impl<A: Api> Gpu<A> {
    /// Opens a device with acceleration structures and `way`'s feature.
    ///
    /// # Safety
    /// The adapter's instance outlives the device.
    unsafe fn open(adapter: &A::Adapter, way: Way) -> Result<Self> {
        let desc = DeviceDescriptor {
            label: Some("ray-traced triangle"),
            required_hal_features: HalFeatures::ACCELERATION_STRUCTURE | way.feature(),
            ..Default::default()
        };
        // SAFETY: the caller's contract; everything here is destroyed in `destroy`.
        unsafe {
            let open = adapter.open(&desc)?;
            let encoder = open
                .device
                .create_command_encoder(&CommandEncoderDescriptor::default())?;
            let fence = open.device.create_fence()?;
            Ok(Gpu {
                device: open.device,
                queue: open.queue,
                encoder,
                fence,
                next_value: 1,
            })
        }
    }

    /// Records with `record`, submits, and waits (at most 30 s).
    ///
    /// # Safety
    /// No recording is in progress; what `record` records is valid and its
    /// objects outlive the call.
    unsafe fn run(
        &mut self,
        label: &str,
        record: impl FnOnce(&mut A::CommandEncoder),
    ) -> Result<()> {
        // SAFETY: the caller's contract; the command buffer goes back to the
        // encoder once the GPU is done with it.
        unsafe {
            self.encoder.begin_encoding(Some(label))?;
            record(&mut self.encoder);
            let commands = self.encoder.end_encoding()?;
            let value = self.next_value;
            self.next_value += 1;
            self.queue.submit(&[&commands], &[], &self.fence, value)?;
            if !self
                .device
                .wait(&self.fence, value, Some(Duration::from_secs(30)))?
            {
                return Err(format!("{label}: the GPU did not finish within 30 s").into());
            }
            self.encoder.reset_all([commands]);
        }
        Ok(())
    }

    /// A buffer; mapped buffers get `bytes` written at offset 0.
    ///
    /// # Safety
    /// The device is live; the caller destroys the buffer.
    unsafe fn buffer(
        &self,
        label: &str,
        size: u64,
        usage: wgt::BufferUsages,
        memory: Memory,
        bytes: &[u8],
    ) -> Result<A::Buffer> {
        let desc = BufferDescriptor {
            label: Some(label),
            size: size.max(4),
            usage,
            memory,
        };
        // SAFETY: live device; a fresh buffer no GPU work uses; in bounds.
        unsafe {
            let buffer = self.device.create_buffer(&desc)?;
            if !bytes.is_empty() {
                let map = self.device.map_buffer(&buffer)?;
                if bytes.len() as u64 > map.size {
                    return Err("buffer mapping too small".into());
                }
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.ptr.as_ptr(), bytes.len());
            }
            Ok(buffer)
        }
    }

    /// Destroys the encoder and the fence, then drops the device.
    ///
    /// # Safety
    /// No GPU work is pending; everything else made on the device is gone.
    unsafe fn destroy(self) {
        // SAFETY: the caller's contract.
        unsafe {
            self.device.destroy_command_encoder(self.encoder);
            self.device.destroy_fence(self.fence);
        }
    }
}

/// Little-endian bytes of `f32`s.
fn f32_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

/// A barrier that readies a new buffer written by the CPU for builds.
fn build_input<B: ?Sized>(buffer: &B) -> BufferBarrier<'_, B> {
    BufferBarrier {
        buffer,
        usage: StateTransition {
            from: BufferUses::empty(),
            to: BufferUses::ACCELERATION_STRUCTURE_INPUT,
        },
    }
}

/// The compacted BLAS and the TLAS of its three instances, built.
struct Scene<A: Api> {
    blas: A::AccelerationStructure,
    tlas: A::AccelerationStructure,
}

impl<A: Api> Scene<A> {
    /// Builds the BLAS, compacts it, then builds the TLAS over the compacted copy.
    ///
    /// # Safety
    /// `gpu` is idle; the scene is destroyed with [`Scene::destroy`].
    unsafe fn build(gpu: &mut Gpu<A>) -> Result<Self> {
        use wgt::BufferUsages as U;
        let flags = wgt::AccelerationStructureFlags::PREFER_FAST_TRACE
            | wgt::AccelerationStructureFlags::ALLOW_COMPACTION;
        let geometry = |buffer| {
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
        // SAFETY: every object is made on `gpu.device`, used by submissions
        // that are waited for, and destroyed after them (or kept in the scene).
        unsafe {
            let d = &gpu.device;
            let sized = geometry(None);
            let entries = AccelerationStructureEntries::Triangles(&sized);
            let sizes = d.get_acceleration_structure_build_sizes(
                &GetAccelerationStructureBuildSizesDescriptor::<A> {
                    entries: &entries,
                    flags,
                },
            )?;
            let vertices = gpu.buffer(
                "triangle vertices",
                36,
                U::BLAS_INPUT | U::MAP_WRITE,
                Memory::Upload,
                &f32_bytes(TRIANGLE.into_iter().flatten()),
            )?;
            let scratch = gpu.buffer(
                "BLAS scratch",
                sizes.build_scratch_size,
                U::STORAGE,
                Memory::Device,
                &[],
            )?;
            let blas = d.create_acceleration_structure(&AccelerationStructureDescriptor::<A> {
                label: Some("triangle BLAS"),
                kind: AccelerationStructureKind::BottomLevel,
                size: sizes.acceleration_structure_size,
                placement: AccelerationStructurePlacement::Owned,
            })?;
            let geometry = geometry(Some(&vertices));
            let entries = AccelerationStructureEntries::Triangles(&geometry);
            let mut built = Ok(());
            gpu.run("BLAS build", |e| {
                e.transition_buffers(&[build_input(&vertices)]);
                built = e.build_acceleration_structures(&[BuildAccelerationStructureDescriptor {
                    entries: &entries,
                    mode: AccelerationStructureBuildMode::Build,
                    flags,
                    source_acceleration_structure: None,
                    destination_acceleration_structure: &blas,
                    scratch_buffer: &scratch,
                    scratch_buffer_offset: 0,
                }]);
            })?;
            built?;
            gpu.device.destroy_buffer(scratch);
            gpu.device.destroy_buffer(vertices);

            // Compaction: read the compacted size, copy into a structure that
            // size, and drop the original (the helper waited for the GPU).
            let report = compaction::compact::<A>(
                &gpu.device,
                &gpu.queue,
                &mut gpu.encoder,
                &gpu.fence,
                &mut gpu.next_value,
                &[&blas],
            )?;
            println!(
                "ray_traced_triangle: BLAS compacted from {} to {} bytes ({:.0}%)",
                report.bytes_before,
                report.bytes_after,
                100.0 * report.bytes_after as f64 / report.bytes_before.max(1) as f64
            );
            gpu.device.destroy_acceleration_structure(blas);
            let blas = report
                .compacted
                .into_iter()
                .next()
                .ok_or("compaction returned no structure")?;

            let tlas = Self::build_tlas(gpu, &blas)?;
            Ok(Scene { blas, tlas })
        }
    }

    /// Builds the TLAS of [`INSTANCES`] of `blas` (built, in `BUILD_INPUT`);
    /// leaves it in `SHADER_INPUT`.
    ///
    /// # Safety
    /// As [`Scene::build`].
    unsafe fn build_tlas(
        gpu: &mut Gpu<A>,
        blas: &A::AccelerationStructure,
    ) -> Result<A::AccelerationStructure> {
        use wgt::BufferUsages as U;
        let flags = wgt::AccelerationStructureFlags::PREFER_FAST_TRACE;
        let instances = |buffer| {
            AccelerationStructureEntries::Instances(AccelerationStructureInstances {
                buffer,
                offset: 0,
                count: INSTANCES.len() as u32,
            })
        };
        // SAFETY: as in `build`.
        unsafe {
            let d = &gpu.device;
            let blas_address = d.get_acceleration_structure_device_address(blas);
            let records: Vec<u8> = INSTANCES
                .iter()
                .flat_map(|p| {
                    keel_hal::encode_tlas_instance(&TlasInstance {
                        transform: transform(p),
                        custom_index: p.custom_index,
                        mask: 0xff,
                        sbt_record_offset: 0,
                        // Rotations and mirrors do not matter: both faces count.
                        flags: TlasInstanceFlags::TRIANGLE_CULL_DISABLE,
                        blas_address,
                    })
                })
                .collect();
            let sizes = d.get_acceleration_structure_build_sizes(
                &GetAccelerationStructureBuildSizesDescriptor::<A> {
                    entries: &instances(None),
                    flags,
                },
            )?;
            let instance_buffer = gpu.buffer(
                "TLAS instances",
                records.len() as u64,
                U::TLAS_INPUT | U::MAP_WRITE,
                Memory::Upload,
                &records,
            )?;
            let scratch = gpu.buffer(
                "TLAS scratch",
                sizes.build_scratch_size,
                U::STORAGE,
                Memory::Device,
                &[],
            )?;
            let tlas = d.create_acceleration_structure(&AccelerationStructureDescriptor::<A> {
                label: Some("TLAS"),
                kind: AccelerationStructureKind::TopLevel,
                size: sizes.acceleration_structure_size,
                placement: AccelerationStructurePlacement::Owned,
            })?;
            let entries = instances(Some(&instance_buffer));
            let mut built = Ok(());
            gpu.run("TLAS build", |e| {
                e.transition_buffers(&[build_input(&instance_buffer)]);
                built = e.build_acceleration_structures(&[BuildAccelerationStructureDescriptor {
                    entries: &entries,
                    mode: AccelerationStructureBuildMode::Build,
                    flags,
                    source_acceleration_structure: None,
                    destination_acceleration_structure: &tlas,
                    scratch_buffer: &scratch,
                    scratch_buffer_offset: 0,
                }]);
                e.place_acceleration_structure_barrier(AccelerationStructureBarrier {
                    structures: &[&tlas],
                    usage: StateTransition {
                        from: AccelerationStructureUses::BUILD_OUTPUT,
                        to: AccelerationStructureUses::SHADER_INPUT,
                    },
                });
            })?;
            built?;
            gpu.device.destroy_buffer(scratch);
            gpu.device.destroy_buffer(instance_buffer);
            Ok(tlas)
        }
    }

    /// # Safety
    /// No pending GPU work uses the scene.
    unsafe fn destroy(self, device: &A::Device) {
        // SAFETY: the caller's contract; the TLAS goes before the BLAS it names.
        unsafe {
            device.destroy_acceleration_structure(self.tlas);
            device.destroy_acceleration_structure(self.blas);
        }
    }
}

/// The program that traces: a ray-query compute pipeline, or a
/// ray-tracing pipeline with its shader binding table.
enum Program<A: Api> {
    Query(A::ComputePipeline),
    Pipeline {
        pipeline: A::RayTracingPipeline,
        table: ShaderBindingTable<A::Buffer>,
    },
}

/// Layouts, shader and pipeline of one way to trace.
struct Tracer<A: Api> {
    bind_group_layout: A::BindGroupLayout,
    pipeline_layout: A::PipelineLayout,
    module: A::ShaderModule,
    program: Program<A>,
}

/// Where a trace writes: packed 8-bit pixels, `pitch` texels a row
/// (rows are 256-byte aligned, as buffer → texture copies want), and the
/// bind group that points at them.
struct Target<A: Api> {
    width: u32,
    height: u32,
    pitch: u32,
    pixels: A::Buffer,
    params: A::Buffer,
    group: A::BindGroup,
    /// The state `pixels` is in.
    state: BufferUses,
}

impl<A: Api> Tracer<A> {
    /// # Safety
    /// The device is live and has `way`'s feature; the tracer is destroyed
    /// with [`Tracer::destroy`].
    unsafe fn new(device: &A::Device, way: Way) -> Result<Self> {
        let stages = match way {
            Way::Query => wgt::ShaderStages::COMPUTE,
            Way::Pipeline => wgt::ShaderStages::RAY_GENERATION,
        };
        let entry = |binding, ty| wgt::BindGroupLayoutEntry {
            binding,
            visibility: stages,
            ty,
            count: None,
        };
        let entries = [
            entry(
                0,
                wgt::BindingType::AccelerationStructure {
                    vertex_return: false,
                },
            ),
            entry(
                1,
                wgt::BindingType::Buffer {
                    ty: wgt::BufferBindingType::Storage { read_only: false },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
            ),
            entry(
                2,
                wgt::BindingType::Buffer {
                    ty: wgt::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: NonZeroU64::new(PARAMS_SIZE),
                },
            ),
        ];
        let source = shader(way);
        // SAFETY: the caller's contract; every object comes from `device`.
        unsafe {
            let bind_group_layout =
                device.create_bind_group_layout(&BindGroupLayoutDescriptor {
                    label: Some("trace"),
                    entries: &entries,
                    ..Default::default()
                })?;
            let pipeline_layout =
                device.create_pipeline_layout(&PipelineLayoutDescriptor::<A> {
                    label: Some("trace"),
                    bind_group_layouts: &[&bind_group_layout],
                    push_constant_ranges: &[],
                })?;
            let module = device.create_shader_module(&ShaderModuleDescriptor {
                label: Some("trace"),
                source: keel_hal::ShaderSource::Wgsl(source.into()),
            })?;
            let stage = |entry_point| ProgrammableStage {
                module: &module,
                entry_point,
                constants: &[],
            };
            let program = match way {
                Way::Query => {
                    Program::Query(device.create_compute_pipeline(&ComputePipelineDescriptor::<
                        A,
                    > {
                        label: Some("ray query"),
                        layout: &pipeline_layout,
                        stage: stage("main"),
                        cache: None,
                    })?)
                }
                Way::Pipeline => {
                    let rt_stage = |kind, entry_point| RayTracingStage::<A> {
                        kind,
                        stage: stage(entry_point),
                    };
                    let pipeline =
                        device.create_ray_tracing_pipeline(&RayTracingPipelineDescriptor::<A> {
                            label: Some("ray tracing"),
                            layout: &pipeline_layout,
                            stages: &[
                                rt_stage(RayTracingStageKind::RayGeneration, "rgen"),
                                rt_stage(RayTracingStageKind::Miss, "miss"),
                                rt_stage(RayTracingStageKind::ClosestHit, "chit"),
                            ],
                            groups: &[
                                ShaderGroup::General { stage: 0 },
                                ShaderGroup::General { stage: 1 },
                                ShaderGroup::TrianglesHit {
                                    closest_hit: Some(2),
                                    any_hit: None,
                                },
                            ],
                            max_recursion_depth: 1,
                            cache: None,
                        })?;
                    // Record 0: ray generation (group 0); miss 0: group 1;
                    // hit 0 (every instance's SBT offset is 0): group 2.
                    let table = device.create_shader_binding_table(
                        &pipeline,
                        &ShaderBindingTableDescriptor {
                            label: Some("trace"),
                            ray_generation: 0,
                            miss: &[1],
                            hit: &[2],
                        },
                    )?;
                    Program::Pipeline { pipeline, table }
                }
            };
            Ok(Tracer {
                bind_group_layout,
                pipeline_layout,
                module,
                program,
            })
        }
    }

    /// A target of `width`×`height` in `memory` (`Readback` to map it,
    /// `Device` to copy it into a texture), storing BGRA when `swap_rb`.
    ///
    /// # Safety
    /// As [`Tracer::new`]; `scene` is live; the target is destroyed with
    /// [`Tracer::destroy_target`] before the scene and the tracer.
    unsafe fn target(
        &self,
        gpu: &Gpu<A>,
        scene: &Scene<A>,
        (width, height): (u32, u32),
        memory: Memory,
        swap_rb: bool,
    ) -> Result<Target<A>> {
        use wgt::BufferUsages as U;
        let pitch = (width * 4).div_ceil(256) * 64;
        let usage = match memory {
            Memory::Readback => U::STORAGE | U::MAP_READ,
            _ => U::STORAGE | U::COPY_SRC,
        };
        let params: Vec<u8> = [width, height, pitch, u32::from(swap_rb)]
            .into_iter()
            .flat_map(u32::to_le_bytes)
            .collect();
        // SAFETY: the caller's contract.
        unsafe {
            let size = u64::from(pitch) * u64::from(height) * 4;
            let pixels = gpu.buffer("pixels", size, usage, memory, &[])?;
            let params = gpu.buffer(
                "trace params",
                PARAMS_SIZE,
                U::UNIFORM | U::MAP_WRITE,
                Memory::Upload,
                &params,
            )?;
            let group = gpu.device.create_bind_group(&BindGroupDescriptor::<A> {
                label: Some("trace"),
                layout: &self.bind_group_layout,
                entries: &[
                    BindGroupEntry {
                        binding: 0,
                        resource: BindingResource::AccelerationStructure(&scene.tlas),
                    },
                    BindGroupEntry {
                        binding: 1,
                        resource: BindingResource::Buffer(BufferBinding::whole(&pixels)),
                    },
                    BindGroupEntry {
                        binding: 2,
                        resource: BindingResource::Buffer(BufferBinding::whole(&params)),
                    },
                ],
            })?;
            Ok(Target {
                width,
                height,
                pitch,
                pixels,
                params,
                group,
                state: BufferUses::empty(),
            })
        }
    }

    /// Records one trace of every pixel of `target`, leaving its pixels in `after`.
    ///
    /// # Safety
    /// Recording, outside any pass; the target belongs to this tracer.
    unsafe fn record(&self, e: &mut A::CommandEncoder, target: &mut Target<A>, after: BufferUses) {
        let barrier = |buffer, from, to| BufferBarrier {
            buffer,
            usage: StateTransition { from, to },
        };
        let storage = BufferUses::STORAGE_READ_WRITE;
        let (w, h) = (target.width, target.height);
        // SAFETY: the caller's contract; the states are tracked in `target`.
        unsafe {
            e.transition_buffers(&[
                barrier(&target.pixels, target.state, storage),
                barrier(&target.params, BufferUses::empty(), BufferUses::UNIFORM),
            ]);
            let pass = ComputePassDescriptor {
                label: Some("trace"),
            };
            match &self.program {
                Program::Query(pipeline) => {
                    e.begin_compute_pass(&pass);
                    e.set_compute_pipeline(pipeline);
                    e.set_bind_group(&self.pipeline_layout, 0, &target.group, &[]);
                    e.dispatch([w.div_ceil(8), h.div_ceil(8), 1]);
                    e.end_compute_pass();
                }
                Program::Pipeline { pipeline, table } => {
                    e.begin_ray_tracing_pass(&pass);
                    e.set_ray_tracing_pipeline(pipeline);
                    e.set_bind_group(&self.pipeline_layout, 0, &target.group, &[]);
                    e.trace_rays(table, [w, h, 1]);
                    e.end_ray_tracing_pass();
                }
            }
            e.transition_buffers(&[barrier(&target.pixels, storage, after)]);
        }
        target.state = after;
    }

    /// # Safety
    /// No pending GPU work uses the target.
    unsafe fn destroy_target(&self, device: &A::Device, target: Target<A>) {
        // SAFETY: the caller's contract.
        unsafe {
            device.destroy_bind_group(target.group);
            device.destroy_buffer(target.params);
            device.destroy_buffer(target.pixels);
        }
    }

    /// # Safety
    /// No pending GPU work uses the tracer; its targets are destroyed.
    unsafe fn destroy(self, device: &A::Device) {
        // SAFETY: the caller's contract; pipelines go before their layout.
        unsafe {
            match self.program {
                Program::Query(pipeline) => device.destroy_compute_pipeline(pipeline),
                Program::Pipeline { pipeline, table } => {
                    device.destroy_shader_binding_table(table);
                    device.destroy_ray_tracing_pipeline(pipeline);
                }
            }
            device.destroy_shader_module(self.module);
            device.destroy_pipeline_layout(self.pipeline_layout);
            device.destroy_bind_group_layout(self.bind_group_layout);
        }
    }
}

/// Traces [`SIZE`]² rays and writes the picture to `output`.
fn trace_to_png<A: Api>(
    instance: A::Instance,
    exposed: ExposedAdapter<A>,
    way: Way,
    output: &str,
) -> Result<()> {
    println!(
        "ray_traced_triangle: tracing on {} ({}) with a {way}",
        exposed.info.name, exposed.info.backend
    );
    // SAFETY: every object is made on this device, used by submissions
    // that are waited for, and destroyed after them.
    let pixels = unsafe {
        let mut gpu = Gpu::<A>::open(&exposed.adapter, way)?;
        let scene = Scene::build(&mut gpu)?;
        let tracer = Tracer::<A>::new(&gpu.device, way)?;
        let mut target = tracer.target(&gpu, &scene, (SIZE, SIZE), Memory::Readback, false)?;
        gpu.run("trace", |e| {
            tracer.record(e, &mut target, BufferUses::MAP_READ)
        })?;
        let map = gpu.device.map_buffer(&target.pixels)?;
        let len = (target.pitch * target.height * 4) as usize;
        let bytes = std::slice::from_raw_parts(map.ptr.as_ptr(), len);
        // Rows are `pitch` texels apart; keep the first `width` of each.
        let row = (target.width * 4) as usize;
        let pixels: Vec<u8> = bytes
            .chunks_exact((target.pitch * 4) as usize)
            .flat_map(|r| &r[..row])
            .copied()
            .collect();
        tracer.destroy_target(&gpu.device, target);
        tracer.destroy(&gpu.device);
        scene.destroy(&gpu.device);
        gpu.destroy();
        pixels
    };
    write_png(output, SIZE, SIZE, &pixels)?;
    println!("ray_traced_triangle: wrote {output} ({SIZE}×{SIZE})");
    check_validation::<A>(&instance)
}

/// Fails when the validation layer reported errors.
fn check_validation<A: Api>(instance: &A::Instance) -> Result<()> {
    match instance.validation_error_count() {
        0 => Ok(()),
        n => Err(format!("{n} validation error(s); run with RUST_LOG=error to see them").into()),
    }
}

/// Writes tightly packed RGBA8 rows as a PNG.
fn write_png(path: &str, width: u32, height: u32, rgba: &[u8]) -> Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgba)?;
    writer.finish()?;
    Ok(())
}

#[cfg(not(feature = "vulkan"))]
fn run_window(_options: &Options) -> Result<()> {
    Err("--window needs the Vulkan backend (feature `vulkan`); noop cannot trace rays".into())
}

#[cfg(feature = "vulkan")]
fn run_window(options: &Options) -> Result<()> {
    window::run(options.way, options.frames)
}

/// The windowed path: the picture is traced once per surface size into a
/// buffer in the surface's byte order, and copied into each acquired texture.
#[cfg(feature = "vulkan")]
mod window {
    use super::*;
    use std::borrow::Borrow;

    use keel_hal::{
        BufferTextureCopy, Surface as _, SurfaceConfiguration, SurfaceError, TextureBarrier,
        TextureCopyBase, TextureUses,
    };
    use winit::application::ApplicationHandler;
    use winit::event::WindowEvent;
    use winit::event_loop::{ActiveEventLoop, EventLoop};
    use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};
    use winit::window::{Window, WindowId};

    /// Formats the shader can store: RGBA or BGRA bytes, 8-bit UNORM.
    const FORMATS: [wgt::TextureFormat; 2] = [
        wgt::TextureFormat::Bgra8Unorm,
        wgt::TextureFormat::Rgba8Unorm,
    ];

    pub(super) fn run(way: Option<Way>, frames: Option<u64>) -> Result<()> {
        let event_loop = EventLoop::new()?;
        let mut app = App::<keel_hal::vulkan::Api> {
            way,
            frames,
            state: None,
            error: None,
        };
        event_loop.run_app(&mut app)?;
        match app.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The winit application.
    struct App<A: Api> {
        way: Option<Way>,
        frames: Option<u64>,
        state: Option<Presenter<A>>,
        error: Option<Box<dyn Error>>,
    }

    /// The device side of the window.
    struct Presenter<A: Api> {
        instance: A::Instance,
        adapter: A::Adapter,
        gpu: Gpu<A>,
        surface: A::Surface,
        scene: Scene<A>,
        tracer: Tracer<A>,
        /// The traced picture at the surface's size, while `configured`.
        target: Option<Target<A>>,
        config: SurfaceConfiguration,
        configured: bool,
        presented: u64,
        /// Outlives the surface (destroyed in `Presenter::destroy`).
        window: Window,
    }

    impl<A: Api> ApplicationHandler for App<A> {
        fn resumed(&mut self, event_loop: &ActiveEventLoop) {
            if self.state.is_some() {
                return;
            }
            match Presenter::<A>::new(event_loop, self.way) {
                Ok(state) => {
                    state.window.request_redraw();
                    self.state = Some(state);
                }
                Err(e) => {
                    self.error = Some(e);
                    event_loop.exit();
                }
            }
        }

        fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
            let Some(state) = self.state.as_mut() else {
                return;
            };
            let step = match event {
                WindowEvent::CloseRequested => Ok(false),
                WindowEvent::Resized(_) => state.reconfigure().map(|()| true),
                WindowEvent::RedrawRequested => state.frame().map(|()| {
                    state.window.request_redraw();
                    self.frames.is_none_or(|n| state.presented < n)
                }),
                _ => Ok(true),
            };
            let keep_going = step.unwrap_or_else(|e| {
                self.error = Some(e);
                false
            });
            if keep_going {
                return;
            }
            if let Some(state) = self.state.take() {
                println!(
                    "ray_traced_triangle: presented {} frame(s)",
                    state.presented
                );
                if let Err(e) = state.destroy() {
                    self.error.get_or_insert(e);
                }
            }
            event_loop.exit();
        }
    }

    impl<A: Api> Presenter<A> {
        /// Opens the window and its surface, and a device that can trace
        /// and present to it; builds the scene.
        fn new(event_loop: &ActiveEventLoop, forced: Option<Way>) -> Result<Self> {
            let attributes = Window::default_attributes()
                .with_title("keel-hal ray-traced triangle")
                .with_inner_size(winit::dpi::PhysicalSize::new(512u32, 512u32));
            let window = event_loop.create_window(attributes)?;
            // Fails with the reason when no adapter can trace (the forced way).
            let (instance, _, _) = pick_adapter::<A>(forced)?;
            let display = window.display_handle()?.as_raw();
            let raw_window = window.window_handle()?.as_raw();
            // SAFETY: the window outlives the surface (see `destroy`).
            let surface = unsafe { instance.create_surface(display, raw_window) }?;
            // SAFETY: adapters and surface are of this instance; every object
            // made below is destroyed in `destroy`.
            unsafe {
                let found = instance
                    .enumerate_adapters()
                    .into_iter()
                    .find_map(|exposed| {
                        let way = way_for(exposed.capabilities.hal_features, forced)?;
                        let caps =
                            keel_hal::Adapter::surface_capabilities(&exposed.adapter, &surface)
                                .inspect_err(|e| {
                                    eprintln!("ray_traced_triangle: {}: {e}", exposed.info.name)
                                })
                                .ok()?;
                        Some((exposed, caps, way))
                    });
                let Some((exposed, caps, way)) = found else {
                    instance.destroy_surface(surface);
                    return Err("no adapter that traces rays can present to the window".into());
                };
                if !caps.usage.contains(wgt::TextureUsages::COPY_DST) {
                    instance.destroy_surface(surface);
                    return Err("the surface's textures cannot be copied into".into());
                }
                let Some(format) = FORMATS.into_iter().find(|f| caps.formats.contains(f)) else {
                    instance.destroy_surface(surface);
                    return Err("the surface offers neither BGRA8 nor RGBA8 UNORM".into());
                };
                let info = &exposed.info;
                println!(
                    "ray_traced_triangle: presenting with {} ({}) and a {way}",
                    info.name, info.backend
                );
                let mut gpu = Gpu::<A>::open(&exposed.adapter, way)?;
                let scene = Scene::build(&mut gpu)?;
                let tracer = Tracer::new(&gpu.device, way)?;
                let mut presenter = Presenter {
                    gpu,
                    scene,
                    tracer,
                    target: None,
                    config: SurfaceConfiguration {
                        maximum_frame_latency: 2,
                        present_mode: wgt::PresentMode::Fifo,
                        composite_alpha_mode: wgt::CompositeAlphaMode::Auto,
                        format,
                        extent: wgt::Extent3d::default(),
                        usage: wgt::TextureUsages::RENDER_ATTACHMENT | wgt::TextureUsages::COPY_DST,
                    },
                    configured: false,
                    presented: 0,
                    instance,
                    adapter: exposed.adapter,
                    surface,
                    window,
                };
                match presenter.reconfigure() {
                    Ok(()) => Ok(presenter),
                    Err(e) => presenter.destroy().and(Err(e)),
                }
            }
        }

        /// (Re)configures the surface for the window's size and traces the
        /// picture at that size. The GPU is idle here: each frame is waited
        /// for before the next.
        fn reconfigure(&mut self) -> Result<()> {
            // SAFETY: no GPU work is pending (see above); surface, adapter
            // and device come from one instance.
            unsafe {
                let caps = keel_hal::Adapter::surface_capabilities(&self.adapter, &self.surface)?;
                let size = self.window.inner_size();
                let extent = caps.current_extent.unwrap_or(wgt::Extent3d {
                    width: size.width,
                    height: size.height,
                    depth_or_array_layers: 1,
                });
                self.configured = false;
                if let Some(old) = self.target.take() {
                    self.tracer.destroy_target(&self.gpu.device, old);
                }
                if extent.width == 0 || extent.height == 0 {
                    return Ok(()); // Minimised: nothing to show.
                }
                self.config.extent = extent;
                match self.surface.configure(&self.gpu.device, &self.config) {
                    Ok(()) => self.configured = true,
                    Err(SurfaceError::Outdated) => return Ok(()),
                    Err(e) => return Err(e.into()),
                }
                let swap_rb = self.config.format == wgt::TextureFormat::Bgra8Unorm;
                let mut target = self.tracer.target(
                    &self.gpu,
                    &self.scene,
                    (extent.width, extent.height),
                    Memory::Device,
                    swap_rb,
                )?;
                let tracer = &self.tracer;
                let traced = self.gpu.run("trace", |e| {
                    tracer.record(e, &mut target, BufferUses::COPY_SRC)
                });
                self.target = Some(target);
                traced
            }
        }

        /// Acquires a texture, copies the picture into it, presents it, and
        /// waits for the copy.
        fn frame(&mut self) -> Result<()> {
            let (true, Some(target)) = (self.configured, self.target.as_ref()) else {
                return self.reconfigure();
            };
            // SAFETY: everything comes from this device; the frame's GPU
            // work is waited for before its command buffer is reused.
            unsafe {
                let acquired = match self.surface.acquire_texture(Some(Duration::from_secs(1))) {
                    Ok(acquired) => acquired,
                    Err(SurfaceError::Outdated) => return self.reconfigure(),
                    Err(SurfaceError::Timeout) => return Ok(()),
                    Err(e) => return Err(e.into()),
                };
                let texture: &A::Texture = acquired.texture.borrow();
                let whole = |from, to| TextureBarrier {
                    texture,
                    range: wgt::ImageSubresourceRange::default(),
                    usage: StateTransition { from, to },
                };
                let gpu = &mut self.gpu;
                let e = &mut gpu.encoder;
                e.begin_encoding(Some("frame"))?;
                e.transition_textures(&[whole(TextureUses::UNINITIALIZED, TextureUses::COPY_DST)]);
                e.copy_buffer_to_texture(
                    &target.pixels,
                    texture,
                    &[BufferTextureCopy {
                        buffer_layout: wgt::TexelCopyBufferLayout {
                            offset: 0,
                            bytes_per_row: Some(target.pitch * 4),
                            rows_per_image: Some(target.height),
                        },
                        texture_base: TextureCopyBase::default(),
                        size: self.config.extent,
                    }],
                );
                e.transition_textures(&[whole(TextureUses::COPY_DST, TextureUses::PRESENT)]);
                let commands = e.end_encoding()?;
                let value = gpu.next_value;
                gpu.next_value += 1;
                gpu.queue
                    .submit(&[&commands], &[&acquired.texture], &gpu.fence, value)?;
                let presented = gpu.queue.present(&self.surface, acquired.texture);
                gpu.device.wait(&gpu.fence, value, None)?;
                gpu.encoder.reset_all([commands]);
                match presented {
                    Ok(()) => self.presented += 1,
                    Err(SurfaceError::Outdated) => return self.reconfigure(),
                    Err(e) => return Err(e.into()),
                }
                if acquired.suboptimal {
                    self.reconfigure()?;
                }
                Ok(())
            }
        }

        /// Waits for the GPU and destroys everything, the surface before the window.
        fn destroy(self) -> Result<()> {
            // SAFETY: after `wait_idle` no GPU work is pending.
            unsafe {
                self.gpu.device.wait_idle()?;
                if let Some(target) = self.target {
                    self.tracer.destroy_target(&self.gpu.device, target);
                }
                self.tracer.destroy(&self.gpu.device);
                self.scene.destroy(&self.gpu.device);
                self.surface.unconfigure(&self.gpu.device);
                self.instance.destroy_surface(self.surface);
                self.gpu.destroy();
            }
            drop(self.adapter);
            let validation = check_validation::<A>(&self.instance);
            drop((self.instance, self.window));
            validation
        }
    }
}
