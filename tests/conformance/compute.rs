//! Compute passes: a shader doubles a large storage buffer; dynamic
//! offsets pick the slice a shader writes; push constants and
//! pipeline-overridable constants reach a shader. Each needs shader
//! execution (skipped on noop).

use std::num::NonZeroU64;

use keel_hal::wgt;
use keel_hal::{
    Api, BindGroupDescriptor, BindGroupEntry, BindingResource, BufferBinding, BufferUses,
    CommandEncoder, ComputePassDescriptor, ComputePipelineDescriptor, ConstantProblem, Device,
    Memory, PipelineError, ProgrammableStage, PushConstantRange,
};

use crate::harness::{Ctx, Failure, Outcome, TestResult};
use crate::helpers::{
    buffer_barrier, create_buffer, read_mapped, readback_buffer, submit, upload_buffer,
};
use crate::pipelines::{
    bytes_to_words, entry, needs_shaders, storage, wgsl, words_to_bytes, Layouts,
};

conformance_tests!(
    compute_doubles_a_million_u32,
    dynamic_offsets_select_the_slice,
    push_constants_arrive,
    pipeline_constants_reach_the_shader,
    pipeline_statistics_count_compute_invocations,
    pipeline_caches_round_trip_and_refuse_bad_data,
    packed_8bit_builtins_run,
);

const DOUBLE: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x < arrayLength(&data) {
        data[id.x] = data[id.x] * 2u;
    }
}
";

/// A storage buffer on the device, usable as copy source and destination.
///
/// # Safety
/// `ctx.device` is live; the caller destroys the buffer.
unsafe fn storage_buffer<A: Api>(ctx: &Ctx<A>, size: u64) -> Result<A::Buffer, Failure> {
    let usage =
        wgt::BufferUsages::STORAGE | wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST;
    // SAFETY: forwarded contract.
    unsafe { create_buffer(ctx, size, usage, Memory::Device) }
}

/// A compute pipeline of `module`'s `main` on `layout`.
///
/// # Safety
/// Both came from `ctx.device`; the caller destroys the pipeline.
unsafe fn pipeline<A: Api>(
    ctx: &Ctx<A>,
    module: &A::ShaderModule,
    layout: &A::PipelineLayout,
) -> Result<A::ComputePipeline, Failure> {
    // SAFETY: forwarded contract.
    Ok(unsafe { pipeline_with(ctx, module, layout, &[]) }?)
}

/// As [`pipeline`], with values for the module's overrides; the typed error as it is.
///
/// # Safety
/// As for [`pipeline`].
unsafe fn pipeline_with<A: Api>(
    ctx: &Ctx<A>,
    module: &A::ShaderModule,
    layout: &A::PipelineLayout,
    constants: &[(&str, f64)],
) -> Result<A::ComputePipeline, PipelineError> {
    let desc = ComputePipelineDescriptor {
        label: Some("conformance"),
        layout,
        stage: ProgrammableStage {
            module,
            entry_point: "main",
            constants,
        },
        cache: None,
    };
    // SAFETY: forwarded contract.
    unsafe { ctx.device.create_compute_pipeline(&desc) }
}

/// A bind group with one buffer range at binding 0.
///
/// # Safety
/// Layout and buffer came from `ctx.device`; the caller destroys the group.
unsafe fn group<A: Api>(
    ctx: &Ctx<A>,
    layout: &A::BindGroupLayout,
    buffer: &A::Buffer,
    size: Option<u64>,
) -> Result<A::BindGroup, Failure> {
    let entries = [BindGroupEntry {
        binding: 0,
        resource: BindingResource::Buffer(BufferBinding {
            buffer,
            offset: 0,
            size: size.and_then(NonZeroU64::new),
        }),
    }];
    let desc = BindGroupDescriptor {
        label: Some("conformance"),
        layout,
        entries: &entries,
    };
    // SAFETY: forwarded contract.
    Ok(unsafe { ctx.device.create_bind_group(&desc) }?)
}

