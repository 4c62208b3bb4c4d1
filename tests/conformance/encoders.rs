//! Command encoders: reuse across cycles, discarded recordings, passes
//! left open when a recording ends, debug markers, refusals captured.

use std::any::Any;

use keel_hal::{
    Api, BufferCopy, BufferUses, CommandEncoder, CommandEncoderDescriptor, ComputePassDescriptor,
    Device, Queue,
};

use crate::harness::{Ctx, Failure, Outcome, TestResult};
use crate::helpers::{
    buffer_barrier, compare, pattern, read_mapped, readback_buffer, submit, submit_with,
    upload_buffer, SENTINEL,
};

conformance_tests!(
    encoder_reused_for_three_cycles,
    discarded_recording_leaves_no_trace,
    a_pass_ends_with_its_recording,
    debug_markers_are_accepted,
    refusals_are_captured,
);

fn whole(size: u64, dst_offset: u64) -> [BufferCopy; 1] {
    [BufferCopy {
        src_offset: 0,
        dst_offset,
        size,
    }]
}

fn encoder_reused_for_three_cycles<A: Api>(ctx: &Ctx<A>) -> TestResult {
    const SIZE: u64 = 256;
    // SAFETY: objects come from ctx.device; each cycle's command buffer is
    // waited on before reset_all; everything is destroyed at the end.
    unsafe {
        let readback = readback_buffer(ctx, SIZE)?;
        let mut encoder = ctx
            .device
            .create_command_encoder(&CommandEncoderDescriptor {
                label: Some("reused"),
            })?;
        let fence = ctx.device.create_fence()?;
        let result = (|| -> Result<(), Failure> {
            let mut state = BufferUses::empty();
            for cycle in 1..=3u64 {
                let source = pattern(SIZE as usize, 50 + cycle);
                let upload = upload_buffer(ctx, &source)?;
                encoder.begin_encoding(Some("cycle"))?;
                encoder.transition_buffers(&[
                    buffer_barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                    buffer_barrier(&readback, state, BufferUses::COPY_DST),
                ]);
                encoder.copy_buffer_to_buffer(&upload, &readback, &whole(SIZE, 0));
                encoder.transition_buffers(&[buffer_barrier(
                    &readback,
                    BufferUses::COPY_DST,
                    BufferUses::MAP_READ,
                )]);
                state = BufferUses::MAP_READ;
                let commands = encoder.end_encoding()?;
                let done = ctx
                    .queue
                    .submit(&[&commands], &[], &fence, cycle)
                    .and_then(|()| ctx.device.wait(&fence, cycle, None));
                encoder.reset_all([commands]);
                ctx.device.destroy_buffer(upload);
                check!(done?, "cycle {cycle}: unbounded wait returned false");
                check_eq!(
                    ctx.device.get_fence_value(&fence)?,
                    cycle,
                    "fence after cycle {cycle}"
                );
                compare(
                    &read_mapped(ctx, &readback)?,
                    &source,
                    &format!("cycle {cycle}"),
                )?;
            }
            Ok(())
        })();
        ctx.device.destroy_fence(fence);
        ctx.device.destroy_command_encoder(encoder);
        ctx.device.destroy_buffer(readback);
        result?;
    }
    Ok(Outcome::Pass)
}

/// The command buffers a backend's encoder has allocated, where the test can
/// reach the backend's own encoder type (not through the dyn path).
fn allocated_command_buffers<A: Api>(encoder: &A::CommandEncoder) -> Option<usize> {
    let any: &dyn Any = encoder;
    if let Some(noop) = any.downcast_ref::<keel_hal::noop::CommandEncoder>() {
        return Some(noop.allocated_command_buffers());
    }
    #[cfg(feature = "vulkan")]
    if let Some(vulkan) = any.downcast_ref::<keel_hal::vulkan::CommandEncoder>() {
        return Some(vulkan.allocated_command_buffers());
    }
    None
}

/// A discarded recording is never submitted, and is recycled: after
/// `reset_all`, more discard cycles and a submission allocate no further
/// command buffer (checked where the backend's encoder is reachable).
fn discarded_recording_leaves_no_trace<A: Api>(ctx: &Ctx<A>) -> TestResult {
    const HALF: u64 = 256;
    let discarded = pattern(HALF as usize, 60);
    let kept = pattern(HALF as usize, 61);
    // SAFETY: objects come from ctx.device and are destroyed after the wait;
    // the discarded recording is never submitted.
    unsafe {
        let upload_discarded = upload_buffer(ctx, &discarded)?;
        let upload_kept = upload_buffer(ctx, &kept)?;
        let readback = readback_buffer(ctx, 2 * HALF)?;
        let mut encoder = ctx
            .device
            .create_command_encoder(&CommandEncoderDescriptor::default())?;
        let got = (|| -> Result<Vec<u8>, Failure> {
            encoder.begin_encoding(Some("to be discarded"))?;
            encoder.transition_buffers(&[
                buffer_barrier(&upload_discarded, BufferUses::empty(), BufferUses::COPY_SRC),
                buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
            ]);
            encoder.copy_buffer_to_buffer(&upload_discarded, &readback, &whole(HALF, 0));
            encoder.discard_encoding();
            submit_with(ctx, &mut encoder, |enc| {
                enc.transition_buffers(&[
                    buffer_barrier(&upload_kept, BufferUses::empty(), BufferUses::COPY_SRC),
                    buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
                ]);
                enc.copy_buffer_to_buffer(&upload_kept, &readback, &whole(HALF, HALF));
                enc.transition_buffers(&[buffer_barrier(
                    &readback,
                    BufferUses::COPY_DST,
                    BufferUses::MAP_READ,
                )]);
            })?;
            let got = read_mapped(ctx, &readback)?;

            let before = allocated_command_buffers::<A>(&encoder);
            for _ in 0..3 {
                encoder.begin_encoding(Some("discarded again"))?;
                encoder.discard_encoding();
                encoder.reset_all([]);
            }
            submit_with(ctx, &mut encoder, |_| {})?;
            match (before, allocated_command_buffers::<A>(&encoder)) {
                (Some(before), Some(after)) => check_eq!(
                    after,
                    before,
                    "command buffers allocated after three more discard cycles and a submission"
                ),
                _ => ctx.note("recycling not observable through the dyn path"),
            }
            Ok(got)
        })();
        ctx.device.destroy_command_encoder(encoder);
        ctx.device.destroy_buffer(upload_discarded);
        ctx.device.destroy_buffer(upload_kept);
        ctx.device.destroy_buffer(readback);
        let got = got?;
        compare(
            &got[..HALF as usize],
            &[SENTINEL; HALF as usize],
            "range only the discarded recording wrote",
        )?;
        compare(
            &got[HALF as usize..],
            &kept,
            "range the submitted recording wrote",
        )?;
    }
    Ok(Outcome::Pass)
}

