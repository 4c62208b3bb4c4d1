//! Cooperative matrices (`EXPERIMENTAL_COOPERATIVE_MATRIX`): where the
//! adapter offers a square configuration shaders can name (8×8×8 or
//! 16×16×16), a compute shader loads A, B and C, computes A × B + C with
//! `coopMultiplyAdd` and stores it; the result is compared element by
//! element with the same product on the CPU (small integers, exact in
//! every scalar type), and a square configuration the device does not
//! offer is refused with `ShaderError::UnsupportedCooperativeMatrix`. On
//! every adapter, noop too: the feature is
//! advertised exactly when configurations are listed, and without it a
//! module using a cooperative matrix is refused with
//! `ShaderError::MissingCapabilities` naming `COOPERATIVE_MATRIX`.

use keel_hal::naga::valid::Capabilities as Caps;
use keel_hal::wgt;
use keel_hal::{
    Adapter, Api, BindGroupDescriptor, BindGroupEntry, BindGroupLayoutDescriptor, BindingResource,
    BufferBinding, BufferDescriptor, BufferUses, CommandEncoder, CommandEncoderDescriptor,
    ComputePassDescriptor, ComputePipelineDescriptor, Device, DeviceDescriptor, Memory,
    PipelineLayoutDescriptor, ProgrammableStage, Queue, ShaderError, ShaderModuleDescriptor,
};

use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::helpers::buffer_barrier;
use crate::pipelines::{entry, storage};

conformance_tests!(
    cooperative_matrix_multiply_add,
    cooperative_matrices_need_their_feature,
);

/// A configuration the test can run: its size and scalar types.
#[derive(Clone, Copy, Debug)]
struct Square {
    n: u32,
    ab: wgt::CooperativeScalarType,
    cr: wgt::CooperativeScalarType,
}

/// The first square configuration of `caps` (floats in and out, or
/// integers in and out).
fn square(caps: &[wgt::CooperativeMatrixProperties]) -> Option<Square> {
    use wgt::CooperativeScalarType as S;
    let float = |t| matches!(t, S::F16 | S::F32);
    caps.iter()
        .find(|p| {
            p.m_size == p.n_size && p.n_size == p.k_size && float(p.ab_type) == float(p.cr_type)
        })
        .map(|p| Square {
            n: p.n_size,
            ab: p.ab_type,
            cr: p.cr_type,
        })
}

/// The WGSL name of a scalar type.
fn wgsl_type(t: wgt::CooperativeScalarType) -> &'static str {
    use wgt::CooperativeScalarType as S;
    match t {
        S::F16 => "f16",
        S::F32 => "f32",
        S::I32 => "i32",
        S::U32 => "u32",
    }
}

/// `d = a × b + c` on `n`×`n` row-major matrices.
fn shader(s: Square) -> String {
    let (ab, cr, n) = (wgsl_type(s.ab), wgsl_type(s.cr), s.n);
    let f16 = if s.ab == wgt::CooperativeScalarType::F16 || s.cr == wgt::CooperativeScalarType::F16
    {
        "enable f16;\n"
    } else {
        ""
    };
    format!(
        "{f16}enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read> a: array<{ab}>;
@group(0) @binding(1) var<storage, read> b: array<{ab}>;
@group(0) @binding(2) var<storage, read> c: array<{cr}>;
@group(0) @binding(3) var<storage, read_write> d: array<{cr}>;
@compute @workgroup_size(64)
fn main() {{
    let ma = coopLoadT<coop_mat{n}x{n}<{ab}, A>>(&a[0], {n}u);
    let mb = coopLoadT<coop_mat{n}x{n}<{ab}, B>>(&b[0], {n}u);
    let mc = coopLoadT<coop_mat{n}x{n}<{cr}, C>>(&c[0], {n}u);
    coopStoreT(coopMultiplyAdd(ma, mb, mc), &d[0], {n}u);
}}
"
    )
}

/// A small non-negative integer's bytes in scalar type `t` (exact: below 2,048).
fn encode(t: wgt::CooperativeScalarType, v: u32) -> Vec<u8> {
    use wgt::CooperativeScalarType as S;
    match t {
        S::F32 => (v as f32).to_le_bytes().to_vec(),
        S::I32 => (v as i32).to_le_bytes().to_vec(),
        S::U32 => v.to_le_bytes().to_vec(),
        S::F16 => {
            let bits: u16 = if v == 0 {
                0
            } else {
                let e = 31 - v.leading_zeros();
                let mantissa = ((v << (10 - e)) & 0x3ff) as u16;
                (((e + 15) as u16) << 10) | mantissa
            };
            bits.to_le_bytes().to_vec()
        }
    }
}

