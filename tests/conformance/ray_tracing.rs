//! Acceleration structures, compaction and ray tracing, on every
//! configuration that has acceleration structures (noop included: sizes,
//! builds, compaction bookkeeping and the cheap checks; tracing needs a
//! ray query or a ray-tracing pipeline, and is skipped with a reason where
//! the adapter has neither). Each test opens its own device with the
//! adapter's tracing features and checks that its live counts return to
//! their start; the harness checks validation.

use keel_hal::compaction;
use keel_hal::wgt;
use keel_hal::{
    AccelerationStructureBuildMode, AccelerationStructureCopy, AccelerationStructureEntries,
    AccelerationStructureError, AccelerationStructureInstances, AccelerationStructureKind,
    AccelerationStructureUses, Api, Backend, BufferUses, BuildAccelerationStructureDescriptor,
    CommandEncoder, CommandEncoderDescriptor, Device, Memory,
};

use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::helpers::buffer_barrier;
use crate::ray_tracing_scene::{
    as_barrier, build_blas, check_picture, expected, f32_bytes, pixel_at, rgb, trace, triangles,
    Rt, Tlas, Way, MISS, PLACEMENTS, SIDE, TRIANGLE,
};

ray_tracing_conformance_tests!(
    compacted_sizes_never_exceed_build_sizes,
    compacted_copy_traces_the_same_picture,
    thousand_compactable_blases_share_a_few_query_pools,
    ray_query_and_pipeline_see_the_same_picture,
    tlas_refit_moves_the_hits,
    cheap_checks_return_typed_errors,
    structure_misuse_is_one_error_everywhere,
);

use wgt::AccelerationStructureFlags as Flags;
use AccelerationStructureUses as Uses;

/// Flags of every compactable BLAS here.
const COMPACTABLE: Flags = Flags::PREFER_FAST_TRACE.union(Flags::ALLOW_COMPACTION);

/// Skips where the adapter has no acceleration structures.
macro_rules! open_rt {
    ($ctx:expr) => {
        match Rt::open($ctx)? {
            Some(rt) => rt,
            None => return skip("no ACCELERATION_STRUCTURE"),
        }
    };
}

/// A grid of `n` × `n` quads (2 triangles each) in the z = 0 plane.
fn grid(n: u32) -> Vec<[f32; 3]> {
    let mut out = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let (x, y) = (i as f32, j as f32);
            let quad = [[x, y], [x + 1.0, y], [x, y + 1.0], [x + 1.0, y + 1.0]];
            for k in [0, 1, 2, 2, 1, 3] {
                out.push([quad[k][0], quad[k][1], 0.0]);
            }
        }
    }
    out
}

/// Compaction of BLASes of 1, 2, 32 and 512 triangles through the helper:
/// each compacted size is at most the size the build asked for (equal on
/// noop, which does not compact), and the report adds up.
fn compacted_sizes_never_exceed_build_sizes<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let rt = open_rt!(ctx);
    let meshes = [TRIANGLE.to_vec(), grid(1), grid(4), grid(16)];
    let mut blases = Vec::new();
    for mesh in &meshes {
        // SAFETY: destroyed below.
        blases.push(unsafe { build_blas(&rt, mesh, COMPACTABLE) }?);
    }
    let desc = CommandEncoderDescriptor::default();
    // SAFETY: everything is destroyed below, after the helper's waits.
    let (report, encoder, fence) = unsafe {
        let mut encoder = rt.device.create_command_encoder(&desc)?;
        let fence = rt.device.create_fence()?;
        let refs: Vec<&A::AccelerationStructure> = blases.iter().collect();
        let mut next = 1;
        let report = compaction::compact::<A>(
            &rt.device,
            &rt.queue,
            &mut encoder,
            &fence,
            &mut next,
            &refs,
        );
        (report, encoder, fence)
    };
    let result = report.map_err(Failure::from).and_then(|report| {
        let mut lines = Vec::new();
        for (i, (&before, &after)) in report
            .sizes_before
            .iter()
            .zip(&report.sizes_after)
            .enumerate()
        {
            lines.push(format!(
                "{} triangles: {before} → {after} bytes",
                meshes[i].len() / 3
            ));
            check!(
                after > 0 && after <= before,
                "BLAS {i}: compacted {after} > {before}"
            );
            if ctx.backend == Backend::Noop {
                check_eq!(after, before, "noop compacted size of BLAS {i}");
            }
            // SAFETY: made by the helper on this device.
            let size = unsafe {
                rt.device
                    .get_acceleration_structure_size(&report.compacted[i])
            };
            check_eq!(size, after, "compacted structure {i}'s size");
        }
        check_eq!(
            report.bytes_before,
            report.sizes_before.iter().sum::<u64>(),
            "bytes before"
        );
        check_eq!(
            report.bytes_after,
            report.sizes_after.iter().sum::<u64>(),
            "bytes after"
        );
        ctx.note(lines.join("; "));
        // SAFETY: the helper waited for the GPU.
        unsafe {
            for s in report.compacted {
                rt.device.destroy_acceleration_structure(s);
            }
        }
        Ok(())
    });
    // SAFETY: the GPU is done with everything (the helper waited).
    unsafe {
        rt.device.destroy_command_encoder(encoder);
        rt.device.destroy_fence(fence);
        for s in blases {
            rt.device.destroy_acceleration_structure(s);
        }
    }
    result?;
    rt.finish()?;
    Ok(Outcome::Pass)
}

