//! The ray-tracing tests' scene: a device opened with the adapter's
//! acceleration-structure and tracing features, triangle BLASes, TLASes of
//! placed instances (with refit), and one trace of a small image by ray
//! query or ray-tracing pipeline, with the picture the CPU expects.
//!
//! Colours: a hit is its barycentrics (red = 1 − u − v, green = u, blue = v);
//! a miss is [`MISS`]. Rays go along +z through pixel centres, y up.

use keel_hal::wgt;
use keel_hal::{
    AccelerationStructureBarrier, AccelerationStructureBuildMode, AccelerationStructureDescriptor,
    AccelerationStructureEntries, AccelerationStructureInstances, AccelerationStructureKind,
    AccelerationStructurePlacement, AccelerationStructureTriangles, AccelerationStructureUses,
    Adapter, Api, BindGroupDescriptor, BindGroupEntry, BindGroupLayoutDescriptor, BindingResource,
    BufferBinding, BufferUses, BuildAccelerationStructureDescriptor, CommandEncoder,
    CommandEncoderDescriptor, ComputePassDescriptor, ComputePipelineDescriptor, Device,
    DeviceDescriptor, GetAccelerationStructureBuildSizesDescriptor, HalFeatures, LiveCounts,
    Memory, PipelineLayoutDescriptor, ProgrammableStage, Queue, RayTracingPipelineDescriptor,
    RayTracingStage, RayTracingStageKind, ShaderBindingTableDescriptor, ShaderGroup,
    ShaderModuleDescriptor, StateTransition, TlasInstance, TlasInstanceFlags,
};

use crate::harness::{Ctx, Failure};
use crate::helpers::buffer_barrier;

/// Pixels per side of a traced image.
pub const SIDE: u32 = 64;
/// The triangle in object space (z = 0), corners in barycentric order.
pub const TRIANGLE: [[f32; 3]; 3] = [[-0.5, -0.45, 0.0], [0.5, -0.45, 0.0], [0.0, 0.55, 0.0]];
/// The colour of a miss.
pub const MISS: [f32; 3] = [0.05, 0.06, 0.16];

/// How rays are traced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// A ray query in a compute shader.
    Query,
    /// A ray-tracing pipeline with a shader binding table.
    Pipeline,
    /// A ray query that also reads the hit triangle's vertices
    /// (`EXPERIMENTAL_RAY_HIT_VERTEX_RETURN`): it paints what [`Way::Query`]
    /// does where they are the BLAS's, and a wrong colour where not.
    VertexReturn,
    /// A ray query through element 1 of a two-element binding array of the
    /// TLAS (`ACCELERATION_STRUCTURE_BINDING_ARRAY`).
    BindingArray,
}

/// Where an instance sits: object → world is rotate(degrees) · scale, then offset.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    pub scale: f32,
    pub degrees: f32,
    pub offset: [f32; 2],
}

/// Three instances that do not overlap: two small at the top (the second
/// upside down), a large one at the bottom turned a quarter to the right.
pub const PLACEMENTS: [Placement; 3] = [
    Placement {
        scale: 0.55,
        degrees: 0.0,
        offset: [-0.45, 0.4],
    },
    Placement {
        scale: 0.55,
        degrees: 180.0,
        offset: [0.45, 0.4],
    },
    Placement {
        scale: 0.8,
        degrees: -90.0,
        offset: [0.0, -0.45],
    },
];

impl Placement {
    /// The row-major 3×4 object-to-world matrix.
    pub fn matrix(&self) -> [f32; 12] {
        let (sin, cos) = self.degrees.to_radians().sin_cos();
        let (s, [x, y]) = (self.scale, self.offset);
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
            0.0,
        ]
    }

    /// World position of an object-space point (z = 0).
    pub fn apply(&self, p: [f32; 2]) -> [f32; 2] {
        let m = self.matrix();
        [
            m[0] * p[0] + m[1] * p[1] + m[3],
            m[4] * p[0] + m[5] * p[1] + m[7],
        ]
    }
}

/// World position of the centre of pixel (x, y).
pub fn pixel_center(x: u32, y: u32) -> [f32; 2] {
    let half = SIDE as f32 / 2.0;
    [
        (x as f32 + 0.5 - half) / half,
        -(y as f32 + 0.5 - half) / half,
    ]
}