/// Runs `pipe` once, one workgroup, over a fresh 16-byte storage buffer
/// bound at group 0 binding 0 of `layouts`, reads the buffer back, and
/// destroys everything given and made (on every path).
///
/// # Safety
/// Everything came from `ctx.device` and is idle.
unsafe fn dispatch_once<A: Api>(
    ctx: &Ctx<A>,
    layouts: Layouts<A>,
    pipe: A::ComputePipeline,
    module: A::ShaderModule,
) -> Result<Vec<u8>, Failure> {
    // SAFETY: forwarded contract; each object is destroyed once, below.
    unsafe {
        let out = (|| {
            let data = storage_buffer(ctx, 16)?;
            let bind = match layouts.group.as_ref().ok_or("no group layout".into()) {
                Ok(layout) => group(ctx, layout, &data, None),
                Err(e) => Err(e),
            };
            let out = bind.and_then(|bind| {
                let out = run_and_read(ctx, &data, 16, BufferUses::empty(), |enc| {
                    enc.set_compute_pipeline(&pipe);
                    enc.set_bind_group(&layouts.pipeline, 0, &bind, &[]);
                    enc.dispatch([1, 1, 1]);
                });
                ctx.device.destroy_bind_group(bind);
                out
            });
            ctx.device.destroy_buffer(data);
            out
        })();
        ctx.device.destroy_compute_pipeline(pipe);
        ctx.device.destroy_shader_module(module);
        layouts.destroy(ctx);
        out
    }
}

/// Runs `dispatch` in a compute pass over `data` (moved from `empty` into
/// storage before and to `COPY_SRC` after) and reads `data` back.
///
/// # Safety
/// Everything came from `ctx.device`, is idle, and `data` is in `empty`.
unsafe fn run_and_read<A: Api>(
    ctx: &Ctx<A>,
    data: &A::Buffer,
    size: u64,
    from: BufferUses,
    dispatch: impl FnOnce(&mut A::CommandEncoder),
) -> Result<Vec<u8>, Failure> {
    // SAFETY: live device.
    let readback = unsafe { readback_buffer(ctx, size) }?;
    // SAFETY: all idle, in the states named.
    let result = unsafe {
        submit(ctx, |enc| {
            enc.transition_buffers(&[
                buffer_barrier(data, from, BufferUses::STORAGE_READ_WRITE),
                buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
            ]);
            enc.begin_compute_pass(&ComputePassDescriptor::default());
            dispatch(enc);
            enc.end_compute_pass();
            enc.transition_buffers(&[buffer_barrier(
                data,
                BufferUses::STORAGE_READ_WRITE,
                BufferUses::COPY_SRC,
            )]);
            enc.copy_buffer_to_buffer(
                data,
                &readback,
                &[keel_hal::BufferCopy {
                    src_offset: 0,
                    dst_offset: 0,
                    size,
                }],
            );
            enc.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::COPY_DST,
                BufferUses::MAP_READ,
            )]);
        })
    }
    // SAFETY: waited on.
    .and_then(|()| unsafe { read_mapped(ctx, &readback) });
    // SAFETY: idle.
    unsafe { ctx.device.destroy_buffer(readback) };
    result
}