/// A BLAS and its compacted copy, each under a TLAS of the same three
/// instances, trace the same picture (the expected one).
fn compacted_copy_traces_the_same_picture<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let rt = open_rt!(ctx);
    let Some(&way) = rt.ways().first() else {
        rt.finish()?;
        return skip("no ray query or ray-tracing pipeline to trace with");
    };
    // SAFETY: everything is destroyed before returning, after the waits.
    unsafe {
        let original = build_blas(&rt, &TRIANGLE, COMPACTABLE)?;
        let mut encoder = rt
            .device
            .create_command_encoder(&CommandEncoderDescriptor::default())?;
        let fence = rt.device.create_fence()?;
        let mut next = 1;
        let report = compaction::compact::<A>(
            &rt.device,
            &rt.queue,
            &mut encoder,
            &fence,
            &mut next,
            &[&original],
        )?;
        rt.device.destroy_command_encoder(encoder);
        rt.device.destroy_fence(fence);
        let compacted = report
            .compacted
            .into_iter()
            .next()
            .ok_or("no compacted BLAS")?;
        // The original is in COPY_SRC after the size read; the copy in
        // BUILD_INPUT | SHADER_INPUT.
        let before = Tlas::build(&rt, &original, Uses::COPY_SRC, &PLACEMENTS)?;
        let after = Tlas::build(&rt, &compacted, Uses::BUILD_INPUT, &PLACEMENTS)?;
        let first = trace(&rt, way, &before.tlas)?;
        before.destroy(&rt);
        rt.device.destroy_acceleration_structure(original);
        let second = trace(&rt, way, &after.tlas)?;
        after.destroy(&rt);
        rt.device.destroy_acceleration_structure(compacted);
        check_picture("original BLAS", &PLACEMENTS, &first)?;
        let same = first.iter().zip(&second).filter(|(a, b)| a == b).count();
        check_eq!(
            same,
            first.len(),
            "pixels equal between original and compacted BLAS"
        );
        ctx.note(format!(
            "{way:?}: BLAS {} → {} bytes, the same {SIDE}×{SIDE} picture",
            report.bytes_before, report.bytes_after
        ));
    }
    rt.finish()?;
    Ok(Outcome::Pass)
}