/// The pixel whose centre is nearest world point `p`.
pub fn pixel_at(p: [f32; 2]) -> (u32, u32) {
    let half = SIDE as f32 / 2.0;
    let x = (p[0] * half + half).floor().clamp(0.0, SIDE as f32 - 1.0);
    let y = (-p[1] * half + half).floor().clamp(0.0, SIDE as f32 - 1.0);
    (x as u32, y as u32)
}

/// What the ray through pixel (x, y) should see: a colour, or `None` where
/// the pixel lies within `margin` (world units) of an instance's edge.
pub fn expected(placements: &[Placement], x: u32, y: u32, margin: f32) -> Option<[f32; 3]> {
    let p = pixel_center(x, y);
    let mut color = MISS;
    for placement in placements {
        let corners = TRIANGLE.map(|c| placement.apply([c[0], c[1]]));
        // Signed distances to the edges, positive inside (either winding).
        let area = (corners[1][0] - corners[0][0]) * (corners[2][1] - corners[0][1])
            - (corners[2][0] - corners[0][0]) * (corners[1][1] - corners[0][1]);
        let mut inside = true;
        for i in 0..3 {
            let (a, b) = (corners[i], corners[(i + 1) % 3]);
            let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
            let d = (ex * (p[1] - a[1]) - ey * (p[0] - a[0])) / (ex * ex + ey * ey).sqrt();
            let d = d * area.signum();
            if d.abs() < margin {
                return None;
            }
            inside &= d > 0.0;
        }
        if inside {
            // Barycentrics of p: weights of corners 1 and 2.
            let [a, b, c] = corners;
            let u = ((p[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (p[1] - a[1])) / area;
            let v = ((b[0] - a[0]) * (p[1] - a[1]) - (p[0] - a[0]) * (b[1] - a[1])) / area;
            color = [1.0 - u - v, u, v];
        }
    }
    Some(color)
}

/// The RGB bytes of a packed pixel (`pack4x8unorm`: R in the low byte).
pub fn rgb(pixel: u32) -> [u8; 3] {
    let b = pixel.to_le_bytes();
    [b[0], b[1], b[2]]
}

/// Checks every pixel away from the edges against [`expected`]; returns how many were judged.
pub fn check_picture(
    what: &str,
    placements: &[Placement],
    image: &[u32],
) -> Result<usize, Failure> {
    let mut judged = 0;
    for y in 0..SIDE {
        for x in 0..SIDE {
            let Some(want) = expected(placements, x, y, 0.05) else {
                continue;
            };
            let got = rgb(image[(y * SIDE + x) as usize]);
            let close = got
                .iter()
                .zip(want)
                .all(|(&g, w)| (f32::from(g) - w.clamp(0.0, 1.0) * 255.0).abs() <= 3.0);
            check!(
                close,
                "{what}: pixel ({x}, {y}) is {got:?}, expected {:?}",
                want.map(|w| (w * 255.0).round())
            );
            judged += 1;
        }
    }
    check!(
        judged > (SIDE * SIDE / 2) as usize,
        "{what}: too few pixels judged ({judged})"
    );
    Ok(judged)
}

/// A device of the test's adapter opened with acceleration structures and
/// whatever tracing the adapter has (asked for through the `wgpu-types`
/// features `EXPERIMENTAL_RAY_QUERY` and `EXPERIMENTAL_RAY_TRACING_PIPELINES`,
/// as an upper layer asks); its counts are checked by [`Rt::finish`].
pub struct Rt<A: Api> {
    pub device: A::Device,
    pub queue: A::Queue,
    pub hal: HalFeatures,
    /// The `wgpu-types` features the device was opened with.
    pub features: wgt::Features,
    start: LiveCounts,
}

impl<A: Api> Rt<A> {
    /// `None` where the adapter has no acceleration structures.
    pub fn open(ctx: &Ctx<A>) -> Result<Option<Self>, Failure> {
        let hal = ctx.caps.hal_features & HalFeatures::ACCELERATION_STRUCTURE;
        if hal.is_empty() {
            return Ok(None);
        }
        // Tracing, vertex return and binding arrays of structures, where the
        // adapter has them (`Way`); the device's hal features follow.
        let features = ctx.caps.features
            & (wgt::Features::EXPERIMENTAL_RAY_QUERY
                | wgt::Features::EXPERIMENTAL_RAY_TRACING_PIPELINES
                | wgt::Features::EXPERIMENTAL_RAY_HIT_VERTEX_RETURN
                | wgt::Features::ACCELERATION_STRUCTURE_BINDING_ARRAY);
        let desc = DeviceDescriptor {
            label: Some("conformance ray tracing"),
            required_features: features,
            required_hal_features: hal,
            ..Default::default()
        };
        // SAFETY: the adapter is live; the device is dropped in `finish`.
        let open = unsafe { ctx.adapter.open(&desc) }?;
        let start = open.device.live_counts();
        Ok(Some(Rt {
            device: open.device,
            queue: open.queue,
            hal: ctx.caps.hal_features,
            features,
            start,
        }))
    }

    /// The ways this device can trace, ray query first.
    pub fn ways(&self) -> Vec<Way> {
        if !self.hal.contains(HalFeatures::SHADER_EXECUTION) {
            return Vec::new();
        }
        let vertex_return = self
            .features
            .contains(wgt::Features::EXPERIMENTAL_RAY_HIT_VERTEX_RETURN);
        [
            (Way::Query, self.hal.contains(HalFeatures::RAY_QUERY)),
            (
                Way::Pipeline,
                self.hal.contains(HalFeatures::RAY_TRACING_PIPELINE),
            ),
            (Way::VertexReturn, vertex_return),
            (
                Way::BindingArray,
                self.features
                    .contains(wgt::Features::ACCELERATION_STRUCTURE_BINDING_ARRAY),
            ),
        ]
        .into_iter()
        .filter(|(_, has)| *has)
        .map(|(w, _)| w)
        .collect()
    }

    /// Fails unless every object made on the device is gone.
    pub fn finish(self) -> Result<(), Failure> {
        // SAFETY: live device.
        unsafe { self.device.wait_idle() }?;
        check_eq!(
            self.device.live_counts(),
            self.start,
            "ray-tracing device's live objects"
        );
        Ok(())
    }

    /// A buffer; `bytes`, if any, written through its mapping.
    ///
    /// # Safety
    /// The caller destroys the buffer.
    pub unsafe fn buffer(
        &self,
        size: u64,
        usage: wgt::BufferUsages,
        memory: Memory,
        bytes: &[u8],
    ) -> Result<A::Buffer, Failure> {
        let desc = keel_hal::BufferDescriptor {
            label: Some("conformance ray tracing"),
            size: size.max(4),
            usage,
            memory,
        };
        // SAFETY: live device; the buffer is fresh (or, for rewrites, idle).
        let buffer = unsafe { self.device.create_buffer(&desc) }?;
        if !bytes.is_empty() {
            // SAFETY: as above.
            unsafe { self.write(&buffer, bytes) }?;
        }
        Ok(buffer)
    }

    /// Writes `bytes` at the start of a mapped buffer.
    ///
    /// # Safety
    /// The buffer is mappable and no pending GPU work uses it.
    pub unsafe fn write(&self, buffer: &A::Buffer, bytes: &[u8]) -> Result<(), Failure> {
        // SAFETY: the caller's contract.
        let map = unsafe { self.device.map_buffer(buffer) }?;
        check!(bytes.len() as u64 <= map.size, "write past the mapping");
        // SAFETY: in bounds (checked); nothing else touches the bytes now.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.ptr.as_ptr(), bytes.len()) };
        Ok(())
    }

    /// Reads `len` bytes of a mapped buffer.
    ///
    /// # Safety
    /// The buffer is mappable and no pending GPU work writes it.
    pub unsafe fn read(&self, buffer: &A::Buffer, len: usize) -> Result<Vec<u8>, Failure> {
        // SAFETY: the caller's contract.
        let map = unsafe { self.device.map_buffer(buffer) }?;
        check!(len as u64 <= map.size, "read past the mapping");
        // SAFETY: in bounds (checked); nothing writes the bytes now.
        Ok(unsafe { std::slice::from_raw_parts(map.ptr.as_ptr(), len) }.to_vec())
    }

    /// Records on `encoder`, submits and waits; returns the command buffer
    /// unreset when `keep` (for tests that hold query slots), else resets it.
    ///
    /// # Safety
    /// What `record` records is valid and outlives the wait.
    pub unsafe fn run_on(
        &self,
        encoder: &mut A::CommandEncoder,
        keep: bool,
        record: impl FnOnce(&mut A::CommandEncoder) -> Result<(), Failure>,
    ) -> Result<Option<A::CommandBuffer>, Failure> {
        // SAFETY: the caller's contract; the encoder is idle.
        unsafe { encoder.begin_encoding(Some("conformance ray tracing")) }?;
        if let Err(e) = record(encoder) {
            // SAFETY: recording.
            unsafe { encoder.discard_encoding() };
            return Err(e);
        }
        // SAFETY: recording.
        let commands = unsafe { encoder.end_encoding() }?;
        // SAFETY: live device.
        let fence = unsafe { self.device.create_fence() }?;
        // SAFETY: the commands and the fence are this device's; the fence is new.
        let done = unsafe { self.queue.submit(&[&commands], &[], &fence, 1) }
            // SAFETY: the submission signals 1.
            .and_then(|()| unsafe { self.device.wait(&fence, 1, None) });
        // SAFETY: waited for (or never submitted).
        unsafe { self.device.destroy_fence(fence) };
        let kept = match done {
            Ok(true) if keep => Some(commands),
            result => {
                // SAFETY: the GPU is done with it.
                unsafe { encoder.reset_all([commands]) };
                check!(result?, "an unbounded wait returned early");
                None
            }
        };
        Ok(kept)
    }

    /// [`Rt::run_on`] on a fresh encoder, destroyed afterwards.
    ///
    /// # Safety
    /// As [`Rt::run_on`].
    pub unsafe fn run(
        &self,
        record: impl FnOnce(&mut A::CommandEncoder) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        let desc = CommandEncoderDescriptor {
            label: Some("conformance ray tracing"),
        };
        // SAFETY: live device.
        let mut encoder = unsafe { self.device.create_command_encoder(&desc) }?;
        // SAFETY: forwarded.
        let result = unsafe { self.run_on(&mut encoder, false, record) };
        // SAFETY: its command buffer was reset after the wait.
        unsafe { self.device.destroy_command_encoder(encoder) };
        result.map(|_| ())
    }

    /// Build sizes of `entries`.
    pub fn sizes(
        &self,
        entries: &AccelerationStructureEntries<'_, A::Buffer>,
        flags: wgt::AccelerationStructureFlags,
    ) -> Result<keel_hal::AccelerationStructureBuildSizes, Failure> {
        let desc = GetAccelerationStructureBuildSizesDescriptor::<A> { entries, flags };
        // SAFETY: live device.
        Ok(unsafe { self.device.get_acceleration_structure_build_sizes(&desc) }?)
    }

    /// A structure with owned storage.
    ///
    /// # Safety
    /// The caller destroys it.
    pub unsafe fn structure(
        &self,
        kind: AccelerationStructureKind,
        size: u64,
    ) -> Result<A::AccelerationStructure, keel_hal::AccelerationStructureError> {
        let desc = AccelerationStructureDescriptor::<A> {
            label: Some("conformance"),
            kind,
            size,
            placement: AccelerationStructurePlacement::Owned,
        };
        // SAFETY: live device.
        unsafe { self.device.create_acceleration_structure(&desc) }
    }
}

/// One non-indexed triangle geometry of `count` vertices.
pub fn triangles<B>(buffer: Option<&B>, count: u32) -> [AccelerationStructureTriangles<'_, B>; 1] {
    [AccelerationStructureTriangles {
        vertex_buffer: buffer,
        vertex_offset: 0,
        vertex_format: wgt::VertexFormat::Float32x3,
        vertex_stride: 12,
        vertex_count: count,
        indices: None,
        transform: None,
        flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
    }]
}

/// Little-endian bytes of `f32`s.
pub fn f32_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

/// A barrier between structure uses.
pub fn as_barrier<'a, S>(
    structures: &'a [&'a S],
    from: AccelerationStructureUses,
    to: AccelerationStructureUses,
) -> AccelerationStructureBarrier<'a, S> {
    AccelerationStructureBarrier {
        structures,
        usage: StateTransition { from, to },
    }
}