/// 1 Mi `u32`s, each doubled by one invocation, all checked.
fn compute_doubles_a_million_u32<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if let Some(skipped) = needs_shaders(ctx) {
        return skipped;
    }
    const COUNT: u32 = 1 << 20;
    let input: Vec<u32> = (0..COUNT)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 1)
        .collect();
    let size = u64::from(COUNT) * 4;
    let entries = [entry(0, wgt::ShaderStages::COMPUTE, storage(false, false))];
    // SAFETY: every object is destroyed below, after the submission's fence wait.
    unsafe {
        let layouts = Layouts::new(ctx, Some(&entries), &[])?;
        let module = wgsl(ctx, DOUBLE)?;
        let pipe = pipeline(ctx, &module, &layouts.pipeline)?;
        let upload = upload_buffer(ctx, &words_to_bytes(&input))?;
        let data = storage_buffer(ctx, size)?;
        let layout = layouts.group.as_ref().ok_or("no group layout")?;
        let bind = group(ctx, layout, &data, None)?;
        // Upload, then double in place.
        let uploaded = submit(ctx, |enc| {
            enc.transition_buffers(&[
                buffer_barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                buffer_barrier(&data, BufferUses::empty(), BufferUses::COPY_DST),
            ]);
            enc.copy_buffer_to_buffer(
                &upload,
                &data,
                &[keel_hal::BufferCopy {
                    src_offset: 0,
                    dst_offset: 0,
                    size,
                }],
            );
        });
        let out = uploaded.and_then(|()| {
            run_and_read(ctx, &data, size, BufferUses::COPY_DST, |enc| {
                enc.set_compute_pipeline(&pipe);
                enc.set_bind_group(&layouts.pipeline, 0, &bind, &[]);
                enc.dispatch([COUNT / 64, 1, 1]);
            })
        });
        ctx.device.destroy_bind_group(bind);
        ctx.device.destroy_buffer(data);
        ctx.device.destroy_buffer(upload);
        ctx.device.destroy_compute_pipeline(pipe);
        ctx.device.destroy_shader_module(module);
        layouts.destroy(ctx);
        let out = bytes_to_words(&out?);
        check_eq!(out.len(), input.len(), "words read back");
        if let Some(i) = (0..input.len()).find(|&i| out[i] != input[i].wrapping_mul(2)) {
            return Err(format!(
                "word {i} is {}, expected {} (2 × {})",
                out[i],
                input[i].wrapping_mul(2),
                input[i]
            )
            .into());
        }
    }
    Ok(Outcome::Pass)
}

const MARK: &str = "
@group(0) @binding(0) var<storage, read_write> slot: array<u32, 4>;

@compute @workgroup_size(1)
fn main() {
    for (var i = 0u; i < 4u; i++) {
        slot[i] = 0xC0FFEE00u + i;
    }
}
";

/// A dynamic storage binding of 16 bytes over two aligned slices: the
/// dynamic offset decides which slice the shader's writes land in.
fn dynamic_offsets_select_the_slice<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if let Some(skipped) = needs_shaders(ctx) {
        return skipped;
    }
    let stride = u64::from(ctx.limits().min_storage_buffer_offset_alignment).max(256);
    let size = stride * 2;
    let entries = [entry(0, wgt::ShaderStages::COMPUTE, storage(false, true))];
    let mark: Vec<u8> = words_to_bytes(&[0xC0FF_EE00, 0xC0FF_EE01, 0xC0FF_EE02, 0xC0FF_EE03]);
    // SAFETY: every object is destroyed below, after the fence waits.
    unsafe {
        let layouts = Layouts::new(ctx, Some(&entries), &[])?;
        let module = wgsl(ctx, MARK)?;
        let pipe = pipeline(ctx, &module, &layouts.pipeline)?;
        let data = storage_buffer(ctx, size)?;
        let layout = layouts.group.as_ref().ok_or("no group layout")?;
        let bind = group(ctx, layout, &data, Some(16))?;
        let run = |offset: u32, from: BufferUses| {
            run_and_read(ctx, &data, size, from, |enc| {
                enc.set_compute_pipeline(&pipe);
                enc.set_bind_group(&layouts.pipeline, 0, &bind, &[offset]);
                enc.dispatch([1, 1, 1]);
            })
        };
        // Zero the buffer, then write through the second slice only.
        let zeroed = submit(ctx, |enc| {
            enc.transition_buffers(&[buffer_barrier(
                &data,
                BufferUses::empty(),
                BufferUses::COPY_DST,
            )]);
            enc.clear_buffer(&data, 0..size);
        });
        let second = zeroed.and_then(|()| run(stride as u32, BufferUses::COPY_DST));
        let first = match &second {
            Ok(_) => run(0, BufferUses::COPY_SRC),
            Err(_) => Err("not run".into()),
        };
        ctx.device.destroy_bind_group(bind);
        ctx.device.destroy_buffer(data);
        ctx.device.destroy_compute_pipeline(pipe);
        ctx.device.destroy_shader_module(module);
        layouts.destroy(ctx);
        let second = second?;
        let s = stride as usize;
        check!(
            second[..16] == [0; 16],
            "offset {stride}: the first slice was written: {:?}",
            &second[..16]
        );
        check!(
            second[s..s + 16] == mark[..],
            "offset {stride}: the second slice holds {:?}",
            &second[s..s + 16]
        );
        let first = first?;
        check!(
            first[..16] == mark[..],
            "offset 0: the first slice holds {:?}",
            &first[..16]
        );
    }
    Ok(Outcome::Pass)
}

