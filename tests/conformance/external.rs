//! External memory and semaphores between two devices of the
//! configuration's adapter (each with its own queue, as two APIs or two
//! processes would have), and between this process and a child: bytes
//! written on one side are read on the other, through opaque fds, dma-bufs
//! where the adapter has them, and host allocations. Every test also checks
//! that the process's open-fd count is back where it started.
//!
//! The devices are opened with the external hal features the test needs;
//! where the adapter lacks them, or its capability query says no, the test
//! skips with the reason.

use std::os::fd::{AsFd as _, AsRawFd as _, OwnedFd};
use std::os::unix::fs::MetadataExt as _;
use std::process::{Command, Stdio};

use keel_hal::wgt;
use keel_hal::{
    Adapter, Api, BufferDescriptor, BufferUses, CommandEncoder, Device, ExternalHandle,
    ExternalHandleType, ExternalMemory, ExternalSemaphoreDescriptor, ExternalSemaphoreType,
    HalFeatures, Memory, SemaphoreKind, SemaphoreSignal, SemaphoreWait, TextureDescriptor,
    DRM_FORMAT_MOD_LINEAR,
};

use crate::external_side::{check_fds, copy, open_fds, Side};
use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::helpers::{buffer_barrier, compare, pattern};

exclusive_conformance_tests!(
    buffer_round_trips,
    texture_round_trips,
    dma_buf_texture_import,
    cross_process_import,
    semaphore_orders_devices,
    host_pointer_import,
);

/// An exportable (or, for imports, importable) buffer description.
pub fn buffer_desc(size: u64, ht: ExternalHandleType) -> BufferDescriptor<'static> {
    BufferDescriptor {
        label: Some("external buffer"),
        size,
        usage: wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST,
        memory: Memory::External(ExternalMemory::export(ht)),
    }
}

/// A 64×64 RGBA8 texture to export as `ht`.
pub fn texture_desc(ht: ExternalHandleType) -> TextureDescriptor<'static> {
    TextureDescriptor {
        label: Some("external texture"),
        size: wgt::Extent3d {
            width: 64,
            height: 64,
            depth_or_array_layers: 1,
        },
        usage: wgt::TextureUsages::COPY_SRC | wgt::TextureUsages::COPY_DST,
        memory: Memory::External(ExternalMemory::export(ht)),
        ..Default::default()
    }
}

/// Two sides, exporter and importer.
type Pair<A> = (Side<A>, Side<A>);

/// Opens the two sides; `None` when the adapter lacks `features`.
fn two_sides<A: Api>(ctx: &Ctx<A>, features: HalFeatures) -> Result<Option<Pair<A>>, Failure> {
    let (Some(a), Some(b)) = (Side::open(ctx, features)?, Side::open(ctx, features)?) else {
        return Ok(None);
    };
    Ok(Some((a, b)))
}

/// As [`two_sides`], with the importer opened as an upper layer asks, with
/// the `wgpu-types` feature `upper` alone, where the adapter offers it (noop
/// does not: there both sides ask for `features`).
fn upper_sides<A: Api>(
    ctx: &Ctx<A>,
    features: HalFeatures,
    upper: wgt::Features,
) -> Result<Option<Pair<A>>, Failure> {
    let b = if ctx.caps.features.contains(upper) {
        Side::open_with(ctx, upper, HalFeatures::empty())?
    } else {
        Side::open(ctx, features)?
    };
    let (Some(a), Some(b)) = (Side::open(ctx, features)?, b) else {
        return Ok(None);
    };
    Ok(Some((a, b)))
}

