//! Fences: ordering across submissions and bounded waits.

use std::sync::mpsc;
use std::time::Duration;

use keel_hal::{
    Api, BufferCopy, BufferUses, CommandEncoder, CommandEncoderDescriptor, Device, Queue,
};

use crate::harness::{Ctx, Failure, Outcome, TestResult};
use crate::helpers::{
    buffer_barrier, compare, device_buffer, pattern, read_mapped, readback_buffer, upload_buffer,
};

conformance_tests!(
    fence_orders_a_chain_of_submits,
    wait_times_out_on_unreached_value
);

/// Submissions in the chain: upload → D1 → D2 → D3 → D4 → readback.
const STEPS: u64 = 5;
const LEN: u64 = 512;
/// How long the waiter thread waits for each value before giving up.
const WAITER_TIMEOUT: Duration = Duration::from_secs(10);

/// Where step `k` writes its copy: every step shifts the block by 16 bytes,
/// so only the in-order chain leaves the pattern at the end.
fn offset(k: u64) -> u64 {
    16 * k
}

/// Every step is its own submission signalling `k`; a second thread waits
/// on the fence for `k − 1` and tells the main thread, which only then
/// submits `k`. So every value of the fence is waited on, from another
/// thread than the one submitting, and the final bytes prove the order.
fn fence_orders_a_chain_of_submits<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let size = LEN + offset(STEPS);
    let source = pattern(LEN as usize, 31);
    // SAFETY: objects come from ctx.device; each submission's resources stay
    // alive until the final wait (or wait_idle on failure); everything is
    // destroyed after it.
    unsafe {
        let upload = upload_buffer(ctx, &source)?;
        let mut chain = vec![upload];
        for _ in 1..STEPS {
            chain.push(device_buffer(ctx, size)?);
        }
        chain.push(readback_buffer(ctx, size)?);
        let mut encoder = ctx
            .device
            .create_command_encoder(&CommandEncoderDescriptor {
                label: Some("chain"),
            })?;
        let fence = ctx.device.create_fence()?;

        let result = (|| -> Result<(), Failure> {
            let mut commands = Vec::new();
            let (device, fence) = (&ctx.device, &fence);
            let (tx, rx) = mpsc::channel();
            std::thread::scope(|scope| -> Result<(), Failure> {
                scope.spawn(move || {
                    for k in 1..STEPS {
                        // Sound: the main thread submits value k (it is
                        // waiting for this thread's word on k − 1, sent
                        // earlier). Bounded, so a failing main thread
                        // cannot leave this one waiting for ever.
                        let reached = device.wait(fence, k, Some(WAITER_TIMEOUT));
                        let go_on = matches!(reached, Ok(true));
                        if tx.send((k, reached)).is_err() || !go_on {
                            break;
                        }
                    }
                });
                for k in 1..=STEPS {
                    if k > 1 {
                        let (seen, reached) =
                            rx.recv().map_err(|_| "the waiter thread stopped early")?;
                        check_eq!(seen, k - 1, "value the waiter thread reports");
                        check!(
                            reached?,
                            "the waiter thread did not see value {seen} within {WAITER_TIMEOUT:?}"
                        );
                        let value = device.get_fence_value(fence)?;
                        check!(value >= seen, "fence value {value} after a wait for {seen}");
                    }
                    let (src, dst) = (&chain[k as usize - 1], &chain[k as usize]);
                    encoder.begin_encoding(Some("chain step"))?;
                    // The previous step wrote `src` as COPY_DST (the upload buffer was written by the CPU).
                    let src_from = if k == 1 {
                        BufferUses::empty()
                    } else {
                        BufferUses::COPY_DST
                    };
                    enc_step::<A>(&mut encoder, src, src_from, dst, k);
                    if k == STEPS {
                        encoder.transition_buffers(&[buffer_barrier(
                            dst,
                            BufferUses::COPY_DST,
                            BufferUses::MAP_READ,
                        )]);
                    }
                    let cb = encoder.end_encoding()?;
                    ctx.queue.submit(&[&cb], &[], fence, k)?;
                    commands.push(cb);
                }
                Ok(())
            })?;
            let reached = ctx.device.wait(fence, STEPS, None)?;
            encoder.reset_all(commands);
            check!(reached, "an unbounded wait for {STEPS} returned false");
            check_eq!(
                ctx.device.get_fence_value(fence)?,
                STEPS,
                "fence value after the chain"
            );
            check!(
                ctx.device.wait(fence, 3, Some(Duration::ZERO))?,
                "a zero-timeout wait for a passed value (3) returned false"
            );
            let got = read_mapped(ctx, &chain[STEPS as usize])?;
            let at = offset(STEPS) as usize;
            compare(&got[at..], &source, "the block after 5 ordered copies")
        })();
        if result.is_err() {
            // Some submissions may still be pending.
            let _ = ctx.device.wait_idle();
        }
        ctx.device.destroy_command_encoder(encoder);
        ctx.device.destroy_fence(fence);
        for buffer in chain {
            ctx.device.destroy_buffer(buffer);
        }
        result?;
    }
    Ok(Outcome::Pass)
}