/// Bytes of one element of scalar type `t`.
fn width(t: wgt::CooperativeScalarType) -> usize {
    if t == wgt::CooperativeScalarType::F16 {
        2
    } else {
        4
    }
}

/// The element values: A, B, C (row-major) and the expected A × B + C.
fn matrices(n: usize) -> [Vec<u32>; 4] {
    let a: Vec<u32> = (0..n * n)
        .map(|i| ((i / n) + 2 * (i % n)) as u32 % 5)
        .collect();
    let b: Vec<u32> = (0..n * n)
        .map(|i| (3 * (i / n) + (i % n)) as u32 % 4)
        .collect();
    let c: Vec<u32> = (0..n * n).map(|i| ((i / n) + (i % n)) as u32 % 3).collect();
    let d = (0..n * n)
        .map(|i| {
            let (row, col) = (i / n, i % n);
            c[i] + (0..n).map(|k| a[row * n + k] * b[k * n + col]).sum::<u32>()
        })
        .collect();
    [a, b, c, d]
}

/// Without the feature (the test's device has none), a module with a
/// cooperative matrix is refused naming `COOPERATIVE_MATRIX`; the feature
/// is advertised exactly where configurations are listed.
fn cooperative_matrices_need_their_feature<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let advertised = ctx
        .caps
        .features
        .contains(wgt::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
    check_eq!(
        advertised,
        !ctx.caps.cooperative_matrix_properties.is_empty(),
        "EXPERIMENTAL_COOPERATIVE_MATRIX advertised, against configurations listed ({:?})",
        ctx.caps.cooperative_matrix_properties
    );
    let wgsl = shader(Square {
        n: 8,
        ab: wgt::CooperativeScalarType::F32,
        cr: wgt::CooperativeScalarType::F32,
    });
    // SAFETY: live device; a module made by mistake is destroyed.
    match unsafe {
        ctx.device
            .create_shader_module(&ShaderModuleDescriptor::wgsl(&wgsl))
    } {
        Err(ShaderError::MissingCapabilities { needed, .. }) => {
            check_eq!(needed, Caps::COOPERATIVE_MATRIX, "the capabilities named");
        }
        Ok(module) => {
            // SAFETY: unused.
            unsafe { ctx.device.destroy_shader_module(module) };
            return Err("a cooperative-matrix module was made without the feature".into());
        }
        Err(e) => return Err(format!("refused with {e}, not MissingCapabilities").into()),
    }
    Ok(Outcome::Pass)
}

/// A × B + C through `coopMultiplyAdd`, checked against the CPU.
fn cooperative_matrix_multiply_add<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let feature = wgt::Features::EXPERIMENTAL_COOPERATIVE_MATRIX;
    if !ctx.caps.features.contains(feature) {
        return skip("the adapter lacks EXPERIMENTAL_COOPERATIVE_MATRIX");
    }
    let Some(config) = square(&ctx.caps.cooperative_matrix_properties) else {
        return skip("no square cooperative-matrix configuration (8 or 16)");
    };
    let f16 = config.ab == wgt::CooperativeScalarType::F16
        || config.cr == wgt::CooperativeScalarType::F16;
    let mut features = feature;
    if f16 {
        if !ctx.caps.features.contains(wgt::Features::SHADER_F16) {
            return skip("the f16 configuration needs SHADER_F16");
        }
        features |= wgt::Features::SHADER_F16;
    }
    let desc = DeviceDescriptor {
        label: Some("conformance cooperative matrix"),
        required_features: features,
        ..Default::default()
    };
    // SAFETY: the adapter is live; everything made is destroyed below.
    let open = unsafe { ctx.adapter.open(&desc) }?;
    ctx.note(format!("configuration {config:?}"));
    // SAFETY: `open`'s device and queue; all objects are destroyed before it drops.
    let got = unsafe { run::<A>(&open.device, &open.queue, config) }?;
    let n = config.n as usize;
    let [.., expected] = matrices(n);
    let expected: Vec<u8> = expected
        .iter()
        .flat_map(|&v| encode(config.cr, v))
        .collect();
    let wrong = got
        .chunks_exact(width(config.cr))
        .zip(expected.chunks_exact(width(config.cr)))
        .filter(|(g, e)| g != e)
        .count();
    check_eq!(wrong, 0, "elements of A × B + C that differ from the CPU's");
    // A square configuration the device does not offer (in the scalar
    // types it was opened for) is refused when the module is made.
    use wgt::CooperativeScalarType as S;
    let types: &[S] = if f16 { &[S::F32, S::F16] } else { &[S::F32] };
    let caps = &ctx.caps.cooperative_matrix_properties;
    let role_fits =
        |rows_cols: fn(&wgt::CooperativeMatrixProperties) -> (u32, u32),
         ty: fn(&wgt::CooperativeMatrixProperties) -> S,
         n: u32,
         t: S| { caps.iter().any(|p| rows_cols(p) == (n, n) && ty(p) == t) };
    let offered = |s: &Square| {
        role_fits(|p| (p.m_size, p.k_size), |p| p.ab_type, s.n, s.ab)
            && role_fits(|p| (p.k_size, p.n_size), |p| p.ab_type, s.n, s.ab)
            && role_fits(|p| (p.m_size, p.n_size), |p| p.cr_type, s.n, s.cr)
    };
    let candidates = [8, 16].into_iter().flat_map(|n| {
        types
            .iter()
            .flat_map(move |&ab| types.iter().map(move |&cr| Square { n, ab, cr }))
    });
    let Some(unsupported) = candidates.into_iter().find(|s| !offered(s)) else {
        ctx.note("every square configuration is offered: no refusal to check");
        return Ok(Outcome::Pass);
    };
    let wgsl = shader(unsupported);
    // SAFETY: `open`'s device; a module made by mistake is destroyed.
    match unsafe {
        open.device
            .create_shader_module(&ShaderModuleDescriptor::wgsl(&wgsl))
    } {
        Err(ShaderError::UnsupportedCooperativeMatrix { .. }) => {}
        Ok(module) => {
            // SAFETY: unused.
            unsafe { open.device.destroy_shader_module(module) };
            return Err(
                format!("{unsupported:?}, which the device does not offer, was made").into(),
            );
        }
        Err(e) => return Err(format!("{unsupported:?} refused with {e}").into()),
    }
    ctx.note(format!("{unsupported:?} refused"));
    Ok(Outcome::Pass)
}