/// Exports `size` bytes of `pattern(seed)` from side A as an opaque fd and
/// reads them back on side B, several sizes (B opened with
/// `VULKAN_EXTERNAL_MEMORY_FD` where offered: [`upper_sides`]).
fn buffer_round_trips<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let ht = ExternalHandleType::OpaqueFd;
    let caps = ctx
        .adapter
        .external_buffer_capabilities(&buffer_desc(4, ht), ht);
    if !(caps.exportable && caps.importable) {
        return skip(format!(
            "opaque-fd buffers are not exportable and importable: {caps:?}"
        ));
    }
    let fd = HalFeatures::EXTERNAL_MEMORY_FD;
    let Some((a, b)) = upper_sides(ctx, fd, wgt::Features::VULKAN_EXTERNAL_MEMORY_FD)? else {
        return skip("the adapter lacks EXTERNAL_MEMORY_FD");
    };
    let fds = open_fds();
    for (i, size) in [4u64, 4096, 65_540, 1 << 20].into_iter().enumerate() {
        let desc = buffer_desc(size, ht);
        let bytes = pattern(size as usize, i as u64);
        // SAFETY: every object is destroyed before its device; each side's
        // work is waited for before the other side uses the memory.
        unsafe {
            let exported = a.device.create_buffer(&desc)?;
            let result = (|| {
                a.write_buffer(&exported, &bytes, &[])?;
                let memory = a.device.export_buffer_memory(&exported, ht)?;
                check!(
                    memory.size >= size,
                    "exported {} bytes for {size}",
                    memory.size
                );
                let imported = b
                    .device
                    .import_buffer(&desc, ExternalHandle::OpaqueFd(memory.fd))?;
                check_eq!(b.device.live_counts().buffers, 1, "buffers on the importer");
                let got = b.read_buffer(&imported, size, &[]);
                b.device.destroy_buffer(imported);
                compare(
                    &got?,
                    &bytes,
                    &format!("{size}-byte buffer read on device B"),
                )
            })();
            a.device.destroy_buffer(exported);
            result?;
        }
    }
    check_fds(fds, "buffer round trips")?;
    a.check_clean("exporter")?;
    b.check_clean("importer")?;
    Ok(Outcome::Pass)
}

/// A 64×64 RGBA8 texture written on A, exported as an opaque fd, imported
/// with the same description on B and read back there.
fn texture_round_trips<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let ht = ExternalHandleType::OpaqueFd;
    texture_round_trip(
        ctx,
        ht,
        HalFeatures::EXTERNAL_MEMORY_FD,
        wgt::Features::VULKAN_EXTERNAL_MEMORY_FD,
    )
}

/// A dma-buf texture in the linear layout: exported by A where the adapter
/// can export dma-bufs, imported on B with the modifier and plane layout A
/// reported.
fn dma_buf_texture_import<A: Api>(ctx: &Ctx<A>) -> TestResult {
    texture_round_trip(
        ctx,
        ExternalHandleType::DmaBuf,
        HalFeatures::EXTERNAL_MEMORY_DMA_BUF,
        wgt::Features::VULKAN_EXTERNAL_MEMORY_DMA_BUF,
    )
}

/// A 64×64 texture exported by A as `ht` and read on B (opened with
/// `upper` where offered: [`upper_sides`]).
fn texture_round_trip<A: Api>(
    ctx: &Ctx<A>,
    ht: ExternalHandleType,
    feature: HalFeatures,
    upper: wgt::Features,
) -> TestResult {
    let desc = texture_desc(ht);
    let caps = ctx.adapter.external_texture_capabilities(&desc, ht)?;
    if !(caps.exportable && caps.importable) {
        // Importing a dma-buf needs one: without an exporting adapter that
        // means udmabuf or a dma-heap, both ioctls this test does not make.
        return skip(format!(
            "{} textures are not exportable and importable here: {caps:?}",
            ht.name()
        ));
    }
    let Some((a, b)) = upper_sides(ctx, feature, upper)? else {
        return skip(format!("the adapter lacks {feature:?}"));
    };
    let bytes = pattern(64 * 64 * 4, 5);
    let fds = open_fds();
    // SAFETY: every object is destroyed before its device; A's work is
    // waited for before B reads.
    let outcome = unsafe {
        let exported = a.device.create_texture(&desc)?;
        let result = (|| -> TestResult {
            let written = a.texture_bytes(&exported, 64, 64, &bytes)?;
            compare(&written, &bytes, "texture staging on A")?;
            let memory = a.device.export_texture_memory(&exported, ht)?;
            let handle = if ht == ExternalHandleType::DmaBuf {
                let modifier = memory.drm_format_modifier.unwrap_or(DRM_FORMAT_MOD_LINEAR);
                if modifier != DRM_FORMAT_MOD_LINEAR {
                    return skip(format!(
                        "the exporter chose the tiled modifier {modifier:#x}"
                    ));
                }
                ExternalHandle::DmaBuf {
                    fd: memory.fd,
                    drm_format_modifier: modifier,
                    planes: memory.planes,
                }
            } else {
                ExternalHandle::OpaqueFd(memory.fd)
            };
            let imported = b.device.import_texture(&desc, handle)?;
            let got = b.texture_bytes(&imported, 64, 64, &[]);
            b.device.destroy_texture(imported);
            compare(&got?, &bytes, "texture read on device B")?;
            Ok(Outcome::Pass)
        })();
        a.device.destroy_texture(exported);
        result?
    };
    check_fds(fds, "texture round trip")?;
    a.check_clean("exporter")?;
    b.check_clean("importer")?;
    Ok(outcome)
}

