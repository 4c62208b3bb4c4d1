//! Buffer mistakes the hal checks cheaply: each returns its typed error and
//! leaves no object behind.

use keel_hal::wgt;
use keel_hal::{Api, BufferDescriptor, BufferError, Device, MapError, Memory};

use crate::harness::{Ctx, Failure, Outcome, TestResult};
use crate::helpers::create_buffer;

conformance_tests!(
    map_device_memory_is_not_mappable,
    zero_size_buffer,
    buffer_over_max_size,
    map_usage_needs_host_memory,
    buffer_messages_name_the_numbers,
);

/// Creates a buffer that must fail with `expected`; checks nothing was left alive.
fn expect_buffer_error<A: Api>(
    ctx: &Ctx<A>,
    desc: &BufferDescriptor,
    expected: BufferError,
) -> Result<(), Failure> {
    let before = ctx.device.live_counts();
    // SAFETY: live device; a buffer that should not exist is destroyed at once.
    match unsafe { ctx.device.create_buffer(desc) } {
        Ok(buffer) => {
            // SAFETY: never used.
            unsafe { ctx.device.destroy_buffer(buffer) };
            return Err(format!("{desc:?} was created; expected {expected:?}").into());
        }
        Err(e) => check_eq!(e, expected, "create_buffer({desc:?})"),
    }
    check_eq!(
        ctx.device.live_counts(),
        before,
        "live objects after the failed create_buffer"
    );
    Ok(())
}

fn map_device_memory_is_not_mappable<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let usage = wgt::BufferUsages::COPY_DST | wgt::BufferUsages::COPY_SRC;
    // SAFETY: the buffer comes from ctx.device, is never submitted, and is destroyed.
    unsafe {
        let buffer = create_buffer(ctx, 256, usage, Memory::Device)?;
        let before = ctx.device.live_counts();
        let mapped = ctx.device.map_buffer(&buffer).map(|m| m.size);
        let after = ctx.device.live_counts();
        ctx.device.destroy_buffer(buffer);
        check_eq!(
            mapped,
            Err(MapError::NotMappable(Memory::Device)),
            "map_buffer of a Memory::Device buffer"
        );
        check_eq!(after, before, "live objects after the failed map");
    }
    Ok(Outcome::Pass)
}

fn zero_size_buffer<A: Api>(ctx: &Ctx<A>) -> TestResult {
    for (memory, usage) in [
        (Memory::Device, wgt::BufferUsages::COPY_DST),
        (
            Memory::Upload,
            wgt::BufferUsages::MAP_WRITE | wgt::BufferUsages::COPY_SRC,
        ),
        (
            Memory::Readback,
            wgt::BufferUsages::MAP_READ | wgt::BufferUsages::COPY_DST,
        ),
    ] {
        let desc = BufferDescriptor {
            label: Some("zero"),
            size: 0,
            usage,
            memory,
        };
        expect_buffer_error(ctx, &desc, BufferError::ZeroSize)?;
    }
    Ok(Outcome::Pass)
}

fn buffer_over_max_size<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let max = ctx.limits().max_buffer_size;
    let Some(size) = max.checked_add(1) else {
        return crate::harness::skip("max_buffer_size is u64::MAX: nothing is larger");
    };
    for memory in [Memory::Device, Memory::Upload] {
        let usage = if memory == Memory::Upload {
            wgt::BufferUsages::MAP_WRITE | wgt::BufferUsages::COPY_SRC
        } else {
            wgt::BufferUsages::COPY_DST
        };
        let desc = BufferDescriptor {
            label: Some("too large"),
            size,
            usage,
            memory,
        };
        expect_buffer_error(ctx, &desc, BufferError::TooLarge { size, max })?;
    }
    Ok(Outcome::Pass)
}

fn map_usage_needs_host_memory<A: Api>(ctx: &Ctx<A>) -> TestResult {
    for (map_bit, other) in [
        (wgt::BufferUsages::MAP_READ, wgt::BufferUsages::COPY_DST),
        (wgt::BufferUsages::MAP_WRITE, wgt::BufferUsages::COPY_SRC),
    ] {
        let desc = BufferDescriptor {
            label: Some("map usage on device memory"),
            size: 256,
            usage: map_bit | other,
            memory: Memory::Device,
        };
        let before = ctx.device.live_counts();
        // SAFETY: live device; a buffer that should not exist is destroyed at once.
        match unsafe { ctx.device.create_buffer(&desc) } {
            Ok(buffer) => {
                // SAFETY: never used.
                unsafe { ctx.device.destroy_buffer(buffer) };
                return Err(format!("{desc:?} was created").into());
            }
            // The error names the map usage asked for, and only it (the
            // shared check, the same on every backend).
            Err(e @ BufferError::MapUsageNeedsHostMemory { .. }) => {
                check_eq!(
                    e,
                    BufferError::MapUsageNeedsHostMemory {
                        usage: map_bit,
                        memory: Memory::Device,
                    },
                    "create_buffer({desc:?})"
                );
                let text = e.to_string();
                let (map_name, other_name) = if map_bit == wgt::BufferUsages::MAP_READ {
                    ("MAP_READ", "COPY_DST")
                } else {
                    ("MAP_WRITE", "COPY_SRC")
                };
                check!(
                    text.contains(map_name)
                        && text.contains("Device")
                        && !text.contains(other_name),
                    "message: {text}"
                );
            }
            Err(e) => {
                return Err(format!("{desc:?}: expected MapUsageNeedsHostMemory, got {e:?}").into())
            }
        }
        check_eq!(
            ctx.device.live_counts(),
            before,
            "live objects after the failed create_buffer"
        );
    }
    Ok(Outcome::Pass)
}

/// The messages name what was asked and what is allowed.
fn buffer_messages_name_the_numbers<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let zero = BufferError::ZeroSize.to_string();
    check!(
        zero.contains('0') && zero.contains("at least 1 byte"),
        "message: {zero}"
    );
    let max = ctx.limits().max_buffer_size;
    let Some(size) = max.checked_add(1) else {
        return crate::harness::skip("max_buffer_size is u64::MAX: nothing is larger");
    };
    let desc = BufferDescriptor {
        label: Some("too large"),
        size,
        usage: wgt::BufferUsages::COPY_DST,
        memory: Memory::Device,
    };
    // SAFETY: live device; a buffer that should not exist is destroyed at once.
    let e = match unsafe { ctx.device.create_buffer(&desc) } {
        Ok(buffer) => {
            // SAFETY: never used.
            unsafe { ctx.device.destroy_buffer(buffer) };
            return Err(format!("{desc:?} was created").into());
        }
        Err(e) => e,
    };
    let text = e.to_string();
    check!(
        text.contains(&size.to_string()) && text.contains(&format!("max_buffer_size {max}")),
        "message: {text}"
    );
    Ok(Outcome::Pass)
}