/// 1,000 compactable BLASes, built and their sizes read in batches of 256
/// with every batch's command buffer kept (so its query slots stay taken),
/// then compacted: at most ⌈1000 / 512⌉ + 1 compaction query pools live at
/// any time (noop: none), and destroying everything and resetting the
/// encoder's command buffers brings the count back to its start.
fn thousand_compactable_blases_share_a_few_query_pools<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::BufferUsages as U;
    const COUNT: usize = 1000;
    const BATCH: usize = 256;
    /// The largest scratch alignment a Vulkan driver may ask (noop's too).
    const SCRATCH_ALIGN: u64 = 256;
    let rt = open_rt!(ctx);
    let start = rt.device.live_counts().compaction_query_pools;
    let mesh = grid(2);
    let count = mesh.len() as u32;
    let sizes = rt.sizes(
        &AccelerationStructureEntries::Triangles(&triangles::<A::Buffer>(None, count)),
        COMPACTABLE,
    )?;
    let stride = sizes.build_scratch_size.div_ceil(SCRATCH_ALIGN) * SCRATCH_ALIGN;
    let bound = COUNT.div_ceil(512) as isize + 1;
    let mut most = 0;
    // SAFETY: everything is destroyed below, after the waits; kept command
    // buffers are reset only once everything they used is done.
    unsafe {
        let bytes = f32_bytes(mesh.iter().flatten().copied());
        let usage = U::BLAS_INPUT | U::MAP_WRITE;
        let vertices = rt.buffer(bytes.len() as u64, usage, Memory::Upload, &bytes)?;
        let scratch = rt.buffer(stride * BATCH as u64, U::STORAGE, Memory::Device, &[])?;
        let usage = U::COPY_DST | U::MAP_READ | U::QUERY_RESOLVE;
        let readback = rt.buffer(8 * COUNT as u64, usage, Memory::Readback, &[])?;
        let mut blases = Vec::with_capacity(COUNT);
        for _ in 0..COUNT {
            blases.push(rt.structure(
                AccelerationStructureKind::BottomLevel,
                sizes.acceleration_structure_size,
            )?);
        }
        let geometry = triangles(Some(&vertices), count);
        let entries = AccelerationStructureEntries::Triangles(&geometry);
        let mut encoder = rt
            .device
            .create_command_encoder(&CommandEncoderDescriptor::default())?;
        let mut kept = Vec::new();
        for (b, chunk) in blases.chunks(BATCH).enumerate() {
            let descs: Vec<_> = chunk
                .iter()
                .enumerate()
                .map(|(i, blas)| BuildAccelerationStructureDescriptor {
                    entries: &entries,
                    mode: AccelerationStructureBuildMode::Build,
                    flags: COMPACTABLE,
                    source_acceleration_structure: None,
                    destination_acceleration_structure: blas,
                    scratch_buffer: &scratch,
                    scratch_buffer_offset: i as u64 * stride,
                })
                .collect();
            let refs: Vec<_> = chunk.iter().collect();
            let cb = rt.run_on(&mut encoder, true, |e| {
                let input = if b == 0 {
                    BufferUses::empty()
                } else {
                    BufferUses::ACCELERATION_STRUCTURE_INPUT
                };
                let sizes = if b == 0 {
                    BufferUses::empty()
                } else {
                    BufferUses::COPY_DST
                };
                e.transition_buffers(&[
                    buffer_barrier(&vertices, input, BufferUses::ACCELERATION_STRUCTURE_INPUT),
                    buffer_barrier(&readback, sizes, BufferUses::COPY_DST),
                ]);
                e.build_acceleration_structures(&descs)?;
                e.read_acceleration_structure_compacted_sizes(
                    &refs,
                    &readback,
                    (b * BATCH * 8) as u64,
                )?;
                Ok(())
            })?;
            kept.extend(cb);
            most = most.max(rt.device.live_counts().compaction_query_pools - start);
        }
        check!(
            most <= bound,
            "{most} compaction query pools for {COUNT} BLASes (bound {bound})"
        );
        if ctx.backend == Backend::Noop {
            check_eq!(most, 0, "noop compaction query pools");
        } else {
            check!(most >= 1, "no compaction query pool was used");
        }

        let compacted_sizes: Vec<u64> = rt
            .read(&readback, 8 * COUNT)?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        let mut compacted = Vec::with_capacity(COUNT);
        for &size in &compacted_sizes {
            check!(
                size > 0 && size <= sizes.acceleration_structure_size,
                "compacted size {size} (built {})",
                sizes.acceleration_structure_size
            );
            compacted.push(rt.structure(AccelerationStructureKind::BottomLevel, size)?);
        }
        let cb = rt.run_on(&mut encoder, true, |e| {
            let targets: Vec<_> = compacted.iter().collect();
            e.place_acceleration_structure_barrier(as_barrier(
                &targets,
                Uses::empty(),
                Uses::BUILD_OUTPUT,
            ));
            for (src, dst) in blases.iter().zip(&compacted) {
                e.copy_acceleration_structure(src, dst, AccelerationStructureCopy::Compact)?;
            }
            Ok(())
        })?;
        kept.extend(cb);
        most = most.max(rt.device.live_counts().compaction_query_pools - start);
        let before = sizes.acceleration_structure_size * COUNT as u64;
        let after: u64 = compacted_sizes.iter().sum();
        ctx.note(format!(
            "{COUNT} compactable BLASes in batches of {BATCH}: at most {most} compaction query \
             pool(s) (bound {bound}); {before} → {after} bytes"
        ));
        for s in blases.into_iter().chain(compacted) {
            rt.device.destroy_acceleration_structure(s);
        }
        encoder.reset_all(kept);
        check_eq!(
            rt.device.live_counts().compaction_query_pools,
            start,
            "compaction query pools after destroy + reset_all"
        );
        rt.device.destroy_command_encoder(encoder);
        for b in [vertices, scratch, readback] {
            rt.device.destroy_buffer(b);
        }
    }
    rt.finish()?;
    Ok(Outcome::Pass)
}