const PUSH: &str = "
struct Constants { value: u32, index: u32 }
var<immediate> constants: Constants;
@group(0) @binding(0) var<storage, read_write> out: array<u32, 8>;

@compute @workgroup_size(1)
fn main() {
    out[constants.index] = constants.value;
}
";

/// Two push-constant words (a value and where to put it) reach the shader,
/// on a device opened with `IMMEDIATES` (which every adapter offers).
fn push_constants_arrive<A: Api>(ctx: &Ctx<A>) -> TestResult {
    check!(
        ctx.features.contains(wgt::Features::IMMEDIATES),
        "IMMEDIATES is offered and the test device has it"
    );
    if let Some(skipped) = needs_shaders(ctx) {
        return skipped;
    }
    if ctx.limits().max_immediate_size < 8 {
        return crate::harness::skip("max_immediate_size below 8 bytes");
    }
    let entries = [entry(0, wgt::ShaderStages::COMPUTE, storage(false, false))];
    let ranges = [PushConstantRange {
        stages: wgt::ShaderStages::COMPUTE,
        range: 0..8,
    }];
    // SAFETY: every object is destroyed below, after the fence wait.
    unsafe {
        let layouts = Layouts::new(ctx, Some(&entries), &ranges)?;
        let module = wgsl(ctx, PUSH)?;
        let pipe = pipeline(ctx, &module, &layouts.pipeline)?;
        let data = storage_buffer(ctx, 32)?;
        let layout = layouts.group.as_ref().ok_or("no group layout")?;
        let bind = group(ctx, layout, &data, None)?;
        let zeroed = submit(ctx, |enc| {
            enc.transition_buffers(&[buffer_barrier(
                &data,
                BufferUses::empty(),
                BufferUses::COPY_DST,
            )]);
            enc.clear_buffer(&data, 0..32);
        });
        let out = zeroed.and_then(|()| {
            run_and_read(ctx, &data, 32, BufferUses::COPY_DST, |enc| {
                enc.set_compute_pipeline(&pipe);
                enc.set_bind_group(&layouts.pipeline, 0, &bind, &[]);
                enc.set_push_constants(
                    &layouts.pipeline,
                    wgt::ShaderStages::COMPUTE,
                    0,
                    &[0x1234_5678, 5],
                );
                enc.dispatch([1, 1, 1]);
            })
        });
        ctx.device.destroy_bind_group(bind);
        ctx.device.destroy_buffer(data);
        ctx.device.destroy_compute_pipeline(pipe);
        ctx.device.destroy_shader_module(module);
        layouts.destroy(ctx);
        let out = bytes_to_words(&out?);
        check_eq!(
            out,
            vec![0, 0, 0, 0, 0, 0x1234_5678, 0, 0],
            "words after the push-constant write"
        );
    }
    Ok(Outcome::Pass)
}