/// The environment variable naming the configuration a child process
/// imports on (set only in the child).
const CHILD: &str = "KEEL_EXTERNAL_CHILD";
/// The environment variable naming (`device:inode`) the file of an fd the
/// parent exported and did *not* pass: the child must not have it open.
const BYSTANDER: &str = "KEEL_EXTERNAL_BYSTANDER";
/// Size of the buffer the child imports.
const CHILD_SIZE: u64 = 256 * 1024;

/// The parent writes a buffer and hands its opaque fd to a child process
/// (this test binary, re-run for this test) as the child's standard input;
/// the child imports it on its own instance and device and checks the
/// bytes. The fd travels by inheritance, with no `unsafe` and no `libc`:
/// every fd keel-hal returns is close-on-exec, and `Stdio::from` is the
/// explicit act that makes an inheritable copy (standard input). Another
/// exported fd, held open by the parent but not passed, must not reach
/// the child (it would on lavapipe, whose fds lack `FD_CLOEXEC`, if
/// keel-hal did not set it).
fn cross_process_import<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if let Ok(config) = std::env::var(CHILD) {
        return if config == ctx.name {
            child_import(ctx)
        } else {
            skip("the child process imports on another configuration")
        };
    }
    let ht = ExternalHandleType::OpaqueFd;
    let desc = buffer_desc(CHILD_SIZE, ht);
    let caps = ctx.adapter.external_buffer_capabilities(&desc, ht);
    if !(caps.exportable && caps.importable) {
        return skip(format!(
            "opaque-fd buffers are not exportable and importable: {caps:?}"
        ));
    }
    let Some(a) = Side::open(ctx, HalFeatures::EXTERNAL_MEMORY_FD)? else {
        return skip("the adapter lacks EXTERNAL_MEMORY_FD");
    };
    let fds = open_fds();
    let bytes = pattern(CHILD_SIZE as usize, 9);
    // SAFETY: the buffers are destroyed after the child finished with them.
    let output = unsafe {
        let exported = a.device.create_buffer(&desc)?;
        let bystander = a.device.create_buffer(&buffer_desc(4096, ht));
        let result = (|| -> Result<std::process::Output, Failure> {
            let bystander = bystander.as_ref().map_err(|e| e.clone())?;
            a.write_buffer(&exported, &bytes, &[])?;
            let memory = a.device.export_buffer_memory(&exported, ht)?;
            // Held open across the spawn, never passed.
            let kept = a.device.export_buffer_memory(bystander, ht)?;
            let kept_file = std::fs::metadata(format!("/proc/self/fd/{}", kept.fd.as_raw_fd()))?;
            Ok(Command::new(std::env::current_exe()?)
                .args([
                    "--exact",
                    "external::run::cross_process_import",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD, &ctx.name)
                .env(
                    BYSTANDER,
                    format!("{}:{}", kept_file.dev(), kept_file.ino()),
                )
                .env("KEEL_BACKENDS", ctx.backend.to_string())
                .stdin(Stdio::from(memory.fd))
                .stderr(Stdio::inherit())
                .output()?)
        })();
        if let Ok(bystander) = bystander {
            a.device.destroy_buffer(bystander);
        }
        a.device.destroy_buffer(exported);
        result?
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    check!(
        output.status.success() && stdout.contains("child verified"),
        "the child failed ({}):\n{stdout}",
        output.status
    );
    for line in stdout.lines().filter(|l| l.contains("child verified")) {
        ctx.note(line.trim());
    }
    check_fds(fds, "cross-process import")?;
    a.check_clean("exporter")?;
    Ok(Outcome::Pass)
}

/// The child's side of [`cross_process_import`]: standard input is the fd;
/// the parent's other exported fd ([`BYSTANDER`]) must not be open here.
fn child_import<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let bystander = std::env::var(BYSTANDER)?;
    let id = |path: &std::path::Path| {
        std::fs::metadata(path)
            .ok()
            .map(|file| format!("{}:{}", file.dev(), file.ino()))
    };
    // Some drivers (NVIDIA) hand out every exported fd on one inode, their
    // device node, which this process also opened for its own device: then
    // an inode names no particular export, and the close-on-exec flag is
    // checked in the parent instead (`exported_fds_are_close_on_exec`).
    if id(std::path::Path::new("/proc/self/fd/0")).as_deref() == Some(bystander.as_str()) {
        ctx.note("exported fds share one inode here: the bystander check is left to the parent");
    } else {
        check_no_bystander(&bystander, id)?;
    }
    child_import_read(ctx)
}