/// Builds a BLAS of `positions` (triples of vertices) with `flags`; the
/// build is submitted and waited for, leaving the BLAS in `BUILD_OUTPUT`.
///
/// # Safety
/// The caller destroys the structure.
pub unsafe fn build_blas<A: Api>(
    rt: &Rt<A>,
    positions: &[[f32; 3]],
    flags: wgt::AccelerationStructureFlags,
) -> Result<A::AccelerationStructure, Failure> {
    use wgt::BufferUsages as U;
    let count = positions.len() as u32;
    let bytes = f32_bytes(positions.iter().flatten().copied());
    let sizes = rt.sizes(
        &AccelerationStructureEntries::Triangles(&triangles::<A::Buffer>(None, count)),
        flags,
    )?;
    // SAFETY: every object is destroyed below, after the wait.
    unsafe {
        let vertices = rt.buffer(
            bytes.len() as u64,
            U::BLAS_INPUT | U::MAP_WRITE,
            Memory::Upload,
            &bytes,
        )?;
        let scratch = rt.buffer(sizes.build_scratch_size, U::STORAGE, Memory::Device, &[])?;
        let blas = rt.structure(
            AccelerationStructureKind::BottomLevel,
            sizes.acceleration_structure_size,
        )?;
        let geometry = triangles(Some(&vertices), count);
        let entries = AccelerationStructureEntries::Triangles(&geometry);
        let built = rt.run(|e| {
            e.transition_buffers(&[buffer_barrier(
                &vertices,
                BufferUses::empty(),
                BufferUses::ACCELERATION_STRUCTURE_INPUT,
            )]);
            Ok(
                e.build_acceleration_structures(&[BuildAccelerationStructureDescriptor {
                    entries: &entries,
                    mode: AccelerationStructureBuildMode::Build,
                    flags,
                    source_acceleration_structure: None,
                    destination_acceleration_structure: &blas,
                    scratch_buffer: &scratch,
                    scratch_buffer_offset: 0,
                }])?,
            )
        });
        rt.device.destroy_buffer(scratch);
        rt.device.destroy_buffer(vertices);
        match built {
            Ok(()) => Ok(blas),
            Err(e) => {
                rt.device.destroy_acceleration_structure(blas);
                Err(e)
            }
        }
    }
}