/// Every way the adapter traces draws the expected picture (hit colours
/// inside the instances, the miss colour outside, each instance where its
/// transform puts it), and where there are two ways they agree.
fn ray_query_and_pipeline_see_the_same_picture<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let rt = open_rt!(ctx);
    let ways = rt.ways();
    if ways.is_empty() {
        rt.finish()?;
        return skip("no ray query or ray-tracing pipeline to trace with");
    }
    let mut pictures = Vec::new();
    // SAFETY: everything is destroyed before returning, after the waits.
    unsafe {
        // Vertex return reads the BLAS's vertices: it must allow that.
        let flags = if ways.contains(&Way::VertexReturn) {
            Flags::PREFER_FAST_TRACE | Flags::ALLOW_RAY_HIT_VERTEX_RETURN
        } else {
            Flags::PREFER_FAST_TRACE
        };
        let blas = build_blas(&rt, &TRIANGLE, flags)?;
        let tlas = Tlas::build(&rt, &blas, Uses::BUILD_OUTPUT, &PLACEMENTS)?;
        for &way in &ways {
            pictures.push((way, trace(&rt, way, &tlas.tlas)?));
        }
        tlas.destroy(&rt);
        rt.device.destroy_acceleration_structure(blas);
    }
    for (way, picture) in &pictures {
        let judged = check_picture(&format!("{way:?}"), &PLACEMENTS, picture)?;
        // Known points: each instance's centroid is grey-ish (all weights
        // 1/3) and a point near each corner takes that corner's colour;
        // the image corners miss.
        for (i, placement) in PLACEMENTS.iter().enumerate() {
            let centroid = [0, 1].map(|k| TRIANGLE.iter().map(|c| c[k]).sum::<f32>() / 3.0);
            for (corner, channel) in TRIANGLE.iter().zip(0..) {
                let near = [0, 1].map(|k| centroid[k] + 0.8 * (corner[k] - centroid[k]));
                let (x, y) = pixel_at(placement.apply(near));
                let got = rgb(picture[(y * SIDE + x) as usize]);
                let top = (0..3).max_by_key(|&c| got[c]).unwrap_or(0);
                check_eq!(
                    top,
                    channel,
                    "{way:?}: instance {i} near corner {channel} at ({x}, {y}) is {got:?}"
                );
            }
            let (x, y) = pixel_at(placement.apply(centroid));
            let got = rgb(picture[(y * SIDE + x) as usize]);
            check!(
                got.iter().all(|&c| (60..=110).contains(&c)),
                "{way:?}: instance {i}'s centroid at ({x}, {y}) is {got:?}"
            );
        }
        let miss = MISS.map(|c| (c * 255.0).round() as u8);
        for (x, y) in [(0, 0), (SIDE - 1, 0), (0, SIDE - 1), (SIDE - 1, SIDE - 1)] {
            let got = rgb(picture[(y * SIDE + x) as usize]);
            let close = got.iter().zip(miss).all(|(&g, m)| g.abs_diff(m) <= 1);
            check!(
                close,
                "{way:?}: corner ({x}, {y}) is {got:?}, not the miss colour {miss:?}"
            );
        }
        ctx.note(format!(
            "{way:?}: {judged} of {} pixels judged, all as expected",
            SIDE * SIDE
        ));
    }
    // Every way against the first (ray query where the adapter has it).
    if let [(first, a), rest @ ..] = &pictures[..] {
        for (way, b) in rest {
            let differ = a
                .iter()
                .zip(b)
                .filter(|(p, q)| {
                    rgb(**p)
                        .iter()
                        .zip(rgb(**q))
                        .any(|(x, y)| x.abs_diff(y) > 2)
                })
                .count();
            check_eq!(
                differ,
                0,
                "pixels where {first:?} and {way:?} differ by more than 2/255"
            );
            ctx.note(format!("{first:?} and {way:?} agree"));
        }
        if rest.is_empty() {
            ctx.note("one way to trace only: no comparison");
        }
    }
    rt.finish()?;
    Ok(Outcome::Pass)
}

