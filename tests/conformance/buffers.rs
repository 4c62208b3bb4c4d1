//! Buffers: upload → device → readback round trips, multi-region copies,
//! clears, and what mappings promise.

use keel_hal::wgt;
use keel_hal::{Api, BufferCopy, BufferUses, CommandEncoder, Device, Memory};

use crate::harness::{Ctx, Outcome, TestResult};
use crate::helpers::{
    buffer_barrier, compare, create_buffer, device_buffer, pattern, read_mapped, readback_buffer,
    submit, upload_buffer, SENTINEL,
};

conformance_tests!(
    round_trip_4_bytes,
    round_trip_256_bytes,
    round_trip_64_kib,
    round_trip_1_mib_plus_4,
    copy_multiple_regions,
    clear_whole_buffer,
    clear_part_keeps_the_rest,
    mappings_are_persistent,
    readback_mapping_sees_gpu_writes,
    user_structs_cross_mappings,
);

/// (source offset, destination offset) pairs every round trip is run at.
const OFFSETS: [(u64, u64); 4] = [(0, 0), (4, 8), (260, 4), (12, 512)];

fn round_trip_4_bytes<A: Api>(ctx: &Ctx<A>) -> TestResult {
    round_trip(ctx, 4)
}

fn round_trip_256_bytes<A: Api>(ctx: &Ctx<A>) -> TestResult {
    round_trip(ctx, 256)
}

fn round_trip_64_kib<A: Api>(ctx: &Ctx<A>) -> TestResult {
    round_trip(ctx, 64 << 10)
}

fn round_trip_1_mib_plus_4<A: Api>(ctx: &Ctx<A>) -> TestResult {
    round_trip(ctx, (1 << 20) + 4)
}

fn round_trip<A: Api>(ctx: &Ctx<A>, size: u64) -> TestResult {
    for (seed, &(src_offset, dst_offset)) in OFFSETS.iter().enumerate() {
        // SAFETY: every object is made from ctx.device and destroyed after the wait.
        unsafe { round_trip_at(ctx, size, src_offset, dst_offset, seed as u64) }?;
    }
    Ok(Outcome::Pass)
}

/// Copies `size` bytes from `src_offset` of an upload buffer to `dst_offset`
/// of a device buffer, and from there to the same offset of a readback
/// buffer; every byte of the readback buffer is then checked.
///
/// # Safety
/// `ctx` is live.
unsafe fn round_trip_at<A: Api>(
    ctx: &Ctx<A>,
    size: u64,
    src_offset: u64,
    dst_offset: u64,
    seed: u64,
) -> Result<(), crate::harness::Failure> {
    let source = pattern((src_offset + size + 8) as usize, seed);
    let dst_size = dst_offset + size + 12;
    // SAFETY: objects come from ctx.device and are destroyed after the wait.
    unsafe {
        let upload = upload_buffer(ctx, &source)?;
        let middle = device_buffer(ctx, dst_size)?;
        let readback = readback_buffer(ctx, dst_size)?;
        let got = submit(ctx, |enc| {
            enc.transition_buffers(&[
                buffer_barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                buffer_barrier(&middle, BufferUses::empty(), BufferUses::COPY_DST),
                buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
            ]);
            enc.copy_buffer_to_buffer(
                &upload,
                &middle,
                &[BufferCopy {
                    src_offset,
                    dst_offset,
                    size,
                }],
            );
            enc.transition_buffers(&[buffer_barrier(
                &middle,
                BufferUses::COPY_DST,
                BufferUses::COPY_SRC,
            )]);
            enc.copy_buffer_to_buffer(
                &middle,
                &readback,
                &[BufferCopy {
                    src_offset: dst_offset,
                    dst_offset,
                    size,
                }],
            );
            enc.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::COPY_DST,
                BufferUses::MAP_READ,
            )]);
        })
        .and_then(|()| read_mapped(ctx, &readback));
        ctx.device.destroy_buffer(upload);
        ctx.device.destroy_buffer(middle);
        ctx.device.destroy_buffer(readback);

        let mut expected = vec![SENTINEL; dst_size as usize];
        expected[dst_offset as usize..(dst_offset + size) as usize]
            .copy_from_slice(&source[src_offset as usize..(src_offset + size) as usize]);
        compare(
            &got?,
            &expected,
            &format!("{size} bytes from offset {src_offset} to {dst_offset}"),
        )
    }
}