/// A pass left open when its recording ends (`end_encoding`,
/// `discard_encoding`) ends with it: a pass command recorded after that is
/// skipped (and logged), never sent to the ended command buffer, which the
/// validation layer would report; the encoder records normally afterwards.
fn a_pass_ends_with_its_recording<A: Api>(ctx: &Ctx<A>) -> TestResult {
    // SAFETY: the encoder comes from ctx.device and is destroyed after the
    // wait. The dispatches and pass ends after a recording ended break the
    // "recording" contract on purpose: every backend logs and skips them.
    unsafe {
        let mut encoder = ctx
            .device
            .create_command_encoder(&CommandEncoderDescriptor::default())?;
        let result = (|| -> Result<(), Failure> {
            encoder.begin_encoding(None)?;
            encoder.begin_compute_pass(&ComputePassDescriptor::default());
            let ended = encoder.end_encoding()?;
            encoder.dispatch([1, 1, 1]);
            encoder.end_compute_pass();

            encoder.begin_encoding(None)?;
            encoder.begin_compute_pass(&ComputePassDescriptor::default());
            encoder.discard_encoding();
            encoder.dispatch([1, 1, 1]);
            encoder.end_compute_pass();

            encoder.reset_all([ended]);
            // A new recording starts outside any pass: its stray dispatch is
            // skipped too, and the submission is clean.
            submit_with(ctx, &mut encoder, |enc| enc.dispatch([1, 1, 1]))
        })();
        ctx.device.destroy_command_encoder(encoder);
        result?;
    }
    Ok(Outcome::Pass)
}

fn debug_markers_are_accepted<A: Api>(ctx: &Ctx<A>) -> TestResult {
    const SIZE: u64 = 128;
    let source = pattern(SIZE as usize, 70);
    // SAFETY: objects come from ctx.device and are destroyed after the wait;
    // markers are balanced.
    unsafe {
        let upload = upload_buffer(ctx, &source)?;
        let readback = readback_buffer(ctx, SIZE)?;
        let got = submit(ctx, |enc| {
            enc.begin_debug_marker("outer region");
            enc.insert_debug_marker("before the copy");
            enc.begin_debug_marker("inner region ✓ with non-ASCII");
            enc.transition_buffers(&[
                buffer_barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
            ]);
            enc.copy_buffer_to_buffer(&upload, &readback, &whole(SIZE, 0));
            enc.end_debug_marker();
            enc.insert_debug_marker("");
            // Not representable as a C string: must be tolerated, not panic.
            enc.insert_debug_marker("nul\0inside");
            enc.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::COPY_DST,
                BufferUses::MAP_READ,
            )]);
            enc.end_debug_marker();
        })
        .and_then(|()| read_mapped(ctx, &readback));
        ctx.device.destroy_buffer(upload);
        ctx.device.destroy_buffer(readback);
        compare(&got?, &source, "copy inside debug regions")?;
    }
    Ok(Outcome::Pass)
}

/// A command the encoder refuses (and skips) while recording is handed to a
/// running `keel_hal::refusal::capture`, in order, with what was asked: how
/// an upper layer (keel-wgpu at submit) tells its program. A copy region
/// past a buffer, and a dispatch outside a compute pass.
fn refusals_are_captured<A: Api>(ctx: &Ctx<A>) -> TestResult {
    const SIZE: u64 = 64;
    // SAFETY: objects come from ctx.device and are destroyed after the
    // wait; the refused commands are skipped by every backend (checked).
    unsafe {
        let upload = upload_buffer(ctx, &pattern(SIZE as usize, 3))?;
        let readback = readback_buffer(ctx, SIZE)?;
        let (result, refusals) = keel_hal::refusal::capture(|| {
            submit(ctx, |enc| {
                enc.transition_buffers(&[
                    buffer_barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                    buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
                ]);
                enc.copy_buffer_to_buffer(&upload, &readback, &whole(SIZE, 16));
                enc.dispatch([1, 1, 1]);
            })
        });
        ctx.device.destroy_buffer(upload);
        ctx.device.destroy_buffer(readback);
        result?;
        check!(
            refusals.len() == 2,
            "expected the copy and the dispatch refused, got {refusals:?}"
        );
        check!(
            refusals[0].contains("copy_buffer_to_buffer") && refusals[1].contains("dispatch"),
            "refusals out of order or unnamed: {refusals:?}"
        );
    }
    Ok(Outcome::Pass)
}
