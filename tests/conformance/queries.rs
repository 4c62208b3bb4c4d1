//! Query sets: timestamps, occlusion without draws, and the typed errors of
//! query set creation.

use keel_hal::wgt;
use keel_hal::{
    Adapter, Api, BufferCopy, BufferUses, CommandEncoder, ComputePassDescriptor, Device,
    DeviceDescriptor, QuerySetDescriptor, QuerySetError, Queue, MAX_QUERIES,
};

use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::helpers::{
    buffer_barrier, device_buffer, pattern, read_mapped, readback_buffer, submit, upload_buffer,
    SENTINEL,
};

conformance_tests!(
    timestamps_are_ordered_across_a_copy,
    occlusion_query_without_draws_is_zero,
    query_count_out_of_range,
    pipeline_statistics_need_a_feature,
    timestamp_set_needs_the_feature,
    query_indices_past_the_set_are_refused,
);

fn u64_at(bytes: &[u8], offset: usize) -> u64 {
    let mut le = [0; 8];
    le.copy_from_slice(&bytes[offset..offset + 8]);
    u64::from_le_bytes(le)
}

fn query_set_desc(ty: wgt::QueryType, count: u32) -> QuerySetDescriptor<'static> {
    QuerySetDescriptor {
        label: Some("conformance queries"),
        ty,
        count,
    }
}

fn timestamps_are_ordered_across_a_copy<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if !ctx.features.contains(wgt::Features::TIMESTAMP_QUERY) {
        return skip("the adapter lacks TIMESTAMP_QUERY");
    }
    let period = ctx.queue.timestamp_period();
    check!(period > 0.0, "timestamp period {period} ns is not positive");
    const COPY: u64 = 1 << 20;
    // SAFETY: objects come from ctx.device and are destroyed after the wait.
    unsafe {
        let set = ctx
            .device
            .create_query_set(&query_set_desc(wgt::QueryType::Timestamp, 3))?;
        let upload = upload_buffer(ctx, &pattern(COPY as usize, 41))?;
        let target = device_buffer(ctx, COPY)?;
        let readback = readback_buffer(ctx, 24)?;
        let in_passes = ctx
            .features
            .contains(wgt::Features::TIMESTAMP_QUERY_INSIDE_PASSES);
        let got = submit(ctx, |enc| {
            enc.reset_queries(&set, 0..3);
            enc.transition_buffers(&[
                buffer_barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                buffer_barrier(&target, BufferUses::empty(), BufferUses::COPY_DST),
                buffer_barrier(&readback, BufferUses::empty(), BufferUses::QUERY_RESOLVE),
            ]);
            enc.write_timestamp(&set, 0);
            enc.copy_buffer_to_buffer(
                &upload,
                &target,
                &[BufferCopy {
                    src_offset: 0,
                    dst_offset: 0,
                    size: COPY,
                }],
            );
            enc.write_timestamp(&set, 1);
            // With TIMESTAMP_QUERY_INSIDE_PASSES, one inside a compute pass.
            let last = if in_passes {
                enc.begin_compute_pass(&ComputePassDescriptor::default());
                enc.write_timestamp(&set, 2);
                enc.end_compute_pass();
                3
            } else {
                2
            };
            enc.copy_query_results(&set, 0..last, &readback, 0, 8);
            enc.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::QUERY_RESOLVE,
                BufferUses::MAP_READ,
            )]);
        })
        .and_then(|()| read_mapped(ctx, &readback));
        ctx.device.destroy_query_set(set);
        ctx.device.destroy_buffer(upload);
        ctx.device.destroy_buffer(target);
        ctx.device.destroy_buffer(readback);
        let got = got?;
        let (t0, t1) = (u64_at(&got, 0), u64_at(&got, 8));
        let untouched = u64::from_le_bytes([SENTINEL; 8]);
        check!(
            t0 != untouched && t1 != untouched,
            "timestamps not written: {t0:#x}, {t1:#x}"
        );
        check!(
            t0 != 0 || t1 != 0,
            "both timestamps are 0: the counter does not run"
        );
        // `>=`, not `>`: a coarse clock may not tick across a fast copy.
        check!(
            t1 >= t0,
            "timestamp after a 1 MiB copy ({t1}) is before the one before it ({t0})"
        );
        if in_passes {
            let t2 = u64_at(&got, 16);
            check!(
                t2 != untouched && t2 >= t1,
                "the timestamp inside the compute pass ({t2:#x}) is missing or before {t1}"
            );
        }
        ctx.note(format!(
            "1 MiB copy: {:.1} µs",
            (t1 - t0) as f64 * period as f64 / 1000.0
        ));
    }
    Ok(Outcome::Pass)
}