fn copy_multiple_regions<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let source = pattern(4096, 11);
    let regions = [
        BufferCopy {
            src_offset: 0,
            dst_offset: 1024,
            size: 256,
        },
        BufferCopy {
            src_offset: 2048,
            dst_offset: 0,
            size: 512,
        },
        BufferCopy {
            src_offset: 512,
            dst_offset: 3000,
            size: 96,
        },
    ];
    // SAFETY: objects come from ctx.device and are destroyed after the wait.
    unsafe {
        let upload = upload_buffer(ctx, &source)?;
        let readback = readback_buffer(ctx, 4096)?;
        let got = submit(ctx, |enc| {
            enc.transition_buffers(&[
                buffer_barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
            ]);
            enc.copy_buffer_to_buffer(&upload, &readback, &regions);
            enc.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::COPY_DST,
                BufferUses::MAP_READ,
            )]);
        })
        .and_then(|()| read_mapped(ctx, &readback));
        ctx.device.destroy_buffer(upload);
        ctx.device.destroy_buffer(readback);

        let mut expected = vec![SENTINEL; 4096];
        for r in &regions {
            let (s, d, n) = (
                r.src_offset as usize,
                r.dst_offset as usize,
                r.size as usize,
            );
            expected[d..d + n].copy_from_slice(&source[s..s + n]);
        }
        compare(&got?, &expected, "three regions in one copy")?;
    }
    Ok(Outcome::Pass)
}

fn clear_whole_buffer<A: Api>(ctx: &Ctx<A>) -> TestResult {
    // SAFETY: ctx is live.
    let got = unsafe { fill_clear_read(ctx, 1024, 0..1024) }?;
    compare(&got, &[0; 1024], "whole-buffer clear")?;
    Ok(Outcome::Pass)
}

fn clear_part_keeps_the_rest<A: Api>(ctx: &Ctx<A>) -> TestResult {
    // SAFETY: ctx is live.
    let got = unsafe { fill_clear_read(ctx, 1024, 256..772) }?;
    let mut expected = pattern(1024, 3);
    expected[256..772].fill(0);
    compare(&got, &expected, "clear of 256..772")?;
    Ok(Outcome::Pass)
}

/// Fills a device buffer with `pattern(size, 3)`, clears `range`, reads it all back.
///
/// # Safety
/// `ctx` is live.
unsafe fn fill_clear_read<A: Api>(
    ctx: &Ctx<A>,
    size: u64,
    range: std::ops::Range<u64>,
) -> Result<Vec<u8>, crate::harness::Failure> {
    let whole = [BufferCopy {
        src_offset: 0,
        dst_offset: 0,
        size,
    }];
    // SAFETY: objects come from ctx.device and are destroyed after the wait.
    unsafe {
        let upload = upload_buffer(ctx, &pattern(size as usize, 3))?;
        let target = device_buffer(ctx, size)?;
        let readback = readback_buffer(ctx, size)?;
        let got = submit(ctx, |enc| {
            enc.transition_buffers(&[
                buffer_barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                buffer_barrier(&target, BufferUses::empty(), BufferUses::COPY_DST),
                buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
            ]);
            enc.copy_buffer_to_buffer(&upload, &target, &whole);
            enc.transition_buffers(&[buffer_barrier(
                &target,
                BufferUses::COPY_DST,
                BufferUses::COPY_DST,
            )]);
            enc.clear_buffer(&target, range);
            enc.transition_buffers(&[buffer_barrier(
                &target,
                BufferUses::COPY_DST,
                BufferUses::COPY_SRC,
            )]);
            enc.copy_buffer_to_buffer(&target, &readback, &whole);
            enc.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::COPY_DST,
                BufferUses::MAP_READ,
            )]);
        })
        .and_then(|()| read_mapped(ctx, &readback));
        ctx.device.destroy_buffer(upload);
        ctx.device.destroy_buffer(target);
        ctx.device.destroy_buffer(readback);
        got
    }
}

fn mappings_are_persistent<A: Api>(ctx: &Ctx<A>) -> TestResult {
    for (memory, usage) in [
        (
            Memory::Upload,
            wgt::BufferUsages::MAP_WRITE | wgt::BufferUsages::COPY_SRC,
        ),
        (
            Memory::Readback,
            wgt::BufferUsages::MAP_READ | wgt::BufferUsages::COPY_DST,
        ),
    ] {
        // SAFETY: the buffer comes from ctx.device, is never submitted, and is destroyed.
        unsafe {
            let buffer = create_buffer(ctx, 300, usage, memory)?;
            let first = ctx.device.map_buffer(&buffer);
            let second = ctx.device.map_buffer(&buffer);
            ctx.device.unmap_buffer(&buffer);
            let third = ctx.device.map_buffer(&buffer);
            ctx.device.destroy_buffer(buffer);
            let (first, second, third) = (first?, second?, third?);
            check_eq!(first.size, 300, "{memory:?} mapping size");
            check_eq!(
                second.ptr,
                first.ptr,
                "{memory:?}: second map_buffer pointer"
            );
            check_eq!(
                third.ptr,
                first.ptr,
                "{memory:?}: map_buffer after unmap_buffer"
            );
        }
    }
    Ok(Outcome::Pass)
}