/// Runs the shader for `config` on `device` and returns D's bytes.
///
/// # Safety
/// `device` and `queue` are live and belong together.
unsafe fn run<A: Api>(
    device: &A::Device,
    queue: &A::Queue,
    config: Square,
) -> Result<Vec<u8>, Failure> {
    let n = config.n as usize;
    let [a, b, c, _] = matrices(n);
    let bytes = |t, m: &[u32]| -> Vec<u8> { m.iter().flat_map(|&v| encode(t, v)).collect() };
    let parts = [
        bytes(config.ab, &a),
        bytes(config.ab, &b),
        bytes(config.cr, &c),
    ];
    // Each part at a multiple of 256 bytes (every storage offset alignment).
    let stride = parts
        .iter()
        .map(|p| p.len().next_multiple_of(256))
        .max()
        .unwrap_or(256);
    let mut input = vec![0u8; stride * parts.len()];
    for (i, p) in parts.iter().enumerate() {
        input[i * stride..i * stride + p.len()].copy_from_slice(p);
    }
    let out_size = (n * n * width(config.cr)) as u64;
    let mut made = Made::<A>::default();
    // SAFETY: forwarded contract; `made` destroys what was made, in order.
    let result =
        unsafe { record_and_read(device, queue, &config, &input, stride, out_size, &mut made) };
    // SAFETY: the submission was waited on (or nothing was submitted).
    unsafe { made.destroy(device) };
    result
}

/// What [`run`] made, destroyed in reverse order whatever happened.
struct Made<A: Api> {
    buffers: Vec<A::Buffer>,
    module: Option<A::ShaderModule>,
    group_layout: Option<A::BindGroupLayout>,
    layout: Option<A::PipelineLayout>,
    pipeline: Option<A::ComputePipeline>,
    group: Option<A::BindGroup>,
    encoder: Option<A::CommandEncoder>,
    fence: Option<A::Fence>,
}

impl<A: Api> Default for Made<A> {
    fn default() -> Self {
        Self {
            buffers: Vec::new(),
            module: None,
            group_layout: None,
            layout: None,
            pipeline: None,
            group: None,
            encoder: None,
            fence: None,
        }
    }
}

impl<A: Api> Made<A> {
    /// # Safety
    /// Everything came from `device`; no GPU work uses it.
    unsafe fn destroy(self, device: &A::Device) {
        // SAFETY: forwarded contract.
        unsafe {
            if let Some(f) = self.fence {
                device.destroy_fence(f);
            }
            if let Some(e) = self.encoder {
                device.destroy_command_encoder(e);
            }
            if let Some(g) = self.group {
                device.destroy_bind_group(g);
            }
            if let Some(p) = self.pipeline {
                device.destroy_compute_pipeline(p);
            }
            if let Some(l) = self.layout {
                device.destroy_pipeline_layout(l);
            }
            if let Some(l) = self.group_layout {
                device.destroy_bind_group_layout(l);
            }
            if let Some(m) = self.module {
                device.destroy_shader_module(m);
            }
            for b in self.buffers {
                device.destroy_buffer(b);
            }
        }
    }
}