/// Values for a stage's overrides.
type Values<'a> = &'a [(&'a str, f64)];

const OVERRIDES: &str = "
override scale: u32 = 1u;
@id(7) override offset: u32;
override flag: bool = false;
@group(0) @binding(0) var<storage, read_write> data: array<u32, 4>;

@compute @workgroup_size(1)
fn main() {
    data[0] = scale;
    data[1] = offset;
    data[2] = select(0u, 1u, flag);
    data[3] = scale * 10u + offset;
}
";

/// Values for `override`s reach the shader (under the name, or the `@id`
/// where there is one); a missing, undeclared, non-finite or out-of-range
/// value, or a value with a fraction for an integer, is a typed
/// `PipelineError::Constant` naming the constant (on every backend; the
/// values are read where shaders run).
fn pipeline_constants_reach_the_shader<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let entries = [entry(0, wgt::ShaderStages::COMPUTE, storage(false, false))];
    // SAFETY: every object is destroyed below, after the fence wait.
    unsafe {
        let layouts = Layouts::new(ctx, Some(&entries), &[])?;
        let module = wgsl(ctx, OVERRIDES)?;
        let refused: [(Values, &str, ConstantProblem); 5] = [
            (&[], "7", ConstantProblem::Missing),
            (
                &[("7", 1.5)],
                "7",
                ConstantProblem::NotAnInteger {
                    value: "1.5".into(),
                    ty: "u32",
                },
            ),
            (&[("offset", 5.0)], "offset", ConstantProblem::NotDeclared),
            (
                &[("7", -1.0)],
                "7",
                ConstantProblem::OutOfRange { ty: "u32" },
            ),
            (
                &[("7", 1.0), ("scale", f64::NAN)],
                "scale",
                ConstantProblem::NotFinite,
            ),
        ];
        for (values, name, problem) in refused {
            match pipeline_with(ctx, &module, &layouts.pipeline, values) {
                Err(PipelineError::Constant {
                    name: got_name,
                    problem: got,
                    ..
                }) => {
                    check_eq!(got_name.as_str(), name, "the constant named for {values:?}");
                    check_eq!(got, problem, "the problem for {values:?}");
                }
                Ok(pipe) => {
                    ctx.device.destroy_compute_pipeline(pipe);
                    return Err(format!("{values:?} was accepted").into());
                }
                Err(e) => return Err(format!("{values:?}: {e}").into()),
            }
        }
        if let Some(skipped) = needs_shaders(ctx) {
            ctx.device.destroy_shader_module(module);
            layouts.destroy(ctx);
            return skipped;
        }
        let values = [("scale", 3.0), ("7", 5.0), ("flag", 1.0)];
        let pipe = pipeline_with(ctx, &module, &layouts.pipeline, &values)?;
        let out = dispatch_once(ctx, layouts, pipe, module);
        check_eq!(
            bytes_to_words(&out?),
            vec![3, 5, 1, 35],
            "the overridden values"
        );
    }
    Ok(Outcome::Pass)
}

/// With `PIPELINE_STATISTICS_QUERY`: a statistics query around a dispatch of
/// 2 × (4×2) invocations counts them (and no vertex invocations), one around
/// nothing counts none; each result is two `u64`s, in the order of the bits.
fn pipeline_statistics_count_compute_invocations<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if !ctx
        .features
        .contains(wgt::Features::PIPELINE_STATISTICS_QUERY)
    {
        return crate::harness::skip("the adapter lacks PIPELINE_STATISTICS_QUERY");
    }
    if let Some(skipped) = needs_shaders(ctx) {
        return skipped;
    }
    const SHADER: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(4, 2)
fn main(@builtin(global_invocation_id) id: vec3<u32>) { data[id.y * 8u + id.x] = 1u; }
";
    let types = wgt::PipelineStatisticsTypes::VERTEX_SHADER_INVOCATIONS
        | wgt::PipelineStatisticsTypes::COMPUTE_SHADER_INVOCATIONS;
    let entries = [entry(0, wgt::ShaderStages::COMPUTE, storage(false, false))];
    // SAFETY: every object is destroyed below, after the fence wait.
    unsafe {
        let set = ctx.device.create_query_set(&keel_hal::QuerySetDescriptor {
            label: Some("statistics"),
            ty: wgt::QueryType::PipelineStatistics(types),
            count: 2,
        })?;
        let layouts = Layouts::new(ctx, Some(&entries), &[])?;
        let module = wgsl(ctx, SHADER)?;
        let pipe = pipeline(ctx, &module, &layouts.pipeline)?;
        let data = storage_buffer(ctx, 64)?;
        let layout = layouts.group.as_ref().ok_or("no group layout")?;
        let bind = group(ctx, layout, &data, None)?;
        let readback = readback_buffer(ctx, 32)?;
        let got = submit(ctx, |enc| {
            enc.reset_queries(&set, 0..2);
            enc.transition_buffers(&[
                buffer_barrier(&data, BufferUses::empty(), BufferUses::STORAGE_READ_WRITE),
                buffer_barrier(&readback, BufferUses::empty(), BufferUses::QUERY_RESOLVE),
            ]);
            enc.begin_compute_pass(&ComputePassDescriptor::default());
            enc.set_compute_pipeline(&pipe);
            enc.set_bind_group(&layouts.pipeline, 0, &bind, &[]);
            enc.begin_query(&set, 0);
            enc.dispatch([2, 1, 1]);
            enc.end_query(&set, 0);
            enc.begin_query(&set, 1);
            enc.end_query(&set, 1);
            enc.end_compute_pass();
            enc.copy_query_results(&set, 0..2, &readback, 0, 16);
            enc.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::QUERY_RESOLVE,
                BufferUses::MAP_READ,
            )]);
        })
        .and_then(|()| read_mapped(ctx, &readback));
        ctx.device.destroy_buffer(readback);
        ctx.device.destroy_bind_group(bind);
        ctx.device.destroy_buffer(data);
        ctx.device.destroy_compute_pipeline(pipe);
        ctx.device.destroy_shader_module(module);
        layouts.destroy(ctx);
        ctx.device.destroy_query_set(set);
        let words: Vec<u64> = got?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        // [vertex, compute] of the dispatch, then of the empty query.
        check_eq!(words.first(), Some(&0), "vertex invocations of a dispatch");
        let compute = words.get(1).copied().unwrap_or_default();
        check!(
            compute >= 16,
            "compute invocations of 2 × (4×2): {compute} (results {words:?})"
        );
        check_eq!(&words[2..], &[0, 0][..], "the query around nothing");
        ctx.note(format!("compute invocations counted: {compute}"));
    }
    Ok(Outcome::Pass)
}