/// A TLAS with its instance buffer and scratch, kept for refits.
pub struct Tlas<A: Api> {
    pub tlas: A::AccelerationStructure,
    instances: A::Buffer,
    scratch: A::Buffer,
    flags: wgt::AccelerationStructureFlags,
    count: u32,
}

/// The instance records of `placements`, all of the BLAS at `address`.
fn records(placements: &[Placement], address: u64) -> Vec<u8> {
    placements
        .iter()
        .enumerate()
        .flat_map(|(i, p)| {
            keel_hal::encode_tlas_instance(&TlasInstance {
                transform: p.matrix(),
                custom_index: i as u32,
                mask: 0xff,
                sbt_record_offset: 0,
                flags: TlasInstanceFlags::TRIANGLE_CULL_DISABLE,
                blas_address: address,
            })
        })
        .collect()
}

impl<A: Api> Tlas<A> {
    /// Builds a TLAS of `placements` of `blas` (built, in `from`), with
    /// `ALLOW_UPDATE`; leaves the BLAS in `BUILD_INPUT` and the TLAS in `SHADER_INPUT`.
    ///
    /// # Safety
    /// The BLAS is this device's; the caller calls [`Tlas::destroy`].
    pub unsafe fn build(
        rt: &Rt<A>,
        blas: &A::AccelerationStructure,
        from: AccelerationStructureUses,
        placements: &[Placement],
    ) -> Result<Self, Failure> {
        use wgt::BufferUsages as U;
        let flags = wgt::AccelerationStructureFlags::PREFER_FAST_TRACE
            | wgt::AccelerationStructureFlags::ALLOW_UPDATE;
        let count = placements.len() as u32;
        let entries = |buffer| {
            AccelerationStructureEntries::Instances(AccelerationStructureInstances {
                buffer,
                offset: 0,
                count,
            })
        };
        let sizes = rt.sizes(&entries(None), flags)?;
        // SAFETY: everything is destroyed in `destroy` (or here on failure paths the
        // test fails anyway and the harness reports the leak).
        unsafe {
            let address = rt.device.get_acceleration_structure_device_address(blas);
            let bytes = records(placements, address);
            let instances = rt.buffer(
                bytes.len() as u64,
                U::TLAS_INPUT | U::MAP_WRITE,
                Memory::Upload,
                &bytes,
            )?;
            let scratch_size = sizes.build_scratch_size.max(sizes.update_scratch_size);
            let scratch = rt.buffer(scratch_size, U::STORAGE, Memory::Device, &[])?;
            let tlas = rt.structure(
                AccelerationStructureKind::TopLevel,
                sizes.acceleration_structure_size,
            )?;
            let me = Tlas {
                tlas,
                instances,
                scratch,
                flags,
                count,
            };
            let built = rt.run(|e| {
                e.transition_buffers(&[buffer_barrier(
                    &me.instances,
                    BufferUses::empty(),
                    BufferUses::ACCELERATION_STRUCTURE_INPUT,
                )]);
                e.place_acceleration_structure_barrier(as_barrier(
                    &[blas],
                    from,
                    AccelerationStructureUses::BUILD_INPUT,
                ));
                me.record(e, AccelerationStructureBuildMode::Build)
            });
            match built {
                Ok(()) => Ok(me),
                Err(e) => {
                    me.destroy(rt);
                    Err(e)
                }
            }
        }
    }