/// A TLAS built with `ALLOW_UPDATE`, refitted after its first instance
/// moved: the hits follow the instance (its old place misses, its new one
/// hits). On configurations that cannot trace the refit is still recorded
/// and run, then the test skips.
fn tlas_refit_moves_the_hits<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let rt = open_rt!(ctx);
    let way = rt.ways().first().copied();
    let mut moved = PLACEMENTS;
    moved[0].offset = [-0.7, -0.55];
    let old = pixel_at(PLACEMENTS[0].offset);
    let new = pixel_at(moved[0].offset);
    // SAFETY: everything is destroyed before returning, after the waits.
    unsafe {
        let blas = build_blas(&rt, &TRIANGLE, Flags::PREFER_FAST_TRACE)?;
        let tlas = Tlas::build(&rt, &blas, Uses::BUILD_OUTPUT, &PLACEMENTS)?;
        let first = way.map(|way| trace(&rt, way, &tlas.tlas)).transpose()?;
        tlas.refit(&rt, &blas, &moved)?;
        let second = way.map(|way| trace(&rt, way, &tlas.tlas)).transpose()?;
        tlas.destroy(&rt);
        rt.device.destroy_acceleration_structure(blas);
        if let (Some(way), Some(first), Some(second)) = (way, first, second) {
            check_picture(&format!("{way:?} before the refit"), &PLACEMENTS, &first)?;
            check_picture(&format!("{way:?} after the refit"), &moved, &second)?;
            let at = |img: &[u32], (x, y): (u32, u32)| rgb(img[(y * SIDE + x) as usize]);
            let miss = MISS.map(|c| (c * 255.0).round() as u8);
            check!(
                at(&first, old) != miss,
                "before: no hit at the old place {old:?}"
            );
            check_eq!(at(&first, new), miss, "before: the new place {new:?}");
            check_eq!(at(&second, old), miss, "after: the old place {old:?}");
            check!(
                at(&second, new) != miss,
                "after: no hit at the new place {new:?}"
            );
            let changed = first.iter().zip(&second).filter(|(a, b)| a != b).count();
            ctx.note(format!("{way:?}: the refit changed {changed} pixels"));
        }
    }
    rt.finish()?;
    match way {
        Some(_) => Ok(Outcome::Pass),
        None => skip("refit built and updated, but no ray query or pipeline to trace with"),
    }
}