/// With `PIPELINE_CACHE`: an empty cache serves a compute pipeline; its data
/// carries the adapter's validation key and makes a second cache that
/// serves one too; damaged, truncated or foreign data is refused (and
/// starts an empty cache with `fallback`); a device without the feature
/// refuses caches. Nothing is left alive.
fn pipeline_caches_round_trip_and_refuse_bad_data<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use keel_hal::{Adapter, DeviceDescriptor, PipelineCacheDescriptor, PipelineCacheError};
    if !ctx.features.contains(wgt::Features::PIPELINE_CACHE) {
        return crate::harness::skip("the adapter lacks PIPELINE_CACHE");
    }
    let key = ctx
        .adapter
        .pipeline_cache_validation_key()
        .ok_or("PIPELINE_CACHE without a validation key")?;
    let before = ctx.device.live_counts();
    fn desc(data: Option<&[u8]>, fallback: bool) -> PipelineCacheDescriptor<'_> {
        PipelineCacheDescriptor {
            label: Some("conformance cache"),
            data,
            fallback,
        }
    }
    let entries = [entry(0, wgt::ShaderStages::COMPUTE, storage(false, false))];
    // SAFETY: every object is destroyed below; no pipeline creation runs
    // while a cache's data is read.
    unsafe {
        let layouts = Layouts::new(ctx, Some(&entries), &[])?;
        let module = wgsl(ctx, DOUBLE)?;
        let with_cache = |cache: &A::PipelineCache| -> Result<(), Failure> {
            let desc = ComputePipelineDescriptor {
                cache: Some(cache),
                ..ComputePipelineDescriptor::new(&layouts.pipeline, &module, "main")
            };
            let pipeline = ctx.device.create_compute_pipeline(&desc)?;
            ctx.device.destroy_compute_pipeline(pipeline);
            Ok(())
        };
        let empty = ctx.device.create_pipeline_cache(&desc(None, false))?;
        let result = (|| -> Result<(), Failure> {
            with_cache(&empty)?;
            let data = ctx.device.pipeline_cache_get_data(&empty)?;
            check!(
                data.len() >= 40,
                "cache data of {} bytes has no header",
                data.len()
            );
            check_eq!(&data[8..24], &key[..], "the validation key in the data");
            let again = ctx
                .device
                .create_pipeline_cache(&desc(Some(&data), false))?;
            let used = with_cache(&again);
            ctx.device.destroy_pipeline_cache(again);
            used?;
            let mut damaged = data.clone();
            if let Some(last) = damaged.last_mut() {
                *last ^= 0x5a;
            } else {
                return Err("no data".into());
            }
            let mut foreign = data.clone();
            foreign[8] ^= 1;
            let bad: [(&str, &[u8]); 4] = [
                ("damaged", &damaged),
                ("truncated", &data[..data.len() - 1]),
                ("foreign", &foreign),
                ("garbage", b"not a cache at all"),
            ];
            for (what, bytes) in bad {
                match ctx.device.create_pipeline_cache(&desc(Some(bytes), false)) {
                    Err(PipelineCacheError::Invalid(_)) => {}
                    Ok(cache) => {
                        ctx.device.destroy_pipeline_cache(cache);
                        return Err(format!("{what} data was accepted").into());
                    }
                    Err(e) => return Err(format!("{what} data: {e}").into()),
                }
                let fallback = ctx.device.create_pipeline_cache(&desc(Some(bytes), true))?;
                let used = with_cache(&fallback);
                ctx.device.destroy_pipeline_cache(fallback);
                used?;
            }
            Ok(())
        })();
        ctx.device.destroy_pipeline_cache(empty);
        ctx.device.destroy_shader_module(module);
        layouts.destroy(ctx);
        result?;
        check_eq!(ctx.device.live_counts(), before, "live counts");

        // A device without the feature.
        let bare = ctx.adapter.open(&DeviceDescriptor::default())?;
        let refused = bare.device.create_pipeline_cache(&desc(None, false));
        let refused = match refused {
            Ok(cache) => {
                bare.device.destroy_pipeline_cache(cache);
                return Err("a device without PIPELINE_CACHE made a cache".into());
            }
            Err(e) => e,
        };
        check_eq!(
            refused,
            PipelineCacheError::MissingFeature {
                feature: wgt::Features::PIPELINE_CACHE,
                enabled: wgt::Features::empty(),
            },
            "cache on a device without the feature"
        );
    }
    Ok(Outcome::Pass)
}