    /// Records a build or refit, then the barrier to `SHADER_INPUT`.
    ///
    /// # Safety
    /// Recording, outside passes; the TLAS is in `BUILD_OUTPUT` or new.
    unsafe fn record(
        &self,
        e: &mut A::CommandEncoder,
        mode: AccelerationStructureBuildMode,
    ) -> Result<(), Failure> {
        let entries = AccelerationStructureEntries::Instances(AccelerationStructureInstances {
            buffer: Some(&self.instances),
            offset: 0,
            count: self.count,
        });
        let update = mode == AccelerationStructureBuildMode::Update;
        // SAFETY: the caller's contract.
        unsafe {
            e.build_acceleration_structures(&[BuildAccelerationStructureDescriptor {
                entries: &entries,
                mode,
                flags: self.flags,
                source_acceleration_structure: update.then_some(&self.tlas),
                destination_acceleration_structure: &self.tlas,
                scratch_buffer: &self.scratch,
                scratch_buffer_offset: 0,
            }])?;
            e.place_acceleration_structure_barrier(as_barrier(
                &[&self.tlas],
                AccelerationStructureUses::BUILD_OUTPUT,
                AccelerationStructureUses::SHADER_INPUT,
            ));
        }
        Ok(())
    }

    /// Rewrites the instances with `placements` (same count) and refits the
    /// TLAS in place (update mode); it ends in `SHADER_INPUT` again.
    ///
    /// # Safety
    /// No pending GPU work uses the TLAS; `blas` is the one it was built of.
    pub unsafe fn refit(
        &self,
        rt: &Rt<A>,
        blas: &A::AccelerationStructure,
        placements: &[Placement],
    ) -> Result<(), Failure> {
        check_eq!(placements.len() as u32, self.count, "refit instance count");
        // SAFETY: the caller's contract: the GPU is done with the instance buffer.
        unsafe {
            let address = rt.device.get_acceleration_structure_device_address(blas);
            rt.write(&self.instances, &records(placements, address))?;
            rt.run(|e| {
                e.place_acceleration_structure_barrier(as_barrier(
                    &[&self.tlas],
                    AccelerationStructureUses::SHADER_INPUT,
                    AccelerationStructureUses::BUILD_OUTPUT,
                ));
                self.record(e, AccelerationStructureBuildMode::Update)
            })
        }
    }