/// Fails if an fd of this process has the bystander's `dev:ino`.
fn check_no_bystander(
    bystander: &str,
    id: impl Fn(&std::path::Path) -> Option<String>,
) -> Result<(), Failure> {
    for entry in std::fs::read_dir("/proc/self/fd")? {
        let path = entry?.path();
        // A descriptor closed since the directory was read has no metadata.
        if let Some(found) = id(&path) {
            check!(
                found != bystander,
                "{} in the child is the parent's exported fd that was not passed: \
                 exported fds must be close-on-exec",
                path.display()
            );
        }
    }
    Ok(())
}

/// The child's import and read of the fd on its standard input.
fn child_import_read<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let fd: OwnedFd = std::io::stdin().as_fd().try_clone_to_owned()?;
    let Some(b) = Side::open(ctx, HalFeatures::EXTERNAL_MEMORY_FD)? else {
        return Err("the child's adapter lacks EXTERNAL_MEMORY_FD".into());
    };
    let desc = buffer_desc(CHILD_SIZE, ExternalHandleType::OpaqueFd);
    // SAFETY: the parent's write finished before it started this process;
    // the buffer is destroyed before the device.
    unsafe {
        let imported = b
            .device
            .import_buffer(&desc, ExternalHandle::OpaqueFd(fd))?;
        let got = b.read_buffer(&imported, CHILD_SIZE, &[]);
        b.device.destroy_buffer(imported);
        compare(
            &got?,
            &pattern(CHILD_SIZE as usize, 9),
            "bytes read in the child",
        )?;
    }
    b.check_clean("child")?;
    println!(
        "child verified {CHILD_SIZE} bytes imported from the parent's opaque fd (pid {})",
        std::process::id()
    );
    Ok(Outcome::Pass)
}

/// B's read of shared memory waits on the semaphore A's write signals
/// (exported by A, imported by B), binary and timeline.
fn semaphore_orders_devices<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let features = HalFeatures::EXTERNAL_MEMORY_FD | HalFeatures::EXTERNAL_SEMAPHORE_FD;
    let mut ran = Vec::new();
    let mut skipped = Vec::new();
    for kind in [
        SemaphoreKind::Binary,
        SemaphoreKind::Timeline { initial_value: 0 },
    ] {
        let sem_desc = ExternalSemaphoreDescriptor {
            handle_type: ExternalSemaphoreType::OpaqueFd,
            kind,
        };
        let caps = ctx.adapter.external_semaphore_capabilities(&sem_desc);
        if !(caps.exportable && caps.importable) {
            skipped.push(format!("{kind:?} opaque-fd semaphores: {caps:?}"));
            continue;
        }
        let Some((a, b)) = two_sides(ctx, features)? else {
            return skip(format!("the adapter lacks {features:?}"));
        };
        let size = 64 * 1024;
        let desc = buffer_desc(size, ExternalHandleType::OpaqueFd);
        let bytes = pattern(size as usize, 13);
        let fds = open_fds();
        // SAFETY: every submission is waited for before anything is destroyed;
        // A's signal is submitted before B's wait.
        unsafe {
            let exported = a.device.create_buffer(&desc)?;
            let signal = a.device.create_external_semaphore(&sem_desc);
            let result = (|| {
                let signal = signal.as_ref().map_err(|e| e.clone())?;
                let sem_fd = a.device.export_semaphore(signal)?;
                let wait = b.device.import_semaphore(&sem_desc, sem_fd)?;
                let memory = a
                    .device
                    .export_buffer_memory(&exported, ExternalHandleType::OpaqueFd)?;
                let imported = b
                    .device
                    .import_buffer(&desc, ExternalHandle::OpaqueFd(memory.fd));
                let done = imported.map_err(Into::into).and_then(|imported| {
                    let signals = [SemaphoreSignal {
                        semaphore: signal,
                        value: 1,
                        stages: Default::default(),
                    }];
                    let waits = [SemaphoreWait {
                        semaphore: &wait,
                        value: 1,
                        stages: Default::default(),
                    }];
                    let got = a
                        .write_buffer(&exported, &bytes, &signals)
                        .and_then(|()| b.read_buffer(&imported, size, &waits));
                    b.device.destroy_buffer(imported);
                    compare(
                        &got?,
                        &bytes,
                        &format!("bytes B read after waiting on a {kind:?} semaphore"),
                    )
                });
                b.device.destroy_external_semaphore(wait);
                done
            })();
            if let Ok(signal) = signal {
                a.device.destroy_external_semaphore(signal);
            }
            a.device.destroy_buffer(exported);
            result?;
        }
        check_fds(fds, "semaphores")?;
        a.check_clean("signaller")?;
        b.check_clean("waiter")?;
        ran.push(format!("{kind:?}"));
    }
    if ran.is_empty() {
        return skip(skipped.join("; "));
    }
    for s in skipped {
        ctx.note(format!("not run: {s}"));
    }
    Ok(Outcome::Pass)
}