fn occlusion_query_without_draws_is_zero<A: Api>(ctx: &Ctx<A>) -> TestResult {
    // SAFETY: objects come from ctx.device and are destroyed after the wait.
    unsafe {
        let set = ctx
            .device
            .create_query_set(&query_set_desc(wgt::QueryType::Occlusion, 4))?;
        let readback = readback_buffer(ctx, 32)?;
        let got = submit(ctx, |enc| {
            enc.reset_queries(&set, 0..4);
            enc.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::empty(),
                BufferUses::QUERY_RESOLVE,
            )]);
            enc.begin_query(&set, 1);
            enc.end_query(&set, 1);
            enc.begin_query(&set, 2);
            enc.end_query(&set, 2);
            // Queries 1 and 2 land at bytes 8..24; 0..8 and 24..32 stay untouched.
            enc.copy_query_results(&set, 1..3, &readback, 8, 8);
            enc.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::QUERY_RESOLVE,
                BufferUses::MAP_READ,
            )]);
        })
        .and_then(|()| read_mapped(ctx, &readback));
        ctx.device.destroy_query_set(set);
        ctx.device.destroy_buffer(readback);
        let got = got?;
        check_eq!(u64_at(&got, 8), 0, "occlusion query 1 without draws");
        check_eq!(u64_at(&got, 16), 0, "occlusion query 2 without draws");
        check_eq!(got[..8], [SENTINEL; 8], "bytes before the resolve offset");
        check_eq!(got[24..], [SENTINEL; 8], "bytes after the resolved range");
    }
    Ok(Outcome::Pass)
}

/// Creates a query set that must fail with `expected` on `device`; checks nothing was left alive.
fn expect_query_error<A: Api>(
    device: &A::Device,
    desc: &QuerySetDescriptor,
    expected: QuerySetError,
) -> Result<(), Failure> {
    let before = device.live_counts();
    // SAFETY: live device; a set that should not exist is destroyed at once.
    match unsafe { device.create_query_set(desc) } {
        Ok(set) => {
            // SAFETY: never used.
            unsafe { device.destroy_query_set(set) };
            return Err(format!("{desc:?} was created; expected {expected:?}").into());
        }
        Err(e) => check_eq!(e, expected, "create_query_set({desc:?})"),
    }
    check_eq!(
        device.live_counts(),
        before,
        "live objects after the failed create_query_set"
    );
    Ok(())
}

fn query_count_out_of_range<A: Api>(ctx: &Ctx<A>) -> TestResult {
    for count in [0, MAX_QUERIES + 1] {
        let desc = query_set_desc(wgt::QueryType::Occlusion, count);
        expect_query_error::<A>(&ctx.device, &desc, QuerySetError::InvalidCount(count))?;
    }
    // The largest count is accepted.
    // SAFETY: live device; the set is destroyed at once.
    unsafe {
        let set = ctx
            .device
            .create_query_set(&query_set_desc(wgt::QueryType::Occlusion, MAX_QUERIES))?;
        ctx.device.destroy_query_set(set);
    }
    Ok(Outcome::Pass)
}