    /// # Safety
    /// No pending GPU work uses it.
    pub unsafe fn destroy(self, rt: &Rt<A>) {
        // SAFETY: the caller's contract.
        unsafe {
            rt.device.destroy_acceleration_structure(self.tlas);
            rt.device.destroy_buffer(self.scratch);
            rt.device.destroy_buffer(self.instances);
        }
    }
}

const COMMON_WGSL: &str = r#"
{SCENE_DECL}
@group(0) @binding(1) var<storage, read_write> pixels: array<u32>;
const SIDE = {SIDE}u;
const A = vec3<f32>({A});
const B = vec3<f32>({B});
const C = vec3<f32>({C});
const MISS_COLOR = vec3<f32>({MISS});
fn primary_ray(pixel: vec2<u32>) -> RayDesc {
    let half = f32(SIDE) * 0.5;
    let xy = (vec2<f32>(pixel) + 0.5 - half) / half;
    return RayDesc(0u, 0xFFu, 0.0, 10.0, vec3<f32>(xy.x, -xy.y, -1.0), vec3<f32>(0.0, 0.0, 1.0));
}
fn store(pixel: vec2<u32>, color: vec3<f32>) {
    pixels[pixel.y * SIDE + pixel.x] = pack4x8unorm(vec4<f32>(color, 1.0));
}
"#;

const QUERY_WGSL: &str = r#"
enable wgpu_ray_query;
{COMMON}
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    var rq: ray_query;
    rayQueryInitialize(&rq, {SCENE}, primary_ray(id.xy));
    while rayQueryProceed(&rq) {}
    let hit = rayQueryGetCommittedIntersection(&rq);
    var color = MISS_COLOR;
    if hit.kind != RAY_QUERY_INTERSECTION_NONE {
        color = vec3<f32>(1.0 - hit.barycentrics.x - hit.barycentrics.y, hit.barycentrics);
    }
    store(id.xy, color);
}
"#;