/// An aligned heap allocation, imported as a buffer: a GPU copy writes
/// into it, and a GPU copy reads what the CPU put there.
fn host_pointer_import<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let ht = ExternalHandleType::HostAllocation;
    let probe = BufferDescriptor {
        memory: Memory::Device,
        ..buffer_desc(4096, ht)
    };
    let caps = ctx.adapter.external_buffer_capabilities(&probe, ht);
    if !caps.importable {
        return skip(format!("host allocations are not importable: {caps:?}"));
    }
    let align = caps.host_pointer_alignment;
    check!(
        align.is_power_of_two(),
        "host pointer alignment {align} reported"
    );
    let Some(a) = Side::open(ctx, HalFeatures::EXTERNAL_MEMORY_HOST)? else {
        return skip("the adapter lacks EXTERNAL_MEMORY_HOST");
    };
    let size = (64 * 1024u64).next_multiple_of(align);
    let layout = std::alloc::Layout::from_size_align(size as usize, align as usize)?;
    // SAFETY: non-zero size.
    let raw = unsafe { std::alloc::alloc_zeroed(layout) };
    let Some(ptr) = std::ptr::NonNull::new(raw) else {
        return Err("host allocation failed".into());
    };
    let desc = BufferDescriptor { size, ..probe };
    let fds = open_fds();
    let written = pattern(size as usize, 17);
    // SAFETY: the allocation outlives the buffer and every submission on it;
    // the CPU touches it only while no GPU work is pending.
    let result = unsafe {
        match a
            .device
            .import_buffer(&desc, ExternalHandle::HostPointer { ptr, size })
        {
            Err(e) => Err(e.into()),
            Ok(buffer) => {
                let result = (|| {
                    // GPU → host: an upload buffer copied into the allocation.
                    let src = a.staging(Memory::Upload, size, &written)?;
                    let done = a.run(&[], &[], |e| {
                        e.transition_buffers(&[
                            buffer_barrier(&src, BufferUses::empty(), BufferUses::COPY_SRC),
                            buffer_barrier(&buffer, BufferUses::empty(), BufferUses::COPY_DST),
                        ]);
                        e.copy_buffer_to_buffer(&src, &buffer, &[copy(size)]);
                        e.transition_buffers(&[buffer_barrier(
                            &buffer,
                            BufferUses::COPY_DST,
                            BufferUses::MAP_READ,
                        )]);
                    });
                    a.device.destroy_buffer(src);
                    done?;
                    let host = std::slice::from_raw_parts(ptr.as_ptr(), size as usize);
                    compare(host, &written, "host memory after the GPU copy")?;
                    // Host → GPU.
                    let fresh = pattern(size as usize, 19);
                    std::ptr::copy_nonoverlapping(fresh.as_ptr(), ptr.as_ptr(), fresh.len());
                    let got = a.read_buffer(&buffer, size, &[])?;
                    compare(&got, &fresh, "bytes the GPU read from host memory")
                })();
                a.device.destroy_buffer(buffer);
                result
            }
        }
    };
    // SAFETY: allocated above with this layout; no buffer uses it any more.
    unsafe { std::alloc::dealloc(raw, layout) };
    result?;
    check_fds(fds, "host pointer import")?;
    a.check_clean("importer")?;
    Ok(Outcome::Pass)
}