/// Makes the objects into `made`, dispatches once, waits and reads D.
///
/// # Safety
/// As for [`run`]; the caller destroys `made` after this returns.
#[allow(clippy::too_many_arguments)]
unsafe fn record_and_read<A: Api>(
    device: &A::Device,
    queue: &A::Queue,
    config: &Square,
    input: &[u8],
    stride: usize,
    out_size: u64,
    made: &mut Made<A>,
) -> Result<Vec<u8>, Failure> {
    use wgt::BufferUsages as U;
    // SAFETY: every object below comes from `device` and goes into `made`.
    unsafe {
        let buffer = |size, usage, memory| {
            device.create_buffer(&BufferDescriptor {
                label: Some("conformance cooperative matrix"),
                size,
                usage,
                memory,
            })
        };
        made.buffers.push(buffer(
            input.len() as u64,
            U::STORAGE | U::MAP_WRITE,
            Memory::Upload,
        )?);
        made.buffers.push(buffer(
            out_size,
            U::STORAGE | U::MAP_READ,
            Memory::Readback,
        )?);
        let (inp, out) = (&made.buffers[0], &made.buffers[1]);
        let map = device.map_buffer(inp)?;
        std::ptr::copy_nonoverlapping(input.as_ptr(), map.ptr.as_ptr(), input.len());

        let module =
            device.create_shader_module(&ShaderModuleDescriptor::wgsl(&shader(*config)))?;
        let module = made.module.insert(module);
        let cs = wgt::ShaderStages::COMPUTE;
        let entries = [
            entry(0, cs, storage(true, false)),
            entry(1, cs, storage(true, false)),
            entry(2, cs, storage(true, false)),
            entry(3, cs, storage(false, false)),
        ];
        let group_layout = made.group_layout.insert(device.create_bind_group_layout(
            &BindGroupLayoutDescriptor {
                entries: &entries,
                ..Default::default()
            },
        )?);
        let layout =
            made.layout
                .insert(device.create_pipeline_layout(&PipelineLayoutDescriptor {
                    label: None,
                    bind_group_layouts: &[group_layout],
                    push_constant_ranges: &[],
                })?);
        let pipeline =
            made.pipeline
                .insert(device.create_compute_pipeline(&ComputePipelineDescriptor {
                    label: Some("cooperative matrix"),
                    layout,
                    stage: ProgrammableStage {
                        module,
                        entry_point: "main",
                        constants: &[],
                    },
                    cache: None,
                })?);
        let range = |buffer, offset: usize, size: u64| {
            BindingResource::Buffer(BufferBinding {
                buffer,
                offset: offset as u64,
                size: std::num::NonZeroU64::new(size),
            })
        };
        let s = stride as u64;
        let group_entries = [
            BindGroupEntry {
                binding: 0,
                resource: range(inp, 0, s),
            },
            BindGroupEntry {
                binding: 1,
                resource: range(inp, stride, s),
            },
            BindGroupEntry {
                binding: 2,
                resource: range(inp, 2 * stride, s),
            },
            BindGroupEntry {
                binding: 3,
                resource: range(out, 0, out_size),
            },
        ];
        let group = made
            .group
            .insert(device.create_bind_group(&BindGroupDescriptor {
                label: None,
                layout: group_layout,
                entries: &group_entries,
            })?);
        let encoder =
            made.encoder
                .insert(device.create_command_encoder(&CommandEncoderDescriptor {
                    label: Some("cooperative matrix"),
                })?);
        encoder.begin_encoding(None)?;
        encoder.transition_buffers(&[
            buffer_barrier(inp, BufferUses::empty(), BufferUses::STORAGE_READ_ONLY),
            buffer_barrier(out, BufferUses::empty(), BufferUses::STORAGE_READ_WRITE),
        ]);
        encoder.begin_compute_pass(&ComputePassDescriptor::default());
        encoder.set_compute_pipeline(pipeline);
        encoder.set_bind_group(layout, 0, group, &[]);
        encoder.dispatch([1, 1, 1]);
        encoder.end_compute_pass();
        encoder.transition_buffers(&[buffer_barrier(
            out,
            BufferUses::STORAGE_READ_WRITE,
            BufferUses::MAP_READ,
        )]);
        let commands = encoder.end_encoding()?;
        let fence = made.fence.insert(device.create_fence()?);
        let done = queue
            .submit(&[&commands], &[], fence, 1)
            .and_then(|()| device.wait(fence, 1, None));
        encoder.reset_all([commands]);
        check!(
            done?,
            "an unbounded wait returned without the fence reaching 1"
        );
        let map = device.map_buffer(out)?;
        Ok(std::slice::from_raw_parts(map.ptr.as_ptr(), map.size as usize).to_vec())
    }
}