const VERTEX_RETURN_WGSL: &str = r#"
enable wgpu_ray_query;
enable wgpu_ray_query_vertex_return;
{COMMON}
fn near(a: vec3<f32>, b: vec3<f32>) -> bool { return all(abs(a - b) < vec3<f32>(1e-4)); }
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    var rq: ray_query<vertex_return>;
    rayQueryInitialize(&rq, scene, primary_ray(id.xy));
    while rayQueryProceed(&rq) {}
    let hit = rayQueryGetCommittedIntersection(&rq);
    var color = MISS_COLOR;
    if hit.kind != RAY_QUERY_INTERSECTION_NONE {
        let v = getCommittedHitVertexPositions(&rq);
        color = vec3<f32>(1.0, 1.0, 1.0);
        if near(v[0], A) && near(v[1], B) && near(v[2], C) {
            color = vec3<f32>(1.0 - hit.barycentrics.x - hit.barycentrics.y, hit.barycentrics);
        }
    }
    store(id.xy, color);
}
"#;

const PIPELINE_WGSL: &str = r#"
enable wgpu_ray_tracing_pipeline;
{COMMON}
struct Payload { color: vec3<f32> };
var<ray_payload> payload: Payload;
var<incoming_ray_payload> incoming: Payload;
@ray_generation
fn rgen(@builtin(ray_invocation_id) id: vec3<u32>) {
    payload = Payload(vec3<f32>(0.0));
    traceRay(scene, primary_ray(id.xy), &payload);
    store(id.xy, payload.color);
}
@miss
@incoming_payload(incoming)
fn miss() { incoming.color = MISS_COLOR; }
// WGSL has no hit attributes: solve for the barycentrics in object space.
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

fn wgsl(way: Way) -> String {
    let v = |p: [f32; 3]| format!("{:?}, {:?}, {:?}", p[0], p[1], p[2]);
    let common = COMMON_WGSL
        .replace("{SIDE}", &SIDE.to_string())
        .replace("{A}", &v(TRIANGLE[0]))
        .replace("{B}", &v(TRIANGLE[1]))
        .replace("{C}", &v(TRIANGLE[2]))
        .replace("{MISS}", &v(MISS))
        .replace(
            "{SCENE_DECL}",
            match way {
                Way::VertexReturn => {
                    "@group(0) @binding(0) var scene: acceleration_structure<vertex_return>;"
                }
                Way::BindingArray => {
                    "@group(0) @binding(0) var scenes: binding_array<acceleration_structure, 2>;"
                }
                Way::Query | Way::Pipeline => {
                    "@group(0) @binding(0) var scene: acceleration_structure;"
                }
            },
        );
    // Binding arrays are a WGSL extension of their own.
    let enables = if way == Way::BindingArray {
        "enable wgpu_binding_array;"
    } else {
        ""
    };
    let body = match way {
        Way::Query | Way::BindingArray => QUERY_WGSL,
        Way::VertexReturn => VERTEX_RETURN_WGSL,
        Way::Pipeline => PIPELINE_WGSL,
    }
    .replace("{COMMON}", &common)
    .replace(
        "{SCENE}",
        if way == Way::BindingArray {
            "scenes[1]"
        } else {
            "scene"
        },
    );
    format!("{enables}\n{body}")
}