fn readback_mapping_sees_gpu_writes<A: Api>(ctx: &Ctx<A>) -> TestResult {
    const SIZE: u64 = 1024;
    // SAFETY: objects come from ctx.device and are destroyed after the waits;
    // the mapping is read only after each fence wait.
    unsafe {
        let readback = readback_buffer(ctx, SIZE)?;
        let mapping = ctx.device.map_buffer(&readback)?;
        let view = || std::slice::from_raw_parts(mapping.ptr.as_ptr(), SIZE as usize).to_vec();
        let mut state = BufferUses::empty();
        for seed in [21, 22] {
            let source = pattern(SIZE as usize, seed);
            let upload = upload_buffer(ctx, &source)?;
            let done = submit(ctx, |enc| {
                enc.transition_buffers(&[
                    buffer_barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                    buffer_barrier(&readback, state, BufferUses::COPY_DST),
                ]);
                enc.copy_buffer_to_buffer(
                    &upload,
                    &readback,
                    &[BufferCopy {
                        src_offset: 0,
                        dst_offset: 0,
                        size: SIZE,
                    }],
                );
                enc.transition_buffers(&[buffer_barrier(
                    &readback,
                    BufferUses::COPY_DST,
                    BufferUses::MAP_READ,
                )]);
            });
            state = BufferUses::MAP_READ;
            ctx.device.destroy_buffer(upload);
            if let Err(e) = done {
                ctx.device.destroy_buffer(readback);
                return Err(e);
            }
            if let Err(e) = compare(
                &view(),
                &source,
                &format!("pointer mapped before submit {}", seed - 20),
            ) {
                ctx.device.destroy_buffer(readback);
                return Err(e);
            }
        }
        ctx.device.destroy_buffer(readback);
    }
    Ok(Outcome::Pass)
}

/// A caller's own vertex type: `#[repr(C)]`, no padding, `bytemuck`'s
/// derives, as a renderer writes it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct Vertex {
    position: [f32; 3],
    color: u32,
}

/// `write_slice` and `read_vec` take any `bytemuck::Pod` type, not only
/// primitives: a caller's struct goes up through an upload mapping (at an
/// unaligned offset), through the GPU, and back out of a readback mapping.
fn user_structs_cross_mappings<A: Api>(ctx: &Ctx<A>) -> TestResult {
    const OFFSET: u64 = 3;
    let vertices: Vec<Vertex> = (0..5u32)
        .map(|i| Vertex {
            position: [i as f32, -(i as f32) * 0.5, 1.0 / (i + 1) as f32],
            color: 0x0102_0304 * (i + 1),
        })
        .collect();
    let size = OFFSET + std::mem::size_of_val(&vertices[..]) as u64;
    // SAFETY: objects come from ctx.device and are destroyed after the wait;
    // the readback mapping is read only after it.
    unsafe {
        let usage = wgt::BufferUsages::MAP_WRITE | wgt::BufferUsages::COPY_SRC;
        let upload = create_buffer(ctx, size, usage, Memory::Upload)?;
        let readback = match readback_buffer(ctx, size) {
            Ok(b) => b,
            Err(e) => {
                ctx.device.destroy_buffer(upload);
                return Err(e);
            }
        };
        let result = (|| {
            let written = ctx.device.map_buffer(&upload)?;
            check!(
                written.write_slice(OFFSET, &vertices).is_ok(),
                "write_slice of {} vertices at {OFFSET}",
                vertices.len()
            );
            submit(ctx, |enc| {
                enc.transition_buffers(&[
                    buffer_barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                    buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
                ]);
                enc.copy_buffer_to_buffer(
                    &upload,
                    &readback,
                    &[BufferCopy {
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
            })?;
            let read = ctx.device.map_buffer(&readback)?;
            let back = read.read_vec::<Vertex>(OFFSET, vertices.len());
            check_eq!(back.as_deref(), Ok(&vertices[..]), "vertices read back");
            check!(
                read.read_vec::<Vertex>(OFFSET + 1, vertices.len()).is_err(),
                "a read one byte past the end is refused"
            );
            Ok(Outcome::Pass)
        })();
        ctx.device.destroy_buffer(upload);
        ctx.device.destroy_buffer(readback);
        result
    }
}