/// Records step `k`: `src[offset(k-1)..]` → `dst[offset(k)..]`.
///
/// # Safety
/// Recording; the buffers are live and in the states named.
unsafe fn enc_step<A: Api>(
    encoder: &mut A::CommandEncoder,
    src: &A::Buffer,
    src_from: BufferUses,
    dst: &A::Buffer,
    k: u64,
) {
    // SAFETY: forwarded contract.
    unsafe {
        encoder.transition_buffers(&[
            buffer_barrier(src, src_from, BufferUses::COPY_SRC),
            buffer_barrier(dst, BufferUses::empty(), BufferUses::COPY_DST),
        ]);
        encoder.copy_buffer_to_buffer(
            src,
            dst,
            &[BufferCopy {
                src_offset: offset(k - 1),
                dst_offset: offset(k),
                size: LEN,
            }],
        );
    }
}

fn wait_times_out_on_unreached_value<A: Api>(ctx: &Ctx<A>) -> TestResult {
    // SAFETY: objects come from ctx.device and are destroyed after the last
    // wait. Value 2 is waited on with a timeout before it is submitted, and
    // then submitted by this thread, so every wait has a signal coming.
    unsafe {
        let mut encoder = ctx
            .device
            .create_command_encoder(&CommandEncoderDescriptor::default())?;
        let fence = ctx.device.create_fence()?;
        let result = (|| -> Result<(), Failure> {
            check_eq!(
                ctx.device.get_fence_value(&fence)?,
                0,
                "a new fence's value"
            );
            encoder.begin_encoding(Some("first"))?;
            let first = encoder.end_encoding()?;
            ctx.queue.submit(&[&first], &[], &fence, 1)?;
            check!(
                ctx.device.wait(&fence, 1, None)?,
                "unbounded wait for 1 returned false"
            );

            let timed_out = ctx
                .device
                .wait(&fence, 2, Some(Duration::from_millis(20)))?;
            check!(
                !timed_out,
                "a 20 ms wait for the unsubmitted value 2 returned true"
            );
            check_eq!(
                ctx.device.get_fence_value(&fence)?,
                1,
                "fence value after the timeout"
            );

            encoder.begin_encoding(Some("second"))?;
            let second = encoder.end_encoding()?;
            ctx.queue.submit(&[&second], &[], &fence, 2)?;
            let reached = ctx.device.wait(&fence, 2, Some(Duration::from_secs(10)))?;
            encoder.reset_all([first, second]);
            check!(
                reached,
                "a 10 s wait for the submitted value 2 returned false"
            );
            check_eq!(
                ctx.device.get_fence_value(&fence)?,
                2,
                "fence value at the end"
            );
            Ok(())
        })();
        ctx.device.destroy_command_encoder(encoder);
        ctx.device.destroy_fence(fence);
        result?;
    }
    Ok(Outcome::Pass)
}