/// The packed 4×8-bit builtins, which naga writes with 8-bit integers
/// (SPIR-V `Int8`): the device enables `shaderInt8` where it has it (the
/// layer reports VUID-VkShaderModuleCreateInfo-pCode-08740 otherwise) and
/// the values are WGSL's.
const PACKED: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32, 4>;

@compute @workgroup_size(1)
fn main() {
    data[0] = pack4xI8(vec4<i32>(1, -1, 127, -128));
    let u = unpack4xU8(0x04030201u);
    data[1] = u.x + u.y * 10u + u.z * 100u + u.w * 1000u;
    data[2] = pack4xU8Clamp(vec4<u32>(300u, 2u, 3u, 4u));
    let i = unpack4xI8(0x80ff7f01u);
    data[3] = bitcast<u32>(i.x + i.y * 10 + i.z * 100 + i.w * 1000);
}
";

fn packed_8bit_builtins_run<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let entries = [entry(0, wgt::ShaderStages::COMPUTE, storage(false, false))];
    // SAFETY: every object is destroyed below, after the fence wait.
    unsafe {
        let layouts = Layouts::new(ctx, Some(&entries), &[])?;
        let module = wgsl(ctx, PACKED)?;
        let pipe = match pipeline_with(ctx, &module, &layouts.pipeline, &[]) {
            Ok(pipe) => pipe,
            Err(e) => {
                ctx.device.destroy_shader_module(module);
                layouts.destroy(ctx);
                return Err(format!("the pipeline: {e}").into());
            }
        };
        if let Some(skipped) = needs_shaders(ctx) {
            ctx.device.destroy_compute_pipeline(pipe);
            ctx.device.destroy_shader_module(module);
            layouts.destroy(ctx);
            return skipped;
        }
        let out = dispatch_once(ctx, layouts, pipe, module);
        check_eq!(
            bytes_to_words(&out?),
            vec![
                0x807f_ff01,
                4321,
                0x0403_02ff,
                (1 + 1270 - 100 - 128_000i32) as u32
            ],
            "the packed values"
        );
    }
    Ok(Outcome::Pass)
}