/// A build into a structure smaller than the size query said fails with
/// `TooSmall`; compacting (or reading the compacted size of) a structure
/// built without `ALLOW_COMPACTION` fails with `MissingFlag`. Nothing is
/// recorded by the failing calls, and the valid build runs.
fn cheap_checks_return_typed_errors<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::BufferUsages as U;
    let rt = open_rt!(ctx);
    let flags = Flags::PREFER_FAST_TRACE;
    let sizes = rt.sizes(
        &AccelerationStructureEntries::Triangles(&triangles::<A::Buffer>(None, 3)),
        flags,
    )?;
    let size = sizes.acceleration_structure_size;
    let mut errors = Vec::new();
    // SAFETY: everything is destroyed before returning, after the wait.
    unsafe {
        let bytes = f32_bytes(TRIANGLE.into_iter().flatten());
        let usage = U::BLAS_INPUT | U::MAP_WRITE;
        let vertices = rt.buffer(bytes.len() as u64, usage, Memory::Upload, &bytes)?;
        let scratch = rt.buffer(sizes.build_scratch_size, U::STORAGE, Memory::Device, &[])?;
        let readback = rt.buffer(8, U::COPY_DST | U::MAP_READ, Memory::Readback, &[])?;
        let kind = AccelerationStructureKind::BottomLevel;
        let small = rt.structure(kind, (size / 2).max(1))?;
        let plain = rt.structure(kind, size)?;
        let target = rt.structure(kind, size)?;
        let geometry = triangles(Some(&vertices), 3);
        let entries = AccelerationStructureEntries::Triangles(&geometry);
        let build = |dst| BuildAccelerationStructureDescriptor {
            entries: &entries,
            mode: AccelerationStructureBuildMode::Build,
            flags,
            source_acceleration_structure: None,
            destination_acceleration_structure: dst,
            scratch_buffer: &scratch,
            scratch_buffer_offset: 0,
        };
        let ran = rt.run(|e| {
            e.transition_buffers(&[
                buffer_barrier(
                    &vertices,
                    BufferUses::empty(),
                    BufferUses::ACCELERATION_STRUCTURE_INPUT,
                ),
                buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
            ]);
            errors.push(e.build_acceleration_structures(&[build(&small)]));
            e.build_acceleration_structures(&[build(&plain)])?;
            e.place_acceleration_structure_barrier(as_barrier(
                &[&plain],
                Uses::BUILD_OUTPUT,
                Uses::COPY_SRC,
            ));
            errors.push(e.copy_acceleration_structure(
                &plain,
                &target,
                AccelerationStructureCopy::Compact,
            ));
            errors.push(e.read_acceleration_structure_compacted_sizes(&[&plain], &readback, 0));
            Ok(())
        });
        for s in [small, plain, target] {
            rt.device.destroy_acceleration_structure(s);
        }
        for b in [vertices, scratch, readback] {
            rt.device.destroy_buffer(b);
        }
        ran?;
    }
    let small = (size / 2).max(1);
    let too_small = matches!(
        errors[0],
        Err(AccelerationStructureError::TooSmall { required, size: s }) if required == size && s == small
    );
    check!(
        too_small,
        "build into {small} of {size} bytes: {:?}",
        errors[0]
    );
    let missing = Err(AccelerationStructureError::MissingFlag("ALLOW_COMPACTION"));
    check_eq!(
        errors[1],
        missing,
        "compacting copy without ALLOW_COMPACTION"
    );
    check_eq!(
        errors[2],
        missing,
        "compacted-size read without ALLOW_COMPACTION"
    );
    ctx.note(format!(
        "{:?}",
        errors
            .iter()
            .filter_map(|e| e.as_ref().err())
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    ));
    rt.finish()?;
    Ok(Outcome::Pass)
}