/// Traces a [`SIDE`]² image of `tlas` (in `SHADER_INPUT`), one packed
/// RGBA8 pixel per `u32`, row by row.
///
/// # Safety
/// The TLAS is this device's, built, and idle but for reads.
pub unsafe fn trace<A: Api>(
    rt: &Rt<A>,
    way: Way,
    tlas: &A::AccelerationStructure,
) -> Result<Vec<u32>, Failure> {
    use wgt::BufferUsages as U;
    let stages = match way {
        Way::Query | Way::VertexReturn | Way::BindingArray => wgt::ShaderStages::COMPUTE,
        Way::Pipeline => wgt::ShaderStages::RAY_GENERATION,
    };
    let entry = |binding, ty, count| wgt::BindGroupLayoutEntry {
        binding,
        visibility: stages,
        ty,
        count,
    };
    let array = (way == Way::BindingArray).then_some(std::num::NonZeroU32::MIN.saturating_add(1));
    let entries = [
        entry(
            0,
            wgt::BindingType::AccelerationStructure {
                vertex_return: way == Way::VertexReturn,
            },
            array,
        ),
        entry(1, crate::pipelines::storage(false, false), None),
    ];
    let both = [tlas, tlas];
    let len = (SIDE * SIDE * 4) as usize;
    let source = wgsl(way);
    let d = &rt.device;
    // SAFETY: every object is destroyed before returning, after the wait.
    unsafe {
        let out = rt.buffer(len as u64, U::STORAGE | U::MAP_READ, Memory::Readback, &[])?;
        let bgl = d.create_bind_group_layout(&BindGroupLayoutDescriptor {
            label: Some("trace"),
            entries: &entries,
            ..Default::default()
        })?;
        let group = d.create_bind_group(&BindGroupDescriptor::<A> {
            label: Some("trace"),
            layout: &bgl,
            entries: &[
                BindGroupEntry {
                    binding: 0,
                    resource: if way == Way::BindingArray {
                        BindingResource::AccelerationStructureArray(&both)
                    } else {
                        BindingResource::AccelerationStructure(tlas)
                    },
                },
                BindGroupEntry {
                    binding: 1,
                    resource: BindingResource::Buffer(BufferBinding::whole(&out)),
                },
            ],
        })?;
        let layout = d.create_pipeline_layout(&PipelineLayoutDescriptor::<A> {
            label: Some("trace"),
            bind_group_layouts: &[&bgl],
            push_constant_ranges: &[],
        })?;
        let module = d.create_shader_module(&ShaderModuleDescriptor::wgsl(&source))?;
        let stage = |entry_point| ProgrammableStage {
            module: &module,
            entry_point,
            constants: &[],
        };
        let to_storage = |e: &mut A::CommandEncoder| {
            e.transition_buffers(&[buffer_barrier(
                &out,
                BufferUses::empty(),
                BufferUses::STORAGE_READ_WRITE,
            )])
        };
        let to_host = |e: &mut A::CommandEncoder| {
            e.transition_buffers(&[buffer_barrier(
                &out,
                BufferUses::STORAGE_READ_WRITE,
                BufferUses::MAP_READ,
            )])
        };
        let pass = ComputePassDescriptor {
            label: Some("trace"),
        };
        let ran = match way {
            Way::Query | Way::VertexReturn | Way::BindingArray => {
                let pipeline = d.create_compute_pipeline(&ComputePipelineDescriptor::<A> {
                    label: Some("ray query"),
                    layout: &layout,
                    stage: stage("main"),
                    cache: None,
                })?;
                let ran = rt.run(|e| {
                    to_storage(e);
                    e.begin_compute_pass(&pass);
                    e.set_compute_pipeline(&pipeline);
                    e.set_bind_group(&layout, 0, &group, &[]);
                    e.dispatch([SIDE / 8, SIDE / 8, 1]);
                    e.end_compute_pass();
                    to_host(e);
                    Ok(())
                });
                d.destroy_compute_pipeline(pipeline);
                ran
            }
            Way::Pipeline => {
                let rt_stage = |kind, entry_point| RayTracingStage::<A> {
                    kind,
                    stage: stage(entry_point),
                };
                let pipeline =
                    d.create_ray_tracing_pipeline(&RayTracingPipelineDescriptor::<A> {
                        label: Some("ray tracing"),
                        layout: &layout,
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
                let table = d.create_shader_binding_table(
                    &pipeline,
                    &ShaderBindingTableDescriptor {
                        label: Some("trace"),
                        ray_generation: 0,
                        miss: &[1],
                        hit: &[2],
                    },
                )?;
                let ran = rt.run(|e| {
                    to_storage(e);
                    e.begin_ray_tracing_pass(&pass);
                    e.set_ray_tracing_pipeline(&pipeline);
                    e.set_bind_group(&layout, 0, &group, &[]);
                    e.trace_rays(&table, [SIDE, SIDE, 1]);
                    e.end_ray_tracing_pass();
                    to_host(e);
                    Ok(())
                });
                d.destroy_shader_binding_table(table);
                d.destroy_ray_tracing_pipeline(pipeline);
                ran
            }
        };
        let bytes = ran.and_then(|()| rt.read(&out, len));
        d.destroy_shader_module(module);
        d.destroy_pipeline_layout(layout);
        d.destroy_bind_group(group);
        d.destroy_bind_group_layout(bgl);
        d.destroy_buffer(out);
        Ok(crate::pipelines::bytes_to_words(&bytes?))
    }
}