fn pipeline_statistics_need_a_feature<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let ty =
        wgt::QueryType::PipelineStatistics(wgt::PipelineStatisticsTypes::VERTEX_SHADER_INVOCATIONS);
    // A second device, opened without PIPELINE_STATISTICS_QUERY.
    // SAFETY: the adapter is live; the device is dropped empty.
    let open = unsafe { ctx.adapter.open(&DeviceDescriptor::default()) }?;
    expect_query_error::<A>(
        &open.device,
        &query_set_desc(ty, 4),
        QuerySetError::MissingFeature {
            feature: wgt::Features::PIPELINE_STATISTICS_QUERY,
            enabled: wgt::Features::empty(),
        },
    )?;
    drop(open);
    if ctx
        .features
        .contains(wgt::Features::PIPELINE_STATISTICS_QUERY)
    {
        // With the feature: a set that counts nothing is refused, one that
        // counts something is made.
        let none = wgt::QueryType::PipelineStatistics(wgt::PipelineStatisticsTypes::empty());
        expect_query_error::<A>(
            &ctx.device,
            &query_set_desc(none, 4),
            QuerySetError::NoStatistics,
        )?;
        // SAFETY: live device; the set is destroyed at once.
        unsafe {
            let set = ctx.device.create_query_set(&query_set_desc(ty, 4))?;
            ctx.device.destroy_query_set(set);
        }
    }
    Ok(Outcome::Pass)
}

fn timestamp_set_needs_the_feature<A: Api>(ctx: &Ctx<A>) -> TestResult {
    // A second device, opened without TIMESTAMP_QUERY.
    // SAFETY: the adapter is live; the device is dropped empty.
    let open = unsafe { ctx.adapter.open(&DeviceDescriptor::default()) }?;
    let desc = query_set_desc(wgt::QueryType::Timestamp, 2);
    expect_query_error::<A>(
        &open.device,
        &desc,
        QuerySetError::MissingFeature {
            feature: wgt::Features::TIMESTAMP_QUERY,
            enabled: wgt::Features::empty(),
        },
    )?;
    check_eq!(
        open.device.live_counts(),
        keel_hal::LiveCounts::default(),
        "live objects of the second device"
    );
    drop(open);
    if ctx.features.contains(wgt::Features::TIMESTAMP_QUERY) {
        // The suite's device was opened with the feature: the same set is accepted.
        // SAFETY: live device; the set is destroyed at once.
        unsafe {
            let set = ctx.device.create_query_set(&desc)?;
            ctx.device.destroy_query_set(set);
        }
    }
    Ok(Outcome::Pass)
}

/// `write_timestamp`, `begin_query` and `end_query` with an index past the
/// set are refused and skipped the same way on every backend: one captured
/// refusal each, naming the call, and the recording goes on.
fn query_indices_past_the_set_are_refused<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if !ctx.features.contains(wgt::Features::TIMESTAMP_QUERY) {
        return skip("the adapter lacks TIMESTAMP_QUERY");
    }
    // SAFETY: objects come from ctx.device and are destroyed after the wait;
    // the refused commands are skipped (checked).
    unsafe {
        let timestamps = ctx
            .device
            .create_query_set(&query_set_desc(wgt::QueryType::Timestamp, 2))?;
        let occlusion = match ctx
            .device
            .create_query_set(&query_set_desc(wgt::QueryType::Occlusion, 2))
        {
            Ok(set) => set,
            Err(e) => {
                ctx.device.destroy_query_set(timestamps);
                return Err(e.into());
            }
        };
        let (result, refusals) = keel_hal::refusal::capture(|| {
            submit(ctx, |enc| {
                enc.reset_queries(&timestamps, 0..2);
                enc.write_timestamp(&timestamps, 2);
                enc.begin_query(&occlusion, 7);
                enc.end_query(&occlusion, 7);
                // A query in range still records.
                enc.write_timestamp(&timestamps, 1);
            })
        });
        ctx.device.destroy_query_set(timestamps);
        ctx.device.destroy_query_set(occlusion);
        result?;
        check!(
            refusals.len() == 3,
            "expected three refusals, got {refusals:?}"
        );
        for (refusal, call) in refusals
            .iter()
            .zip(["write_timestamp", "begin_query", "end_query"])
        {
            check!(
                refusal.contains(call) && refusal.contains("outside the set"),
                "{call}: refusal {refusal:?}"
            );
        }
    }
    Ok(Outcome::Pass)
}
