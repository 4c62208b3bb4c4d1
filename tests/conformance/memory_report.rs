//! The memory report (`Device::memory_report`): live bytes follow the
//! buffers and textures made and destroyed, on every backend; `trim_memory`
//! leaves nothing retained.

use keel_hal::wgt;
use keel_hal::{Api, Device, Memory, MemoryReport};

use crate::harness::{Ctx, Outcome, TestResult};
use crate::helpers::{create_buffer, texture_desc};

conformance_tests!(
    report_live_bytes_follow_resources,
    trim_leaves_nothing_retained,
    placements_lie_inside_their_blocks
);

/// The report's invariants: `live + retained <= reserved`, the per-type
/// lines add up to the totals.
fn consistent(report: &MemoryReport) -> Result<(), crate::harness::Failure> {
    check!(
        report.live_bytes + report.retained_bytes <= report.reserved_bytes,
        "live {} + retained {} > reserved {}",
        report.live_bytes,
        report.retained_bytes,
        report.reserved_bytes
    );
    if !report.memory_types.is_empty() {
        let sum = |f: fn(&keel_hal::MemoryTypeReport) -> u64| -> u64 {
            report.memory_types.iter().map(f).sum()
        };
        check_eq!(
            sum(|t| t.live_bytes),
            report.live_bytes,
            "live bytes by type"
        );
        check_eq!(
            sum(|t| t.retained_bytes),
            report.retained_bytes,
            "retained by type"
        );
        check_eq!(
            sum(|t| t.reserved_bytes),
            report.reserved_bytes,
            "reserved by type"
        );
        check_eq!(sum(|t| t.block_count), report.block_count, "blocks by type");
    }
    Ok(())
}

fn report_live_bytes_follow_resources<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::BufferUsages as U;
    let before = ctx.device.memory_report();
    consistent(&before)?;
    let kinds = [
        (Memory::Device, U::STORAGE | U::COPY_DST),
        (Memory::Upload, U::MAP_WRITE | U::COPY_SRC),
        (Memory::Readback, U::MAP_READ | U::COPY_DST),
    ];
    let sizes = [256u64, 64 << 10, (1 << 20) + 4];
    let mut buffers = Vec::new();
    let mut asked = 0;
    for &(memory, usage) in &kinds {
        for &size in &sizes {
            // SAFETY: live device; destroyed below.
            buffers.push(unsafe { create_buffer(ctx, size, usage, memory) }?);
            asked += size;
        }
    }
    let during = ctx.device.memory_report();
    consistent(&during)?;
    let grown = during.live_bytes - before.live_bytes;
    // Each buffer holds at least its size; alignment and the driver's
    // requirements add at most 64 KiB a buffer here.
    check!(
        grown >= asked && grown <= asked + 64 * 1024 * buffers.len() as u64,
        "live bytes grew by {grown} for {asked} bytes of buffers"
    );
    check!(
        during.block_count >= 1 && during.reserved_bytes >= during.live_bytes,
        "blocks {} reserved {} live {}",
        during.block_count,
        during.reserved_bytes,
        during.live_bytes
    );
    for buffer in buffers {
        // SAFETY: made above, never used by the GPU.
        unsafe { ctx.device.destroy_buffer(buffer) };
    }
    let after = ctx.device.memory_report();
    consistent(&after)?;
    check_eq!(
        after.live_bytes,
        before.live_bytes,
        "live bytes after the destroys"
    );
    Ok(Outcome::Pass)
}