/// Each misuse of builds, copies and compacted-size reads is one error,
/// the same on noop and on Vulkan (the shared checks of
/// `validate/acceleration.rs`, run in one order by both): instance entries
/// into a BLAS, scratch too short, a scratch offset that is not a multiple
/// of the adapter's alignment, an update of a structure built without
/// `ALLOW_UPDATE`, a compacting copy without `ALLOW_COMPACTION` (into a
/// structure that is too small as well: the flag is checked first), a
/// clone into a smaller structure, a compacted-size read of a TLAS, and the
/// second of two builds from the very same entries into a structure too
/// small or with scratch too short (its geometry is checked once, its own
/// destination and scratch are not skipped). Each message names the numbers. The failing calls record nothing; the one
/// valid build runs.
fn structure_misuse_is_one_error_everywhere<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::BufferUsages as U;
    use AccelerationStructureError as E;
    use AccelerationStructureKind::{BottomLevel, TopLevel};
    let rt = open_rt!(ctx);
    let flags = Flags::PREFER_FAST_TRACE;
    let sizes = rt.sizes(
        &AccelerationStructureEntries::Triangles(&triangles::<A::Buffer>(None, 3)),
        flags,
    )?;
    let size = sizes.acceleration_structure_size;
    let required = sizes.build_scratch_size;
    let small_size = (size / 2).max(1);
    // Room for the build after a one-byte offset: only alignment can fail.
    let scratch_len = required + 512;
    let short_len = (required / 2).max(4);
    let mut errors = Vec::new();
    // SAFETY: everything is destroyed before returning, after the wait.
    unsafe {
        let bytes = f32_bytes(TRIANGLE.into_iter().flatten());
        let usage = U::BLAS_INPUT | U::TLAS_INPUT | U::MAP_WRITE;
        let inputs = rt.buffer(bytes.len() as u64, usage, Memory::Upload, &bytes)?;
        let scratch = rt.buffer(scratch_len, U::STORAGE, Memory::Device, &[])?;
        let short = rt.buffer(short_len, U::STORAGE, Memory::Device, &[])?;
        let readback = rt.buffer(8, U::COPY_DST | U::MAP_READ, Memory::Readback, &[])?;
        let plain = rt.structure(BottomLevel, size)?;
        let small = rt.structure(BottomLevel, small_size)?;
        let target = rt.structure(BottomLevel, size)?;
        let tlas = rt.structure(TopLevel, size)?;
        let geometry = triangles(Some(&inputs), 3);
        let entries = AccelerationStructureEntries::Triangles(&geometry);
        let instances = AccelerationStructureEntries::Instances(AccelerationStructureInstances {
            buffer: Some(&inputs),
            offset: 0,
            count: 1,
        });
        let build = |entries, scratch, offset, mode, source| BuildAccelerationStructureDescriptor {
            entries,
            mode,
            flags,
            source_acceleration_structure: source,
            destination_acceleration_structure: &plain,
            scratch_buffer: scratch,
            scratch_buffer_offset: offset,
        };
        use AccelerationStructureBuildMode::{Build, Update};
        let ran = rt.run(|e| {
            e.transition_buffers(&[
                buffer_barrier(
                    &inputs,
                    BufferUses::empty(),
                    BufferUses::ACCELERATION_STRUCTURE_INPUT,
                ),
                buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
            ]);
            errors.push(
                e.build_acceleration_structures(&[build(&instances, &scratch, 0, Build, None)]),
            );
            errors
                .push(e.build_acceleration_structures(&[build(&entries, &short, 0, Build, None)]));
            errors.push(
                e.build_acceleration_structures(&[build(&entries, &scratch, 1, Build, None)]),
            );
            e.build_acceleration_structures(&[build(&entries, &scratch, 0, Build, None)])?;
            e.place_acceleration_structure_barrier(as_barrier(
                &[&plain],
                Uses::BUILD_OUTPUT,
                Uses::BUILD_INPUT | Uses::COPY_SRC,
            ));
            errors.push(e.build_acceleration_structures(&[build(
                &entries,
                &scratch,
                0,
                Update,
                Some(&plain),
            )]));
            errors.push(e.copy_acceleration_structure(
                &plain,
                &small,
                AccelerationStructureCopy::Compact,
            ));
            errors.push(e.copy_acceleration_structure(
                &plain,
                &small,
                AccelerationStructureCopy::Clone,
            ));
            errors.push(e.read_acceleration_structure_compacted_sizes(&[&tlas], &readback, 0));
            // A valid clone, so the valid build is used.
            e.copy_acceleration_structure(&plain, &target, AccelerationStructureCopy::Clone)?;
            // A valid build, but inside a pass.
            e.begin_compute_pass(&Default::default());
            errors.push(
                e.build_acceleration_structures(&[build(&entries, &scratch, 0, Build, None)]),
            );
            e.end_compute_pass();
            // Two builds from the very same entries: the second is still
            // checked for its own destination and scratch.
            let repeat = |dst, scratch| BuildAccelerationStructureDescriptor {
                entries: &entries,
                mode: Build,
                flags,
                source_acceleration_structure: None,
                destination_acceleration_structure: dst,
                scratch_buffer: scratch,
                scratch_buffer_offset: 0,
            };
            errors.push(e.build_acceleration_structures(&[
                build(&entries, &scratch, 0, Build, None),
                repeat(&small, &scratch),
            ]));
            errors.push(e.build_acceleration_structures(&[
                build(&entries, &scratch, 0, Build, None),
                repeat(&target, &short),
            ]));
            Ok(())
        });
        for s in [plain, small, target, tlas] {
            rt.device.destroy_acceleration_structure(s);
        }
        for b in [inputs, scratch, short, readback] {
            rt.device.destroy_buffer(b);
        }
        ran?;
    }
    let [instances_into_blas, too_short, misaligned, update, compact, clone, tlas_read, in_pass, repeat_small, repeat_short] =
        <[Result<(), E>; 10]>::try_from(errors).map_err(|e| format!("{} results", e.len()))?;
    check_eq!(
        repeat_small,
        Err(E::TooSmall {
            required: size,
            size: small_size,
        }),
        "the second of two builds from the same entries, into a smaller structure"
    );
    check_eq!(
        in_pass,
        Err(E::Device(keel_hal::DeviceError::InvalidState(
            "recorded inside a pass"
        ))),
        "a build recorded inside a compute pass"
    );
    check_eq!(
        instances_into_blas,
        Err(E::WrongKind {
            what: "build entries",
            given: TopLevel,
            expected: BottomLevel,
        }),
        "instance entries into a BLAS"
    );
    // The adapter's scratch alignment is the one value the test does not
    // choose (noop: 256; Vulkan: minAccelerationStructureScratchOffsetAlignment).
    let Err(E::Scratch { alignment, .. }) = misaligned else {
        return Err(format!("scratch at offset 1: {misaligned:?}").into());
    };
    check!(
        alignment > 1,
        "a scratch alignment of {alignment} failed offset 1"
    );
    check_eq!(
        too_short,
        Err(E::Scratch {
            offset: 0,
            available: short_len,
            required,
            alignment,
        }),
        "scratch shorter than the build needs"
    );
    check_eq!(
        repeat_short,
        Err(E::Scratch {
            offset: 0,
            available: short_len,
            required,
            alignment,
        }),
        "the second of two builds from the same entries, with short scratch"
    );
    check_eq!(
        misaligned,
        Err(E::Scratch {
            offset: 1,
            available: scratch_len - 1,
            required,
            alignment,
        }),
        "scratch at offset 1"
    );
    check_eq!(
        update,
        Err(E::MissingFlag("ALLOW_UPDATE")),
        "update of a structure built without ALLOW_UPDATE"
    );
    check_eq!(
        compact,
        Err(E::MissingFlag("ALLOW_COMPACTION")),
        "compacting copy without ALLOW_COMPACTION into a smaller structure"
    );
    check_eq!(
        clone,
        Err(E::TooSmall {
            required: size,
            size: small_size,
        }),
        "clone into a smaller structure"
    );
    check_eq!(
        tlas_read,
        Err(E::WrongKind {
            what: "a structure whose compacted size is read",
            given: TopLevel,
            expected: BottomLevel,
        }),
        "compacted-size read of a TLAS"
    );
    // Messages name what was asked and what is allowed.
    let text = |r: &Result<(), E>| {
        r.as_ref()
            .err()
            .map(ToString::to_string)
            .unwrap_or_default()
    };
    let short_text = text(&too_short);
    check!(
        short_text.contains(&format!("{short_len} bytes at offset 0"))
            && short_text.contains(&format!("below the {required} bytes")),
        "{short_text}"
    );
    let misaligned_text = text(&misaligned);
    check!(
        misaligned_text.contains(&format!(
            "offset 1 is not a multiple of the scratch alignment {alignment}"
        )),
        "{misaligned_text}"
    );
    let clone_text = text(&clone);
    check!(
        clone_text.contains(&format!("{small_size} bytes"))
            && clone_text.contains(&format!("{size} bytes needed")),
        "{clone_text}"
    );
    rt.finish()?;
    Ok(Outcome::Pass)
}

/// The expected picture is consistent with itself: every instance's
/// centroid hits (a sanity check of the CPU reference, not of a backend).
#[test]
fn reference_picture_hits_every_centroid() {
    for placement in PLACEMENTS {
        let centroid = [0, 1].map(|k| TRIANGLE.iter().map(|c| c[k]).sum::<f32>() / 3.0);
        let (x, y) = pixel_at(placement.apply(centroid));
        let color = expected(&PLACEMENTS, x, y, 0.0).expect("judged");
        assert_ne!(color, MISS, "centroid of {placement:?}");
    }
}