fn trim_leaves_nothing_retained<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::BufferUsages as U;
    let before = ctx.device.memory_report();
    for _ in 0..2 {
        let mut buffers = Vec::new();
        for _ in 0..16 {
            // SAFETY: live device; destroyed below.
            buffers.push(unsafe { create_buffer(ctx, 4096, U::COPY_DST, Memory::Upload) }?);
        }
        for buffer in buffers {
            // SAFETY: made above, never used by the GPU.
            unsafe { ctx.device.destroy_buffer(buffer) };
        }
    }
    let kept = ctx.device.memory_report();
    consistent(&kept)?;
    check!(
        kept.retained_bytes <= kept.retention_limit,
        "retained {} over the limit {}",
        kept.retained_bytes,
        kept.retention_limit
    );
    let released = ctx.device.trim_memory();
    let trimmed = ctx.device.memory_report();
    consistent(&trimmed)?;
    check_eq!(
        trimmed.retained_bytes,
        0,
        "retained bytes after trim_memory"
    );
    check_eq!(
        trimmed.live_bytes,
        before.live_bytes,
        "live bytes after trim_memory"
    );
    check_eq!(
        released,
        kept.reserved_bytes.saturating_sub(trimmed.reserved_bytes),
        "trim_memory's answer against the reports ({} -> {} reserved)",
        kept.reserved_bytes,
        trimmed.reserved_bytes
    );
    // Retention off: destroyed buffers' memory goes at once.
    ctx.device.set_memory_retention(0);
    // SAFETY: live device; destroyed at once.
    unsafe {
        let buffer = create_buffer(ctx, 4096, U::COPY_DST, Memory::Upload)?;
        ctx.device.destroy_buffer(buffer);
    }
    let off = ctx.device.memory_report();
    check_eq!(
        (off.retained_bytes, off.retention_limit),
        (0, 0),
        "retention off"
    );
    Ok(Outcome::Pass)
}

/// `buffer_placement` / `texture_placement`: each resource's range lies
/// inside its block, holds at least its size, and resources sharing a block
/// do not overlap.
fn placements_lie_inside_their_blocks<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::BufferUsages as U;
    let mut buffers = Vec::new();
    for size in [256u64, 4096, 64 << 10] {
        for _ in 0..3 {
            // SAFETY: live device; destroyed below.
            let buffer = unsafe { create_buffer(ctx, size, U::STORAGE, Memory::Device) }?;
            buffers.push((buffer, size));
        }
    }
    let desc = texture_desc(wgt::TextureFormat::Rgba8Unorm, 32, 32, 1, 1);
    // SAFETY: live device; destroyed below.
    let texture = unsafe { ctx.device.create_texture(&desc) }?;
    let mut placed = Vec::new();
    for (buffer, size) in &buffers {
        // SAFETY: made above, alive.
        let Some(p) = (unsafe { ctx.device.buffer_placement(buffer) }) else {
            return Err("no placement for a device buffer".to_string().into());
        };
        check!(
            p.size >= *size,
            "a {size}-byte buffer placed with {} bytes",
            p.size
        );
        placed.push(p);
    }
    // SAFETY: made above, alive.
    let Some(p) = (unsafe { ctx.device.texture_placement(&texture) }) else {
        return Err("no placement for a device texture".to_string().into());
    };
    check!(
        p.size >= 32 * 32 * 4,
        "a 4 KiB texture placed with {} bytes",
        p.size
    );
    placed.push(p);
    for p in &placed {
        check!(
            p.offset + p.size <= p.block_size,
            "range {}+{} outside its {}-byte block",
            p.offset,
            p.size,
            p.block_size
        );
    }
    placed.sort_by_key(|p| (p.block, p.offset));
    for pair in placed.windows(2) {
        if pair[0].block == pair[1].block {
            check!(
                pair[0].offset + pair[0].size <= pair[1].offset,
                "overlapping placements in one block: {:?} and {:?}",
                pair[0],
                pair[1]
            );
            check_eq!(
                pair[0].block_size,
                pair[1].block_size,
                "one block, one size"
            );
        }
    }
    for (buffer, _) in buffers {
        // SAFETY: made above, never used by the GPU.
        unsafe { ctx.device.destroy_buffer(buffer) };
    }
    // SAFETY: made above, never used by the GPU.
    unsafe { ctx.device.destroy_texture(texture) };
    Ok(Outcome::Pass)
}
